"""The routing shared by the set ops: the sample-sort exchange of unique values or rows, the
ids routed back to their source shards, and the small layout moves around them.

:func:`sample_exchange` runs the pipeline of ``unique`` (:mod:`.flat`, 1-d values) and of
``unique(dim=)`` (:mod:`.rows`, slices along a dim): each shard finds its own sorted uniques
and counts (the family's ``local`` kernel), the driver reads a small regular sample of them
and picks ``p - 1`` splitters (a driver wait, like every data-dependent op), reads where the
splitters fall among every shard's uniques (``cuts`` kernel), every shard sends each
destination its uniques in that destination's range, worker to worker in pieces of at most
``ex.transfer_bytes``, and each destination merges its runs and adds up the counts
(``merge`` kernel). Each value lands on exactly one destination, so the destinations'
results follow one another in order. With the inverse, the destinations send each source
the id of every unique it contributed and the source maps its elements through them.

Memory: a source frees its uniques and counts once they are exported (the pieces travel in
the object store), before any merge runs, so a worker holds its own uniques (at most one
shard) or the pieces it was sent plus its merged result, never all three.
"""

from __future__ import annotations

import collections
import itertools

import numpy as np

from ...core.dataflow import Operand, free_temps, reshard
from ...core.registry import kernel
from ...layout import Layout, split_sizes
from ...runtime.commands import Key, Transfer

OVERSAMPLE = 32


def run_starts(xp, s):
    """Start mask of the runs of equal neighbours in 1-d ``s`` (NaN never equals NaN)."""
    m = xp.empty(s.shape[0], dtype=bool)
    m[:1] = True
    xp.not_equal(s[1:], s[:-1], out=m[1:])
    return m


def run_counts(xp, m, n):
    """Lengths of the runs that start where the mask ``m`` (of ``n`` elements) is set (no
    temporary bigger than the result: every row may start a run)."""
    starts = xp.flatnonzero(m).astype(xp.int64, copy=False)
    if starts.size:
        xp.subtract(starts[1:], starts[:-1], out=starts[:-1])
        starts[-1] = n - starts[-1]
    return starts


def unpooled(*arrays):
    """``arrays`` as views. A worker keeps freed blocks that own their memory in its buffer
    pool for later ops of the same shape; the blocks a set op frees midway (odd-sized
    uniques, counts, ids) would only sit there, counted against the worker's memory."""
    return tuple(a[...] for a in arrays)


# Rows are compared and gathered in blocks of a sixteenth of the data, between these sizes
# (a block's temporaries are a few times its size: small next to the shard it walks).
BLOCK_BYTES, BLOCK_MIN = 1 << 21, 1 << 16


def rows_of(xp, a, dim):
    """``a`` as a C-contiguous (slices along ``dim``, rest) matrix (a view when ``dim`` is 0)."""
    n = a.shape[dim]
    rest = int(np.prod([s for i, s in enumerate(a.shape) if i != dim], dtype=np.int64))
    return xp.ascontiguousarray(xp.moveaxis(a, dim, 0)).reshape(n, rest)


def block_rows(n, rest, itemsize):
    """Rows in one block of ``n`` rows of ``rest`` elements of ``itemsize`` bytes."""
    row = max(1, rest * itemsize)
    return max(1, min(BLOCK_BYTES, max(BLOCK_MIN, n * row // 16)) // row)


def row_starts(xp, take, n, rest, itemsize):
    """Start mask of the runs of equal neighbouring rows of a sequence of ``n`` rows
    (``take(i, j)``: rows ``i:j``; NaN != NaN), compared in blocks so that the sequence (a
    sorted order, pieces) is never copied whole."""
    new = xp.ones(n, dtype=bool)
    if n > 1 and not rest:
        new[1:] = False
    step = block_rows(n, rest, itemsize)
    for i in range(0, n - 1 if rest else 0, step):
        blk = take(i, min(n, i + step + 1))
        new[i + 1 : i + blk.shape[0]] = (blk[1:] != blk[:-1]).any(axis=1)
    return new


@kernel
def unique_inverse(xp, inv, *pieces, offsets):
    """Each element's global id: its local unique's id, sent back by the destinations."""
    g = xp.empty(sum(p.shape[0] for p in pieces), xp.int64)
    lo = 0
    for p, o in zip(pieces, offsets):
        xp.add(p, o, out=g[lo : lo + p.shape[0]])
        lo += p.shape[0]
    return g[inv] if inv.size else xp.empty(0, xp.int64)


def exchange(ex, plan_of, p, dest=None):
    """Export what ``plan_of`` lists for each destination (``Key(key, sl)`` stays local,
    ``(src_worker, key, sl, nbytes)`` travels) and return each destination's argument list;
    ``dest`` (the destinations' workers) leaves pieces a worker exports to itself out of
    ``ex.bytes_moved``."""
    req, plans = collections.defaultdict(list), []
    for b in range(p):
        pl = []
        for it in plan_of(b):
            if type(it) is Key:
                pl.append(it)
            else:
                src, key, sl, nb = it
                req[src].append((key, sl, nb))
                ex.bytes_moved += nb if dest is None or src != dest[b] else 0
                pl.append(src)
        plans.append(pl)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    return [[a if isinstance(a, tuple) else Transfer(next(handles[a])) for a in pl] for pl in plans]


def pieces(ex, src, dst, key, lo, hi, item, dim=0, ndim=1, local=True):
    """Bounded slices ``[lo, hi)`` along ``dim`` of ``key`` (``ndim`` dims; ``item`` bytes a
    slice) on worker ``src`` for worker ``dst``; ``local=False`` exports them even to ``src``
    itself (so that ``key`` may be freed before they are used)."""
    step = max(1, ex.transfer_bytes // max(1, item))
    for a in range(lo, hi, step):
        b = min(hi, a + step)
        sl = tuple(slice(a, b) if i == dim else slice(None) for i in range(ndim))
        yield Key(key, sl) if local and src == dst else (src, key, sl, (b - a) * item)


def one_copy(x):
    """A replicated operand read once (its first replica), as a one-shard operand."""
    lay = x._layout
    if not lay.is_replicated:
        return x
    one = Layout.from_bounds(lay.shape, tuple((0, n) for n in lay.shape), lay.workers[:1])
    return Operand(one, x._dtype, x._keys[:1])


def cut_along(lay, dim):
    """``lay`` if it cuts ``dim`` only, else the even cut of ``dim`` over its workers."""
    if lay.is_replicated:
        ws = lay.workers[:1]
    elif set(lay.split_dims) <= {dim}:
        return lay
    else:
        ws = tuple(dict.fromkeys(lay.workers))
    ws = ws[: max(1, min(len(ws), lay.shape[dim]))]
    b = tuple(itertools.accumulate(split_sizes(lay.shape[dim], len(ws)), initial=0))
    bounds = tuple(b if i == dim else (0, n) for i, n in enumerate(lay.shape))
    return Layout.from_bounds(lay.shape, bounds, ws)


def along(shape, dim, bounds, workers):
    """The layout of ``shape`` cut along ``dim`` at ``bounds`` over ``workers``."""
    cuts = tuple(bounds if i == dim else (0, n) for i, n in enumerate(shape))
    return Layout.from_bounds(shape, cuts, workers)


SLACK = 8  # a result whose shards are all within 1/SLACK of even stays where it was made


def balanced(ex, op, workers, dim=0):
    """``op`` (cut along ``dim`` only, unevenly) moved to nearly equal cuts over ``workers``
    (the uneven blocks are freed), unless it is nearly even already: a move would copy every
    block once more (2x a shard at its peak) to shift a few rows."""
    shape, have = op._layout.shape, op._layout
    even = split_sizes(shape[dim], len(workers))
    b = tuple(itertools.accumulate(even, initial=0))
    lay = along(shape, dim, b, workers)
    if lay == have:
        return op
    sizes = [hi - lo for lo, hi in zip(have.bounds[dim], have.bounds[dim][1:])]
    if tuple(have.workers) == tuple(workers) and len(sizes) == len(even):
        if all(abs(n - e) <= e // SLACK for n, e in zip(sizes, even)):
            return op
    out = reshard(ex, op, lay)
    free_temps(ex, list(zip(op._layout.workers, op._keys)))
    return out


def splitters(samples, sizes, p):
    """``p - 1`` splitters (values, or rows in lexicographic order) from the shards' regular
    samples, each sample weighted by the number of uniques it stands for."""
    tot = sum(sizes)
    pool = np.concatenate([s for s in samples if s.shape[0]])
    wts = np.concatenate(
        [np.full(s.shape[0], n / (s.shape[0] + 1)) for s, n in zip(samples, sizes)]
    )
    if pool.ndim == 1:
        order = np.argsort(pool, kind="stable")
    else:
        order = np.lexsort(pool.T[::-1]) if pool.shape[1] else np.arange(pool.shape[0])
    cum = np.cumsum(wts[order])
    targets = [tot * b / p for b in range(1, p)]
    return pool[order][np.minimum(np.searchsorted(cum, targets), pool.shape[0] - 1)]


def sample_exchange(ex, shards, keys, names, params, item, inverse, drop_input=False):
    """Unique values (or rows) of the blocks ``keys`` held as ``shards``, by sample sort.

    ``names`` are the family's ``(local, cuts, merge)`` kernels, ``params`` the extra
    parameters of the local and merge kernels, ``item`` the bytes of one value (row).
    ``drop_input`` frees the input blocks once the local kernels have read them. Returns
    ``(merged, bounds, ids)``: per destination the keys of its values, counts and their
    number; the global bounds of the destinations' results; with ``inverse``, each source
    shard's key of its elements' global ids (else None).
    """
    local, cut, merge = names
    lparams, mparams = params
    p = len(shards)
    dest = [w for w, _, _ in shards]
    loc = []
    for j, w in enumerate(dest):
        ks = tuple(ex.new_key() for _ in range(5 if inverse else 4))
        prm = {**lparams, "nsample": OVERSAMPLE * p, "inverse": inverse}
        ex.submit(w, local, (Key(keys[j], None),), ks, prm, ("unique", j))
        loc.append(ks)
    if drop_input:  # its values live on in the sorted uniques now
        free_temps(ex, list(zip(dest, keys)))
    got = ex.fetch([(w, loc[j][i], None) for j, w in enumerate(dest) for i in (2, 3)])
    samples, sizes = got[0::2], [int(s[0]) for s in got[1::2]]
    ex.free_pairs([(w, loc[j][i]) for j, w in enumerate(dest) for i in (2, 3)])
    if sum(sizes) and p > 1:
        split = splitters(samples, sizes, p)
        ck = [ex.new_key() for _ in range(p)]
        for j, w in enumerate(dest):
            ex.submit(w, cut, (Key(loc[j][0], None),), (ck[j],), {"splitters": split})
        got = ex.fetch([(w, ck[j], None) for j, w in enumerate(dest)])
        ex.free_pairs(list(zip(dest, ck)))
        cuts = [[0, *map(int, c), n] for c, n in zip(got, sizes)]
    else:
        cuts = [[0] + [n] * p for n in sizes]
    nvals = [0] * p  # values and counts differ in size, so in their number of pieces

    def plan_of(b):
        vals, cnts = [], []
        for j in range(p):
            lo, hi = cuts[j][b : b + 2]
            vals += pieces(ex, dest[j], dest[b], loc[j][0], lo, hi, item, local=False)
            cnts += pieces(ex, dest[j], dest[b], loc[j][1], lo, hi, 8, local=False)
        nvals[b] = len(vals)
        return vals + cnts

    args = exchange(ex, plan_of, p, dest)
    # every piece is exported (even to its own worker): the sources' uniques and counts go
    # before any merge runs
    free_temps(ex, [(w, loc[j][i]) for j, w in enumerate(dest) for i in (0, 1)])
    merged = []
    for b in range(p):
        ks = tuple(ex.new_key() for _ in range(4 if inverse else 3))
        prm = {**mparams, "nvals": nvals[b], "inverse": inverse}
        ex.submit(dest[b], merge, tuple(args[b]), ks, prm, ("unique", b))
        merged.append(ks)
    args = None
    nu = [int(a[0]) for a in ex.fetch([(dest[b], merged[b][2], None) for b in range(p)])]
    ex.free_pairs([(dest[b], merged[b][2]) for b in range(p)])
    bounds = tuple(itertools.accumulate(nu, initial=0))
    if not inverse:
        return merged, bounds, None
    ids = route_ids(ex, dest, cuts, [k[3] for k in merged], bounds, [k[4] for k in loc])
    free_temps(ex, [(dest[b], merged[b][3]) for b in range(p)])
    free_temps(ex, [(w, loc[j][4]) for j, w in enumerate(dest)])
    return merged, bounds, ids


def route_ids(ex, dest, cuts, id_keys, bounds, inv_keys):
    """Every destination ``b`` sends each source ``j`` the ids (``id_keys[b]``) of the
    uniques ``j`` sent it (``cuts[j][b:b+2]`` of ``j``'s), shifted by ``bounds[b]``; each
    source maps its elements' local unique ids (``inv_keys[j]``) through them."""
    p = len(dest)
    starts = [
        list(itertools.accumulate((c[b + 1] - c[b] for c in cuts), initial=0)) for b in range(p)
    ]
    plan = [
        [
            pc
            for b in range(p)
            for pc in pieces(ex, dest[b], dest[j], id_keys[b], *starts[b][j : j + 2], 8)
        ]
        for j in range(p)
    ]
    offs = [  # the global id of each destination's first unique, once per piece
        [bounds[b] for b in range(p) for _ in pieces(ex, 0, 0, 0, *starts[b][j : j + 2], 8)]
        for j in range(p)
    ]
    args = exchange(ex, lambda j: plan[j], p)
    out = []
    for j, w in enumerate(dest):
        k = ex.new_key()
        ex.submit(
            w, "unique_inverse", (Key(inv_keys[j], None), *args[j]), (k,),
            {"offsets": offs[j]}, ("unique", j),
        )  # fmt: skip
        out.append(k)
    return out
