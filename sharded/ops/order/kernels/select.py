"""Worker kernels, pure row rules and the selection rounds of the order-statistics family
(:mod:`.order`; :mod:`.mode_kernels` holds ``mode``'s and reuses the keys here).

Every kernel moves the selection dim last and views its block as ``(rows, n)``. Values are
compared through order-preserving int64 *keys* (:func:`sort_keys`): floats map bit-wise so
that integer order is float order, NaN maps above +inf (torch's NaN ordering), integers and
bools widen. Keys make the distributed selection exact (a radix select on key bits: bins are
bit shifts, so there is no floating-point width to degenerate) and ties are broken by global
index.
"""

from __future__ import annotations

import collections

import numpy as np

from ....core.registry import kernel
from ....runtime.commands import Key, Transfer

KMAX = np.iinfo(np.int64).max
_FLIP = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}
_INT = {2: np.int16, 4: np.int32, 8: np.int64}
BINS_BUDGET = 1 << 16  # counts read per piece per round


def sort_keys(a):
    """Order-preserving int64 keys of ``a`` (NaN largest, one key for every NaN).

    Examples
    --------
    >>> sort_keys(np.array([-1.0, 2.0, float("nan"), -0.5])).argsort().tolist()
    [0, 3, 1, 2]
    """
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return a.astype(np.int64)
    b = a.view(_INT[a.dtype.itemsize]).astype(np.int64)
    k = np.where(b < 0, b ^ _FLIP[a.dtype.itemsize], b)
    k[np.isnan(a)] = KMAX
    return k


def rows_of(a, axis):
    """``a`` with ``axis`` moved last, as ``(rows, n)``."""
    m = np.moveaxis(np.asarray(a), axis, -1)
    return m.reshape(int(np.prod(m.shape[:-1])), m.shape[-1]) if m.ndim else m.reshape(1, 1)


# ------------------------------------------------------------------------------- top-k
def _order(keys, idx, largest):
    """Per-row order by key (descending when ``largest``), ties by global index."""
    return np.lexsort((idx, ~keys if largest else keys), axis=-1)


def _top_positions(m, kk, largest):
    """Positions (along the last axis, ascending) of each row's top ``kk`` of ``m`` by order
    keys; ties at the cut go to the lowest positions, as the merge orders them, so that the
    result does not depend on the layout (argpartition's pick would). Linear time."""
    n = m.shape[-1]
    keys = sort_keys(m)
    if largest:
        np.invert(keys, out=keys)  # smaller is better
    kth = np.partition(keys, kk - 1, axis=-1)[..., kk - 1 : kk]
    better, tie = keys < kth, keys == kth
    need = kk - better.sum(-1, keepdims=True)
    take = better | (tie & (np.cumsum(tie, axis=-1) <= need))
    return np.nonzero(take.reshape(-1, n))[1].reshape(m.shape[:-1] + (kk,))


_SAMPLE = 1 << 14  # elements of a long line sampled to guess a cut for its top k


def _candidates(m, kk, largest):
    """Positions of a 1-d ``m`` that hold its top ``kk`` for sure: every element on the good
    side of a cut guessed from a strided sample (expected ~4 kk of them), or None when the
    guess keeps fewer than ``kk`` (or too many to pay off). One compare over ``m``, instead of
    the order keys, partition and scans of :func:`_top_positions` over all of it."""
    n = m.size
    sample = m[:: n // _SAMPLE]
    r = min(sample.size - 1, 4 * kk * sample.size // n + 8)  # the cut's rank in the sample
    keys = sort_keys(sample)
    j = np.argpartition(~keys if largest else keys, r)[r]
    t = sample[j]
    if t != t:  # a NaN cut: NaNs crowd the top, no shortcut
        return None
    keep = ~(m < t) if largest else m <= t  # NaN is the largest: kept by ~(m < t) only
    cand = np.flatnonzero(keep)
    return cand if kk <= cand.size <= n // 8 else None


@kernel
def topk_chunk(xp, a, k, axis, largest, offset, sort):
    """``(values, global indices)`` of a block's top ``min(k, n)`` along ``axis``, compared
    by order keys (NaN largest, as torch orders them); ties by index. A long line with a
    small ``k`` first keeps the candidates of a sampled cut (:func:`_candidates`)."""
    m = np.moveaxis(np.asarray(a), axis, -1)
    n = m.shape[-1]
    kk = min(k, n)
    if kk == n:
        idx = np.broadcast_to(np.arange(n, dtype=np.int64), m.shape).copy()
    elif kk == 0:  # k = 0: no kth to place
        idx = np.zeros(m.shape[:-1] + (0,), np.int64)
    else:
        cand = _candidates(m, kk, largest) if m.ndim == 1 and n >= 1 << 16 else None
        idx = (
            _top_positions(m, kk, largest)
            if cand is None
            else cand[_top_positions(m[cand], kk, largest)]
        )
    vals = np.take_along_axis(m, idx, axis=-1)
    idx = idx.astype(np.int64) + offset
    if sort and kk:
        o = _order(sort_keys(vals), idx, largest)
        vals, idx = np.take_along_axis(vals, o, -1), np.take_along_axis(idx, o, -1)
    return np.moveaxis(vals, -1, axis).copy(), np.moveaxis(idx, -1, axis).copy()


@kernel
def topk_merge(xp, *parts, k, axis, largest):
    """Merge ``(v1, i1, v2, i2, ...)`` candidates into the sorted top ``k`` along ``axis``."""
    v = np.concatenate([np.moveaxis(p, axis, -1) for p in parts[0::2]], axis=-1)
    i = np.concatenate([np.moveaxis(p, axis, -1) for p in parts[1::2]], axis=-1)
    o = _order(sort_keys(v), i, largest)[..., :k]
    v, i = np.take_along_axis(v, o, -1), np.take_along_axis(i, o, -1)
    return np.moveaxis(v, -1, axis).copy(), np.moveaxis(i, -1, axis).copy()


# ----------------------------------------------------------------------- row rules
def row_stats(a, axis, offset):
    """Per row: ``[valid count, min key, max key, first NaN's global index or -1, n]``."""
    r = rows_of(a, axis)
    keys = sort_keys(r)
    nan = keys == KMAX if r.dtype.kind == "f" else np.zeros(keys.shape, bool)
    n = r.shape[1]
    out = np.empty((r.shape[0], 5), np.int64)
    out[:, 0] = n - nan.sum(1)
    out[:, 1] = np.where(nan, KMAX, keys).min(1, initial=KMAX)
    out[:, 2] = np.where(nan, -KMAX - 1, keys).max(1, initial=-KMAX - 1)
    out[:, 3] = np.where(nan.any(1), nan.argmax(1) + offset, -1) if n else -1
    out[:, 4] = n
    return out


def merge_stats(parts):
    """Row stats of a whole row from those of its pieces (in index order)."""
    s = np.stack(parts)
    nan = np.where(s[:, :, 3] >= 0, s[:, :, 3], KMAX).min(0)
    return np.stack(
        [
            s[:, :, 0].sum(0),
            s[:, :, 1].min(0),
            s[:, :, 2].max(0),
            np.where(nan == KMAX, -1, nan),
            s[:, :, 4].sum(0),
        ],
        axis=1,
    )


def plan_rows(stats, kind, arg, dtype):
    """What each output element needs, from whole-row ``stats`` (:func:`row_stats`).

    ``kind`` is ``"kth"`` (``arg`` = k), ``"median"``, ``"nanmedian"`` or ``"quantile"``
    (``arg = (qs, interpolation, ignore_nan)``). Returns ``(targets, spec)``: ``targets`` an
    int64 ``(T, 2)`` array of distinct ``(row, rank)`` pairs to select (rank among the row's
    valid values, in key order); ``spec`` arrays of shape ``(Q, rows)``: ``lo``/``hi`` target
    numbers, ``w`` (the weight of ``hi``), ``nan`` (result is NaN) and ``nan_idx``.
    """
    nvalid, n = stats[:, 0], stats[:, 4]
    nan_idx = np.maximum(stats[:, 3], 0)
    rows = np.arange(len(stats))
    if kind == "quantile":
        qs, interp, ignore = arg
        q = np.asarray(qs, dtype)[:, None]
        cnt = nvalid[None, :]
        isnan = (cnt == 0) | ((nvalid != n) & (not ignore))[None, :]
        pos = q * np.maximum(cnt - 1, 0).astype(dtype)
        below = np.floor(pos).astype(np.int64)
        above = np.ceil(pos).astype(np.int64)
        w = (pos - below.astype(dtype)).astype(dtype)
        if interp == "lower":
            above, w = below, w * 0
        elif interp == "higher":
            below, w = above, w * 0
        elif interp == "nearest":
            below = above = np.round(pos).astype(np.int64)
            w = w * 0
        elif interp == "midpoint":
            w = np.where(above > below, 0.5, 0.0).astype(dtype)
        lo_r, hi_r = below, np.minimum(above, np.maximum(cnt - 1, 0))
    else:
        if kind == "kth":
            rank = np.full(len(stats), arg - 1, np.int64)
            isnan = rank >= nvalid
        elif kind == "median":
            rank, isnan = (n - 1) // 2, (nvalid != n) | (n == 0)
        else:
            rank, isnan = (nvalid - 1) // 2, nvalid == 0
        lo_r = hi_r = rank[None, :]
        isnan, w = isnan[None, :], np.zeros((1, len(stats)), dtype if dtype.kind == "f" else "f8")
    isnan = np.broadcast_to(isnan, lo_r.shape)
    rr = np.broadcast_to(rows[None, :], lo_r.shape)
    want = np.concatenate(
        [np.stack([rr[~isnan], lo_r[~isnan]], 1), np.stack([rr[~isnan], hi_r[~isnan]], 1)]
    )
    targets, inv = np.unique(want.reshape(-1, 2), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    lo_t = np.zeros(lo_r.shape, np.int64)
    hi_t = np.zeros(lo_r.shape, np.int64)
    m = int((~isnan).sum())
    lo_t[~isnan], hi_t[~isnan] = inv[:m], inv[m:]
    spec = {
        "lo": lo_t,
        "hi": hi_t,
        "w": np.where(isnan, 0, w).astype(w.dtype),
        "nan": np.ascontiguousarray(isnan),
        "nan_idx": np.broadcast_to(nan_idx[None, :], lo_r.shape).copy(),
        # lower/higher/nearest pick a value (torch gathers it): no lerp, whose 0 * inf is NaN
        "pick": kind == "quantile" and arg[1] in ("lower", "higher", "nearest"),
    }
    return targets.astype(np.int64).reshape(-1, 2), spec


def _lerp(a, b, w):
    """torch.lerp's formula (exact at both ends)."""
    return np.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def outputs(sel_v, sel_i, spec, dtype, oshape, quantile):
    """The results from the selected ``(value, index)`` of every target: ``(values,
    indices)`` (picks) or ``(values, lo index, hi index, hi weight)`` (quantile)."""
    nan = spec["nan"]
    empty = len(sel_v) == 0
    vl = np.zeros(nan.shape, dtype) if empty else sel_v[spec["lo"]]
    il = spec["nan_idx"] if empty else np.where(nan, spec["nan_idx"], sel_i[spec["lo"]])
    if not quantile:
        vals = np.where(nan, np.nan, vl) if np.dtype(dtype).kind == "f" else vl
        return vals.astype(dtype).reshape(oshape), il.reshape(oshape)
    vh = vl if empty else sel_v[spec["hi"]]
    ih = spec["nan_idx"] if empty else np.where(nan, spec["nan_idx"], sel_i[spec["hi"]])
    w = spec["w"].astype(dtype)
    vals = np.where(nan, np.nan, vl if spec.get("pick") else _lerp(vl, vh, w)).astype(dtype)
    return vals.reshape(oshape), il.reshape(oshape), ih.reshape(oshape), w.reshape(oshape)


# ------------------------------------------------------------------ selection kernels
@kernel
def select_local(xp, a, axis, kind, arg, oshape, quantile):
    """The whole selection on a block holding the full dim: stable key sort per row."""
    r = rows_of(a, axis)
    targets, spec = plan_rows(row_stats(a, axis, 0), kind, arg, r.dtype)
    keys = sort_keys(r)
    order = np.argsort(keys, axis=1, kind="stable")
    idx = order[targets[:, 0], targets[:, 1]] if len(targets) else np.zeros(0, np.int64)
    vals = r[targets[:, 0], idx] if len(targets) else np.zeros(0, r.dtype)
    return outputs(vals, idx.astype(np.int64), spec, r.dtype, oshape, quantile)


@kernel
def select_stats(xp, a, axis, offset):
    """Per-row statistics of a piece of the selection dim (read by the driver)."""
    return row_stats(a, axis, offset)


@kernel
def select_hist(xp, a, axis, rows, lo, hi, shift, nb):
    """Counts ``(T, nb)``: of target ``t``'s row values with keys in ``[lo, hi]``, by bin
    ``(key - lo) >> shift`` (the radix step of the distributed selection)."""
    keys = sort_keys(rows_of(a, axis))
    T = len(rows)
    out = np.zeros((T, nb), np.int64)
    step = max(1, (1 << 22) // max(1, keys.shape[1]))  # bounded temporaries
    for s in range(0, T, step):
        sl = slice(s, min(T, s + step))
        kt = keys[rows[sl]]
        lo_, hi_ = lo[sl, None], hi[sl, None]
        inr = (kt >= lo_) & (kt <= hi_)
        b = ((kt - lo_).view(np.uint64) >> shift[sl, None].astype(np.uint64)).astype(np.int64)
        flat = (np.arange(sl.stop - sl.start)[:, None] * nb + b)[inr]
        out[sl] = np.bincount(flat, minlength=(sl.stop - sl.start) * nb).reshape(-1, nb)
    return out


@kernel
def select_extract(xp, a, axis, offset, rows, lo, hi, skip, take, width):
    """Per target, the values with keys in ``[lo, hi]`` ordered by (key, index), positions
    ``[skip, skip + take)``: ``(keys, values, global indices)`` padded to ``width``."""
    r = rows_of(a, axis)
    keys = sort_keys(r)
    T = len(rows)
    ok = np.full((T, width), KMAX, np.int64)
    ov = np.zeros((T, width), r.dtype)
    oi = np.full((T, width), KMAX, np.int64)
    live = np.nonzero(take > 0)[0]
    if len(live) and width:
        kt = keys[rows[live]]
        t, j = np.nonzero((kt >= lo[live, None]) & (kt <= hi[live, None]))
        kk = kt[t, j]
        o = np.lexsort((j, kk, t))
        t, j, kk = t[o], j[o], kk[o]
        start = np.searchsorted(t, np.arange(len(live)))
        pos = np.arange(len(t)) - start[t] - skip[live][t]
        keep = (pos >= 0) & (pos < take[live][t])
        tt, pp = live[t[keep]], pos[keep]
        ok[tt, pp] = kk[keep]
        ov[tt, pp] = r[rows[tt], j[keep]]
        oi[tt, pp] = j[keep] + offset
    return ok, ov, oi


@kernel
def select_finish(xp, *parts, ranks, spec, oshape, quantile):
    """Merge the extracted ``(keys, values, indices)`` of every piece and pick each target's
    rank among them; then the results (:func:`outputs`)."""
    k = np.concatenate(parts[0::3], axis=1)
    v = np.concatenate(parts[1::3], axis=1)
    i = np.concatenate(parts[2::3], axis=1)
    o = np.lexsort((i, k), axis=1)
    t = np.arange(len(ranks))
    pick = o[t, ranks] if len(ranks) else np.zeros(0, np.int64)
    return outputs(v[t, pick], i[t, pick], spec, v.dtype, oshape, quantile)


# ----------------------------------------------------------------- driver side
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
