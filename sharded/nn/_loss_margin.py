"""The hinge and soft-margin losses of ``st.nn.functional``: torch's ``soft_margin_loss``,
``hinge_embedding_loss``, ``multi_margin_loss``, ``multilabel_margin_loss`` and
``triplet_margin_with_distance_loss``.

Each is torch's formula composed from sharded ops, so gradients come from the ops' VJPs and
any layout of the operands works; ``st.nn.functional`` re-exports them.
"""

from __future__ import annotations

from .. import dtypes as D
from ..amp import keep_float32
from ..core.dispatch import apply
from ..errors import ArgumentError, DTypeError, ShapeError
from ..ops.creation.prims import arange
from ..ops.elementwise.prims.selection import where
from ..ops.elementwise.prims.unary import exp, log1p
from ._loss import _reduce
from ._loss_extra import _reduction, _t, pairwise_distance

__all__ = [
    "soft_margin_loss",
    "hinge_embedding_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_with_distance_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ArgumentError(f"{reduction} is not a valid value for reduction")
    return reduction


@keep_float32
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The two-class logistic loss ``log(1 + exp(-target * input))``, reduced by
    ``reduction`` (targets are 1 or -1).

    Examples
    --------
    >>> import sharded as st
    >>> f = st.nn.functional.soft_margin_loss
    >>> round(f(st.tensor([0., 0.]), st.tensor([1., -1.])).item(), 6)
    0.693147
    """
    input, target = _t(input), _t(target)
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    return _reduce(log1p(exp(-input * target)), reduction)


@keep_float32
def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``
    (torch's formula: the first term wherever ``target != -1``, the second wherever
    ``target != 1``), reduced by ``reduction``.

    Examples
    --------
    >>> import sharded as st
    >>> f = st.nn.functional.hinge_embedding_loss
    >>> f(st.tensor([0.3, 0.4]), st.tensor([1., -1.]), reduction="none").tolist()
    [0.30000001192092896, 0.6000000238418579]
    """
    input, target = _t(input), _t(target)
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    hinge = where(target != 1, (margin - input).clamp_min(0), 0.0)
    loss = hinge + where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


def _class_targets(name, input, target, lo):
    """``target`` checked as int64 class indices in ``[lo, C)`` (the check runs on the
    workers and raises at the next read, as ``one_hot``'s does)."""
    if target.dtype != D.int64:
        raise DTypeError(f"{name}: expected scalar type Long but found {target.dtype}")
    c = input.shape[-1] if input.ndim else 1  # a 0-d input: one class
    return apply("check_indices", target, lo, c, None, f"{name} target")


@keep_float32
def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """Multi-class hinge loss of (N, C) or (C,) scores and int64 class targets:
    ``sum_{i != y} w[y] max(0, margin - x[y] + x[i]) ** p / C`` per sample (``p`` 1 or 2).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(st.nn.functional.multi_margin_loss(x, st.tensor([3])).item(), 6)
    0.325
    """
    input, target = _t(input), _t(target)
    if p not in (1, 2):
        raise ArgumentError("only p == 1 and p == 2 supported")
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    if input.ndim > 2 or input.numel() == 0 and input.ndim != 2:
        raise ShapeError(
            "multi_margin_loss: expected non-empty vector or matrix with optional 0-dim batch "
            f"size, but got: {list(input.shape)}"
        )
    n = input.shape[0] if input.ndim == 2 else 1
    if target.ndim > 1 or target.numel() != n:
        raise ShapeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    c = input.shape[-1] if input.ndim else 1  # a 0-d input: one score, one class
    if weight is not None:
        weight = _t(weight)
        if weight.ndim != 1 or weight.shape[0] != c:
            raise ShapeError(
                f"multi_margin_loss: inconsistent weight size, expected {c} but got "
                f"{list(weight.shape)}"
            )
    y = _class_targets("multi_margin_loss", input, target, 0).reshape(n, 1)
    x = input.reshape(n, c)
    z = (margin - x.gather(1, y) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y.reshape(n)].reshape(n, 1)
    # the target's own class adds nothing (its term would be ``margin`` otherwise)
    loss = where(arange(c) == y, 0.0, z).sum(1) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@keep_float32
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss of (N, C) or (C,) scores: each row of the int64 ``target``
    lists its classes, ended by the first -1; the loss is ``sum_j sum_{i not a target}
    max(0, 1 - (x[y_j] - x[i])) / C`` per sample.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> y = st.tensor([[3, 0, -1, 1]])
    >>> round(st.nn.functional.multilabel_margin_loss(x, y).item(), 6)
    0.85
    """
    input, target = _t(input), _t(target)
    reduction = _check_reduction(_reduction(size_average, reduce, reduction))
    if input.ndim > 2 or input.numel() == 0 and input.ndim != 2:
        raise ShapeError(
            "multilabel_margin_loss: expected non-empty vector or matrix with optional 0-dim "
            f"batch size, but got: {list(input.shape)}"
        )
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(
            f"multilabel_margin_loss: inconsistent target size: {list(target.shape)} for "
            f"input of size: {list(input.shape)}"
        )
    # a 0-d input: one score, one class
    n, c = (input.shape[0] if input.ndim == 2 else 1), (input.shape[-1] if input.ndim else 1)
    y = _class_targets("multilabel_margin_loss", input, target, -1).reshape(n, c)
    x = input.reshape(n, c)
    # a row's targets are its entries before the first -1
    valid = (y != -1).to(D.int64).cumprod(1) == 1
    yc = where(valid, y, 0)
    is_target = ((yc.unsqueeze(2) == arange(c)) & valid.unsqueeze(2)).any(1)  # (n, c)
    xt = x.gather(1, yc)  # (n, j): the score of each listed target
    z = (1 - xt.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # (n, j, i)
    keep = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = where(keep, z, 0.0).sum((1, 2)) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` any
    function of two tensors (default :func:`pairwise_distance`); ``swap`` takes the smaller
    of d(a, n) and d(p, n).

    Examples
    --------
    >>> import sharded as st
    >>> a, p, n = st.zeros(1, 2), st.tensor([[3., 4.]]), st.tensor([[1., 0.]])
    >>> l1 = lambda u, v: (u - v).abs().sum(-1)
    >>> f = st.nn.functional.triplet_margin_with_distance_loss
    >>> f(a, p, n, distance_function=l1).item()
    7.0
    """
    _check_reduction(reduction)
    if margin <= 0:
        raise ArgumentError(f"margin must be greater than 0, got {margin}")
    anchor, positive, negative = _t(anchor), _t(positive), _t(negative)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ShapeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )
    d = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(d(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)
