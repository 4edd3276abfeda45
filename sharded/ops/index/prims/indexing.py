"""``x[key]`` and ``x[key] = value`` with torch's semantics: basic keys (views), advanced
keys (gathers and scatters of points across shards) and boolean masks.

A key is read as torch reads it (:func:`split_key`): its basic part (ints, 0-d integer tensors,
slices with steps, ``None``, ``...``) applies first and gives a view that shares storage (the
``index_basic`` view primitive in :mod:`sharded.ops.shape.prims.views`); an advanced part
(integer lists/arrays/tensors, boolean masks, bools) then gives a copy: the driver works out the
source coordinates with NumPy's rules on zero-stride index grids of the view (at a memory cost
of the result's size, not the tensor's), then plans per (source shard, result shard) pair: the
source worker extracts its points, the result worker scatters them into place; points that
already sit on the result's worker never move (lists and arrays: driver data). Keys holding
integer or boolean *tensors* route their index values worker to worker instead
(:mod:`sharded.ops.index.prims.advanced`): the driver never reads them. A boolean tensor mask
over the leading dims of a tensor selects shard-locally (:mod:`sharded.ops.index.prims.masking`).
Out-of-range indices raise :class:`~sharded.errors.IndexOutOfRange` naming the index, the dim
and its size, before anything is changed.
"""

from __future__ import annotations

import collections
import numbers

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, as_view
from ....core.dispatch import apply, as_tensor, is_tensor
from ....core.registry import bind, kernel, primitive, vjp
from ....errors import ArgumentError, IndexOutOfRange
from ....layout import Layout
from ....runtime.commands import Const, Key, Transfer
from ....tensor import check_not_published
from .advanced import routed_getitem, routed_key, routed_setitem


# ------------------------------------------------------------------------ keys
def _is_int(k) -> bool:
    return isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_))


def basic_entries(shape, key):
    """The normalised entries of a basic key (what ``index_basic`` takes), or None if any
    part of ``key`` is advanced: ``("int", i)``, ``("slice", start, stop, step)`` (one per
    indexed dim, values normalised by ``slice.indices``) and ``("new",)`` for ``None``.

    Examples
    --------
    >>> basic_entries((4, 5), (-1, None))
    [('int', 3), ('new',), ('slice', 0, 5, 1)]
    >>> basic_entries((4, 5), [0, 1]) is None
    True
    """
    if not isinstance(key, tuple):
        key = (key,)
    if any(not (_is_int(k) or isinstance(k, slice) or k is None or k is Ellipsis) for k in key):
        return None
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    ndim = len(shape)
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexOutOfRange(f"too many indices for tensor of dimension {ndim} (got {used})")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (ndim - used) + key[i + 1 :]
    else:
        key = key + (slice(None),) * (ndim - used)
    out, d = [], 0
    for k in key:
        if k is None:
            out.append(("new",))
            continue
        n = shape[d]
        if _is_int(k):
            i = int(k)
            if not -n <= i < n:
                raise IndexOutOfRange(f"index {i} is out of bounds for dimension {d} with size {n}")
            out.append(("int", i % n))
        else:
            if k.step == 0:
                raise ArgumentError("slice step cannot be zero")
            out.append(("slice",) + k.indices(n))
        d += 1
    return out


def index_strides(shape, strides, offset, entries):
    """torch's strides and storage offset of ``x[key]``: entries apply left to right to an
    intermediate result, an int selects, a slice steps, and ``None`` unsqueezes there (its
    stride is ``size * stride`` of the dim it lands before, 1 at the end).

    Examples
    --------
    >>> index_strides((4, 5), (5, 1), 0, [("int", 1), ("slice", 0, 5, 2)])
    ([2], 5)
    """
    sizes, strides = list(shape), list(strides)
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
    if is_tensor(k):
        a = k.numpy()
        # torch reads a uint8 tensor index as a mask (deprecated there, but still its meaning)
        return a.astype(bool) if a.dtype == np.uint8 else a
    if isinstance(k, (list, tuple)):
        a = np.asarray([v.numpy() if is_tensor(v) else v for v in k])
        # ``x[[]]`` selects nothing (NumPy and torch), though ``asarray([])`` is float
        return a.astype(np.int64) if a.size == 0 and a.dtype.kind == "f" else a
    return np.asarray(k)


def split_key(key):
    """torch's reading of ``key`` as ``(basic, advanced)``: ``x[key]`` is
    ``x[basic][advanced]``, ``advanced`` None when the key is basic (a view).

    torch applies ints (and 0-d integer tensors) as selections and ``None`` as new dims
    *before* the advanced indices, so an int never joins the advanced indices as in NumPy:
    ``a[0, :, [0]]`` is ``a[0][:, [0]]``. A bool (or 0-d bool/uint8 tensor) is a new dim
    indexed by ``[0]`` (True) or ``[]`` (False). ``advanced`` indexes ``x[basic]``: ints are
    gone from it, and every dim that ``basic`` kept or made is a full slice.

    Examples
    --------
    >>> split_key((0, slice(1, None), [0]))
    ((0, slice(1, None, None), slice(None, None, None)), (slice(None, None, None), array([0])))
    >>> split_key((True, 2))
    ((None, 2), (array([0]),))
    """
    if not isinstance(key, tuple):
        key = (key,)
    basic, adv, advanced = [], [], False
    for k in key:
        if (is_tensor(k) or isinstance(k, np.ndarray)) and k.ndim == 0:
            dt = np.dtype(k.dtype.np if is_tensor(k) else k.dtype)
            if dt.kind in "iub":  # read the one index element on the driver
                # torch reads a 0-d uint8 tensor as a bool (a mask), other integers as ints
                k = bool(k.item()) if dt.kind == "b" or dt == np.uint8 else int(k.item())
        full = slice(None)
        if _is_int(k):
            basic.append(int(k))
        elif isinstance(k, (bool, np.bool_)):
            basic.append(None)
            adv.append(np.arange(1 if k else 0))
            advanced = True
        elif k is None or isinstance(k, slice):
            basic.append(k)
            adv.append(full)
        elif k is Ellipsis:
            basic.append(k)
            adv.append(k)
        else:
            a = _to_numpy_key(k)
            if a.dtype.kind not in "iub":
                raise IndexOutOfRange(
                    f"tensors used as indices must be long, int, byte or bool tensors, "
                    f"got {a.dtype} index {k!r}"
                )
            basic.extend([full] * (a.ndim if a.dtype == bool else 1))
            adv.append(a)
            advanced = True
    return tuple(basic), (tuple(adv) if advanced else None)


def coords_of(shape, key):
    """Source coordinates (one int array per dim) of an advanced key without ints (what
    :func:`split_key` makes), by NumPy's rules, which are torch's for such keys.

    Examples
    --------
    >>> [c.tolist() for c in coords_of((3, 4), ([0, 2], [3]))]
    [[0, 2], [3, 3]]
    """
    if not isinstance(key, tuple):
        key = (key,)
    key = tuple(_to_numpy_key(k) if isinstance(k, list) or is_tensor(k) else k for k in key)
    shape = tuple(shape)
    grids = []
    for d, n in enumerate(shape):
        g = np.arange(n).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
        grids.append(np.broadcast_to(g, shape))
    try:
        return [g[key] for g in grids]
    except IndexError as e:
        raise IndexOutOfRange(f"{e} (tensor shape {list(shape)})") from None


def _mask_of(x, key):
    """The bool tensor mask of ``x[mask]``, if the shard-local mask path applies."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if (
        is_tensor(key)
        and key.dtype.name == "bool"
        and 0 < key.ndim <= x.ndim
        and tuple(key.shape) == tuple(x.shape[: key.ndim])
    ):
        return key
    return None


def _basic(x, basic, always=True):
    """``x[basic]`` as a view (``x`` itself for an all-``:`` key unless ``always``)."""
    entries = basic_entries(x.shape, basic)  # checks the key even when it changes nothing
    if not always and all(e[0] == "slice" and e[1:] == (0, n, 1) for e, n in zip(entries, x.shape)):
        if len(entries) == x.ndim:  # every entry a full slice (no int, no new dim)
            return x
    strides, offset = index_strides(x.shape, x.stride(), x.storage_offset(), entries)
    return as_view(apply("index_basic", x, entries), x, strides, offset)


def _strip_ones(value):
    """``value`` without its leading size-1 dims: torch drops them before broadcasting a
    value into ``x[key]`` (``x[1:] = ones(1, 2)`` writes two elements)."""
    shape = value.shape if is_tensor(value) or isinstance(value, np.ndarray) else ()
    k = next((i for i, n in enumerate(shape) if n != 1), len(shape))
    if not k:
        return value
    return value[(0,) * k] if is_tensor(value) else value.reshape(shape[k:])


# ------------------------------------------------------------------ getitem and setitem
@bind("__getitem__")
def getitem(x, key):
    """``x[key]`` with torch's rules: a view for basic keys (ints, 0-d integer tensors,
    slices, ``None``, ``...``), a gathered copy for advanced ones (lists, arrays, tensors,
    masks, bools).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(12, shards=3).view(3, 4)
    >>> x[1:, ::2].tolist(), x[[0, 2], -1].tolist(), x[x > 9].tolist()
    ([[4, 6], [8, 10]], [3, 11], [10, 11])
    >>> x[0, :, None][[1, 3]].shape, x.view(1, 3, 4)[0, :, [0]].shape
    (sharded.Size([2, 1]), sharded.Size([3, 1]))
    """
    mask = _mask_of(x, key)
    if mask is not None:
        lay = x.layout  # selects shard-locally when only dim 0 is split
        src = x if lay.is_replicated or all(g == 1 for g in lay.grid[1:]) else x.reshard(dim=0)
        return apply("mask_select", src, mask)
    if routed_key(key):  # index tensors stay on the workers
        return routed_getitem(x, key, lambda t, b: _basic(t, b, always=False))
    basic, adv = split_key(key)
    if adv is None:
        return _basic(x, basic)
    src = _basic(x, basic, always=False)
    coords = coords_of(src.shape, adv)
    return apply("gather", src, coords, coords[0].shape)


@bind("__setitem__")
def setitem(x, key, value):
    """``x[key] = value`` in place (scalars, NumPy arrays, tensors; broadcasting after
    dropping the value's leading size-1 dims, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(4)
    >>> x[1:3] = 5; x[[0]] = -1; x[x > 4] = 2; x[3:] = st.ones(1, 1)
    >>> x.tolist()
    [-1.0, 2.0, 2.0, 1.0]
    """
    check_not_published(x)  # a published snapshot (or a view of one) is never written
    value = _strip_ones(D.check_int(value, x.dtype))
    if isinstance(value, (list, tuple)):
        try:
            value = _strip_ones(np.asarray(value, dtype=x.dtype.np))
        except OverflowError as e:
            raise ArgumentError(f"value {value!r} does not fit {x.dtype.name}: {e}") from None
    mask = _mask_of(x, key)
    lay = x.layout
    scalar = not (is_tensor(value) or isinstance(value, np.ndarray)) or value.ndim == 0
    if (
        mask is not None
        and scalar
        and not x._readonly
        and (mask.ndim == x.ndim or lay.is_replicated or all(g == 1 for g in lay.grid[mask.ndim :]))
    ):
        if is_tensor(value):
            value = value.to(x.dtype)
        apply("put_mask", x, mask, value, target=x)
        return
    if routed_key(key) and routed_setitem(x, key, value, lambda t, b: _basic(t, b, always=False)):
        return
    basic, adv = split_key(key)
    if adv is None:
        _basic(x, basic).copy_(value)
        return
    dst = _basic(x, basic, always=False)
    coords = coords_of(dst.shape, adv)
    if dst._readonly:  # torch writes points of an expanded view into the memory they share
        rep = [s == 0 and n > 1 for s, n in zip(dst.stride(), dst.shape)]
        dst = dst[tuple(slice(0, 1) if r else slice(None) for r in rep)]
        coords = [np.zeros_like(c) if r else c for c, r in zip(coords, rep)]
    if is_tensor(value) and value.requires_grad and dst is x and not x._readonly:
        # torch's value.grad is the sum of the written points' grads: route the points as
        # index tensors (index_put's differentiable path) instead of reading the value
        pts = tuple(as_tensor(np.ascontiguousarray(c, dtype=np.int64)) for c in coords)
        x.index_put_(pts, value.to(x.dtype))
        return
    if is_tensor(value):
        value = value.detach().numpy()  # advanced assignment reads a tensor value on the driver
    value = np.asarray(value, dtype=x.dtype.np) if not np.isscalar(value) else value
    if np.ndim(value):
        try:
            np.broadcast_to(value, coords[0].shape)
        except ValueError:
            raise ArgumentError(
                f"shape mismatch: value of shape {np.shape(value)} cannot be "
                f"broadcast to indexing result of shape "
                f"{coords[0].shape}"
            ) from None
    apply("put_points", dst, coords, value, target=dst)


# ------------------------------------------------------------------ points across shards
def locate(lay: Layout, coords):
    """Shard index and shard-local coordinates of every point (coords: one array per dim).

    Examples
    --------
    >>> lay = Layout(dim=0, shards=2).bind((4,), 2)
    >>> [a.tolist() for a in (locate(lay, [np.array([0, 3])])[0],) + tuple(
    ...     locate(lay, [np.array([0, 3])])[1])]
    [[0, 1], [0, 1]]
    """
    shard = np.zeros(coords[0].shape, dtype=np.int64)
    local = []
    for d, c in enumerate(coords):
        b = np.asarray(lay.bounds[d])
        chunk = np.searchsorted(b, c, side="right") - 1
        chunk = np.minimum(chunk, len(b) - 2)
        # skip empty chunks: searchsorted lands on the last chunk starting at or before c
        shard = shard * (len(b) - 1) + chunk
        local.append(c - b[chunk])
    return shard, local


def _flat_start(offs, shape) -> int:
    """Flat C-order position of a row-split block's first element."""
    if not shape:
        return 0
    return int(offs[0]) * int(np.prod(shape[1:], dtype=np.int64))


def row_layout(shape, num_workers: int, slots: int | None = None) -> Layout:
    """The default layout of a new result: rows split evenly into one shard per kernel thread
    (``slots``, default one per worker), dealt round robin over the workers.

    Examples
    --------
    >>> row_layout((5, 2), 2).bounds
    ((0, 3, 5), (0, 2))
    >>> row_layout((5, 2), 1, slots=2).workers
    (0, 0)
    """
    if not shape:
        return Layout().bind(shape, num_workers)
    k = max(1, min(slots or num_workers, shape[0]))
    return Layout(dim=0, shards=k).bind(shape, num_workers)


@kernel
def gather(xp, *pieces, shape, dtype, positions):
    """Build a block from 1-D value pieces: piece ``i`` lands at flat ``positions[i]``."""
    out = xp.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    for p, pos in zip(pieces, positions):
        flat[pos] = p.reshape(-1)
    return out


@primitive("gather", kernels=[gather], kind="index")
def _gather_plan(ex, x, coords, shape) -> Operand:
    """The elements of ``x`` at ``coords`` (one int array per dim, all of result ``shape``),
    as a new tensor split by rows over the workers."""
    lay = x._layout
    out = row_layout(shape, ex.num_workers, ex.num_slots)
    local = [c.reshape(-1) for c in coords]
    if not lay.is_replicated:
        src, local = locate(lay, local)
    shards = lay.shards()
    dt = x._dtype.np_str
    plans = []  # per result shard: [(source shard, positions, local coords, source worker)]
    req = collections.defaultdict(list)
    for w, offs, shp in out.shards():
        lo, n = _flat_start(offs, shape), int(np.prod(shp))
        part = [c[lo : lo + n] for c in local]
        if not n:
            groups = []
        elif lay.is_replicated:  # read the replica on this worker (or the first one)
            groups = [(lay.workers.index(w) if w in lay.workers else 0, np.arange(n), part)]
        else:
            s_r = src[lo : lo + n]
            groups = []
            for j in np.unique(s_r):
                sel = np.nonzero(s_r == j)[0]
                groups.append((int(j), sel, [c[sel] for c in part]))
        pieces = []
        for j, sel, lc in groups:
            sw = shards[j][0]
            pieces.append((j, sel, tuple(lc), sw))
            if sw != w:
                req[sw].append((x._keys[j], tuple(lc)))
                ex.bytes_moved += len(sel) * x._dtype.itemsize
        plans.append(pieces)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    keys = []
    for r, ((w, _, shp), pieces) in enumerate(zip(out.shards(), plans)):
        args = [
            Key(x._keys[j], lc) if sw == w else Transfer(next(handles[sw]))
            for j, _, lc, sw in pieces
        ]
        k = ex.new_key()
        ex.submit(
            w,
            "gather",
            tuple(args),
            (k,),
            {"shape": shp, "dtype": dt, "positions": [p[1] for p in pieces]},
            ("gather", r),
        )
        keys.append(k)
    return Operand(out, x._dtype, keys)


@vjp("gather")
def _gather_vjp(gs, node):
    x, coords, _ = node.args
    z = apply("full", x._layout, 0, gs[0].dtype)  # zeros like x, in the gradient's dtype
    apply("scatter_add", z, coords, gs[0], target=z)  # repeated indices accumulate
    return (z, None, None)


@kernel
def scatter_add(xp, a, *values, coords):
    """Add ``values[i]`` at points ``coords[i]`` of ``a`` in place (repeats accumulate)."""
    for v, c in zip(values, coords):
        if xp is np:
            np.add.at(a, c, v)
        else:  # CuPy's scatter_add is the same operation
            xp.add.at(a, c, v) if hasattr(xp.add, "at") else xp.scatter_add(a, c, v)
    return a


@primitive("scatter_add", kernels=[scatter_add], kind="index")
def _scatter_add_plan(ex, x, coords, values, target) -> Operand:
    """Add ``values`` (a tensor of the coordinates' shape, split by rows as ``gather`` makes
    it) into ``x`` at ``coords`` in place; repeated coordinates accumulate. The inverse of a
    gather: each block of ``values`` sends every shard of ``x`` the points it owns."""
    lay, vlay = x._layout, values._layout
    flat = [c.reshape(-1) for c in coords]
    if lay.is_replicated:
        src, local = np.zeros(flat[0].shape, np.int64), flat
    else:
        src, local = locate(lay, flat)
    gshape = tuple(vlay.shape)
    req, plan = collections.defaultdict(list), []
    for r, (vw, offs, shp) in enumerate(vlay.shards()):
        lo, n = _flat_start(offs, gshape), int(np.prod(shp))
        s_r = src[lo : lo + n]
        for j in np.unique(s_r):
            sel = np.nonzero(s_r == j)[0]
            lc = tuple(c[lo : lo + n][sel] for c in local)
            pick = np.unravel_index(sel, shp)  # the points, in the values block's coords
            for jj in range(len(lay.workers)) if lay.is_replicated else [int(j)]:
                w = lay.shards()[jj][0]
                if w == vw:
                    plan.append((jj, w, Key(values._keys[r], pick), lc))
                else:
                    req[vw].append((values._keys[r], pick))
                    ex.bytes_moved += len(sel) * values._dtype.itemsize
                    plan.append((jj, w, vw, lc))
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    for jj, w, arg, lc in plan:
        a = arg if isinstance(arg, tuple) else Transfer(next(handles[arg]))
        ex.submit(
            w,
            "scatter_add",
            (Key(x._keys[jj], None), a),
            (x._keys[jj],),
            {"coords": [lc]},
            ("scatter_add", jj),
            inplace=True,
        )
    return Operand(lay, x._dtype, x._keys)


@vjp("scatter_add")
def _scatter_add_vjp(gs, node):  # x + scatter(values): values' gradient is gathered back
    _, coords, values = node.args
    return (gs[0], None, apply("gather", gs[0], coords, tuple(values.shape)))


@kernel
def put_points(xp, a, *values, coords):
    """``a`` with points ``coords[i]`` set to ``values[i]`` (later pieces win on repeats)."""
    for v, c in zip(values, coords):
        a[c] = v
    return a


@primitive("put_points", kernels=[put_points], kind="index")
def _put_points_plan(ex, x, coords, values, target) -> Operand:
    """``x[coords] = values`` in place; ``values`` is a scalar or a driver array of the
    coordinates' shape (a tensor value is read first by the caller)."""
    lay = x._layout
    flat = [c.reshape(-1) for c in coords]
    vals = None if np.ndim(values) == 0 else np.broadcast_to(values, coords[0].shape).reshape(-1)
    if lay.is_replicated:
        targets = [(s, flat, slice(None)) for s in range(len(lay.workers))]
    else:
        src, local = locate(lay, flat)
        targets = []
        for j in np.unique(src):
            sel = np.nonzero(src == j)[0]
            targets.append((int(j), [c[sel] for c in local], sel))
    for j, lc, sel in targets:
        v = values if vals is None else vals[sel]
        w = lay.workers[j] if lay.is_replicated else lay.shards()[j][0]
        ex.submit(
            w,
            "put_points",
            (Key(x._keys[j], None), Const(v)),
            (x._keys[j],),
            {"coords": [tuple(lc)]},
            ("put_points", j),
            inplace=True,
        )
    return Operand(lay, x._dtype, x._keys)


@vjp("put_points")
def _put_points_vjp(gs, node):  # overwritten points get no gradient; values are driver data
    _, coords, _ = node.args
    g = gs[0].clone()
    apply("put_points", g, coords, 0, target=g)
    return (g, None, None)
