"""Trigonometric and hyperbolic primitives: tan, asin, acos, atan, sinh, cosh, asinh, acosh,
atanh, atan2 and hypot (sin, cos and tanh are in :mod:`.unary`), with NumPy's ``arc*``
aliases, their methods, in-place methods and VJPs.

Each primitive is one block: a call of the family's factory :func:`..plan.define` (kernel
``xp.<ufunc>``, the shared planner with its dtype rule, the public function and the names it
binds), then its VJP. Integer inputs give the default float dtype, as torch; ``hypot`` takes
floating point only.
"""

from __future__ import annotations

import math

from ....core.dispatch import as_tensor, is_tensor, needs, unbroadcast
from ....core.registry import bind, vjp
from ....errors import DTypeError
from .. import plan as E

__all__ = [
    "acos",
    "acosh",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "deg2rad",
    "atanh",
    "cosh",
    "hypot",
    "rad2deg",
    "sinh",
    "tan",
]


def _x(node):
    return node.args[0]


_T0, _T1 = "st.tensor([0.0])", "st.tensor([1.0])"  # the examples' inputs


# ------------------------------------------------------------------------------- tan
tan = E.define("tan", "tan", E.floating, "Tangent.", _T0, "[0.0]")


@vjp("tan", save_out=True)
def _tan_vjp(gs, node):
    return (gs[0] * (1 + node.saved["out"][0] ** 2),)


# ------------------------------------------------------------------ asin, acos, atan
asin = E.define("asin", "arcsin", E.floating, "Inverse sine.", _T0, "[0.0]", aliases=("arcsin",))
acos = E.define("acos", "arccos", E.floating, "Inverse cosine.", _T1, "[0.0]", aliases=("arccos",))
atan = E.define("atan", "arctan", E.floating, "Inverse tangent.", _T0, "[0.0]", aliases=("arctan",))


@vjp("asin", "acos", saves=(0,))
def _asin_vjp(gs, node):  # +-1 / sqrt(1 - x^2)
    d = gs[0] / (1 - _x(node) ** 2).sqrt()
    return (d if node.prim == "asin" else -d,)


@vjp("atan", saves=(0,))
def _atan_vjp(gs, node):
    return (gs[0] / (1 + _x(node) ** 2),)


# ------------------------------------------------------------------------ sinh, cosh
sinh = E.define("sinh", "sinh", E.floating, "Hyperbolic sine.", _T0, "[0.0]")
cosh = E.define("cosh", "cosh", E.floating, "Hyperbolic cosine.", _T0, "[1.0]")


@vjp("sinh", "cosh", saves=(0,))
def _sinh_vjp(gs, node):  # each is the other's derivative
    return (gs[0] * (cosh(_x(node)) if node.prim == "sinh" else sinh(_x(node))),)


# ------------------------------------------------------------------ asinh, acosh, atanh
asinh = E.define(
    "asinh", "arcsinh", E.floating, "Inverse hyperbolic sine.", _T0, "[0.0]", aliases=("arcsinh",)
)
acosh = E.define(
    "acosh", "arccosh", E.floating, "Inverse hyperbolic cosine.", _T1, "[0.0]", aliases=("arccosh",)
)
atanh = E.define(
    "atanh",
    "arctanh",
    E.floating,
    "Inverse hyperbolic tangent.",
    _T0,
    "[0.0]",
    aliases=("arctanh",),
)


@vjp("asinh", saves=(0,))
def _asinh_vjp(gs, node):
    return (gs[0] / (_x(node) ** 2 + 1).sqrt(),)


@vjp("acosh", saves=(0,))
def _acosh_vjp(gs, node):
    return (gs[0] / (_x(node) ** 2 - 1).sqrt(),)


@vjp("atanh", saves=(0,))
def _atanh_vjp(gs, node):
    return (gs[0] / (1 - _x(node) ** 2),)


# ----------------------------------------------------------------------------- atan2
atan2 = E.define(
    "atan2",
    "arctan2",
    E.floating,
    "Angle of the point ``(other, input)``, in ``[-pi, pi]``.",
    "st.tensor([0.0]), st.tensor([1.0])",
    "[0.0]",
    nargs=2,
    aliases=("arctan2",),
    tensors=("input", "other"),  # torch has no Number overload
)


@vjp("atan2", saves=(0, 1))
def _atan2_vjp(gs, node):  # d atan2(a, b) = (b da - a db) / (a^2 + b^2)
    a, b = node.args
    r = gs[0] / (a * a + b * b)
    return (
        unbroadcast(r * b, a) if needs(a) else None,
        unbroadcast(-r * a, b) if needs(b) else None,
    )


# ----------------------------------------------------------------------------- hypot
hypot = E.define(
    "hypot",
    "hypot",
    E.only("hypot", "float"),
    "``sqrt(input**2 + other**2)`` without overflow.",
    "st.tensor([3.0]), st.tensor([4.0])",
    "[5.0]",
    nargs=2,
    tensors=("input", "other"),  # torch has no Number overload
)


@vjp("hypot", saves=(0, 1), save_out=True)
def _hypot_vjp(gs, node):
    a, b = node.args
    r = gs[0] / node.saved["out"][0]
    return (
        unbroadcast(r * a, a) if needs(a) else None,
        unbroadcast(r * b, b) if needs(b) else None,
    )


arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh
arctan2 = atan2


# ------------------------------------------------------------------- deg2rad, rad2deg
def _scaled(name, input, factor):
    """``input * factor`` in a floating dtype (integers and bools: the default float dtype);
    complex refused, as torch."""
    x = input if is_tensor(input) else as_tensor(input)
    if x.dtype.is_complex:
        raise DTypeError(f"{name} is not supported for complex tensors ({x.dtype.name})")
    return (x if x.dtype.is_floating_point else x * 1.0) * factor


@bind("deg2rad")
def deg2rad(input):
    """Degrees to radians, ``input * pi / 180``.

    Examples
    --------
    >>> import sharded as st
    >>> st.deg2rad(st.tensor([180], dtype=st.float64)).tolist()
    [3.141592653589793]
    """
    return _scaled("deg2rad", input, math.pi / 180)


@bind("rad2deg")
def rad2deg(input):
    """Radians to degrees, ``input * 180 / pi``.

    Examples
    --------
    >>> import sharded as st
    >>> st.rad2deg(st.tensor([3.141592653589793], dtype=st.float64)).tolist()
    [180.0]
    """
    return _scaled("rad2deg", input, 180 / math.pi)


def _scaled_(name, fn):
    def op(self):
        if not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise DTypeError(f"{name}_: result type Float can't be cast to {self.dtype.name}")
        return self.copy_(fn(self))

    op.__name__ = op.__qualname__ = name + "_"
    op.__doc__ = f"In-place :func:`{name}` (a floating-point tensor only, as torch)."
    return bind(name + "_")(op)


_scaled_("deg2rad", deg2rad)
_scaled_("rad2deg", rad2deg)
