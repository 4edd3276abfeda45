"""The driver side of the sample sort of a 1-d tensor split into several shards, in two
stages (``sort``, ``argsort`` and ``msort`` along a split dim; :mod:`.prims.sort`).

:func:`split` partitions first: each shard sends the driver the sorted keys of a small random
sample (``value + 1j * index``, exact for every dtype but 64-bit integers, which use
(value, index) records: the index breaks ties, so keys are unique and the sort stable), the
driver picks splitters at the input's chunk boundaries (a driver wait), each shard groups its
block by destination, in position order inside a group (a compare per splitter; only
elements equal to a splitter's value build keys to break the tie), with their global
positions if asked, and the driver reads the group sizes (a second wait). The groups hold
a copy of the input's data: from here on the input is not read again.

:func:`finish` moves and sorts: the groups travel worker to worker in pieces of at most
``ex.transfer_bytes`` (a destination reads its own worker's groups in place), each
destination sorts what it got once (values alone: a plain sort
in place; values and positions: one sort of packed uint64 keys) and a small move gives the
result the input's layout: each shard copies the runs' slices its range covers into a block
of its own, only the runs' ends travel. :func:`finish` may run more than once on the same
groups (the values, later the indices); :func:`release` frees them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps
from ....runtime.commands import Key
from ..kernels.sort import run_capacity
from . import exchange, pieces

SAMPLES = 4096  # random keys per shard: the destinations' sizes land within ~1 % of a target


@dataclasses.dataclass
class Groups:
    """What :func:`split` leaves on the workers: per source shard the keys of its value
    groups and (``index``) position groups or (``"codes"``) every element's destination, and
    the group sizes (source x destination)."""

    x: Operand  # (its layout and dtype; its blocks are not read again)
    descending: bool
    index: bool | str  # False, True or "codes"
    keys: list  # per source shard: (values key, [positions or codes key])
    counts: list  # per source shard: elements per destination
    live: bool = True


def _splitters(samples, sizes, targets):
    """Keys whose estimated global ranks are closest to ``targets`` (one per inner cut): each
    sample of shard ``j`` stands for ``n_j / (m_j + 1)`` keys."""
    if not any(s.size for s in samples):
        return None
    keys = np.concatenate([s for s in samples if s.size])
    w = np.concatenate(
        [np.full(s.size, n / (s.size + 1)) for s, n in zip(samples, sizes) if s.size]
    )
    order = np.argsort(keys, kind="stable")
    keys, cum = keys[order], np.cumsum(w[order])
    pick = np.minimum(np.searchsorted(cum, np.asarray(targets, dtype=np.float64)), keys.size - 1)
    return keys[pick]


def split(ex, x, descending, index):
    """Stage one (see the module doc): the input's blocks grouped by destination; ``index``
    as for the ``sort_split`` kernel (``"codes"``: the positions are made, from an eighth
    of their bytes, only if :func:`finish` is asked for indices)."""
    lay = x._layout
    shards = lay.shards()
    p, n = len(shards), lay.shape[0]
    sign = -1 if descending else 1
    samples = [ex.new_key() for _ in range(p)]
    for j, (w, offs, _) in enumerate(shards):
        params = {"goff": offs[0], "sign": sign, "nsample": SAMPLES}
        ex.submit(w, "sort_sample", (Key(x._keys[j], None),), (samples[j],), params, ("sort", j))
    bounds = lay.bounds[0]
    # ascending-key ranks where each destination starts; descending fills from the end
    starts = [n - bounds[p - b] for b in range(p + 1)] if descending else list(bounds)
    got = ex.fetch([(shards[j][0], samples[j], None) for j in range(p)])  # driver wait
    ex.free_pairs([(shards[j][0], samples[j]) for j in range(p)])
    cuts = _splitters(got, [sh[2][0] for sh in shards], starts[1:-1])
    if cuts is None:  # every shard is empty
        cuts = np.empty(0, dtype=got[0].dtype)
    keys, ck = [], [ex.new_key() for _ in range(p)]
    for j, (w, offs, _) in enumerate(shards):
        g = tuple(ex.new_key() for _ in range(2 if index else 1))
        ex.submit(
            w,
            "sort_split",
            (Key(x._keys[j], None),),
            (*g, ck[j]),
            {"goff": offs[0], "sign": sign, "split": cuts, "p": p, "index": index},
            ("sort", j),
        )
        keys.append(g)
    counts = ex.fetch([(shards[j][0], ck[j], None) for j in range(p)])  # driver wait
    ex.free_pairs([(shards[j][0], ck[j]) for j in range(p)])
    keep = Operand(lay, x._dtype, x._keys)
    return Groups(keep, descending, index, keys, [np.asarray(c).tolist() for c in counts])


def release(ex, g: Groups) -> None:
    """Free the groups (once; later calls do nothing)."""
    if g.live:
        g.live = False
        shards = g.x._layout.shards()
        free_temps(ex, [(shards[j][0], k) for j, ks in enumerate(g.keys) for k in ks])


def finish(ex, g: Groups, want):
    """Stage two (see the module doc) on live groups: ``want`` is ``"values"``,
    ``"indices"`` (groups made with ``index``) or ``"both"``; returns the Operand(s), laid
    out like the input. Values only move the value groups and sort them plainly."""
    lay, dtype = g.x._layout, g.x._dtype
    shards = lay.shards()
    p, descending = len(shards), g.descending
    index = want != "values"
    assert g.live and (g.index or not index), "finish needs live groups (with positions)"
    parts = 2 if index else 1  # values (and their global positions)
    keys, made = g.keys, []
    if index and g.index == "codes":  # the position groups, from every element's destination
        keys = []
        for j, (w, offs, _) in enumerate(shards):
            k = ex.new_key()
            params = {"goff": offs[0], "p": p}
            ex.submit(w, "sort_positions", (Key(g.keys[j][1], None),), (k,), params, ("sort", j))
            keys.append((g.keys[j][0], k))
            made.append((w, k))
    items = [dtype.itemsize, 8][:parts]
    step = max(1, ex.transfer_bytes // sum(items))
    offs = [np.concatenate([[0], np.cumsum(c)]).astype(np.int64).tolist() for c in g.counts]

    # destination b (ascending key order) makes run o = b, or p-1-b when descending, on
    # output shard o's worker; pieces of another worker's groups travel through an export,
    # a worker's own are read in place (its groups are freed after the destinations' sorts
    # in its queue). Exporting its own pieces too cost a copy through Ray's object store,
    # mapped into the worker again: on 1 worker x 2 threads every piece of an argsort made
    # that round trip (0.43-0.53 s against 0.24-0.25 s read in place)
    def plan_of(o):  # bounded slices; with indices (values, positions) pairs
        b = p - 1 - o if descending else o
        dst, out = shards[o][0], []
        for j, (src, _, _) in enumerate(shards):
            lo, hi = offs[j][b : b + 2]
            if src == dst and hi > lo:
                out += [Key(k, (slice(lo, hi),)) for k in keys[j][:parts]]
                continue
            for a in range(lo, hi, step):
                sl = (slice(a, min(hi, a + step)),)
                out += [(src, k, sl, (sl[0].stop - a) * it) for k, it in zip(keys[j], items)]
        return out

    args = exchange(ex, plan_of, p, [sh[0] for sh in shards])
    runs, sizes = [], []
    for o, (w, _, shp) in enumerate(shards):
        b = p - 1 - o if descending else o
        sizes.append(int(sum(c[b] for c in g.counts)))
        ks = tuple(ex.new_key() for _ in range(4 if index else 1))
        params = {"dtype": dtype.np_str, "descending": descending, "index": index,
                  "cap": run_capacity(shp[0])}  # fmt: skip
        ex.submit(w, "sort_finish", tuple(args[o]), ks, params, ("sort", o))
        if index:
            ex.free(w, list(ks[2:]))  # the scratch blocks, back to the worker's pool
        runs.append(ks[:parts])
    free_temps(ex, made)  # (after the sorts: a worker's own pieces are read in place)
    args = None
    out = []
    for i, dt in enumerate((dtype, D.int64)[:parts]):
        if i == 0 and want == "indices":  # (the values were made on the way)
            free_temps(ex, [(sh[0], r[0]) for sh, r in zip(shards, runs)])
        else:
            out.append(Operand(lay, dt, _settle_runs(ex, [r[i] for r in runs], sizes, lay, dt)))
    return out[0] if len(out) == 1 else tuple(out)


def _settle_runs(ex, runs, sizes, lay, dtype):
    """The keys of ``lay``'s shards built from the sorted runs (``runs[o]`` on output shard
    ``o``'s worker, its first ``sizes[o]`` elements in order): each shard copies the slices
    of the runs its range covers into a block of its own (from the pool: the shard's size
    repeats), the runs' ends travel to the neighbours; the runs are freed."""
    shards = lay.shards()
    p = len(shards)
    cut = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64).tolist()

    def plan_of(s):
        lo, hi = lay.bounds[0][s], lay.bounds[0][s + 1]
        out = []
        for o in range(p):
            a, b = max(lo, cut[o]), min(hi, cut[o + 1])
            if a < b:
                w = shards[o][0]
                out += pieces(ex, w, shards[s][0], runs[o], a - cut[o], b - cut[o], dtype.itemsize)
        return out

    args = exchange(ex, plan_of, p, [sh[0] for sh in shards])
    keys = []
    for s, (w, _, shp) in enumerate(shards):
        k = ex.new_key()
        params = {"n": shp[0], "dtype": dtype.np_str}
        ex.submit(w, "sort_settle", tuple(args[s]), (k,), params, ("settle", s))
        keys.append(k)
    free_temps(ex, [(sh[0], k) for sh, k in zip(shards, runs)])
    return keys


def sample_sort(ex, x, descending, want):
    """Both stages at once: ``want`` as for :func:`finish`."""
    g = split(ex, x, descending, index=want != "values")
    try:
        return finish(ex, g, want)
    finally:
        release(ex, g)
