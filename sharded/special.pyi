from sharded.tensor import ShardedTensor

def airy_ai(input) -> ShardedTensor:
    """The Airy function ``Ai`` (0 past 103.892, nan at +-inf, as torch)."""

def bessel_j0(input) -> ShardedTensor:
    """The Bessel function of the first kind of order 0."""

def bessel_j1(input) -> ShardedTensor:
    """The Bessel function of the first kind of order 1."""

def bessel_y0(input) -> ShardedTensor:
    """The Bessel function of the second kind of order 0 (-inf at 0, nan below)."""

def bessel_y1(input) -> ShardedTensor:
    """The Bessel function of the second kind of order 1 (-inf at 0, nan below)."""

def chebyshev_polynomial_t(input, n) -> ShardedTensor:
    """The Chebyshev polynomial of the first kind of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.chebyshev_polynomial_t``."""

def chebyshev_polynomial_u(input, n) -> ShardedTensor:
    """The Chebyshev polynomial of the second kind of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.chebyshev_polynomial_u``."""

def chebyshev_polynomial_v(input, n) -> ShardedTensor:
    """The Chebyshev polynomial of the third kind of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.chebyshev_polynomial_v``."""

def chebyshev_polynomial_w(input, n) -> ShardedTensor:
    """The Chebyshev polynomial of the fourth kind of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.chebyshev_polynomial_w``."""

def digamma(input, *, out=...) -> ShardedTensor:
    """``d/dx lgamma(x)`` (torch's values at the poles: -inf at 0, nan at the negative
    integers)."""

def entr(input) -> ShardedTensor:
    """Elementwise entropy ``-x log(x)``: 0 at 0, ``-inf`` for negative ``x``."""

def erf(input, *, out=...) -> ShardedTensor:
    """The error function ``2/sqrt(pi) * int_0^x exp(-t^2) dt``."""

def erfc(input, *, out=...) -> ShardedTensor:
    """``1 - erf(input)``, accurate where it is tiny (``erfc(10)`` ~ 2e-45)."""

def erfcx(input) -> ShardedTensor:
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""

def erfinv(input, *, out=...) -> ShardedTensor:
    """The inverse of ``erf`` on [-1, 1] (+-inf at +-1, nan outside)."""

def exp2(input, *, out=...) -> ShardedTensor:
    """``2 ** input``."""

def expit(input, *, out=...) -> ShardedTensor:
    """``1 / (1 + exp(-input))``."""

def expm1(input, *, out=...) -> ShardedTensor:
    """``exp(input) - 1``, accurate near 0."""

def gammainc(input, other) -> ShardedTensor:
    """The regularized lower incomplete gamma function (:func:`sharded.igamma`)."""

def gammaincc(input, other) -> ShardedTensor:
    """The regularized upper incomplete gamma function (:func:`sharded.igammac`)."""

def gammaln(input, *, out=...) -> ShardedTensor:
    """``log|Gamma(input)|`` (+inf at 0, -1, -2, ...)."""

def hermite_polynomial_h(input, n) -> ShardedTensor:
    """The physicists' Hermite polynomial of degree ``n`` (truncated to an int; 0 for a negative
    ``n``) at ``input``, as ``torch.special.hermite_polynomial_h``."""

def hermite_polynomial_he(input, n) -> ShardedTensor:
    """The probabilists' Hermite polynomial of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.hermite_polynomial_he``."""

def i0(input, *, out=...) -> ShardedTensor:
    """The modified Bessel function of the first kind of order 0."""

def i0e(input) -> ShardedTensor:
    """``exp(-|x|) i0(x)``, the exponentially scaled modified Bessel function of order 0."""

def i1(input) -> ShardedTensor:
    """The modified Bessel function of the first kind of order 1."""

def i1e(input) -> ShardedTensor:
    """``exp(-|x|) i1(x)``, the exponentially scaled modified Bessel function of order 1."""

def laguerre_polynomial_l(input, n) -> ShardedTensor:
    """The Laguerre polynomial of degree ``n`` (truncated to an int; 0 for a negative ``n``) at
    ``input``, as ``torch.special.laguerre_polynomial_l``."""

def legendre_polynomial_p(input, n) -> ShardedTensor:
    """The Legendre polynomial of degree ``n`` (truncated to an int; 0 for a negative ``n``) at
    ``input``, as ``torch.special.legendre_polynomial_p``."""

def log1p(input, *, out=...) -> ShardedTensor:
    """``log(1 + input)``, accurate for small inputs."""

def log_ndtr(input) -> ShardedTensor:
    """``log(ndtr(input))`` (through ``erfc``, so accurate far into the left tail)."""

def log_softmax(input, dim, dtype=..., *, out=...) -> ShardedTensor:
    """``x - logsumexp(x, dim)``: log-probabilities without overflow (shifted by the max)."""

def logit(input, eps=...) -> ShardedTensor:
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""

def logsumexp(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow."""

def modified_bessel_i0(input) -> ShardedTensor:
    """The modified Bessel function of the first kind of order 0 (as :func:`sharded.i0`)."""

def modified_bessel_i1(input) -> ShardedTensor:
    """The modified Bessel function of the first kind of order 1."""

def modified_bessel_k0(input) -> ShardedTensor:
    """The modified Bessel function of the second kind of order 0 (inf at 0, nan below)."""

def modified_bessel_k1(input) -> ShardedTensor:
    """The modified Bessel function of the second kind of order 1 (inf at 0, nan below)."""

def multigammaln(input, p) -> ShardedTensor:
    """The multivariate log-gamma function (:func:`sharded.mvlgamma`)."""

def ndtr(input) -> ShardedTensor:
    """The standard normal CDF, ``erfc(-x / sqrt(2)) / 2``."""

def ndtri(input) -> ShardedTensor:
    """The inverse of the standard normal CDF (``torch.special.ndtri``): -inf at 0, inf at 1,
    nan outside [0, 1]; accurate in both tails (``ndtri(1e-20)`` is -9.26, where ``sqrt(2) *
    erfinv(2p - 1)`` rounds ``2p - 1`` to -1 and gives -inf)."""

def polygamma(n, input, *, out=...) -> ShardedTensor:
    """The ``n``-th derivative of ``digamma``: ``digamma`` for ``n = 0``, trigamma for 1,
    ``(-1)^(n+1) n! zeta(n + 1, input)`` above (torch's formula)."""

def psi(input, *, out=...) -> ShardedTensor:
    """``d/dx lgamma(x)`` (torch's values at the poles: -inf at 0, nan at the negative
    integers)."""

def round(input, *, decimals=...) -> ShardedTensor:
    """:func:`sharded.round` with torch.special's ``decimals`` overload (no integer kernel)."""

def scaled_modified_bessel_k0(input) -> ShardedTensor:
    """``exp(x) K0(x)``, the scaled modified Bessel function of the second kind of order 0."""

def scaled_modified_bessel_k1(input) -> ShardedTensor:
    """``exp(x) K1(x)``, the scaled modified Bessel function of the second kind of order 1."""

def shifted_chebyshev_polynomial_t(input, n) -> ShardedTensor:
    """``T_n(2x - 1)``, the shifted Chebyshev of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.shifted_chebyshev_polynomial_t``."""

def shifted_chebyshev_polynomial_u(input, n) -> ShardedTensor:
    """``U_n(2x - 1)``, the shifted Chebyshev of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.shifted_chebyshev_polynomial_u``."""

def shifted_chebyshev_polynomial_v(input, n) -> ShardedTensor:
    """``V_n(2x - 1)``, the shifted Chebyshev of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.shifted_chebyshev_polynomial_v``."""

def shifted_chebyshev_polynomial_w(input, n) -> ShardedTensor:
    """``W_n(2x - 1)``, the shifted Chebyshev of degree ``n`` (truncated to an int; 0 for a
    negative ``n``) at ``input``, as ``torch.special.shifted_chebyshev_polynomial_w``."""

def sinc(input, *, out=...) -> ShardedTensor:
    """``sin(pi x) / (pi x)``, 1 at 0."""

def softmax(input, dim, dtype=..., *, out=...) -> ShardedTensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max for stability."""

def spherical_bessel_j0(input) -> ShardedTensor:
    """The spherical Bessel function of the first kind of order 0, ``sin(x) / x`` (1 at 0)."""

def xlog1py(input, other) -> ShardedTensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""

def xlogy(input, other, *, out=...) -> ShardedTensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""

def zeta(input, other) -> ShardedTensor:
    """The Hurwitz zeta function ``sum_k (k + other)^-input`` (``torch.special.zeta``)."""
