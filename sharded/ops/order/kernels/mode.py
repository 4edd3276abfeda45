"""Worker kernels and the split plan of ``mode`` (:mod:`.order`): a whole line counts its
runs of equal order keys (:func:`.order_kernels.sort_keys`); along a split dim every worker
counts its values, hashed into parts so that each value's counts meet on one worker, and a
small tree merges the per-part winners (torch's rule: the most frequent, ties to the smallest
value, its last index).
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand
from ....core.registry import kernel
from ....core.tree import combine_tree, reduce_groups, reduce_layout
from ....runtime.commands import Key, Transfer
from .select import KMAX, rows_of, sort_keys


# --------------------------------------------------------------------------------- mode
def mode_rows(r, offset=0):
    """torch's mode per row of ``r``: the smallest most frequent value and the index of its
    last occurrence (every NaN counts on its own)."""
    R, n = r.shape
    keys = sort_keys(r)
    o = np.lexsort((np.arange(n)[None, :].repeat(R, 0), keys), axis=1)
    ks = np.take_along_axis(keys, o, 1)
    new = np.ones((R, n), bool)
    new[:, 1:] = ks[:, 1:] != ks[:, :-1]
    if r.dtype.kind == "f":
        new |= ks == KMAX
    run = np.cumsum(new, axis=1)  # run number within the row
    # run lengths and last positions, by counting back from each run end
    end = np.ones((R, n), bool)
    end[:, :-1] = new[:, 1:]
    start_pos = np.where(new, np.arange(n), 0)
    start_pos = np.maximum.accumulate(start_pos, axis=1)
    length = np.where(end, np.arange(n) - start_pos + 1, 0)
    best = length.argmax(1)  # the first (smallest) run of the greatest length
    del run
    idx = o[np.arange(R), best] + offset
    return r[np.arange(R), o[np.arange(R), best]], idx.astype(np.int64)


@kernel
def mode_local(xp, a, axis, oshape):
    """``(values, indices)`` of torch's mode along ``axis`` of a block holding the dim."""
    v, i = mode_rows(rows_of(a, axis))
    return v.reshape(oshape), i.reshape(oshape)


# ------------------------------------------------------ mode along a split dim (value counts)
_HASH = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: spreads nearby keys over parts


def _runs(rows, keys):
    """Starts of the ``(row, key)`` runs of records sorted by row then key."""
    new = np.ones(keys.size, bool)
    new[1:] = (rows[1:] != rows[:-1]) | (keys[1:] != keys[:-1])
    return np.flatnonzero(new)


@kernel
def mode_count(xp, a, axis, offset, nparts):
    """Value counts of a piece, per row: records ``(row, key, count, last index, value)``
    split by a hash of the key into ``nparts`` parts (one per destination worker), so every
    count of one value meets on one worker. Each NaN counts on its own (as the local mode):
    one record per row, count 1, at its first NaN."""
    r = rows_of(a, axis)
    R, n = r.shape
    keys = sort_keys(r).reshape(-1)
    rows = np.repeat(np.arange(R, dtype=np.int64), n)
    pos = np.tile(np.arange(n, dtype=np.int64), R) + offset
    o = np.lexsort((pos, keys, rows))
    rows, keys, pos, vals = rows[o], keys[o], pos[o], r.reshape(-1)[o]
    starts = _runs(rows, keys)
    bound = np.append(starts, keys.size) if starts.size else starts
    ends, cnt = bound[1:] - 1, np.diff(bound)
    nan = keys[starts] == KMAX
    cnt[nan] = 1
    last = np.where(nan, pos[starts], pos[ends])
    rec = (rows[starts], keys[starts], cnt.astype(np.int64), last, vals[starts])
    part = ((keys[starts].view(np.uint64) * _HASH) >> np.uint64(40)) % np.uint64(nparts)
    out = []
    for q in range(nparts):
        m = part == q
        out += [f[m] for f in rec]
    return tuple(out)


def _best(rows, keys, cnt, last, vals, R, dtype):
    """Per row the record of the greatest count, the smallest key on ties (count 0: none)."""
    o = np.lexsort((keys, -cnt, rows))
    first = np.ones(o.size, bool)
    first[1:] = rows[o][1:] != rows[o][:-1]
    pick = o[first]
    out = (np.zeros(R, np.int64), np.zeros(R, np.int64), np.zeros(R, np.int64))
    out[0][rows[pick]], out[1][rows[pick]], out[2][rows[pick]] = cnt[pick], keys[pick], last[pick]
    v = np.zeros(R, dtype)
    v[rows[pick]] = vals[pick]
    return (*out, v)


@kernel
def mode_agg(xp, *recs, R, dtype):
    """The best record per row among this destination's values: counts of one value from
    every piece added, its last index the greatest (a NaN keeps its first)."""
    f = [np.concatenate(recs[i::5]) for i in range(5)]
    rows, keys, cnt, pos, vals = f
    o = np.lexsort((keys, rows))
    rows, keys, cnt, pos, vals = rows[o], keys[o], cnt[o], pos[o], vals[o]
    starts = _runs(rows, keys)
    nan = keys[starts] == KMAX
    total = np.add.reduceat(cnt, starts) if starts.size else cnt[:0]
    total[nan] = 1
    hi = np.maximum.reduceat(pos, starts) if starts.size else pos[:0]
    lo = np.minimum.reduceat(pos, starts) if starts.size else pos[:0]
    last = np.where(nan, lo, hi)
    return _best(rows[starts], keys[starts], total, last, vals[starts], R, dtype)


@kernel
def mode_merge(xp, *parts):
    """Combine per-row best records ``(count, key, last, value)`` of disjoint value sets."""
    cnt, key, last, val = (np.stack(parts[i::4]) for i in range(4))
    o = np.lexsort((key, -cnt), axis=0)[0]
    pick = lambda f: np.take_along_axis(f, o[None], 0)[0]  # noqa: E731
    return pick(cnt), pick(key), pick(last), pick(val)


@kernel
def mode_out(xp, cnt, key, last, val, oshape):
    """The mode's ``(values, indices)`` block from the combined records."""
    return xp.asarray(val).reshape(oshape), xp.asarray(last).reshape(oshape)


# ------------------------------------------------- mode along a split dim: the driver side
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
    dt = x._dtype.np.str
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
