"""Rounding and sign primitives: floor, ceil, round (``decimals=``), trunc, frac, sign, sgn,
signbit, copysign and nextafter, with their methods and in-place methods.

Each primitive is one block: its kernel, a call of the family's factory
:func:`..plan.define` (the shared planner with its dtype rule, the public function), then
its VJP. torch's dtype rules: rounding keeps integer dtypes (bool refused), ``frac`` and
``nextafter`` take floating point only, ``sign`` keeps bool, ``copysign`` gives the default
float for integers. The piecewise-constant ops have torch's zero gradient.
"""

from __future__ import annotations

import math

import numpy as np

from .... import dtypes as D
from ....core.dispatch import needs, unbroadcast
from ....core.registry import bind, nondiff, vjp
from ....errors import ArgumentError, UnsupportedDType
from .. import plan as E

__all__ = [
    "ceil",
    "copysign",
    "fix",
    "floor",
    "frac",
    "nextafter",
    "round",
    "sgn",
    "sign",
    "signbit",
    "trunc",
]


def _int_identity(fn):
    """The kernel ``fn``: ``xp.<fn>``, integer blocks returned as they are (NumPy's floor of
    an int gives a float)."""

    def k(xp, a, cast=None, out=None):
        if D.kind(a) in "iub":
            return E.result(xp, a, out)
        return E.result(xp, getattr(xp, fn)(a), out)

    return E.named_kernel(fn)(k)


# ------------------------------------------------------------------ floor, ceil, trunc
_HALVES = "st.tensor([-1.5, 1.5])"  # the examples' input
floor = E.define(
    "floor",
    _int_identity("floor"),
    E.only("floor", "nonbool"),
    "Largest integer <= input.",
    _HALVES,
    "[-2.0, 1.0]",
)
ceil = E.define(
    "ceil",
    _int_identity("ceil"),
    E.only("ceil", "nonbool"),
    "Smallest integer >= input.",
    _HALVES,
    "[-1.0, 2.0]",
)
trunc = E.define(
    "trunc",
    _int_identity("trunc"),
    E.only("trunc", "nonbool"),
    "Rounds toward zero.",
    _HALVES,
    "[-1.0, 1.0]",
    aliases=("fix",),
)
fix = trunc


@vjp("floor", "ceil", "trunc")
def _step_vjp(gs, node):  # piecewise constant: torch's gradient is zero everywhere
    return (E.zeros_like_grad(gs[0]),)


# ------------------------------------------------------------------------------ round
@E.named_kernel("round")
def _round_kernel(xp, a, decimals, cast=None, out=None):
    """Half to even, as torch; ``decimals`` scales by ``10**decimals`` first."""
    if D.kind(a) in "iub":
        return E.result(xp, a, out)
    return E.result(xp, xp.round(a, decimals), out)


def _round_rule(ops):
    """``decimals`` takes no part in promotion; integers round only with ``decimals=0``."""
    cast, out = E.only("round", "nonbool")(ops[:1])
    if D.category(out) == 1 and len(ops) > 1 and ops[1] != 0:
        raise UnsupportedDType(f"round with decimals={ops[1]} is not implemented for {out.name}")
    return None, out


E.define("round", _round_kernel, _round_rule)


@vjp("round")
def _round_vjp(gs, node):
    return E.zeros_like_grad(gs[0]), None


def _decimals(decimals, x=None):
    """``decimals`` checked; torch's ``round(x, decimals=...)`` overload (any value, 0 too)
    has no integer kernel ("round_vml_cpu" not implemented for 'Long'), plain round has."""
    if decimals is None:
        return 0
    if D.category(getattr(x, "dtype", D.float32)) <= 1:
        raise UnsupportedDType(
            f"round(decimals={decimals!r}) is not implemented for {x.dtype.name} tensors"
        )
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
        raise ArgumentError(f"round(): decimals must be an int, got {decimals!r}")
    return int(decimals)


@bind("round", prim="round")
def round(input, *, decimals=None):
    """Rounds half to even (``decimals``: to that many decimal places), as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.round(st.tensor([0.5, 1.5, 2.567])).tolist()
    [0.0, 2.0, 3.0]
    >>> st.round(st.tensor([2.567], dtype=st.float64), decimals=2).tolist()
    [2.57]
    """
    return E.call("round", input, _decimals(decimals, input))


@bind("round_", prim="round")
def round_(self, *, decimals=None):
    """In-place :func:`round`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([0.4]); x.round_() is x
    True
    """
    return E.call_("round", self, _decimals(decimals, self))


# ------------------------------------------------------------------------------- frac
@E.named_kernel("frac")
def _frac_kernel(xp, a, cast=None, out=None):
    """``a - trunc(a)`` (the sign of ``a``), as torch."""
    return E.result(xp, a - xp.trunc(a), out)


frac = E.define(
    "frac",
    _frac_kernel,
    E.only("frac", "float"),
    "``input - trunc(input)``.",
    "st.tensor([-1.5, 2.25])",
    "[-0.5, 0.25]",
)


@vjp("frac")
def _frac_vjp(gs, node):
    return (gs[0],)


# ------------------------------------------------------------------------- sign, sgn
def _sign_body(xp, a, cast=None, out=None):
    """``xp.sign``; bool is its own sign, and NaN gives 0, as torch."""
    if D.kind(a) == "b":
        return E.result(xp, a, out)
    if D.kind(a) == "c":  # z / |z|; torch's NaN (both parts) where a part is inf or NaN
        with np.errstate(all="ignore"):
            r = xp.where(a == 0, 0, a / xp.abs(a))
            r = xp.where(xp.isfinite(a), r, complex(math.nan, math.nan))
        return E.result(xp, r.astype(a.dtype), out)
    r = xp.sign(a)
    if D.kind(a) == "f":
        r = xp.where(xp.isnan(a), 0, r).astype(a.dtype)
    return E.result(xp, r, out)


def _sign_kernel(name):
    def k(xp, a, cast=None, out=None):
        return _sign_body(xp, a, cast, out)

    return E.named_kernel(name)(k)


sign = E.define(
    "sign",
    _sign_kernel("sign"),
    E.promote,
    "-1, 0 or 1 by sign (0 for NaN).",
    "st.tensor([-2.0, 0.0, 3.0])",
    "[-1.0, 0.0, 1.0]",
)
vjp("sign")(_step_vjp)
sgn = E.define(
    "sgn",
    _sign_kernel("sgn"),
    E.promote,
    "``sign`` (torch's name that extends to complex).",
    "st.tensor([-2, 0, 3])",
    "[-1, 0, 1]",
)


@vjp("sgn", saves=(0,))
def _sgn_vjp(gs, node):
    """Zero for reals; for complex z, sgn = z/|z| pulls ``g`` back to
    ``g/|z| - re(g z) conj(z)/|z|^3`` (0 at z = 0), in the engine's conjugate convention."""
    (z,) = node.args
    if not z.dtype.is_complex:
        return _step_vjp(gs, node)
    g, r = gs[0], z.abs()
    zero = r == 0
    r = E.call("where", zero, 1.0, r)
    return (E.call("where", zero, 0.0, g / r - (g * z).real * z.conj() / (r * r * r)),)


# ---------------------------------------------------------------------------- signbit
@E.named_kernel("signbit")
def _signbit_kernel(xp, a, cast=None, out=None):
    """True where the sign bit is set (``-0.0`` included); integers compare with 0."""
    if D.kind(a) in "iub":
        return E.result(xp, a < 0, out)
    return E.result(xp, xp.signbit(a), out)


signbit = E.define(
    "signbit",
    _signbit_kernel,
    E.logical,
    "True where the sign bit is set.",
    "st.tensor([-0.0, 1.0])",
    "[True, False]",
    inplace=False,
)
nondiff("signbit")  # bool result


# --------------------------------------------------------------------------- copysign
copysign = E.define(
    "copysign",
    "copysign",
    E.floating,
    "``abs(input)`` with the sign of ``other``.",
    "st.tensor([1.0, 2.0]), -1.0",
    "[-1.0, -2.0]",
    nargs=2,
)


@vjp("copysign", saves=(0,), save_out=True)
def _copysign_vjp(gs, node):  # |a| with b's sign: d/da is sign(a) sign(out); none for b
    a, b = node.args
    ga = gs[0] * a.sign() * node.saved["out"][0].sign()
    return unbroadcast(ga, a), unbroadcast(E.zeros_like_grad(gs[0]), b) if needs(b) else None


# -------------------------------------------------------------------------- nextafter
nextafter = E.define(
    "nextafter",
    "nextafter",
    E.only("nextafter", "float"),
    "The next representable value after ``input`` towards ``other``.",
    "st.tensor([0.0], dtype=st.float64), st.tensor(1.0, dtype=st.float64)",
    "[5e-324]",
    nargs=2,
    tensors=("input", "other"),  # torch has no Number overload
)


@vjp("nextafter", saves=(0, 1))
def _nextafter_vjp(gs, node):
    """torch's rule: ``input`` gets the gradient where ``input != other`` (the result is
    ``other`` itself elsewhere), ``other`` a zero one."""
    a, b = node.args
    ga = unbroadcast(E.call("where", a != b, gs[0], 0.0), a) if needs(a) else None
    return ga, unbroadcast(E.zeros_like_grad(gs[0]), b) if needs(b) else None
