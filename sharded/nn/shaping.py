"""``st.nn.functional``'s one_hot, pad and the vector similarities (normalize,
cosine_similarity, pairwise_distance), derived from sharded ops; ``st.nn.functional``
re-exports them."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..core.dispatch import apply
from ..errors import ArgumentError, DTypeError, ShapeError, UnsupportedArgument
from ..layout import normalize_dim
from ..linalg import vector_norm
from ..ops.creation.prims import arange, full, tensor
from ..ops.index.prims.index_ops import index_select
from ..ops.shape.prims.joining import cat

__all__ = ["one_hot", "pad", "normalize", "cosine_similarity", "pairwise_distance"]


def one_hot(tensor_, num_classes=-1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)``, 1 at each index and 0
    elsewhere; ``num_classes=-1`` takes ``max + 1``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.one_hot(st.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    x = tensor_
    if x.dtype != D.int64:
        raise DTypeError(f"one_hot is only applicable to index tensor, got {x.dtype}")
    if num_classes == -1:
        if x.numel() == 0:
            raise ArgumentError("Can not infer total number of classes from empty tensor.")
        num_classes = int(x.max().item()) + 1
    # with a given num_classes the workers check the values (no read: one_hot can be traced);
    # one out of range raises at the next read, an IndexError
    x = apply("check_indices", x, 0, num_classes, None, "Class value")
    return (x.unsqueeze(-1) == arange(num_classes)).to(D.int64)


def _source_rows(n, left, right, mode):
    """Indices into a dim of size ``n`` that build its padded version (non-constant modes)."""
    j = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    if mode == "circular":
        return j % n
    period = 2 * (n - 1)  # reflect: mirror about the edge elements
    j = np.abs(j) % period if period else np.zeros_like(j)
    return np.where(j >= n, period - j, j)


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev, ...)``
    (negative amounts crop); ``mode`` 'constant' (with ``value``, default 0), 'reflect',
    'replicate' or 'circular', as torch's ``F.pad``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.pad(st.tensor([[1., 2.]]), (1, 2), value=9).tolist()
    [[9.0, 1.0, 2.0, 9.0, 9.0]]
    >>> st.nn.functional.pad(st.tensor([[1., 2., 3.]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ArgumentError(
            f"Padding length must be divisible by 2 and at most twice the input's {input.ndim} "
            f"dims, got pad {list(pad)}"
        )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ArgumentError(f"Unrecognised padding mode {mode!r}")
    if mode != "constant" and (
        len(pad) // 2 not in (input.ndim - 1, input.ndim - 2) or not 1 <= len(pad) // 2 <= 3
    ):
        # torch pads the trailing 1-3 dims past a (batch, channel) or (channel,) prefix only
        raise UnsupportedArgument(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor in "
            f"mode {mode!r}"
        )
    if mode != "constant" and value is not None and value != 0:
        raise ArgumentError(f"Padding mode {mode!r} doesn't take in value argument")
    out = input
    for k in range(len(pad) // 2):
        d, left, right = input.ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
        n = out.shape[d]
        if mode == "constant":
            out = out.narrow(d, max(-left, 0), n - max(-left, 0) - max(-right, 0))
            parts = []
            for amount in (left, right):
                shape = list(out.shape)
                shape[d] = max(amount, 0)
                parts.append(full(shape, 0 if value is None else value, dtype=out.dtype))
            out = cat([parts[0], out, parts[1]], d)
            continue
        if mode == "reflect" and (left >= n or right >= n):
            raise ArgumentError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({left}, {right}) at dimension {d} of input "
                f"{list(input.shape)}"
            )
        if mode == "circular" and (left > n or right > n):
            raise ArgumentError(
                f"Padding value causes wrapping around more than once (padding ({left}, "
                f"{right}) at dimension {d} of size {n})"
            )
        if n == 0:
            raise ShapeError(f"pad: mode {mode!r} needs a non-empty dim {d}, got shape 0")
        out = index_select(out, d, tensor(_source_rows(n, left, right, mode)))
    return out


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.normalize(st.tensor([[3., 4.]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    if out is not None:
        raise ArgumentError("normalize: out= is not supported")
    norm = vector_norm(input, p, normalize_dim(dim, input.ndim), keepdim=True)
    return input / norm.clamp_min(eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``, each norm
    clamped at ``eps``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.cosine_similarity(st.tensor([[1., 0.]]), st.tensor([[1., 1.]])).tolist()
    [0.7071067690849304]
    """
    if x1.ndim != x2.ndim and min(x1.ndim, x2.ndim) == 0:
        raise ShapeError("cosine_similarity: 0-d inputs are not supported")
    d = normalize_dim(dim, max(x1.ndim, x2.ndim))
    n1 = vector_norm(x1, 2, d, keepdim=True).clamp_min(eps)
    n2 = vector_norm(x2, 2, d, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(d)


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
