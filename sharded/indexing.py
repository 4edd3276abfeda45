"""``x[key]`` and ``x[key] = value`` with numpy/torch semantics.

Basic keys (ints, slices with steps, ``None``, ``...``) give views that share storage. Any
advanced part (integer lists/arrays/tensors, boolean masks) gives a copy: the driver works out
the source coordinates with NumPy's own rules on zero-stride index grids (so every mix of
advanced and basic indices means exactly what it means in NumPy), then the points travel
worker to worker. Integer and boolean *tensor* indices are read to the driver for planning
(index data, not the tensor's data). A boolean tensor mask over the leading dims of a tensor
split by rows selects shard-locally, and its result stays sharded. Out-of-range indices raise
:class:`~sharded.errors.IndexOutOfRange` naming the index, the dim and its size, before
anything is changed.
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import ArgumentError, IndexOutOfRange
from .core.dispatch import apply
from .tensor import ShardedTensor


def _is_int(k) -> bool:
    return isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_))


def _basic_entries(x, key):
    """Normalised basic key (see ``ops.views.index_basic``), or None if any part is
    advanced."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(not (_is_int(k) or isinstance(k, slice) or k is None or k is Ellipsis)
           for k in key):
        return None
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > x.ndim:
        raise IndexOutOfRange(f"too many indices for tensor of dimension {x.ndim} "
                              f"(got {used})")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - used) + key[i + 1:]
    else:
        key = key + (slice(None),) * (x.ndim - used)
    out, d = [], 0
    for k in key:
        if k is None:
            out.append(("new",))
            continue
        n = x.shape[d]
        if _is_int(k):
            i = int(k)
            if not -n <= i < n:
                raise IndexOutOfRange(f"index {i} is out of bounds for dimension {d} with "
                                      f"size {n}")
            out.append(("int", i % n))
        else:
            if k.step == 0:
                raise ArgumentError("slice step cannot be zero")
            out.append(("slice",) + k.indices(n))
        d += 1
    return out


def _view_strides(x, entries):
    """torch's strides and storage offset of ``x[key]``: entries apply left to right to an
    intermediate result, an int selects, a slice steps, and ``None`` unsqueezes there (its
    stride is ``size * stride`` of the dim it lands before, 1 at the end)."""
    sizes, strides, offset = list(x.shape), list(x.stride()), x.storage_offset()
    d = 0
    for e in entries:
        if e[0] == "new":
            strides.insert(d, sizes[d] * strides[d] if d < len(sizes) else 1)
            sizes.insert(d, 1)
            d += 1
        elif e[0] == "int":
            offset += e[1] * strides[d]
            del sizes[d], strides[d]
        else:
            n = len(range(*e[1:]))
            offset += (e[1] * strides[d]) if n else 0
            sizes[d], strides[d] = n, strides[d] * e[3]
            d += 1
    return strides, offset


def _to_numpy_key(k):
    if isinstance(k, ShardedTensor):
        return k.numpy()
    if isinstance(k, (list, tuple)):
        a = np.asarray([v.numpy() if isinstance(v, ShardedTensor) else v for v in k])
        # ``x[[]]`` selects nothing (NumPy and torch), though ``asarray([])`` is float
        return a.astype(np.int64) if a.size == 0 and a.dtype.kind == "f" else a
    return k


def _coords(x, key):
    """Source coordinates (one int array per dim) of an advanced key, by NumPy's rules."""
    if not isinstance(key, tuple):
        key = (key,)
    key = tuple(_to_numpy_key(k) for k in key)
    shape = tuple(x.shape)
    grids = []
    for d, n in enumerate(shape):
        g = np.arange(n).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
        grids.append(np.broadcast_to(g, shape))
    try:
        return [g[key] for g in grids] if grids else [], key
    except IndexError as e:
        raise IndexOutOfRange(f"{e} (tensor shape {list(shape)})") from None


def _row_split(x):
    """``x`` itself if only dim 0 is split, else a copy resharded that way."""
    lay = x.layout
    if lay.is_replicated or all(g == 1 for g in lay.grid[1:]):
        return x
    return x.reshard(dim=0)


def _mask_fast_path(x, key):
    """The bool ShardedTensor mask of ``x[mask]``, if the shard-local path applies."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if (isinstance(key, ShardedTensor) and key.dtype.name == "bool" and 0 < key.ndim <= x.ndim
            and tuple(key.shape) == tuple(x.shape[:key.ndim])):
        return key
    return None


def getitem(x, key):
    """``x[key]``: a view for basic keys, a gathered copy for advanced ones.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(12, shards=3).view(3, 4)
    >>> x[1:, ::2].tolist(), x[[0, 2], -1].tolist(), x[x > 9].tolist()
    ([[4, 6], [8, 10]], [3, 11], [10, 11])
    """
    entries = _basic_entries(x, key)
    if entries is not None:
        out = apply("index_basic", x, entries)
        from .shape import _as_view
        strides, offset = _view_strides(x, entries)
        return _as_view(out, x, strides, offset)
    mask = _mask_fast_path(x, key)
    if mask is not None:
        src = _row_split(x)
        return apply("mask_select", src, mask)
    coords, _ = _coords(x, key)
    shape = coords[0].shape if coords else ()
    return apply("gather", x, coords, shape)


def setitem(x, key, value):
    """``x[key] = value`` in place (scalars, NumPy arrays, tensors; broadcasting).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(4)
    >>> x[1:3] = 5; x[[0]] = -1; x[x > 4] = 2
    >>> x.tolist()
    [-1.0, 2.0, 2.0, 0.0]
    """
    if x._readonly:
        raise ArgumentError("unsupported operation: more than one element of the written-to "
                            "tensor refers to a single memory location (an expanded view)")
    entries = _basic_entries(x, key)
    if entries is not None:
        getitem(x, key).copy_(value)
        return
    mask = _mask_fast_path(x, key)
    lay = x.layout
    scalar = not isinstance(value, (ShardedTensor, np.ndarray, list, tuple)) or (
        isinstance(value, ShardedTensor) and value.ndim == 0)
    if mask is not None and scalar and (mask.ndim == x.ndim or lay.is_replicated or all(
            g == 1 for g in lay.grid[mask.ndim:])):
        if isinstance(value, ShardedTensor):
            value = value.to(x.dtype)
        apply("put_mask", x, mask, value, target=x)
        return
    coords, _ = _coords(x, key)
    if isinstance(value, ShardedTensor):
        value = value.numpy()  # advanced assignment reads a tensor value on the driver
    value = np.asarray(value, dtype=x.dtype.np) if not np.isscalar(value) else value
    if np.ndim(value):
        try:
            np.broadcast_to(value, coords[0].shape)
        except ValueError:
            raise ArgumentError(f"shape mismatch: value of shape {np.shape(value)} cannot be "
                                f"broadcast to indexing result of shape "
                                f"{coords[0].shape}") from None
    apply("put_points", x, coords, value, target=x)
