"""The basic functions other parts of ``st.nn.functional`` compose (linear, dropout,
embedding, padding), apart so that those parts import them without importing
:mod:`.functional` itself (which imports them all)."""

from __future__ import annotations

import numpy as np

from ..amp import lower_precision
from ..core.dispatch import via_float32
from ..errors import ArgumentError, ShapeError, UnsupportedArgument
from ..grad_mode import no_grad
from ..ops.creation.prims import full, tensor
from ..ops.elementwise.prims.selection import where
from ..ops.index.derived.scatter import gather
from ..ops.index.prims.index_ops import index_select
from ..ops.linalg.derived.norms import vector_norm
from ..ops.order.derived.sets import unique
from ..ops.order.prims.count import bincount
from ..ops.random.prims.counter import rand_like
from ..ops.shape.prims.joining import cat
from ._activation import _src


@lower_precision
@via_float32
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
        out = _src(input, inplace) * (keep.to(input.dtype) * (1.0 / (1.0 - p)))
    if inplace:
        return input.copy_(out)
    return out


def renorm_rows(weight, input, max_norm, norm_type=2.0):
    """torch's ``embedding_renorm_``: the rows of ``weight`` that ``input`` names whose
    ``norm_type``-norm exceeds ``max_norm`` are scaled in place by ``max_norm / (norm +
    1e-7)``, outside autograd (as torch, the table itself changes)."""
    with no_grad():
        idx = unique(input.reshape(-1))
        rows = index_select(weight, 0, idx)
        norms = vector_norm(rows, norm_type, dim=1, keepdim=True)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_copy_(0, idx, rows * scale)


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """Rows ``weight[input]``: an (*, D) tensor for integer indices of shape (*). The
    gradient scatters back into the rows (none into ``padding_idx``'s row). With a
    replicated ``weight`` (a layer's default) the result is laid out like ``input``.
    ``max_norm`` first rescales, in place, the looked-up rows whose norm exceeds it
    (:func:`renorm_rows`); ``scale_grad_by_freq`` divides each row's gradient by how often
    the row occurs in ``input``. ``sparse=True`` is accepted and gives the same values, but
    the weight's gradient stays dense (sharded has no sparse tensors).

    Examples
    --------
    >>> import sharded as st
    >>> w = st.arange(6.).reshape(3, 2)
    >>> st.nn.functional.embedding(st.tensor([[2, 0]]), w).tolist()
    [[[4.0, 5.0], [0.0, 1.0]]]
    """
    if input.dtype.is_floating_point:
        raise ArgumentError(f"embedding: indices must be integers, got {input.dtype}")
    if weight.ndim != 2:
        raise ShapeError(f"embedding: 'weight' must be 2-D, got shape {list(weight.shape)}")
    if max_norm is not None:
        renorm_rows(weight, input, max_norm, norm_type)
    if weight.layout.is_replicated and input.ndim:
        # Every worker holds the whole table: each block of indices reads its rows where it
        # lies, so the result keeps the indices' layout (a sequence split stays split).
        idx = input.unsqueeze(-1).expand(*input.shape, weight.shape[1])
        table = weight.expand(*input.shape[:-1], *weight.shape) if input.ndim > 1 else weight
        rows = gather(table, input.ndim - 1, idx)
    else:
        rows = index_select(weight, 0, input.reshape(-1))
        rows = rows.reshape(tuple(input.shape) + (weight.shape[1],))
    if padding_idx is not None:
        # torch: the padding row gets no gradient, so mask it out of the graph
        pad = padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx
        hit = (input == pad).unsqueeze(-1)
        rows = where(hit, rows.detach(), rows)
    if scale_grad_by_freq and weight.requires_grad:
        rows = scale_by_freq(rows, input, input, weight.shape[0])
    return rows


def scale_by_freq(rows, ids, counted, n_rows):
    """``rows`` (looked up at ``ids``) unchanged, but each one's gradient divided by how
    often its id occurs in ``counted`` (``scale_grad_by_freq``): ``r + (r - r) * c`` is
    ``r`` exactly and passes ``c * g`` back."""
    flat = counted.reshape(-1)
    count = index_select(bincount(flat, minlength=n_rows), 0, ids.reshape(-1))
    inv = (1.0 / count.clamp_min(1).to(rows.dtype)).reshape(tuple(ids.shape) + (1,))
    return rows.detach() + (rows - rows.detach()) * inv


def _source_rows(n, left, right, mode):
    """Indices into a dim of size ``n`` that build its padded version (non-constant modes)."""
    if mode == "circular":
        # torch crops first (negative amounts), then wraps around what is left: (-1, 2) of
        # [1..6] is [2, 3, 4, 5, 6, 2, 3], not [..., 6, 1, 2]
        start = max(-left, 0)
        kept = n - start - max(-right, 0)
        j = np.arange(n + left + right) - max(left, 0)
        return start + j % kept if kept else j
    j = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
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
        size = n + left + right
        if mode == "circular" and (size < 0 or (size and n + min(left, 0) + min(right, 0) <= 0)):
            raise ShapeError(
                f"Negative padding value is resulting in an empty dimension (padding ({left}, "
                f"{right}) at dimension {d} of size {n})"
            )
        if mode != "circular" and size <= 0:
            raise ShapeError(
                f"input (dim {d}: {n}) is too small for padding ({left}, {right}). Calculated "
                f"output size: {size}"
            )
        out = index_select(out, d, tensor(_source_rows(n, left, right, mode)))
    return out
