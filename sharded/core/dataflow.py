"""Dataflow pieces every planner shares: the operand record, aligning an operand to a target
layout, fetching regions, freeing temporaries, and the kernels that assemble moved blocks.

:func:`align` tells, for every shard of a target layout, where the matching block of an operand
comes from: the operand's own shard on the same worker (no bytes move), a slice of a local
replicated copy, or pieces exported by other workers and assembled on the target worker
(worker to worker; the driver only plans). Broadcast dimensions of size 1 are read whole.
Planners read operands through ``_layout``, ``_dtype`` and ``_keys``: tensors and
:class:`Operand` records both have them.
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np

from ..layout import Layout, split_sizes
from ..runtime.commands import Const, Key, Transfer
from .registry import kernel


class Operand:
    """Shards a planner made or reads: a bound layout, a dtype and one key per shard.

    Planners return Operands (dispatch wraps them into tensors) and build them for
    intermediate results that never become tensors.
    """

    __slots__ = ("_layout", "_dtype", "_keys")

    def __init__(self, layout: Layout, dtype, keys):
        self._layout, self._dtype, self._keys = layout, dtype, compact(keys)

    layout = property(lambda self: self._layout)
    dtype = property(lambda self: self._dtype)
    keys = property(lambda self: self._keys)

    def __iter__(self):  # ``layout, dtype, keys = op``
        return iter((self._layout, self._dtype, self._keys))

    def __repr__(self):
        return f"Operand({self._layout!r}, {self._dtype}, {len(self._keys)} keys)"


def compact(keys):
    """Shard keys as a ``range`` when they are consecutive (the usual case: one block of
    keys per tensor), else a tuple. A range lets one command name every shard and one
    message free them all."""
    if isinstance(keys, range):
        return keys
    keys = tuple(keys)
    if keys and type(keys[0]) is int:
        r = range(keys[0], keys[0] + len(keys))
        if keys == tuple(r):
            return r
    return keys


def new_operand(ex, layout: Layout, dtype) -> Operand:
    """An Operand with a fresh key for every shard of ``layout`` (to be filled by commands)."""
    return Operand(layout, dtype, ex.new_keys(len(layout.shards())))


def region(lay, offs, shp, off: int):
    """The block of an operand (anything with ``shape``/``ndim``: a layout, an array) that a
    target block at ``offs``/``shp`` needs, its dims aligned right (broadcasting)."""
    # a broadcast dim is read whole, unless the target block holds none of that dim
    return tuple(
        (0, min(1, shp[i + off]))
        if lay.shape[i] == 1
        else (offs[i + off], offs[i + off] + shp[i + off])
        for i in range(lay.ndim)
    )


def _local_slices(sl, shard_shape):
    """``None`` when ``sl`` covers the whole shard (saves a slicing step in the kernel)."""
    if all(s.start == 0 and s.stop == n for s, n in zip(sl, shard_shape)):
        return None
    return sl


def align(ex, t, out: Layout):
    """Per-shard arguments giving ``t``'s values over each block of ``out``.

    Returns ``(args, temps)``: ``args[s]`` is a command argument valid on the worker of shard
    ``s``; ``temps`` lists ``(worker, key)`` of assembled blocks to free after use.
    """
    lay, keys = t._layout, t._keys
    if lay is out or lay == out:
        return [Key(k, None) for k in keys], []
    off = out.ndim - lay.ndim
    return fetch_regions(ex, t, [(w, region(lay, offs, shp, off)) for w, offs, shp in out.shards()])


def fetch_regions(ex, t, wanted):
    """Like :func:`align` for an explicit list of ``(worker, region)`` wants (regions may
    overlap, e.g. every output shard of a matmul needing all of a weight)."""
    lay, keys = t._layout, t._keys
    dtype = t._dtype.np_str
    shards = lay.shards()
    args, plans = [], []
    for s, (w, need) in enumerate(wanted):
        if lay.is_replicated and w in lay.workers:
            j = lay.workers.index(w)
            sl = tuple(slice(lo, hi) for lo, hi in need)
            args.append(Key(keys[j], _local_slices(sl, lay.shape)))
            continue
        pieces = lay.overlaps(need)
        rshape = tuple(hi - lo for lo, hi in need)
        if not pieces:
            args.append(Const(np.empty(rshape, dtype)))
            continue
        j, src, dst = pieces[0]
        if (
            len(pieces) == 1
            and shards[j][0] == w
            and all(d.stop - d.start == n for d, n in zip(dst, rshape))
        ):
            args.append(Key(keys[j], _local_slices(src, shards[j][2])))
            continue
        args.append(None)
        plans.append((s, w, rshape, pieces))
    temps = []
    if plans:
        item = t._dtype.itemsize
        req = collections.defaultdict(list)
        for i, (s, w, rshape, pieces) in enumerate(plans):
            split = []
            for j, src, dst in pieces:
                if shards[j][0] == w:
                    split.append((j, src, dst))
                    continue
                for sub_src, sub_dst in _split_piece(src, dst, item, ex.transfer_bytes):
                    nbytes = math.prod(d.stop - d.start for d in sub_dst) * item
                    req[shards[j][0]].append(  # (naming its taker: it may post it)
                        (keys[j], _local_slices(sub_src, shards[j][2]), nbytes, w)
                    )
                    ex.bytes_moved += nbytes
                    split.append((j, sub_src, sub_dst))
            plans[i] = (s, w, rshape, split)
        handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
        for s, w, rshape, pieces in plans:
            pargs = [
                Key(keys[j], src) if shards[j][0] == w else Transfer(next(handles[shards[j][0]]))
                for j, src, _ in pieces
            ]
            key = ex.new_key()
            ex.submit(
                w,
                "assemble",
                pargs,
                (key,),
                {"shape": rshape, "dtype": dtype, "places": [d for _, _, d in pieces]},
                label=("reshard", s),
            )
            temps.append((w, key))
            args[s] = Key(key, None)
    return args, temps


def _split_piece(src, dst, itemsize, limit):
    """Cut a piece into sub-pieces of at most ``limit`` bytes (along its leading dims), so
    transfers stream through bounded buffers."""
    ext = [d.stop - d.start for d in dst]
    if math.prod(ext) * itemsize <= limit or not ext:
        return [(src, dst)]
    d = next(i for i, n in enumerate(ext) if n > 1)
    row = math.prod(ext[d + 1 :]) * itemsize
    step = max(1, limit // max(row, 1))
    out = []
    for a in range(0, ext[d], step):
        b = min(ext[d], a + step)
        s2 = src[:d] + (slice(src[d].start + a, src[d].start + b),) + src[d + 1 :]
        d2 = dst[:d] + (slice(dst[d].start + a, dst[d].start + b),) + dst[d + 1 :]
        out += _split_piece(s2, d2, itemsize, limit) if b - a == 1 and row > limit else [(s2, d2)]
    return out


def free_temps(ex, temps) -> None:
    """Free planner-internal blocks: ``temps`` lists ``(worker, key)`` pairs."""
    ex.free_pairs(temps)


# ------------------------------------------------------------------------------ kernels
@kernel
def copy(xp, a, dtype=None):
    """A fresh, writable array owned by the worker (incoming data may be read-only views)."""
    return xp.array(a, dtype=dtype, copy=True)


@kernel
def assemble(xp, *pieces, shape, dtype, places):
    """Build a block of ``shape`` from ``pieces``, piece ``i`` landing at ``places[i]``."""
    if len(pieces) == 1 and tuple(pieces[0].shape) == tuple(shape):
        return xp.array(pieces[0], dtype=dtype, copy=True)
    out = xp.empty(shape, dtype=dtype)
    for p, dst in zip(pieces, places):
        out[dst] = p
    return out


# ------------------------------------------------- shared by the view, joining and linalg planners
def reshard(ex, t, layout: Layout) -> Operand:
    """A copy of ``t`` (a tensor or an :class:`Operand`) laid out as ``layout`` (a bound layout
    of the same shape): the planner of the ``reshard`` primitive, for planners that move
    their own intermediate operands too.

    Blocks that already sit on the right worker are copied locally; the rest travel worker to
    worker and are assembled where they land.
    """
    args, temps = align(ex, t, layout)
    keys = []
    dtype = t._dtype.np_str
    for s, ((w, _, _), a) in enumerate(zip(layout.shards(), args)):
        if type(a) is Key and any(w == tw and a.key == tk for tw, tk in temps):
            keys.append(a.key)  # assembled for us already: take it over instead of copying
            continue
        k = ex.new_key()
        ex.submit(w, "copy", (a,), (k,), {"dtype": dtype}, label=("reshard", s))
        keys.append(k)
    free_temps(ex, [(w, k) for w, k in temps if k not in keys])
    return Operand(layout, t._dtype, keys)


def map_shards(ex, x, out: Layout, sources, kernel, params_of, label) -> Operand:
    """One ``kernel`` command per shard ``s`` of ``out``, reading shard ``sources[s]`` of
    ``x`` on the same worker (views, local copies: no byte moves); ``params_of(s, j, shape)``
    gives the command's parameters."""
    keys = []
    for s, (w, _, shp) in enumerate(out.shards()):
        j = sources[s]
        k = ex.new_key()
        ex.submit(w, kernel, (Key(x._keys[j], None),), (k,), params_of(s, j, shp), (label, s))
        keys.append(k)
    return Operand(out, x._dtype, keys)


def as_view(out, base, strides, offset):
    """Mark tensor ``out`` (just made by a view primitive from ``base``) a view of ``base``'s
    storage with torch's ``strides`` and storage ``offset``: it shares the base's version
    counter. Writes are refused where the view's own strides overlap in memory (a zero stride
    over a dim of size > 1), as torch: a view of an expanded view that does not overlap, such
    as one of its rows, is writable."""
    out._strides, out._offset = tuple(strides), offset
    out._base = base._base if base._base is not None else base
    out._vc = base._vc  # a view and its base share one version counter
    # a published snapshot's flag (a tuple naming it) passes to every view of it; otherwise
    # only a view whose own elements overlap in memory is read-only
    published = isinstance(base._readonly, tuple)
    out._readonly = (
        base._readonly if published else 0 in [s for s, n in zip(strides, out.shape) if n > 1]
    )
    return out


@kernel
def copy_all(xp, *arrays):
    """Owned copies of every argument (one output each)."""
    out = tuple(xp.array(a, copy=True) for a in arrays)
    return out[0] if len(out) == 1 else out


@kernel
def reshape(xp, a, shape):
    """``a`` with a new shape (a view where NumPy can make one): planners' re-blocking step."""
    return a.reshape(shape)


# ------------------------------------------------------------------ regions for products
def even_bounds(n: int, p: int) -> tuple:
    """Cut points of ``n`` into ``min(p, n)`` nearly equal chunks (``(0, 0)`` for ``n == 0``).

    Examples
    --------
    >>> even_bounds(7, 3)
    (0, 3, 5, 7)
    """
    if n == 0:
        return (0, 0)
    return tuple(itertools.accumulate(split_sizes(n, max(1, min(p, n))), initial=0))


def _size(reg) -> int:
    return math.prod(max(0, hi - lo) for lo, hi in reg)


def _whole_or(sl, shape):
    return None if all(s.start == 0 and s.stop == n for s, n in zip(sl, shape)) else sl


def gather_regions(ex, t, wanted):
    """Command arguments giving ``t``'s region ``wanted[i] = (worker, region)`` on that worker.

    Like :func:`fetch_regions`, but a region that is one remote piece travels as a direct
    handle (no assembly copy), and equal requests share one transfer (matmul panels and
    linear-algebra blocks read whole matrices many times). Returns ``(args, temps)``.
    """
    lay, keys = t._layout, t._keys
    dt = t._dtype.np_str
    item = t._dtype.itemsize
    shards = lay.shards()
    uniq = list(dict.fromkeys((w, tuple(tuple(r) for r in reg)) for w, reg in wanted))
    res, req, direct, multi = {}, collections.defaultdict(list), [], []
    for u in uniq:
        w, reg = u
        shape = tuple(hi - lo for lo, hi in reg)
        sl = tuple(slice(lo, hi) for lo, hi in reg)
        if _size(reg) == 0:
            res[u] = Const(np.empty(shape, dt))
        elif lay.is_replicated and w in lay.workers:
            res[u] = Key(keys[lay.workers.index(w)], _whole_or(sl, lay.shape))
        else:
            pieces = lay.overlaps(reg)
            if len(pieces) == 1 and _size(reg) == math.prod(d.stop - d.start for d in pieces[0][2]):
                j, src, _ = pieces[0]
                if shards[j][0] == w:
                    res[u] = Key(keys[j], _whole_or(src, shards[j][2]))
                    continue
                nbytes = _size(reg) * item
                if nbytes <= ex.transfer_bytes:  # (naming its taker: it may post it, .posts)
                    req[shards[j][0]].append((keys[j], _whole_or(src, shards[j][2]), nbytes, w))
                    direct.append((u, shards[j][0]))
                    ex.bytes_moved += nbytes
                    continue
            multi.append(u)
    temps = []
    if req:
        handles = {w: iter(h) for w, h in ex.export(req).items()}
        for u, src_w in direct:
            res[u] = Transfer(next(handles[src_w]))
    if multi:
        args, temps = fetch_regions(ex, t, [(w, list(reg)) for w, reg in multi])
        res.update(zip(multi, args))
    return [res[(w, tuple(tuple(r) for r in reg))] for w, reg in wanted], temps
