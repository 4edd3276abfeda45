"""Sets: ``unique`` and ``unique_consecutive`` (values, inverse ids, counts), of the flattened
input (``dim=None``) or of slices along a dim that no shard cuts.

``unique`` reuses the sample-sort exchange of :mod:`.sort`: each shard finds its own unique
values and counts, the driver reads a small regular sample of them and picks value splitters
(a driver wait, like every data-dependent op), reads the cut positions, every shard sends each
destination the slice of its uniques in that destination's value range (worker to worker, in
pieces of at most ``ex.transfer_bytes``), and each destination merges its runs and adds up
the counts. Each value lands on exactly one destination, so the destinations' results follow
one another in order; a small move balances them over the shards. With ``return_inverse``
the destinations send each source the global id of every unique it contributed, and the
source maps its elements through them.

``unique_consecutive`` needs only each shard's first and last run (read by the driver) to
join runs that cross a shard boundary. As in torch, NaNs never compare equal: every NaN is
its own value.
"""

from __future__ import annotations

import collections
import itertools

import numpy as np

from .. import dtypes as D
from ..core.dataflow import Operand, free_temps, reshard
from ..core.dispatch import apply, as_tensor, is_tensor
from ..core.registry import bind, kernel, nondiff, primitive
from ..errors import ArgumentError
from ..layout import Layout, normalize_dim, split_sizes

__all__ = ["unique", "unique_consecutive"]

OVERSAMPLE = 32


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


def _runs(xp, s):
    """Start mask of the runs of equal neighbours in ``s`` (NaN never equals NaN)."""
    m = xp.empty(s.shape[0], dtype=bool)
    m[:1] = True
    xp.not_equal(s[1:], s[:-1], out=m[1:])
    return m


def _counts(xp, m, n):
    starts = xp.flatnonzero(m)
    return xp.diff(xp.append(starts, n)).astype(xp.int64)


@kernel
def unique_local(xp, a, nsample, inverse):
    """A shard's sorted uniques, their counts, a regular sample with the number of uniques,
    and (``inverse``) each element's local unique id."""
    a = a.reshape(-1)
    if inverse:
        perm = xp.argsort(a, kind="stable")
        s = a[perm]
    else:
        s = xp.sort(a)
    m = _runs(xp, s)
    u, c = s[m], _counts(xp, m, s.size)
    k = min(nsample, u.size)
    sample = u[(xp.arange(1, k + 1) * u.size) // (k + 1)]
    out = (u, c, sample, xp.array([u.size], dtype=xp.int64))
    if inverse:  # the run ids reuse the sorted copy's memory when it fits (peak: 3 blocks)
        ids = xp.cumsum(m, out=s if s.dtype == xp.int64 else None, dtype=xp.int64)
        s = None
        ids -= 1
        inv = xp.empty(a.size, dtype=xp.int64)
        inv[perm] = ids
        out += (inv,)
    return out


@kernel
def unique_cuts(xp, u, splitters):
    return xp.searchsorted(u, splitters, side="left").astype(xp.int64)


@kernel
def unique_merge(xp, *pieces, nvals, dtype, inverse):
    """Merge the uniques and counts sent here (``nvals`` value pieces, then count pieces):
    values, counts, their number, and (``inverse``) each incoming element's id here."""
    vals, cnts = pieces[:nvals], pieces[nvals:]
    v = xp.concatenate(vals) if vals else xp.empty(0, dtype)
    c = xp.concatenate(cnts) if cnts else xp.empty(0, xp.int64)
    perm = xp.argsort(v, kind="stable")  # merges the sorted runs, first occurrence first
    s = v[perm]
    m = _runs(xp, s)
    starts = xp.flatnonzero(m)
    tot = xp.add.reduceat(c[perm], starts) if s.size else xp.empty(0, xp.int64)
    out = (s[m], tot.astype(xp.int64), xp.array([starts.size], dtype=xp.int64))
    if inverse:
        run = xp.cumsum(m, dtype=xp.int64)
        run -= 1
        ids = xp.empty(s.size, dtype=xp.int64)
        ids[perm] = run
        out += (ids,)
    return out


@kernel
def unique_inverse(xp, inv, *pieces, offsets):
    """Each element's global id: its local unique's id, sent back by the destinations."""
    ids = [p + o for p, o in zip(pieces, offsets)]
    g = xp.concatenate(ids) if ids else xp.empty(0, xp.int64)
    return g[inv] if inv.size else xp.empty(0, xp.int64)


def _exchange(ex, plan_of, p):
    """Export what ``plan_of`` lists for each destination (``("k", key, sl)`` stays local,
    ``(src_worker, key, sl, nbytes)`` travels) and return each destination's argument list."""
    req, plans = collections.defaultdict(list), []
    for b in range(p):
        pl = []
        for it in plan_of(b):
            if it[0] == "k":
                pl.append(it)
            else:
                src, key, sl, nb = it
                req[src].append((key, sl, nb))
                ex.bytes_moved += nb
                pl.append(src)
        plans.append(pl)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    return [[a if isinstance(a, tuple) else ("x", next(handles[a])) for a in pl] for pl in plans]


def _pieces(ex, src, dst, key, lo, hi, item):
    """Bounded slices ``[lo, hi)`` of ``key`` on worker ``src`` for worker ``dst``."""
    step = max(1, ex.transfer_bytes // item)
    for a in range(lo, hi, step):
        sl = (slice(a, min(hi, a + step)),)
        yield ("k", key, sl) if src == dst else (src, key, sl, (sl[0].stop - a) * item)


def _balanced(ex, op, workers):
    """``op`` (1-d, uneven) moved to nearly equal chunks over ``workers``, own blocks freed."""
    n = op._layout.shape[0]
    bounds = tuple(itertools.accumulate(split_sizes(n, len(workers)), initial=0))
    lay = Layout.from_bounds((n,), (bounds,), workers)
    if lay == op._layout:
        return op
    out = reshard(ex, op, lay)
    free_temps(ex, list(zip(op._layout.workers, op._keys)))
    return out


def _one_copy(x):
    """A replicated operand read once (its first replica), as a one-shard operand."""
    lay = x._layout
    if not lay.is_replicated:
        return x
    one = Layout.from_bounds(lay.shape, tuple((0, n) for n in lay.shape), lay.workers[:1])
    return Operand(one, x._dtype, x._keys[:1])


@primitive("unique", kernels=[unique_local, unique_cuts, unique_merge, unique_inverse])
def _unique_plan(ex, x, inverse=False, counts=False):
    """Sorted unique values of 1-d ``x`` (then inverse ids laid out like ``x``, then counts,
    as asked); reads samples, cut positions and result sizes on the driver."""
    x = _one_copy(x)
    shards = x._layout.shards()
    p, dt = len(shards), x._dtype.np.str
    loc = []
    for j, (w, _, _) in enumerate(shards):
        ks = tuple(ex.new_key() for _ in range(5 if inverse else 4))
        ex.submit(
            w, "unique_local", (("k", x._keys[j], None),), ks,
            {"nsample": OVERSAMPLE * p, "inverse": inverse}, ("unique", j),
        )  # fmt: skip
        loc.append(ks)
    got = ex.fetch([(w, loc[j][i], None) for j, (w, _, _) in enumerate(shards) for i in (2, 3)])
    samples, sizes = got[0::2], [int(s[0]) for s in got[1::2]]
    tot = sum(sizes)
    if tot and p > 1:
        pool = np.concatenate([s for s in samples if s.size])
        wts = np.concatenate([np.full(s.size, n / (s.size + 1)) for s, n in zip(samples, sizes)])
        order = np.argsort(pool, kind="stable")
        cum = np.cumsum(wts[order])
        targets = [tot * b / p for b in range(1, p)]
        split = pool[order][np.minimum(np.searchsorted(cum, targets), pool.size - 1)]
        ck = [ex.new_key() for _ in range(p)]
        for j, (w, _, _) in enumerate(shards):
            ex.submit(w, "unique_cuts", (("k", loc[j][0], None),), (ck[j],), {"splitters": split})
        got = ex.fetch([(w, ck[j], None) for j, (w, _, _) in enumerate(shards)])
        ex.free_pairs([(w, ck[j]) for j, (w, _, _) in enumerate(shards)])
        cuts = [[0, *map(int, c), n] for c, n in zip(got, sizes)]
    else:
        cuts = [[0] * b + [n] * (p + 1 - b) for b, n in [(1, n) for n in sizes]]
    ex.free_pairs([(w, loc[j][i]) for j, (w, _, _) in enumerate(shards) for i in (2, 3)])
    dest = [w for w, _, _ in shards]
    item = x._dtype.itemsize

    nvals = [0] * p  # values and counts may differ in size, so in their number of pieces

    def plan_of(b):
        vals = [
            pc
            for j in range(p)
            for pc in _pieces(ex, shards[j][0], dest[b], loc[j][0], *cuts[j][b : b + 2], item)
        ]
        cnts = [
            pc
            for j in range(p)
            for pc in _pieces(ex, shards[j][0], dest[b], loc[j][1], *cuts[j][b : b + 2], 8)
        ]
        nvals[b] = len(vals)
        return vals + cnts

    args = _exchange(ex, plan_of, p)
    mk = []
    for b in range(p):
        ks = tuple(ex.new_key() for _ in range(4 if inverse else 3))
        ex.submit(
            dest[b], "unique_merge", tuple(args[b]), ks,
            {"nvals": nvals[b], "dtype": dt, "inverse": inverse}, ("unique", b),
        )  # fmt: skip
        mk.append(ks)
    nu = [int(a[0]) for a in ex.fetch([(dest[b], mk[b][2], None) for b in range(p)])]
    bounds = tuple(itertools.accumulate(nu, initial=0))
    mid = Layout.from_bounds((bounds[-1],), (bounds,), dest)
    out = [_balanced(ex, Operand(mid, x._dtype, [k[0] for k in mk]), dest)]
    if inverse:
        # every destination sends each source the ids of the uniques that source sent it
        starts = [
            list(itertools.accumulate((c[b + 1] - c[b] for c in cuts), initial=0)) for b in range(p)
        ]
        plan = [
            [
                pc
                for b in range(p)
                for pc in _pieces(ex, dest[b], shards[j][0], mk[b][3], *starts[b][j : j + 2], 8)
            ]
            for j in range(p)
        ]
        offs = [  # the global id of each destination's first unique, once per piece
            [bounds[b] for b in range(p) for _ in _pieces(ex, 0, 0, 0, *starts[b][j : j + 2], 8)]
            for j in range(p)
        ]
        args = _exchange(ex, lambda j: plan[j], p)
        ik = []
        for j, (w, _, _) in enumerate(shards):
            k = ex.new_key()
            ex.submit(
                w, "unique_inverse", (("k", loc[j][4], None), *args[j]), (k,),
                {"offsets": offs[j]}, ("unique", j),
            )  # fmt: skip
            ik.append(k)
        out.append(Operand(x._layout, D.int64, ik))
    if counts:
        out.append(_balanced(ex, Operand(mid, D.int64, [k[1] for k in mk]), dest))
    own = (0, 1, 4)[: 2 + inverse]
    free_temps(ex, [(w, loc[j][i]) for j, (w, _, _) in enumerate(shards) for i in own])
    spent = [1] * (not counts) + [2] + [3] * inverse
    free_temps(ex, [(dest[b], mk[b][i]) for b in range(p) for i in spent])
    return tuple(out)


# ------------------------------------------------------------------- unique_consecutive
@kernel
def uc_local(xp, a):
    """Runs of a 1-d block: values, counts, each element's run, and the edges the driver
    reads (first and last value; number of runs, first and last count)."""
    a = a.reshape(-1)
    m = _runs(xp, a)
    c = _counts(xp, m, a.size)
    edges = xp.array([a[0], a[-1]] if a.size else [0, 0], dtype=a.dtype)
    info = xp.array([c.size, c[0] if c.size else 0, c[-1] if c.size else 0], dtype=xp.int64)
    return a[m], c, xp.cumsum(m) - 1, edges, info


@kernel
def uc_finish(xp, u, c, inv, drop, add, base):
    """Drop a first run that continues the previous shard's, add the counts of runs that
    continue into later shards, and shift the run ids to global ones."""
    c = xp.array(c[drop:], copy=True)
    if c.size:
        c[-1] += add
    return xp.array(u[drop:], copy=True), c, inv + (base - drop)


@primitive("unique_consecutive", kernels=[uc_local, uc_finish])
def _uc_plan(ex, x, inverse=False, counts=False):
    """Runs of equal consecutive values of 1-d ``x``: values (then inverse, counts)."""
    x = _one_copy(x)
    shards = x._layout.shards()
    p = len(shards)
    loc = []
    for j, (w, _, _) in enumerate(shards):
        ks = tuple(ex.new_key() for _ in range(5))
        ex.submit(w, "uc_local", (("k", x._keys[j], None),), ks, {}, ("unique_consecutive", j))
        loc.append(ks)
    got = ex.fetch([(w, loc[j][i], None) for j, (w, _, _) in enumerate(shards) for i in (3, 4)])
    edges, info = got[0::2], [tuple(map(int, i)) for i in got[1::2]]
    drop, add, base = [0] * p, [0] * p, [0] * p
    owner, last, runs = None, None, 0
    for j in range(p):
        n_runs, first_c, last_c = info[j]
        if not n_runs:
            base[j] = runs
            continue
        if owner is not None and edges[j][0] == last:  # NaN != NaN: never joined, as torch
            drop[j] = 1
            add[owner] += first_c
        base[j] = runs
        runs += n_runs - drop[j]
        if not (drop[j] and n_runs == 1):
            owner = j
        last = edges[j][1]
    mk = []
    for j, (w, _, _) in enumerate(shards):
        ks = tuple(ex.new_key() for _ in range(3))
        ex.submit(
            w, "uc_finish", tuple(("k", k, None) for k in loc[j][:3]), ks,
            {"drop": drop[j], "add": add[j], "base": base[j]}, ("unique_consecutive", j),
        )  # fmt: skip
        mk.append(ks)
    free_temps(ex, [(w, k) for j, (w, _, _) in enumerate(shards) for k in loc[j]])
    sizes = [info[j][0] - drop[j] for j in range(p)]
    bounds = tuple(itertools.accumulate(sizes, initial=0))
    dest = [w for w, _, _ in shards]
    mid = Layout.from_bounds((bounds[-1],), (bounds,), dest)
    out = [_balanced(ex, Operand(mid, x._dtype, [k[0] for k in mk]), dest)]
    if inverse:
        out.append(Operand(x._layout, D.int64, [k[2] for k in mk]))
    else:
        free_temps(ex, [(dest[j], mk[j][2]) for j in range(p)])
    if counts:
        out.append(_balanced(ex, Operand(mid, D.int64, [k[1] for k in mk]), dest))
    else:
        free_temps(ex, [(dest[j], mk[j][1]) for j in range(p)])
    return tuple(out)


# ------------------------------------------------------------------ unique along a dim
@kernel
def unique_dim_local(xp, a, dim, consecutive):
    """Unique slices of a whole block along ``dim`` (lexicographic order, as torch), or runs
    of equal consecutive slices; with the inverse, the counts and the result's length."""
    rest = int(np.prod([d for i, d in enumerate(a.shape) if i != dim], dtype=np.int64))
    m = xp.moveaxis(a, dim, 0).reshape(a.shape[dim], rest)
    n = m.shape[0]
    if consecutive:
        new = xp.ones(n, dtype=bool)
        new[1:] = (m[1:] != m[:-1]).any(axis=1) if m.shape[1] else False
        sel, inv = xp.flatnonzero(new), xp.cumsum(new) - 1
    else:  # sort the slices by all their elements, last key first (lexsort's order)
        perm = xp.lexsort(m.T[::-1]) if m.shape[1] and n else xp.arange(n)
        s = m[perm]
        new = xp.ones(n, dtype=bool)
        new[1:] = (s[1:] != s[:-1]).any(axis=1) if m.shape[1] else False
        inv = xp.empty(n, dtype=xp.int64)
        inv[perm] = xp.cumsum(new) - 1
        sel = perm[new]
    cnt = _counts(xp, new, n)
    return (
        xp.take(a, sel, axis=dim),
        inv.astype(xp.int64),
        cnt,
        xp.array([sel.size], dtype=xp.int64),
    )


@primitive("unique_dim", kernels=[unique_dim_local])
def _unique_dim_plan(ex, x, dim, consecutive):
    """Unique slices along ``dim`` of a tensor held whole by one worker (one shard or
    replicated): ``(values, inverse, counts)`` on that worker; reads the result's length."""
    lay = x._layout
    w = lay.workers[0]
    ks = tuple(ex.new_key() for _ in range(4))
    ex.submit(
        w, "unique_dim_local", (("k", x._keys[0], None),), ks,
        {"dim": dim, "consecutive": consecutive}, ("unique", 0),
    )  # fmt: skip
    (k,) = (int(v[0]) for v in ex.fetch([(w, ks[3], None)]))
    ex.free_pairs([(w, ks[3])])
    shape = list(lay.shape)
    shape[dim] = k

    def one(shp):
        return Layout.from_bounds(shp, tuple((0, n) for n in shp), (w,))

    return (
        Operand(one(tuple(shape)), x._dtype, ks[:1]),
        Operand(one((lay.shape[dim],)), D.int64, ks[1:2]),
        Operand(one((k,)), D.int64, ks[2:3]),
    )


nondiff("unique", "unique_consecutive", "unique_dim")


# ------------------------------------------------------------------------ public names
def _flat(x):
    """1-d ``x`` (the sorted values of ``dim=None``), and the shape the inverse takes."""
    return (x if x.ndim == 1 else x.reshape(-1)), tuple(x.shape)


def _finish(res, shape, return_inverse, return_counts):
    res = list(res)
    if return_inverse:
        res[1] = res[1].reshape(shape) if tuple(res[1].shape) != shape else res[1]
    if not return_inverse and not return_counts:
        return res[0]
    return tuple(res)


def _along_dim(name, x, dim, return_inverse, return_counts):
    lay = x._layout
    d = normalize_dim(dim, x.ndim)
    if lay.is_replicated or lay.num_shards == 1:
        res = apply("unique_dim", x, d, name == "unique_consecutive")
    elif name == "unique":  # sample sort of the slices (sets_dim)
        if x.numel() == 0 and x.shape[d] != 0:
            raise ArgumentError(
                f"unique(dim={dim}) of shape {tuple(x.shape)}: there are 0-sized dims other "
                "than dim, so unique cannot be applied (as torch)"
            )
        got = iter(apply("unique_rows", x, d, bool(return_inverse), bool(return_counts)))
        res = (next(got), return_inverse and next(got), return_counts and next(got))
    else:
        raise ArgumentError(
            f"{name}(dim={dim}) is supported for a tensor held by one worker (one shard or "
            f"replicated) only; this one of shape {tuple(x.shape)} has {lay.num_shards} "
            "shards (use dim=None, or reshard it)"
        )
    keep = (True, return_inverse, return_counts)
    res = tuple(r for r, k in zip(res, keep) if k)
    return res if len(res) > 1 else res[0]


@bind("unique", prim="unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Unique values of the flattened ``input``, sorted (as torch on CPU, also for
    ``sorted=False``), with the inverse ids (shaped like ``input``) and counts if asked.

    NaNs are each their own value, as in torch. The result is sharded; the driver reads a
    few samples, cut positions and result sizes (short waits). With ``dim``, the unique
    slices along ``dim`` in lexicographic order, on any layout (see :mod:`.sets_dim`).

    Examples
    --------
    >>> import sharded as st
    >>> v, inv, n = st.unique(st.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    >>> v.tolist(), inv.tolist(), n.tolist()
    ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    >>> st.unique(st.tensor([[1, 2], [0, 5], [1, 2]], shards=2), dim=0).tolist()
    [[0, 5], [1, 2]]
    """
    x = _tensor(input)
    if dim is not None:
        return _along_dim("unique", x, dim, return_inverse, return_counts)
    f, shape = _flat(x)
    res = apply("unique", f, bool(return_inverse), bool(return_counts))
    return _finish(res, shape, return_inverse, return_counts)


@bind("unique_consecutive", prim="unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements of the flattened ``input``; inverse ids
    (shaped like ``input``) and run lengths if asked.

    Examples
    --------
    >>> import sharded as st
    >>> v, n = st.unique_consecutive(st.tensor([1, 1, 2, 2, 1]), return_counts=True)
    >>> v.tolist(), n.tolist()
    ([1, 2, 1], [2, 2, 1])
    """
    x = _tensor(input)
    if dim is not None:
        return _along_dim("unique_consecutive", x, dim, return_inverse, return_counts)
    f, shape = _flat(x)
    res = apply("unique_consecutive", f, bool(return_inverse), bool(return_counts))
    return _finish(res, shape, return_inverse, return_counts)
