"""``unique`` of 1-d values (the flattened input of ``unique(dim=None)``): sorted unique values,
inverse ids and counts, by the sample-sort exchange of :mod:`..plan`.

Each shard sorts its block and keeps its unique values and counts (``unique_local``); the
destinations merge the sorted runs they are sent and add up the counts (``unique_merge``).
As in torch, NaNs never compare equal: every NaN is its own value (sorted last).
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps
from ....core.registry import kernel, nondiff, primitive
from ....layout import Layout
from ..plan import balanced, one_copy, run_counts, run_starts, sample_exchange, unpooled

__all__: list[str] = []


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
    m = run_starts(xp, s)
    u, c = s[m], run_counts(xp, m, s.size)
    k = min(nsample, u.size)
    sample = u[(xp.arange(1, k + 1) * u.size) // (k + 1)]
    out = (*unpooled(u, c), sample, xp.array([u.size], dtype=xp.int64))
    if inverse:  # the run ids reuse the sorted copy's memory when it fits (peak: 3 blocks)
        ids = xp.cumsum(m, out=s if s.dtype == xp.int64 else None, dtype=xp.int64)
        s = None
        ids -= 1
        inv = xp.empty(a.size, dtype=xp.int64)
        inv[perm] = ids
        out += unpooled(inv)
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
    perm = xp.argsort(v, kind="stable")  # merges the sorted runs, first occurrence first
    s = v[perm]
    v = None  # each temporary goes as soon as the next is made (the pieces are the caller's)
    m = run_starts(xp, s)
    u = s[m]
    s = None
    ids = xp.empty(perm.size if inverse else 0, dtype=xp.int64)
    if inverse:
        run = xp.cumsum(m, dtype=xp.int64)
        run -= 1
        ids[perm] = run
        run = None
    c = xp.concatenate(cnts) if cnts else xp.empty(0, xp.int64)
    xp.take(c, perm, out=c)  # a copy: take buffers when out overlaps its input
    perm = None
    starts = xp.flatnonzero(m)
    tot = xp.add.reduceat(c, starts) if c.size else xp.empty(0, xp.int64)
    out = (*unpooled(u, tot), xp.array([u.size], dtype=xp.int64))
    return (*out, *unpooled(ids)) if inverse else out


@primitive("unique", kernels=[unique_local, unique_cuts, unique_merge])
def _unique_plan(ex, x, inverse=False, counts=False):
    """Sorted unique values of 1-d ``x`` (then inverse ids laid out like ``x``, then counts,
    as asked); reads samples, cut positions and result sizes on the driver."""
    x = one_copy(x)
    shards = x._layout.shards()
    names = ("unique_local", "unique_cuts", "unique_merge")
    params = ({}, {"dtype": x._dtype.np_str})
    merged, bounds, ids = sample_exchange(
        ex, shards, x._keys, names, params, x._dtype.itemsize, inverse
    )
    dest = [w for w, _, _ in shards]
    mid = Layout.from_bounds((bounds[-1],), (bounds,), dest)
    out = [balanced(ex, Operand(mid, x._dtype, [k[0] for k in merged]), dest)]
    if inverse:
        out.append(Operand(x._layout, D.int64, ids))
    if counts:
        out.append(balanced(ex, Operand(mid, D.int64, [k[1] for k in merged]), dest))
    else:
        free_temps(ex, [(w, k[1]) for w, k in zip(dest, merged)])
    return tuple(out)


nondiff("unique")
