"""Reductions as chunk / combine triples (Dask style), planned over the block grid.

Each shard reduces locally (``reduce_chunk``: keepdims partials). Shards that share their
coordinates along the kept dims form a *group*; if the reduced dims are not split, a group is
one shard and nothing moves. Otherwise partials are first combined on each worker, then
pairwise across workers in a tree (log2 rounds, one export call per source worker per round).
A group's result lands on the worker of its first shard, so the output stays aligned with the
input (``x - x.max(dim, keepdim=True)`` is local when ``dim`` is not split).

``sum``/``prod``/``amax``/``amin``/``all``/``any`` use ``reduce_chunk``/``reduce_combine``;
``argmax``/``argmin`` and ``max``/``min`` with a dim carry ``(value, global index)`` pairs
through ``arg_chunk``/``arg_combine``. ``mean``, ``var``, ``logsumexp``... are derived from
these in ``functional.py``.
"""

from __future__ import annotations

import collections
import itertools

from .. import dtypes as D
from ..errors import ArgumentError
from ..layout import Layout
from ..core.dataflow import Operand as Result
from ..core.registry import primitive


def _groups(lay: Layout, dims):
    """Map output-block coords -> shard indices (in C order) that reduce into it."""
    grid = lay.grid
    kept = [d for d in range(lay.ndim) if d not in dims]
    groups = collections.OrderedDict()
    for coords in itertools.product(*(range(g) for g in grid)):
        key = tuple(coords[d] for d in kept)
        groups.setdefault(key, []).append(lay.index(coords))
    return groups


def _out_layout(lay: Layout, dims, keepdim, roots):
    bounds = [(0, 1) if d in dims else lay.bounds[d] for d in range(lay.ndim)]
    shape = [1 if d in dims else lay.shape[d] for d in range(lay.ndim)]
    if not keepdim:
        bounds = [b for d, b in enumerate(bounds) if d not in dims]
        shape = [n for d, n in enumerate(shape) if d not in dims]
    return Layout.from_bounds(shape, bounds, roots, replicated=lay.is_replicated)


def plan_reduce(ex, x, fn, dims, keepdim, out_dtype, arg=False, flat=False, label=None):
    """Plan a reduction of ``x`` over ``dims``.

    ``arg`` carries (value, index) pairs and returns two results; ``flat`` (argmax without a
    dim) reduces everything to indices into the flattened tensor.
    """
    lay, keys = x._layout, x._keys
    label = label or fn
    dims = tuple(sorted(dims))
    chunk, combine = ("arg_chunk", "arg_combine") if arg else ("reduce_chunk", "reduce_combine")
    nparts = 2 if arg else 1
    shards = lay.shards()
    if fn in ("max", "min") and any(lay.shape[d] == 0 for d in dims):
        raise ArgumentError(f"{label}(): cannot reduce over dimension(s) {dims} of size 0 "
                            f"(shape {lay.shape}); the operation has no identity")

    def chunk_params(s):
        if arg:
            return {"fn": fn, "axis": None if flat else dims[0], "offsets": shards[s][1],
                    "gshape": lay.shape}
        return {"fn": fn, "axis": dims, "dtype": out_dtype.np.str}

    def new_keys():
        return tuple(ex.new_key() for _ in range(nparts))

    if lay.is_replicated:
        groups = collections.OrderedDict((s, [s]) for s in range(len(shards)))
    else:
        groups = _groups(lay, dims)
    # parts[g] = list of (worker, keys) partials of group g, in shard order
    parts, roots = [], []
    for members in groups.values():
        roots.append(shards[members[0]][0])
        live = [s for s in members if all(shards[s][2][d] > 0 for d in dims)] or members[:1]
        by_w = collections.OrderedDict()
        for s in live:
            k = new_keys()
            w = shards[s][0]
            ex.submit(w, chunk, (("k", keys[s], None),), k, chunk_params(s), (label, s))
            by_w.setdefault(w, []).append(k)
        gparts = []
        for w, ks in by_w.items():  # combine partials that already share a worker
            if len(ks) > 1:
                k = new_keys()
                ex.submit(w, combine, tuple(("k", kk, None) for p in ks for kk in p), k,
                          {"fn": fn}, (label, None))
                ex.free(w, [kk for p in ks for kk in p])
                ks = [k]
            gparts.append((w, ks[0]))
        parts.append(gparts)
    # pairwise tree across workers; the root's partial goes first so the result lands there
    for g, root in enumerate(roots):
        parts[g].sort(key=lambda p, r=root: p[0] != r)
        if parts[g][0][0] != root:
            parts[g].insert(0, (root, None))
    while any(len(p) > 1 for p in parts):
        req = collections.defaultdict(list)
        pairs = []
        for g, gp in enumerate(parts):
            nxt = []
            for i in range(0, len(gp), 2):
                if i + 1 < len(gp):
                    (wa, ka), (wb, kb) = gp[i], gp[i + 1]
                    req[wb].extend((k, None) for k in kb)
                    pairs.append((g, len(nxt), wa, ka, wb, kb))
                nxt.append(gp[i])
            parts[g] = nxt
        handles = {w: iter(h) for w, h in ex.export(req).items()}
        for g, pos, wa, ka, wb, kb in pairs:
            hb = [("x", next(handles[wb])) for _ in kb]
            k = new_keys()
            if ka is None:  # the root had no partial: the transfer becomes its partial
                ex.submit(wa, "copy_all", tuple(hb), k, None, (label, None))
            else:
                ex.submit(wa, combine, tuple(("k", kk, None) for kk in ka) + tuple(hb), k,
                          {"fn": fn}, (label, None))
                ex.free(wa, ka)
            ex.free(wb, kb)
            parts[g][pos] = (wa, k)
    out = _out_layout(lay, dims, keepdim, roots)
    finals = [gp[0][1] for gp in parts]
    if not keepdim and dims:
        shapes = [shp for _, _, shp in out.shards()]
        reshaped = []
        for (w, _, _), fk, shp in zip(out.shards(), finals, shapes):
            k = new_keys()
            for a, b in zip(fk, k):
                ex.submit(w, "reshape", (("k", a, None),), (b,), {"shape": shp}, (label, None))
            ex.free(w, fk)
            reshaped.append(k)
        finals = reshaped
    results = [Result(out, out_dtype, tuple(f[i] for f in finals)) for i in range(nparts)]
    if arg:
        results[1] = Result(out, D.int64, results[1].keys)
    return results


def sum_dtype(dt):
    """torch: integer and bool sums accumulate in int64; floats keep their dtype."""
    return dt if dt.is_floating_point else D.int64


@primitive("sum", kind="reduce")
def sum_(ex, x, dims, keepdim=False, dtype=None):
    return plan_reduce(ex, x, "sum", dims, keepdim, dtype or sum_dtype(x._dtype))[0]


@primitive("prod", kind="reduce")
def prod(ex, x, dims, keepdim=False, dtype=None):
    return plan_reduce(ex, x, "prod", dims, keepdim, dtype or sum_dtype(x._dtype))[0]


@primitive("amax", kind="reduce")
def amax(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "max", dims, keepdim, x._dtype, label="amax")[0]


@primitive("amin", kind="reduce")
def amin(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "min", dims, keepdim, x._dtype, label="amin")[0]


@primitive("all", kind="reduce")
def all_(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "all", dims, keepdim, D.bool_)[0]


@primitive("any", kind="reduce")
def any_(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "any", dims, keepdim, D.bool_)[0]


@primitive("max_dim", kind="reduce")
def max_dim(ex, x, dim, keepdim=False):
    """``(values, indices)`` of the maximum along ``dim`` (torch's ``max(x, dim)``)."""
    return tuple(plan_reduce(ex, x, "max", (dim,), keepdim, x._dtype, arg=True, label="max"))


@primitive("min_dim", kind="reduce")
def min_dim(ex, x, dim, keepdim=False):
    return tuple(plan_reduce(ex, x, "min", (dim,), keepdim, x._dtype, arg=True, label="min"))


def _arg(ex, x, fn, dim, keepdim, label):
    if dim is None:
        nd = x._layout.ndim
        vals, idx = plan_reduce(ex, x, fn, tuple(range(nd)), keepdim, x._dtype, arg=True,
                                flat=True, label=label)
    else:
        vals, idx = plan_reduce(ex, x, fn, (dim,), keepdim, x._dtype, arg=True, label=label)
    for w, k in zip(vals.layout.workers, vals.keys):
        ex.free(w, [k])
    return idx


@primitive("argmax", kind="reduce")
def argmax(ex, x, dim=None, keepdim=False):
    return _arg(ex, x, "max", dim, keepdim, "argmax")


@primitive("argmin", kind="reduce")
def argmin(ex, x, dim=None, keepdim=False):
    return _arg(ex, x, "min", dim, keepdim, "argmin")
