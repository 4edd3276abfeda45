"""``unique_consecutive``: runs of equal consecutive values (``dim=None``, the flattened input)
or slices along ``dim``, with inverse ids and run lengths, on any layout.

A slice along ``dim`` must be whole on one worker, so a tensor cut along another dim is
first resharded to cuts along ``dim`` only (worker to worker). Each shard then finds its own
runs; a run crosses a shard border when a shard's first slice equals the last slice of the
previous non-empty shard, which that shard is sent (one slice, worker to worker) and compares
itself. The driver reads four numbers a shard (runs, first run's length, joined or not) to
give each shard the global id of its first run and the length its last run gains from later
shards. As in torch, NaNs never compare equal: a slice holding a NaN starts a run of its own.
"""

from __future__ import annotations

import itertools

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps, reshard
from ....core.registry import kernel, nondiff, primitive
from ....layout import Layout
from ....runtime.commands import Key
from ..plan import (
    along,
    balanced,
    cut_along,
    exchange,
    one_copy,
    pieces,
    row_starts,
    rows_of,
    run_counts,
)

__all__: list[str] = []


@kernel
def uc_runs(xp, a, *prev, dim):
    """Where the runs of equal consecutive slices along ``dim`` of a block start, and
    ``[runs, first run's length, joined]``: joined when its first slice equals ``prev``,
    the last slice of the previous non-empty shard (none for the first one)."""
    m = rows_of(xp, a, dim)
    n, rest = m.shape
    new = row_starts(xp, lambda i, j: m[i:j], n, rest, m.itemsize)
    runs = xp.flatnonzero(new)
    first = (runs[1] if runs.size > 1 else n) if n else 0
    joined = bool(prev and n) and not bool((rows_of(xp, prev[0], dim)[0] != m[0]).any())
    return new, xp.array([runs.size, first, int(joined)], dtype=xp.int64)


@kernel
def uc_take(xp, a, new, dim, joined, add, base, inverse, counts):
    """The slices that start a run here (a first run that continues the previous shard's
    is left out), then (``counts``) the run lengths, the last one ``add`` longer (it
    continues into later shards), then (``inverse``) each slice's global run id."""
    out = (xp.take(a, xp.flatnonzero(new)[joined:], axis=dim),)
    if counts:
        c = run_counts(xp, new, new.size)[joined:]
        if c.size:
            c[-1] += add
        out += (c,)
    if inverse:  # a joined first run takes the previous shard's last id, base - 1
        ids = xp.cumsum(new, dtype=xp.int64)
        ids += base - 1 - joined
        out += (ids,)
    return out if len(out) > 1 else out[0]


@primitive("unique_consecutive", kernels=[uc_runs, uc_take])
def _uc_plan(ex, x, dim=0, inverse=False, counts=False):
    """Runs of equal consecutive slices along ``dim`` of ``x``: values (then inverse,
    counts), sharded along ``dim``; reads three numbers a shard on the driver."""
    x = one_copy(x)
    lay = cut_along(x._layout, dim)
    moved = lay != x._layout
    if moved:
        x = reshard(ex, x, lay)
    shards = lay.shards()
    p, shape, nd = len(shards), lay.shape, len(lay.shape)
    dest = [w for w, _, _ in shards]
    size = [shp[dim] for _, _, shp in shards]
    before, last = [None] * p, None  # each shard's previous non-empty shard
    for j in range(p):
        before[j], last = last, (j if size[j] else last)
    row = x._dtype.itemsize * int(np.prod([n for i, n in enumerate(shape) if i != dim]))

    def plan_of(j):
        i = before[j]
        if i is None or not size[j]:
            return []
        return list(pieces(ex, dest[i], dest[j], x._keys[i], size[i] - 1, size[i], row, dim, nd))

    args = exchange(ex, plan_of, p)
    runs = []
    for j, w in enumerate(dest):
        ks = (ex.new_key(), ex.new_key())
        ex.submit(
            w, "uc_runs", (Key(x._keys[j], None), *args[j]), ks, {"dim": dim},
            ("unique_consecutive", j),
        )  # fmt: skip
        runs.append(ks)
    info = [tuple(map(int, i)) for i in ex.fetch([(w, k[1], None) for w, k in zip(dest, runs)])]
    add, base = [0] * p, [0] * p
    owner, total = None, 0  # owner: the shard holding the start of the latest run
    for j, (n_runs, first, joined) in enumerate(info):
        base[j] = total
        if joined:
            add[owner] += first
        total += n_runs - joined
        if n_runs and not (joined and n_runs == 1):
            owner = j
    res = []  # per shard: values, counts, ids (as asked)
    for j, w in enumerate(dest):
        ks = tuple(ex.new_key() for _ in range(1 + counts + inverse))
        prm = {"dim": dim, "joined": info[j][2], "add": add[j], "base": base[j]}
        ex.submit(
            w, "uc_take", (Key(x._keys[j], None), Key(runs[j][0], None)), ks,
            {**prm, "inverse": inverse, "counts": counts}, ("unique_consecutive", j),
        )  # fmt: skip
        res.append(ks)
    free_temps(ex, [(w, k) for w, ks in zip(dest, runs) for k in ks])
    if moved:
        free_temps(ex, list(zip(dest, x._keys)))
    bnd = tuple(itertools.accumulate((n - joined for n, _, joined in info), initial=0))
    vshape = tuple(bnd[-1] if i == dim else n for i, n in enumerate(shape))
    workers = list(dict.fromkeys(dest))
    vals = Operand(along(vshape, dim, bnd, dest), x._dtype, [k[0] for k in res])
    out = [balanced(ex, vals, workers, dim)]
    if inverse:
        ilay = lay if nd == 1 else Layout.from_bounds((shape[dim],), (lay.bounds[dim],), dest)
        out.append(Operand(ilay, D.int64, [k[-1] for k in res]))
    if counts:
        clay = Layout.from_bounds((bnd[-1],), (bnd,), dest)
        out.append(balanced(ex, Operand(clay, D.int64, [k[1] for k in res]), workers))
    return tuple(out)


nondiff("unique_consecutive")
