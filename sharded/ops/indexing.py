"""Advanced indexing: gathers and scatters of points across shards, and boolean masks.

The driver turns an advanced key into source coordinates with NumPy's own indexing rules (on
zero-stride index grids, so it costs memory of the result's size, not the tensor's), then
plans per (source shard, result shard) pair: the source worker extracts its points, the result
worker scatters them into place. Points that already sit on the result's worker never move.
A boolean mask aligned with the tensor's row split is applied shard-locally; only the counts
(one int per shard) travel to the driver to lay out the data-dependent result.
"""

from __future__ import annotations

import collections

import numpy as np

from ..layout import Layout, split_sizes
from .movement import align, free_temps
from ..core.dataflow import Operand as Result
from ..core.registry import primitive


def _locate(lay: Layout, coords):
    """Shard index and shard-local coordinates of every point (coords: one array per dim)."""
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


def row_layout(shape, num_workers: int) -> Layout:
    """The default layout of a new result: rows split evenly over the workers."""
    if not shape:
        return Layout().bind(shape, num_workers)
    k = max(1, min(num_workers, shape[0]))
    return Layout(dim=0, shards=k).bind(shape, num_workers)


@primitive("gather", kind="index")
def gather(ex, x, coords, shape) -> Result:
    """The elements of ``x`` at ``coords`` (one int array per dim, all of result ``shape``),
    as a new tensor split by rows over the workers."""
    lay = x._layout
    out = row_layout(shape, ex.num_workers)
    local = [c.reshape(-1) for c in coords]
    if not lay.is_replicated:
        src, local = _locate(lay, local)
    shards = lay.shards()
    dt = x._dtype.np.str
    plans = []  # per result shard: [(source shard, positions, local coords, source worker)]
    req = collections.defaultdict(list)
    for w, offs, shp in out.shards():
        lo, n = _flat_start(offs, shape), int(np.prod(shp))
        part = [c[lo:lo + n] for c in local]
        if not n:
            groups = []
        elif lay.is_replicated:  # read the replica on this worker (or the first one)
            groups = [(lay.workers.index(w) if w in lay.workers else 0, np.arange(n), part)]
        else:
            s_r = src[lo:lo + n]
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
        args = [("k", x._keys[j], lc) if sw == w else ("x", next(handles[sw]))
                for j, _, lc, sw in pieces]
        k = ex.new_key()
        ex.submit(w, "scatter_assemble", tuple(args), (k,),
                  {"shape": shp, "dtype": dt, "positions": [p[1] for p in pieces]},
                  ("getitem", r))
        keys.append(k)
    return Result(out, x._dtype, tuple(keys))


def _flat_start(offs, shape) -> int:
    """Flat C-order position of a row-split block's first element."""
    if not shape:
        return 0
    return int(offs[0]) * int(np.prod(shape[1:], dtype=np.int64))


@primitive("mask_select", kind="index")
def mask_select(ex, x, mask) -> Result:
    """``x[mask]`` for a bool tensor covering ``x``'s leading dims, ``x`` split on dim 0 only
    (the caller reshards otherwise). Shards select locally; the driver reads only counts."""
    lay = x._layout
    margs, temps = _mask_args(ex, mask, lay)
    keys, counts = [], []
    for s, ((w, _, _), a) in enumerate(zip(lay.shards(), margs)):
        k, c = ex.new_key(), ex.new_key()
        ex.submit(w, "mask_select", (("k", x._keys[s], None), a), (k,), None, ("getitem", s))
        ex.submit(w, "count", (a,), (c,), None, ("getitem", s))
        keys.append(k)
        counts.append((w, c))
    free_temps(ex, temps)
    n = [int(v) for v in ex.fetch([(w, c, None) for w, c in counts])]
    free_temps(ex, counts)
    rest = lay.shape[mask._layout.ndim:]
    if lay.is_replicated:  # every replica selected the same elements: count them once
        n = n[:1]
    shape = (sum(n),) + tuple(rest)
    bounds = [tuple(np.cumsum([0] + n).tolist())] + [(0, m) for m in rest]
    if lay.is_replicated:
        out = Layout.from_bounds(shape, [(0, m) for m in shape], lay.workers, replicated=True)
    else:
        out = Layout.from_bounds(shape, bounds, lay.workers)
    return Result(out, x._dtype, tuple(keys))


def _mask_args(ex, mask, lay: Layout):
    """The mask's block for every shard of ``lay``. An empty shard gets an empty mask: the
    aligned block of a size-1 mask dim is read whole (broadcasting), which would not match
    a shard holding none of that dim."""
    nd = mask._layout.ndim
    margs, temps = align(ex, mask, _lead_layout(lay, nd))
    if not lay.is_replicated:
        for s, (_, _, shp) in enumerate(lay.shards()):
            if 0 in shp[:nd]:
                margs[s] = ("c", np.zeros(shp[:nd], dtype=bool))
    return margs, temps


def _lead_layout(lay: Layout, nd: int) -> Layout:
    """``lay`` restricted to its first ``nd`` dims (where a leading-dims mask must live)."""
    return Layout.from_bounds(lay.shape[:nd], lay.bounds[:nd], lay.workers, lay.is_replicated)


@primitive("put_mask", kind="index")
def put_mask(ex, x, mask, value, target) -> Result:
    """``x[mask] = value`` in place, shard by shard (``value``: a scalar or 0-d tensor)."""
    lay = x._layout
    margs, temps = _mask_args(ex, mask, lay)
    if hasattr(value, "_layout"):
        vargs, vt = align(ex, value, lay)
        temps += vt
    else:
        vargs = [("c", value)] * len(margs)
    for s, ((w, _, _), a, v) in enumerate(zip(lay.shards(), margs, vargs)):
        ex.submit(w, "put_mask", (("k", x._keys[s], None), a, v), (x._keys[s],), None,
                  ("setitem", s), inplace=True)
    free_temps(ex, temps)
    return Result(lay, x._dtype, x._keys)


@primitive("put_points", kind="index")
def put_points(ex, x, coords, values, target) -> Result:
    """``x[coords] = values`` in place; ``values`` is a scalar or a driver array of the
    coordinates' shape (a ShardedTensor value is read first by the caller)."""
    lay = x._layout
    flat = [c.reshape(-1) for c in coords]
    vals = None if np.ndim(values) == 0 else np.broadcast_to(values, coords[0].shape).reshape(-1)
    if lay.is_replicated:
        targets = [(s, flat, slice(None)) for s in range(len(lay.workers))]
    else:
        src, local = _locate(lay, flat)
        targets = []
        for j in np.unique(src):
            sel = np.nonzero(src == j)[0]
            targets.append((int(j), [c[sel] for c in local], sel))
    for j, lc, sel in targets:
        v = values if vals is None else vals[sel]
        w = lay.workers[j] if lay.is_replicated else lay.shards()[j][0]
        ex.submit(w, "put_points", (("k", x._keys[j], None), ("c", v)), (x._keys[j],),
                  {"coords": [tuple(lc)]}, ("setitem", j), inplace=True)
    return Result(lay, x._dtype, x._keys)


__all__ = ["gather", "mask_select", "put_mask", "put_points", "row_layout", "split_sizes"]
