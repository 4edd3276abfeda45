"""``st.special``: torch.special's functions (the same objects as the top-level ``st.erf``...
where torch has one), plus ``ndtr``, ``log_ndtr``, ``entr`` and the like composed of them;
the Bessel functions, ``airy_ai``, ``erfcx``, ``gammainc``/``gammaincc`` and the orthogonal
polynomials (``chebyshev_polynomial_t``... ``legendre_polynomial_p``) have torch's values,
dtype rules and (lack of) derivatives.

Examples
--------
>>> import sharded as st
>>> st.special.gammaln(st.tensor([4.0], dtype=st.float64)).tolist()  # log(3!)
[1.791759469228055]
"""

from __future__ import annotations

import math

from .core import toplevel as _toplevel
from .core.dispatch import is_tensor
from .ops.creation.prims import tensor
from .ops.elementwise.prims.bessel import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    erfcx,
    igamma,
    igammac,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
)
from .ops.elementwise.prims.binary_math import sinc, xlogy
from .ops.elementwise.prims.exp_log import exp2, expm1
from .ops.elementwise.prims.exp_log import logit as _logit
from .ops.elementwise.prims.orthopoly import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .ops.elementwise.prims.rounding import round as _round
from .ops.elementwise.prims.selection import where
from .ops.elementwise.prims.special import (
    digamma,
    erf,
    erfc,
    erfinv,
    i0,
    i0e,
    i1,
    i1e,
    lgamma,
    mvlgamma,
    ndtri,
    polygamma,
    zeta,
)
from .ops.elementwise.prims.unary import log1p, sigmoid
from .ops.reduce.derived.moments import log_softmax, logsumexp, softmax

gammaln = lgamma
psi = digamma
expit = sigmoid


def gammainc(input, other):
    """The regularized lower incomplete gamma function (:func:`sharded.igamma`).

    Examples
    --------
    >>> import sharded as st
    >>> a = st.tensor([1.0], dtype=st.float64)
    >>> st.special.gammainc(a, st.tensor([1.0], dtype=st.float64)).tolist()  # 1 - exp(-1)
    [0.6321205588285577]
    """
    return igamma(input, other)


def gammaincc(input, other):
    """The regularized upper incomplete gamma function (:func:`sharded.igammac`).

    Examples
    --------
    >>> import sharded as st
    >>> a = st.tensor([1.0], dtype=st.float64)
    >>> st.special.gammaincc(a, st.tensor([1.0], dtype=st.float64)).tolist()  # exp(-1)
    [0.36787944117144245]
    """
    return igammac(input, other)


def logit(input, eps=None):
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    Examples
    --------
    >>> import sharded as st
    >>> st.special.logit(st.tensor([0.5, 0.0, 1.0], dtype=st.float64)).tolist()
    [0.0, -inf, inf]
    """
    return _logit(input, eps)


def ndtr(input):
    """The standard normal CDF, ``erfc(-x / sqrt(2)) / 2``.

    Examples
    --------
    >>> import sharded as st
    >>> st.special.ndtr(st.tensor([0.0], dtype=st.float64)).tolist()
    [0.5]
    """
    return erfc(_float(input) * -math.sqrt(0.5)) * 0.5


def log_ndtr(input):
    """``log(ndtr(input))`` (through ``erfc``, so accurate far into the left tail).

    Examples
    --------
    >>> import sharded as st
    >>> st.special.log_ndtr(st.tensor([0.0], dtype=st.float64)).tolist()
    [-0.6931471805599453]
    """
    x = _float(input)
    # right of 0, log1p(-ndtr(-x)) keeps the digits of a CDF near 1 (and torch's -0.0 there);
    # each branch sees its own half-line, so neither puts a NaN into the other's gradient
    left = (erfc(x.clamp(max=0) * -math.sqrt(0.5)) * 0.5).log()
    right = (erfc(x.clamp(min=0) * math.sqrt(0.5)) * -0.5).log1p()
    return where(x > 0, right, left)


def entr(input):
    """Elementwise entropy ``-x log(x)``: 0 at 0, ``-inf`` for negative ``x``.

    Examples
    --------
    >>> import sharded as st
    >>> st.special.entr(st.tensor([0.0, 1.0, -1.0])).tolist()
    [0.0, -0.0, -inf]
    """
    x = _float(input)
    return where(x > 0, -xlogy(x, x), where(x == 0, 0.0, where(x < 0, -math.inf, x)))


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN).

    Examples
    --------
    >>> import sharded as st
    >>> st.special.xlog1py(st.tensor([0.0, 2.0]), st.tensor([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    x = _float(input)
    y = _float(other)
    return where((x == 0) & ~y.isnan(), 0.0, x * y.log1p())


def multigammaln(input, p):
    """The multivariate log-gamma function (:func:`sharded.mvlgamma`).

    Examples
    --------
    >>> import sharded as st
    >>> st.special.multigammaln(st.tensor([1.0], dtype=st.float64), 1).tolist()
    [0.0]
    """
    return mvlgamma(input, p)


def round(input, *, decimals=0):
    """:func:`sharded.round` with torch.special's ``decimals`` overload (no integer kernel).

    Examples
    --------
    >>> import sharded as st
    >>> st.special.round(st.tensor([2.5, 0.26]), decimals=1).tolist()
    [2.5, 0.30000001192092896]
    """
    return _round(input, decimals=decimals)


def _float(x):
    """``x`` as a tensor of a floating dtype (integers and bools: the default float dtype)."""
    x = x if is_tensor(x) else tensor(x)
    return x if x.dtype.is_floating_point else x * 1.0


__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]

# torch.special's parser wants a tensor among the two operands (``zeta(2.0, 3.0)`` raises)
xlog1py = _toplevel.wrap("xlog1py", xlog1py)
zeta = _toplevel.wrap("zeta", zeta)


def _use_st_wrappers():
    # the names shared with ``st`` (``gammaln`` is ``st.lgamma``) take st's functions, with
    # out= and torch's tensor-only arguments, so ``st.special.erf is st.erf``
    from . import ops

    tops = [ops.__dict__[n] for n in ops.__all__]
    wrapped = {id(f.__wrapped__): f for f in tops if hasattr(f, "__wrapped__")}
    for n in __all__:
        if id(globals()[n]) in wrapped:
            globals()[n] = wrapped[id(globals()[n])]


_use_st_wrappers()
