"""The order family's driver-side planning shared by its primitives (their worker kernels are
in :mod:`.kernels` and in the primitives' modules):

- the routing of the set ops: the sample-sort exchange of unique values or rows, the ids
  routed back to their source shards, and the small layout moves around them;
- the rounds of the distributed selection (:func:`radix_select`) of ``kthvalue``,
  ``median``, ``nanmedian`` and ``(nan)quantile`` along a split dim, described in
  :mod:`.prims.select`;
- ``mode`` along a split dim by value counts (:func:`split_mode`).

:func:`sample_exchange` runs the pipeline of ``unique`` (:mod:`.prims.unique_flat`, 1-d
values) and of ``unique(dim=)`` (:mod:`.prims.unique_rows`, slices along a dim): each shard
finds its own sorted uniques
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

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps, reshard
from ....core.registry import kernel
from ....core.tree import combine_tree, reduce_groups, reduce_layout
from ....layout import Layout, split_sizes
from ....runtime.commands import Key, Transfer
from ..kernels.select import BINS_BUDGET, merge_stats, plan_rows

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


# ------------------------------------------- order statistics along a split dim: the rounds
def radix_select(ex, x, d, groups, kind, arg, candidates):
    """The driver side of the distributed selection of :mod:`.order` (its docstring): the
    rounds, then per row group ``(root, spec, ranks, finish args, extract keys)``."""
    shards = x._layout.shards()
    stat_keys = {}
    for members in groups:
        for s in members:
            k = ex.new_key()
            params = {"axis": d, "offset": shards[s][1][d]}
            ex.submit(shards[s][0], "select_stats", (Key(x._keys[s], None),), (k,), params)
            stat_keys[s] = k
    order = list(stat_keys)
    got = dict(zip(order, ex.fetch([(shards[s][0], stat_keys[s], None) for s in order])))
    ex.free_pairs([(shards[s][0], stat_keys[s]) for s in order])
    st_ = []  # per group: dict of planning state
    for members in groups:
        whole = merge_stats([got[s] for s in members])
        targets, spec = plan_rows(whole, kind, arg, x._dtype.np)
        T = len(targets)
        rows, rank = targets[:, 0], targets[:, 1]
        cs = np.stack([got[s][rows, 0] for s in members], 1) if T else np.zeros((0, len(members)))
        st_.append(
            dict(
                members=members,
                spec=spec,
                rows=rows,
                rank=rank.copy(),
                cs=cs.astype(np.int64),
                lo=whole[rows, 1].copy(),
                hi=whole[rows, 2].copy(),
            )
        )
    while True:
        todo = []
        for g in st_:
            span = [int(h) - int(lo) for lo, h in zip(g["lo"], g["hi"])]
            active = (g["cs"].sum(1) > candidates) & (np.array(span, dtype=object) > 0)
            if active.any():
                todo.append((g, np.nonzero(active)[0], span))
        if not todo:
            break
        reads = []
        for g, act, span in todo:
            nb = int(max(16, min(4096, BINS_BUDGET // max(1, len(act)))))
            bits = nb.bit_length() - 1
            shift = np.array([max(0, (span[t] + 1 - 1).bit_length() - bits) for t in act])
            g["round"] = (act, shift, nb)
            params = {
                "axis": d,
                "rows": g["rows"][act],
                "lo": g["lo"][act],
                "hi": g["hi"][act],
                "shift": shift,
                "nb": nb,
            }
            for s in g["members"]:
                k = ex.new_key()
                ex.submit(shards[s][0], "select_hist", (Key(x._keys[s], None),), (k,), params)
                reads.append((g, s, k))
        counts = ex.fetch([(shards[s][0], k, None) for _, s, k in reads])
        ex.free_pairs([(shards[s][0], k) for _, s, k in reads])
        per = collections.defaultdict(list)
        for (g, _, _), c in zip(reads, counts):
            per[id(g)].append(c)
        for g, act, _ in todo:
            act, shift, nb = g["round"]
            c = np.stack(per[id(g)], 2)  # (targets, bins, pieces)
            tot = c.sum(2)
            cum = np.cumsum(tot, 1)
            b = (cum <= g["rank"][act, None]).sum(1)
            below = np.where(b > 0, cum[np.arange(len(act)), np.maximum(b - 1, 0)], 0)
            g["rank"][act] -= below
            for j, t in enumerate(act):
                lo = int(g["lo"][t]) + (int(b[j]) << int(shift[j]))
                g["hi"][t] = min(int(g["hi"][t]), lo + (1 << int(shift[j])) - 1)
                g["lo"][t] = lo
            g["cs"][act] = c[np.arange(len(act)), b, :]
    finals = []
    for g in st_:
        members, T = g["members"], len(g["rows"])
        P = len(members)
        skip = np.zeros((T, P), np.int64)
        take = np.minimum(g["cs"], g["rank"][:, None] + 1)
        ranks = g["rank"].copy()
        tie = g["cs"].sum(1) > candidates  # one key left: pick the piece holding the rank
        for t in np.nonzero(tie)[0]:
            cum = np.cumsum(g["cs"][t])
            s = int((cum <= ranks[t]).sum())
            take[t] = 0
            take[t, s] = 1
            skip[t, s] = ranks[t] - (cum[s - 1] if s else 0)
            ranks[t] = 0
        width = int(take.max()) if T else 0
        root = shards[members[0]][0]
        req, ext = collections.defaultdict(list), []
        for p, s in enumerate(members):
            ks = tuple(ex.new_key() for _ in range(3))
            params = {
                "axis": d,
                "offset": shards[s][1][d],
                "rows": g["rows"],
                "lo": g["lo"],
                "hi": g["hi"],
                "skip": skip[:, p],
                "take": take[:, p],
                "width": width,
            }
            w = shards[s][0]
            ex.submit(w, "select_extract", (Key(x._keys[s], None),), ks, params, ("select", s))
            ext.append((w, ks))
            if w != root:
                req[w].extend((k, None) for k in ks)
        handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
        args = []
        for w, ks in ext:
            args += [Key(k, None) if w == root else Transfer(next(handles[w])) for k in ks]
        finals.append((root, g["spec"], ranks, args, ext))
    return finals


# ------------------------------------------------ mode along a split dim: the value counts
def split_mode(ex, x, dim, keepdim):
    """Every piece counts its values per row and splits the ``(value, count, last index)``
    records by a hash of the value over the row group's workers (worker to worker, no
    driver wait); each worker adds the counts of its values and keeps its best per row; the
    bests (one record per row) combine in the reduction tree onto the group's root. No
    worker holds more than the distinct values hashed to it."""
    lay, shards = x._layout, x._layout.shards()
    groups = list(reduce_groups(lay, (dim,)).values())
    roots = [shards[m[0]][0] for m in groups]
    out = reduce_layout(lay, (dim,), keepdim, roots)
    dt = x._dtype.np_str
    parts, temps = [], []
    for members in groups:
        dests = list(dict.fromkeys(shards[s][0] for s in members))  # root first
        nq, R = (
            len(dests),
            int(np.prod([n for d, n in enumerate(shards[members[0]][2]) if d != dim])),
        )
        recs = []
        for s in members:
            w, offs, _ = shards[s]
            ks = tuple(ex.new_key() for _ in range(5 * nq))
            params = {"axis": dim, "offset": offs[dim], "nparts": nq}
            ex.submit(w, "mode_count", (Key(x._keys[s], None),), ks, params, ("mode", s))
            temps += [(w, k) for k in ks]
            recs.append((w, ks))
        req = collections.defaultdict(list)
        for w, ks in recs:
            for q, d in enumerate(dests):
                if d != w:
                    req[w].extend((k, None) for k in ks[5 * q : 5 * q + 5])
        handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
        want = [[] for _ in dests]
        for w, ks in recs:
            for q, d in enumerate(dests):
                for k in ks[5 * q : 5 * q + 5]:
                    want[q].append(Key(k, None) if d == w else Transfer(next(handles[w])))
        gp = []
        for q, d in enumerate(dests):
            kk = tuple(ex.new_key() for _ in range(4))
            ex.submit(d, "mode_agg", tuple(want[q]), kk, {"R": R, "dtype": dt}, ("mode", None))
            gp.append((d, kk))
        parts.append(gp)
    ex.free_pairs(temps)
    finals = combine_tree(ex, parts, roots, "mode_merge", {}, 4, "mode")
    vk, ik = [], []
    for g, (w, _, oshp) in enumerate(out.shards()):
        v, i = ex.new_key(), ex.new_key()
        args = tuple(Key(k, None) for k in finals[g])
        ex.submit(w, "mode_out", args, (v, i), {"oshape": tuple(oshp)}, ("mode", g))
        ex.free(w, list(finals[g]))
        vk.append(v)
        ik.append(i)
    return Operand(out, x._dtype, vk), Operand(out, D.int64, ik)
