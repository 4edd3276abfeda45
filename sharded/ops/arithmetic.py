"""Arithmetic primitives: add, sub, mul, div, floor_divide, remainder, pow, maximum, minimum,
neg and abs, with their operators and in-place methods (clamp, where, astype and fill_ are in
:mod:`.selection`).

Each primitive is one block: its kernel (named like the primitive), its planner (the shared
elementwise rule of :mod:`.elementwise`, the one op module this family imports), its VJP and
the public function with the names it binds. In-place methods (``add_``, ``x += y``...) write
into the existing shards where they are, so the object keeps its identity; an op whose result
dtype cannot be stored in the tensor (an int tensor ``/=``) raises before anything changes.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..core.dispatch import apply, needs, operand, unbroadcast
from ..core.registry import bind, nondiff, primitive, vjp
from ..errors import ArgumentError, DTypeError
from . import elementwise as E

__all__ = [
    "abs",
    "add",
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
]


def _elementwise(name, fn, rule=E.promote):
    """Register primitive ``name``: kernel ``xp.<fn>``, the shared planner with ``rule``."""
    k = E.ufunc_kernel(name, fn)

    def plan(ex, *operands, target=None):
        return E.plan_rule(ex, name, rule, operands, target)

    plan.__name__ = plan.__qualname__ = name
    plan.__doc__ = f"Elementwise ``{name}`` planner (``xp.{fn}``, {rule.__name__})."
    return primitive(
        name, kernels=[k], out_spec=E.spec(rule), layout_rule=E.out_layout, kind="elementwise"
    )(plan)


def _where(cond, a, b):
    """``where`` (a primitive of :mod:`.selection`), reached by name for the VJPs below."""
    return E.call("where", cond, a, b)


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
    return (
        unbroadcast(g * b, a) if needs(a) else None,
        unbroadcast(g * a, b) if needs(b) else None,
    )


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
    return (
        unbroadcast(g / b, a) if needs(a) else None,
        unbroadcast(-g * a / (b * b), b) if needs(b) else None,
    )


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


@primitive(
    "pow",
    kernels=[_pow_kernel],
    out_spec=E.spec(E.promote),
    layout_rule=E.out_layout,
    kind="elementwise",
)
def _pow_plan(ex, *operands, target=None):
    """Elementwise ``pow`` planner (``xp.power``, promote); integers to negative integer
    powers raise, as torch."""

    def check(cast):
        e = operands[1]
        if (
            D.category(cast) == 1
            and isinstance(e, (int, np.integer))
            and not isinstance(e, bool)
            and e < 0
        ):
            raise ArgumentError(
                f"integers to negative integer powers are not allowed "
                f"(exponent {e} on a {cast.name} tensor)"
            )

    return E.plan_rule(ex, "pow", E.promote, operands, target, check=check)


@vjp("pow", save_out=True, saves=(0, 1))
def _pow_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    ga = unbroadcast(g * b * a ** (b - 1), a) if needs(a) else None
    gb = None
    if needs(b):  # d(a^b)/db = a^b log a, taken as 0 where a == 0 (as torch)
        gb = unbroadcast(g * _where(a != 0, node.saved["out"][0] * abs(a).log(), 0.0), b)
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
    share = _where(win, 1.0, _where(a == b, 0.5, 0.0))  # ties split the gradient
    return (
        unbroadcast(g * share, a) if needs(a) else None,
        unbroadcast(g * (1.0 - share), b) if needs(b) else None,
    )


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
        raise DTypeError(
            "negation (-) of a bool tensor is not supported; use ~ or logical_not() instead"
        )
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
    return (gs[0] * _where(a > 0, 1.0, _where(a < 0, -1.0, 0.0)),)


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
