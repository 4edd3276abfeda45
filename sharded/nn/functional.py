"""Stateless neural-network functions (``st.nn.functional``), derived from sharded ops."""

from __future__ import annotations

from ..errors import ArgumentError, ShapeError
from ..functional import log_softmax, softmax
from ..ops.creation import arange
from ..ops.selection import where
from ..ops.unary import relu, sigmoid, tanh
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
