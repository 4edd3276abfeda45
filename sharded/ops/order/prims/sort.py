"""Sorting: ``sort`` (values and indices), ``argsort``, ``msort`` and the permutation
primitive their gradient uses.

Along a dim that no shard cuts, every shard sorts its own lines. Along the split dim of a 1-d
tensor the planner runs a **sample sort** that partitions first and sorts once: each shard
sends the driver the sorted keys of a small random sample (``value + 1j * index``, exact for
every dtype but 64-bit integers, which use (value, index) records: the index breaks ties, so
keys are unique and the sort stable), the driver picks splitters at the input's chunk
boundaries (a driver wait), each shard groups its block by destination (a compare per
splitter; only elements equal to a splitter's value build keys to break the tie) and the
driver reads the group sizes (a second wait); the groups travel worker to worker in pieces
of at most ``ex.transfer_bytes`` (a worker's own group too, so that every group is freed
before the destinations sort), and each destination sorts what it got once: values alone,
or values with their global positions by one sort of packed uint64 keys
(:func:`..kernels.sort.packed_sort`, about a sort of the values plus two gathers). A small
rebalancing move gives the result the input's layout. ``sort_values`` (``msort`` without a
gradient) moves and sorts plain values. An n-d tensor split along the sorted dim is moved
to a layout split along another dim (an all-to-all transpose), sorted locally, moved back.

Ties keep the original order (the index is the secondary key), so every sort here is stable;
NaN sorts as the largest value (first when descending), as in torch.
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, align, free_temps, reshard
from ....core.dispatch import apply, as_tensor, is_tensor, placement
from ....core.registry import bind, kernel, nondiff, primitive, vjp
from ....errors import ArgumentTypeError
from ....layout import Layout, normalize_dim
from ....runtime.commands import Key, Transfer
from ..kernels.sort import sort_finish, sort_local, sort_sample, sort_split

__all__ = ["sort", "argsort", "msort"]

SortResult = collections.namedtuple("sort", ["values", "indices"])
SAMPLES = 4096  # random keys per shard: the destinations' sizes land within ~1 % of a target


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


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


def _sample_sort(ex, x, descending, index=True):
    """Sample sort of a 1-d tensor split into several shards (see the module doc): the
    values (``index=False``) or ``(values, indices)``, laid out like ``x``."""
    lay = x._layout
    shards = lay.shards()
    p, n = len(shards), lay.shape[0]
    dt = x._dtype.np.str
    sign = -1 if descending else 1
    samples = [ex.new_key() for _ in range(p)]
    for j, (w, offs, _) in enumerate(shards):
        ex.submit(
            w,
            "sort_sample",
            (Key(x._keys[j], None),),
            (samples[j],),
            {"goff": offs[0], "sign": sign, "nsample": SAMPLES},
            ("sort", j),
        )
    bounds = lay.bounds[0]
    # ascending-key ranks where each destination starts; descending fills from the end
    starts = [n - bounds[p - b] for b in range(p + 1)] if descending else list(bounds)
    got = ex.fetch([(shards[j][0], samples[j], None) for j in range(p)])  # driver wait
    ex.free_pairs([(shards[j][0], samples[j]) for j in range(p)])
    split, _ = _splitters(got, [sh[2][0] for sh in shards], starts[1:-1])
    if split is None:  # every shard is empty
        split = np.empty(0, dtype=got[0].dtype)
    # each source groups its block by destination; the driver reads the group sizes
    parts = 2 if index else 1  # values (and their global positions)
    groups, ck = [], [ex.new_key() for _ in range(p)]
    for j, (w, offs, _) in enumerate(shards):
        g = tuple(ex.new_key() for _ in range(parts))
        ex.submit(
            w,
            "sort_split",
            (Key(x._keys[j], None),),
            (*g, ck[j]),
            {"goff": offs[0], "sign": sign, "split": split, "p": p, "index": index},
            ("sort", j),
        )
        groups.append(g)
    counts = ex.fetch([(shards[j][0], ck[j], None) for j in range(p)])  # driver wait
    ex.free_pairs([(shards[j][0], ck[j]) for j in range(p)])
    # destination b (ascending key order) lands on output shard b, or p-1-b when descending;
    # every piece travels through an export, also a worker's own, so that the groups can be
    # freed before the destinations sort (the peak holds one copy of the data, not two)
    dest = [shards[p - 1 - b if descending else b][0] for b in range(p)]
    items = [x._dtype.itemsize, 8][:parts]
    step = max(1, ex.transfer_bytes // sum(items))
    req, plan = collections.defaultdict(list), []
    for b in range(p):
        pieces = []
        for j in range(p):
            off = np.concatenate([[0], np.cumsum(counts[j])])
            lo, hi = int(off[b]), int(off[b + 1])
            src = shards[j][0]
            for a in range(lo, hi, step):
                sl = (slice(a, min(hi, a + step)),)
                for key, item in zip(groups[j], items):
                    nb = (sl[0].stop - sl[0].start) * item
                    req[src].append((key, sl, nb))
                    if src != dest[b]:
                        ex.bytes_moved += nb
                    pieces.append(src)
        plan.append(pieces)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    free_temps(ex, [(shards[j][0], k) for j in range(p) for k in groups[j]])
    vk, ik, sizes = [None] * p, [None] * p, [0] * p
    for b in range(p):
        o = p - 1 - b if descending else b
        vk[o], ik[o] = ex.new_key(), ex.new_key()
        sizes[o] = int(sum(c[b] for c in counts))
        ex.submit(
            dest[b],
            "sort_finish",
            tuple(Transfer(next(handles[a])) for a in plan[b]),
            (vk[o], ik[o]) if index else (vk[o],),
            {"dtype": dt, "descending": descending, "index": index},
            ("sort", b),
        )
    cut = [0, *np.cumsum(sizes).tolist()]
    mid = Layout.from_bounds(lay.shape, (tuple(cut),), [shards[o][0] for o in range(p)])
    values = _settle(ex, Operand(mid, x._dtype, vk), lay)
    return (values, _settle(ex, Operand(mid, D.int64, ik), lay)) if index else values


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
        if type(a) is Key and (w, a.key) in made:
            keys.append(a.key)  # assembled for us already: take it over
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
            (Key(x._keys[j], None),),
            (v, i),
            {"dim": dim, "descending": descending},
            ("sort", j),
        )
        vk.append(v)
        ik.append(i)
    return Operand(lay, x._dtype, vk), Operand(lay, D.int64, ik)


def _sort_spec(x, dim, descending=False):
    return ((tuple(x.shape), x.dtype), (tuple(x.shape), D.int64))


@primitive("sort", kernels=[sort_sample, sort_split, sort_finish, sort_local], out_spec=_sort_spec)
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


@kernel
def sort_values_local(xp, a, dim, descending):
    """Every line of a block sorted along ``dim`` (held whole), values only."""
    if a.ndim == 0:
        return xp.array(a, copy=True)
    out = xp.sort(a, axis=dim)
    return xp.ascontiguousarray(xp.flip(out, axis=dim)) if descending else out


@primitive(
    "sort_values",
    kernels=[sort_values_local],
    out_spec=lambda x, dim, descending=False: (tuple(x.shape), x.dtype),
)
def _sort_values_plan(ex, x, dim, descending=False):
    """The values of ``sort`` alone (no indices: half the data to move and a plain sort of
    the values, not of value-index keys); laid out like ``x``."""
    lay = x._layout
    if lay.ndim == 1 and not lay.is_replicated and lay.grid[0] > 1:
        return _sample_sort(ex, x, descending, index=False)
    if lay.is_replicated or lay.ndim == 0 or lay.grid[dim] == 1:
        t, temps = x, []
    else:
        mid = _whole_dim_layout(lay, dim, ex.num_workers)
        t = reshard(ex, x, mid)
        temps = [(w, k) for (w, _, _), k in zip(mid.shards(), t._keys)]
    keys = []
    for j, (w, _, _) in enumerate(t._layout.shards()):
        k = ex.new_key()
        params = {"dim": dim, "descending": descending}
        ex.submit(w, "sort_values_local", (Key(t._keys[j], None),), (k,), params, ("sort", j))
        keys.append(k)
    free_temps(ex, temps)
    return _settle(ex, Operand(t._layout, x._dtype, keys), lay)


nondiff("sort_values")  # msort takes the indexed sort when its input needs a gradient


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
            (Key(g._keys[j], None), Key(idx._keys[j], None)),
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
                    plan[o].append(Key(key, sl))
                else:
                    req[src].append((key, sl, (hi - lo) * item))
                    ex.bytes_moved += (hi - lo) * item
                    plan[o].append(src)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    out = []
    for o, (w, _, shp) in enumerate(shards):
        args = [a if isinstance(a, tuple) else Transfer(next(handles[a])) for a in plan[o]]
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
                (Key(g._keys[j], None), Key(idx._keys[j], None)),
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
    return normalize_dim(dim, x.ndim)  # a 0-d tensor takes dim 0 or -1 (torch)


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
    # torch's parser: descending a bool, stable a bool or None (TypeError otherwise)
    if not isinstance(descending, (bool, np.bool_)) or not (
        stable is None or isinstance(stable, (bool, np.bool_))
    ):
        raise ArgumentTypeError(
            f"sort(): descending must be a bool and stable a bool or None, got {descending!r} "
            f"and {stable!r}"
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

    Without a gradient to record, no indices are computed: along the split dim of a 1-d
    tensor each worker sorts its share of the plain values once.

    Examples
    --------
    >>> import sharded as st
    >>> st.msort(st.tensor([[3, 1], [1, 2]])).tolist()
    [[1, 1], [3, 2]]
    """
    x = _tensor(input)
    if x.requires_grad:
        return sort(x, 0).values
    return apply("sort_values", x, 0, False)
