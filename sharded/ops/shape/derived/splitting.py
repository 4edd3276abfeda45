"""Cutting into views: ``split_with_sizes``, ``unsafe_split``/``unsafe_chunk``,
``tensor_split`` (and ``hsplit``/``vsplit``/``dsplit``, which call it along dims 1/0/2),
``narrow_copy`` and ``Tensor.unfold``'s sliding windows; and
``block_diag`` and ``diagflat``, which put blocks on a diagonal. Compositions of ``narrow``,
``index_select``, ``unflatten``, ``movedim``, ``cat`` and ``diag``, so none needs a VJP of its
own and each runs where those run (a split dim is handled by them).
"""

from __future__ import annotations

import numbers

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor, placement
from ....core.registry import bind
from ....errors import ArgumentError, DTypeError
from ....layout import normalize_dim
from ...creation.prims import zeros
from ..prims.joining import chunk, split
from ..prims.triangular import diag

__all__ = [
    "split_with_sizes",
    "unsafe_split",
    "unsafe_chunk",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "narrow_copy",
    "block_diag",
    "diagflat",
]


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _ints(v, name):
    v = list(v)
    for a in v:
        if isinstance(a, bool) or not isinstance(a, numbers.Integral):
            raise ArgumentError(f"{name}: indices must be ints, got {v!r}")
    return [int(a) for a in v]


@bind("split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0):
    """Views of consecutive pieces of ``split_sizes`` along ``dim``, which must add up to
    its size exactly (``torch.split_with_sizes``).

    Examples
    --------
    >>> import sharded as st
    >>> [p.tolist() for p in st.split_with_sizes(st.arange(5), [2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    sizes = _ints(split_sizes, "split_with_sizes")
    if input.ndim == 0:
        raise ArgumentError("split_with_sizes expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if any(s < 0 for s in sizes):
        raise ArgumentError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={sizes}"
        )
    if sum(sizes) != n:
        raise ArgumentError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {d}), but got split_sizes={sizes}"
        )
    out, start = [], 0
    for s in sizes:
        out.append(input.narrow(d, start, s))
        start += s
    return tuple(out)


# ------------------------------------------------------------------------ tensor_split
@bind("unsafe_split")
def unsafe_split(x, split_size_or_sections, dim=0):
    """``torch.unsafe_split``: :func:`split` (torch's variant skips view tracking for
    in-place safety checks; sharded's pieces are ordinary views).

    Examples
    --------
    >>> import sharded as st
    >>> [p.tolist() for p in st.unsafe_split(st.arange(5), [1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    return split(x, split_size_or_sections, dim)


@bind("unsafe_chunk")
def unsafe_chunk(x, chunks, dim=0):
    """``torch.unsafe_chunk``: :func:`chunk` (see :func:`unsafe_split`).

    Examples
    --------
    >>> import sharded as st
    >>> [p.tolist() for p in st.unsafe_chunk(st.arange(4), 2)]
    [[0, 1], [2, 3]]
    """
    return chunk(x, chunks, dim)


@bind("tensor_split")
def tensor_split(
    input,
    indices_or_sections=None,
    dim=0,
    *,
    sections=None,
    indices=None,
    tensor_indices_or_sections=None,
):
    """Views of ``input`` cut along ``dim``: into ``n`` nearly equal pieces (the first
    ``size % n`` one longer) for an int ``n``, or at the given indices (Python slice
    semantics: ``x[:i0], x[i0:i1], ..., x[ik:]``), as ``torch.tensor_split``.

    Examples
    --------
    >>> import sharded as st
    >>> [p.tolist() for p in st.tensor_split(st.arange(7), 3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    >>> [p.tolist() for p in st.arange(5).tensor_split([1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    x = _t(input)
    # torch's overloads name the argument sections=, indices= or tensor_indices_or_sections=
    for v in (sections, indices, tensor_indices_or_sections):
        indices_or_sections = v if v is not None else indices_or_sections
    if x.ndim == 0:
        raise ArgumentError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = normalize_dim(dim, x.ndim)
    n = x.shape[d]
    ios = indices_or_sections
    if is_tensor(ios):
        if ios.dtype != D.int64:
            raise DTypeError(
                f"tensor_split expected tensor_indices_or_sections to have dtype of long, "
                f"but got {ios.dtype}"
            )
        if ios.ndim > 1:
            raise ArgumentError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {ios.ndim} dims"
            )
        ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, numbers.Integral):
        k = int(ios)
        if k <= 0:
            raise ArgumentError(f"number of sections must be larger than 0, got {k}")
        sizes = [n // k + (i < n % k) for i in range(k)]
        starts = [sum(sizes[:i]) for i in range(k)]
        cuts = [(a, a + b) for a, b in zip(starts, sizes)]
    else:
        idx = _ints(ios, "tensor_split")
        cuts = [slice(a, b).indices(n)[:2] for a, b in zip([0, *idx], [*idx, None])]
    return tuple(x.narrow(d, a, max(b - a, 0)) for a, b in cuts)


def _pick(*given):
    """The one of torch's spellings (positional, ``sections=``, ``indices=``) that was given."""
    got = [v for v in given if v is not None]
    if len(got) != 1:
        raise ArgumentError(f"expected one of indices_or_sections/sections/indices, got {got}")
    return got[0]


def _split_along(name, x, ios, dim, least):
    x = _t(x)
    if x.ndim < least:
        raise ArgumentError(
            f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor "
            f"with {x.ndim} dimensions!"
        )
    if isinstance(ios, numbers.Integral) and (ios == 0 or x.shape[dim] % ios):
        raise ArgumentError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {x.shape[dim]} is not divisible by the split_size {ios}!"
        )
    return tensor_split(x, ios, dim)


@bind("hsplit")
def hsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """``tensor_split`` along dim 1 (dim 0 of a vector); an int must divide that dim.

    Examples
    --------
    >>> import sharded as st
    >>> [p.shape for p in st.hsplit(st.zeros(2, 4), 2)]
    [sharded.Size([2, 2]), sharded.Size([2, 2])]
    """
    x, ios = _t(input), _pick(indices_or_sections, sections, indices)
    return _split_along("hsplit", x, ios, 1 if x.ndim > 1 else 0, 1)


@bind("vsplit")
def vsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims; an int must divide it.

    Examples
    --------
    >>> import sharded as st
    >>> [p.shape for p in st.vsplit(st.zeros(4, 2), [1])]
    [sharded.Size([1, 2]), sharded.Size([3, 2])]
    """
    return _split_along("vsplit", input, _pick(indices_or_sections, sections, indices), 0, 2)


@bind("dsplit")
def dsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims; an int must divide it.

    Examples
    --------
    >>> import sharded as st
    >>> len(st.dsplit(st.zeros(1, 2, 6), 3))
    3
    """
    return _split_along("dsplit", input, _pick(indices_or_sections, sections, indices), 2, 3)


# ------------------------------------------------------------------------------- unfold
@bind("unfold")
def unfold(x, dimension, size, step):
    """Windows of ``size`` elements every ``step`` along ``dimension``, as a new last dim of
    length ``size`` (``Tensor.unfold``): ``(n - size) // step + 1`` windows. Where windows tile
    the dim (``step == size``) it is a view; otherwise a gather of the windows' elements.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(5).unfold(0, 2, 1).tolist()
    [[0, 1], [1, 2], [2, 3], [3, 4]]
    """
    d = normalize_dim(dimension, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if size < 0:
        raise ArgumentError(f"unfold: size is {size} but must be >= 0")
    if size > n:
        raise ArgumentError(
            f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}"
        )
    if step <= 0:
        raise ArgumentError(f"unfold: step is {step} but must be > 0")
    if x.ndim == 0:  # torch: a 0-d tensor unfolds to shape (size,)
        return x.reshape(1).narrow(0, 0, size)
    count = (n - size) // step + 1
    if step == size:
        y = x.narrow(d, 0, count * size)
    else:
        idx = (np.arange(count)[:, None] * step + np.arange(size)).reshape(-1)
        y = x.index_select(d, as_tensor(idx, dtype=D.int64))
    return y.unflatten(d, (count, size)).movedim(d + 1, -1)


@bind("narrow_copy")
def narrow_copy(input, dim, start, length):
    """``narrow`` as a new tensor (no storage shared), as ``torch.narrow_copy``.

    Examples
    --------
    >>> import sharded as st
    >>> st.narrow_copy(st.arange(6), 0, 1, 3).tolist()
    [1, 2, 3]
    """
    return _t(input).narrow(dim, start, length).clone()


def block_diag(*tensors):
    """The tensors as blocks on the diagonal of a matrix, zeros elsewhere (a 0-d tensor is a
    1 x 1 block, a vector a row; dtypes promote), as ``torch.block_diag``.

    Examples
    --------
    >>> import sharded as st
    >>> st.block_diag(st.tensor([[1, 2]]), st.tensor(3)).tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    ts = [_t(t) for t in tensors]
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise ArgumentError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} "
                f"has {t.ndim} dimensions"
            )
    if not ts:  # torch: a 1 x 0 matrix of the default dtype
        return apply("full", placement((1, 0)), 0, D.get_default_dtype())
    ts = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = D.promote_types(dt, t.dtype)
    cols = sum(t.shape[1] for t in ts)
    if not sum(t.shape[0] for t in ts):
        return apply("full", placement((0, cols)), 0, dt)
    rows, left = [], 0
    for t in ts:  # each block's rows: zeros | block | zeros
        r, c = t.shape
        parts = [apply("full", placement((r, left)), 0, dt), t.to(dt)]
        parts.append(apply("full", placement((r, cols - left - c)), 0, dt))
        rows.append(apply("cat", *parts, dim=1))
        left += c
    return apply("cat", *rows, dim=0)


def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on diagonal ``offset``.

    Examples
    --------
    >>> import sharded as st
    >>> st.diagflat(st.tensor([[1, 2]]), 1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    x = input if is_tensor(input) else as_tensor(input)
    if x.numel() == 0 and offset:  # an all-zero |offset|-square, still connected to x
        n = abs(offset)
        return zeros((n, n), dtype=x.dtype) + x.sum().to(x.dtype) * 0
    return diag(x.reshape(-1), offset)


bind("diagflat")(diagflat)
