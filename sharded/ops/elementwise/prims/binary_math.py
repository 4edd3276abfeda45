"""Binary math primitives: fmod, fmax, fmin, xlogy, heaviside, nan_to_num, sinc, gcd, lcm,
bitwise_left_shift and bitwise_right_shift, with their methods, in-place methods (where torch
has them) and VJPs.

Each primitive is one block: its kernel, a call of the family's factory :func:`..plan.define`
(the shared planner with its dtype rule, the public function), then its VJP. torch's dtype
rules: ``fmod`` refuses bool, ``xlogy`` and ``sinc`` give the default float for integers,
``heaviside`` wants equal dtypes, ``nan_to_num`` keeps the dtype, ``gcd``, ``lcm`` and the
shifts take integers only; ``fmax``, ``fmin``, ``heaviside``, ``gcd`` and ``lcm`` take tensors
only (torch has no Number overload of them). The shifts are also the operators ``<<``, ``>>``,
``<<=``, ``>>=``. Other operands' primitives are reached by name (:func:`apply`).
"""

from __future__ import annotations

import math

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor, needs, unbroadcast
from ....core.registry import bind, nondiff, vjp
from ....errors import ArgumentError, DivisionByZero, DTypeError
from .. import plan as E

__all__ = [
    "maximum",
    "minimum",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "fmax",
    "float_power",
    "fmin",
    "fmod",
    "gcd",
    "heaviside",
    "lcm",
    "nan_to_num",
    "rsub",
    "sinc",
    "xlogy",
]


def _masked(mask, g):
    """``g`` where ``mask`` holds, else 0 (``g * mask`` would keep NaN and inf)."""
    return apply("where", mask, g, 0.0)


def _grads(node, ga, gb):
    """Each operand's gradient reduced to its shape; None for constants."""
    a, b = node.args[:2]
    return (
        unbroadcast(ga(), a) if needs(a) else None,
        unbroadcast(gb(), b) if needs(b) else None,
    )


# ------------------------------------------------------------------------------- fmod
@E.named_kernel("fmod")
def _fmod_kernel(xp, a, b, cast=None, out=None):
    """``xp.fmod``; an integer divisor holding a zero raises, as torch (NumPy gives 0)."""
    a, b = E.cast(xp, a, cast), E.cast(xp, b, cast)
    if cast is not None and np.dtype(cast).kind in "iu" and bool(xp.any(xp.asarray(b) == 0)):
        raise ZeroDivisionError("ZeroDivisionError: integer fmod by zero")
    return E.result(xp, xp.fmod(a, b), out)


def _fmod_check(operands, cast):
    """An integer fmod by a scalar zero raises before anything is queued."""
    b = operands[1]
    if cast.np.kind in "iu" and not is_tensor(b) and np.ndim(b) == 0 and D.wrap_int(b, cast) == 0:
        raise DivisionByZero(f"ZeroDivisionError: integer fmod by zero ({cast.name})")


fmod = E.define(
    "fmod",
    _fmod_kernel,
    E.only("fmod", "nonbool"),
    "C's remainder: the sign of ``input`` (compare :func:`remainder`).",
    "st.tensor([5.0, -5.0]), 3.0",
    "[2.0, -2.0]",
    check=_fmod_check,
    nargs=2,
)


@vjp("fmod", saves=(0, 1))
def _fmod_vjp(gs, node):  # a - trunc(a / b) * b: d/da = 1, d/db = -trunc(a / b), as torch
    a, b = node.args
    g = gs[0]
    return _grads(node, lambda: g, lambda: -g * apply("trunc", apply("div", a, b)))


# ----------------------------------------------------------------- float_power, rsub
def _float_pow_dtype(*vals):
    """float64, or complex128 where any operand is complex (torch's float_power)."""
    cplx = any(v.dtype.is_complex if is_tensor(v) else isinstance(v, complex) for v in vals)
    return D.complex128 if cplx else D.float64


def _as(v, dt):
    return v.to(dt) if is_tensor(v) else (complex(v) if dt.is_complex else float(v))


@bind("float_power")
def float_power(input, exponent):
    """``input ** exponent`` computed in double precision (float64, complex128 if complex).

    Examples
    --------
    >>> import sharded as st
    >>> r = st.float_power(st.tensor([2, 3]), 2)
    >>> r.tolist(), r.dtype
    ([4.0, 9.0], sharded.float64)
    """
    dt = _float_pow_dtype(input, exponent)
    return E.call("pow", _as(input, dt), _as(exponent, dt))


@bind("float_power_")
def float_power_(self, exponent):
    """In-place :func:`float_power`: ``self`` must already be float64 (complex128), as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([2.0], dtype=st.float64).float_power_(3).tolist()
    [8.0]
    """
    dt = _float_pow_dtype(self, exponent)
    if self.dtype != dt:
        raise DTypeError(f"float_power_ needs a {dt.name} tensor, got {self.dtype.name}")
    return self.pow_(_as(exponent, dt))


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``sub`` with its operands swapped).

    Examples
    --------
    >>> import sharded as st
    >>> st.rsub(st.tensor([1, 2]), 5).tolist()
    [4, 3]
    """
    return E.call("sub", other, input if alpha == 1 else E.call("mul", input, alpha))


# ------------------------------------------------------------------- maximum, minimum
_BOTH = ("input", "other")  # torch has no Number overload of these
maximum = E.define(
    "maximum",
    "maximum",
    E.promote,
    """Elementwise maximum (NaN propagates); both operands tensors, as torch (for a number use
    :func:`clamp`).""",
    "st.tensor([1, 5]), st.tensor([3, 2])",
    "[3, 5]",
    nargs=2,
    tensors=_BOTH,
)
minimum = E.define(
    "minimum",
    "minimum",
    E.promote,
    """Elementwise minimum (NaN propagates); both operands tensors, as torch (for a number use
    :func:`clamp`).""",
    "st.tensor([1, 5]), st.tensor([3, 2])",
    "[1, 2]",
    nargs=2,
    tensors=_BOTH,
)


@vjp("maximum", "minimum", saves=(0, 1))
def _maxmin_vjp(gs, node):
    a, b = node.args
    g = gs[0]
    # torch: ties split the gradient; otherwise only the operand that strictly loses gets
    # none, so with a NaN (no order) both operands receive the full gradient
    a_loses, b_loses = (a < b, a > b) if node.prim == "maximum" else (a > b, a < b)
    tie = a == b

    def share(loses):
        return g * E.call("where", tie, 0.5, E.call("where", loses, 0.0, 1.0))

    return _grads(node, lambda: share(a_loses), lambda: share(b_loses))


# ------------------------------------------------------------------------- fmax, fmin
fmax = E.define(
    "fmax",
    "fmax",
    E.promote,
    "Elementwise maximum that ignores NaN (NaN only where both are).",
    "st.tensor([1.0, float('nan')]), st.tensor([float('nan'), 2.0])",
    "[1.0, 2.0]",
    nargs=2,
    inplace=False,
    tensors=_BOTH,
)
fmin = E.define(
    "fmin",
    "fmin",
    E.promote,
    "Elementwise minimum that ignores NaN (NaN only where both are).",
    "st.tensor([1.0, float('nan')]), st.tensor([float('nan'), 2.0])",
    "[1.0, 2.0]",
    nargs=2,
    inplace=False,
    tensors=_BOTH,
)


@vjp("fmax", "fmin", saves=(0, 1))
def _fminmax_vjp(gs, node):  # the chosen operand takes the gradient (input on ties or NaN b)
    a, b = node.args
    pick_a = apply(
        "logical_or", apply("ge" if node.prim == "fmax" else "le", a, b), apply("isnan", b)
    )
    g = gs[0]
    return _grads(
        node, lambda: _masked(pick_a, g), lambda: _masked(apply("logical_not", pick_a), g)
    )


# ------------------------------------------------------------------------------ xlogy
@E.named_kernel("xlogy")
def _xlogy_kernel(xp, a, b, cast=None, out=None):
    """``a * log(b)``, 0 where ``a == 0`` unless ``b`` is NaN, as torch."""
    a, b = E.cast(xp, a, cast), E.cast(xp, b, cast)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = a * xp.log(b)
    r = xp.where((a == 0) & ~xp.isnan(b), 0, r)
    return E.result(xp, r, out)


xlogy = E.define(
    "xlogy",
    _xlogy_kernel,
    E.floating,
    "``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN).",
    "st.tensor([0.0, 2.0]), st.tensor([0.0, 1.0])",
    "[0.0, 0.0]",
    nargs=2,
)


@vjp("xlogy", saves=(0, 1))
def _xlogy_vjp(gs, node):  # d/da = log(b) (0 where a == 0 and b <= 0), d/db = a / b
    a, b = node.args
    g = gs[0]

    def ga():
        zero = apply("logical_and", apply("eq", a, 0), apply("le", b, 0))
        return apply("where", zero, 0.0, apply("xlogy", g, b))

    return _grads(node, ga, lambda: g * a / b)


# -------------------------------------------------------------------------- heaviside
def _heaviside_rule(ops):
    """torch refuses mixed dtypes instead of promoting."""
    kinds = {o._dtype for o in ops if hasattr(o, "_dtype")}
    if len(kinds) > 1:
        names = sorted(d.name for d in kinds)
        raise DTypeError(f"heaviside is not implemented for different dtypes {names}")
    rt = E.operand_dtypes(ops)
    return rt, rt


@E.named_kernel("heaviside")
def _heaviside_kernel(xp, a, values, cast=None, out=None):
    """0 below zero, ``values`` at zero, 1 above (NaN stays NaN)."""
    a = E.cast(xp, a, cast)
    r = xp.where(a == 0, values, xp.where(a > 0, 1, xp.where(a < 0, 0, a)))
    return E.result(xp, r, out or a.dtype)


heaviside = E.define(
    "heaviside",
    _heaviside_kernel,
    _heaviside_rule,
    "Step function: 0 below zero, ``values`` at zero, 1 above.",
    "st.tensor([-1.0, 0.0, 2.0]), st.tensor([0.5])",
    "[0.0, 0.5, 1.0]",
    nargs=2,
    tensors=("input", "values"),
)
nondiff("heaviside")  # torch defines no derivative


# ------------------------------------------------------------------------- nan_to_num
@E.named_kernel("nan_to_num")
def _nan_to_num_kernel(xp, a, nan, posinf, neginf, cast=None, out=None):
    """NumPy's ``nan_to_num`` (the driver resolved None to the dtype's finite limits, so a
    NaN replacement is a NaN, as torch)."""
    if D.kind(a) not in "fc":
        return E.result(xp, a, out)
    with np.errstate(over="ignore"):  # a replacement beyond the dtype's range is inf
        # (NumPy leaves an ml_dtypes bfloat16 array alone: it takes it for no float)
        b = a.astype(np.float32) if D.is_bf16(a) else a
        r = xp.nan_to_num(b, nan=nan, posinf=posinf, neginf=neginf)
    return E.result(xp, r, out or a.dtype)


def _keep_rule(ops):
    """The input's own dtype; the replacement values take no part in promotion."""
    rt = E.operand_dtypes(ops[:1])
    return None, rt


E.define("nan_to_num", _nan_to_num_kernel, _keep_rule)


@vjp("nan_to_num", saves=(0,))
def _nan_to_num_vjp(gs, node):  # replaced entries are constants, as torch
    return (_masked(apply("isfinite", node.args[0]), gs[0]), None, None, None)


def _fill(name, v, default):
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ArgumentError(f"nan_to_num(): {name} must be a number or None, got {v!r}")
    return float(v)


def _nan_args(x, nan, posinf, neginf):
    """The replacement values; None is the largest / lowest finite value of ``x``'s dtype."""
    kind = x.dtype.kind
    big = float(D.finfo_np(x.dtype.np).max) if kind in "fc" else 0.0  # ints come back as are
    return (
        _fill("nan", nan, 0.0),
        _fill("posinf", posinf, big),
        _fill("neginf", neginf, -big),
    )


@bind("nan_to_num", prim="nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replaces NaN with ``nan``, +inf with ``posinf`` and -inf with ``neginf`` (None: the
    dtype's largest / lowest finite value); integer and bool tensors come back unchanged.

    Examples
    --------
    >>> import sharded as st
    >>> st.nan_to_num(st.tensor([float('nan'), float('inf'), 1.0]), posinf=9.0).tolist()
    [0.0, 9.0, 1.0]
    """
    x = input if is_tensor(input) else as_tensor(input)
    return E.call("nan_to_num", x, *_nan_args(x, nan, posinf, neginf))


@bind("nan_to_num_", prim="nan_to_num")
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In-place :func:`nan_to_num`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([float('nan')]); x.nan_to_num_(nan=2.0).tolist()
    [2.0]
    """
    return E.call_("nan_to_num", self, *_nan_args(self, nan, posinf, neginf))


# ------------------------------------------------------------------------------- sinc
@E.named_kernel("sinc")
def _sinc_kernel(xp, a, cast=None, out=None):
    """Normalised ``sin(pi x) / (pi x)``, 1 at 0 (NumPy's ``sinc``)."""
    return E.result(xp, xp.sinc(E.cast(xp, a, cast)), out)


sinc = E.define(
    "sinc",
    _sinc_kernel,
    E.floating,
    "``sin(pi x) / (pi x)``, 1 at 0.",
    "st.tensor([0.0, 0.5], dtype=st.float64)",
    "[1.0, 0.6366197723675814]",  # 2 / pi
)


@vjp("sinc", saves=(0,))
def _sinc_vjp(gs, node):  # (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x == 0, as torch
    x = node.args[0]
    px = x * math.pi
    d = (px * px.cos() - px.sin()) / (px * x)
    return (apply("where", apply("eq", x, 0), 0.0, d) * gs[0],)


# -------------------------------------------------------------------------- gcd, lcm
gcd = E.define(
    "gcd",
    "gcd",
    E.only("gcd", "int"),
    "Greatest common divisor.",
    "st.tensor([12, -18]), st.tensor([8])",
    "[4, 2]",
    nargs=2,
    tensors=_BOTH,
)
lcm = E.define(
    "lcm",
    "lcm",
    E.only("lcm", "int"),
    "Least common multiple.",
    "st.tensor([4, -6]), st.tensor([6])",
    "[12, 6]",
    nargs=2,
    tensors=_BOTH,
)
nondiff("gcd", "lcm")  # integer results


# ------------------------------------------------------------------------------ shifts
def _shift_kernel(name, left):
    def k(xp, a, b, cast=None, out=None):
        """Shift in ``cast``; amounts outside ``[0, bits)`` give 0 (left) or the sign fill
        (right), as torch (NumPy leaves them undefined)."""
        a, b = E.cast(xp, a, cast), E.cast(xp, b, cast)
        a = xp.asarray(a, dtype=cast)
        bits = a.dtype.itemsize * 8
        over = (b < 0) | (b >= bits)
        s = xp.where(over, 0, b).astype(a.dtype)
        if left:
            r = xp.where(over, 0, xp.left_shift(a, s))
        else:
            r = xp.where(over, xp.where(a < 0, -1, 0), xp.right_shift(a, s))
        return E.result(xp, r, out)

    return E.named_kernel(name)(k)


bitwise_left_shift = E.define(
    "bitwise_left_shift",
    _shift_kernel("bitwise_left_shift", True),
    E.only("bitwise_left_shift", "int"),
    "``input << other`` (also the operators ``<<``, ``<<=``).",
    "st.tensor([1, 3]), 2",
    "[4, 12]",
    nargs=2,
    operators=("__lshift__", "__rlshift__"),
)
bitwise_right_shift = E.define(
    "bitwise_right_shift",
    _shift_kernel("bitwise_right_shift", False),
    E.only("bitwise_right_shift", "int"),
    "``input >> other``, arithmetic (also the operators ``>>``, ``>>=``).",
    "st.tensor([-8, 8]), 2",
    "[-2, 2]",
    nargs=2,
    operators=("__rshift__", "__rrshift__"),
)
nondiff("bitwise_left_shift", "bitwise_right_shift")  # integer results


def _shift_inplace(name):
    """``x <<= y`` / ``x >>= y``: torch shifts in place (the object keeps its identity)."""

    def op(self, other):
        return E.call_(name, self, other)

    op.__name__ = op.__qualname__ = f"{name}_"
    op.__doc__ = f"In-place ``{name}`` (the augmented shift operator)."
    return op


bind("__ilshift__", prim="bitwise_left_shift")(_shift_inplace("bitwise_left_shift"))
bind("__irshift__", prim="bitwise_right_shift")(_shift_inplace("bitwise_right_shift"))
