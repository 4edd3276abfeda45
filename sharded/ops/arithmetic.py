"""Arithmetic primitives: add, sub, mul, div, floor_divide, remainder, pow, maximum, minimum,
neg, abs, clamp, where, astype and fill_, with their operators and in-place methods.

Each primitive is one block: its kernel (named like the primitive), its planner (the shared
elementwise rule of :mod:`.elementwise`, the one op module this family imports), its VJP and
the public function with the names it binds. In-place methods (``add_``, ``x += y``...) write
into the existing shards where they are, so the object keeps its identity; an op whose result
dtype cannot be stored in the tensor (an int tensor ``/=``) raises before anything changes.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..core.dispatch import apply, is_tensor, operand
from ..core.registry import bind, nondiff, primitive, vjp
from ..errors import ArgumentError, DTypeError
from . import elementwise as E
from .elementwise import needs, unbroadcast

__all__ = [
    "abs",
    "add",
    "clamp",
    "clip",
    "div",
    "floor_divide",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "negative",
    "pow",
    "remainder",
    "sub",
    "where",
]


def _elementwise(name, fn, rule=E.promote):
    """Register primitive ``name``: kernel ``xp.<fn>``, the shared planner with ``rule``."""
    k = E.ufunc_kernel(name, fn)

    def plan(ex, *operands, target=None):
        return E.plan_rule(ex, name, rule, operands, target)
    plan.__name__ = plan.__qualname__ = name
    plan.__doc__ = f"Elementwise ``{name}`` planner (``xp.{fn}``, {rule.__name__})."
    return primitive(name, kernels=[k], out_spec=E.spec(rule), layout_rule=E.out_layout,
                     kind="elementwise")(plan)


def _inplace(name, *operators):
    """The in-place method ``name_`` (and ``operators`` such as ``__iadd__``): ``name``
    written into this tensor's shards."""
    def op(self, other, **kw):
        if kw.get("alpha", 1) != 1:
            other = mul(other, kw.pop("alpha"))
        apply(name, self, operand(other), target=self)
        return self
    op.__name__ = op.__qualname__ = name + "_"
    op.__doc__ = f"""In-place ``{name}``: writes into this tensor's shards and returns it.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([4., 6.])
    >>> x.{name}_(2) is x
    True
    """
    return bind(name + "_", *operators, prim=name)(op)


# ---------------------------------------------------------------------------------- add
_elementwise("add", "add")


@vjp("add")
def _add_vjp(gs, node):
    a, b = node.args
    return unbroadcast(gs[0], a), unbroadcast(gs[0], b)


@bind("add", "__add__", "__radd__", prim="add")
def add(input, other, *, alpha=1):
    """``input + alpha * other`` with broadcasting.

    Examples
    --------
    >>> import sharded as st
    >>> st.add(st.tensor([[1], [2]]), st.tensor([1, 2])).sum().item()
    12
    """
    return E.call("add", input, other if alpha == 1 else mul(other, alpha))


_inplace("add", "__iadd__")  # x += y is x.add_(y): the object keeps its identity


# ---------------------------------------------------------------------------------- sub
_elementwise("sub", "subtract")


@vjp("sub")
def _sub_vjp(gs, node):
    a, b = node.args
    return unbroadcast(gs[0], a), unbroadcast(-gs[0], b) if needs(b) else None


@bind("sub", "subtract", "__sub__", "__rsub__", prim="sub")
def sub(input, other, *, alpha=1):
    """``input - alpha * other``.

    Examples
    --------
    >>> import sharded as st
    >>> st.sub(st.tensor([3, 4]), 1).tolist()
    [2, 3]
    """
    return E.call("sub", input, other if alpha == 1 else mul(other, alpha))


_inplace("sub", "__isub__")


# ---------------------------------------------------------------------------------- mul
_elementwise("mul", "multiply")


@vjp("mul", saves=(0, 1))
def _mul_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    return (unbroadcast(g * b, a) if needs(a) else None,
            unbroadcast(g * a, b) if needs(b) else None)


@bind("mul", "multiply", "__mul__", "__rmul__", prim="mul")
def mul(input, other):
    """Elementwise product.

    Examples
    --------
    >>> import sharded as st
    >>> st.mul(st.tensor([1., 2.]), 3).tolist()
    [3.0, 6.0]
    """
    return E.call("mul", input, other)


_inplace("mul", "__imul__")


# ---------------------------------------------------------------------------------- div
_elementwise("div", "divide", E.floating)


@vjp("div", saves=(0, 1))
def _div_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    return (unbroadcast(g / b, a) if needs(a) else None,
            unbroadcast(-g * a / (b * b), b) if needs(b) else None)


@bind("div", "true_divide", "__truediv__", "__rtruediv__", prim="div")
def div(input, other, *, rounding_mode=None):
    """True division (integers give the default float dtype); ``rounding_mode="floor"``
    floors.

    Examples
    --------
    >>> import sharded as st
    >>> st.div(st.tensor([1, 3]), 2).tolist()
    [0.5, 1.5]
    """
    if rounding_mode is None:
        return E.call("div", input, other)
    if rounding_mode == "floor":
        return E.call("floor_divide", input, other)
    raise ArgumentError(f"rounding_mode must be None or 'floor', got {rounding_mode!r}")


_inplace("div", "__itruediv__")


# ------------------------------------------------------------------------- floor_divide
_elementwise("floor_divide", "floor_divide")
nondiff("floor_divide")  # piecewise constant: zero almost everywhere


@bind("floor_divide", "__floordiv__", "__rfloordiv__", prim="floor_divide")
def floor_divide(input, other):
    """``input // other`` (floor, like torch and Python).

    Examples
    --------
    >>> import sharded as st
    >>> st.floor_divide(st.tensor([-3, 3]), 2).tolist()
    [-2, 1]
    """
    return E.call("floor_divide", input, other)


_inplace("floor_divide", "__ifloordiv__")


# ---------------------------------------------------------------------------- remainder
_elementwise("remainder", "remainder")


@vjp("remainder", saves=(0, 1))
def _remainder_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    return (unbroadcast(g, a), unbroadcast(-g * floor_divide(a, b), b) if needs(b) else None)


@bind("remainder", "__mod__", "__rmod__", prim="remainder")
def remainder(input, other):
    """``input % other`` with the sign of ``other`` (Python semantics, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.remainder(st.tensor([-3, 3]), 2).tolist()
    [1, 1]
    """
    return E.call("remainder", input, other)


_inplace("remainder", "__imod__")


# ---------------------------------------------------------------------------------- pow
_pow_kernel = E.ufunc_kernel("pow", "power")


@primitive("pow", kernels=[_pow_kernel], out_spec=E.spec(E.promote), layout_rule=E.out_layout,
           kind="elementwise")
def _pow_plan(ex, *operands, target=None):
    """Elementwise ``pow`` planner (``xp.power``, promote); integers to negative integer
    powers raise, as torch."""
    def check(cast):
        e = operands[1]
        if (D.category(cast) == 1 and isinstance(e, (int, np.integer))
                and not isinstance(e, bool) and e < 0):
            raise ArgumentError(f"integers to negative integer powers are not allowed "
                                f"(exponent {e} on a {cast.name} tensor)")
    return E.plan_rule(ex, "pow", E.promote, operands, target, check=check)


@vjp("pow", save_out=True, saves=(0, 1))
def _pow_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    ga = unbroadcast(g * b * a ** (b - 1), a) if needs(a) else None
    gb = None
    if needs(b):  # d(a^b)/db = a^b log a, taken as 0 where a == 0 (as torch)
        gb = unbroadcast(g * where(a != 0, node.saved["out"][0] * abs(a).log(), 0.0), b)
    return ga, gb


@bind("pow", "__pow__", "__rpow__", prim="pow")
def pow(input, exponent):
    """``input ** exponent``.

    Examples
    --------
    >>> import sharded as st
    >>> st.pow(st.tensor([2, 3]), 2).tolist()
    [4, 9]
    """
    return E.call("pow", input, exponent)


_inplace("pow", "__ipow__")


# -------------------------------------------------------------------- maximum, minimum
_elementwise("maximum", "maximum")
_elementwise("minimum", "minimum")


@vjp("maximum", "minimum", saves=(0, 1))
def _maxmin_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    win = (a > b) if node.prim == "maximum" else (a < b)
    share = where(win, 1.0, where(a == b, 0.5, 0.0))  # ties split the gradient
    return (unbroadcast(g * share, a) if needs(a) else None,
            unbroadcast(g * (1.0 - share), b) if needs(b) else None)


@bind("maximum", prim="maximum")
def maximum(input, other):
    """Elementwise maximum (NaN propagates).

    Examples
    --------
    >>> import sharded as st
    >>> st.maximum(st.tensor([1, 5]), st.tensor([3, 2])).tolist()
    [3, 5]
    """
    return E.call("maximum", input, other)


_inplace("maximum")


@bind("minimum", prim="minimum")
def minimum(input, other):
    """Elementwise minimum (NaN propagates).

    Examples
    --------
    >>> import sharded as st
    >>> st.minimum(st.tensor([1, 5]), st.tensor([3, 2])).tolist()
    [1, 2]
    """
    return E.call("minimum", input, other)


_inplace("minimum")


# ------------------------------------------------------------------------------ neg
def _negate(ops):
    rt = E.operand_dtypes(ops)
    if rt == D.bool_:
        raise DTypeError("negation (-) of a bool tensor is not supported; use ~ or "
                         "logical_not() instead")
    return rt, rt


_elementwise("neg", "negative", _negate)


@vjp("neg")
def _neg_vjp(gs, node):
    return (-gs[0],)


@bind("neg", "negative", "__neg__", prim="neg")
def neg(input):
    """``-input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.neg(st.tensor([1.0, -4.0])).tolist()
    [-1.0, 4.0]
    """
    return E.call("neg", input)


negative = neg
bind("neg_", prim="neg")(E.inplace_unary("neg"))


@bind("__pos__")
def _positive(self):
    """``+x`` is ``x`` itself."""
    return self


# ------------------------------------------------------------------------------ abs
_elementwise("abs", "absolute")


@vjp("abs", saves=(0,))
def _abs_vjp(gs, node):
    (a,) = node.args
    return (gs[0] * where(a > 0, 1.0, where(a < 0, -1.0, 0.0)),)


@bind("abs", "__abs__", prim="abs")
def abs(input):
    """Absolute value.

    Examples
    --------
    >>> import sharded as st
    >>> st.abs(st.tensor([1.0, -4.0])).tolist()
    [1.0, 4.0]
    """
    return E.call("abs", input)


bind("abs_", prim="abs")(E.inplace_unary("abs"))


# ---------------------------------------------------------------------------- clamp
@E.named_kernel("clamp")
def _clamp_kernel(xp, a, lo=None, hi=None, cast=None, out=None):
    a = E.cast(xp, a, cast)
    if lo is not None:
        a = xp.maximum(a, E.cast(xp, lo, cast))
    if hi is not None:
        a = xp.minimum(a, E.cast(xp, hi, cast))
    return E.cast(xp, a, out)


@primitive("clamp", kernels=[_clamp_kernel], out_spec=E.spec(E.promote),
           layout_rule=E.out_layout, kind="elementwise")
def _clamp_plan(ex, a, lo=None, hi=None, target=None):
    """Elementwise ``clamp`` planner (bounds may be None, scalars or tensors; promote)."""
    return E.plan_rule(ex, "clamp", E.promote, (a, lo, hi), target)


@vjp("clamp", saves=(0, 1, 2))
def _clamp_vjp(gs, node):
    a, lo, hi = node.args
    g = gs[0]
    inside = [c for c in ((a >= lo) if lo is not None else None,
                          (a <= hi) if hi is not None else None) if c is not None]
    inside = inside[0] if len(inside) == 1 else inside[0] & inside[1]
    return (g * inside if needs(a) else None,
            unbroadcast(g * (a < lo), lo) if needs(lo) else None,
            unbroadcast(g * (a > hi), hi) if needs(hi) else None)


@bind("clamp", "clip", prim="clamp")
def clamp(input, min=None, max=None):
    """Clamp into ``[min, max]`` (either may be a tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.clamp(st.tensor([-1., 0.5, 2.]), min=0, max=1).tolist()
    [0.0, 0.5, 1.0]
    """
    if min is None and max is None:
        raise ArgumentError("clamp(): at least one of 'min' or 'max' must not be None")
    ops = [operand(o) if o is not None else None for o in (input, min, max)]
    return apply("clamp", *ops)


clip = clamp


@bind("clamp_", "clip_", prim="clamp")
def clamp_(self, min=None, max=None):
    """In-place :func:`clamp`.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([-1., 2.]).clamp_(min=0).tolist()
    [0.0, 2.0]
    """
    if min is None and max is None:
        raise ArgumentError("clamp_(): at least one of 'min' or 'max' must not be None")
    ops = [operand(o) if o is not None else None for o in (min, max)]
    apply("clamp", self, *ops, target=self)
    return self


# ---------------------------------------------------------------------------- where
@E.named_kernel("where")
def _where_kernel(xp, cond, a, b, cast=None, out=None):
    return E.cast(xp, xp.where(cond, E.cast(xp, a, cast), E.cast(xp, b, cast)), out)


def _where_rule(ops):
    cond = ops[0]
    cdt = cond._dtype if is_tensor(cond) else D.from_numpy_dtype(np.asarray(cond).dtype)
    if cdt != D.bool_:
        raise DTypeError(f"where() expects a bool condition, got {cdt}")
    rt = E.operand_dtypes(ops[1:])
    return rt, rt


@primitive("where", kernels=[_where_kernel], out_spec=E.spec(_where_rule),
           layout_rule=E.out_layout, kind="elementwise")
def _where_plan(ex, cond, a, b, target=None):
    """Elementwise ``where`` planner (a bool condition; the values promote)."""
    return E.plan_rule(ex, "where", _where_rule, (cond, a, b), target)


@vjp("where", saves=(0,))
def _where_vjp(gs, node):
    c, a, b = node.args
    g = gs[0]
    return (None, unbroadcast(where(c, g, 0.0), a) if needs(a) else None,
            unbroadcast(where(c, 0.0, g), b) if needs(b) else None)


def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1., -2.])
    >>> st.where(x > 0, x, 0.).tolist()
    [1.0, 0.0]
    """
    return E.call("where", condition, input, other)


@bind("where", prim="where")
def _where_method(self, condition, other):
    """``x.where(cond, y)`` is ``st.where(cond, x, y)``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1., -2.])
    >>> x.where(x > 0, 7.).tolist()
    [1.0, 7.0]
    """
    return where(condition, self, other)


# --------------------------------------------------------------------------- astype
@E.named_kernel("astype")
def _astype_kernel(xp, a, out):
    return a.astype(out, copy=True)


@primitive("astype", kernels=[_astype_kernel], out_spec=lambda x, dtype: (x.shape, dtype),
           layout_rule=E.out_layout, kind="elementwise")
def _astype_plan(ex, x, dtype):
    """``x`` converted to ``dtype`` (a copy, laid out like ``x``; ``x.to(dtype)``)."""
    return E.plan(ex, "astype", (x,), {"out": dtype.np.str}, dtype, "astype")


@vjp("astype")
def _astype_vjp(gs, node):
    return (gs[0].to(node.args[0].dtype), None)


# ---------------------------------------------------------------------------- fill_
@E.named_kernel("fill_")
def _fill_kernel(xp, value, a, cast=None, out=None):
    """``value`` broadcast over ``a``'s block, in ``a``'s dtype."""
    return E.cast(xp, xp.where(True, E.cast(xp, value, cast), E.cast(xp, a, cast)), out)


@primitive("fill_", kernels=[_fill_kernel], out_spec=E.spec(E.promote),
           layout_rule=E.out_layout, kind="elementwise")
def _fill_plan(ex, x, value, target):
    """Write ``value`` (a scalar or a broadcastable tensor) into ``target`` in place, converted
    to its dtype (``fill_``, ``copy_``)."""
    dt = target._dtype.np.str
    return E.plan(ex, "fill_", (value, x), {"cast": dt, "out": dt}, target._dtype, "fill_",
                  target=target)


@vjp("fill_")
def _fill_vjp(gs, node):
    x, value = node.args
    g = gs[0]
    return (apply("full", g._layout, 0, g._dtype) if needs(x) else None,
            unbroadcast(g, value))


@bind("fill_", prim="fill_")
def fill_(self, value):
    """Set every element to ``value`` (a number or a one-element tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(3).fill_(2).tolist()
    [2.0, 2.0, 2.0]
    """
    if is_tensor(value) and value.ndim:
        raise ArgumentError(f"fill_ only supports 0-dimension value tensors, got one with "
                            f"{value.ndim} dimensions")
    return apply("fill_", self, operand(value), target=self)


@bind("zero_", prim="fill_")
def zero_(self):
    """Set every element to zero, in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).zero_().tolist()
    [0.0, 0.0]
    """
    return fill_(self, 0)


@bind("copy_", prim="fill_")
def copy_(self, src):
    """Copy ``src`` (broadcastable; converted to this dtype) into this tensor, in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 2).copy_(st.tensor([1., 2.])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    return apply("fill_", self, operand(src), target=self)
