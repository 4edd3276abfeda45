"""Stateless neural-network functions (``st.nn.functional``), derived from sharded ops."""

from __future__ import annotations

import math

from ..errors import ArgumentError, ShapeError
from ..functional import log_softmax, softmax
from ..ops.creation import arange
from ..ops.index_ops import index_select
from ..ops.random import rand_like
from ..ops.selection import where
from ..ops.special import erf
from ..ops.unary import relu, sigmoid, sqrt, tanh
from ..tensor import ShardedTensor

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "linear",
    "mse_loss",
    "cross_entropy",
    "dropout",
    "layer_norm",
    "batch_norm",
    "embedding",
    "gelu",
    "silu",
]


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ArgumentError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.linear(st.ones(2, 3), st.ones(4, 3)).shape
    sharded.Size([2, 4])
    """
    out = input @ weight.t()
    return out if bias is None else out + bias


def mse_loss(input, target, reduction="mean"):
    """Mean squared error: ``mean((input - target) ** 2)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.mse_loss(st.tensor([1., 2.]), st.tensor([1., 4.])).item()
    2.0
    """
    if isinstance(target, ShardedTensor) and tuple(target.shape) != tuple(input.shape):
        raise ShapeError(
            f"mse_loss: target shape {tuple(target.shape)} differs from input "
            f"shape {tuple(input.shape)}"
        )
    d = input - target
    return _reduce(d * d, reduction)


def cross_entropy(input, target, reduction="mean"):
    """Cross entropy of logits ``input`` (N, C) or (C,) against class indices (N,) or class
    probabilities of the input's shape; computed through ``log_softmax``, so it is stable
    for any logits.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.cross_entropy(st.tensor([1000., 0.]), st.tensor([.5, .5])).item()
    500.0
    """
    cls_dim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, cls_dim)
    if target.dtype.is_floating_point:  # probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise ShapeError(
                f"cross_entropy: probability target shape "
                f"{tuple(target.shape)} differs from input {tuple(input.shape)}"
            )
        loss = -(logp * target).sum(cls_dim)
    else:  # class indices: pick log p of the true class with a one-hot mask
        if tuple(target.shape) != tuple(input.shape[:cls_dim]) + tuple(input.shape[2:]):
            raise ShapeError(
                f"cross_entropy: index target shape {tuple(target.shape)} does "
                f"not fit input {tuple(input.shape)}"
            )
        c = input.shape[cls_dim]
        shape = [1] * input.ndim
        shape[cls_dim] = c
        onehot = arange(c).reshape(shape) == (target.unsqueeze(cls_dim) if cls_dim else target)
        loss = -where(onehot, logp, 0.0).sum(cls_dim)
    return _reduce(loss, reduction)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (identity unless ``training``). The mask comes from the counter-based generator
    (``st.rand_like``), so it is the same for any sharding of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> out = st.nn.functional.dropout(st.ones(1000), 0.5)
    >>> sorted(set(out.tolist()))
    [0.0, 2.0]
    >>> st.nn.functional.dropout(st.ones(3), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:  # torch: all zeros (and zero gradient), no division by 0
        out = input * 0.0
    else:
        keep = rand_like(input, requires_grad=False) >= p  # kept with probability 1 - p
        out = input * (keep.to(input.dtype) * (1.0 / (1.0 - p)))
    if inplace:
        return input.copy_(out)
    return out


def _norm_dims(input, normalized_shape):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k :]) != shape or input.ndim < k:
        raise ShapeError(
            f"layer_norm: normalized_shape {list(shape)} does not match the trailing dims of "
            f"input of shape {list(input.shape)}"
        )
    return tuple(range(input.ndim - k, input.ndim))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` dims: ``(x - mean) / sqrt(var +
    eps) * weight + bias`` with the biased variance (torch's ``layer_norm``).

    Examples
    --------
    >>> import sharded as st
    >>> y = st.nn.functional.layer_norm(st.tensor([[1., 2., 3.]]), (3,))
    >>> [round(v, 4) for v in y[0].tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    dims = _norm_dims(input, normalized_shape)
    mu = input.mean(dims, keepdim=True)
    d = input - mu
    var = (d * d).mean(dims, keepdim=True)
    out = d / sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Normalize each channel (dim 1) of an (N, C) or (N, C, L) input by its batch
    statistics when ``training`` (then the running statistics, if given, are updated in
    place: ``running = (1 - momentum) * running + momentum * batch``, with the unbiased
    batch variance), else by ``running_mean``/``running_var`` (torch's ``batch_norm``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1., 10.], [3., 30.]])
    >>> st.nn.functional.batch_norm(x, None, None, training=True, eps=0.0).tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    if input.ndim not in (2, 3):
        raise ShapeError(f"batch_norm: expected 2D or 3D input, got shape {list(input.shape)}")
    dims = (0,) if input.ndim == 2 else (0, 2)
    shape = (1, input.shape[1]) + ((1,) if input.ndim == 3 else ())
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ArgumentError(
                "Expected more than 1 value per channel when training, got input size "
                f"{list(input.shape)}"
            )
        mean = input.mean(dims, keepdim=True)
        d = input - mean
        var = (d * d).mean(dims, keepdim=True)
        if running_mean is not None:
            # why no grad: the running statistics are buffers, not part of the graph
            m = mean.detach().reshape(-1)
            running_mean.mul_(1 - momentum).add_(m, alpha=momentum)
        if running_var is not None:
            unbiased = var.detach().reshape(-1) * (count / (count - 1))
            running_var.mul_(1 - momentum).add_(unbiased, alpha=momentum)
    else:
        if running_mean is None or running_var is None:
            raise ArgumentError("batch_norm: running_mean and running_var are needed in eval")
        d = input - running_mean.reshape(shape)
        var = running_var.reshape(shape)
    out = d / sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def embedding(input, weight, padding_idx=None):
    """Rows ``weight[input]``: an (*, D) tensor for integer indices of shape (*). The
    gradient scatters back into the rows (none into ``padding_idx``'s row).

    Examples
    --------
    >>> import sharded as st
    >>> w = st.arange(6.).reshape(3, 2)
    >>> st.nn.functional.embedding(st.tensor([[2, 0]]), w).tolist()
    [[[4.0, 5.0], [0.0, 1.0]]]
    """
    if input.dtype.is_floating_point:
        raise ArgumentError(f"embedding: indices must be integers, got {input.dtype}")
    rows = index_select(weight, 0, input.reshape(-1))
    if padding_idx is not None:
        # torch: the padding row gets no gradient, so mask it out of the graph
        pad = padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx
        hit = (input.reshape(-1) == pad).unsqueeze(1)
        rows = where(hit, rows.detach(), rows)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))


def gelu(input, approximate="none"):
    """Gaussian error linear unit: ``x * Phi(x)`` exactly (``approximate='none'``, through
    the ``erf`` primitive) or torch's tanh approximation (``'tanh'``).

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 6) for v in st.nn.functional.gelu(st.tensor([-1.0, 1.0])).tolist()]
    [-0.158655, 0.841345]
    """
    if approximate == "none":
        return input * (0.5 * (1.0 + erf(input * (1.0 / math.sqrt(2.0)))))
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + tanh(inner))
    raise ArgumentError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (swish).

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.functional.silu(st.tensor(1.0)).item(), 6)
    0.731059
    """
    out = input * sigmoid(input)
    return input.copy_(out) if inplace else out
