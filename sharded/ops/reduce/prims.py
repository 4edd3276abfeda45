"""Reductions: sum, prod, amax, amin, all, any, max/min along a dim, argmax and argmin.

Every reduction is a chunk / combine pair run by the shared planner
:func:`sharded.core.tree.plan_reduce` (each shard reduces locally; partials of a split dim
combine pairwise across workers, the result landing on the worker of each group's first
shard). ``sum``/``prod``/``amax``/``amin``/``all``/``any`` use the ``reduce_chunk``/
``reduce_combine`` kernels; ``argmax``/``argmin`` and ``max``/``min`` with a dim carry
``(value, global index)`` pairs through ``arg_chunk``/``arg_combine``. ``mean``, ``var``,
``logsumexp``... are derived from these in :mod:`sharded.ops.reduce.derived.moments`.
"""

from __future__ import annotations

import collections
import math

from ... import dtypes as D
from ...amp import keep_float32
from ...core.dispatch import apply, as_tensor, is_tensor, placement, via_float32
from ...core.registry import bind, no_complex, nondiff, primitive, vjp
from ...core.tree import (
    arg_chunk,
    arg_combine,
    plan_reduce,
    reduce_chunk,
    reduce_combine,
)
from ...errors import ArgumentError, DTypeError
from ...layout import normalize_dim

__all__ = [
    "MaxResult",
    "MinResult",
    "all",
    "amax",
    "amin",
    "aminmax",
    "any",
    "argmax",
    "argmin",
    "max",
    "min",
    "prod",
    "sum",
]

_VALUES = [reduce_chunk, reduce_combine]  # the kernels of value reductions
_ARGS = [arg_chunk, arg_combine]  # the kernels of (value, index) reductions

MaxResult = collections.namedtuple("max", ["values", "indices"])
MinResult = collections.namedtuple("min", ["values", "indices"])
AminmaxResult = collections.namedtuple("aminmax", ["min", "max"])


def sum_dtype(dt):
    """torch: integer and bool sums accumulate in int64; floats and complex keep their dtype.

    Examples
    --------
    >>> import sharded as st
    >>> sum_dtype(st.int8).name, sum_dtype(st.float16).name
    ('int64', 'float16')
    """
    return dt if D.category(dt) >= 2 else D.int64


def dims_of(x, dim, axis=None, empty_means_all=True):
    """Normalise ``dim=``/``axis=`` to a sorted tuple of dims (``None``: all of them).

    Examples
    --------
    >>> import sharded as st
    >>> dims_of(st.ones(2, 3, 4), (-1, 0))
    (0, 2)
    """
    if axis is not None:
        if dim is not None:
            raise ArgumentError("give dim= or axis=, not both")
        dim = axis
    nd = x.ndim
    if dim is None or (empty_means_all and isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(nd))
    ds = [dim] if isinstance(dim, int) else list(dim)
    out = tuple(sorted(normalize_dim(d, nd) for d in ds))
    if len(set(out)) != len(out):
        raise ArgumentError(f"dim {tuple(ds)} appears multiple times in the list of dims")
    return out if nd else ()  # a 0-d tensor takes dim 0 / -1 and reduces over nothing


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


def _spec(dtype_of):
    """The ``out_spec`` of a value reduction: the reduced shape, dtype ``dtype_of(x.dtype)``
    unless the call names one."""

    def out_spec(x, dims, keepdim=False, dtype=None):
        shape = tuple(
            1 if d in dims else n for d, n in enumerate(x.shape) if keepdim or d not in dims
        )
        return shape, dtype or dtype_of(x.dtype)

    return out_spec


def _arg_spec(x, dim=None, keepdim=False):
    """``out_spec`` of argmax/argmin: int64 indices over ``dim`` (all dims when None)."""
    dims = range(x.ndim) if dim is None else (dim,)
    return _spec(lambda dt: D.int64)(x, tuple(dims), keepdim)


def _dim_spec(x, dim, keepdim=False):
    """``out_spec`` of max/min along a dim: values like ``x``, int64 indices."""
    values = _spec(lambda dt: dt)(x, (dim,), keepdim)
    return values, (values[0], D.int64)


def _expand_back(g, x, dims, keepdim):
    """A reduced gradient broadcast back over the reduced dims of ``x``."""
    if not keepdim:
        for d in sorted(dims):
            g = g.unsqueeze(d)
    return g.expand(tuple(x.shape))


def _nones(node):
    return (None,) * (len(node.args) - 1)


# ------------------------------------------------------------------------------ sum
@primitive("sum", kernels=_VALUES, out_spec=_spec(sum_dtype), kind="reduce")
def _sum_plan(ex, x, dims, keepdim=False, dtype=None):
    return plan_reduce(ex, x, "sum", dims, keepdim, dtype or sum_dtype(x._dtype))[0]


@vjp("sum")
def _sum_vjp(gs, node):
    x, dims, keepdim = node.args[:3]
    return (_expand_back(gs[0], x, dims, keepdim),) + _nones(node)


@bind("sum", prim="sum")
@via_float32
def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Sum over all elements, one dim or a tuple of dims.

    Integer and bool inputs sum in int64, like torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.sum(st.ones(2, 3), dim=1).tolist()
    [3.0, 3.0]
    """
    x = _tensor(input)
    return apply(
        "sum", x, dims_of(x, dim, axis), keepdim, None if dtype is None else D.as_dtype(dtype)
    )


# ----------------------------------------------------------------------------- prod
@primitive("prod", kernels=_VALUES, out_spec=_spec(sum_dtype), kind="reduce")
def _prod_plan(ex, x, dims, keepdim=False, dtype=None):
    return plan_reduce(ex, x, "prod", dims, keepdim, dtype or sum_dtype(x._dtype))[0]


@vjp("prod", saves=(0,), save_out=True)
def _prod_vjp(gs, node):
    # torch: with no zero in the whole input, grad * out / x (a NaN or inf input gives NaN or
    # inf there); with a zero anywhere, the exact product of the other elements of each slice
    x, dims, keepdim = node.args[:3]
    zero = x == 0
    if x.dtype.is_complex:  # out / x, and the others' product at zeros (no non-finite rule)
        nonzero = apply("where", zero, 1.0, x)
        nz = zero.sum(dims, keepdim=True)
        p = nonzero.prod(dims, keepdim=True)
        others = apply(
            "where",
            zero,
            apply("where", nz == 1, p, 0.0),
            apply("where", nz == 0, p / nonzero, 0.0),
        )
        return (_expand_back(gs[0], x, dims, keepdim) * others,) + _nones(node)
    # the product of the others from counts: finite non-zero part, then zeros, infs and NaNs
    # among the others (0 * inf is NaN, as the product itself would be)
    good = x.isfinite() & ~zero
    f = apply("where", good, x, 1.0)
    inf, nan = x.isinf(), x.isnan()
    s = apply("where", inf, x.sign(), 1.0)
    others = f.prod(dims, keepdim=True) / f
    for mask, factor in ((zero, 0.0), (inf, s.prod(dims, keepdim=True) / s * math.inf)):
        others = others * apply(
            "where", mask.sum(dims, keepdim=True) - mask.long() > 0, factor, 1.0
        )
    others = apply("where", nan.sum(dims, keepdim=True) - nan.long() > 0, math.nan, others)
    out = _expand_back(node.saved["out"][0], x, dims, keepdim)
    others = apply("where", zero.any(), others, out / x)
    return (_expand_back(gs[0], x, dims, keepdim) * others,) + _nones(node)


@bind("prod", prim="prod")
@keep_float32
@via_float32
def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Product of elements (over all, one dim or a tuple of dims).

    Examples
    --------
    >>> import sharded as st
    >>> st.prod(st.tensor([1, 2, 3, 4])).item()
    24
    """
    x = _tensor(input)
    return apply(
        "prod", x, dims_of(x, dim, axis), keepdim, None if dtype is None else D.as_dtype(dtype)
    )


# ----------------------------------------------------------------------- amax, amin
@primitive("amax", kernels=_VALUES, out_spec=_spec(lambda dt: dt), kind="reduce")
def _amax_plan(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "max", dims, keepdim, x._dtype, label="amax")[0]


@primitive("amin", kernels=_VALUES, out_spec=_spec(lambda dt: dt), kind="reduce")
def _amin_plan(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "min", dims, keepdim, x._dtype, label="amin")[0]


@vjp("amax", "amin", save_out=True, saves=(0,))
def _amaxmin_vjp(gs, node):
    x, dims, keepdim = node.args[:3]
    hit = x == _expand_back(node.saved["out"][0], x, dims, keepdim)
    count = hit.sum(dims, keepdim=True)  # ties share the gradient evenly, as torch
    return (_expand_back(gs[0], x, dims, keepdim) * hit / count,) + _nones(node)


# max()/min() without a dim: amax/amin's values, but torch's other gradient rule
# (evenly_distribute_backward): a NaN result sends its gradient to the NaNs, split evenly,
# where amax's ``x == out`` matches nothing and gives NaN everywhere
@primitive(
    "max_all", kernels=_VALUES, out_spec=_spec(lambda dt: dt),
    kind="reduce",
)  # fmt: skip
def _max_all_plan(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "max", dims, keepdim, x._dtype, label="max")[0]


@primitive(
    "min_all", kernels=_VALUES, out_spec=_spec(lambda dt: dt),
    kind="reduce",
)  # fmt: skip
def _min_all_plan(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "min", dims, keepdim, x._dtype, label="min")[0]


no_complex("max_all", "min_all", label="max/min")


@vjp("max_all", "min_all", save_out=True, saves=(0,))
def _maxmin_all_vjp(gs, node):
    x, dims, keepdim = node.args[:3]
    out = _expand_back(node.saved["out"][0], x, dims, keepdim)
    hit = (x == out) | (x.isnan() & out.isnan())
    return (_expand_back(gs[0], x, dims, keepdim) * hit / hit.sum(dims, keepdim=True),) + _nones(
        node
    )


@bind("amax", prim="amax")
def amax(input, dim=(), keepdim=False):
    """Maximum over all elements, a dim or a tuple of dims (values only).

    Examples
    --------
    >>> import sharded as st
    >>> st.amax(st.tensor([[1, 5], [3, 2]]), dim=0).tolist()
    [3, 5]
    """
    x = _tensor(input)
    return apply("amax", x, dims_of(x, dim), keepdim)


@bind("amin", prim="amin")
def amin(input, dim=(), keepdim=False):
    """Minimum over all elements, a dim or a tuple of dims (values only).

    Examples
    --------
    >>> import sharded as st
    >>> st.amin(st.tensor([[1, 5], [3, 2]]), dim=0).tolist()
    [1, 2]
    """
    x = _tensor(input)
    return apply("amin", x, dims_of(x, dim), keepdim)


@bind("aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over all elements or one ``dim``, a named tuple as torch's.

    Examples
    --------
    >>> import sharded as st
    >>> r = st.aminmax(st.tensor([[1, 5], [3, 2]]), dim=1)
    >>> r.min.tolist(), r.max.tolist()
    ([1, 2], [5, 3])
    """
    x = _tensor(input)
    if dim is not None:
        _int_dim("aminmax", dim)
    if dim is None and x.numel() == 0:  # torch: RuntimeError, not the IndexError of a dim
        raise ArgumentError(
            f"aminmax(): cannot compute aminmax over an empty tensor (shape {tuple(x.shape)})"
            " as the operation has no identity"
        )
    dims = dims_of(x, dim, empty_means_all=False)
    return AminmaxResult(apply("amin", x, dims, keepdim), apply("amax", x, dims, keepdim))


# ------------------------------------------------------------------ max_dim, min_dim
@primitive("max_dim", kernels=_ARGS, out_spec=_dim_spec, kind="reduce")
def _max_dim_plan(ex, x, dim, keepdim=False):
    """``(values, indices)`` of the maximum along ``dim`` (torch's ``max(x, dim)``)."""
    return tuple(plan_reduce(ex, x, "max", (dim,), keepdim, x._dtype, arg=True, label="max"))


@primitive("min_dim", kernels=_ARGS, out_spec=_dim_spec, kind="reduce")
def _min_dim_plan(ex, x, dim, keepdim=False):
    """``(values, indices)`` of the minimum along ``dim`` (torch's ``min(x, dim)``)."""
    return tuple(plan_reduce(ex, x, "min", (dim,), keepdim, x._dtype, arg=True, label="min"))


@vjp("max_dim", "min_dim", save_out=(1,))  # the indices only, as torch: values may change
def _max_dim_vjp(gs, node):
    x, dim, keepdim = node.args[:3]
    idx = node.saved["out"][1]
    if not keepdim:
        idx = idx.unsqueeze(dim)
    n = x.shape[dim]
    shape = [1] * x.ndim
    shape[dim] = n
    pos = apply("arange", placement((n,)), 0, 1, D.int64).reshape(shape)  # arange(n)
    return (_expand_back(gs[0], x, (dim,), keepdim) * (pos == idx),) + _nones(node)


def _maxmin(name, input, dim, keepdim, other):
    x = _tensor(input)
    if is_tensor(dim):
        dim, other = None, dim
    if other is not None:
        return x.maximum(other) if name == "max" else x.minimum(other)
    if dim is None:
        return apply(name + "_all", x, tuple(range(x.ndim)), keepdim)
    _int_dim(name, dim)
    dim = normalize_dim(dim, x.ndim)
    if x.ndim == 0:  # torch: the value and index 0, 0-d even with keepdim
        x, keepdim = x.reshape(1), False
    vals, idx = apply(f"{name}_dim", x, dim, keepdim)
    return (MaxResult if name == "max" else MinResult)(vals, idx)


@bind("max", prim="max_dim")
def max(input, dim=None, keepdim=False, *, other=None):
    """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)`` along ``dim``;
    ``max(x, y)``: elementwise maximum.

    Examples
    --------
    >>> import sharded as st
    >>> st.max(st.tensor([[1, 5], [3, 2]]), dim=1).indices.tolist()
    [1, 0]
    """
    return _maxmin("max", input, dim, keepdim, other)


@bind("min", prim="min_dim")
def min(input, dim=None, keepdim=False, *, other=None):
    """Like :func:`max`, for the minimum.

    Examples
    --------
    >>> import sharded as st
    >>> st.min(st.tensor([[1, 5], [3, 2]]), dim=1).values.tolist()
    [1, 2]
    """
    return _maxmin("min", input, dim, keepdim, other)


# -------------------------------------------------------------------- argmax, argmin
def _arg(ex, x, fn, dim, keepdim, label):
    if dim is None:
        nd = x._layout.ndim
        vals, idx = plan_reduce(
            ex, x, fn, tuple(range(nd)), keepdim, x._dtype, arg=True, flat=True, label=label
        )
    else:
        vals, idx = plan_reduce(ex, x, fn, (dim,), keepdim, x._dtype, arg=True, label=label)
    ex.free_pairs(list(zip(vals.layout.workers, vals.keys)))  # only the indices are kept
    return idx


def _int_dim(name, dim):
    """torch takes one int dim here: a tuple is a ``TypeError`` (not a bad index)."""
    if not isinstance(dim, int):
        raise DTypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")


def _arg_dim(x, dim, name):
    """``dim`` normalised; a 0-d tensor's dim 0 / -1 is its only element (None)."""
    if dim is None:
        return None
    _int_dim(name, dim)
    d = normalize_dim(dim, x.ndim)
    return d if x.ndim else None


def _no_bool(name, x):
    if x.dtype == D.bool_:  # torch refuses bool here (max/min along a dim accept it)
        raise DTypeError(f"{name}(): does not support bool input (got dtype bool)")


@primitive("argmax", kernels=_ARGS, out_spec=_arg_spec, kind="reduce")
def _argmax_plan(ex, x, dim=None, keepdim=False):
    return _arg(ex, x, "max", dim, keepdim, "argmax")


@primitive("argmin", kernels=_ARGS, out_spec=_arg_spec, kind="reduce")
def _argmin_plan(ex, x, dim=None, keepdim=False):
    return _arg(ex, x, "min", dim, keepdim, "argmin")


nondiff("argmax", "argmin")  # integer indices: no gradient


@bind("argmax", prim="argmax")
def argmax(input, dim=None, keepdim=False):
    """Index of the maximum (into the flattened tensor when ``dim`` is None).

    Examples
    --------
    >>> import sharded as st
    >>> st.argmax(st.tensor([[1, 5], [7, 2]])).item()
    2
    """
    x = _tensor(input)
    _no_bool("argmax", x)
    return apply("argmax", x, _arg_dim(x, dim, "argmax"), keepdim)


@bind("argmin", prim="argmin")
def argmin(input, dim=None, keepdim=False):
    """Index of the minimum (into the flattened tensor when ``dim`` is None).

    Examples
    --------
    >>> import sharded as st
    >>> st.argmin(st.tensor([[3, 5], [7, 2]])).item()
    3
    """
    x = _tensor(input)
    _no_bool("argmin", x)
    return apply("argmin", x, _arg_dim(x, dim, "argmin"), keepdim)


# -------------------------------------------------------------------------- all, any
@primitive(
    "all",
    kernels=_VALUES,
    out_spec=_spec(lambda dt: D.bool_),
    kind="reduce",
)
def _all_plan(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "all", dims, keepdim, D.bool_)[0]


@primitive(
    "any",
    kernels=_VALUES,
    out_spec=_spec(lambda dt: D.bool_),
    kind="reduce",
)
def _any_plan(ex, x, dims, keepdim=False):
    return plan_reduce(ex, x, "any", dims, keepdim, D.bool_)[0]


nondiff("all", "any")  # bool results: no gradient


def _bool_like(r, x):
    """torch: all/any of a uint8 tensor are uint8 (0 or 1), of anything else bool."""
    return r.to(D.uint8) if x.dtype == D.uint8 else r


@bind("all", prim="all")
def all(input, dim=None, keepdim=False):
    """True if every element is non-zero.

    Examples
    --------
    >>> import sharded as st
    >>> st.all(st.tensor([1, 0])).item()
    False
    """
    x = _tensor(input)
    # torch: an empty dim list reduces nothing here (sum/amax reduce everything)
    return _bool_like(apply("all", x, dims_of(x, dim, empty_means_all=False), keepdim), x)


@bind("any", prim="any")
def any(input, dim=None, keepdim=False):
    """True if any element is non-zero.

    Examples
    --------
    >>> import sharded as st
    >>> st.any(st.tensor([1, 0])).item()
    True
    """
    x = _tensor(input)
    return _bool_like(apply("any", x, dims_of(x, dim, empty_means_all=False), keepdim), x)
