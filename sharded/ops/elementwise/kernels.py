"""The math of :mod:`.prims.special`: erf, erfc, erfinv, lgamma, digamma and trigamma of float64
arrays with the array module ``xp`` (NumPy or CuPy), no SciPy. Pure functions, no registry.

- ``erf``/``erfc``: W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev
  approximations for the error function", Math. Comp. 1969; the coefficients of his CALERF),
  about 1e-16 relative, erfc without cancellation up to its underflow at 26.5.
- ``erfinv``: Winitzki's closed-form guess (relative error ~2e-3) refined by three Halley
  steps on ``erf(y) = x`` (each triples the correct digits), written as ``erfc(y) = 1 - x``
  for ``|x| >= 0.5`` so that arguments near +-1 keep their relative accuracy.
- ``lgamma``, ``digamma``: near 1 and 2 the Taylor series of ``lgamma(1 + z)`` in
  ``zeta(k) - 1`` (so the zeros at 1 and 2 keep full relative accuracy), shifted down onto
  ``[1.5, 2.5)`` by the recurrence (sums of positive terms) below 15 (12 for digamma),
  Stirling's series above, reflection below 0.5.
- ``trigamma`` (digamma's derivative): shifted up to 12, then its asymptotic series.
"""

from __future__ import annotations

import math

import numpy as np

EULER = 0.57721566490153286061
LOG_PI = math.log(math.pi)
HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

# Cody's coefficients: erf on |x| <= 0.46875 (A/B), erfc on (0.46875, 4] (C/D) and on
# (4, 26.543) (P/Q, in 1/x^2).
_A = (3.16112374387056560, 113.864154151050156, 377.485237685302021, 3209.37758913846947,
      0.185777706184603153)  # fmt: skip
_B = (23.6012909523441209, 244.024637934444173, 1282.61652607737228, 2844.23683343917062)
_C = (0.564188496988670089, 8.88314979438837594, 66.1191906371416295, 298.635138197400131,
      881.952221241769090, 1712.04761263407058, 2051.07837782607147, 1230.33935479799725,
      2.15311535474403846e-8)  # fmt: skip
_D = (15.7449261107098347, 117.693950891312499, 537.181101862009858, 1621.38957456669019,
      3290.79923573345963, 4362.61909014324716, 3439.36767414372164,
      1230.33935480374942)  # fmt: skip
_P = (0.305326634961232344, 0.360344899949804439, 0.125781726111229246,
      0.0160837851487422766, 6.58749161529837803e-4, 0.0163153871373020978)  # fmt: skip
_Q = (2.56852019228982242, 1.87295284992346047, 0.527905102951428412,
      0.0605183413124413191, 0.00233520497626869185)  # fmt: skip
_SQRPI = 0.56418958354775628695  # 1 / sqrt(pi)
_THRESH, _XBIG = 0.46875, 26.543


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
# psi(1 + z) - z / (1 + z) + EULER = sum_k (-1)^k (zeta(k) - 1) z^(k-1): coefficient j of z^j
_DG = [0.0] + [(-1) ** (j + 1) * _ZM1[j + 1] for j in range(1, _K)]


# Asymptotic series in 1/y^2 (Bernoulli numbers B2..B14): Stirling's for lgamma (times 1/y),
# digamma's (times -1/y^2) and trigamma's (times 1/y^3).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_PSI = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
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


def _erf_small(x):
    """erf on |x| <= 0.46875 (Cody's first interval)."""
    ysq = x * x
    num, den = _A[4] * ysq, ysq
    for i in range(3):
        num, den = (num + _A[i]) * ysq, (den + _B[i]) * ysq
    return x * (num + _A[3]) / (den + _B[3])


def _exp_neg_sq(xp, y):
    """``exp(-y*y)`` with y*y split as Cody does (the high part exact), so the exponential's
    argument carries no rounding error of the square."""
    hi = xp.floor(y * 16) / 16
    return xp.exp(-hi * hi) * xp.exp(-(y - hi) * (y + hi))


def _erfc_pos(xp, y):
    """erfc(y) for y > 0.46875 (or inf/nan): Cody's second and third intervals."""
    num, den = _C[8] * y, y
    for i in range(7):
        num, den = (num + _C[i]) * y, (den + _D[i]) * y
    mid = (num + _C[7]) / (den + _D[7])
    r = 1 / (y * y)
    num, den = _P[5] * r, r
    for i in range(4):
        num, den = (num + _P[i]) * r, (den + _Q[i]) * r
    big = (_SQRPI - r * (num + _P[4]) / (den + _Q[4])) / y
    out = xp.where(y <= 4, mid, big) * _exp_neg_sq(xp, y)
    return xp.where(y >= _XBIG, 0.0, out)


def erf(xp, x):
    """The error function of float64 ``x``."""
    with np.errstate(all="ignore"):
        y = xp.abs(x)
        big = xp.copysign(1 - _erfc_pos(xp, xp.maximum(y, _THRESH)), x)
        return xp.where(y <= _THRESH, _erf_small(xp.where(y <= _THRESH, x, 0.0)), big)


def erfc(xp, x):
    """``1 - erf(x)`` of float64 ``x``, accurate where it is tiny."""
    with np.errstate(all="ignore"):
        y = xp.abs(x)
        e = _erfc_pos(xp, xp.maximum(y, _THRESH))
        big = xp.where(x < 0, 2 - e, e)
        return xp.where(y <= _THRESH, 1 - _erf_small(xp.where(y <= _THRESH, x, 0.0)), big)


def erfinv(xp, x):
    """The inverse error function of float64 ``x`` (+-inf at +-1, nan outside [-1, 1])."""
    with np.errstate(all="ignore"):
        t = xp.abs(x)
        c = 1 - t  # exact for t >= 0.5, where the iteration matches erfc(y) against it
        a = 0.147
        ln = xp.log(c * (1 + t))
        b = 2 / (math.pi * a) + ln / 2
        y = xp.sqrt(xp.sqrt(b * b - ln / a) - b)
        small = t < 0.5
        for _ in range(3):
            yy = xp.maximum(y, _THRESH)
            e = xp.where(small, erf(xp, y) - t, c - _erfc_pos(xp, yy))
            u = e / (TWO_OVER_SQRT_PI * xp.exp(-y * y))
            y = y - u / (1 + y * u)
        y = xp.where(t == 1, xp.inf, xp.where(t > 1, xp.nan, y))
        y = xp.where(t == 0, 0.0, y)
        return xp.copysign(y, x)


def _sin_pi_abs(xp, x):
    """``|sin(pi x)|`` exactly periodic: the argument is reduced before multiplying by pi."""
    return xp.abs(xp.sin(math.pi * (x - xp.round(x))))


def _lgamma_pos(xp, y):
    """lgamma of float64 ``y >= 0.5`` (or +inf)."""
    z1 = y - 1  # [0.5, 1.5): lgamma(1 + z)
    near1 = -xp.log1p(z1) + (1 - EULER) * z1 + _horner(z1, _LG)
    m = xp.clip(xp.floor(y - 1.5), 0, 13)  # [1.5, 15): down to w = y - m in [1.5, 2.5)
    z2 = (y - m) - 2
    prod = xp.ones_like(y)
    for j in range(1, 14):
        prod = xp.where(m >= j, prod * (y - j), prod)
    near2 = (1 - EULER) * z2 + _horner(z2, _LG) + xp.log(prod)
    r = 1 / y
    r2 = r * r
    series = r * _series(r2, _STIRLING)
    stirling = (y - 0.5) * xp.log(y) - y + HALF_LOG_2PI + series
    stirling = xp.where(y == xp.inf, xp.inf, stirling)
    return xp.where(y < 1.5, near1, xp.where(y < 15, near2, stirling))


def lgamma(xp, x):
    """``log|Gamma(x)|`` of float64 ``x`` (+inf at the poles 0, -1, -2, ... and at +-inf)."""
    with np.errstate(all="ignore"):
        refl = x < 0.5
        y = xp.where(refl, 1 - x, x)
        pos = _lgamma_pos(xp, y)
        neg = LOG_PI - xp.log(_sin_pi_abs(xp, x)) - pos
        return xp.where(xp.isinf(x), xp.inf, xp.where(refl, neg, pos))


def _digamma_pos(xp, y):
    """digamma of float64 ``y >= 0.5`` (or +inf)."""
    z1 = y - 1  # [0.5, 1.5): psi(1 + z)
    near1 = z1 / (1 + z1) - EULER + _horner(z1, _DG)
    m = xp.clip(xp.floor(y - 1.5), 0, 10)  # [1.5, 12): down to w = y - m in [1.5, 2.5)
    z2 = (y - m) - 2
    near2 = (1 - EULER) + _horner(z2, _DG)
    for j in range(1, 11):
        near2 = near2 + xp.where(m >= j, 1 / (y - j), 0.0)
    r2 = 1 / (y * y)
    asym = xp.log(y) - 0.5 / y - r2 * _series(r2, _PSI)
    return xp.where(y < 1.5, near1, xp.where(y < 12, near2, asym))


def digamma(xp, x):
    """``d/dx lgamma(x)`` of float64 ``x``: torch's values at the poles (-inf at +0, +inf at
    -0, nan at the negative integers and at -inf)."""
    with np.errstate(all="ignore"):
        refl = x < 0.5
        y = xp.where(refl, 1 - x, x)
        pos = _digamma_pos(xp, y)
        r = x - xp.round(x)
        neg = pos - math.pi / xp.tan(math.pi * r)
        out = xp.where(refl, neg, pos)
        out = xp.where(x == 0, -xp.copysign(xp.inf, x), out)  # the reduction loses -0's sign
        return xp.where((x < 0) & (x == xp.floor(x)), xp.nan, out)


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


# Euler-Maclaurin denominators of the Hurwitz zeta tail, (2j)! / B_2j (Cephes' zeta.c).
_ZA = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
       -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
       1.8152105401943546773e17, -7.1661652561756670113e18)  # fmt: skip


_MACHEP = 1.11022302462515654042e-16


def zeta(xp, x, q):
    """The Hurwitz zeta ``sum_k (k + q)^-x`` of float64 ``x``, ``q`` by Cephes' method (torch's):
    inf at ``x == 1`` and at integer ``q <= 0``, NaN for ``x < 1`` and for non-integer ``x``
    with ``q < 0``; Euler-Maclaurin summation after shifting ``q`` past 9."""
    x, q = xp.broadcast_arrays(xp.asarray(x, dtype=xp.float64), xp.asarray(q, dtype=xp.float64))
    with np.errstate(all="ignore"):
        a = q.copy()
        s = a**-x
        b = xp.zeros_like(s)
        done, s_done = xp.zeros(s.shape, dtype=bool), s  # Cephes stops once a term is negligible
        for i in range(1000):  # at least 9 terms and until a > 9 (q far below 0: capped)
            step = (a <= 9.0) | (i < 9)
            if i >= 9 and not bool(step.any()):
                break
            a = xp.where(step, a + 1, a)
            b = xp.where(step, a**-x, b)
            s = s + xp.where(step, b, 0.0)
            now = step & ~done & (-_MACHEP * s < b) & (b < _MACHEP * s)
            s_done, done = xp.where(now, s, s_done), done | now
        w = a
        s = s + b * w / (x - 1) - 0.5 * b
        c, k = xp.ones_like(s), 0.0
        for den in _ZA:
            c = c * (x + k)
            b = b / w
            s = s + c * b / den
            c = c * (x + k + 1)
            b = b / w
            k += 2.0
        s = xp.where(done, s_done, s)
        # the special values in Cephes' order of tests (a later test wins here)
        pole = (q <= 0) & (q == xp.floor(q))
        s = xp.where(pole, math.inf, s)
        s = xp.where((q <= 0) & ~pole & (x != xp.floor(x)), math.nan, s)
        s = xp.where(x < 1, math.nan, s)
        return xp.where(x == 1, math.inf, s)


def _bessel_i_scaled(xp, x, nu):
    """``exp(-|x|) I_nu(|x|)`` for ``nu`` 0 or 1 of float64 ``x``: the power series
    ``sum (x/2)^(2k+nu) / (k! (k+nu)!)`` up to |x| = 30 (all terms positive, 100 reach 1e-17
    there), the asymptotic ``1/sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k`` beyond."""
    y = xp.abs(x)
    with np.errstate(all="ignore"):
        small = xp.minimum(y, 30.0)
        h2 = (small / 2) ** 2
        term = (small / 2) ** nu / (1.0 if nu == 0 else 1.0)
        acc = term
        for k in range(1, 100):
            term = term * h2 / (k * (k + nu))
            acc = acc + term
        series = acc * xp.exp(-small)
        big = xp.maximum(y, 30.0)
        mu = 4.0 * nu * nu
        t, s = xp.ones_like(big), xp.ones_like(big)
        for k in range(1, 40):
            t = -t * (mu - (2 * k - 1) ** 2) / (k * 8 * big)
            s = s + t
        asym = s / xp.sqrt(2 * math.pi * big)
        return xp.where(y <= 30.0, series, asym)


def i0e(xp, x):
    """``exp(-|x|) I0(x)``, the exponentially scaled modified Bessel function of order 0."""
    return xp.where(xp.isnan(x), math.nan, _bessel_i_scaled(xp, x, 0))


def i0(xp, x):
    """The modified Bessel function of the first kind of order 0 (inf past |x| ~ 713)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return i0e(xp, x) * xp.exp(xp.abs(x))


def i1e(xp, x):
    """``exp(-|x|) I1(x)`` (odd in ``x``)."""
    return xp.where(xp.isnan(x), math.nan, xp.sign(x) * _bessel_i_scaled(xp, x, 1))


def i1(xp, x):
    """The modified Bessel function of the first kind of order 1 (odd; +-inf far out)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return i1e(xp, x) * xp.exp(xp.abs(x))
