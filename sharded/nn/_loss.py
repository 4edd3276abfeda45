"""Loss functions of ``st.nn.functional`` with torch's formulas, keywords and reductions.

Each is derived from sharded ops (so gradients come from the ops' VJPs) and works on any
layout of its operands; ``st.nn.functional`` re-exports them.
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as D
from ..amp import keep_float32
from ..core.dispatch import apply
from ..errors import ArgumentError, DTypeError, ShapeError
from ..ops.creation.prims import arange
from ..ops.elementwise.prims.selection import where
from ..ops.elementwise.prims.unary import relu
from ..ops.reduce.derived.moments import log_softmax
from ..tensor import ShardedTensor
from ._basic import linear

__all__ = [
    "mse_loss",
    "l1_loss",
    "cross_entropy",
    "nll_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "huber_loss",
    "smooth_l1_loss",
    "kl_div",
    "linear_cross_entropy",
]


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ArgumentError(f"{reduction} is not a valid value for reduction")


def _pointwise(name, input, target):
    """torch warns (and broadcasts) when an elementwise loss gets a target of another shape."""
    if isinstance(target, ShardedTensor) and tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"{name}: using a target size ({list(target.shape)}) that is different to the "
            f"input size ({list(input.shape)}). This will likely lead to incorrect results "
            "due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )
    return input - target


@keep_float32
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target) ** 2``, reduced by ``reduction``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.mse_loss(st.tensor([1., 2.]), st.tensor([1., 4.])).item()
    2.0
    """
    d = _pointwise("mse_loss", input, target)
    loss = d * d
    return _reduce(loss if weight is None else loss * weight, reduction)


@keep_float32
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean absolute error ``|input - target|``, reduced by ``reduction``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.l1_loss(st.tensor([1., 2.]), st.tensor([0., 4.])).item()
    1.5
    """
    return _reduce(_pointwise("l1_loss", input, target).abs(), reduction)


@keep_float32
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d²`` where ``|d| < delta``, else ``delta (|d| - delta / 2)``, ``d = input -
    target``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.huber_loss(st.tensor([0.5, 3.]), st.zeros(2), reduction="none").tolist()
    [0.125, 2.5]
    """
    if delta <= 0:
        raise ArgumentError(f"huber_loss does not support non-positive values for delta ({delta})")
    d = _pointwise("huber_loss", input, target)
    a = d.abs()
    loss = where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
    return _reduce(loss if weight is None else loss * weight, reduction)


@keep_float32
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d² / beta`` where ``|d| < beta``, else ``|d| - beta / 2`` (the L1 loss for
    ``beta=0``).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.smooth_l1_loss(st.tensor([0.5, 3.]), st.zeros(2), reduction="sum").item()
    2.625
    """
    if beta < 0:
        raise ArgumentError(f"smooth_l1_loss does not support negative values for beta ({beta})")
    d = _pointwise("smooth_l1_loss", input, target)
    a = d.abs()
    loss = a if beta == 0 else where(a < beta, (0.5 / beta) * d * d, a - 0.5 * beta)
    return _reduce(loss, reduction)


def _class_weights(weight, input, cls_dim):
    """``weight`` (C,) shaped to broadcast along the class dim of ``input``."""
    c = input.shape[cls_dim] if input.ndim else 1
    if tuple(weight.shape) != (c,):
        raise ShapeError(
            f"weight tensor should be defined either for all {c} classes or no classes but "
            f"got weight tensor of shape: {list(weight.shape)}"
        )
    shape = [1] * input.ndim
    shape[cls_dim] = c
    return weight.reshape(shape)


def _check_indices(input, target, cls_dim):
    if target.dtype not in (D.int64, D.uint8):
        raise DTypeError(f"expected target dtype to be Long or Byte, but got {target.dtype}")
    want = tuple(input.shape[:cls_dim]) + tuple(input.shape[cls_dim + 1 :])
    if tuple(target.shape) != want:
        raise ShapeError(
            f"Expected target of shape {list(want)} for input of shape {list(input.shape)}, "
            f"got target of shape {list(target.shape)}"
        )


def _picked(input, target, weight, ignore_index, cls_dim):
    """``-w[y] * input[.., y, ..]`` per target element (0 where ignored), the per-element
    weights ``w[y]`` (0 where ignored), and the mask of the kept elements."""
    c = input.shape[cls_dim]
    # the workers check the classes (a read here would cost a round trip per loss and
    # could not be traced): a target out of range raises at the next read, an IndexError
    target = apply("check_indices", target, 0, c, ignore_index, "Target")
    keep = target != ignore_index
    shape = [1] * input.ndim
    shape[cls_dim] = c
    # ignored targets match no class, even when ignore_index names one
    onehot = (arange(c).reshape(shape) == target.unsqueeze(cls_dim)) & keep.unsqueeze(cls_dim)
    w = onehot.to(input.dtype)
    if weight is not None:
        w = w * _class_weights(weight, input, cls_dim)
    wy = w.sum(cls_dim)  # w[y], 0 where ignored (no class matches)
    return -(where(onehot, input, 0.0) * w).sum(cls_dim), wy, keep


@keep_float32
def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
):
    """Negative log likelihood of log-probabilities ``input`` (N, C, ...) or (C,) at class
    indices ``target``: ``-weight[y] * input[n, y]``; ``mean`` divides by the summed
    weights of the targets that are not ``ignore_index``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.nll_loss(st.tensor([[-1., -2.], [-3., -4.]]), st.tensor([1, 0])).item()
    2.5
    """
    cls_dim = 1 if input.ndim > 1 else 0
    _check_indices(input, target, cls_dim)
    loss, wy, _ = _picked(input, target, weight, ignore_index, cls_dim)
    if reduction == "mean":
        return loss.sum() / wy.sum()
    return _reduce(loss, reduction)


@keep_float32
def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """Cross entropy of logits ``input`` (N, C, ...) or (C,) against class indices or class
    probabilities (a float target of the input's shape), computed through ``log_softmax``
    so it is stable for any logits; ``weight``, ``ignore_index``, ``label_smoothing`` and
    ``reduction`` as torch's.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.cross_entropy(st.tensor([1000., 0.]), st.tensor([.5, .5])).item()
    500.0
    >>> round(st.nn.functional.cross_entropy(st.zeros(2, 4), st.tensor([1, -100])).item(), 6)
    1.386294
    """
    if not 0.0 <= label_smoothing <= 1.0:
        raise ArgumentError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cls_dim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, cls_dim)
    c = input.shape[cls_dim] if input.ndim else 1
    if target.dtype.is_floating_point:  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise ShapeError(
                f"cross_entropy: probability target shape {list(target.shape)} differs "
                f"from input shape {list(input.shape)}"
            )
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * _class_weights(weight, input, cls_dim)
        return _reduce(-prod.sum(cls_dim), reduction)
    _check_indices(input, target, cls_dim)
    loss, wy, keep = _picked(logp, target, weight, ignore_index, cls_dim)
    if label_smoothing:
        lw = logp if weight is None else logp * _class_weights(weight, input, cls_dim)
        smooth = where(keep, -lw.sum(cls_dim), 0.0)
        loss = loss * (1 - label_smoothing) + smooth * (label_smoothing / c)
    if reduction == "mean":
        return loss.sum() / wy.sum()
    return _reduce(loss, reduction)


def _same_shape(name, input, target):
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(
            f"{name}: using a target size ({list(target.shape)}) that is different to the "
            f"input size ({list(input.shape)}) is deprecated. Please ensure they have the "
            "same size."
        )


@keep_float32
def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """``-weight (t log x + (1 - t) log(1 - x))`` for probabilities ``input``, each log
    clamped at -100 as torch does (so x = 0 or 1 gives a finite loss).

    Examples
    --------
    >>> import sharded as st
    >>> x, t = st.tensor([0.5, 1.0]), st.tensor([1.0, 0.0])
    >>> out = st.nn.functional.binary_cross_entropy(x, t, reduction="none")
    >>> [round(v, 4) for v in out.tolist()]
    [0.6931, 100.0]
    """
    _same_shape("binary_cross_entropy", input, target)
    loss = -(
        target * input.log().clamp_min(-100.0) + (1 - target) * (1 - input).log().clamp_min(-100.0)
    )
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@keep_float32
def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
    pos_weight=None,
):
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from the logits,
    with ``pos_weight`` scaling the positive term (torch's formula).

    Examples
    --------
    >>> import sharded as st
    >>> f = st.nn.functional.binary_cross_entropy_with_logits
    >>> round(f(st.tensor([100.0]), st.tensor([0.0])).item(), 4)
    100.0
    """
    _same_shape("binary_cross_entropy_with_logits", input, target)
    # log(1 + exp(-x)) = relu(-x) + log1p(exp(-|x|)): no overflow for any logit
    softplus_neg = relu(-input) + (-input.abs()).exp().log1p()
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@keep_float32
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence ``target * (log(target) - input)`` for log-probabilities
    ``input`` (0 where ``target`` is 0), or ``exp(target) * (target - input)`` with
    ``log_target``; ``reduction='batchmean'`` divides the sum by the batch size.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.25, 0.75]]).log()
    >>> round(st.nn.functional.kl_div(x, st.tensor([[0.5, 0.5]]), reduction="batchmean").item(), 6)
    0.143841
    """
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """:func:`cross_entropy` of the logits ``linear(input, linear_weight, linear_bias)``, as
    ``torch.nn.functional.linear_cross_entropy``: ``input`` (in,) or (N, in),
    ``linear_weight`` (C, in) or (C, d_1, ..., d_K, in) for a K-dimensional loss (logits
    (N, C, d_1, ..., d_K)); ``ignore_index=None`` means -100 for class indices and may not
    be given with class probabilities. ``options`` (torch's chunking strategy) is accepted
    and not needed: the logits are computed sharded as ``input`` is (split along N, each
    worker holds its rows' logits only), and the gradient is that of the composition.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> w = st.tensor([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> round(st.nn.functional.linear_cross_entropy(x, w, st.tensor([0, 1])).item(), 4)
    0.2395
    """
    if input.ndim < 1 or input.ndim > 2:
        raise ShapeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise ShapeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}"
        )
    batch, n_in = tuple(input.shape[:-1]), input.shape[-1]
    if n_in != linear_weight.shape[-1]:
        raise ShapeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{n_in} and {linear_weight.shape[-1]}, respectively"
        )
    classes, extra = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *extra):
        raise ShapeError(
            f"expected linear_bias shape {(classes, *extra)}, got {tuple(linear_bias.shape)}"
        )
    if extra and not batch:
        raise ShapeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {n_in}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batch, classes, *extra)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise ArgumentError("ignore_index cannot be specified when target contains probabilities")
    if extra:
        linear_weight = linear_weight.reshape(classes * math.prod(extra), n_in)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(classes * math.prod(extra))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
