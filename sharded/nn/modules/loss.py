"""Loss modules (torch's ``nn.*Loss``): thin wrappers over the functional forms in
``st.nn.functional``; class weights are buffers, as in torch, so they follow ``to()``."""

from __future__ import annotations

from .. import functional as F
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
]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction


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
