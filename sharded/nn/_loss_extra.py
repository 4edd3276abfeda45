"""The margin, embedding and likelihood losses of ``st.nn.functional``: torch's
``pairwise_distance`` (the triplet losses' default distance), ``margin_ranking_loss``,
``triplet_margin_loss``, ``cosine_embedding_loss``, ``poisson_nll_loss``,
``gaussian_nll_loss`` and ``multilabel_soft_margin_loss``.

Each is torch's formula composed from sharded ops, so gradients come from the ops' VJPs and
any layout of the operands works; ``st.nn.functional`` re-exports them.
"""

from __future__ import annotations

import math
import warnings

from ..amp import keep_float32
from ..core.dispatch import as_tensor, is_tensor
from ..errors import ArgumentError, ShapeError
from ..linalg import vector_norm
from ..ops.creation.prims import full_like
from ..ops.elementwise.prims.selection import where
from ._activation import logsigmoid
from ._loss import _reduce

__all__ = [
    "pairwise_distance",
    "margin_ranking_loss",
    "triplet_margin_loss",
    "cosine_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "multilabel_soft_margin_loss",
]


def _reduction(size_average, reduce, reduction):
    """torch's legacy ``size_average``/``reduce`` arguments, when given, decide the reduction."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn(
        "size_average and reduce args will be deprecated, please use reduction instead.",
        stacklevel=3,
    )
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


@keep_float32
def margin_ranking_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """``max(0, -target * (input1 - input2) + margin)``, reduced by ``reduction``.

    Examples
    --------
    >>> import sharded as st
    >>> f = st.nn.functional.margin_ranking_loss
    >>> f(st.tensor([1., 2.]), st.tensor([2., 0.]), st.tensor([1., 1.]), reduction="none").tolist()
    [1.0, 0.0]
    """
    input1, input2, target = _t(input1), _t(input2), _t(target)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ShapeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {list(input1.shape)}, input2: {list(input2.shape)}, target: "
            f"{list(target.shape)}"
        )
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` along the last dim (torch's ``pairwise_distance``).

    Examples
    --------
    >>> import sharded as st
    >>> a, b = st.tensor([[0., 0.]]), st.tensor([[3., 4.]])
    >>> st.nn.functional.pairwise_distance(a, b, eps=0).tolist()
    [5.0]
    """
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        return diff.abs()
    return vector_norm(diff, p, -1, keepdim=keepdim)


@keep_float32
def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the
    pairwise ``p``-norm distance (``swap``: the smaller of d(a, n) and d(p, n)).

    Examples
    --------
    >>> import sharded as st
    >>> a, p, n = st.zeros(1, 2), st.tensor([[3., 4.]]), st.tensor([[1., 0.]])
    >>> round(st.nn.functional.triplet_margin_loss(a, p, n, eps=0).item(), 6)
    5.0
    """
    anchor, positive, negative = _t(anchor), _t(positive), _t(negative)
    if margin <= 0:
        raise ArgumentError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ShapeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce(loss, _reduction(size_average, reduce, reduction))


@keep_float32
def cosine_embedding_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (cosine along the last dim of (N, D) or (D,) inputs).

    Examples
    --------
    >>> import sharded as st
    >>> x1, x2 = st.tensor([[1., 0.], [1., 0.]]), st.tensor([[0., 1.], [1., 1.]])
    >>> out = st.nn.functional.cosine_embedding_loss(x1, x2, st.tensor([1, -1]), reduction="none")
    >>> [round(v, 4) for v in out.tolist()]
    [1.0, 0.7071]
    """
    input1, input2, target = _t(input1), _t(input2), _t(target)
    if target.ndim not in (0, 1):
        raise ShapeError("0D or 1D target tensor expected, multi-target not supported")
    want = target.ndim + 1
    if input1.ndim != want or input2.ndim != want:
        raise ShapeError(
            f"{target.ndim}D target tensor expects {want}D input tensors, but found inputs "
            f"with sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    dim = target.ndim
    eps = 1e-12  # torch adds it to each squared magnitude
    prod = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = prod / mag.sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(loss, _reduction(size_average, reduce, reduction))


@keep_float32
def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's approximation of
    ``log(target!)`` where ``target > 1``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.poisson_nll_loss(st.zeros(2), st.tensor([1., 3.])).item()
    1.0
    """
    input, target = _t(input), _t(target)
    reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ArgumentError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        # where() keeps the masked targets' nan (0 * log 0) out of the values and gradients
        big = target > 1
        t = where(big, target, 2.0)
        stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood ``0.5 (log(var) + (input - target)² / var)`` (plus
    ``0.5 log(2π)`` when ``full``), ``var`` clamped at ``eps`` as torch does: without
    touching its gradient. ``var`` has the input's shape, or one dim fewer, or a 1 in one
    dim (one variance shared along it), or is a float.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.gaussian_nll_loss(st.tensor([1., 3.]), st.tensor([1., 1.]), 1.0).item()
    1.0
    """
    input, target = _t(input), _t(target)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ArgumentError(f"var has negative entry/entries: {var}")
        var = full_like(input, float(var))
    else:
        var = _t(var)
        if bool((var < 0).any()):
            raise ArgumentError("var has negative entry/entries")
    ishape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif not (
            len(ishape) == len(vshape) and sum(v for i, v in zip(ishape, vshape) if i != v) == 1
        ):
            raise ShapeError(
                f"var is of incorrect size: {list(vshape)} for input of size {list(ishape)}"
            )
    if reduction not in ("none", "mean", "sum"):
        raise ArgumentError(f"{reduction} is not valid")
    # torch clamps a clone under no_grad: the value is clamped, the gradient passes as is
    vd = var.detach()
    var = var + (vd.clamp_min(eps) - vd)
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """``-(t log σ(x) + (1 - t) log σ(-x))`` (times ``weight``) averaged over the classes
    (the last dim), then reduced over the samples by ``reduction``.

    Examples
    --------
    >>> import sharded as st
    >>> f = st.nn.functional.multilabel_soft_margin_loss
    >>> round(f(st.zeros(1, 2), st.tensor([[1., 0.]])).item(), 6)
    0.693147
    """
    input, target = _t(input), _t(target)
    reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ArgumentError(f"{reduction} is not valid")
    if input.ndim == 0:
        raise ShapeError("multilabel_soft_margin_loss: expected an input with a class dim")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1]
    return _reduce(loss, reduction)
