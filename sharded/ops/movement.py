"""Moving data between layouts: aligning an operand to a target layout, and resharding.

:func:`align` tells, for every shard of a target layout, where the matching block of an operand
comes from: the operand's own shard on the same worker (no bytes move), a slice of a local
replicated copy, or pieces exported by other workers and assembled on the target worker
(worker to worker; the driver only plans). Broadcast dimensions of size 1 are read whole.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from ..layout import Layout
from .registry import Result, primitive


def region(lay, offs, shp, off: int):
    """The block of an operand (anything with ``shape``/``ndim``: a layout, an array) that a
    target block at ``offs``/``shp`` needs, its dims aligned right (broadcasting)."""
    return tuple((0, 1) if lay.shape[i] == 1 else (offs[i + off], offs[i + off] + shp[i + off])
                 for i in range(lay.ndim))


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
        return [("k", k, None) for k in keys], []
    off = out.ndim - lay.ndim
    dtype = t._dtype.np.str
    shards = lay.shards()
    args, plans = [], []
    for s, (w, offs, shp) in enumerate(out.shards()):
        need = region(lay, offs, shp, off)
        if lay.is_replicated and w in lay.workers:
            j = lay.workers.index(w)
            sl = tuple(slice(lo, hi) for lo, hi in need)
            args.append(("k", keys[j], _local_slices(sl, lay.shape)))
            continue
        pieces = lay.overlaps(need)
        rshape = tuple(hi - lo for lo, hi in need)
        if not pieces:
            args.append(("c", np.empty(rshape, dtype)))
            continue
        j, src, dst = pieces[0]
        if len(pieces) == 1 and shards[j][0] == w and all(
                d.stop - d.start == n for d, n in zip(dst, rshape)):
            args.append(("k", keys[j], _local_slices(src, shards[j][2])))
            continue
        args.append(None)
        plans.append((s, w, rshape, pieces))
    temps = []
    if plans:
        req = collections.defaultdict(list)
        for s, w, rshape, pieces in plans:
            for j, src, dst in pieces:
                if shards[j][0] != w:
                    req[shards[j][0]].append((keys[j], _local_slices(src, shards[j][2])))
                    ex.bytes_moved += math.prod(d.stop - d.start for d in dst) * t._dtype.itemsize
        handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
        for s, w, rshape, pieces in plans:
            pargs = [("k", keys[j], src) if shards[j][0] == w else
                     ("x", next(handles[shards[j][0]])) for j, src, _ in pieces]
            key = ex.new_key()
            ex.submit(w, "assemble", pargs, (key,),
                      {"shape": rshape, "dtype": dtype, "places": [d for _, _, d in pieces]},
                      label=("reshard", s))
            temps.append((w, key))
            args[s] = ("k", key, None)
    return args, temps


def free_temps(ex, temps) -> None:
    by_w = collections.defaultdict(list)
    for w, k in temps:
        by_w[w].append(k)
    for w, ks in by_w.items():
        ex.free(w, ks)


@primitive("reshard")
def reshard(ex, t, layout: Layout) -> Result:
    """A copy of ``t`` laid out as ``layout`` (a bound layout of the same shape).

    Blocks that already sit on the right worker are copied locally; the rest travel worker
    to worker and are assembled where they land.
    """
    args, temps = align(ex, t, layout)
    keys = []
    dtype = t._dtype.np.str
    for s, ((w, _, shp), a) in enumerate(zip(layout.shards(), args)):
        if a[0] == "k" and any(w == tw and a[1] == tk for tw, tk in temps):
            keys.append(a[1])  # assembled for us already: take it over instead of copying
            continue
        k = ex.new_key()
        ex.submit(w, "copy", (a,), (k,), {"dtype": dtype}, label=("reshard", s))
        keys.append(k)
    free_temps(ex, [(w, k) for w, k in temps if k not in keys])
    return Result(layout, t._dtype, tuple(keys))


@primitive("squeeze_dims")
def squeeze_dims(ex, t, dims) -> Result:
    """Drop size-1 dimensions ``dims`` that are not split (a local reshape on every shard)."""
    lay = t._layout
    dims = set(dims)
    keep = [d for d in range(lay.ndim) if d not in dims]
    out = Layout.from_bounds([lay.shape[d] for d in keep], [lay.bounds[d] for d in keep],
                             lay.workers, lay.is_replicated)
    keys = []
    for s, ((w, _, shp), k) in enumerate(zip(out.shards(), t._keys)):
        nk = ex.new_key()
        ex.submit(w, "reshape", (("k", k, None),), (nk,), {"shape": shp}, ("squeeze", s))
        keys.append(nk)
    return Result(out, t._dtype, tuple(keys))
