"""Triangles and diagonals: ``tril``/``triu`` (one primitive: each shard masks its own block
from its global row/column offsets, so nothing moves), their index tensors, and the diagonal
family: ``diagonal`` (a view primitive of its own where the planes are not split, else views,
slices and concatenation), ``diag_embed``, ``diag``, ``trace``; plus the small structured
constructors ``kron``, ``cross``, ``vander`` and ``meshgrid``, which are compositions of
differentiable primitives.
"""

from __future__ import annotations

import math

import numpy as np

from .... import dtypes as D
from ....amp import keep_float32
from ....core.dataflow import as_view, map_shards
from ....core.dispatch import apply, as_tensor, is_tensor, placement
from ....core.registry import bind, kernel, primitive, vjp
from ....errors import ArgumentError, DimError, ShapeError
from ....layout import Layout, normalize_dim

__all__ = [
    "tril",
    "triu",
    "tril_indices",
    "triu_indices",
    "diagonal",
    "diag_embed",
    "diag",
    "trace",
    "kron",
    "cross",
    "vander",
    "meshgrid",
]


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


# ------------------------------------------------------------------------------ tril/triu
@kernel
def tri_mask(xp, a, row0, col0, diagonal, upper):
    """Block ``a`` (rows from global ``row0``, columns from ``col0`` in its last two dims)
    with the elements outside the triangle set to zero."""
    r, c = a.shape[-2:]
    rows = xp.arange(row0, row0 + r).reshape(r, 1)
    cols = xp.arange(col0, col0 + c).reshape(1, c)
    keep = (cols - rows >= diagonal) if upper else (cols - rows <= diagonal)
    return xp.where(keep, a, xp.zeros((), dtype=a.dtype))


@primitive(
    "tri", kernels=[tri_mask], kind="op", out_spec=lambda x, k, upper: (tuple(x.shape), x.dtype)
)
def _tri_plan(ex, x, k, upper):
    """Mask every shard where it lives: the mask is a function of global positions only."""
    lay = x._layout
    offs = [o for _, o, _ in lay.shards()]
    return map_shards(
        ex,
        x,
        lay,
        list(range(len(lay.workers))),
        "tri_mask",
        lambda s, j, shp: {
            "row0": offs[s][-2],
            "col0": offs[s][-1],
            "diagonal": k,
            "upper": upper,
        },
        "tri",
    )


@vjp("tri")
def _tri_vjp(gs, node):
    _, k, upper = node.args
    return (apply("tri", gs[0], k, upper), None, None)


def _tri(name, x, diagonal, upper):
    x = _t(x)
    if x.ndim < 2:
        raise ArgumentError(f"{name}: input tensor must have at least 2 dimensions")
    if isinstance(diagonal, bool) or not isinstance(diagonal, (int, np.integer)):
        raise ArgumentError(f"{name}: diagonal must be an int, got {diagonal!r}")
    return apply("tri", x, int(diagonal), upper)


@bind("tril", prim="tri")
def tril(input, diagonal=0):
    """The lower triangle of the last two dims (elements with ``col - row <= diagonal``);
    the rest is zero. Each shard masks its own block: no data moves.

    Examples
    --------
    >>> import sharded as st
    >>> st.tril(st.ones(3, 3, shards=2)).tolist()
    [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    return _tri("tril", input, diagonal, False)


@bind("triu", prim="tri")
def triu(input, diagonal=0):
    """The upper triangle of the last two dims (elements with ``col - row >= diagonal``).

    Examples
    --------
    >>> import sharded as st
    >>> st.triu(st.ones(2, 3, shards=2), 1).tolist()
    [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    return _tri("triu", input, diagonal, True)


@bind("tril_", prim="tri")
def tril_(self, diagonal=0):
    """In-place :func:`tril`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(2, 2); _ = x.tril_(); x.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return self.copy_(_tri("tril", self, diagonal, False))


@bind("triu_", prim="tri")
def triu_(self, diagonal=0):
    """In-place :func:`triu`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(2, 2); _ = x.triu_(); x.tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return self.copy_(_tri("triu", self, diagonal, True))


def _tri_indices(name, row, col, offset, dtype, upper, place):
    for label, v in (("row", row), ("col", col)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ArgumentError(f"{name}: {label} must be a non-negative int, got {v!r}")
    make = np.triu_indices if upper else np.tril_indices
    idx = np.stack(make(int(row), int(offset), int(col))).astype(np.int64).reshape(2, -1)
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    return as_tensor(idx, dtype=dt, **place)


def tril_indices(row, col, offset=0, *, dtype=None, device="cpu", shards=None, dim=None):
    """The (2, N) coordinates of the lower triangle of a ``row x col`` matrix, row-major.

    Examples
    --------
    >>> import sharded as st
    >>> st.tril_indices(2, 2).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    place = {"shards": shards, "dim": dim, "device": device}
    return _tri_indices("tril_indices", row, col, offset, dtype, False, place)


def triu_indices(row, col, offset=0, *, dtype=None, device="cpu", shards=None, dim=None):
    """The (2, N) coordinates of the upper triangle of a ``row x col`` matrix, row-major.

    Examples
    --------
    >>> import sharded as st
    >>> st.triu_indices(2, 3, 1).tolist()
    [[0, 0, 1], [1, 2, 2]]
    """
    place = {"shards": shards, "dim": dim, "device": device}
    return _tri_indices("triu_indices", row, col, offset, dtype, True, place)


# ------------------------------------------------------------------------------ diagonals
def _diag_shape(shape, offset, d1, d2):
    """Shape of the diagonal ``offset`` of dims ``d1``, ``d2``: the other dims, then its
    length."""
    n, m = shape[d1], shape[d2]
    length = max(min(n, m - offset) if offset >= 0 else min(n + offset, m), 0)
    return tuple(s for d, s in enumerate(shape) if d not in (d1, d2)) + (length,)


@kernel
def diagonal_view(xp, a, offset, dim1, dim2):
    """The diagonal ``offset`` of dims ``dim1``, ``dim2`` as the last dim: a writable view
    (NumPy's own ``diagonal`` is read-only)."""
    key = [slice(None)] * a.ndim
    key[dim2 if offset >= 0 else dim1] = slice(abs(offset), None)
    b = a[tuple(key)]
    rest = [d for d in range(a.ndim) if d not in (dim1, dim2)]
    shape = tuple(b.shape[d] for d in rest) + (max(0, min(b.shape[dim1], b.shape[dim2])),)
    strides = tuple(b.strides[d] for d in rest) + (b.strides[dim1] + b.strides[dim2],)
    return xp.lib.stride_tricks.as_strided(b, shape, strides)


@primitive(
    "diagonal_view",
    kernels=[diagonal_view],
    kind="view",
    out_spec=lambda x, offset, d1, d2: (_diag_shape(tuple(x.shape), offset, d1, d2), x.dtype),
)
def _diagonal_view_plan(ex, x, offset, d1, d2):
    """A view of each shard's own diagonal: dims ``d1`` and ``d2`` are not split (the caller
    checks), so every shard holds whole planes and the other dims keep their chunks."""
    lay = x._layout
    shape = _diag_shape(lay.shape, offset, d1, d2)
    bounds = [b for d, b in enumerate(lay.bounds) if d not in (d1, d2)] + [(0, shape[-1])]
    out = Layout.from_bounds(shape, bounds, lay.workers, replicated=lay.is_replicated)
    return map_shards(
        ex,
        x,
        out,
        list(range(len(lay.workers))),
        "diagonal_view",
        lambda s, j, shp: {"offset": offset, "dim1": d1, "dim2": d2},
        "diagonal",
    )


@vjp("diagonal_view")
def _diagonal_view_vjp(gs, node):  # zeros like x with the gradient written on the diagonal
    x, offset, d1, d2 = node.args
    z = apply("full", x._layout, 0, gs[0].dtype)
    diagonal(z, offset, d1, d2).copy_(gs[0])
    return (z, None, None, None)


@bind("diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the planes ``(dim1, dim2)``, as the last dim: a view of
    ``input`` when neither dim is split across shards (a tensor held whole, replicated, or
    split along other dims); otherwise a strided slice of the flattened planes, a view when
    they flatten in place (a matrix split by rows), else a copy.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(9, shards=2).reshape(3, 3).diagonal(1).tolist()
    [1, 5]
    """
    x = _t(input)
    d1, d2 = normalize_dim(dim1, x.ndim), normalize_dim(dim2, x.ndim)
    if d1 == d2:
        raise ArgumentError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    lay = x._layout
    if lay.is_replicated or lay.grid[d1] == lay.grid[d2] == 1:
        st_ = x.stride()
        strides = [s for d, s in enumerate(st_) if d not in (d1, d2)] + [st_[d1] + st_[d2]]
        start = offset * st_[d2] if offset >= 0 else -offset * st_[d1]
        if _diag_shape(lay.shape, offset, d1, d2)[-1] == 0:
            start = 0
        out = apply("diagonal_view", x, offset, d1, d2)
        return as_view(out, x, strides, x.storage_offset() + start)
    rest = [d for d in range(x.ndim) if d not in (d1, d2)]
    y = x.permute(*rest, d1, d2)
    n, m = y.shape[-2], y.shape[-1]
    batch = tuple(y.shape[:-2])
    if offset >= 0:
        length, start = max(min(n, m - offset), 0), offset
    else:
        length, start = max(min(n + offset, m), 0), -offset * m
    flat = y.reshape(*batch, n * m)
    if length == 0:
        return flat[..., 0:0]
    # element (i, i + offset) sits at start + i * (m + 1) of the flattened plane
    return flat[..., start : start + (length - 1) * (m + 1) + 1 : m + 1]


_diagonal = diagonal  # ``diag``'s parameter shadows the name


@bind("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims ``dim1``, ``dim2`` of the result) whose diagonal ``offset`` is the
    last dim of ``input``; zero elsewhere.

    Examples
    --------
    >>> import sharded as st
    >>> st.diag_embed(st.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    v = _t(input)
    if v.ndim == 0:  # torch: dim1=-2 is out of range for the 1-d result
        raise DimError("diag_embed: input must be at least 1-dimensional, got a 0-d tensor")
    nd = v.ndim + 1
    d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
    if d1 == d2:
        raise ArgumentError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    batch, n = tuple(v.shape[:-1]), v.shape[-1]
    big = n + abs(offset)
    # Zeros with v copied into their diagonal view: each chunk of v goes to the shards that
    # hold its entries, and nothing else moves (a flattened n x (n + 1) plane re-cut took
    # Jacobi's diag(D) of 4000 0.30 s; this, 4 ms). The view is one only while the planes
    # flatten in place: a batch is split along a batch dim (whole planes), one matrix by rows,
    # and the diagonal is named by its dims in ascending order (d2 < d1: the opposite offset).
    lo, hi = min(d1, d2), max(d1, d2)
    shape = list(batch)
    shape.insert(lo, big)
    shape.insert(hi, big)
    free = [d for d in range(nd) if d not in (lo, hi)]
    out = apply("full", placement(tuple(shape), dim=free[0] if free else None), 0, v.dtype)
    _diagonal(out, offset if d1 < d2 else -offset, lo, hi).copy_(v)
    return out


@bind("diag")
def diag(input, diagonal=0):
    """A 1-D input: the square matrix with it on diagonal ``diagonal``; a 2-D input: that
    diagonal of it.

    Examples
    --------
    >>> import sharded as st
    >>> st.diag(st.tensor([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    x = _t(input)
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:  # a copy in torch (``diagonal`` is the view)
        return _diagonal(x, diagonal).clone()
    raise ArgumentError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


@bind("trace")
@keep_float32
def trace(input):
    """The sum of the main diagonal of a matrix (integers sum in int64, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.trace(st.arange(9.0, shards=3).reshape(3, 3)).item()
    12.0
    """
    x = _t(input)
    if x.ndim != 2:
        raise ArgumentError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    return diagonal(x).sum()


# ------------------------------------------------------------------------------ structured
@bind("kron")
def kron(input, other):
    """The Kronecker product: block ``(i, j, ...)`` of the result is ``input[i, j, ...] *
    other``.

    Examples
    --------
    >>> import sharded as st
    >>> st.kron(st.tensor([1, 2]), st.tensor([1, 10])).tolist()
    [1, 10, 2, 20]
    """
    a, b = _t(input), _t(other)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # a's dims interleaved with ones times b's ones interleaved with dims: an outer product
    ai = a.reshape(*[v for s in sa for v in (s, 1)]) if nd else a
    bi = b.reshape(*[v for s in sb for v in (1, s)]) if nd else b
    return (ai * bi).reshape(*[p * q for p, q in zip(sa, sb)])


@bind("cross")
def cross(input, other, dim=None):
    """The 3-D cross product along ``dim`` (inputs broadcast; ``dim=None`` takes the first
    dim of size 3, as torch's deprecated default).

    Examples
    --------
    >>> import sharded as st
    >>> st.cross(st.tensor([1.0, 0, 0]), st.tensor([0.0, 1, 0]), dim=0).tolist()
    [0.0, 0.0, 1.0]
    """
    a, b = _t(input), _t(other)
    if a.ndim != b.ndim:
        raise ShapeError(
            f"linalg.cross: inputs must have the same number of dimensions ({a.ndim} != {b.ndim})"
        )
    try:
        shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise ShapeError(
            f"linalg.cross: shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast"
        ) from None
    if dim is None:
        dims = [d for d, s in enumerate(shape) if s == 3]
        if not dims:
            raise ArgumentError("no dimension of size 3 in input")
        d = dims[0]
    else:
        d = normalize_dim(dim, len(shape))
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise ShapeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. "
            f"Got {a.shape[d]} and {b.shape[d]}"
        )
    a, b = a.expand(*shape), b.expand(*shape)
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    comps = (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)
    return apply("cat", *(c.unsqueeze(d) for c in comps), dim=d)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D ``x``: column ``j`` is ``x ** (N - 1 - j)`` (or
    ``x ** j`` when ``increasing``); integer and bool inputs give int64, as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.vander(st.tensor([1, 2, 3]), N=3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    x = _t(x)
    if x.ndim != 1:
        raise ArgumentError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ArgumentError(f"N must be non-negative, got {N!r}")
    if not x.dtype.is_floating_point:
        x = x.to(D.int64)
    exps = apply("arange", placement((int(n),)), 0, 1, x.dtype)
    if not increasing:
        exps = exps.flip(0)
    return x.unsqueeze(1) ** exps


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output ``i`` holds ``tensors[i]`` along dim ``i`` (``indexing="ij"``,
    the default) or with the first two dims swapped (``"xy"``).

    Examples
    --------
    >>> import sharded as st
    >>> a, b = st.meshgrid(st.tensor([1, 2]), st.tensor([3, 4, 5]), indexing="ij")
    >>> a.tolist(), b.shape
    ([[1, 1, 1], [2, 2, 2]], sharded.Size([2, 3]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise ArgumentError("meshgrid expects a non-empty TensorList")
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise ArgumentError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    ts = [_t(t) for t in tensors]
    for t in ts:
        if t.ndim > 1:
            raise ArgumentError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D"
            )
    if len({t.dtype for t in ts}) > 1:
        raise ArgumentError(
            "meshgrid expects all tensors to have the same dtype, got "
            f"{sorted(str(t.dtype) for t in ts)}"
        )
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    sizes = [math.prod(t.shape) for t in ts]
    outs = []
    for i, t in enumerate(ts):
        shape = [1] * len(ts)
        shape[i] = sizes[i]
        outs.append(t.reshape(*shape).expand(*sizes))
    if swap:  # "xy" is "ij" of the first two swapped, outputs swapped back
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)
