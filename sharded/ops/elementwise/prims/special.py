"""Special functions: ``erf``, ``erfc``, ``erfinv``, ``lgamma``, ``digamma`` and
``polygamma`` (orders 0 and 1; order 1 is the primitive ``trigamma``, digamma's derivative),
elementwise, with their methods, in-place methods and VJPs; also ``st.special.*`` (``zeta``,
``ndtri``, the Bessel functions ``i0e``, ``i1``, ``i1e``).

The kernels compute in float64 (:mod:`..kernels`: SciPy's special functions on the host,
CuPy's on a GPU, within a few ulp) and return the result dtype: torch's rule, integers and
bools give the default float dtype, floats keep theirs.
"""

from __future__ import annotations

import math
import numbers

from .... import dtypes as D
from ....core.dispatch import apply, needs, unbroadcast
from ....core.registry import bind, vjp
from ....errors import ArgumentError, AutogradError, DTypeError, UnsupportedDType
from .. import kernels as K
from .. import plan as E

__all__ = ["digamma", "erf", "erfc", "erfinv", "i0", "lgamma", "mvlgamma", "polygamma"]


def _real(ops):
    """:func:`.elementwise.floating` for real operands; torch has no complex kernel for these
    ("erf_vml_cpu" not implemented for 'ComplexFloat')."""
    rt = E.operand_dtypes(ops)
    if rt.is_complex:
        raise UnsupportedDType(f"this special function is not implemented for {rt.name}")
    return E.floating(ops)


def _f64(name, f):
    """The kernel ``name``: ``f(xp, float64 array)`` (the operand computed in float64), the
    result cast to the output dtype."""

    def k(xp, a, cast=None, out=None):
        return E.result(xp, f(xp, xp.asarray(a).astype(xp.float64, copy=False)), out)

    return E.named_kernel(name)(k)


def _ex(values):
    """The examples' input: ``values`` in float64."""
    return f"st.tensor({values}, dtype=st.float64)"


def _x(node):
    return node.args[0]


# ------------------------------------------------------------------------------ erf, erfc
erf = E.define(
    "erf",
    _f64("erf", K.erf),
    _real,
    "The error function ``2/sqrt(pi) * int_0^x exp(-t^2) dt``.",
    _ex("[0.0, 1.0]"),
    "[0.0, 0.8427007929497148]",
)
erfc = E.define(
    "erfc",
    _f64("erfc", K.erfc),
    _real,
    "``1 - erf(input)``, accurate where it is tiny (``erfc(10)`` ~ 2e-45).",
    _ex("[0.0, 2.0]"),
    "[1.0, 0.004677734981047266]",
)


@vjp("erf", "erfc", saves=(0,))
def _erf_vjp(gs, node):  # d erf = 2/sqrt(pi) exp(-x^2); erfc = 1 - erf
    x = _x(node)
    d = (-(x * x)).exp() * K.TWO_OVER_SQRT_PI
    return (gs[0] * d if node.prim == "erf" else -(gs[0] * d),)


# ---------------------------------------------------------------------------------- erfinv
erfinv = E.define(
    "erfinv",
    _f64("erfinv", K.erfinv),
    _real,
    "The inverse of ``erf`` on [-1, 1] (+-inf at +-1, nan outside).",
    _ex("[0.0, 0.5]"),
    "[0.0, 0.4769362762044699]",
)


@vjp("erfinv", save_out=True)
def _erfinv_vjp(gs, node):  # the inverse's derivative: sqrt(pi)/2 exp(erfinv(x)^2)
    y = node.saved["out"][0]
    return (gs[0] * (y * y).exp() * (math.sqrt(math.pi) / 2),)


# ----------------------------------------------------------------------------------- ndtri
E.define("ndtri", _f64("ndtri", K.ndtri), _real)  # st.special.ndtri (below)


@vjp("ndtri", save_out=True)
def _ndtri_vjp(gs, node):  # the inverse's derivative: sqrt(2 pi) exp(ndtri(p)^2 / 2)
    y = node.saved["out"][0]
    return (gs[0] * (y * y * 0.5).exp() * math.sqrt(2 * math.pi),)


def ndtri(input):
    """The inverse of the standard normal CDF (``torch.special.ndtri``): -inf at 0, inf at 1,
    nan outside [0, 1]; accurate in both tails (``ndtri(1e-20)`` is -9.26, where
    ``sqrt(2) * erfinv(2p - 1)`` rounds ``2p - 1`` to -1 and gives -inf).

    Examples
    --------
    >>> import sharded as st
    >>> st.special.ndtri(st.tensor([0.5, 0.975], dtype=st.float64)).tolist()
    [0.0, 1.959963984540054]
    """
    return E.call("ndtri", input)


# ------------------------------------------------------------------- lgamma, digamma, trigamma
lgamma = E.define(
    "lgamma",
    _f64("lgamma", K.lgamma),
    _real,
    "``log|Gamma(input)|`` (+inf at 0, -1, -2, ...).",
    _ex("[0.5, 3.0]"),
    "[0.5723649429247001, 0.6931471805599453]",
)
digamma = E.define(
    "digamma",
    _f64("digamma", K.digamma),
    _real,
    "``d/dx lgamma(x)`` (torch's values at the poles: -inf at 0, nan at the negative integers).",
    _ex("[1.0, 2.0]"),
    "[-0.5772156649015329, 0.42278433509846713]",
)
E.define("trigamma", _f64("trigamma", K.trigamma), _real)  # polygamma(1, x)


@vjp("lgamma", saves=(0,))
def _lgamma_vjp(gs, node):
    return (gs[0] * apply("digamma", _x(node)),)


@vjp("digamma", saves=(0,))
def _digamma_vjp(gs, node):
    return (gs[0] * apply("trigamma", _x(node)),)


@vjp("trigamma", saves=(0,))
def _trigamma_vjp(gs, node):  # polygamma(2, x) = -2 zeta(3, x)
    return (gs[0] * E.call("zeta", 3.0, _x(node)) * -2.0,)


def polygamma(n, input):
    """The ``n``-th derivative of ``digamma``: ``digamma`` for ``n = 0``, trigamma for 1,
    ``(-1)^(n+1) n! zeta(n + 1, input)`` above (torch's formula).

    As a method the order comes first too: ``x.polygamma(1)`` is ``polygamma(1, x)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.polygamma(1, st.tensor([1.0], dtype=st.float64)).tolist()  # pi^2 / 6
    [1.6449340668482264]
    >>> round(st.polygamma(2, st.tensor([1.0], dtype=st.float64)).item(), 12)  # -2 zeta(3)
    -2.404113806319
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ArgumentError(f"polygamma(n, input): n must be a non-negative int, got {n!r}")
    if n <= 1:
        return E.call("digamma" if n == 0 else "trigamma", input)
    return E.call("zeta", float(n + 1), input) * ((-1) ** (n + 1) * math.factorial(n))


@bind("polygamma", prim="trigamma")
def _polygamma_method(self, n):
    """``x.polygamma(n)``: :func:`polygamma` ``(n, x)`` (torch's method order)."""
    return polygamma(n, self)


# ------------------------------------------------------------------- i0, i0e, i1, i1e
i0 = E.define(
    "i0",
    _f64("i0", K.i0),
    _real,
    "The modified Bessel function of the first kind of order 0.",
    _ex("[0.0, 1.0]"),
    "[1.0, 1.2660658777520082]",
)
for _name in ("i0e", "i1", "i1e"):  # their functions are st.special's (below)
    E.define(_name, _f64(_name, getattr(K, _name)), _real)


@vjp("i0", "i0e", "i1", "i1e", saves=(0,), save_out=True)
def _bessel_i_vjp(gs, node):
    """torch's formulas: i0' = i1, i0e' = i1e - sgn(x) i0e, i1' = i0 - i1/x and
    i1e' = i0e - i1e (sgn(x) + 1/x), the last two 0.5 at x = 0."""
    x, out, g = _x(node), node.saved["out"][0], gs[0]
    if node.prim == "i0":
        return (g * E.call("i1", x),)
    if node.prim == "i0e":
        return (g * (E.call("i1e", x) - x.sign() * out),)
    if node.prim == "i1":
        d = E.call("i0", x) - out / x
    else:
        d = E.call("i0e", x) - out * (x.sign() + 1 / x)
    return (g * d.where(x != 0, 0.5),)


def i0e(input):
    """``exp(-|x|) i0(x)``, the exponentially scaled modified Bessel function of order 0.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 12) for v in st.special.i0e(st.tensor([0.0, 1.0], dtype=st.float64)).tolist()]
    [1.0, 0.465759607594]
    """
    return E.call("i0e", input)


def i1(input):
    """The modified Bessel function of the first kind of order 1.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 12) for v in st.special.i1(st.tensor([0.0, 1.0], dtype=st.float64)).tolist()]
    [0.0, 0.565159103992]
    """
    return E.call("i1", input)


def i1e(input):
    """``exp(-|x|) i1(x)``, the exponentially scaled modified Bessel function of order 1.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 12) for v in st.special.i1e(st.tensor([0.0, 1.0], dtype=st.float64)).tolist()]
    [0.0, 0.20791041535]
    """
    return E.call("i1e", input)


# ----------------------------------------------------------------------------------- zeta
@E.named_kernel("zeta")
def _zeta_kernel(xp, x, q, cast=None, out=None):
    """The Hurwitz zeta in float64, cast to the result dtype."""
    return E.result(xp, K.zeta(xp, x, q), out)


E.define("zeta", _zeta_kernel, _real)


@vjp("zeta", saves=(0, 1))
def _zeta_vjp(gs, node):  # d/dq zeta(x, q) = -x zeta(x + 1, q); torch has none for x either
    x, q = node.args
    if needs(x):
        raise AutogradError("zeta: the derivative for 'self' (x) is not implemented (as torch)")
    return None, unbroadcast(gs[0] * -x * E.call("zeta", x + 1, q), q) if needs(q) else None


def zeta(input, other):
    """The Hurwitz zeta function ``sum_k (k + other)^-input`` (``torch.special.zeta``).

    Examples
    --------
    >>> import sharded as st
    >>> st.special.zeta(st.tensor([2.0], dtype=st.float64), 1.0).tolist()  # pi^2 / 6
    [1.6449340668482266]
    """
    return E.call("zeta", input, other)


# ------------------------------------------------------------- multivariate log-gamma
@bind("mvlgamma")
def mvlgamma(input, p):
    """The multivariate log-gamma ``sum_i lgamma(input - i/2) + p(p-1)/4 log(pi)`` over
    ``i < p`` (``torch.special.multigammaln``); integers give the default float dtype.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.mvlgamma(st.tensor([2.5], dtype=st.float64), 2).item(), 9)
    0.857047813
    """
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ArgumentError(f"mvlgamma: p must be an int >= 1, got {p!r}")
    x = input if E.is_tensor(input) else E.as_tensor(input)
    if x.dtype == D.bool_:
        raise DTypeError("mvlgamma: the input tensor may not be a boolean tensor")
    if x.dtype.is_complex:
        raise UnsupportedDType(f"mvlgamma is not implemented for {x.dtype.name} tensors")
    if not x.dtype.is_floating_point:
        x = x * 1.0  # integers and bools give the default float dtype, as lgamma
    out = sum(E.call("lgamma", x - i / 2) for i in range(p))
    return out + p * (p - 1) / 4 * math.log(math.pi)


@bind("mvlgamma_")
def _mvlgamma_(self, p):
    """In-place :func:`mvlgamma` (a floating-point tensor only, as torch)."""
    if self.dtype.is_complex:
        raise UnsupportedDType(f"mvlgamma is not implemented for {self.dtype.name} tensors")
    if not self.dtype.is_floating_point:
        raise DTypeError(f"mvlgamma_: result type Float can't be cast to {self.dtype.name}")
    return self.copy_(mvlgamma(self, p))


@bind("polygamma_")
def _polygamma_(self, n):
    """In-place ``x.polygamma_(n)`` (a floating-point tensor only, as torch)."""
    if self.dtype.is_complex:
        raise UnsupportedDType(f"polygamma is not implemented for {self.dtype.name} tensors")
    if not self.dtype.is_floating_point:
        raise DTypeError(f"polygamma_: result type Float can't be cast to {self.dtype.name}")
    return self.copy_(polygamma(n, self))
