"""View primitives: results whose shards are NumPy views of the input's shards.

A view gets new shard keys, but each new array shares memory with the base shard on the same
worker, so in-place ops on either side are seen by the other (torch's semantics) and no byte
moves. Layout rules: ``permute`` permutes the chunk bounds; ``reshape_view`` keeps each shard
whole when every group of merged/split dims is split only on its leading dim and the chunk
boundaries land on whole rows of the new shape (see :func:`reshape_bounds`); ``expand`` needs
the expanded dims unsplit; basic indexing keeps, per dim, the chunks the index touches.
"""

from __future__ import annotations

import itertools
import math

from ..errors import LayoutMismatch
from ..layout import Layout
from ..core.dataflow import Operand as Result
from ..core.registry import primitive


def _views(ex, x, out: Layout, sources, kernel, params_of, label) -> Result:
    """One ``kernel`` command per output shard, reading source shard ``sources[s]``."""
    keys = []
    for s, (w, _, shp) in enumerate(out.shards()):
        j = sources[s]
        k = ex.new_key()
        ex.submit(w, kernel, (("k", x._keys[j], None),), (k,), params_of(s, j, shp), (label, s))
        keys.append(k)
    return Result(out, x._dtype, tuple(keys))


# ----------------------------------------------------------------------------- permute
@primitive("permute", kind="view")
def permute(ex, x, dims) -> Result:
    """Axes reordered to ``dims``: chunk bounds travel with their dims, shards stay put."""
    lay = x._layout
    shape = [lay.shape[d] for d in dims]
    bounds = [lay.bounds[d] for d in dims]
    if lay.is_replicated:
        out = Layout.from_bounds(shape, bounds, lay.workers, replicated=True)
        sources = list(range(len(lay.workers)))
    else:
        sources = []
        for c in itertools.product(*(range(len(b) - 1) for b in bounds)):
            old = [0] * lay.ndim
            for i, d in enumerate(dims):
                old[d] = c[i]
            sources.append(lay.index(old))
        out = Layout.from_bounds(shape, bounds, [lay.workers[j] for j in sources])
    return _views(ex, x, out, sources, "transpose", lambda s, j, shp: {"axes": tuple(dims)},
                  "permute")


# ----------------------------------------------------------------------------- reshape
def dim_groups(old, new):
    """Pair runs of ``old`` dims with runs of ``new`` dims of equal product (None if the
    shapes do not tile; callers handle zero-size tensors separately)."""
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        go, gn, po, pn = [], [], 1, 1
        if i < len(old):
            go.append(i)
            po *= old[i]
            i += 1
        if j < len(new):
            gn.append(j)
            pn *= new[j]
            j += 1
        while po != pn:
            if po < pn and i < len(old):
                go.append(i)
                po *= old[i]
                i += 1
            elif pn < po and j < len(new):
                gn.append(j)
                pn *= new[j]
                j += 1
            else:
                return None
        groups.append((go, gn))
    return groups


def _lead(dims, sizes):
    """Position in ``dims`` of the first dim larger than 1 (0 if all are 1)."""
    return next((i for i, d in enumerate(dims) if sizes[d] > 1), 0)


def _bounds_keeping_shards(lay: Layout, new):
    """Chunk bounds of ``new`` that keep every shard of ``lay`` whole, or None."""
    old = lay.shape
    groups = dim_groups(old, new)
    if groups is None:
        return None
    bounds = [(0, n) for n in new]
    for go, gn in groups:
        if not go or not gn:
            continue
        q, r = _lead(go, old), _lead(gn, new)
        if any(lay.grid[d] > 1 for i, d in enumerate(go) if i != q):
            return None
        b = lay.bounds[go[q]]
        if len(b) == 2:
            continue
        if any(new[d] > 1 for d in gn[:r]):
            return None
        p_old = math.prod(old[d] for d in go[q + 1:])
        p_new = math.prod(new[d] for d in gn[r + 1:])
        if any(v * p_old % p_new for v in b):
            return None
        bounds[gn[r]] = tuple(v * p_old // p_new for v in b)
    if math.prod(len(b) - 1 for b in bounds) != len(lay.workers):
        return None
    return bounds


def compact(lay: Layout):
    """``lay`` without its empty chunks, and the shard of ``lay`` each kept shard is; None
    when nothing would be dropped. Empty shards hold no data, so a view may leave them out:
    a size-1 dim cut into chunks (1, 0, 0) then no longer blocks a shard-local reshape."""
    if lay.is_replicated or 0 in lay.shape:
        return None
    keep = [[c for c in range(len(b) - 1) if b[c + 1] > b[c]] for b in lay.bounds]
    if all(len(k) == len(b) - 1 for k, b in zip(keep, lay.bounds)):
        return None
    bounds = [(0,) + tuple(b[c + 1] for c in k) for b, k in zip(lay.bounds, keep)]
    sources = [lay.index(cs) for cs in itertools.product(*keep)]
    return Layout.from_bounds(lay.shape, bounds, [lay.workers[j] for j in sources]), sources


def reshape_plan(lay: Layout, new):
    """``(bounds of new, source shard of each new shard, workers)`` of a shard-local reshape
    of ``lay`` to ``new``, or None when data would have to move between workers."""
    b = _bounds_keeping_shards(lay, new)
    if b is not None:
        return b, list(range(len(lay.workers))), lay.workers
    c = compact(lay)
    if c is None:
        return None
    small, sources = c
    b = _bounds_keeping_shards(small, new)
    return None if b is None else (b, sources, small.workers)


def reshape_bounds(lay: Layout, new):
    """Chunk bounds of ``new`` that keep every (non-empty) shard of ``lay`` whole, or None."""
    plan = reshape_plan(lay, new)
    return None if plan is None else plan[0]


def fallback_layout(lay: Layout, new, num_workers: int) -> Layout:
    """A layout of the old shape, split along one dim, from which ``reshape(new)`` is local:
    the dim group offering the most whole-row units is split (so the copy stays spread over
    the workers)."""
    old = lay.shape
    best = None
    for go, gn in dim_groups(old, new):
        if not go or not gn:
            continue
        q, r = _lead(go, old), _lead(gn, new)
        p_old = math.prod(old[d] for d in go[q + 1:])
        p_new = math.prod(new[d] for d in gn[r + 1:])
        unit = p_new // math.gcd(p_new, p_old)
        units = old[go[q]] // unit
        if best is None or units > best[0]:
            best = (units, unit, go[q])
    units, unit, d = best
    k = max(1, min(num_workers, units))
    from ..layout import split_sizes
    sizes = [s * unit for s in split_sizes(units, k)]
    return Layout(chunks={d: sizes}).bind(old, num_workers)


@primitive("reshape_view", kind="view")
def reshape_view(ex, x, shape, copy=False) -> Result:
    """``x`` with a new shape, shard by shard (the caller checked :func:`reshape_bounds`).
    ``copy=False`` insists on NumPy views (``view``); ``True`` lets NumPy copy a shard that
    cannot be viewed (``reshape``). Empty shards may be dropped (see :func:`compact`)."""
    lay = x._layout
    shape = tuple(shape)
    if lay.is_replicated:
        out = Layout.from_bounds(shape, [(0, n) for n in shape], lay.workers, replicated=True)
        sources = list(range(len(lay.workers)))
    else:
        plan = reshape_plan(lay, shape)
        if plan is None:
            raise LayoutMismatch(f"reshape of layout {lay} to {shape} is not shard-local")
        bounds, sources, workers = plan
        out = Layout.from_bounds(shape, bounds, workers)
    return _views(ex, x, out, sources, "reshape" if copy else "view",
                  lambda s, j, shp: {"shape": shp}, "view")


# ----------------------------------------------------------------------------- expand
def expand_plan(lay: Layout, shape):
    """``(layout, sources)`` of ``lay`` expanded to ``shape`` as a view, or None when a
    size-1 dim to be expanded is split (into chunks holding data)."""
    sources = list(range(len(lay.workers)))
    off = len(shape) - lay.ndim
    grown = [i for i in range(lay.ndim) if lay.shape[i] != shape[i + off]]
    if not lay.is_replicated and any(lay.grid[i] > 1 for i in grown):
        c = compact(lay)
        if c is None or any(c[0].grid[i] > 1 for i in grown):
            return None
        lay, sources = c
    bounds = [(0, n) for n in shape]
    for i in range(lay.ndim):
        if i not in grown:
            bounds[i + off] = lay.bounds[i]
    return Layout.from_bounds(shape, bounds, lay.workers, lay.is_replicated), sources


@primitive("expand", kind="view")
def expand(ex, x, shape) -> Result:
    """A read-only view repeating size-1 dims to ``shape`` (the caller checked sizes)."""
    plan = expand_plan(x._layout, shape)
    if plan is None:
        raise LayoutMismatch(f"expand of layout {x._layout} to {shape}: a size-1 dim is split")
    out, sources = plan
    return _views(ex, x, out, sources, "broadcast_to", lambda s, j, shp: {"shape": shp},
                  "expand")


# ----------------------------------------------------------------------------- indexing
def _dim_chunks(bounds, sel):
    """Per-dim plan of a basic index: ``[(chunk, local index or slice, count)]``.

    ``sel`` is ``("int", i)`` or ``("slice", start, stop, step)`` with normalised values.
    """
    if sel[0] == "int":
        i = sel[1]
        c = next(c for c in range(len(bounds) - 1) if bounds[c] <= i < bounds[c + 1])
        return [(c, i - bounds[c], None)]
    _, start, stop, step = sel
    n = len(range(start, stop, step))
    out = []
    for c in range(len(bounds) - 1):
        lo, hi = bounds[c], bounds[c + 1]
        # indices k with lo <= start + k*step < hi
        if step > 0:
            k0 = max(0, -(-(lo - start) // step))
            k1 = min(n, -(-(hi - start) // step))
        else:
            k0 = max(0, -(-(start - hi + 1) // -step))
            k1 = min(n, (start - lo) // -step + 1)
        if k1 > k0:
            g0, g1 = start + k0 * step, start + (k1 - 1) * step
            stop_l = g1 - lo + (1 if step > 0 else -1)
            out.append((c, slice(g0 - lo, None if stop_l < 0 else stop_l, step), k1 - k0, k0))
    out.sort(key=lambda t: t[3])
    if not out:
        return [(0, slice(0, 0, 1), 0)]
    return [t[:3] for t in out]


@primitive("index_basic", kind="view")
def index_basic(ex, x, entries) -> Result:
    """Basic indexing as a view. ``entries`` is the normalised key in order: ``("int", i)``
    and ``("slice", start, stop, step)`` consume one input dim each, ``("new",)`` inserts a
    size-1 dim (``None``)."""
    lay = x._layout
    dims = iter(range(lay.ndim))
    per = []  # per entry: list of (chunk, local key, count), or None for a new axis
    for e in entries:
        if e[0] == "new":
            per.append(None)
            continue
        d = next(dims)
        b = (0, lay.shape[d]) if lay.is_replicated else lay.bounds[d]
        per.append((d, _dim_chunks(b, e)))
    shape, bounds = [], []
    for e, p in zip(entries, per):
        if p is None:
            shape.append(1)
            bounds.append((0, 1))
        elif e[0] == "slice":
            bounds.append(tuple(itertools.accumulate((t[2] for t in p[1]), initial=0)))
            shape.append(bounds[-1][-1])
    dim_plans = [p for p in per if p is not None]
    sources, keys = [], []
    for combo in itertools.product(*(p[1] for p in dim_plans)):
        it = iter(combo)
        # a trailing Ellipsis keeps an all-int key a 0-d view (NumPy returns a scalar copy
        # for ``a[1, 2]`` but a view for ``a[1, 2, ...]``)
        keys.append(tuple(None if p is None else next(it)[1] for p in per) + (Ellipsis,))
        sources.append(0 if lay.is_replicated else lay.index([t[0] for t in combo]))
    if lay.is_replicated:
        out = Layout.from_bounds(shape, [(0, n) for n in shape], lay.workers, replicated=True)
        sources = list(range(len(lay.workers)))
        keys = keys * len(sources)
    else:
        out = Layout.from_bounds(shape, bounds, [lay.workers[j] for j in sources])
    return _views(ex, x, out, sources, "index", lambda s, j, shp: {"key": keys[s]},
                  "getitem")


@primitive("contiguous", kind="view")
def contiguous(ex, x) -> Result:
    """A C-ordered copy of every shard (same layout, no data moves)."""
    return _views(ex, x, x._layout, list(range(len(x._layout.workers))), "contiguous",
                  lambda s, j, shp: None, "contiguous")
