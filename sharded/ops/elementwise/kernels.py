"""The math of :mod:`.prims.special`: erf, erfc, erfinv, ndtri, lgamma, digamma, trigamma, the
Hurwitz zeta and the modified Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e`` of float64 arrays
with the array module ``xp``; of :mod:`.prims.bessel` (torch.special's Bessel functions,
``airy_ai``, ``erfcx``, ``igamma``) and :mod:`.prims.orthopoly` (the orthogonal polynomials,
in the result dtype), at the end. Pure functions, no registry.

Each is the routine of :mod:`scipy.special` on the host and of :mod:`cupyx.scipy.special` on a
GPU (:func:`sharded.backend.special`), with torch's values put back where SciPy's special
values differ (``lgamma(-inf)``, the sign of ``erfinv(-0.0)``, ``zeta(x, +inf)``), except:

- ``erfc`` above 0.5 is SciPy's ``erfcx(x)`` times ``exp(-x^2)`` with ``x^2`` split as
  W. J. Cody does: SciPy's ``erfc`` rounds ``x^2`` into the exponential (482 ulp near 20).
- ``lgamma`` on ``[0.5, 2.5)`` is the Taylor series about 1 and 2: ``gammaln`` loses its
  relative accuracy by the zeros there (1.8e6 ulp on ``[0.9, 1.1]``).
- ``trigamma`` stays a NumPy kernel: SciPy's ``polygamma(1, x)`` is 3.6x slower (900 ms
  against 250 ms for the 10^6 values below) and no more accurate (4 / 0.84 ulp against
  3 / 0.49).

Measured against the NumPy kernels these replaced (Cody's erf/erfc, a Halley-refined erfinv,
Taylor and Stirling series for lgamma/digamma, Cephes' zeta loop, power and asymptotic series
for the Bessel functions; ``ndtri`` was ``sqrt(2) erfinv(2p - 1)``), on one thread, 10^6
float64 values uniform on ``[-30, 30]`` (erf ``[-6, 6]``, erfc ``[-6, 26]``, erfinv
``[-1, 1]``, i0/i1 ``[-20, 20]``, i0e/i1e ``[-50, 50]``, ndtri ``10^[-300, 0]``, zeta ``x``
in ``[1.5, 20]`` and ``q`` in ``[-30, 30]``); ulp against mpmath at 50 digits on 2000 of
them (zeta: ``q > 0``), max / mean; the special values (+-0, +-1, poles, +-inf, nan, huge)
are torch's in both:

=========  ========  ========  ===============  ===============
function   NumPy     SciPy     NumPy ulp        SciPy ulp
=========  ========  ========  ===============  ===============
erf        62 ms     14 ms     2 / 0.10         2 / 0.09
erfc       57 ms     50 ms     4 / 0.60         4 / 0.63
erfinv     347 ms    21 ms     3 / 0.58         2 / 0.43
lgamma     123 ms    37 ms     21 / 0.63        47 / 0.51
digamma    112 ms    54 ms     783 / 1.32       204 / 2.27
i0         224 ms    30 ms     10 / 1.70        3 / 0.64
i1         227 ms    31 ms     11 / 1.67        11 / 0.95
i0e        213 ms    25 ms     9 / 1.81         3 / 0.52
i1e        237 ms    31 ms     9 / 1.60         8 / 0.58
ndtri      763 ms    39 ms     inf (-inf tail)  3 / 0.38
zeta       1523 ms   209 ms    5 / 0.94         5 / 0.94
=========  ========  ========  ===============  ===============

(The largest lgamma/digamma errors are by the poles and zeros below 0, where the reflection
``sin(pi x)`` costs both the same digits; above 0 SciPy's digamma is within 2 ulp, the NumPy
kernel 4e3 ulp by its zero at 1.46.)
"""

from __future__ import annotations

import math

import numpy as np

from ...backend import special as _special

EULER = 0.57721566490153286061
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _zeta_minus_1(k: int, n: int = 40) -> float:
    """``zeta(k) - 1`` for ``k >= 2``: the sum up to ``n`` plus its Euler-Maclaurin tail."""
    head = math.fsum(j**-k for j in range(2, n))
    tail = (
        n ** (1 - k) / (k - 1)
        + n**-k / 2
        + k * n ** (-k - 1) / 12
        - k * (k + 1) * (k + 2) * n ** (-k - 3) / 720
        + k * (k + 1) * (k + 2) * (k + 3) * (k + 4) * n ** (-k - 5) / 30240
    )
    return head + tail


# Taylor coefficients of lgamma(1 + z) + log(1 + z) - (1 - EULER) z: (-1)^k (zeta(k) - 1) / k;
# on |z| <= 0.5 term k is below 4^-k / k, so 30 terms reach 1e-20.
_K = 30
_ZM1 = [0.0, 0.0] + [_zeta_minus_1(k) for k in range(2, _K + 1)]
_LG = [(-1) ** k * _ZM1[k] / k if k >= 2 else 0.0 for k in range(_K + 1)]


# trigamma's asymptotic series in 1/y^2 (times 1/y^3; Bernoulli numbers B2..B14)
_PSI1 = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _series(t, coefs):
    """``coefs[0] + coefs[1] t + coefs[2] t^2 + ...`` (Horner)."""
    out = coefs[-1]
    for c in coefs[-2::-1]:
        out = out * t + c
    return out


def _horner(y, coefs):
    r = coefs[-1] * y
    for c in coefs[-2:0:-1]:
        r = (r + c) * y
    return r


def erf(xp, x):
    """The error function of float64 ``x``."""
    return _special(xp).erf(x)


def _exp_neg_sq(xp, y):
    """``exp(-y*y)`` with y*y split as W. J. Cody does (the high part exact), so the
    exponential's argument carries no rounding error of the square."""
    hi = xp.floor(y * 16) / 16
    return xp.exp(-hi * hi) * xp.exp(-(y - hi) * (y + hi))


def erfc(xp, x):
    """``1 - erf(x)`` of float64 ``x``, accurate where it is tiny: ``erfcx(x) exp(-x^2)``
    above 0.5, the exponential split. (SciPy's ``erfc`` rounds ``x^2`` into the exponential:
    482 ulp near x = 20, where this is within 5.)"""
    sp = _special(xp)
    with np.errstate(all="ignore"):
        y = xp.clip(x, 0.5, 30.0)  # erfc(30) underflows to 0
        return xp.where(x > 0.5, sp.erfcx(y) * _exp_neg_sq(xp, y), sp.erfc(x))


def erfinv(xp, x):
    """The inverse error function of float64 ``x`` (+-inf at +-1, nan outside [-1, 1])."""
    return xp.where(x == 0, x, _special(xp).erfinv(x))  # SciPy drops -0.0's sign


def ndtri(xp, x):
    """The inverse of the standard normal CDF of float64 ``x`` (+-inf at 1 and 0, nan
    outside [0, 1])."""
    return _special(xp).ndtri(x)


def lgamma(xp, x):
    """``log|Gamma(x)|`` of float64 ``x`` (+inf at the poles 0, -1, -2, ... and at +-inf).

    SciPy's ``gammaln``, but on ``[0.5, 2.5)`` the Taylor series about 1 and 2: ``gammaln``
    keeps its absolute error there, not its relative error by the zeros at 1 and 2 (up to
    1.8e6 ulp on ``[0.9, 1.1]``, 3.4e3 on ``[1.9, 2.1]``; the series: 2 ulp)."""
    out = xp.where(xp.isinf(x), xp.inf, _special(xp).gammaln(x))  # SciPy: -inf at -inf
    near = (x >= 0.5) & (x < 2.5)
    if bool(near.any()):  # the series on those elements alone
        y = x[near]
        one = y < 1.5
        z = xp.where(one, y - 1, y - 2)
        # lgamma(1 + z) = -log1p(z) + (1 - EULER) z + H(z), lgamma(2 + z) = that + log1p(z)
        s = (1 - EULER) * z + _horner(z, _LG)
        out[near] = xp.where(one, s - xp.log1p(z), s)
    return out


def digamma(xp, x):
    """``d/dx lgamma(x)`` of float64 ``x``: torch's values at the poles (-inf at +0, +inf at
    -0, nan at the negative integers and at -inf)."""
    return _special(xp).psi(x)


def trigamma(xp, x):
    """``d/dx digamma(x)`` of float64 ``x`` (inf at the poles)."""
    with np.errstate(all="ignore"):
        refl = x < 0.5
        y = xp.where(refl, 1 - x, x)
        acc = xp.zeros_like(y)
        for _ in range(12):
            low = y < 12
            acc = acc + xp.where(low, 1 / (y * y), 0.0)
            y = xp.where(low, y + 1, y)
        r = 1 / y
        r2 = r * r
        asym = r + r2 * (0.5 + r * _series(r2, _PSI1))
        pos = acc + asym
        s = xp.sin(math.pi * (x - xp.round(x)))
        neg = math.pi**2 / (s * s) - pos
        return xp.where(refl, neg, pos)


def zeta(xp, x, q):
    """The Hurwitz zeta ``sum_k (k + q)^-x`` of float64 ``x``, ``q`` (Cephes' method and special
    values, as torch): inf at ``x == 1`` and at integer ``q <= 0``, NaN for ``x < 1``, for
    non-integer ``x`` with ``q < 0`` and at ``q == +inf`` (torch's inf - inf)."""
    x, q = xp.broadcast_arrays(xp.asarray(x, dtype=xp.float64), xp.asarray(q, dtype=xp.float64))
    s = _special(xp).zeta(x, q)
    return xp.where((q == xp.inf) & (x >= 1) & (x != 1), xp.nan, s)


def i0(xp, x):
    """The modified Bessel function of the first kind of order 0 (inf past |x| ~ 713)."""
    return _special(xp).i0(x)


def i0e(xp, x):
    """``exp(-|x|) I0(x)``, the exponentially scaled modified Bessel function of order 0."""
    return _special(xp).i0e(x)


def i1(xp, x):
    """The modified Bessel function of the first kind of order 1 (odd; +-inf far out)."""
    return _special(xp).i1(x)


def i1e(xp, x):
    """``exp(-|x|) I1(x)`` (odd in ``x``)."""
    return _special(xp).i1e(x)


# --------------------------------------------- torch.special's Bessel functions and airy_ai
def _routine(xp, name):
    """SciPy's routine ``name`` for arrays of ``xp``: the backend's own, or, for one CuPy
    lacks (``airy``), SciPy's on a host copy of the operands."""
    f = getattr(_special(xp), name, None)
    if f is not None:
        return f
    import scipy.special

    g = getattr(scipy.special, name)
    return lambda *arrays: xp.asarray(g(*[xp.asnumpy(a) for a in arrays]))


def bessel(xp, name, x):
    """The Bessel function ``name`` of float64 ``x``: SciPy's (Cephes) ``j0``, ``j1``, ``y0``,
    ``y1``, ``i0``, ``i1``, ``k0``, ``k1``, ``k0e``, ``k1e``, whose special values are torch's
    (``k0(0)`` inf, ``y0`` of a negative ``x`` nan...), and ``sj0``, ``sin(x) / x`` (1 at 0, 0
    at +-inf)."""
    with np.errstate(all="ignore"):
        if name == "sj0":
            return xp.where(x == 0, 1.0, xp.where(xp.isinf(x), 0.0, xp.sin(x) / x))
        return _routine(xp, name)(x)


def airy_ai(xp, x):
    """The Airy function ``Ai`` of float64 ``x``, with torch's values where SciPy's ``airy``
    gives NaN: 0 past 103.892 (where it underflows) and, below -1e7, the leading term of its
    asymptotic series ``sin(2/3 (-x)^1.5 + pi/4) / (sqrt(pi) (-x)^0.25)`` (its next terms are
    below 1e-10 relative); NaN at +-inf."""
    with np.errstate(all="ignore"):
        ai = _routine(xp, "airy")(x)[0]
        t = -2.0 * x * xp.sqrt(-x) / 3.0 + 0.25 * math.pi
        far = 0.5641895835477563 / xp.sqrt(xp.sqrt(-x)) * xp.sin(t)
    ai = xp.where(x < -1e7, far, ai)
    return xp.where(xp.isinf(x), xp.nan, xp.where(x > 103.892, 0.0, ai))


def erfcx(xp, x):
    """``exp(x^2) erfc(x)`` of float64 ``x`` (inf at -inf... as torch)."""
    return _special(xp).erfcx(x)


def igamma(xp, a, x, upper):
    """The regularized lower incomplete gamma ``P(a, x)`` (``upper``: ``Q = 1 - P``) of
    float64 ``a`` and ``x``: SciPy's ``gammainc``/``gammaincc`` inside the domain, torch's
    boundary values, in torch's order, outside it: NaN for a negative ``a`` or ``x``, then
    ``P(0, x > 0) = 1`` (NaN at ``x = 0``), ``P(a, 0) = 0``, ``P(inf, x) = 0`` (NaN at ``x =
    inf``), ``P(a, inf) = 1``, so that ``P(nan, 0)`` is 0 and ``P(inf, nan)`` too."""
    sp = _special(xp)
    a, x = xp.broadcast_arrays(xp.asarray(a, dtype=xp.float64), xp.asarray(x, dtype=xp.float64))
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    inner = sp.gammaincc(a, x) if upper else sp.gammainc(a, x)
    out = xp.where(xp.isinf(x), hi, inner)
    out = xp.where(a == xp.inf, xp.where(xp.isinf(x), xp.nan, lo), out)
    out = xp.where(x == 0, lo, out)
    out = xp.where(a == 0, xp.where(x > 0, hi, xp.nan), out)
    return xp.where((x < 0) | (a < 0), xp.nan, out)


# --------------------------------------------------------------- orthogonal polynomials
# torch's definitions, case by case: the order is an int64 (a float ``n`` truncated; NaN,
# +-inf and beyond int64 read as negative, as x86's conversion makes them INT64_MIN), a
# negative order gives 0, then the endpoints' exact values, then (for the Chebyshev kinds,
# |y| < 1 and n above a threshold) the trigonometric closed form, else the three-term
# recurrence, computed in the result dtype (float32 overflows as torch's does) and stopped
# at the first NaN (Legendre and Laguerre of high degree where bounded: :func:`_far`). Hermite
# orders above 128 (float32) or 512 (float64) give NaN.
_CHEB = {  # kind -> (threshold of the closed form, shifted threshold, P1 = y + y + c)
    "t": (6, 6, None),
    "u": (8, 6, 0.0),
    "v": (8, 6, -1.0),
    "w": (8, 4, 1.0),
}


def order(xp, n):
    """torch's int64 order of the float array ``n`` (see above).

    Examples
    --------
    >>> order(np, np.array([2.7, -0.5, np.nan, 1e30])).tolist()
    [2, 0, -1, -1]
    """
    ok = xp.isfinite(n) & (xp.abs(n) < 2.0**63)
    return xp.where(ok, xp.trunc(xp.where(ok, n, 0)), -1).astype(xp.int64)


def _recur(xp, out, todo, first, n, p, q, step, stop_nan=True):
    """Write into ``out[todo]`` the recurrence ``p, q <- q, step(k, p, q)`` for ``k = first,
    first + 1, ...`` while ``k <= n`` (per element; ``p``, ``q``, ``n`` are full arrays),
    stopping an element at its first NaN ``q`` if ``stop_nan``. The finished elements drop
    out as it goes, so a large order costs its own element only."""
    idx = xp.nonzero(todo.ravel())[0]
    n, p, q = n.ravel()[idx], p.ravel()[idx], q.ravel()[idx]
    flat = out.reshape(-1)
    k = first
    while idx.size:
        done = n < k
        if stop_nan:
            done |= xp.isnan(q)
        if bool(done.any()):
            flat[idx[done]] = q[done]
            keep = ~done
            idx, n, p, q = idx[keep], n[keep], p[keep], q[keep]
            if not idx.size:
                break
        p, q = q, step(k, idx, p, q)
        k += 1
    return out


_FAR = 1000  # degrees above which Legendre and Laguerre, where bounded, are SciPy's


def _far(xp, out, todo, k, x, bounded, routine):
    """Legendre (``|x| < 1``) and Laguerre (``x > 0``) of degree above :data:`_FAR`, where
    they stay bounded: SciPy's ``eval_legendre``/``eval_laguerre`` of the int degree (the
    same recurrence in C, within the rounding torch's accumulates: ~1e-11 at degree 10^8,
    where a step of this module's loop would cost microseconds). Those elements leave
    ``todo`` (in place)."""
    m = todo & bounded & (k > _FAR)
    if bool(m.any()):
        v = _routine(xp, routine)(k[m], x[m].astype(xp.float64))
        out[m] = v.astype(out.dtype)
        todo &= ~m


def polynomial(xp, kind, x, n):
    """The orthogonal polynomial ``kind`` (``"t"``... ``"w"`` Chebyshev, ``"st"``...
    ``"sw"`` shifted Chebyshev, ``"h"``, ``"he"`` Hermite, ``"l"`` Laguerre, ``"p"`` Legendre)
    of degree ``n`` at ``x``, both arrays of the result dtype (torch's definitions, above).

    Examples
    --------
    >>> polynomial(np, "t", np.array([0.5, 2.0, 1.0]), np.array([2.0, 3.0, -1.0])).tolist()
    [-0.5, 26.0, 0.0]
    """
    # C-order copies: a broadcast operand's zeros_like keeps its odd strides, and the
    # recurrence writes its results through a flat view of ``out``
    x, n = (a.copy() for a in xp.broadcast_arrays(x, n))
    dt = x.dtype
    k = order(xp, n)
    one = xp.ones_like(x)
    out = xp.zeros_like(x)  # n < 0
    todo = k >= 0

    def put(mask, value):
        nonlocal todo
        m = todo & mask
        out[m] = xp.broadcast_to(xp.asarray(value, dtype=dt), x.shape)[m]
        todo = todo & ~mask

    fk = k.astype(dt)  # torch's int64 order in the dtype's arithmetic
    odd = (k % 2) == 1
    sign = xp.where(odd, -1.0, 1.0).astype(dt)
    with np.errstate(all="ignore"):
        if kind in _CHEB or kind[1:] in _CHEB:
            shifted = kind not in _CHEB
            c = _CHEB[kind[1:] if shifted else kind]
            y = x + x - 1 if shifted else x
            top = fk + fk + 1  # V and W's values at their endpoints
            if shifted:
                hi, lo = x == 1, x == 0
            else:
                hi, lo = (xp.abs(x) == 1) & (x > 0), (xp.abs(x) == 1) & (x < 0)
            kind1 = kind[-1]
            at_hi = {"t": one, "u": fk + 1, "v": one, "w": top}[kind1]
            at_lo = {"t": sign, "u": sign * (fk + 1), "v": sign * top, "w": sign}[kind1]
            put(hi, at_hi)
            put(lo, at_lo)
            theta = xp.arccos(y)
            inside = (k > c[1 if shifted else 0]) & (xp.abs(y) < 1)
            if kind1 == "t":
                closed = xp.cos(fk * theta)
            elif kind1 == "u":
                s = xp.sin(theta)
                closed = xp.where(
                    s != 0, xp.sin((fk + 1) * theta) / s, (fk + 1) * xp.cos((fk + 1) * theta) / y
                )
            elif kind1 == "v":
                closed = xp.where(
                    xp.sin(theta / 2) != 1,
                    xp.cos((fk + 0.5) * theta) / xp.cos(theta / 2),
                    sign * top,
                )
            else:
                edge = sign if shifted else xp.where(x > 0, top, sign)
                closed = xp.where(
                    xp.cos(theta / 2) != 1, xp.sin((fk + 0.5) * theta) / xp.sin(theta / 2), edge
                )
            put(inside, closed)
            p1 = y if c[2] is None else y + y + c[2]
            put(k == 0, one)
            put(k == 1, p1)
            yy = (y + y).ravel()
            return _recur(xp, out, todo, 2, k, one, p1, lambda j, i, p, q: yy[i] * q - p)
        xf = x.ravel()
        if kind in ("h", "he"):
            put(k == 0, one)
            p1 = x + x if kind == "h" else x
            put(k == 1, p1)
            put(k > (128 if dt == np.float32 else 512), xp.nan)
            if kind == "h":  # H_{m+1} = 2x H_m - 2m H_{m-1}
                step = lambda j, i, p, q: (xf[i] + xf[i]) * q - (2 * (j - 1)) * p  # noqa: E731
            else:  # He_{m+1} = x He_m - m He_{m-1}
                step = lambda j, i, p, q: xf[i] * q - (j - 1) * p  # noqa: E731
            return _recur(xp, out, todo, 2, k, one, p1, step, stop_nan=False)
        if kind == "l":
            put(x == 0, one)
            put(k == 0, one)
            put(k == 1, 1 - x)
            _far(xp, out, todo, k, x, (x > 0) & (x < xp.inf), "eval_laguerre")

            def step(j, i, p, q):  # (m + 1) L_{m+1} = (2m + 1 - x) L_m - m L_{m-1}, m = j - 1
                m = j - 1
                return (((m + m) + (1 - xf[i])) * q - m * p) / (m + 1)

            return _recur(xp, out, todo, 2, k, one, 1 - x, step)
        # legendre: (m + 1) P_{m+1} = (2m + 1) x P_m - m P_{m-1}
        put(xp.abs(x) == 1, xp.where((x > 0) | ~odd, one, -one))
        put(k == 0, one)
        put(k == 1, x)
        _far(xp, out, todo, k, x, xp.abs(x) < 1, "eval_legendre")

        def step(j, i, p, q):
            m = j - 1
            return ((m + m + 1) * xf[i] * q - m * p) / (m + 1)

        return _recur(xp, out, todo, 2, k, one, x, step)
