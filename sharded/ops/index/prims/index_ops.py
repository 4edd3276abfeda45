"""torch's ``index_*``, ``masked_*`` and ``nonzero`` families, sharded.

``index_select``/``index_add``/``index_copy``/``index_fill`` (``index_put`` in
:mod:`sharded.ops.index.derived.index_put`) run on the routed primitives of
:mod:`sharded.ops.index.prims.routing` (reached by name): the 1-D index is expanded to the
result's shape (laid out like the input along its other dims, so that only the indexed dim's
rows move) and routed worker to worker; index values are never read by the driver, which
reads only per-block counts (one wait per op). ``masked_*`` reuse the mask primitives of
:mod:`sharded.ops.index.prims.masking` by name. ``nonzero`` reads one count per shard.

Memory: a routed ``index_*`` op holds the expanded index (int64) and its bucketed coordinates.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand
from ....core.dispatch import apply, is_tensor
from ....core.registry import bind, kernel, nondiff, primitive
from ....errors import (
    ArgumentError,
    DimError,
    DTypeError,
    IndexDTypeError,
    IndexOutOfRange,
    ShapeError,
)
from ....layout import Layout
from ....runtime.commands import Key

__all__ = [
    "argwhere",
    "index_add",
    "index_copy",
    "index_fill",
    "index_select",
    "masked_fill",
    "masked_scatter",
    "masked_select",
    "nonzero",
]


# ------------------------------------------------------------------------ index_* along dim
def _dim(x, dim):
    nd = max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise DimError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    return dim % nd


def _vector(op, index):
    if not is_tensor(index):
        raise DTypeError(f"{op}(): index must be a tensor, got {type(index).__name__}")
    if index.dtype.name not in ("int64", "int32"):
        if op == "index_fill":  # torch raises IndexError there (RuntimeError elsewhere)
            raise IndexDTypeError(
                f"index_fill_(): Expected dtype int64 for index, got {index.dtype.name}"
            )
        raise DTypeError(f"{op}(): Expected dtype int32 or int64 for index, got {index.dtype.name}")
    if index.ndim > 1:
        raise IndexOutOfRange(f"{op}(): Index is supposed to be a vector, got {index.ndim}-d")
    return index.reshape(-1)


def _expand_index(index, x, dim, shape):
    """``index`` (1-D) expanded along ``dim`` to ``shape`` and laid out like ``x`` along the
    other dims, so each block names rows of the ``x`` shard on its own worker."""
    nd = len(shape)
    view = [1] * nd
    view[dim] = len(index)
    idx = index.reshape(view).expand(*shape).contiguous()
    lay = x._layout
    if (
        lay.is_replicated
        or lay.grid[dim] != 1
        or tuple(lay.shape) == tuple(shape)
        and idx._layout == lay
    ):
        return idx
    bounds = list(lay.bounds)
    bounds[dim] = (0, shape[dim])
    want = Layout.from_bounds(shape, bounds, lay.workers)
    return idx if idx._layout == want else idx.reshard(layout=want)


def _zero_of(t):
    """0 (an empty sum) that keeps ``t`` in the autograd graph: torch's results of empty
    index_* ops require grad, and their operands' grads are zeros."""
    return (t.reshape(-1)[:0] if t.numel() else t).sum()


def _as_shape(out, shape):
    # (a reshape of an empty tensor starts a new one, outside the autograd graph)
    return out if tuple(out.shape) == tuple(shape) else out.reshape(shape)


def _cmap(nd, dim):
    return tuple(("i", 0) if d == dim else ("p", d) for d in range(nd))


@bind("index_select")
def index_select(input, dim, index):
    """The rows ``index`` of ``input`` along ``dim`` (torch's ``index_select``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(6).reshape(3, 2)
    >>> st.index_select(x, 0, st.tensor([2, 0])).tolist()
    [[4, 5], [0, 1]]
    """
    dim = _dim(input, dim)
    index = _vector("index_select", index)
    x = input.reshape(1) if input.ndim == 0 else input
    shape = list(x.shape)
    shape[dim] = len(index)
    if index.numel() and x.shape[dim] == 0:
        raise IndexOutOfRange("index_select(): index out of range in self (dim of size 0)")
    if index.numel() and 0 in shape:  # torch still checks the indices: route them alone
        one = tuple(n if d == dim else 1 for d, n in enumerate(x.shape))
        probe = apply("full", Layout().bind(one, x._executor().num_workers), 0, x.dtype)
        index_select(probe, dim, index)
    if not index.numel() or 0 in shape:
        out = apply("full", Layout().bind(tuple(shape), x._executor().num_workers), 0, x.dtype)
        if input.requires_grad:  # an empty sum keeps input in the graph (its grad: zeros)
            out = out + _zero_of(input)
        return out.reshape(()) if input.ndim == 0 else out
    idx = _expand_index(index, x, dim, tuple(shape))
    out = apply("route_gather", x, (idx,), _cmap(x.ndim, dim), op="index_select")
    return out.reshape(()) if input.ndim == 0 else out


def _source_check(op, x, dim, index, source):
    want = list(x.shape)
    want[dim] = len(index)
    if not is_tensor(source):
        raise DTypeError(f"{op}(): source must be a tensor, got {type(source).__name__}")
    if source.ndim == 0 and x.ndim <= 1 and len(index) != 1:
        # torch's own messages (IndexError) for a scalar source and not one index
        if op == "index_copy":
            raise IndexOutOfRange(
                "index_copy_(): When source is scalar, index should have one element "
                f"(got {len(index)})"
            )
        raise DimError(
            f"{op}(): Dimension specified as 0 but tensor has no dimensions (a scalar source "
            f"takes one index, got {len(index)})"
        )
    if list(source.shape) != want and not (source.ndim == 0 and x.ndim <= 1):
        if op == "index_copy" and source.ndim == x.ndim and source.shape[dim] != len(index):
            raise IndexOutOfRange(
                f"index_copy_(): Number of indices ({len(index)}) should be equal to "
                f"source.size(dim) ({source.shape[dim]})"
            )
        raise ShapeError(
            f"{op}(): source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(x.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    if source.dtype != x.dtype:
        raise DTypeError(
            f"{op}(): self ({x.dtype.name}) and source ({source.dtype.name}) must have the same "
            "dtype"
        )
    return _as_shape(source, want)


def _index_write(op, x, dim, index, values, reduce, inplace, wrap=False):
    """``x`` with ``values`` (a tensor shaped like ``x`` with ``dim`` cut to the index, or a
    scalar) written or summed at the rows ``index`` along ``dim``."""
    shape = list(x.shape)
    shape[dim] = len(index)
    if not index.numel() or 0 in shape:
        out = x if inplace else x.clone()
        if is_tensor(values) and values.requires_grad and not inplace:
            out = out - _zero_of(values)  # x - 0.0 is x; values.grad zeros
        return out
    idx = _expand_index(index, x, dim, tuple(shape))
    if is_tensor(values) and values._layout != idx._layout:
        values = values.reshard(layout=idx._layout)
    target = x if inplace else None
    out = apply(
        "route_scatter",
        x,
        (idx,),
        _cmap(x.ndim, dim),
        values,
        reduce=reduce,
        include_self=True,
        wrap=wrap,
        op=op,
        target=target,
    )
    return x if inplace else out


def _index_add(input, dim, index, source, alpha, inplace):
    d = _dim(input, dim)
    index = _vector("index_add", index)
    x = input.reshape(1) if input.ndim == 0 else input
    src = _source_check("index_add", x, d, index, source)
    if alpha != 1:
        if src.dtype.np.kind in "iu" and isinstance(alpha, float):
            alpha = int(alpha)  # torch converts alpha to the integer dtype (truncates)
        src = src * D.check_int(alpha, src.dtype)
    out = _index_write("index_add", x, d, index, src, "sum", inplace)
    return input if inplace else _as_shape(out, input.shape)


@bind("index_add")
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source`` added at the rows ``index`` along ``dim``
    (repeated rows accumulate).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(3, 2).index_add(0, st.tensor([2, 2]), st.ones(2, 2), alpha=3).tolist()
    [[0.0, 0.0], [0.0, 0.0], [6.0, 6.0]]
    """
    return _index_add(input, dim, index, source, alpha, False)


@bind("index_add_")
def index_add_(input, dim, index, source, *, alpha=1):
    """In-place :func:`index_add`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(2); _ = x.index_add_(0, st.tensor([1]), st.ones(1)); x.tolist()
    [0.0, 1.0]
    """
    return _index_add(input, dim, index, source, alpha, True)


def _index_copy(input, dim, index, source, inplace):
    d = _dim(input, dim)
    index = _vector("index_copy", index)
    if index.dtype.name != "int64":  # torch: index_select/index_add take int32, these don't
        raise DTypeError(
            f"index_copy_(): Expected a long tensor for index, but got {index.dtype.name}"
        )
    x = input.reshape(1) if input.ndim == 0 else input
    src = _source_check("index_copy", x, d, index, source)
    out = _index_write("index_copy", x, d, index, src, None, inplace)
    return input if inplace else _as_shape(out, input.shape)


@bind("index_copy")
def index_copy(input, dim, index, source):
    """``input`` with the rows ``index`` along ``dim`` replaced by ``source``'s rows.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(3).index_copy(0, st.tensor([0, 2]), st.tensor([1., 2.])).tolist()
    [1.0, 0.0, 2.0]
    """
    return _index_copy(input, dim, index, source, False)


@bind("index_copy_")
def index_copy_(input, dim, index, source):
    """In-place :func:`index_copy`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(2); _ = x.index_copy_(0, st.tensor([1]), st.ones(1)); x.tolist()
    [0.0, 1.0]
    """
    return _index_copy(input, dim, index, source, True)


def _index_fill(input, dim, index, value, inplace):
    d = _dim(input, dim)
    index = _vector("index_fill", index)
    if index.dtype.name != "int64":
        raise IndexDTypeError(
            f"index_fill_(): Expected dtype int64 for index, got {index.dtype.name}"
        )
    if is_tensor(value):
        if value.ndim:
            raise ArgumentError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        if value.requires_grad:  # torch's value gets the sum of the filled points' grads
            hit = _index_fill(apply("full", input._layout, False, D.bool_), d, index, True, False)
            out = apply("where", hit, value.to(input.dtype), input)
            return input.copy_(out) if inplace else out
        value = value.item()  # one scalar read on the driver
    value = D.check_int(value, input.dtype)
    x = input.reshape(1) if input.ndim == 0 else input
    # torch's index_fill (alone of the index_* ops) counts negative indices from the end
    out = _index_write("index_fill", x, d, index, value, None, inplace, wrap=True)
    return input if inplace else _as_shape(out, input.shape)


@bind("index_fill")
def index_fill(input, dim, index, value):
    """``input`` with the rows ``index`` along ``dim`` set to the scalar ``value``.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 2).index_fill(1, st.tensor([1]), 5.).tolist()
    [[0.0, 5.0], [0.0, 5.0]]
    """
    return _index_fill(input, dim, index, value, False)


@bind("index_fill_")
def index_fill_(input, dim, index, value):
    """In-place :func:`index_fill`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(2); _ = x.index_fill_(0, st.tensor([0]), -1.); x.tolist()
    [-1.0, 0.0]
    """
    return _index_fill(input, dim, index, value, True)


# ------------------------------------------------------------------------ masks
def _bool_mask(op, mask):
    if not is_tensor(mask) or mask.dtype.name != "bool":
        got = mask.dtype.name if is_tensor(mask) else type(mask).__name__
        raise DTypeError(f"{op} only supports boolean masks, but got mask with dtype {got}")


def _mask_like(op, x, mask):
    """``mask`` broadcast to ``x``'s shape and laid out like ``x``."""
    _bool_mask(op, mask)
    try:
        shape = tuple(np.broadcast_shapes(tuple(mask.shape), tuple(x.shape)))
    except ValueError:
        shape = None
    if shape != tuple(x.shape):
        raise ShapeError(
            f"{op}: the size of mask {list(mask.shape)} must broadcast to input {list(x.shape)}"
        )
    m = mask if tuple(mask.shape) == shape else mask.expand(*shape).contiguous()
    return m if m._layout == x._layout else m.reshard(layout=x._layout)


def _broadcast_input(x, mask, copy=True):
    """``x`` expanded to its broadcast shape with ``mask`` (torch's out-of-place ``masked_*``
    broadcast both), a copy when ``copy``; shapes that don't broadcast are left to
    :func:`_mask_like` to name."""
    if not is_tensor(mask):
        return x.clone() if copy else x
    try:
        shape = tuple(np.broadcast_shapes(tuple(mask.shape), tuple(x.shape)))
    except ValueError:
        shape = tuple(x.shape)
    if shape == tuple(x.shape):
        return x.clone() if copy else x
    if 0 in shape:  # an empty expand stays a view (contiguous() keeps it), which can't be written
        return apply("full", Layout().bind(shape, x._executor().num_workers), 0, x.dtype)
    return x.expand(*shape).contiguous()


@bind("masked_fill")
def masked_fill(input, mask, value):
    """``input`` with ``value`` (a scalar or 0-d tensor) where ``mask`` is true; the mask
    broadcasts to ``input``. Shard-local.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1., 2.], [3., 4.]])
    >>> x.masked_fill(st.tensor([True, False]), 0.).tolist()
    [[0.0, 2.0], [0.0, 4.0]]
    """
    return masked_fill_(_broadcast_input(input, mask), mask, value)


@bind("masked_fill_")
def masked_fill_(input, mask, value):
    """In-place :func:`masked_fill`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(3); _ = x.masked_fill_(st.tensor([False, True, True]), 2.); x.tolist()
    [0.0, 2.0, 2.0]
    """
    m = _mask_like("masked_fill_", input, mask)
    if is_tensor(value):
        if value.ndim:
            raise ArgumentError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        value = value.to(input.dtype)
    else:
        value = D.check_fill(value, input.dtype)
    apply("put_mask", input, m, value, target=input)
    return input


@bind("masked_select")
def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` is true, as a 1-D tensor (both broadcast;
    the driver reads one count per shard).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1, 2], [3, 4]])
    >>> st.masked_select(x, x > 2).tolist()
    [3, 4]
    """
    _bool_mask("masked_select", mask)
    try:
        shape = tuple(np.broadcast_shapes(tuple(mask.shape), tuple(input.shape)))
    except ValueError:
        raise ShapeError(
            f"masked_select: shapes {list(input.shape)} and {list(mask.shape)} do not broadcast"
        ) from None
    x = input if tuple(input.shape) == shape else input.expand(*shape).contiguous()
    if x.ndim == 0:
        x = x.reshape(1)
    m = _mask_like("masked_select", x, mask.reshape(1) if mask.ndim == 0 else mask)
    if not (x._layout.is_replicated or all(g == 1 for g in x._layout.grid[1:])):
        x, m = x.reshard(dim=0), m.reshard(dim=0)
    return apply("mask_select", x, m)


def _masked_scatter(input, mask, source):
    _bool_mask("masked_scatter_", mask)
    if not is_tensor(source) or source.dtype != input.dtype:
        got = source.dtype.name if is_tensor(source) else type(source).__name__
        raise DTypeError(
            f"masked_scatter_: expected self and source to have same dtypes but got "
            f"{input.dtype.name} and {got}"
        )
    lay = input._layout
    x = input.reshape(1) if input.ndim == 0 else input
    if not (lay.is_replicated or all(g == 1 for g in lay.grid[1:])):
        x = x.reshard(dim=0)  # selection order is C order: blocks of whole trailing dims
    else:
        x = x.clone()
    m = _mask_like("masked_scatter_", x, mask.reshape(1) if mask.ndim == 0 else mask)
    sel = apply("mask_select", m, m)  # its layout holds the per-shard counts (bools only)
    total = sel.shape[0]
    if total > source.numel():
        raise ShapeError(
            f"masked_scatter_: Number of elements of source ({source.numel()}) < number of "
            f"ones in mask ({total})"
        )
    vals = source.reshape(-1)[:total]
    vals = vals.reshard(layout=sel._layout) if vals._layout != sel._layout else vals
    apply("mask_scatter", x, m, vals, target=x)
    if not source.numel() and source.requires_grad:
        x = x - _zero_of(source)  # (an empty source's reshape above left the graph)
    return _as_shape(x, input.shape)


@bind("masked_scatter")
def masked_scatter(input, mask, source):
    """``input`` with its elements where ``mask`` is true replaced, in order, by the first
    elements of ``source`` (the driver reads one count per shard).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(2, 2)
    >>> x.masked_scatter(st.tensor([[True, False], [True, True]]), st.arange(1., 5.)).tolist()
    [[1.0, 0.0], [2.0, 3.0]]
    """
    return _masked_scatter(_broadcast_input(input, mask, copy=False), mask, source)


@bind("masked_scatter_")
def masked_scatter_(input, mask, source):
    """In-place :func:`masked_scatter`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(3); _ = x.masked_scatter_(x == 0, st.tensor([1., 2., 3.])); x.tolist()
    [1.0, 2.0, 3.0]
    """
    input.copy_(_masked_scatter(input, mask, source))
    return input


# ------------------------------------------------------------------------ nonzero
@kernel
def nonzero_block(xp, a, offs):
    """Global coordinates ``(n, ndim)`` of a block's non-zero elements."""
    out = xp.argwhere(a).astype(np.int64)
    return out + xp.asarray(offs, dtype=np.int64) if len(offs) else out


@kernel
def count_rows(xp, a):
    """Number of rows of a block, as a 0-d int64 array."""
    return xp.asarray(a.shape[0], dtype=np.int64)


@primitive("nonzero", kernels=[nonzero_block, count_rows], kind="index")
def _nonzero_plan(ex, x) -> Operand:
    """Coordinates of the non-zero elements of ``x`` (split on dim 0 only), laid out by
    rows as its shards found them; the driver reads one count per shard."""
    lay = x._layout
    keys, counts = [], []
    shards = lay.shards()[:1] if lay.is_replicated else lay.shards()
    for s, (w, offs, _) in enumerate(shards):
        k, c = ex.new_key(), ex.new_key()
        ex.submit(
            w, "nonzero_block", (Key(x._keys[s], None),), (k,), {"offs": offs}, ("nonzero", s)
        )
        ex.submit(w, "count_rows", (Key(k, None),), (c,), None, ("nonzero", s))
        keys.append(k)
        counts.append((w, c))
    n = [int(v) for v in ex.fetch([(w, c, None) for w, c in counts])]
    ex.free_pairs(counts)
    nd = lay.ndim
    shape = (sum(n), nd)
    bounds = [tuple(np.cumsum([0] + n).tolist()), (0, nd)]
    return Operand(Layout.from_bounds(shape, bounds, [w for w, _, _ in shards]), D.int64, keys)


nondiff("nonzero")


@bind("nonzero")
def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero elements of ``input`` in C order: an ``(n, ndim)`` int64
    tensor, or with ``as_tuple=True`` one 1-D tensor per dim. Each shard finds its own;
    the driver reads one count per shard (a tensor split along a later dim is resharded by
    rows first, so that shard order is C order).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0, 1], [2, 0]])
    >>> st.nonzero(x).tolist()
    [[0, 1], [1, 0]]
    >>> [t.tolist() for t in x.nonzero(as_tuple=True)]
    [[0, 1], [1, 0]]
    """
    x = input
    lay = x._layout
    if not lay.is_replicated and any(g > 1 for g in lay.grid[1:]):
        x = x.reshard(dim=0)
    if as_tuple:
        x = x.reshape(1) if x.ndim == 0 else x
        nz = apply("nonzero", x)
        return tuple(nz[:, d].contiguous() for d in range(x.ndim))
    return apply("nonzero", x)


@bind("argwhere")
def argwhere(input):
    """``nonzero(input)``: the ``(n, ndim)`` indices of the non-zero elements.

    Examples
    --------
    >>> import sharded as st
    >>> st.argwhere(st.tensor([0., 3., 4.])).tolist()
    [[1], [2]]
    """
    return nonzero(input)
