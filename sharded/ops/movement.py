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
    # a broadcast dim is read whole, unless the target block holds none of that dim
    return tuple((0, min(1, shp[i + off])) if lay.shape[i] == 1 else
                 (offs[i + off], offs[i + off] + shp[i + off]) for i in range(lay.ndim))


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
    return fetch_regions(ex, t, [(w, region(lay, offs, shp, off))
                                 for w, offs, shp in out.shards()])


def fetch_regions(ex, t, wanted):
    """Like :func:`align` for an explicit list of ``(worker, region)`` wants (regions may
    overlap, e.g. every output shard of a matmul needing all of a weight)."""
    lay, keys = t._layout, t._keys
    dtype = t._dtype.np.str
    shards = lay.shards()
    args, plans = [], []
    for s, (w, need) in enumerate(wanted):
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
                    req[shards[j][0]].append((keys[j], _local_slices(sub_src, shards[j][2]),
                                              nbytes))
                    ex.bytes_moved += nbytes
                    split.append((j, sub_src, sub_dst))
            plans[i] = (s, w, rshape, split)
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


def _split_piece(src, dst, itemsize, limit):
    """Cut a piece into sub-pieces of at most ``limit`` bytes (along its leading dims), so
    transfers stream through bounded buffers."""
    ext = [d.stop - d.start for d in dst]
    if math.prod(ext) * itemsize <= limit or not ext:
        return [(src, dst)]
    d = next(i for i, n in enumerate(ext) if n > 1)
    row = math.prod(ext[d + 1:]) * itemsize
    step = max(1, limit // max(row, 1))
    out = []
    for a in range(0, ext[d], step):
        b = min(ext[d], a + step)
        s2 = src[:d] + (slice(src[d].start + a, src[d].start + b),) + src[d + 1:]
        d2 = dst[:d] + (slice(dst[d].start + a, dst[d].start + b),) + dst[d + 1:]
        out += _split_piece(s2, d2, itemsize, limit) if b - a == 1 and row > limit else [(s2, d2)]
    return out


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


@primitive("cat")
def cat(ex, *ts, dim) -> Result:
    """Concatenate along ``dim``. If any input is split along ``dim``, the result's chunks are
    the inputs' chunks in order (each copied where it lives, unsplit inputs as one chunk).
    If none is, the first input's layout, every shard the concatenation of the inputs'
    matching blocks."""
    import itertools
    first = ts[0]._layout
    d = dim
    sizes = [t._layout.shape[d] for t in ts]
    shape = list(first.shape)
    shape[d] = sum(sizes)
    dtype = ts[0]._dtype
    keys = []
    if all(t._layout.is_replicated or t._layout.grid[d] == 1 for t in ts):
        bounds = list(first.bounds)
        bounds[d] = (0, shape[d])
        out = Layout.from_bounds(shape, bounds, first.workers, first.is_replicated)
        per, temps = [], []
        for t, n in zip(ts, sizes):
            b = list(first.bounds)
            b[d] = (0, n)
            a, tt = align(ex, t, Layout.from_bounds(
                [n if k == d else s for k, s in enumerate(first.shape)], b, first.workers,
                first.is_replicated))
            per.append(a)
            temps += tt
        for s, (w, _, _) in enumerate(out.shards()):
            k = ex.new_key()
            ex.submit(w, "concat", tuple(a[s] for a in per), (k,), {"axis": d}, ("cat", s))
            keys.append(k)
        free_temps(ex, temps)
        return Result(out, dtype, tuple(keys))
    aligned, chunk_bounds, start = [], [0], 0
    for t, n in zip(ts, sizes):
        lay = t._layout
        b = list(first.bounds)
        b[d] = lay.bounds[d] if not lay.is_replicated else (0, n)
        grid = [len(x) - 1 for x in b]
        cnt = 1
        for g in grid:
            cnt *= g
        tshape = [n if k == d else s for k, s in enumerate(first.shape)]
        same = (not lay.is_replicated and tuple(tuple(x) for x in b) == lay.bounds)
        ws = lay.workers if same else [(i + start) % ex.num_workers for i in range(cnt)]
        target = Layout.from_bounds(tshape, b, ws)
        args, temps = align(ex, t, target)
        aligned.append((target, args, temps))
        for v in target.chunk_sizes(d):
            chunk_bounds.append(chunk_bounds[-1] + v)
        start += grid[d]
    bounds = list(first.bounds)
    bounds[d] = tuple(chunk_bounds)
    owner = [(i, k) for i, (tg, _, _) in enumerate(aligned) for k in range(tg.grid[d])]
    grid = [len(x) - 1 for x in bounds]
    workers, srcs = [], []
    for c in itertools.product(*(range(g) for g in grid)):
        i, k = owner[c[d]]
        tg, args, _ = aligned[i]
        j = tg.index(c[:d] + (k,) + c[d + 1:])
        workers.append(tg.workers[j])
        srcs.append(args[j])
    out = Layout.from_bounds(shape, bounds, workers)
    for s, (w, a) in enumerate(zip(workers, srcs)):
        k = ex.new_key()
        ex.submit(w, "copy", (a,), (k,), None, ("cat", s))
        keys.append(k)
    for _, _, temps in aligned:
        free_temps(ex, temps)
    return Result(out, dtype, tuple(keys))


@primitive("scatter_add")
def scatter_add(ex, x, coords, values, target) -> Result:
    """Add ``values`` (a tensor of the coordinates' shape, split by rows as ``gather`` makes
    it) into ``x`` at ``coords`` in place; repeated coordinates accumulate. The inverse of a
    gather: each block of ``values`` sends every shard of ``x`` the points it owns."""
    from .indexing import _flat_start, _locate
    lay, vlay = x._layout, values._layout
    flat = [c.reshape(-1) for c in coords]
    if lay.is_replicated:
        src, local = np.zeros(flat[0].shape, np.int64), flat
    else:
        src, local = _locate(lay, flat)
    gshape = tuple(vlay.shape)
    req, plan = collections.defaultdict(list), []
    for r, (vw, offs, shp) in enumerate(vlay.shards()):
        lo, n = _flat_start(offs, gshape), int(np.prod(shp))
        s_r = src[lo:lo + n]
        for j in np.unique(s_r):
            sel = np.nonzero(s_r == j)[0]
            lc = tuple(c[lo:lo + n][sel] for c in local)
            pick = np.unravel_index(sel, shp)  # the points, in the values block's coords
            for jj in (range(len(lay.workers)) if lay.is_replicated else [int(j)]):
                w = lay.shards()[jj][0]
                if w == vw:
                    plan.append((jj, w, ("k", values._keys[r], pick), lc))
                else:
                    req[vw].append((values._keys[r], pick))
                    ex.bytes_moved += len(sel) * values._dtype.itemsize
                    plan.append((jj, w, vw, lc))
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    for jj, w, arg, lc in plan:
        a = arg if isinstance(arg, tuple) else ("x", next(handles[arg]))
        ex.submit(w, "add_points", (("k", x._keys[jj], None), a), (x._keys[jj],),
                  {"coords": [lc]}, ("scatter_add", jj), inplace=True)
    return Result(lay, x._dtype, x._keys)


@primitive("mask_scatter")
def mask_scatter(ex, x, mask, values, target) -> Result:
    """``x[mask] = values`` in place where ``values`` is the result of ``x[mask]`` on the same
    layout (one block per shard, on the same worker): the inverse of a mask selection."""
    lay = x._layout
    nd = mask._layout.ndim
    lead = Layout.from_bounds(lay.shape[:nd], lay.bounds[:nd], lay.workers, lay.is_replicated)
    margs, temps = align(ex, mask, lead)
    for s, ((w, _, _), a) in enumerate(zip(lay.shards(), margs)):
        ex.submit(w, "put_mask", (("k", x._keys[s], None), a, ("k", values._keys[s], None)),
                  (x._keys[s],), None, ("mask_scatter", s), inplace=True)
    free_temps(ex, temps)
    return Result(lay, x._dtype, x._keys)
