"""Worker kernels of the routed gather/scatter (:mod:`sharded.ops.index.prims.routing`):
bucketing an index block's points by the shard that owns them, picking the values there and
placing them back.

Each pass is a few vectorized NumPy calls per :data:`CHUNK` points (their temporaries stay
in cache) and the large outputs come from the worker's pool of freed blocks (``alloc``): on
a loaded host a fresh block's page faults cost more than the indexing itself.
"""

from __future__ import annotations

import numpy as np

from ....core.registry import kernel, pooled_empty

NBAD = 16  # distinct out-of-range values a block names to the driver (its message lists them)


def _bad(xp, flat, cmap, sizes, wrap):
    """``((distinct count, dim, [first distinct values in order of appearance]), wraps)``:
    the out-of-range indices of a block along the first dim that has any (``(0, 0, [])``:
    none) and the dims whose indices count from the end (some negative, with ``wrap``).
    ``flat``: the block's index tensors, flat. Two cheap passes (the extremes) decide most
    blocks."""
    wraps = set()
    for d, (kind, e) in enumerate(cmap):
        c = flat[e] if kind == "i" else None
        if c is None or not c.size:
            continue
        n, least = sizes[d], int(c.min())
        lo = -n if wrap else 0  # advanced indexing reads negative indices from the end
        if wrap and least < 0:
            wraps.add(d)
        if least >= lo and int(c.max()) < n:
            continue
        # distinct values as given: an index expanded over other dims (index_select) or
        # repeated counts once
        vals, first = xp.unique(c[(c < lo) | (c >= n)], return_index=True)
        vals = vals[xp.argsort(first)]
        return (len(vals), d, [int(v) for v in vals[:NBAD]]), wraps
    return (0, 0, []), wraps


def _coords(xp, flat, i0, i1, offs, shape, cmap, sizes, wraps):
    """Global coordinates (one integer array per dim of ``x``) of a block's points ``i0 ..
    i1`` in flat order (their indices all in range; those of the dims ``wraps`` counted
    from the end where negative)."""
    out = []
    for d, (kind, e) in enumerate(cmap):
        if kind == "p":  # the point's own position along dim e of the block
            f = xp.arange(i0, i1, dtype=np.int64) // int(np.prod(shape[e + 1 :], dtype=np.int64))
            out.append(f % shape[e] + offs[e])
            continue
        c = flat[e][i0:i1]  # (a view: no copy where nothing wraps)
        if d in wraps:
            c = c.astype(np.int64)
            c[c < 0] += sizes[d]
        out.append(c)
    return out


# the positions of a bucket holding every point of its block, in order (a real position is
# never negative): the block is then a copy of the picked values, no scatter
_ALL = np.full(1, -1, dtype=np.int64)
_FEW = 8  # owners up to which bucketing compresses once per owner instead of sorting
CHUNK = 1 << 16  # points per pass of route_split: its temporaries stay in cache


def _small_int(n):
    """The narrowest signed integer dtype holding ``0 .. n``."""
    return next(t for t in (np.int8, np.int16, np.int32, np.int64) if n <= np.iinfo(t).max)


def _chunk_of(xp, c, b, dtype):
    """The chunk of ``bounds`` ``b`` holding each coordinate ``c`` (all in range), as
    ``dtype``: a compare per inner bound when there are few (``searchsorted`` costs a binary
    search each)."""
    if len(b) - 2 > 2 * _FEW:
        ch = xp.searchsorted(xp.asarray(b), c, side="right") - 1
        return xp.minimum(ch, len(b) - 2).astype(dtype)
    ch = xp.zeros(c.shape, dtype=dtype)
    for bb in b[1:-1]:
        ch += c >= bb
    return ch


def _owners(xp, coords, bounds, cell, dt):
    """Per point, the index in the candidates (grid cells ``cell``, None: every cell in
    order) of the shard that owns it (``len(cell)``: none of them), as ``dt``."""
    grid = [len(b) - 1 for b in bounds]
    sid = xp.zeros(coords[0].shape, dtype=dt)
    for d in range(len(bounds)):
        if grid[d] > 1:  # (one chunk along d adds nothing to the cell number)
            sid *= grid[d]
            sid += _chunk_of(xp, coords[d], bounds[d], dt)
    if cell is None:
        return sid
    table = xp.full(int(np.prod(grid)), len(cell), dtype=dt)
    for j, s in enumerate(cell):
        table[s] = j
    return table[sid]


def _groups(xp, cid, m):
    """Per candidate ``j < m``, the ascending positions of ``cid == j``: a compare and a
    compress each for a few candidates, else one stable sort (of narrow keys: a radix
    sort)."""
    if m <= _FEW:
        return [xp.flatnonzero(cid == j) for j in range(m)]
    order = xp.argsort(cid, kind="stable")
    ends = np.cumsum([int(c) for c in xp.bincount(cid, minlength=m)[:m]])
    return [order[a:b] for a, b in zip([0, *ends[: m - 1]], ends[:m])]


def _pick(xp, a, loc, out=None):
    """Block ``a`` at the shard-local coordinates ``loc`` (one array per dim, all in
    range), into ``out`` where given."""
    if len(loc) == 1 and xp is np:
        # ``take`` skips fancy indexing's per-index checks; "clip" (the indices are checked)
        # does not buffer the output as "raise" does
        return np.take(a.reshape(-1), loc[0], out=out, mode="clip")
    got = a[loc]
    if out is not None:
        out[...] = got
    return got if out is None else out


@kernel(pooled=True)
def route_split(
    xp,
    *blocks,
    offs,
    shape,
    cmap,
    sizes,
    bounds,
    cands,
    nidx,
    wrap,
    own=(),
    fill=None,
    strict=False,
    alloc=None,
):
    """Bucket an index block's points by the candidate shard of ``x`` that owns them.

    ``blocks``: ``nidx`` index blocks, then (for a scatter) a values block, then (a gather)
    the shards of the candidates ``own`` (indices into ``cands``), which this worker holds.
    Outputs: a status array, ``[0, 0, 0, n_0, n_1, ...]`` or, with out-of-range indices,
    ``[distinct count, dim, v_0, v_1, ...]`` (the first :data:`NBAD` distinct bad values);
    with ``own``, a block of the result holding the values of their points, picked here
    (the rest is placed later); and, per candidate ``j`` (``cands[j]`` = its grid coords,
    or None for a replica), the shard-local coordinates ``(ndim, n_j)`` and either the flat
    positions (gather; :data:`_ALL` where the one owner takes every point, in order) or the
    values (scatter): both empty for the ``own`` ones.
    ``strict``: an out-of-range index raises here (the driver reads no status: a traced call).

    Two passes of :data:`CHUNK` points (owners, then buckets), so that no temporary is a
    block's size: the buckets and the result are the only large blocks, from the pool.
    """
    xs = blocks[len(blocks) - len(own) :]
    flat = [xp.asarray(b).reshape(-1) for b in blocks[: len(blocks) - len(own)]]
    n, nd, m = int(np.prod(shape, dtype=np.int64)), len(sizes), len(cands)
    small = np.int32 if max(list(sizes) + [n]) < 2**31 else np.int64  # half the bytes moved
    bad, wraps = _bad(xp, flat[:nidx], cmap, sizes, wrap)
    if bad[0] and strict:  # raised at the driver's next read, typed IndexError there
        raise IndexError(
            f"index {bad[2][0]} is out of bounds for dimension {bad[1]} with size {sizes[bad[1]]}"
        )
    if bad[0]:  # nothing moves: the driver raises before the next phase
        empty = [xp.empty((nd, 0), small), xp.empty(0, np.int64)] * m
        res = [xp.empty(0, xs[0].dtype)] if own else []
        return (xp.asarray([bad[0], bad[1], *bad[2]], dtype=np.int64), *res, *empty)
    v = flat[nidx] if len(flat) > nidx else None
    scatter = v is not None or fill is not None
    if fill is not None:
        v = xp.full(n, fill)
    one = m == 1 or cands[0] is None  # one owner, or replicas that all take every point
    cid, counts = None, [n] * m
    if not one:
        grid = [len(b) - 1 for b in bounds]
        cell = [int(np.ravel_multi_index(cc, grid)) for cc in cands]
        cell = None if cell == list(range(int(np.prod(grid)))) else cell
        # (fresh: a pooled block dropped here would leave the pool for good)
        cid = xp.empty(n, dtype=_small_int(max(int(np.prod(grid)), m)))
        counts = [0] * m
        for i0 in range(0, n, CHUNK):
            i1 = min(i0 + CHUNK, n)
            coords = _coords(xp, flat, i0, i1, offs, shape, cmap, sizes, wraps)
            cid[i0:i1] = _owners(xp, coords, bounds, cell, cid.dtype)
            if m <= _FEW:  # (a compare and a count per candidate: bincount is slower)
                counts = [k + int(xp.count_nonzero(cid[i0:i1] == j)) for j, k in enumerate(counts)]
            else:
                counts = [k + int(c) for k, c in zip(counts, xp.bincount(cid[i0:i1], minlength=m))]
    sizes_out = [0 if j in own else k for j, k in enumerate(counts)]
    lcs = [pooled_empty(xp, alloc, (nd, k), small) for k in sizes_out]
    if one and not own:
        rest = [v if scatter else xp.asarray(_ALL.copy())] * m  # (the values block itself: no copy)
    elif scatter:
        rest = [pooled_empty(xp, alloc, (k,), v.dtype) for k in sizes_out]
    else:  # positions stay on this worker: int64, as fancy assignment takes them
        rest = [pooled_empty(xp, alloc, (k,), np.int64) for k in sizes_out]
    res = pooled_empty(xp, alloc, tuple(shape), xs[0].dtype) if own else None
    base = [[0] * nd if cc is None else [bounds[d][cc[d]] for d in range(nd)] for cc in cands]
    cur = [0] * m
    for i0 in range(0, n, CHUNK):
        i1 = min(i0 + CHUNK, n)
        coords = _coords(xp, flat, i0, i1, offs, shape, cmap, sizes, wraps)
        sels = [None] * m if one else _groups(xp, cid[i0:i1], m)
        for j, sel in enumerate(sels):
            k = i1 - i0 if sel is None else int(sel.size)
            if not k:
                continue
            pts = [coords[d] if sel is None else coords[d].take(sel) for d in range(nd)]
            if j in own:  # this worker's shard: the values go straight into the result
                loc = tuple(pts[d] - base[j][d] for d in range(nd))
                dst = res.reshape(-1)[i0:i1]
                if sel is None:
                    _pick(xp, xs[own.index(j)], loc, out=dst)
                else:
                    dst[sel] = _pick(xp, xs[own.index(j)], loc)
                continue
            dst = slice(cur[j], cur[j] + k)
            for d in range(nd):
                xp.subtract(pts[d], base[j][d], out=lcs[j][d, dst], casting="unsafe")
            if sel is not None and scatter:
                rest[j][dst] = v[i0:i1].take(sel)
            elif sel is not None:
                xp.add(sel, i0, out=rest[j][dst])
            cur[j] += k
    status = xp.asarray([0, 0, 0] + counts, dtype=np.int64)
    return (status, *([res] if own else []), *[a for p in zip(lcs, rest) for a in p])


@kernel(pooled=True)
def route_pick(xp, a, lc, alloc=None):
    """The elements of block ``a`` at shard-local coordinates ``lc`` (one row per dim)."""
    out = pooled_empty(xp, alloc, (lc.shape[1],), a.dtype) if lc.shape[0] == 1 else None
    return _pick(xp, a, tuple(lc), out)


@kernel(pooled=True)
def route_place(xp, *pieces, shape, dtype, into=False, alloc=None):
    """A block of ``shape`` from ``(positions, values)`` pairs (positions :data:`_ALL`: the
    values are the whole block, in order); ``into``: written into the first piece, a block
    of the result that :func:`route_split` began (in place)."""
    out = pieces[0] if into else pooled_empty(xp, alloc, shape, dtype)
    flat = out.reshape(-1)
    for p, v in zip(pieces[int(into) :: 2], pieces[int(into) + 1 :: 2]):
        if p.shape == _ALL.shape and int(p[0]) < 0:
            flat[...] = v
        else:
            flat[p] = v
    return out
