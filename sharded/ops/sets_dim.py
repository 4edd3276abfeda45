"""``unique(dim=d)`` of a split tensor: the unique slices along ``d`` in lexicographic order,
with inverse ids and counts, never gathered on one worker or the driver.

Every slice along ``d`` is one key (a row of ``rest`` elements, the other dims flattened in C
order). A key must be whole on one worker, so a tensor cut along any dim other than ``d``
is first resharded to cuts along ``d`` only (one all-to-all worker to worker, not a
gather). Then the 1-d ``unique``'s sample-sort exchange runs on rows: each shard sorts its
rows (``lexsort``, first element first) and keeps its unique rows and their counts; the
driver reads a small regular sample of rows and the number of uniques of every shard and
picks ``p - 1`` splitter rows; every shard finds where the splitters fall among its unique
rows and sends each destination its range (in pieces of at most ``ex.transfer_bytes``);
each destination merges what it got and adds up the counts. Equal rows land on one
destination, so the destinations' results follow one another in order; a small move
balances them over the workers. With the inverse, the destinations send each source the
global id of every unique row it contributed.

Order: rows compare lexicographically with NaN after every number at its position (numpy's
``lexsort``); a row holding a NaN equals no row (torch: NaN != NaN), so each such row is its
own unique. torch sorts with a comparator that treats NaN as equal to anything, whose order
among rows that differ only where one holds NaN is its unstable sort's; they agree elsewhere.
Peak extra memory per worker: a sorted copy of its rows (one shard), the unique rows (at most
one shard) and one transfer buffer.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import dtypes as D
from ..core.dataflow import Operand, free_temps, reshard
from ..core.registry import kernel, nondiff, primitive
from ..layout import Layout, split_sizes
from .sets import OVERSAMPLE, _counts, _exchange, _pieces

__all__: list[str] = []


def _rows(xp, a, dim):
    """``a`` as a C-contiguous (slices along ``dim``, rest) matrix (a view when ``dim`` is 0)."""
    n = a.shape[dim]
    rest = int(np.prod([s for i, s in enumerate(a.shape) if i != dim], dtype=np.int64))
    return xp.ascontiguousarray(xp.moveaxis(a, dim, 0)).reshape(n, rest)


def _lexorder(xp, m):
    """Stable lexicographic order of the rows of ``m`` (first column first)."""
    if not (m.shape[0] and m.shape[1]):
        return xp.arange(m.shape[0])
    return xp.lexsort(m.T[::-1])


def _starts(xp, m, perm):
    """Start mask of the runs of equal neighbouring rows of ``m[perm]`` (NaN != NaN), found
    in blocks of rows so that the sorted copy is never made whole."""
    n = perm.size
    new = xp.ones(n, dtype=bool)
    if n > 1 and not m.shape[1]:
        new[1:] = False
    step = max(1, (1 << 21) // max(1, m.shape[1] * m.itemsize))
    for i in range(0, n - 1 if m.shape[1] else 0, step):
        blk = m[perm[i : i + step + 1]]
        new[i + 1 : i + blk.shape[0]] = (blk[1:] != blk[:-1]).any(axis=1)
    return new


@kernel
def urows_local(xp, a, dim, nsample, inverse):
    """A shard's unique rows (sorted), their counts, a regular sample of them with their
    number, and (``inverse``) each slice's local unique id."""
    m = _rows(xp, a, dim)
    perm = _lexorder(xp, m)
    new = _starts(xp, m, perm)
    u, c = m[perm[new]], _counts(xp, new, perm.size)
    m = None  # a copy made by _rows is dropped before the next temporaries
    k = min(nsample, u.shape[0])
    sample = u[(xp.arange(1, k + 1) * u.shape[0]) // (k + 1)]
    out = (u, c, sample, xp.array([u.shape[0]], dtype=xp.int64))
    if inverse:
        inv = xp.empty(perm.size, dtype=xp.int64)
        inv[perm] = xp.cumsum(new, dtype=xp.int64) - 1
        out += (inv,)
    return out


@kernel
def urows_cuts(xp, u, splitters):
    """Number of unique rows before each (sorted) splitter row: a lexicographic
    ``searchsorted(side="left")``, by one sort of both with the splitters first on ties."""
    k, q = u.shape[0], splitters.shape[0]
    both = xp.concatenate([splitters.astype(u.dtype), u])
    flag = xp.concatenate([xp.zeros(q, xp.int8), xp.ones(k, xp.int8)])
    keys = (flag, *both.T[::-1]) if both.shape[1] else (flag,)
    pos = xp.empty(k + q, dtype=xp.int64)
    pos[xp.lexsort(keys)] = xp.arange(k + q)
    return (pos[:q] - xp.arange(q)).astype(xp.int64)


@kernel
def urows_merge(xp, *pieces, nvals, dtype, rest, dim, other, inverse):
    """Merge the unique rows and counts sent here (``nvals`` row pieces, then count pieces):
    the unique slices laid out with ``dim`` back in place, counts, their number, and
    (``inverse``) each incoming row's id here."""
    vals, cnts = pieces[:nvals], pieces[nvals:]
    v = xp.concatenate(vals) if vals else xp.empty((0, rest), dtype)
    c = xp.concatenate(cnts) if cnts else xp.empty(0, xp.int64)
    perm = _lexorder(xp, v)  # stable: a row's first occurrence stays its representative
    new = _starts(xp, v, perm)
    starts = xp.flatnonzero(new)
    tot = xp.add.reduceat(c[perm], starts) if perm.size else xp.empty(0, xp.int64)
    u = v[perm[new]].reshape((starts.size, *other))
    v = None
    u = xp.ascontiguousarray(xp.moveaxis(u, 0, dim))
    out = (u, tot.astype(xp.int64), xp.array([starts.size], dtype=xp.int64))
    if inverse:
        ids = xp.empty(perm.size, dtype=xp.int64)
        ids[perm] = xp.cumsum(new, dtype=xp.int64) - 1
        out += (ids,)
    return out


@kernel
def urows_inverse(xp, inv, *pieces, offsets):
    """Each slice's global id: its local unique's id, sent back by the destinations."""
    ids = [p + o for p, o in zip(pieces, offsets)]
    g = xp.concatenate(ids) if ids else xp.empty(0, xp.int64)
    return g[inv] if inv.size else xp.empty(0, xp.int64)


def _cut_along(lay, dim):
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


def _balanced(ex, op, workers, dim):
    """``op`` (cut along ``dim`` only, unevenly) moved to nearly equal cuts over ``workers``."""
    shape = op._layout.shape
    b = tuple(itertools.accumulate(split_sizes(shape[dim], len(workers)), initial=0))
    bounds = tuple(b if i == dim else (0, n) for i, n in enumerate(shape))
    lay = Layout.from_bounds(shape, bounds, workers)
    if lay == op._layout:
        return op
    out = reshard(ex, op, lay)
    free_temps(ex, list(zip(op._layout.workers, op._keys)))
    return out


def _splitters(samples, sizes, p):
    """``p - 1`` splitter rows from the shards' regular samples, each sample row weighted by
    the number of uniques it stands for."""
    tot = sum(sizes)
    pool = np.concatenate([s for s in samples if s.shape[0]])
    wts = np.concatenate(
        [np.full(s.shape[0], n / (s.shape[0] + 1)) for s, n in zip(samples, sizes)]
    )
    order = np.lexsort(pool.T[::-1]) if pool.shape[1] else np.arange(pool.shape[0])
    cum = np.cumsum(wts[order])
    targets = [tot * b / p for b in range(1, p)]
    return pool[order][np.minimum(np.searchsorted(cum, targets), pool.shape[0] - 1)]


@primitive("unique_rows", kernels=[urows_local, urows_cuts, urows_merge, urows_inverse])
def _unique_rows_plan(ex, x, dim, inverse=False, counts=False):
    """Unique slices along ``dim`` of a split ``x``: ``(values, inverse, counts)``, all
    sharded; reads samples, cut positions and result sizes on the driver."""
    lay = _cut_along(x._layout, dim)
    moved = lay != x._layout
    if moved:
        x = reshard(ex, x, lay)
    shards = lay.shards()
    p, dt, shape = len(shards), x._dtype.np.str, lay.shape
    other = tuple(n for i, n in enumerate(shape) if i != dim)
    rest = int(np.prod(other, dtype=np.int64))
    loc = []
    for j, (w, _, _) in enumerate(shards):
        ks = tuple(ex.new_key() for _ in range(5 if inverse else 4))
        ex.submit(
            w, "urows_local", (("k", x._keys[j], None),), ks,
            {"dim": dim, "nsample": OVERSAMPLE * p, "inverse": inverse}, ("unique", j),
        )  # fmt: skip
        loc.append(ks)
    if moved:  # the resharded copy is ours: its rows live on in the sorted uniques now
        free_temps(ex, list(zip(lay.workers, x._keys)))
    got = ex.fetch([(w, loc[j][i], None) for j, (w, _, _) in enumerate(shards) for i in (2, 3)])
    samples, sizes = got[0::2], [int(s[0]) for s in got[1::2]]
    ex.free_pairs([(w, loc[j][i]) for j, (w, _, _) in enumerate(shards) for i in (2, 3)])
    if sum(sizes) and p > 1:
        split = _splitters(samples, sizes, p)
        ck = [ex.new_key() for _ in range(p)]
        for j, (w, _, _) in enumerate(shards):
            ex.submit(w, "urows_cuts", (("k", loc[j][0], None),), (ck[j],), {"splitters": split})
        got = ex.fetch([(w, ck[j], None) for j, (w, _, _) in enumerate(shards)])
        ex.free_pairs([(w, ck[j]) for j, (w, _, _) in enumerate(shards)])
        cuts = [[0, *map(int, c), n] for c, n in zip(got, sizes)]
    else:
        cuts = [[0] + [n] * p for n in sizes]
    dest = [w for w, _, _ in shards]
    row = max(1, rest * x._dtype.itemsize)
    nvals = [0] * p  # rows and counts differ in size, so in their number of pieces

    def plan_of(b):
        vals, cnts = [], []
        for j in range(p):
            lo, hi = cuts[j][b : b + 2]
            vals += _pieces(ex, shards[j][0], dest[b], loc[j][0], lo, hi, row)
            cnts += _pieces(ex, shards[j][0], dest[b], loc[j][1], lo, hi, 8)
        nvals[b] = len(vals)
        return vals + cnts

    args = _exchange(ex, plan_of, p)
    mk = []
    for b in range(p):
        ks = tuple(ex.new_key() for _ in range(4 if inverse else 3))
        prm = {"nvals": nvals[b], "dtype": dt, "rest": rest, "dim": dim}
        ex.submit(
            dest[b], "urows_merge", tuple(args[b]), ks,
            {**prm, "other": other, "inverse": inverse}, ("unique", b),
        )  # fmt: skip
        mk.append(ks)
    # the merges hold what they were sent: the sources' uniques and counts can go now
    free_temps(ex, [(w, loc[j][i]) for j, (w, _, _) in enumerate(shards) for i in (0, 1)])
    nu = [int(a[0]) for a in ex.fetch([(dest[b], mk[b][2], None) for b in range(p)])]
    bnd = tuple(itertools.accumulate(nu, initial=0))
    vshape = tuple(bnd[-1] if i == dim else n for i, n in enumerate(shape))
    vb = tuple(bnd if i == dim else (0, n) for i, n in enumerate(vshape))
    workers = list(dict.fromkeys(dest))
    out = [_balanced(ex, Operand(Layout.from_bounds(vshape, vb, dest), x._dtype,
                                 [k[0] for k in mk]), workers, dim)]  # fmt: skip
    if inverse:
        # every destination sends each source the ids of the unique rows that source sent it
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
            [bnd[b] for b in range(p) for _ in _pieces(ex, 0, 0, 0, *starts[b][j : j + 2], 8)]
            for j in range(p)
        ]
        args = _exchange(ex, lambda j: plan[j], p)
        ik = []
        for j, (w, _, _) in enumerate(shards):
            k = ex.new_key()
            ex.submit(
                w, "urows_inverse", (("k", loc[j][4], None), *args[j]), (k,),
                {"offsets": offs[j]}, ("unique", j),
            )  # fmt: skip
            ik.append(k)
        ilay = Layout.from_bounds((shape[dim],), (lay.bounds[dim],), dest)
        out.append(Operand(ilay, D.int64, ik))
    if counts:
        clay = Layout.from_bounds((bnd[-1],), (bnd,), dest)
        out.append(_balanced(ex, Operand(clay, D.int64, [k[1] for k in mk]), workers, 0))
    if inverse:
        free_temps(ex, [(w, loc[j][4]) for j, (w, _, _) in enumerate(shards)])
    spent = [1] * (not counts) + [2] + [3] * inverse
    free_temps(ex, [(dest[b], mk[b][i]) for b in range(p) for i in spent])
    return tuple(out)


nondiff("unique_rows")
