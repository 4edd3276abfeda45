"""Loss modules (torch's ``nn.*Loss``): thin wrappers over the functional forms in
``st.nn.functional``; class weights are buffers, as in torch, so they follow ``to()``."""

from __future__ import annotations

from ...errors import ArgumentError
from .. import functional as F
from .._loss_extra import _reduction
from .module import Module

__all__ = [
    "MSELoss",
    "L1Loss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "HuberLoss",
    "SmoothL1Loss",
    "KLDivLoss",
    "MarginRankingLoss",
    "TripletMarginLoss",
    "CosineEmbeddingLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "MultiLabelSoftMarginLoss",
    "CTCLoss",
    "SoftMarginLoss",
    "HingeEmbeddingLoss",
    "MultiMarginLoss",
    "MultiLabelMarginLoss",
    "TripletMarginWithDistanceLoss",
]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        # torch's legacy arguments, when given, decide the reduction (with a warning)
        self.reduction = _reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error (``reduction`` 'mean', 'sum' or 'none').

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.MSELoss(reduction="sum")(st.ones(3), st.zeros(3)).item()
    3.0
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.L1Loss()(st.tensor([1., -1.]), st.zeros(2)).item()
    1.0
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or probabilities (stable), with
    ``weight``, ``ignore_index``, ``label_smoothing`` and ``reduction`` as torch's.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.CrossEntropyLoss()(st.zeros(3, 4), st.tensor([0, 1, 3])).item(), 6)
    1.386294
    """

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index=-100,
        reduce=None,
        reduction="mean",
        label_smoothing=0.0,
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities at class indices.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.NLLLoss()(st.tensor([[-1., -2.]]), st.tensor([1])).item()
    2.0
    """

    def __init__(
        self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
    ):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(
            input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.BCELoss()(st.tensor([0.5]), st.tensor([1.0])).item(), 6)
    0.693147
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (stable), with ``weight`` and ``pos_weight``.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.BCEWithLogitsLoss()(st.tensor([0.0]), st.tensor([1.0])).item(), 6)
    0.693147
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class HuberLoss(_Loss):
    """Huber loss with threshold ``delta``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.HuberLoss(delta=1.0)(st.tensor([3.0]), st.zeros(1)).item()
    2.5
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_Loss):
    """Smooth L1 loss with threshold ``beta``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.SmoothL1Loss()(st.tensor([0.5]), st.zeros(1)).item()
    0.125
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities ``input`` from ``target`` (``log_target``: the
    target is given as log-probabilities too).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.KLDivLoss(reduction="batchmean")(st.zeros(1, 2), st.ones(1, 2)).item()
    0.0
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    """``max(0, -target * (x1 - x2) + margin)``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.])
    >>> st.nn.MarginRankingLoss(margin=1.0)(x, x, x).item()
    1.0
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    """``max(0, margin + d(a, p) - d(a, n))`` with the pairwise ``p``-norm distance.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.zeros(1, 2)
    >>> st.nn.TripletMarginLoss(eps=0)(a, a, st.tensor([[0., 3.]])).item()
    0.0
    """

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ArgumentError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(
            anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
            swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for ``target`` 1, ``max(0, cos(x1, x2) - margin)`` for -1.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1., 0.]])
    >>> st.nn.CosineEmbeddingLoss()(x, x, st.tensor([1])).item()
    0.0
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (``log_input``, ``full``, ``eps`` as torch's).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.PoissonNLLLoss()(st.zeros(2), st.ones(2)).item()
    1.0
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(
            log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
            reduction=self.reduction,
        )  # fmt: skip


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with predicted variances ``var``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.GaussianNLLLoss()(st.ones(2), st.ones(2), st.ones(2)).item()
    0.0
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss, averaged over the classes.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.MultiLabelSoftMarginLoss()(st.zeros(1, 3), st.ones(1, 3)).item(), 6)
    0.693147
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class CTCLoss(_Loss):
    """Connectionist temporal classification loss of (T, N, C) log-probabilities;
    ``forward(log_probs, targets, input_lengths, target_lengths)``.

    Examples
    --------
    >>> import sharded as st
    >>> lp = st.full((2, 1, 2), 0.5).log()
    >>> round(st.nn.CTCLoss()(lp, st.tensor([[1]]), [2], [1]).item(), 6)
    0.287682
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
            self.zero_infinity,
        )  # fmt: skip


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + exp(-y x))``.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.SoftMarginLoss()(st.zeros(2), st.ones(2)).item(), 6)
    0.693147
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.HingeEmbeddingLoss(margin=2.0)(st.tensor([0.5]), st.tensor([-1.])).item()
    1.5
    """

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss ``sum_{i != y} w[y] max(0, margin - x[y] + x[i]) ** p / C``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(st.nn.MultiMarginLoss()(x, st.tensor([3])).item(), 6)
    0.325
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ArgumentError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ArgumentError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D"
            )
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(
            input, target, p=self.p, margin=self.margin, weight=self.weight,
            reduction=self.reduction,
        )  # fmt: skip


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss; each target row lists its classes, ended by -1.

    Examples
    --------
    >>> import sharded as st
    >>> x, y = st.tensor([[0.1, 0.2, 0.4, 0.8]]), st.tensor([[3, 0, -1, 1]])
    >>> round(st.nn.MultiLabelMarginLoss()(x, y).item(), 6)
    0.85
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``max(0, margin + d(a, p) - d(a, n))`` with any distance function ``d`` (default
    the pairwise 2-norm distance).

    Examples
    --------
    >>> import sharded as st
    >>> a = st.zeros(1, 2)
    >>> st.nn.TripletMarginWithDistanceLoss()(a, a, st.tensor([[0., 3.]])).item()
    0.0
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ArgumentError(
                "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction,
        )  # fmt: skip
