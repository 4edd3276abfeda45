"""torch.special's orthogonal polynomials of ``(input, n)``: Chebyshev ``T``, ``U``, ``V``,
``W`` and their shifted forms, Hermite ``H`` (physicists') and ``He`` (probabilists'),
Laguerre ``L`` and Legendre ``P``, elementwise (``input`` and ``n`` broadcast; either may be a
Python number, not both).

torch's definitions (:func:`..kernels.polynomial`): ``n`` truncated to an int, 0 for a
negative (or NaN, infinite) ``n``, the endpoints' exact values, the trigonometric form of
the Chebyshev kinds inside ``(-1, 1)`` for large ``n``, else the three-term recurrence in the
result dtype (promoted from both operands, integers giving the default float dtype), stopped
at a NaN; Hermite degrees above 128 (float32) or 512 (float64) give NaN. Legendre on
``(-1, 1)`` and Laguerre on ``x > 0`` of degree above 1000 are SciPy's ``eval_legendre`` and
``eval_laguerre`` (the same recurrence in C: a degree of 10^8 takes half a second). torch
defines no derivatives: the results never require grad.
"""

from __future__ import annotations

from ....core.registry import nondiff
from ....errors import DTypeError
from .. import kernels as K
from .. import plan as E
from .bessel import single_double

__all__: list[str] = []

_NAMES = {  # function -> (kernel kind, what it is, example at x = 0.5, n = 3)
    "chebyshev_polynomial_t": ("t", "The Chebyshev polynomial of the first kind", -1.0),
    "chebyshev_polynomial_u": ("u", "The Chebyshev polynomial of the second kind", -1.0),
    "chebyshev_polynomial_v": ("v", "The Chebyshev polynomial of the third kind", -1.0),
    "chebyshev_polynomial_w": ("w", "The Chebyshev polynomial of the fourth kind", -1.0),
    "shifted_chebyshev_polynomial_t": ("st", "``T_n(2x - 1)``, the shifted Chebyshev", -0.0),
    "shifted_chebyshev_polynomial_u": ("su", "``U_n(2x - 1)``, the shifted Chebyshev", -0.0),
    "shifted_chebyshev_polynomial_v": ("sv", "``V_n(2x - 1)``, the shifted Chebyshev", 1.0),
    "shifted_chebyshev_polynomial_w": ("sw", "``W_n(2x - 1)``, the shifted Chebyshev", -1.0),
    "hermite_polynomial_h": ("h", "The physicists' Hermite polynomial", -5.0),
    "hermite_polynomial_he": ("he", "The probabilists' Hermite polynomial", -1.375),
    "laguerre_polynomial_l": ("l", "The Laguerre polynomial", -0.14583333333333334),
    "legendre_polynomial_p": ("p", "The Legendre polynomial", -0.4375),
}


def _kernel(name, kind):
    """The kernel of ``name``: the polynomial computed in the result dtype ``cast``."""

    def k(xp, x, n, cast=None, out=None):
        x, n = xp.asarray(x, dtype=cast), xp.asarray(n, dtype=cast)
        return E.result(xp, K.polynomial(xp, kind, x, n), out)

    return E.named_kernel(name)(k)


def _function(name):
    kind, what, value = _NAMES[name]
    E.define(name, _kernel(name, kind), single_double(name))

    def fn(input, n):
        if not (E.is_tensor(input) or E.is_tensor(n)):
            raise DTypeError(
                f"{name}(): one of 'input' and 'n' must be a tensor, got "
                f"{type(input).__name__} {input!r} and {type(n).__name__} {n!r}"
            )
        return E.call(name, input, n)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{what} of degree ``n`` (truncated to an int; 0 for a negative ``n``) at
    ``input``, as ``torch.special.{name}``.

    Examples
    --------
    >>> import sharded as st
    >>> st.special.{name}(st.tensor([0.5], dtype=st.float64), 3).tolist()
    [{value!r}]
    """
    return fn


chebyshev_polynomial_t = _function("chebyshev_polynomial_t")
chebyshev_polynomial_u = _function("chebyshev_polynomial_u")
chebyshev_polynomial_v = _function("chebyshev_polynomial_v")
chebyshev_polynomial_w = _function("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _function("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _function("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _function("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _function("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _function("hermite_polynomial_h")
hermite_polynomial_he = _function("hermite_polynomial_he")
laguerre_polynomial_l = _function("laguerre_polynomial_l")
legendre_polynomial_p = _function("legendre_polynomial_p")
nondiff(*_NAMES)  # torch defines no derivative: the results do not require grad
