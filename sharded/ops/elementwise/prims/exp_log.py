"""Exponential, logarithm and power primitives: expm1, exp2, log2, log10, logaddexp,
logaddexp2, square, rsqrt and reciprocal (exp, log, log1p and sqrt are in :mod:`.unary`),
with their methods, in-place methods and VJPs.

Each primitive is one block: its kernel, a call of the family's factory :func:`..plan.define`
(the shared planner with its dtype rule, the public function), then its VJP. torch's dtype
rules: integers give the default float dtype, except ``square`` (which keeps integers and turns
bool into int64); ``logaddexp*`` take floating point only (``logaddexp`` complex too, as
torch).
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .... import dtypes as D
from ....core.dispatch import as_tensor, is_tensor, needs, unbroadcast
from ....core.registry import bind, nondiff, vjp
from ....errors import DTypeError, UnsupportedDType
from .. import plan as E

__all__ = [
    "exp2",
    "expm1",
    "frexp",
    "ldexp",
    "ldexp_",
    "log2",
    "log10",
    "logit",
    "logaddexp",
    "logaddexp2",
    "reciprocal",
    "rsqrt",
    "square",
]


def _x(node):
    return node.args[0]


def _out(node):
    return node.saved["out"][0]


# ----------------------------------------------------------------------- expm1, exp2
expm1 = E.define(
    "expm1",
    "expm1",
    E.floating,
    "``exp(input) - 1``, accurate near 0.",
    "st.tensor([0.0])",
    "[0.0]",
)
exp2 = E.define("exp2", "exp2", E.floating, "``2 ** input``.", "st.tensor([3.0])", "[8.0]")


@vjp("expm1", save_out=True)
def _expm1_vjp(gs, node):
    return (gs[0] * (_out(node) + 1),)


@vjp("exp2", save_out=True)
def _exp2_vjp(gs, node):
    return (gs[0] * _out(node) * math.log(2),)


# ----------------------------------------------------------------------- log2, log10
log2 = E.define("log2", "log2", E.floating, "Base-2 logarithm.", "st.tensor([8.0])", "[3.0]")
log10 = E.define(
    "log10",
    "log10",
    E.floating,
    "Base-10 logarithm.",
    "st.tensor([100.0], dtype=st.float64)",  # float32's log10(100) is 2.0000002
    "[2.0]",
)


@vjp("log2", "log10", saves=(0,))
def _logb_vjp(gs, node):
    return (gs[0] / (_x(node) * math.log(2 if node.prim == "log2" else 10)),)


# ------------------------------------------------------------- logaddexp, logaddexp2
@E.named_kernel("logaddexp")
def _logaddexp_kernel(xp, a, b, cast=None, out=None):
    """``xp.logaddexp``; NumPy has none for complex, so there torch's formula: with ``hi``
    the operand of larger real part, ``hi + log1p(exp(lo - hi))`` (no overflow), ``lo`` when
    both real parts are -inf, ``log(exp(lo) + exp(hi))`` when both are +inf, NaN if any is."""
    a, b = E.cast(xp, a, cast), E.cast(xp, b, cast)
    if not any(
        isinstance(v, complex) or getattr(v, "dtype", np.dtype(bool)).kind == "c" for v in (a, b)
    ):
        return E.result(xp, xp.logaddexp(a, b), out)
    a, b = xp.broadcast_arrays(xp.asarray(a), xp.asarray(b))
    with np.errstate(all="ignore"):
        swap = a.real < b.real  # torch's order: ties keep ``b`` as the smaller
        hi, lo = xp.where(swap, b, a), xp.where(swap, a, b)
        r = hi + xp.log1p(xp.exp(lo - hi))
        inf = xp.isinf(lo.real) & (lo.real == hi.real)
        r = xp.where(inf & (lo.real < 0), lo, r)
        r = xp.where(inf & (lo.real > 0), xp.log(xp.exp(lo) + xp.exp(hi)), r)
        r = xp.where(xp.isnan(a) | xp.isnan(b), complex(math.nan, math.nan), r)
    return E.result(xp, r, out)


logaddexp = E.define(
    "logaddexp",
    _logaddexp_kernel,
    E.only("logaddexp", "inexact"),
    "``log(exp(input) + exp(other))`` without overflow.",
    "st.tensor([0.0]), st.tensor([0.0])",
    "[0.6931471824645996]",
    nargs=2,
    tensors=("input", "other"),  # torch has no Number overload
)
logaddexp2 = E.define(
    "logaddexp2",
    "logaddexp2",
    E.only("logaddexp2", "float"),
    "``log2(2**input + 2**other)`` without overflow.",
    "st.tensor([1.0]), st.tensor([1.0])",
    "[2.0]",
    nargs=2,
    tensors=("input", "other"),  # torch has no Number overload
)


@vjp("logaddexp", "logaddexp2", saves=(0, 1), save_out=True)
def _logaddexp_vjp(gs, node):  # each operand's share: exp(x - out) (base 2 for logaddexp2)
    a, b = node.args
    out, g = _out(node), gs[0]
    share = (lambda t: (t - out).exp()) if node.prim == "logaddexp" else (lambda t: exp2(t - out))
    return (
        unbroadcast(g * share(a), a) if needs(a) else None,
        unbroadcast(g * share(b), b) if needs(b) else None,
    )


# ---------------------------------------------------------------------------- square
def _square_rule(ops):
    """torch's square is ``pow(x, 2)``: integers kept, bool gives int64."""
    rt = E.operand_dtypes(ops)
    rt = D.int64 if rt == D.bool_ else rt
    return rt, rt


square = E.define(
    "square", "square", _square_rule, "``input * input``.", "st.tensor([-3, 2])", "[9, 4]"
)


@vjp("square", saves=(0,))
def _square_vjp(gs, node):
    return (gs[0] * 2 * _x(node),)


# ------------------------------------------------------------------ rsqrt, reciprocal
@E.named_kernel("rsqrt")
def _rsqrt_kernel(xp, a, cast=None, out=None):
    a = E.cast(xp, a, cast)
    return E.result(xp, 1 / xp.sqrt(a), out)


@E.named_kernel("reciprocal")
def _reciprocal_kernel(xp, a, cast=None, out=None):
    a = E.cast(xp, a, cast)
    return E.result(xp, 1 / a, out)


rsqrt = E.define(
    "rsqrt", _rsqrt_kernel, E.floating, "``1 / sqrt(input)``.", "st.tensor([4.0])", "[0.5]"
)
reciprocal = E.define(
    "reciprocal", _reciprocal_kernel, E.floating, "``1 / input``.", "st.tensor([4])", "[0.25]"
)


@vjp("rsqrt", save_out=True)
def _rsqrt_vjp(gs, node):
    return (gs[0] * -0.5 * _out(node) ** 3,)


@vjp("reciprocal", save_out=True)
def _reciprocal_vjp(gs, node):
    return (-gs[0] * _out(node) ** 2,)


# ----------------------------------------------------------------------------- logit
def _floating(x):
    """``x`` as a tensor of a floating dtype (integers and bools: the default float dtype)."""
    x = x if is_tensor(x) else as_tensor(x)
    return x if (x.dtype.is_floating_point or x.dtype.is_complex) else x * 1.0


@bind("logit")
def logit(input, eps=None):
    """``log(p / (1 - p))``; a non-negative ``eps`` clamps ``p`` to ``[eps, 1 - eps]``
    first (the gradient is 0 outside it, as torch's).

    Examples
    --------
    >>> import sharded as st
    >>> st.logit(st.tensor([0.5, 0.0, 1.0], dtype=st.float64)).tolist()
    [0.0, -inf, inf]
    """
    x = _floating(input)
    if x.dtype.is_complex:
        raise UnsupportedDType(f'"logit_cpu" not implemented for {x.dtype.name} tensors')
    if eps is not None and eps >= 0:  # torch ignores a negative eps
        # torch's kernel: x < eps ? eps : (x > 1 - eps ? 1 - eps : x), so with eps > 0.5
        # (bounds crossed) values below eps take eps, not clamp's 1 - eps
        lo, hi = eps, 1 - eps
        x = E.call("where", x < lo, lo, E.call("where", x > hi, hi, x))
    elif x.requires_grad:  # torch's gradient is NaN outside [0, 1] (where the value is)
        x = x * E.call("where", (x < 0) | (x > 1), math.nan, 1.0)
    # log(x) - log1p(-x) rather than log(x / (1 - x)): its gradient 1/x + 1/(1-x) is torch's
    # +-inf at 0 and 1 (the quotient's is NaN there)
    return x.log() - (-x).log1p()


@bind("logit_")
def logit_(self, eps=None):
    """In-place :func:`logit` (a floating-point tensor only: torch cannot cast the float
    result back to an integer tensor)."""
    if self.dtype.is_complex:
        raise UnsupportedDType(f'"logit_cpu" not implemented for {self.dtype.name} tensors')
    if not self.dtype.is_floating_point:
        raise DTypeError(f"logit_: result type Float can't be cast to {self.dtype.name}")
    return self.copy_(logit(self, eps))


# ------------------------------------------------------------------------ frexp, ldexp
def _frexp_rule(ops):
    """torch's frexp takes floating point only; the mantissa keeps the dtype."""
    rt = E.operand_dtypes(ops)
    if not rt.is_floating_point:
        raise DTypeError(f"torch.frexp() only supports floating-point dtypes, got {rt.name}")
    return rt, rt


def _exponent_rule(ops):
    return _frexp_rule(ops)[0], D.int32


@E.named_kernel("frexp_mantissa")
def _mantissa_kernel(xp, a, cast=None, out=None):
    return E.result(xp, xp.frexp(a)[0], out)


@E.named_kernel("frexp_exponent")
def _exponent_kernel(xp, a, cast=None, out=None):
    return E.result(xp, xp.frexp(a)[1], out)


E.define("frexp_mantissa", _mantissa_kernel, _frexp_rule)
E.define("frexp_exponent", _exponent_kernel, _exponent_rule)
nondiff("frexp_exponent")  # integer result


@vjp("frexp_mantissa", saves=(0,))
def _mantissa_vjp(gs, node):  # mantissa = x / 2**exponent, the exponent piecewise constant
    return (gs[0] / exp2(E.call("frexp_exponent", _x(node)).to(gs[0].dtype)),)


@bind("frexp")
def frexp(input):
    """Split ``input`` into ``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``,
    ``0.5 <= |mantissa| < 1`` (0, inf and NaN keep themselves with exponent 0); the exponent
    is int32, as torch's.

    Examples
    --------
    >>> import sharded as st
    >>> m, e = st.frexp(st.tensor([8.0, -3.0, 0.0]))
    >>> m.tolist(), e.tolist(), e.dtype
    ([0.5, -0.75, 0.0], [4, 2, 0], sharded.int32)
    """
    if not is_tensor(input):
        raise DTypeError(f"frexp(): argument 'input' must be Tensor, not {type(input).__name__}")
    return FrexpResult(E.call("frexp_mantissa", input), E.call("frexp_exponent", input))


FrexpResult = collections.namedtuple("FrexpResult", ["mantissa", "exponent"])


def _ldexp_operands(input, other):
    for name, v in (("input", input), ("other", other)):
        if not is_tensor(v):  # torch has no Number overload
            raise DTypeError(
                f"ldexp(): argument '{name}' must be Tensor, not {type(v).__name__} {v!r}"
            )


@bind("ldexp")
def ldexp(input, other):
    """``input * 2**other`` (torch's definition: integers give the default float dtype).

    Examples
    --------
    >>> import sharded as st
    >>> st.ldexp(st.tensor([1, 3]), st.tensor([3, -1])).tolist()
    [8.0, 1.5]
    """
    _ldexp_operands(input, other)
    return input * exp2(other)


@bind("ldexp_")
def ldexp_(self, other):
    """In-place :func:`ldexp` (an integer tensor cannot hold the float result, as torch)."""
    _ldexp_operands(self, other)
    return self.mul_(exp2(other))
