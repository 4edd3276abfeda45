"""Manipulation, indexing, searching, sorting and set functions of the Array API namespace.

Thin renamings of sharded's ops (``axis`` for ``dim``, ``concat`` for ``cat``...), plus the
places where the standard's answer differs from torch's: ``unique_*`` return first-occurrence
indices and keep NaNs distinct, ``squeeze`` refuses a dim whose size is not 1, ``where`` and
``searchsorted`` promote by the standard's rules.
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

from .. import dtypes as D
from ..errors import ArgumentError, DimError, ShapeError
from ..layout import normalize_dim
from ..tensor import ShardedTensor
from ._dtypes import promote
from ._elementwise import prepare
from ._st import ST


def _axes(axis, ndim) -> tuple:
    """``axis`` (an int, a tuple or None for all) as a sorted tuple of non-negative dims."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
    out = tuple(sorted(normalize_dim(a, ndim) if ndim else _zero_d_axis(a) for a in axes))
    if len(set(out)) != len(out):
        raise DimError(f"axis {axis} repeats a dimension")
    return out


def _zero_d_axis(a):
    if a not in (0, -1):
        raise DimError(f"axis {a} is out of range for a 0-d array")
    return 0


# ------------------------------------------------------------------ manipulation
def broadcast_arrays(*arrays):
    """The arrays broadcast against each other.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> [a.shape for a in xp.broadcast_arrays(xp.ones((2, 1)), xp.ones(3))]
    [sharded.Size([2, 3]), sharded.Size([2, 3])]
    """
    return list(ST.broadcast_tensors(*arrays))


def broadcast_to(x, /, shape):
    """``x`` broadcast to ``shape``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.broadcast_to(xp.asarray([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    return ST.broadcast_to(x, tuple(shape))


def concat(arrays, /, *, axis=0):
    """Join arrays along ``axis`` (``None`` flattens them first), promoting their dtypes.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.concat([xp.asarray([1]), xp.asarray([2, 3])]).tolist()
    [1, 2, 3]
    """
    arrays = list(arrays)
    if axis is None:
        arrays, axis = [ST.reshape(a, -1) for a in arrays], 0
    return ST.cat(_same_dtype(arrays), axis)


def _same_dtype(arrays):
    dt = arrays[0].dtype
    for a in arrays[1:]:
        dt = promote(dt, a.dtype)
    return [a if a.dtype == dt else a.to(dt) for a in arrays]


def expand_dims(x, /, axis=0):
    """``x`` with a new dim of size 1 at ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.expand_dims(xp.ones(3), axis=-1).shape
    sharded.Size([3, 1])
    """
    n = x.ndim + 1
    if not -n <= axis < n:
        raise DimError(f"axis {axis} is out of range for an array of {x.ndim} dims")
    return ST.unsqueeze(x, axis)


def flip(x, /, *, axis=None):
    """``x`` reversed along ``axis`` (every dim when None).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.flip(xp.asarray([1, 2, 3])).tolist()
    [3, 2, 1]
    """
    axes = _axes(axis, x.ndim)
    return ST.flip(x, axes) if axes and x.ndim else x.clone()


def moveaxis(x, source, destination, /):
    """``x`` with dims ``source`` moved to ``destination``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.moveaxis(xp.ones((2, 3, 4)), 0, -1).shape
    sharded.Size([3, 4, 2])
    """
    return ST.moveaxis(x, source, destination)


def permute_dims(x, /, axes):
    """``x`` with its dims reordered.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.permute_dims(xp.ones((2, 3)), (1, 0)).shape
    sharded.Size([3, 2])
    """
    return ST.permute(x, *axes)


def repeat(x, repeats, /, *, axis=None):
    """Each element repeated ``repeats`` times (an int or an array) along ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.repeat(xp.asarray([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    """
    if axis is None:
        x, axis = ST.reshape(x, -1), 0
    return ST.repeat_interleave(x, repeats, axis)


def reshape(x, /, shape, *, copy=None):
    """``x`` with a new shape (a view where the shards allow; ``copy=True`` always copies).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.reshape(xp.arange(6), (2, -1)).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    out = ST.reshape(x, tuple(shape))
    return out.clone() if copy else out


def roll(x, /, shift, *, axis=None):
    """Elements shifted by ``shift`` along ``axis`` (the flattened array when None).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.roll(xp.asarray([1, 2, 3]), 1).tolist()
    [3, 1, 2]
    """
    if axis is None:
        return ST.reshape(ST.roll(ST.reshape(x, -1), shift, 0), tuple(x.shape))
    return ST.roll(x, shift, axis)


def squeeze(x, /, axis):
    """``x`` without the dims ``axis``, which must have size 1.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.squeeze(xp.ones((1, 3)), axis=0).shape
    sharded.Size([3])
    """
    axes = _axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ShapeError(f"cannot squeeze axis {a} of size {x.shape[a]} (shape {x.shape})")
    out = x
    for a in reversed(axes):
        out = ST.squeeze(out, a)
    return out


def stack(arrays, /, *, axis=0):
    """Join arrays of one shape along a new dim ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.stack([xp.asarray([1, 2]), xp.asarray([3, 4])], axis=1).tolist()
    [[1, 3], [2, 4]]
    """
    return ST.stack(_same_dtype(list(arrays)), axis)


def tile(x, repetitions, /):
    """``x`` repeated ``repetitions[i]`` times along each dim.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.tile(xp.asarray([1, 2]), (2,)).tolist()
    [1, 2, 1, 2]
    """
    return ST.tile(x, tuple(repetitions))


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> [a.tolist() for a in xp.unstack(xp.asarray([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    return tuple(ST.unbind(x, axis))


# ------------------------------------------------------------------ indexing
def take(x, indices, /, *, axis=None):
    """Elements of ``x`` at ``indices`` along ``axis`` (optional for a 1-D ``x``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.take(xp.asarray([[1, 2], [3, 4]]), xp.asarray([1]), axis=1).tolist()
    [[2], [4]]
    """
    if axis is None:
        if x.ndim != 1:
            raise ArgumentError(f"take needs axis= for an array of {x.ndim} dims")
        axis = 0
    return ST.index_select(x, axis, _from_end(indices, x.shape[normalize_dim(axis, x.ndim)]))


def _from_end(indices, n):
    """Negative ``indices`` counted from the end of a dim of size ``n`` (the standard's
    ``take``; torch's ``index_select`` and ``gather`` refuse them). Indices out of range
    stay as they are, so the op's error names them."""
    if isinstance(indices, ShardedTensor) and indices.dtype.np.kind == "u":
        return indices
    return ST.where((indices < 0) & (indices >= -n), indices + n, indices)


def take_along_axis(x, indices, /, *, axis=-1):
    """Elements of ``x`` picked by ``indices`` (same number of dims) along ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.take_along_axis(xp.asarray([[5, 6], [7, 8]]), xp.asarray([[1], [0]]), axis=1).tolist()
    [[6], [7]]
    """
    n = x.shape[normalize_dim(axis, x.ndim)]
    return ST.take_along_dim(x, _from_end(indices, n), axis)


# ------------------------------------------------------------------ searching
def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the (first) maximum, over ``axis`` or the flattened array.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> int(xp.argmax(xp.asarray([1, 5, 5])))
    1
    """
    out = ST.argmax(x, axis, keepdims)
    return _keep_all(out, x, axis, keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the (first) minimum, over ``axis`` or the flattened array.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> int(xp.argmin(xp.asarray([3, 1, 1])))
    1
    """
    out = ST.argmin(x, axis, keepdims)
    return _keep_all(out, x, axis, keepdims)


def _keep_all(out, x, axis, keepdims):
    if axis is None and keepdims and out.ndim != x.ndim:
        return ST.reshape(out, (1,) * x.ndim)
    return out


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """Number of non-zero elements over ``axis`` (an int, a tuple or None).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> int(xp.count_nonzero(xp.asarray([0, 1, 2])))
    2
    """
    axes = _axes(axis, x.ndim)
    out = ST.sum(ST.ne(x, 0).to(D.int64), axes, keepdims) if axes else (x != 0).to(D.int64)
    return out


def nonzero(x, /):
    """Indices of the non-zero elements, one array per dim.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> [a.tolist() for a in xp.nonzero(xp.asarray([0, 3, 0, 4]))]
    [[1, 3]]
    """
    if x.ndim == 0:
        raise ArgumentError("nonzero of a 0-d array is not defined; use a 1-d array")
    return tuple(ST.nonzero(x, as_tuple=True))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Insertion points of ``x2`` into the sorted 1-D ``x1``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.searchsorted(xp.asarray([1, 3, 5]), xp.asarray([3, 4]), side="right").tolist()
    [2, 2]
    """
    if side not in ("left", "right"):
        raise ArgumentError(f"side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        x1 = ST.index_select(x1, 0, sorter)
    if not isinstance(x2, ShardedTensor):
        x2 = ST.full((), x2, dtype=x1.dtype, device=x1.device)
    if x1.dtype != x2.dtype:
        dt = promote(x1.dtype, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    return ST.searchsorted(x1, x2, side=side)


def where(condition, x1, x2, /):
    """``x1`` where ``condition`` holds, else ``x2`` (arrays or scalars, promoted).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.where(xp.asarray([True, False]), xp.asarray([1, 2]), 0).tolist()
    [1, 0]
    """
    if not isinstance(x1, ShardedTensor) and not isinstance(x2, ShardedTensor):
        raise ArgumentError("where needs x1 or x2 to be an array")
    a, b = prepare(x1, x2, numbers=True)
    if isinstance(a, ShardedTensor) and isinstance(b, ShardedTensor) and a.dtype != b.dtype:
        dt = promote(a.dtype, b.dtype)
        a, b = a.to(dt), b.to(dt)
    return ST.where(condition, a, b)


# ------------------------------------------------------------------ sorting
def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort ``x`` along ``axis`` (stable: equal elements keep their order).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.argsort(xp.asarray([3, 1, 2])).tolist()
    [1, 2, 0]
    """
    if x.ndim == 0:
        return ST.zeros((), dtype=D.int64, device=x.device)
    return ST.argsort(x, axis, descending, True)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """``x`` sorted along ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.sort(xp.asarray([3, 1, 2]), descending=True).tolist()
    [3, 2, 1]
    """
    if x.ndim == 0:
        return x.clone()
    return ST.sort(x, axis, descending, True)[0]


# ------------------------------------------------------------------ sets
class UniqueAllResult(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor
    inverse_indices: ShardedTensor
    counts: ShardedTensor


class UniqueCountsResult(NamedTuple):
    values: ShardedTensor
    counts: ShardedTensor


class UniqueInverseResult(NamedTuple):
    values: ShardedTensor
    inverse_indices: ShardedTensor


def _unique(x):
    flat = ST.reshape(x, -1)
    return ST.unique(flat, return_inverse=True, return_counts=True)


def unique_all(x, /):
    """Distinct values, the index of each one's first occurrence, the inverse indices (shaped
    like ``x``) and the counts; NaNs count as distinct.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> r = xp.unique_all(xp.asarray([2, 1, 2]))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([1, 2], [1, 0], [1, 0, 1], [1, 2])
    """
    values, inverse, counts = _unique(x)
    n = x.numel()
    pos = ST.arange(n, dtype=D.int64, device=x.device)
    first = ST.full((values.shape[0],), n, dtype=D.int64, device=x.device)
    if n:
        first = ST.scatter_reduce(first, 0, inverse, pos, "amin")
    return UniqueAllResult(values, first, ST.reshape(inverse, tuple(x.shape)), counts)


def unique_counts(x, /):
    """Distinct values and how often each occurs.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> [a.tolist() for a in xp.unique_counts(xp.asarray([2, 1, 2]))]
    [[1, 2], [1, 2]]
    """
    values, _, counts = _unique(x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /):
    """Distinct values and, for each element of ``x``, the index of its value.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> [a.tolist() for a in xp.unique_inverse(xp.asarray([2, 1, 2]))]
    [[1, 2], [1, 0, 1]]
    """
    values, inverse, _ = _unique(x)
    return UniqueInverseResult(values, ST.reshape(inverse, tuple(x.shape)))


def unique_values(x, /):
    """The distinct values of ``x``, sorted.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.unique_values(xp.asarray([2, 1, 2])).tolist()
    [1, 2]
    """
    return ST.unique(ST.reshape(x, -1))


__all__ = [
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack", "take",
    "take_along_axis", "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where",
    "argsort", "sort", "unique_all", "unique_counts", "unique_inverse", "unique_values",
]  # fmt: skip
