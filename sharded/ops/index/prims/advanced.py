"""``x[key]`` and ``x[key] = value`` for keys holding index *tensors*, routed worker to worker.

When a key holds an integer or boolean tensor (not 0-d), its index values stay on the
workers: the key's basic part (ints, slices, ``None``, ``...``) gives a view first, as in
:mod:`sharded.ops.index.prims.indexing`; every index tensor is then broadcast to the result's
shape and the ``route_gather``/``route_scatter`` primitives of
:mod:`sharded.ops.index.prims.routing` (reached by name) move the points, as ``gather``,
``index_select`` and ``index_put`` do. A boolean tensor becomes its ``nonzero`` positions (one
count per shard is read, never the mask). Negative indices count from the end; an
out-of-range one raises :class:`~sharded.errors.IndexOutOfRange` before anything is written.

torch's placement of the broadcast index dims: where the first indexed dim was when the
indexed dims are adjacent (``x[:, i, j]``), else first (``x[i, :, j]``).

Memory: one int64 index of the result's size per indexed dim (and its routed coordinates).
"""

from __future__ import annotations

import numpy as np

from ....core.dispatch import apply, as_tensor, is_tensor
from ....errors import IndexOutOfRange, ShapeError
from ....layout import Layout

_INTS = ("int64", "int32")


def routed_key(key) -> bool:
    """Whether ``key`` takes the routed path: it holds an integer or bool tensor that is
    not 0-d (0-d ones act as ints, read on the driver) and no Python bool.

    Examples
    --------
    >>> import sharded as st
    >>> routed_key((slice(None), st.tensor([1, 0]))), routed_key([1, 0])
    (True, False)
    """
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (bool, np.bool_)) or (is_tensor(k) and k.ndim == 0) for k in key):
        return False
    return any(is_tensor(k) and k.ndim > 0 for k in key)


def _as_index(k):
    """A key entry that is an index (a tensor, list or array) as an int or bool tensor."""
    if not is_tensor(k):
        a = np.asarray(k)
        if a.size == 0 and a.dtype.kind == "f":  # ``[]`` selects nothing
            a = a.astype(np.int64)
        k = as_tensor(a)
    if k.dtype.name == "uint8":  # torch reads a uint8 index as a mask
        k = k.to("bool")
    if k.dtype.name not in _INTS + ("bool",):
        raise IndexOutOfRange(
            f"tensors used as indices must be long, int, byte or bool tensors, got "
            f"{k.dtype.name} index of shape {list(k.shape)}"
        )
    return k


def _split(x, key):
    """``(basic key, per-dim entries of x[basic])``: an entry is None (a full slice) or an
    int index tensor; bool masks are replaced by their ``nonzero`` positions."""
    key = key if isinstance(key, tuple) else (key,)
    basic, adv = [], []
    for k in key:
        if k is None or isinstance(k, slice):
            basic.append(k)
            adv.append(None)
        elif k is Ellipsis:
            basic.append(k)
            adv.append(k)
        elif isinstance(k, (int, np.integer)):
            basic.append(int(k))  # an int selects before the advanced indices (torch)
        else:
            t = _as_index(k)
            basic.extend([slice(None)] * (t.ndim if t.dtype.name == "bool" else 1))
            adv.append(t)
    return tuple(basic), adv


def _entries(src, adv):
    """One entry per dim of ``src``: None or an int index tensor."""
    used = sum(
        e.ndim if is_tensor(e) and e.dtype.name == "bool" else 1 for e in adv if e is not Ellipsis
    )
    out = []
    for e in adv:
        if e is Ellipsis:
            out += [None] * (src.ndim - used)
        elif is_tensor(e) and e.dtype.name == "bool":
            d = len(out)
            if list(e.shape) != list(src.shape[d : d + e.ndim]):
                raise IndexOutOfRange(
                    f"The shape of the mask {list(e.shape)} at index {d} does not match the "
                    f"shape of the indexed tensor {list(src.shape)} at index {d}"
                )
            out += list(e.nonzero(as_tuple=True))  # reads one count per shard, not the mask
        else:
            out.append(e)
    return out + [None] * (src.ndim - len(out))


def _plan(src, entries):
    """``(result shape, cmap, index tensors)``: every index broadcast to the result's shape,
    contiguous and laid out like the first."""
    tdims = [d for d, e in enumerate(entries) if e is not None]
    try:
        b = tuple(np.broadcast_shapes(*(tuple(entries[d].shape) for d in tdims)))
    except ValueError:
        raise IndexOutOfRange(  # an IndexError, as torch's and NumPy's
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + " ".join(str(list(entries[d].shape)) for d in tdims)
        ) from None
    others = [d for d in range(src.ndim) if entries[d] is None]
    adjacent = tdims == list(range(tdims[0], tdims[-1] + 1))
    p = sum(1 for d in others if d < tdims[0]) if adjacent else 0
    shape = tuple(src.shape[d] for d in others[:p]) + b + tuple(src.shape[d] for d in others[p:])
    cmap, k = [], 0
    for d in range(src.ndim):
        if entries[d] is not None:
            cmap.append(("i", k))
            k += 1
        else:
            i = others.index(d)
            cmap.append(("p", i if i < p else i + len(b)))
    idx = []
    after = len(shape) - p - len(b)
    for d in tdims:
        t = entries[d]
        t = t.reshape((1,) * (p + len(b) - t.ndim) + tuple(t.shape) + (1,) * after)
        idx.append(t.expand(*shape).contiguous() if 0 not in shape else t)
    if 0 not in shape:
        lay = idx[0]._layout
        idx = [idx[0]] + [i if i._layout == lay else i.reshard(layout=lay) for i in idx[1:]]
    return shape, tuple(cmap), tuple(idx)


def _empty(src, shape):
    """The zeros of an empty result (kept in ``src``'s autograd graph, as torch's)."""
    out = apply("full", Layout().bind(shape, src._executor().num_workers), 0, src.dtype)
    if src.requires_grad:
        out = out + (src.reshape(-1)[:0] if src.numel() else src).sum()
    return out


def _probe(src, entries):
    """torch checks the indices of an empty result too: route them over a tensor of ones
    along the other dims (nothing to check when the indices are empty)."""
    if 0 in np.broadcast_shapes(*(tuple(e.shape) for e in entries if e is not None)):
        return
    one = tuple(n if e is not None else 1 for n, e in zip(src.shape, entries))
    for d, n in enumerate(one):
        if not n:
            raise IndexOutOfRange(f"index is out of bounds for dimension {d} with size 0")
    probe = apply("full", Layout().bind(one, src._executor().num_workers), 0, src.dtype)
    _, cmap, idx = _plan(probe, entries)
    apply("route_gather", probe, idx, cmap, wrap=True, op="index")


def routed_getitem(x, key, basic_view):
    """``x[key]`` for a :func:`routed_key` (``basic_view(x, basic)`` makes the view)."""
    basic, adv = _split(x, key)
    src = basic_view(x, basic)
    entries = _entries(src, adv)
    shape, cmap, idx = _plan(src, entries)
    if 0 in shape:
        _probe(src, entries)
        return _empty(src, shape)
    return apply("route_gather", src, idx, cmap, wrap=True, op="index")


def routed_setitem(x, key, value, basic_view):
    """``x[key] = value`` in place for a :func:`routed_key`; ``value`` a scalar, an array or a
    tensor broadcast to the indexed shape. Returns False where the routed path cannot write
    (``x[basic]`` an expanded view): the caller's path takes it."""
    basic, adv = _split(x, key)
    dst = basic_view(x, basic)
    if dst._readonly:
        return False
    entries = _entries(dst, adv)
    shape, cmap, idx = _plan(dst, entries)
    if isinstance(value, np.ndarray) and value.ndim:  # driver data: cast like a scalar
        value = as_tensor(value.astype(x.dtype.np, copy=False))
    if is_tensor(value):
        try:
            np.broadcast_shapes(tuple(value.shape), shape)
        except ValueError:
            raise ShapeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                f"broadcast to indexing result of shape {list(shape)}"
            ) from None
        # cast, as this library's x[key] = value always has (torch's index_put refuses
        # another dtype unless a mask is filled with a 0-d value)
        value = value.to(x.dtype)
    if 0 in shape:
        _probe(dst, entries)
        return True
    if is_tensor(value):
        if tuple(value.shape) != shape:
            value = value.expand(*shape).contiguous()
        if value._layout != idx[0]._layout:
            value = value.reshard(layout=idx[0]._layout)
    apply("route_scatter", dst, idx, cmap, value, wrap=True, op="index_put", target=dst)
    return True
