"""Arithmetic primitives: add, sub, mul, div, floor_divide, remainder, pow, maximum, minimum,
neg and abs, with their operators and in-place methods (clamp, where, fill_: :mod:`.selection`).

Each primitive is one block: a call of the family's factory :func:`..plan.define` (kernel, the
shared planner with its dtype rule), its VJP and the public function with the names it binds.
In-place methods (``add_``, ``x += y``...) write into the existing shards where they are, so
the object keeps its identity; an op whose result dtype cannot be stored in the tensor (an int
tensor ``/=``) raises before anything changes.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, is_tensor, needs, operand, unbroadcast
from ....core.registry import bind, vjp
from ....errors import ArgumentError, DivisionByZero, DTypeError, UnsupportedDType
from .. import plan as E

__all__ = [
    "abs",
    "absolute",
    "add",
    "div",
    "divide",
    "floor_divide",
    "mul",
    "multiply",
    "neg",
    "negative",
    "pow",
    "remainder",
    "sub",
    "subtract",
    "true_divide",
]


def _where(cond, a, b):
    """``where`` (a primitive of :mod:`.selection`), reached by name for the VJPs below."""
    return E.call("where", cond, a, b)


def _scaled(input, other, alpha):
    """``alpha * other`` in the dtype of ``input + alpha * other`` (alpha never promotes)."""
    if alpha == 1 and not isinstance(alpha, bool):
        return other
    rt = E.operand_dtypes([operand(input), operand(other)])
    if isinstance(alpha, bool) and rt != D.bool_:
        raise DTypeError(f"Boolean alpha only supported for Boolean results, got {rt.name}")
    if isinstance(alpha, complex) and not rt.is_complex:
        raise DTypeError(
            f"For non-complex input tensors, argument alpha must not be a complex number "
            f"(alpha={alpha}, result dtype {rt.name})"
        )
    if isinstance(alpha, float) and D.category(rt) < 2:  # complex results take a float too
        raise DTypeError(
            f"For integral input tensors, argument alpha must not be a floating point number "
            f"(alpha={alpha}, result dtype {rt.name})"
        )
    if rt == D.bool_:
        alpha = bool(alpha)  # bool + 2 * bool stays bool in torch
    if not is_tensor(other):
        return other * alpha
    return mul(other if other.dtype == rt else other.to(rt), alpha)


def _inplace(name, *operators):
    """The in-place method ``name_`` (and ``operators`` such as ``__iadd__``): ``name``
    written into this tensor's shards."""

    def op(self, other, **kw):
        other = _scaled(self, other, kw.pop("alpha", 1))
        if kw:  # torch refuses unknown keywords; silently ignoring one would change the result
            raise TypeError(f"{name}_() got unexpected keyword arguments {sorted(kw)}")
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
E.define("add", "add", E.promote)


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
    return E.call("add", input, _scaled(input, other, alpha))


_inplace("add", "__iadd__")  # x += y is x.add_(y): the object keeps its identity


# ---------------------------------------------------------------------------------- sub
def _sub_rule(ops):
    """torch refuses ``-`` with any bool operand (a tensor or a Python bool)."""
    dts = [E.operand_dtypes([o]) for o in ops if o is not None]
    if all(d == D.bool_ for d in dts):
        raise DTypeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if D.bool_ in dts:
        raise DTypeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return E.promote(ops)


E.define("sub", "subtract", _sub_rule)
E._PURE.add(_sub_rule)  # it looks at dtypes and scalar types only: cacheable


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
    E._cached_rule(_sub_rule, (operand(input), operand(other)))  # bool operands raise first
    return E.call("sub", input, _scaled(input, other, alpha))


subtract = sub
_inplace("sub", "subtract_", "__isub__")


# ---------------------------------------------------------------------------------- mul
def _mul_rule(ops):
    """:func:`~.elementwise.promote`; a bfloat16 tensor times a Python number computes in
    float32 with the number unrounded, as torch's kernel does (an added number, by contrast,
    is rounded to bfloat16 first)."""
    cast, out = E.promote(ops)
    if out == D.bfloat16 and any(not E._sharded(o) and np.ndim(o) == 0 for o in ops):
        cast = D.float32
    return cast, out


E.define("mul", "multiply", _mul_rule)
E._PURE.add(_mul_rule)  # it looks at dtypes and scalar types only: cacheable


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


multiply = mul
_inplace("mul", "multiply_", "__imul__")


# ---------------------------------------------------------------------------------- div
def _div_rule(ops):
    """:func:`~.elementwise.floating`; a float16 or bfloat16 tensor divided by a Python
    number computes in float32, as torch's kernel does (``2 / 1e-3`` is 2000, not the 1999
    of a divisor first rounded to half)."""
    cast, out = E.floating(ops)
    if out in (D.float16, D.bfloat16) and not E._sharded(ops[1]) and np.ndim(ops[1]) == 0:
        cast = D.float32
    return cast, out


E.define("div", "divide", _div_rule)
E._PURE.add(_div_rule)  # it looks at dtypes and scalar types only: cacheable


@vjp("div", saves=(0, 1))
def _div_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    return (
        unbroadcast(g / b, a) if needs(a) else None,
        unbroadcast(-g * a / (b * b), b) if needs(b) else None,
    )


@bind("div", "divide", "true_divide", "__truediv__", "__rtruediv__", prim="div")
def div(input, other, *, rounding_mode=None):
    """True division (integers give the default float dtype); ``rounding_mode="floor"``
    floors and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay ints).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([-7, 3])
    >>> st.div(x, 2).tolist(), st.div(x, 2, rounding_mode="trunc").tolist()
    ([-3.5, 1.5], [-3, 1])
    """
    if rounding_mode is None:
        if isinstance(input, (int, float)) and getattr(other, "dtype", None) == D.bfloat16:
            # torch: a number over a bfloat16 tensor is the number times its reciprocal
            return E.call("mul", E.call("reciprocal", other), input)
        return E.call("div", input, other)
    if rounding_mode == "floor":
        return E.call("floor_divide", input, other)
    if rounding_mode != "trunc":
        msg = f"rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        raise ArgumentError(msg)
    ops = [operand(input), operand(other)]
    rt = E.operand_dtypes(ops)
    if rt == D.bool_ or rt.is_complex:  # torch: "div_trunc_cpu" not implemented
        raise DTypeError(f"div with rounding_mode='trunc' is not implemented for {rt.name}")
    if rt.is_floating_point:
        return E.call("div", input, other).trunc()
    _int_div_check(ops, rt)  # a scalar zero divisor raises before anything is queued
    # a - fmod(a, b) is an exact multiple of b, so the floor division of it is exact
    return E.call("floor_divide", E.call("sub", input, E.call("fmod", input, other)), other)


divide = true_divide = div


@bind("div_", "divide_", "true_divide_", "__itruediv__", prim="div")
def div_(self, other, *, rounding_mode=None):
    """In-place :func:`div`; an int tensor takes only the rounding modes (true division
    gives floats, which it cannot hold, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([-7, 7]).div_(2, rounding_mode="trunc").tolist()
    [-3, 3]
    """
    if rounding_mode in (None, "floor"):
        apply("floor_divide" if rounding_mode else "div", self, operand(other), target=self)
        return self
    r = div(self, other, rounding_mode=rounding_mode)
    if D.category(r.dtype) > D.category(self.dtype):
        msg = f"result type {r.dtype.name} of div_ can't be cast to the output's {self.dtype.name}"
        raise DTypeError(msg)
    return self.copy_(r)


# ------------------------------------------------------------------------- floor_divide
def _int_div_kernel(name, fn):
    """Kernel of ``name`` (``xp.<fn>``) that raises on an integer divisor holding a zero, as
    torch; with a tensor divisor that surfaces as :class:`~sharded.errors.OpFailed` at the
    next read (checking the data on the driver would block every op)."""

    def k(xp, a, b, cast=None, out=None):
        a, b = E.cast(xp, a, cast), E.cast(xp, b, cast)
        if cast is not None and np.dtype(cast).kind in "iub" and bool(xp.any(xp.asarray(b) == 0)):
            raise ZeroDivisionError(f"ZeroDivisionError: integer {name} by zero")
        return E.result(xp, getattr(xp, fn)(a, b), out)

    return E.named_kernel(name)(k)


def _int_div_check(operands, cast):
    """An integer ``//`` or ``%`` by a scalar zero raises at once, before anything is queued."""
    b = operands[1]
    if D.category(cast) < 2 and not E._sharded(b) and np.ndim(b) == 0:
        if D.wrap_int(b, cast) == 0:
            raise DivisionByZero(
                f"ZeroDivisionError: integer division by zero (divisor {b!r}, {cast.name})"
            )


E.define(
    "floor_divide",
    _int_div_kernel("floor_divide", "floor_divide"),
    E.only("floor_divide", "nonbool"),  # torch: "div_floor_cpu" not implemented for 'Bool'
    check=_int_div_check,
)


@vjp("floor_divide")  # piecewise constant: zero (torch's div(rounding_mode="floor") too)
def _floor_divide_vjp(gs, node):
    return tuple(E.zeros_like_grad(unbroadcast(gs[0], a)) if needs(a) else None for a in node.args)


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
E.define(
    "remainder",
    _int_div_kernel("remainder", "remainder"),
    E.only("remainder", "nonbool"),  # torch: "remainder_cpu" not implemented for 'Bool'
    check=_int_div_check,
)


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
@E.named_kernel("pow", pooled=True)
def _pow_kernel(xp, a, b, cast=None, out=None, alloc=None):
    """``xp.power``; a negative integer power of a signed integer is what C's integer pow
    gives (torch: ``2 ** -1 == 0``, ``1`` for base 1, ``+-1`` for base -1) where NumPy raises.
    A large result goes into a block of the worker's pool (``alloc``) where one fits."""
    a, b = E.cast(xp, a, cast), E.cast(xp, b, cast)
    if cast is None or np.dtype(cast).kind != "i" or not bool(xp.any(xp.asarray(b) < 0)):
        if alloc is not None and cast is not None and np.dtype(cast) == np.dtype(out):
            # operands in ``cast``: the ufunc's own result dtype is ``out``
            shape = np.broadcast_shapes(*[x.shape for x in (a, b) if hasattr(x, "shape")])
            buf = alloc(shape, out) if shape else None
            if buf is not None:
                try:
                    return xp.power(a, b, out=buf)
                except TypeError:  # (no loop of that dtype: bool) the usual path converts
                    pass
        return E.result(xp, xp.power(a, b), out)
    neg = xp.asarray(b) < 0
    r = xp.power(a, xp.where(neg, 0, b).astype(np.dtype(cast)))
    base = xp.asarray(a)
    odd = (xp.asarray(b) % 2) != 0
    special = xp.where(base == 1, 1, xp.where(base == -1, xp.where(odd, -1, 1), 0))
    return E.result(xp, xp.where(neg, special, r).astype(r.dtype), out)


_pow_nonbool = E.only("pow", "nonbool")  # torch: "pow" not implemented for 'Bool'


def _pow_rule(ops):
    """``promote``; bool only for a Python bool exponent (torch: ``x ** True`` is ``x``)."""
    return E.promote(ops) if isinstance(ops[1], (bool, np.bool_)) else _pow_nonbool(ops)


E._PURE.add(_pow_rule)  # it looks at dtypes and scalar types only: cacheable


def _pow_check(operands, cast):
    """Integers to negative integer powers raise, as torch."""
    e = operands[1]
    negative_int = isinstance(e, (int, np.integer)) and not isinstance(e, bool) and e < 0
    if negative_int and D.category(cast) == 1:
        raise ArgumentError(
            f"integers to negative integer powers are not allowed "
            f"(exponent {e} on a {cast.name} tensor)"
        )


E.define("pow", _pow_kernel, _pow_rule, check=_pow_check)


def _log(a):
    """``log(a)`` of a tensor or a Python number (NaN below 0, -inf at 0, as torch)."""
    if is_tensor(a):
        return a.log()
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log(np.float64(a)))


@vjp("pow", saves=(0, 1))  # the inputs, not the output: y = x**p; y[0] = 1 still backprops
def _pow_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    ga = gb = None
    if needs(a):  # b * a^(b-1), exactly 0 where b == 0 (0**0 has gradient 0, as torch)
        if is_tensor(b):
            ga = unbroadcast(_where(b == 0, 0.0, g * b * a ** (b - 1)), a)
        else:
            ga = g * b * a ** (b - 1) if b != 0 else apply("full", g._layout, 0, g._dtype)
    if needs(b):  # a^b log a, taken as 0 where a == 0 and b >= 0 (as torch)
        out = a**b
        bre = b.real if b.dtype.is_complex else b  # complex: the sign of the real part
        zero = (a == 0) & (bre >= 0) if is_tensor(a) else (bre >= 0 if a == 0 else None)
        term = out * _log(a)
        gb = unbroadcast(g * (term if zero is None else _where(zero, 0.0, term)), b)
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


# ------------------------------------------------------------------------------ neg
def _negate(ops):
    rt = E.operand_dtypes(ops)
    if rt == D.bool_:
        raise DTypeError(
            "negation (-) of a bool tensor is not supported; use ~ or logical_not() instead"
        )
    return rt, rt


E.define("neg", "negative", _negate)


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
bind("neg_", "negative_", prim="neg")(E.inplace_unary("neg"))


@bind("__pos__")
def _positive(self):
    """``+x`` is ``x`` itself."""
    return self


# ------------------------------------------------------------------------------ abs
def _abs_rule(ops):
    """|complex| is real, as torch; torch has no abs for bool ("abs_cpu" not implemented)."""
    rt = E.operand_dtypes(ops)
    if rt == D.bool_:
        raise UnsupportedDType('"abs_cpu" not implemented for bool tensors')
    return rt, D.to_real(rt)


E.define("abs", "absolute", _abs_rule)


@vjp("abs", saves=(0,))
def _abs_vjp(gs, node):
    (a,) = node.args
    if a.dtype.is_complex:  # d|z| = re(conj(sgn z) dz) (the engine's conjugate convention)
        return (gs[0] * E.call("sgn", a).conj(),)
    return (gs[0] * _where(a > 0, 1.0, _where(a < 0, -1.0, 0.0)),)


@bind("abs", "absolute", "__abs__", prim="abs")
def abs(input):
    """Absolute value.

    Examples
    --------
    >>> import sharded as st
    >>> st.abs(st.tensor([1.0, -4.0])).tolist()
    [1.0, 4.0]
    """
    return E.call("abs", input)


absolute = abs


@bind("abs_", "absolute_", prim="abs")
def abs_(self):
    """In-place ``abs`` (refused for complex tensors, whose modulus is real, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([-1.0]).abs_().tolist()
    [1.0]
    """
    if self.dtype.is_complex:
        raise DTypeError(f"In-place abs is not supported for complex tensors ({self.dtype.name})")
    apply("abs", self, target=self)
    return self
