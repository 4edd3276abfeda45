"""The chunk -> combine tree: reductions planned over the block grid (Dask style).

Each shard reduces locally (a *chunk* kernel: keepdims partials). Shards that share their
coordinates along the kept dims form a *group*; if the reduced dims are not split, a group is
one shard and nothing moves. Otherwise partials are first combined on each worker, then
across workers in a tree of fan-in 8. A group's result lands on the worker of its first
shard, so the output stays aligned with the input (``x - x.max(dim, keepdim=True)`` is local
when ``dim`` is not split).

A reduction over a layout whose keys are a range is ONE layout command (a ``Tree`` of a
``TreeSpec``, :mod:`sharded.runtime.commands`; ``Executor.submit_tree``, planned once per
layout by :func:`tree_plan`): every worker
expands it for its shards (``Worker._tree``) and knows from it its place in each group's
tree; when the flush ships, each child's batch returns its partial and its parent's batch
takes it (the executor dispatches children first), so the driver's work per reduction does
not grow with the shard count and a read of the result rides in the root's batch. Other
reductions (irregular keys; groups whose trees would wait on each other) combine round by
round (:func:`combine_tree`: log8 rounds, one export per source worker per round).

:func:`plan_reduce` is the planner every reduction shares (the reduce family, and matmul and
linalg, which sum partial products); its pure pieces are :func:`reduce_groups` and
:func:`reduce_layout`. ``reduce_chunk``/``reduce_combine`` reduce values;
``arg_chunk``/``arg_combine`` carry ``(value, global index)`` pairs.
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np

from .. import dtypes as D
from ..errors import EmptyReduction
from ..layout import Layout
from ..runtime.commands import Key, ReduceGroup, Transfer, TreeSpec
from ..runtime.driver.links import has_cycle
from .dataflow import Operand
from .registry import kernel

# Partials merged by one combine command: 8 keeps a 1,000-worker reduction at 4 rounds while
# a round's merge stays one small kernel (see the guide's "Scale" section).
FAN_IN = 8


# --------------------------------------------------------------------------- pure rules
def reduce_groups(lay: Layout, dims):
    """Map output-block coords -> indices of the shards (in C order) that reduce into it.

    Examples
    --------
    >>> from sharded.layout import Layout
    >>> lay = Layout.from_bounds((4, 2), [(0, 2, 4), (0, 2)], [0, 1])
    >>> dict(reduce_groups(lay, (0,)))
    {(0,): [0, 1]}
    """
    if lay.is_replicated:  # every copy reduces on its own worker
        return collections.OrderedDict(((s,), [s]) for s in range(len(lay.shards())))
    kept = [d for d in range(lay.ndim) if d not in dims]
    groups = collections.OrderedDict()
    for coords in itertools.product(*(range(g) for g in lay.grid)):
        key = tuple(coords[d] for d in kept)
        groups.setdefault(key, []).append(lay.index(coords))
    return groups


def reduce_layout(lay: Layout, dims, keepdim, roots=None) -> Layout:
    """The layout of ``lay`` reduced over ``dims``: one block per group, on ``roots`` (the
    worker of each group's first shard unless given).

    Examples
    --------
    >>> from sharded.layout import Layout
    >>> lay = Layout.from_bounds((4, 2), [(0, 2, 4), (0, 2)], [0, 1])
    >>> reduce_layout(lay, (0,), False).shape
    (2,)
    """
    if roots is None:
        shards = lay.shards()
        roots = [shards[m[0]][0] for m in reduce_groups(lay, dims).values()]
    bounds = [(0, 1) if d in dims else lay.bounds[d] for d in range(lay.ndim)]
    shape = [1 if d in dims else lay.shape[d] for d in range(lay.ndim)]
    if not keepdim:
        bounds = [b for d, b in enumerate(bounds) if d not in dims]
        shape = [n for d, n in enumerate(shape) if d not in dims]
    return Layout.from_bounds(shape, bounds, roots, replicated=lay.is_replicated)


# ------------------------------------------------------------------- trees as commands
_PLANS: dict = {}
_OUTS: dict = {}


def tree_plan(lay: Layout, dims):
    """A reduction of ``lay`` over ``dims`` as the workers walk it: ``(groups, edges,
    roots)``, or None when its groups' trees would wait on each other (two groups whose
    workers are each other's parents: the planner then combines round by round).

    ``groups[g]`` is a ``ReduceGroup(parts, live)``: the workers of group ``g``, its root (the
    worker of its first shard, where the result lands) first, then the others in shard order,
    and the shards that reduce (those not empty along ``dims``; the first one if all are).
    Position
    ``p`` of ``parts`` combines the partials of positions ``p * 8 + 1 ... p * 8 + 8`` with
    its own (a fan-in-8 heap: log8 levels). ``edges`` are the ``(child, parent)`` worker
    pairs. Cached per layout and dims: a repeated reduction plans in one lookup.

    Examples
    --------
    >>> from sharded.layout import Layout
    >>> lay = Layout.from_bounds((6,), [(0, 2, 4, 6)], [1, 0, 1])
    >>> tree_plan(lay, (0,))
    ((ReduceGroup(parts=(1, 0), live=(0, 1, 2)),), ((0, 1),), [1])
    """
    hit = _PLANS.get((lay, dims))
    if hit is not None or (lay, dims) in _PLANS:
        return hit
    shards = lay.shards()
    groups, edges, roots = [], [], []
    for members in reduce_groups(lay, dims).values():
        live = [s for s in members if all(shards[s][2][d] > 0 for d in dims)] or members[:1]
        root = shards[members[0]][0]
        parts = tuple(dict.fromkeys([root] + [shards[s][0] for s in live]))
        groups.append(ReduceGroup(parts, tuple(live)))
        edges += [(parts[p], parts[(p - 1) // FAN_IN]) for p in range(1, len(parts))]
        roots.append(root)
    edges = tuple(dict.fromkeys(edges))
    plan = (tuple(groups), edges, roots)
    if len(groups) > 1 and has_cycle(edges):
        plan = None
    if len(_PLANS) > 1024:
        _PLANS.clear()
    _PLANS[(lay, dims)] = plan
    return plan


def _out_layout(lay, dims, keepdim, roots):
    """:func:`reduce_layout`, cached (a layout's hash is computed once)."""
    key = (lay, dims, keepdim)
    out = _OUTS.get(key)
    if out is None:
        if len(_OUTS) > 1024:
            _OUTS.clear()
        out = _OUTS[key] = reduce_layout(lay, dims, keepdim, roots)
    return out


# ---------------------------------------------------------------------- combine tree
def combine_tree(ex, parts, roots, combine, params, nparts, label):
    """Combine each group's partials across workers in a tree, the result on its root.

    ``parts[g]`` lists ``(worker, keys)`` partials of group ``g`` (one partial per worker,
    ``keys`` a tuple of ``nparts`` keys), ``roots[g]`` the worker that must hold the result;
    ``combine`` is the kernel merging two or more partials (``params`` its keywords). Runs
    log_FAN_IN(workers) rounds (up to :data:`FAN_IN` partials merge in one command; the
    exports of a round ride in the source workers' next batch), and frees every consumed
    partial. Returns the final ``keys`` of each group (on ``roots[g]``).
    """
    parts = [list(gp) for gp in parts]
    # the root's partial goes first so the result lands there
    for g, root in enumerate(roots):
        parts[g].sort(key=lambda p, r=root: p[0] != r)
        if parts[g][0][0] != root:
            parts[g].insert(0, (root, None))
    while any(len(p) > 1 for p in parts):
        req = collections.defaultdict(list)
        merges = []
        for g, gp in enumerate(parts):
            nxt = []
            for i in range(0, len(gp), FAN_IN):
                part = gp[i : i + FAN_IN]
                if len(part) > 1:
                    for wb, kb in part[1:]:
                        req[wb].extend((k, None) for k in kb)
                    merges.append((g, len(nxt), part))
                nxt.append(part[0])
            parts[g] = nxt
        handles = {w: iter(h) for w, h in ex.export(req).items()}
        for g, pos, part in merges:
            wa, ka = part[0]
            hb = tuple(Transfer(next(handles[wb])) for wb, kb in part[1:] for _ in kb)
            k = tuple(ex.new_key() for _ in range(nparts))
            if ka is None and len(part) == 2:  # the root had no partial: the transfer is it
                ex.submit(wa, "copy_all", hb, k, None, (label, None))
            else:
                own = () if ka is None else tuple(Key(kk, None) for kk in ka)
                ex.submit(wa, combine, own + hb, k, params, (label, None))
                if ka is not None:
                    ex.free(wa, ka)
            for wb, kb in part[1:]:
                ex.free(wb, kb)
            parts[g][pos] = (wa, k)
    return [gp[0][1] for gp in parts]


# -------------------------------------------------------------------------- planner
def plan_reduce(ex, x, fn, dims, keepdim, out_dtype, arg=False, flat=False, label=None):
    """Plan a reduction of ``x`` (a tensor or :class:`Operand`) over ``dims`` with ``fn``
    (``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``); returns a list of Operands.

    ``arg`` carries (value, index) pairs and returns two results; ``flat`` (argmax without a
    dim) reduces everything to indices into the flattened tensor.
    """
    lay, keys = x._layout, x._keys
    label = label or fn
    dims = tuple(sorted(dims))
    chunk, combine = ("arg_chunk", "arg_combine") if arg else ("reduce_chunk", "reduce_combine")
    nparts = 2 if arg else 1
    if fn in ("max", "min") and any(lay.shape[d] == 0 for d in dims):
        raise EmptyReduction(
            f"{label}(): cannot reduce over dimension(s) {dims} of size 0 "
            f"(shape {lay.shape}); the operation has no identity"
        )
    plan = tree_plan(lay, dims) if isinstance(keys, range) else None
    if plan is not None:  # one layout command; the workers walk the combine tree
        groups, edges, roots = plan
        if arg:
            cparams = {"fn": fn, "axis": None if flat else dims[0], "gshape": lay.shape}
        else:
            cparams = {"fn": fn, "axis": dims, "dtype": out_dtype.np_str}
        outs = tuple(ex.new_keys(len(groups)).start for _ in range(nparts))
        squeeze = dims if not keepdim and dims else None
        # (TreeSpec's fields in order, built by make: every reduction, every read of a sum)
        spec = TreeSpec.make(
            (chunk, cparams, combine, fn, keys.start, outs, lay.bounds, lay.is_replicated)
            + (squeeze, groups, label, FAN_IN)
        )
        ex.submit_tree(lay, spec, edges)
        out = _out_layout(lay, dims, keepdim, roots)
        results = [Operand(out, out_dtype, range(o, o + len(groups))) for o in outs]
        if arg:
            results[1] = Operand(out, D.int64, results[1].keys)
        return results
    shards = lay.shards()

    def chunk_params(s):
        if arg:
            return {
                "fn": fn,
                "axis": None if flat else dims[0],
                "offsets": shards[s][1],
                "gshape": lay.shape,
            }
        return {"fn": fn, "axis": dims, "dtype": out_dtype.np_str}

    def new_keys():
        return tuple(ex.new_key() for _ in range(nparts))

    # parts[g] = list of (worker, keys) partials of group g, in shard order
    parts, roots = [], []
    for members in reduce_groups(lay, dims).values():
        roots.append(shards[members[0]][0])
        live = [s for s in members if all(shards[s][2][d] > 0 for d in dims)] or members[:1]
        by_w = collections.OrderedDict()
        for s in live:
            k = new_keys()
            w = shards[s][0]
            ex.submit(w, chunk, (Key(keys[s], None),), k, chunk_params(s), (label, s))
            by_w.setdefault(w, []).append(k)
        gparts = []
        for w, ks in by_w.items():  # combine partials that already share a worker
            if len(ks) > 1:
                k = new_keys()
                ex.submit(
                    w,
                    combine,
                    tuple(Key(kk, None) for p in ks for kk in p),
                    k,
                    {"fn": fn},
                    (label, None),
                )
                ex.free(w, [kk for p in ks for kk in p])
                ks = [k]
            gparts.append((w, ks[0]))
        parts.append(gparts)
    finals = combine_tree(ex, parts, roots, combine, {"fn": fn}, nparts, label)
    out = reduce_layout(lay, dims, keepdim, roots)
    if not keepdim and dims:
        reshaped = []
        for (w, _, shp), fk in zip(out.shards(), finals):
            k = new_keys()
            for a, b in zip(fk, k):
                ex.submit(w, "reshape", (Key(a, None),), (b,), {"shape": shp}, (label, None))
            ex.free(w, fk)
            reshaped.append(k)
        finals = reshaped
    results = [Operand(out, out_dtype, tuple(f[i] for f in finals)) for i in range(nparts)]
    if arg:
        results[1] = Operand(out, D.int64, results[1].keys)
    return results


# ------------------------------------------------------------------------------ kernels
_REDUCE = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "all": "all", "any": "any"}
_COMBINE = {
    "sum": "add",
    "prod": "multiply",
    "max": "maximum",
    "min": "minimum",
    "all": "logical_and",
    "any": "logical_or",
}


def _finish(xp, out, squeeze):
    return xp.squeeze(out, axis=squeeze) if squeeze else out


@kernel(pooled=True)
def reduce_chunk(xp, a, fn, axis, dtype=None, squeeze=None, alloc=None):
    """Reduce a block over ``axis`` keeping dims (a partial of a cross-shard reduction);
    a large result goes into a block of the worker's pool (``alloc``) where one fits."""
    f = getattr(xp, _REDUCE[fn])
    kw = {"dtype": dtype} if fn in ("sum", "prod") else {}
    out = None
    if alloc is not None and a.size >= _POOLED_MIN:  # (no smaller block reaches the pool)
        axes = range(a.ndim) if axis is None else np.atleast_1d(axis) % max(a.ndim, 1)
        shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape))
        # the result dtype NumPy picks (a sum of int8 is int64, say): that of the corner
        out = _pooled(alloc, a, shape, lambda c: f(c, axis=axis, keepdims=True, **kw))
    return _finish(xp, xp.asarray(f(a, axis=axis, keepdims=True, out=out, **kw)), squeeze)


def _pooled(alloc, a, shape, probe):
    """A block from ``alloc`` for a result of ``shape`` computed from ``a``, its dtype that of
    ``probe`` run on ``a``'s first element; None for a small result (never pooled) or
    when the pool has no block that fits (the kernel allocates its own)."""
    if not isinstance(a, np.ndarray) or a.size == 0 or math.prod(shape) < _POOLED_MIN:
        return None
    return alloc(shape, probe(a[(slice(0, 1),) * a.ndim]).dtype)


_POOLED_MIN = 1 << 16  # elements: below, no result reaches the pool's smallest block (1 MiB)


@kernel
def reduce_combine(xp, *parts, fn, squeeze=None):
    """Combine partials of the same block position, in order."""
    f = getattr(xp, _COMBINE[fn])
    out = parts[0]
    for p in parts[1:]:
        out = f(out, p)
    return _finish(xp, out, squeeze)


@kernel(pooled=True)
def arg_chunk(xp, a, fn, axis, offsets, gshape, squeeze=None, alloc=None):
    """``(values, global indices)`` of the max/min of a block along ``axis`` (``None``: the
    whole block, indices into the flattened global tensor, as torch's argmax); large
    indices go into a block of the worker's pool (``alloc``) where one fits."""
    f = xp.argmax if fn == "max" else xp.argmin
    if axis is None:
        i = int(f(a))
        coords = np.unravel_index(i, a.shape)
        g = np.ravel_multi_index([c + o for c, o in zip(coords, offsets)], gshape)
        keep = (1,) * a.ndim
        v, idx = a.reshape(-1)[i : i + 1].reshape(keep), xp.full(keep, g, dtype=np.int64)
    else:
        ax = axis % a.ndim
        shape = a.shape[:ax] + a.shape[ax + 1 :]
        out = None
        if alloc is not None and a.size >= _POOLED_MIN:
            out = _pooled(alloc, a, shape, lambda c: f(c, axis=axis))
        i = xp.expand_dims(f(a, axis=axis, out=out), axis)
        v = xp.take_along_axis(a, i, axis=axis)
        i += offsets[axis]  # (in place: the indices are this kernel's own)
        idx = i if i.dtype == np.int64 else i.astype(np.int64)
    return _finish(xp, v, squeeze), _finish(xp, idx, squeeze)


@kernel
def arg_combine(xp, *parts, fn, squeeze=None):
    """Combine ``(v1, i1, v2, i2, ...)`` pairs: the better value wins, ties go to the lower
    index (so the result is independent of the combine order); NaN beats everything."""
    v, idx = parts[0], parts[1]
    for vb, ib in zip(parts[2::2], parts[3::2]):
        better = (vb > v) if fn == "max" else (vb < v)
        take = better | ((vb == v) & (ib < idx))
        if D.kind(v) == "f":
            nb, na = xp.isnan(vb), xp.isnan(v)
            take = (take & ~na) | (nb & ~na) | (nb & na & (ib < idx))
        v, idx = xp.where(take, vb, v), xp.where(take, ib, idx)
    return _finish(xp, v, squeeze), _finish(xp, idx, squeeze)
