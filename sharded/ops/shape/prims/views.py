"""Views with torch's names and sharing semantics: ``permute`` (``transpose``, ``t``, ``.T``,
``.mT``), basic indexing (``index_basic``, what ``x[1:, ::2, None]`` makes), and the copies
``contiguous``/``clone``.

A view gets new shard keys, but each new shard is a NumPy view of the base shard on the same
worker, so in-place ops on either side are seen by the other (torch's semantics) and no byte
moves. ``x.stride()``, ``x.storage_offset()`` and ``x.is_contiguous()`` describe the logical
tensor as torch would (:func:`~sharded.core.dataflow.as_view` records them). Reshaping views
(``view``, ``reshape``, ``squeeze``, ``expand``...) are in :mod:`sharded.ops.shape.prims.reshape`.

Layout rules: ``permute`` permutes the chunk bounds; basic indexing keeps, per dim, the chunks
the index touches. Kernels are registered by name in the workers' table; where a public
function shares its primitive's name (``permute``, ``contiguous``), it takes over the module
attribute below the kernel's block.
"""

from __future__ import annotations

import itertools

from ....core.dataflow import Operand, as_view, map_shards
from ....core.dispatch import apply
from ....core.registry import bind, kernel, primitive, vjp
from ....errors import ArgumentError, DimError
from ....layout import Layout, normalize_dim

__all__ = [
    "clone",
    "permute",
    "swapaxes",
    "swapdims",
    "adjoint",
    "t",
    "transpose",
]


# ----------------------------------------------------------------------------- permute
@kernel
def permute(xp, a, axes):
    """A view with permuted axes."""
    return a.transpose(axes)


@primitive(
    "permute",
    kernels=[permute],
    kind="view",
    out_spec=lambda x, dims: (tuple(x.shape[d] for d in dims), x.dtype),
)
def _permute_plan(ex, x, dims) -> Operand:
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
    return map_shards(
        ex, x, out, sources, "permute", lambda s, j, shp: {"axes": tuple(dims)}, "permute"
    )


@vjp("permute")
def _permute_vjp(gs, node):
    x, dims = node.args
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return (gs[0].permute(inv), None)


@bind("permute", prim="permute")
def permute(x, *dims, **kw):
    """Reorder dims (a view; chunk bounds move with their dims, no data moves).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 3, 4).permute(2, 0, 1).shape
    sharded.Size([4, 2, 3])
    """
    if "dims" in kw:  # torch's keyword: permute(x, dims=(...))
        dims = (kw.pop("dims"),)
    if kw:
        raise TypeError(f"permute() got unexpected keyword arguments {sorted(kw)}")
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    dims = tuple(normalize_dim(int(d), x.ndim) for d in dims)
    if sorted(dims) != list(range(x.ndim)):
        raise DimError(f"permute(): dims {dims} are not a permutation of {x.ndim} dims")
    st_ = x.stride()
    return as_view(apply("permute", x, dims), x, [st_[d] for d in dims], x.storage_offset())


@bind("transpose", "swapdims")
def transpose(x, dim0, dim1):
    """Swap two dims (a view).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 3).transpose(0, 1).shape
    sharded.Size([3, 2])
    """
    a, b = normalize_dim(dim0, x.ndim), normalize_dim(dim1, x.ndim)
    if x.ndim == 0:  # dims 0 and -1 name the one "dim" of a 0-d tensor
        return x
    dims = list(range(x.ndim))
    dims[a], dims[b] = b, a
    return permute(x, dims)


swapdims = transpose


@bind("swapaxes")
def swapaxes(x, axis0, axis1):
    """``transpose`` with NumPy's keyword names ``axis0``/``axis1`` (torch's alias).

    Examples
    --------
    >>> import sharded as st
    >>> st.swapaxes(st.zeros(2, 3), axis0=0, axis1=1).shape
    sharded.Size([3, 2])
    """
    return transpose(x, axis0, axis1)


@bind("t")
def t(x):
    """Transpose of a tensor of at most 2 dims (a view), as ``torch.t``.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 5).t().shape
    sharded.Size([5, 2])
    """
    if x.ndim > 2:
        raise DimError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return transpose(x, 0, 1) if x.ndim == 2 else x


def _reversed_dims(x):
    """``x.T``: all dims reversed (a view).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 3, 4).T.shape
    sharded.Size([4, 3, 2])
    """
    return permute(x, tuple(reversed(range(x.ndim))))


def _matrix_transpose(x):
    """``x.mT``: the last two dims swapped (a view).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(5, 2, 3).mT.shape
    sharded.Size([5, 3, 2])
    """
    return transpose(x, -2, -1) if x.ndim else x  # torch: the identity on a 0-d tensor


@bind("adjoint")
def adjoint(x):
    """The conjugate transpose of the last two dims (``x.mH``; ``x.mT`` for a real tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([[1j, 2j]]).mH.tolist()
    [[-1j], [-2j]]
    """
    if x.ndim == 0:  # torch: a 0-d tensor's conjugate
        return x.conj() if x.is_complex() else x
    if x.ndim < 2:
        raise ArgumentError(
            "adjoint() is only supported on matrices or batches of matrices. "
            f"Got {x.ndim}-D tensor."
        )
    y = transpose(x, -2, -1)
    return y.conj() if x.is_complex() else y


def _hermitian(x):
    """``x.H``: the conjugate transpose of a matrix (2-D only, as torch)."""
    if x.ndim not in (0, 2):
        raise ArgumentError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {x.ndim}-D tensor."
        )
    return adjoint(x)


bind("T")(property(_reversed_dims))
bind("mT")(property(_matrix_transpose))
bind("mH")(property(adjoint))
bind("H")(property(_hermitian))


# ----------------------------------------------------------------------- basic indexing
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


@kernel
def index_basic(xp, a, key):
    """Basic indexing (ints, slices, None): a view."""
    return a[key]


def _index_basic_spec(x, entries):
    """``out_spec`` of a basic index: ints drop their dim, slices keep their length, new
    axes add a 1."""
    return tuple(
        1 if e[0] == "new" else len(range(*e[1:])) for e in entries if e[0] != "int"
    ), x.dtype


@primitive("index_basic", kernels=[index_basic], kind="view", out_spec=_index_basic_spec)
def _index_basic_plan(ex, x, entries) -> Operand:
    """Basic indexing as a view. ``entries`` is the normalised key in order (``x[key]`` in
    :mod:`sharded.ops.index.prims.indexing` makes it): ``("int", i)`` and ``("slice", start, stop,
    step)`` consume one input dim each, ``("new",)`` inserts a size-1 dim (``None``)."""
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
    return map_shards(
        ex, x, out, sources, "index_basic", lambda s, j, shp: {"key": keys[s]}, "index_basic"
    )


@vjp("index_basic")
def _index_basic_vjp(gs, node):
    x, entries = node.args
    # a normalised negative-step slice may stop at -1, which must mean "past the start"
    key = tuple(
        None
        if e[0] == "new"
        else (e[1] if e[0] == "int" else slice(e[1], None if e[2] < 0 else e[2], e[3]))
        for e in entries
    )
    z = apply("full", x._layout, 0, gs[0].dtype)  # zeros like x, in the gradient's dtype
    z[key] = gs[0]
    return (z, None)


# ------------------------------------------------------------------ contiguous and clone
@kernel(pooled=True)
def contiguous(xp, a, alloc=None):
    """A C-ordered copy (never the same memory: the result of ``contiguous()``/``clone()``
    must not alias its input), into a block of the worker's pool where one fits (a loop's
    ``clone()`` frees a copy each time round)."""
    buf = alloc(a.shape, a.dtype) if alloc is not None else None  # (small: the pool declines)
    if buf is None:
        return xp.array(a, order="C", copy=True)
    xp.copyto(buf, a)
    return buf


@primitive(
    "contiguous", kernels=[contiguous], kind="view", out_spec=lambda x: (tuple(x.shape), x.dtype)
)
def _contiguous_plan(ex, x) -> Operand:
    """A C-ordered copy of every shard (same layout, no data moves)."""
    return map_shards(
        ex,
        x,
        x._layout,
        list(range(len(x._layout.workers))),
        "contiguous",
        lambda s, j, shp: None,
        "contiguous",
    )


@vjp("contiguous")
def _contiguous_vjp(gs, node):
    return (gs[0],)


@bind("contiguous", prim="contiguous")
def contiguous(x):
    """``x`` itself if contiguous, else a C-ordered copy (shards stay on their workers).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 3).t().contiguous().is_contiguous()
    True
    """
    return x if x.is_contiguous() else apply("contiguous", x)


@bind("clone", prim="contiguous")
def clone(x):
    """A copy with its own storage (same layout).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(2); y = x.clone(); y += 1; x.tolist()
    [0.0, 0.0]
    """
    return apply("contiguous", x)
