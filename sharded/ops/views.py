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
from .registry import Result, primitive


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


def reshape_bounds(lay: Layout, new):
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


def fallback_layout(lay: Layout, new, num_workers: int) -> Layout:
    """A row-split layout of the old shape from which ``reshape(new)`` is local."""
    old = lay.shape
    go, gn = dim_groups(old, new)[0]
    q, r = _lead(go, old), _lead(gn, new)
    p_old = math.prod(old[d] for d in go[q + 1:])
    p_new = math.prod(new[d] for d in gn[r + 1:])
    unit = p_new // math.gcd(p_new, p_old)
    units = old[go[q]] // unit
    k = max(1, min(num_workers, units))
    from ..layout import split_sizes
    sizes = [s * unit for s in split_sizes(units, k)]
    return Layout(chunks={go[q]: sizes}).bind(old, num_workers)


@primitive("reshape_view", kind="view")
def reshape_view(ex, x, shape, copy=False) -> Result:
    """``x`` with a new shape, shard by shard (the caller checked :func:`reshape_bounds`).
    ``copy=False`` insists on NumPy views (``view``); ``True`` lets NumPy copy a shard that
    cannot be viewed (``reshape``)."""
    lay = x._layout
    shape = tuple(shape)
    if lay.is_replicated:
        out = Layout.from_bounds(shape, [(0, n) for n in shape], lay.workers, replicated=True)
    else:
        bounds = reshape_bounds(lay, shape)
        if bounds is None:
            raise LayoutMismatch(f"reshape of layout {lay} to {shape} is not shard-local")
        out = Layout.from_bounds(shape, bounds, lay.workers)
    return _views(ex, x, out, list(range(len(out.workers))), "reshape" if copy else "view",
                  lambda s, j, shp: {"shape": shp}, "view")


# ----------------------------------------------------------------------------- expand
@primitive("expand", kind="view")
def expand(ex, x, shape) -> Result:
    """A read-only view repeating size-1 dims to ``shape`` (the caller checked sizes)."""
    lay = x._layout
    off = len(shape) - lay.ndim
    bounds = [(0, n) for n in shape]
    for i in range(lay.ndim):
        if lay.shape[i] == shape[i + off]:
            bounds[i + off] = lay.bounds[i]
        elif lay.grid[i] > 1:
            raise LayoutMismatch(f"dim {i} of size 1 is split into {lay.grid[i]} chunks")
    out = Layout.from_bounds(shape, bounds, lay.workers, lay.is_replicated)
    return _views(ex, x, out, list(range(len(out.workers))), "broadcast_to",
                  lambda s, j, shp: {"shape": shp}, "expand")


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
        keys.append(tuple(None if p is None else next(it)[1] for p in per))
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
