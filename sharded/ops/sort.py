"""Sorting: ``sort`` (values and indices), ``argsort``, ``msort`` and the permutation
primitive their gradient uses.

Along a dim that no shard cuts, every shard sorts its own lines. Along the split dim of a 1-d
tensor the planner runs a **sample sort**: each shard sorts its block into keys that carry
the global index (``value + 1j * index`` for every dtype exact in float64: one lexicographic
sort gives values, indices and stability at once; a (value, index) record for int64), keeps a
regular sample, the driver reads the tiny samples (a driver wait, acceptable for this
data-dependent op), picks splitters at the input's chunk boundaries, reads the per-shard cut
positions, and every shard sends each destination the slice of its sorted keys in that
destination's range, worker to worker in pieces of at most ``ex.transfer_bytes``; each
destination merges its runs. A small rebalancing move then gives the result the input's
layout. An n-d tensor split along the sorted dim is moved to a layout split along another dim
(an all-to-all transpose), sorted locally and moved back.

Ties keep the original order (the index is the secondary key), so every sort here is stable;
NaN sorts as the largest value (first when descending), as in torch.
"""

from __future__ import annotations

import collections

import numpy as np

from .. import dtypes as D
from ..core.dataflow import Operand, align, free_temps, reshard
from ..core.dispatch import apply, as_tensor, is_tensor, placement
from ..core.registry import bind, kernel, primitive, vjp
from ..errors import ArgumentError
from ..layout import Layout, normalize_dim

__all__ = ["sort", "argsort", "msort"]

SortResult = collections.namedtuple("sort", ["values", "indices"])
OVERSAMPLE = 32  # samples per shard per destination: splitters land within ~3 % of a target


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


# ------------------------------------------------------------------------- key kernels
def _make_keys(xp, a, goff, sign):
    """Sort keys of 1-d ``a`` whose global positions start at ``goff``; ``sign=-1`` makes the
    index descend among equal values (a descending sort is the reverse of that order)."""
    if a.dtype == np.int64:  # not exact in float64: a (value, index) record, compared in order
        k = np.empty(a.size, dtype=[("v", "<i8"), ("g", "<i8")])
        k["v"], k["g"] = a, xp.arange(goff, goff + a.size, dtype=xp.int64) * sign
        return k
    k = xp.empty(a.size, dtype=xp.complex128)
    k.real = a
    k.imag = xp.arange(sign * goff, sign * (goff + a.size), sign, dtype=xp.float64)
    return k


def _decode(xp, k, dtype, descending):
    if descending:
        k = k[::-1]
    if k.dtype.names:
        return xp.array(k["v"], dtype=dtype), xp.abs(k["g"])
    g = k.imag.astype(xp.int64)
    if descending:
        xp.negative(g, out=g)
    return k.real.astype(dtype), g


@kernel
def sort_keys(xp, a, goff, sign, nsample):
    """Sorted keys of a 1-d block and a regular sample of them (for the splitters)."""
    k = xp.sort(_make_keys(xp, a.reshape(-1), goff, sign))
    m = min(nsample, k.size)
    pos = (xp.arange(1, m + 1) * k.size) // (m + 1)
    return k, k[pos]


@kernel
def sort_cuts(xp, k, splitters):
    """Positions of ``splitters`` in sorted keys ``k`` (where each destination's range starts)."""
    return xp.searchsorted(k, splitters, side="left").astype(xp.int64)


@kernel
def sort_merge(xp, *pieces, dtype, descending, template):
    """Merge sorted runs of keys into this destination's sorted ``(values, indices)``."""
    if not pieces:
        k = template[:0]
    elif len(pieces) == 1:
        k = pieces[0]
    else:  # a stable (merge) sort finds the runs and merges them, in place
        k = xp.concatenate(pieces)
        k.sort(kind="stable")
    return _decode(xp, k, dtype, descending)


@kernel
def sort_local(xp, a, dim, descending):
    """Stable sort of every line of a block along ``dim`` (which the block holds whole)."""
    if a.ndim == 0:
        return xp.array(a, copy=True), xp.zeros((), xp.int64)
    if descending:  # the reverse of an ascending sort of the flipped block: ties keep order
        r = xp.flip(a, axis=dim)
        idx = xp.flip(xp.argsort(r, axis=dim, kind="stable"), axis=dim)
        idx = a.shape[dim] - 1 - idx
    else:
        idx = xp.argsort(a, axis=dim, kind="stable")
    return xp.take_along_axis(a, idx, axis=dim), idx.astype(xp.int64)


# ---------------------------------------------------------------------------- planners
def _splitters(samples, sizes, targets):
    """Keys whose estimated global ranks are closest to ``targets`` (one per inner cut): each
    sample of shard ``j`` stands for ``n_j / (m_j + 1)`` keys."""
    if not any(s.size for s in samples):
        return None, None
    keys = np.concatenate([s for s in samples if s.size])
    w = np.concatenate(
        [np.full(s.size, n / (s.size + 1)) for s, n in zip(samples, sizes) if s.size]
    )
    order = np.argsort(keys, kind="stable")
    keys, cum = keys[order], np.cumsum(w[order])
    pick = np.minimum(np.searchsorted(cum, np.asarray(targets, dtype=np.float64)), keys.size - 1)
    return keys[pick], keys


def _sample_sort(ex, x, descending):
    """Sample sort of a 1-d tensor split into several shards (see the module doc)."""
    lay = x._layout
    shards = lay.shards()
    p, n = len(shards), lay.shape[0]
    dt = x._dtype.np.str
    sign = -1 if descending else 1
    keys, samples = [], []
    for j, (w, offs, _) in enumerate(shards):
        k, s = ex.new_key(), ex.new_key()
        ex.submit(
            w,
            "sort_keys",
            (("k", x._keys[j], None),),
            (k, s),
            {"goff": offs[0], "sign": sign, "nsample": OVERSAMPLE * p},
            ("sort", j),
        )
        keys.append(k)
        samples.append(s)
    bounds = lay.bounds[0]
    # ascending-key ranks where each destination starts; descending fills from the end
    starts = [n - bounds[p - b] for b in range(p + 1)] if descending else list(bounds)
    got = ex.fetch([(shards[j][0], samples[j], None) for j in range(p)])  # driver wait
    ex.free_pairs([(shards[j][0], samples[j]) for j in range(p)])
    split, pool = _splitters(got, [sh[2][0] for sh in shards], starts[1:-1])
    if pool is None:  # every shard is empty
        cuts = [[0] * (p + 1) for _ in range(p)]
    else:
        ck = [ex.new_key() for _ in range(p)]
        for j, (w, _, _) in enumerate(shards):
            ex.submit(w, "sort_cuts", (("k", keys[j], None),), (ck[j],), {"splitters": split})
        got = ex.fetch([(shards[j][0], ck[j], None) for j in range(p)])  # driver wait
        ex.free_pairs([(shards[j][0], ck[j]) for j in range(p)])
        cuts = [[0, *map(int, c), shards[j][2][0]] for j, c in enumerate(got)]
    # destination b (ascending key order) lands on output shard b, or p-1-b when descending
    dest = [shards[p - 1 - b if descending else b][0] for b in range(p)]
    item = 16  # bytes per key: a complex128 or an (int64, int64) record
    req, plan = collections.defaultdict(list), []
    for b in range(p):
        pieces = []
        for j in range(p):
            lo, hi = cuts[j][b], cuts[j][b + 1]
            step = max(1, ex.transfer_bytes // item)
            for a in range(lo, hi, step):
                sl = (slice(a, min(hi, a + step)),)
                src = shards[j][0]
                if src == dest[b]:
                    pieces.append(("k", keys[j], sl))
                else:
                    nb = (sl[0].stop - sl[0].start) * item
                    req[src].append((keys[j], sl, nb))
                    ex.bytes_moved += nb
                    pieces.append(src)
        plan.append(pieces)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    template = np.empty(0, dtype=_make_keys(np, np.empty(0, dt), 0, 1).dtype)
    vk, ik, sizes = [None] * p, [None] * p, [0] * p
    for b in range(p):
        args = [a if isinstance(a, tuple) else ("x", next(handles[a])) for a in plan[b]]
        o = p - 1 - b if descending else b
        vk[o], ik[o] = ex.new_key(), ex.new_key()
        sizes[o] = sum(c[b + 1] - c[b] for c in cuts)
        ex.submit(
            dest[b],
            "sort_merge",
            tuple(args),
            (vk[o], ik[o]),
            {"dtype": dt, "descending": descending, "template": template},
            ("sort", b),
        )
    free_temps(ex, [(shards[j][0], keys[j]) for j in range(p)])
    cut = [0]
    for s in sizes:
        cut.append(cut[-1] + s)
    mid = Layout.from_bounds(lay.shape, (tuple(cut),), [shards[o][0] for o in range(p)])
    return _settle(ex, Operand(mid, x._dtype, vk), lay), _settle(ex, Operand(mid, D.int64, ik), lay)


def _settle(ex, op, lay):
    """``op`` moved to ``lay`` (the rebalancing step), its own blocks freed. A block that
    already sits on its worker stays a view of it (no copy); only the boundary slices
    travel."""
    if op._layout == lay:
        return op
    args, temps = align(ex, op, lay)
    made = {(w, k) for w, k in temps}
    keys = []
    for s, ((w, _, shp), a) in enumerate(zip(lay.shards(), args)):
        if a[0] == "k" and (w, a[1]) in made:
            keys.append(a[1])  # assembled for us already: take it over
            continue
        k = ex.new_key()
        ex.submit(w, "reshape", (a,), (k,), {"shape": shp}, label=("settle", s))
        keys.append(k)
    free_temps(ex, [(w, k) for w, k in temps if k not in keys])
    free_temps(ex, [(w, k) for (w, _, _), k in zip(op._layout.shards(), op._keys)])
    return Operand(lay, op._dtype, keys)


def _whole_dim_layout(lay, dim, num_workers):
    """A layout of the same shape with ``dim`` whole, split along the largest other dim."""
    others = [d for d in range(lay.ndim) if d != dim]
    d2 = max(others, key=lambda d: lay.shape[d])
    return Layout(dim=d2).bind(lay.shape, num_workers)


def _local(ex, x, dim, descending):
    lay = x._layout
    vk, ik = [], []
    for j, (w, _, _) in enumerate(lay.shards()):
        v, i = ex.new_key(), ex.new_key()
        ex.submit(
            w,
            "sort_local",
            (("k", x._keys[j], None),),
            (v, i),
            {"dim": dim, "descending": descending},
            ("sort", j),
        )
        vk.append(v)
        ik.append(i)
    return Operand(lay, x._dtype, vk), Operand(lay, D.int64, ik)


def _sort_spec(x, dim, descending=False):
    return ((tuple(x.shape), x.dtype), (tuple(x.shape), D.int64))


@primitive("sort", kernels=[sort_keys, sort_cuts, sort_merge, sort_local], out_spec=_sort_spec)
def _sort_plan(ex, x, dim, descending=False):
    """``(values, indices)`` of a stable sort along ``dim``, laid out like ``x``."""
    lay = x._layout
    if lay.is_replicated or lay.ndim == 0 or lay.grid[dim] == 1:
        return _local(ex, x, dim, descending)
    if lay.ndim == 1:
        return _sample_sort(ex, x, descending)
    mid = _whole_dim_layout(lay, dim, ex.num_workers)
    t = reshard(ex, x, mid)
    v, i = _local(ex, t, dim, descending)
    free_temps(ex, [(w, k) for (w, _, _), k in zip(mid.shards(), t._keys)])
    return _settle(ex, v, lay), _settle(ex, i, lay)


@vjp("sort", save_out=(1,))  # the indices: the gradient goes back to where each value was
def _sort_vjp(gs, node):
    x, dim = node.args[:2]
    idx = node.saved["out"][1]
    return (apply("unpermute", gs[0], idx, dim),) + (None,) * (len(node.args) - 1)


# -------------------------------------------------------------------------- unpermute
@kernel
def unpermute_local(xp, g, idx, dim):
    """``out`` with ``out[..., idx[..., i], ...] = g[..., i, ...]`` along ``dim``."""
    out = xp.empty_like(g)
    if g.ndim == 0:
        return xp.array(g, copy=True)
    xp.put_along_axis(out, idx, g, axis=dim)
    return out


@kernel
def unpermute_route(xp, g, idx, bounds):
    """Values of a 1-d block grouped by the shard that owns their target index, with
    shard-local target positions and the count per owner (read by the driver)."""
    b = xp.asarray(bounds)
    owner = xp.searchsorted(b, idx, side="right") - 1
    order = xp.argsort(owner, kind="stable")
    counts = xp.bincount(owner, minlength=len(bounds) - 1).astype(xp.int64)
    return g[order], (idx - b[owner])[order], counts


@kernel
def unpermute_place(xp, *pieces, n, dtype):
    """A block of ``n`` built from ``(values, positions)`` piece pairs."""
    out = xp.empty(n, dtype=dtype)
    for v, pos in zip(pieces[0::2], pieces[1::2]):
        out[pos] = v
    return out


def _unpermute_1d(ex, g, idx):
    lay = g._layout
    shards = lay.shards()
    p = len(shards)
    # owners by their start; an empty shard owns nothing (its start equals the next one's)
    bounds = np.asarray(lay.bounds[0], dtype=np.int64)
    keys = []
    for j, (w, _, _) in enumerate(shards):
        ks = (ex.new_key(), ex.new_key(), ex.new_key())
        ex.submit(
            w,
            "unpermute_route",
            (("k", g._keys[j], None), ("k", idx._keys[j], None)),
            ks,
            {"bounds": bounds},
            ("unpermute", j),
        )
        keys.append(ks)
    counts = ex.fetch([(shards[j][0], keys[j][2], None) for j in range(p)])  # driver wait
    req, plan = collections.defaultdict(list), [[] for _ in range(p)]
    for j, (src, _, _) in enumerate(shards):
        off = np.concatenate([[0], np.cumsum(counts[j])])
        for o in range(p):
            lo, hi = int(off[o]), int(off[o + 1])
            if lo == hi:
                continue
            for key, item in ((keys[j][0], g._dtype.itemsize), (keys[j][1], 8)):
                sl = (slice(lo, hi),)
                if src == shards[o][0]:
                    plan[o].append(("k", key, sl))
                else:
                    req[src].append((key, sl, (hi - lo) * item))
                    ex.bytes_moved += (hi - lo) * item
                    plan[o].append(src)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    out = []
    for o, (w, _, shp) in enumerate(shards):
        args = [a if isinstance(a, tuple) else ("x", next(handles[a])) for a in plan[o]]
        k = ex.new_key()
        ex.submit(
            w,
            "unpermute_place",
            tuple(args),
            (k,),
            {"n": shp[0], "dtype": g._dtype.np.str},
            ("unpermute", o),
        )
        out.append(k)
    free_temps(ex, [(shards[j][0], k) for j in range(p) for k in keys[j]])
    return Operand(lay, g._dtype, out)


@primitive(
    "unpermute",
    kernels=[unpermute_local, unpermute_route, unpermute_place],
    out_spec=lambda g, idx, dim: (tuple(g.shape), g.dtype),
)
def _unpermute_plan(ex, g, idx, dim):
    """``out`` with ``out[..., idx[..., i], ...] = g[..., i, ...]`` along ``dim``, where every
    line of ``idx`` is a permutation (the gradient of a sort); laid out like ``idx``."""
    lay = idx._layout
    temps = []
    if g._layout != lay:
        g = reshard(ex, g, lay)
        temps += [(w, k) for (w, _, _), k in zip(lay.shards(), g._keys)]
    if lay.is_replicated or lay.ndim == 0 or lay.grid[dim] == 1:
        out = []
        for j, (w, _, _) in enumerate(lay.shards()):
            k = ex.new_key()
            ex.submit(
                w,
                "unpermute_local",
                (("k", g._keys[j], None), ("k", idx._keys[j], None)),
                (k,),
                {"dim": dim},
                ("unpermute", j),
            )
            out.append(k)
        res = Operand(lay, g._dtype, out)
    elif lay.ndim == 1:
        res = _unpermute_1d(ex, g, idx)
    else:
        mid = _whole_dim_layout(lay, dim, ex.num_workers)
        gm, im = reshard(ex, g, mid), reshard(ex, idx, mid)
        r = _unpermute_plan(ex, gm, im, dim)
        for t in (gm, im):
            free_temps(ex, [(w, k) for (w, _, _), k in zip(mid.shards(), t._keys)])
        res = _settle(ex, r, lay)
    free_temps(ex, temps)
    return res


@vjp("unpermute", saves=(1,))
def _unpermute_vjp(gs, node):
    # out = scatter(g, idx) so d g = gather(gout, idx) = scatter(gout, inverse(idx)), and the
    # inverse permutation is the scatter of the positions themselves
    _, idx, dim = node.args
    n = idx.shape[dim]
    shape = [1] * idx.ndim
    shape[dim] = n
    pos = apply("arange", placement((n,)), 0, 1, D.int64).reshape(shape) + idx * 0
    inv = apply("unpermute", pos, idx, dim)
    return (apply("unpermute", gs[0], inv, dim), None, None)


# ------------------------------------------------------------------------ public names
def _dim(x, dim):
    return normalize_dim(dim, x.ndim) if x.ndim else 0


@bind("sort", prim="sort")
def sort(input, dim=-1, descending=False, stable=False):
    """Sort along ``dim``: ``(values, indices)`` (a namedtuple, as torch's).

    Every sort here is stable (``stable=True`` costs nothing extra): equal values keep their
    order; NaN is the largest value. Along the split dim of a 1-d tensor this is a sample
    sort that reads a few samples and cut positions on the driver (two short waits); the
    result keeps ``input``'s layout.

    Examples
    --------
    >>> import sharded as st
    >>> r = st.sort(st.tensor([3., 1., 2.]), descending=True)
    >>> r.values.tolist(), r.indices.tolist()
    ([3.0, 2.0, 1.0], [0, 2, 1])
    """
    if not isinstance(descending, (bool, np.bool_)) or not isinstance(stable, (bool, np.bool_)):
        raise ArgumentError(
            f"sort(): descending and stable must be bools, got {descending!r} and {stable!r}"
        )
    x = _tensor(input)
    v, i = apply("sort", x, _dim(x, dim), bool(descending))
    return SortResult(v, i)


@bind("argsort", prim="sort")
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (``sort(...).indices``).

    Examples
    --------
    >>> import sharded as st
    >>> st.argsort(st.tensor([3, 1, 2])).tolist()
    [1, 2, 0]
    """
    return sort(input, dim, descending, stable).indices


@bind("msort", prim="sort")
def msort(input):
    """Values sorted along the first dim (``sort(input, dim=0).values``).

    Examples
    --------
    >>> import sharded as st
    >>> st.msort(st.tensor([[3, 1], [1, 2]])).tolist()
    [[1, 1], [3, 2]]
    """
    return sort(input, 0).values
