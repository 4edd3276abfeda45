"""Reshaping views: ``view``/``reshape``/``flatten``, ``squeeze``/``unsqueeze`` and ``expand``.

Each result's shards are NumPy views of the input's shards on the same worker (no byte moves)
when the layout allows. ``view`` raises :class:`~sharded.errors.ViewError` when torch would
(strides) or when the new shape would need data from other workers; ``reshape`` then reshards
(worker to worker) and copies. The strides torch would report are recorded on the result
(:func:`~sharded.core.dataflow.as_view`).

Layout rules: ``reshape_view`` keeps each shard whole when every group of merged/split dims is
split only on its leading dim and the chunk boundaries land on whole rows of the new shape
(:func:`reshape_bounds`); empty shards may be dropped (:func:`compact`); ``expand`` needs the
expanded dims unsplit. Kernels are registered by name in the workers' table; where a public
function shares its primitive's name (``reshape``, ``expand``), it takes over the module
attribute below the kernel's block.
"""

from __future__ import annotations

import itertools
import math

from ....core.dataflow import Operand, as_view, map_shards
from ....core.dispatch import apply, placement
from ....core.registry import bind, kernel, primitive, vjp
from ....errors import ArgumentError, DimError, LayoutMismatch, ShapeError, ViewError
from ....layout import Layout, normalize_dim, split_sizes
from ....tensor import contiguous_strides

__all__ = [
    "broadcast_to",
    "flatten",
    "reshape",
    "squeeze",
    "unsqueeze",
]


# ------------------------------------------------------------------ strides bookkeeping
def _sizes(args) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` both mean sizes (2, 3) (``-1`` allowed)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def infer_shape(shape, numel: int) -> tuple:
    """Replace one ``-1`` in ``shape`` so that it holds ``numel`` elements.

    Examples
    --------
    >>> infer_shape((4, -1), 12)
    (4, 3)
    """
    shape = list(shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"only one dimension can be inferred, got shape {tuple(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise ShapeError(f"shape {list(shape)} is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    if any(s < 0 for s in shape) or math.prod(shape) != numel:
        raise ShapeError(f"shape {list(shape)} is invalid for input of size {numel}")
    return tuple(shape)


def view_strides(shape, strides, new):
    """torch's rule: strides of ``new`` viewing memory laid out as (shape, strides), or None.

    Examples
    --------
    >>> view_strides((2, 6), (6, 1), (3, 4)), view_strides((6, 2), (1, 6), (12,))
    ([4, 1], None)
    """
    if math.prod(shape) == 0 or not shape:
        return contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    base = strides[-1]
    t_numel = v_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        t_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != t_numel * base):
            while view_d >= 0 and (v_numel < t_numel or new[view_d] == 1):
                out[view_d] = v_numel * base
                v_numel *= new[view_d]
                view_d -= 1
            if v_numel != t_numel:
                return None
            if d > 0:
                base, t_numel, v_numel = strides[d - 1], 1, 1
    return out if view_d == -1 else None


def _empty(x, shape):
    """An empty tensor of ``shape`` on ``x``'s device (views of empty tensors hold no data).
    When ``x`` requires grad, the result stays in its graph (plus ``x.sum()``, a zero), so a
    backward through it gives ``x`` its (empty) gradient as torch does, not ``None``."""
    out = apply("empty", placement(tuple(shape), device=x.device), x.dtype)
    return out + x.sum() if x.requires_grad else out


def _whole(lay: Layout):
    """Every shard of ``lay`` read by the same position of the result."""
    return list(range(len(lay.workers)))


# ----------------------------------------------------------------------------- reshape
def dim_groups(old, new):
    """Pair runs of ``old`` dims with runs of ``new`` dims of equal product (None if the
    shapes do not tile; callers handle zero-size tensors separately).

    Examples
    --------
    >>> dim_groups((2, 6), (2, 3, 2))
    [([0], [0]), ([1], [1, 2])]
    """
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
        p_old = math.prod(old[d] for d in go[q + 1 :])
        p_new = math.prod(new[d] for d in gn[r + 1 :])
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
        return b, _whole(lay), lay.workers
    c = compact(lay)
    if c is None:
        return None
    small, sources = c
    b = _bounds_keeping_shards(small, new)
    return None if b is None else (b, sources, small.workers)


def reshape_bounds(lay: Layout, new):
    """Chunk bounds of ``new`` that keep every (non-empty) shard of ``lay`` whole, or None.

    Examples
    --------
    >>> from sharded.layout import Layout
    >>> lay = Layout(dim=0, shards=2).bind((4, 3), 2)
    >>> reshape_bounds(lay, (12,)), reshape_bounds(lay, (3, 4))
    ([(0, 6, 12)], None)
    """
    plan = reshape_plan(lay, new)
    return None if plan is None else plan[0]


def fallback_layout(lay: Layout, new, num_workers: int, slots: int | None = None) -> Layout:
    """A layout of the old shape, split along one dim, from which ``reshape(new)`` is local:
    the dim group offering the most whole-row units is split (so the copy stays spread over
    the workers), into up to one shard per kernel thread (``slots``, default one per
    worker)."""
    old = lay.shape
    best = None
    for go, gn in dim_groups(old, new):
        if not go or not gn:
            continue
        q, r = _lead(go, old), _lead(gn, new)
        p_old = math.prod(old[d] for d in go[q + 1 :])
        p_new = math.prod(new[d] for d in gn[r + 1 :])
        unit = p_new // math.gcd(p_new, p_old)
        units = old[go[q]] // unit
        if best is None or units > best[0]:
            best = (units, unit, go[q])
    units, unit, d = best
    k = max(1, min(slots or num_workers, units))
    sizes = [s * unit for s in split_sizes(units, k)]
    return Layout(chunks={d: sizes}).bind(old, num_workers)


@kernel
def reshape_view(xp, a, shape):
    """A view with a new shape; raises instead of copying (a view must share memory)."""
    v = a.view()
    v.shape = shape
    return v


@primitive(
    "reshape_view",
    kernels=[reshape_view, "reshape"],
    kind="view",
    out_spec=lambda x, shape, copy=False: (tuple(shape), x.dtype),
)
def _reshape_view_plan(ex, x, shape, copy=False) -> Operand:
    """``x`` with a new shape, shard by shard (the caller checked :func:`reshape_bounds`).
    ``copy=False`` insists on NumPy views (``view``); ``True`` lets NumPy copy a shard that
    cannot be viewed (``reshape``). Empty shards may be dropped (see :func:`compact`)."""
    lay = x._layout
    shape = tuple(shape)
    if lay.is_replicated:
        out = Layout.from_bounds(shape, [(0, n) for n in shape], lay.workers, replicated=True)
        sources = _whole(lay)
    else:
        plan = reshape_plan(lay, shape)
        if plan is None:
            raise LayoutMismatch(f"reshape of layout {lay} to {shape} is not shard-local")
        bounds, sources, workers = plan
        out = Layout.from_bounds(shape, bounds, workers)
    return map_shards(
        ex,
        x,
        out,
        sources,
        "reshape" if copy else "reshape_view",
        lambda s, j, shp: {"shape": shp},
        "reshape_view",
    )


@vjp("reshape_view")
def _reshape_view_vjp(gs, node):
    x = node.args[0]
    return (gs[0].reshape(tuple(x.shape)),) + (None,) * (len(node.args) - 1)


@bind("view", prim="reshape_view")
def view(x, *shape, size=None):
    """The same data with a new shape, sharing storage (like ``torch.Tensor.view``).

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(12, shards=2).view(4, -1).shape
    sharded.Size([4, 3])
    """
    new = infer_shape(_sizes(shape if size is None else (size,)), x.numel())  # torch's size=
    strides = view_strides(x.shape, x.stride(), new)
    if strides is None:
        raise ViewError(
            f"view size {list(new)} is not compatible with input tensor's size "
            f"{list(x.shape)} and stride {list(x.stride())} (at least one dimension "
            f"spans across two contiguous subspaces); use .reshape(...) instead"
        )
    if x.numel() == 0:
        return _empty(x, new)
    if not x.layout.is_replicated and reshape_bounds(x.layout, new) is None:
        raise ViewError(
            f"view {list(new)} of a tensor of shape {list(x.shape)} laid out as "
            f"{x.layout} would move data between workers; use .reshape(...)"
        )
    return as_view(apply("reshape_view", x, new), x, strides, x.storage_offset())


@bind("reshape", prim="reshape_view")
def reshape(x, *sizes, shape=None):
    """A tensor of the new shape: a view when :func:`view` can share storage, otherwise a
    copy resharded worker to worker.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(12, shards=3, dim=0).reshape(3, 4).sum(1).tolist()
    [6, 22, 38]
    """
    new = infer_shape(_sizes(sizes if shape is None else (shape,)), x.numel())  # torch's shape=
    if x.numel() == 0:
        return _empty(x, new)
    strides = view_strides(x.shape, x.stride(), new)
    local = x.layout.is_replicated or reshape_bounds(x.layout, new) is not None
    if strides is not None and local:
        return as_view(apply("reshape_view", x, new), x, strides, x.storage_offset())
    if not local:
        ex = x._executor()
        x = apply("reshard", x, fallback_layout(x.layout, new, ex.num_workers, ex.num_slots))
    return apply("reshape_view", x, new, copy=True)


@bind("flatten")
def flatten(x, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when possible).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 3, 4).flatten(1).shape
    sharded.Size([2, 12])
    """
    a, b = normalize_dim(start_dim, x.ndim), normalize_dim(end_dim, x.ndim)
    if x.ndim == 0:
        return reshape(x, 1)
    if a > b:
        raise DimError(
            f"flatten() has invalid args: start_dim {start_dim} cannot come after end_dim {end_dim}"
        )
    s = x.shape
    return reshape(x, s[:a] + (math.prod(s[a : b + 1]),) + s[b + 1 :])


# ------------------------------------------------------------------ squeeze and unsqueeze
def _local_view(x, shape, strides):
    """``x`` with size-1 dims added or removed: a view with ``strides`` when every shard stays
    whole (always, unless a size-1 dim is split into empty chunks), else a resharded copy."""
    shape = tuple(shape)
    if x.numel() == 0:
        return _empty(x, shape)
    if not x.layout.is_replicated and reshape_bounds(x.layout, shape) is None:
        return reshape(x, shape)
    return as_view(apply("reshape_view", x, shape), x, strides, x.storage_offset())


@bind("squeeze")
def squeeze(x, dim=None):
    """Drop size-1 dims (all of them, or those in ``dim`` that have size 1); a view with the
    remaining dims' strides, as in torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 1, 3, 1).squeeze().shape, st.zeros(2, 1).squeeze(0).shape
    (sharded.Size([2, 3]), sharded.Size([2, 1]))
    """
    if dim is None:
        drop = {d for d, n in enumerate(x.shape) if n == 1}
    else:
        ds = [normalize_dim(d, x.ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(ds)) != len(ds):  # torch refuses a dim named twice
            raise ArgumentError(f"squeeze: a dim appears multiple times in the list of dims {dim}")
        drop = {d for d in ds if x.ndim and x.shape[d] == 1}  # 0-d: dims 0/-1 drop nothing
    if not drop:
        return x
    keep = [d for d in range(x.ndim) if d not in drop]
    xs = x.stride()
    return _local_view(x, [x.shape[d] for d in keep], [xs[d] for d in keep])


@bind("unsqueeze")
def unsqueeze(x, dim):
    """Insert a size-1 dim at ``dim`` (a view; its stride is torch's: ``size * stride`` of
    the dim it lands before, 1 at the end).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 3).unsqueeze(-1).shape
    sharded.Size([2, 3, 1])
    """
    d = normalize_dim(dim, x.ndim + 1)
    s, xs = list(x.shape), list(x.stride())
    xs.insert(d, s[d] * xs[d] if d < x.ndim else 1)
    s.insert(d, 1)
    return _local_view(x, s, xs)


@kernel
def squeeze_dims(xp, a, shape):
    """A block without its dropped size-1 dims."""
    return a.reshape(shape)


@primitive(
    "squeeze_dims",
    kernels=[squeeze_dims],
    out_spec=lambda t, dims: (tuple(n for d, n in enumerate(t.shape) if d not in dims), t.dtype),
)
def _squeeze_dims_plan(ex, t, dims) -> Operand:
    """Drop size-1 dimensions ``dims`` that are not split (a local reshape on every shard;
    reductions use it to drop their kept dims)."""
    lay = t._layout
    dims = set(dims)
    keep = [d for d in range(lay.ndim) if d not in dims]
    out = Layout.from_bounds(
        [lay.shape[d] for d in keep], [lay.bounds[d] for d in keep], lay.workers, lay.is_replicated
    )
    return map_shards(
        ex, t, out, _whole(out), "squeeze_dims", lambda s, j, shp: {"shape": shp}, "squeeze_dims"
    )


@vjp("squeeze_dims")
def _squeeze_dims_vjp(gs, node):
    return (gs[0].reshape(tuple(node.args[0].shape)), None)


# ----------------------------------------------------------------------------- expand
def expand_plan(lay: Layout, shape):
    """``(layout, sources)`` of ``lay`` expanded to ``shape`` as a view, or None when a
    size-1 dim to be expanded is split (into chunks holding data)."""
    sources = _whole(lay)
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


@kernel
def expand(xp, a, shape):
    """A view repeating size-1 dims with zero strides, writable where ``a`` is: torch lets
    a view of it write when no two elements share memory (``x.expand(3, 2)[2:]``), and the
    driver refuses the overlapping ones (NumPy's ``broadcast_to`` is always read-only)."""
    off = len(shape) - a.ndim
    strides = [0] * off + [0 if n != m else s for n, m, s in zip(a.shape, shape[off:], a.strides)]
    return xp.lib.stride_tricks.as_strided(a, shape, strides)


@primitive(
    "expand", kernels=[expand], kind="view", out_spec=lambda x, shape: (tuple(shape), x.dtype)
)
def _expand_plan(ex, x, shape) -> Operand:
    """A view repeating size-1 dims to ``shape`` (the caller checked sizes)."""
    plan = expand_plan(x._layout, shape)
    if plan is None:
        raise LayoutMismatch(f"expand of layout {x._layout} to {shape}: a size-1 dim is split")
    out, sources = plan
    return map_shards(ex, x, out, sources, "expand", lambda s, j, shp: {"shape": shp}, "expand")


@vjp("expand")
def _expand_vjp(gs, node):
    x, g = node.args[0], gs[0]
    if not x.requires_grad:
        return (None, None)
    shape = tuple(x.shape)
    lead = g.ndim - len(shape)  # sum over the new leading dims and the stretched size-1 dims
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    return ((g.sum(dims, keepdim=True) if dims else g).reshape(shape), None)


@bind("expand", prim="expand")
def expand(x, *sizes, size=None):
    """Repeat size-1 dims without copying (a view; ``-1`` keeps a size). As in torch, an
    in-place write to it raises where two of its elements share memory, and works where
    none do (``st.zeros(1).expand(1, 1)``, or a view of one expanded row).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([[1], [2]]).expand(2, 3).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    sizes = _sizes(sizes if size is None else (size,))  # torch's keyword is size=
    if len(sizes) < x.ndim:
        raise ShapeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({x.ndim})"
        )
    off = len(sizes) - x.ndim
    shape, strides = [], []
    xs = x.stride()
    for i, n in enumerate(sizes):
        if i < off:
            if n < 0:
                raise ShapeError(f"expand: -1 is not allowed in a leading, new dimension {i}")
            shape.append(n)
            strides.append(0)
            continue
        have = x.shape[i - off]
        n = have if n == -1 else n
        if have != n and have != 1:
            raise ShapeError(
                f"expand: the expanded size {n} must match the existing size "
                f"{have} at non-singleton dimension {i}; target sizes {list(sizes)}"
            )
        shape.append(n)
        strides.append(xs[i - off] if have == n else 0)
    if tuple(shape) == tuple(x.shape):
        return x
    src = x
    if expand_plan(x.layout, tuple(shape)) is None:  # a split size-1 dim: gather it first
        src = x.reshard(layout=Layout(chunks={d: [x.shape[d]] for d in range(x.ndim)}))
    return as_view(apply("expand", src, tuple(shape)), x, strides, x.storage_offset())


@bind("expand_as")
def expand_as(x, other):
    """``x.expand(other.shape)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(3, 1).expand_as(st.zeros(3, 2)).shape
    sharded.Size([3, 2])
    """
    return expand(x, tuple(other.shape))


@bind("broadcast_to")
def broadcast_to(x, size):
    """``x`` expanded to ``shape`` (a view), as ``torch.broadcast_to``.

    Examples
    --------
    >>> import sharded as st
    >>> st.broadcast_to(st.tensor([1, 2]), (3, 2)).shape
    sharded.Size([3, 2])
    """
    return expand(x, tuple(size))
