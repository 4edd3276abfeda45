"""Derived ops: compositions of primitives that need no rule or gradient of their own.

Each function says in one line what it computes from primitives (reached through the public
functions and tensor methods of the op families), so autograd differentiates the primitives
it is made of.
"""

from __future__ import annotations

import builtins
import math
import warnings

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, DTypeError
from ....layout import normalize_dim
from ...elementwise.prims.selection import where
from ...elementwise.prims.unary import exp, isfinite, log, sqrt
from ..prims import amax, dims_of, sum

__all__ = [
    "mean",
    "nansum",
    "nanmean",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "logsumexp",
    "softmax",
    "log_softmax",
    "isclose",
    "allclose",
    "equal",
    "isinf",
    "isposinf",
    "isneginf",
    "isreal",
    "positive",
    "lerp",
    "addcmul",
    "addcdiv",
]


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


def _count(x, dims) -> int:
    return math.prod(x.shape[d] for d in dims)


def _shift(x, dims):
    """The max over ``dims`` (kept) that softmax-like ops subtract; 0 for an empty tensor,
    whose max does not exist (sum(exp) of nothing is 0: logsumexp -inf, softmax empty)."""
    return amax(x, dims, keepdim=True) if x.numel() else 0.0


# mean = sum(x) / count, summed in the output dtype
@bind("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Arithmetic mean; floating inputs only (or give ``dtype=``), like torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.mean(st.tensor([1., 2., 3., 4.])).item()
    2.5
    """
    x = _tensor(input)
    dt = D.as_dtype(dtype) if dtype is not None else x.dtype
    if D.category(dt) < 2:
        raise DTypeError(
            f"mean(): could not infer output dtype. Input dtype must be a "
            f"floating point dtype (or pass dtype=). Got: {x.dtype.name}"
        )
    dims = dims_of(x, dim, axis)
    return sum(x, dims, keepdim, dtype=dt) / _count(x, dims)


# var = sum((x - mean(x))^2) / (count - correction)
@bind("var")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Variance with ``correction`` (default 1, Bessel's) over the given dims.

    Examples
    --------
    >>> import sharded as st
    >>> st.var(st.tensor([1., 2., 3., 4.])).item()
    1.6666666269302368
    """
    x = _tensor(input)
    if D.category(x.dtype) < 2:
        raise DTypeError(f"var(): input dtype should be floating point, got {x.dtype.name}")
    if isinstance(dim, bool):  # torch's var(input, unbiased) overload: a bool is not a dim
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = dims_of(x, dim, axis)
    # var = sum((x - mean)^2) / (n - correction), two passes for stability
    d = x - mean(x, dims, keepdim=True)
    # |d|^2 (real for complex x, as torch): d * conj(d) is re^2 + im^2
    d2 = d.real * d.real + d.imag * d.imag if x.dtype.is_complex else d * d
    dof = _count(x, dims) - correction
    if dof <= 0:  # torch warns and gives nan (0 / 0) or inf, not an error
        warnings.warn(
            f"var(): degrees of freedom is <= 0 (correction {correction} for "
            f"{_count(x, dims)} elements per result)",
            UserWarning,
            stacklevel=2,
        )
    return sum(d2, dims, keepdim) / builtins.max(dof, 0)


# std = sqrt(var(x))
@bind("std")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Standard deviation: ``sqrt(var(...))``.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.std(st.tensor([2., 4.])).item(), 4)
    1.4142
    """
    v = var(input, dim, unbiased, keepdim, correction=correction, axis=axis)
    # torch's std has gradient 0 where std is 0 (sqrt's would be inf * 0 = nan): the inner
    # where keeps sqrt off 0, the outer one selects 0 there, so no nan reaches var's gradient
    flat = v == 0
    return where(flat, 0.0, sqrt(where(flat, 1.0, v)))


def _floating(name, x):
    if D.category(x.dtype) < 2:
        raise DTypeError(
            f"{name}(): expected input to have floating point or complex dtype but got "
            f"{x.dtype.name}"
        )


# var_mean = (var(x), mean(x)) over the same dims (a function only: torch has no method)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over the same dims, a tuple as torch's (``correction`` default 1).

    Examples
    --------
    >>> import sharded as st
    >>> v, m = st.var_mean(st.tensor([1., 2., 3., 4.]))
    >>> round(v.item(), 4), m.item()
    (1.6667, 2.5)
    """
    x = _tensor(input)
    _floating("var_mean", x)
    return var(x, dim, unbiased, keepdim, correction=correction), mean(x, dim, keepdim)


# std_mean = (std(x), mean(x)) over the same dims (a function only, as torch)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over the same dims, a tuple as torch's (``correction`` default 1).

    Examples
    --------
    >>> import sharded as st
    >>> s, m = st.std_mean(st.tensor([2., 4.]))
    >>> round(s.item(), 4), m.item()
    (1.4142, 3.0)
    """
    x = _tensor(input)
    _floating("std_mean", x)
    return std(x, dim, unbiased, keepdim, correction=correction), mean(x, dim, keepdim)


# nansum = sum(where(isnan(x), 0, x))
@bind("nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero (integers and bools sum in int64, as :func:`sum`).

    Examples
    --------
    >>> import sharded as st
    >>> st.nansum(st.tensor([1., float("nan"), 2.])).item()
    3.0
    """
    x = _tensor(input)
    dims = dims_of(x, dim)  # a bad dim is reported first, as torch
    if x.dtype.is_complex:
        raise DTypeError(f"nansum does not support complex inputs (got {x.dtype.name})")
    if D.category(x.dtype) >= 2:
        x = where(x.isnan(), 0.0, x)  # gradient 0 at the NaNs, as torch
    return sum(x, dims, keepdim, dtype=dtype)


# nanmean = nansum(x) / count(not nan)
@bind("nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements (NaN where all are NaN); floating inputs only, as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.nanmean(st.tensor([1., float("nan"), 2.])).item()
    1.5
    """
    x = _tensor(input)
    _floating("nanmean", x)
    dims = dims_of(x, dim)
    n = (~x.isnan()).sum(dims, keepdim)
    return nansum(x, dims, keepdim, dtype=dtype) / n


# logsumexp = m + log(sum(exp(x - m))), m the finite max
@bind("logsumexp")
def logsumexp(input, dim=None, keepdim=False):
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.logsumexp(st.tensor([1000., 1000.]), dim=0).item(), 3)
    1000.693
    """
    x = _tensor(input)
    if D.category(x.dtype) < 2:
        x = x.to(D.get_default_dtype())
    dims = dims_of(x, dim)
    m = _shift(x.real, dims)  # complex: shift by the real part's max (|exp| is exp(re))
    m = where(isfinite(m), m, 0.0)  # all -inf (or inf) rows must not give nan
    # lse = m + log(sum(exp(x - m)))
    out = log(sum(exp(x - m), dims, keepdim=True)) + m
    return out if keepdim else apply("squeeze_dims", out, dims)


# softmax = exp(x - max) / sum(exp(x - max))
@bind("softmax")
def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max for stability.

    Examples
    --------
    >>> import sharded as st
    >>> st.softmax(st.tensor([1000., 1000.]), dim=0).tolist()
    [0.5, 0.5]
    """
    x = _tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    elif x.dtype.is_complex:
        raise DTypeError(f"softmax is not implemented for complex dtype {x.dtype.name}")
    elif not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    d = dims_of(x, normalize_dim(dim, x.ndim))  # () for a 0-d tensor
    e = exp(x - _shift(x, d))
    return e / sum(e, d, keepdim=True)


# log_softmax = (x - max) - log(sum(exp(x - max)))
@bind("log_softmax")
def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x, dim)``: log-probabilities without overflow (shifted by the max).

    Examples
    --------
    >>> import sharded as st
    >>> st.log_softmax(st.tensor([0., 0.]), dim=0).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """
    x = _tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    elif x.dtype.is_complex:
        raise DTypeError(f"log_softmax is not implemented for complex dtype {x.dtype.name}")
    elif not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    d = dims_of(x, normalize_dim(dim, x.ndim))
    # torch shifts by the unmasked max: a row holding inf gives nan everywhere (not -inf)
    s = x - _shift(x, d)
    return s - log(sum(exp(s), d, keepdim=True))


# ------------------------------------------------------------------------- comparisons
# isclose = (a == b) | (|a - b| <= atol + rtol * |b|), NaNs equal only with equal_nan
@bind("isclose")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities are close;
    NaN is close to NaN only with ``equal_nan``). Both operands must have the same dtype, as
    in torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.isclose(st.tensor([1.0, 2.0]), st.tensor([1.0 + 1e-7, 2.1])).tolist()
    [True, False]
    """
    a, b = _tensor(input), _tensor(other)
    if a.dtype != b.dtype:
        raise DTypeError(f"isclose(): {a.dtype.name} did not match {b.dtype.name}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise ArgumentError(f"{name} must be greater than or equal to zero, but got {v}")
    close = a == b
    if a.dtype == D.bool_:
        return close
    err = (a - b).abs()  # a non-finite error (inf against -inf, NaN) is never close
    close = close | (isfinite(err) & (err <= atol + rtol * b.abs()))
    if equal_nan and D.category(a.dtype) >= 2:
        close = close | (a.isnan() & b.isnan())
    return close


# allclose = all(isclose): one reduction, then one read
@bind("allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element pair is close (:func:`isclose`), as a Python bool.

    Examples
    --------
    >>> import sharded as st
    >>> st.allclose(st.ones(3), st.ones(3) + 1e-9)
    True
    """
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all().item())


# equal = same shape and all(input == other)
@bind("equal")
def equal(input, other) -> bool:
    """Whether both tensors have the same shape and elements (NaN differs from NaN), as a
    Python bool; dtypes may differ (``ones(2)`` equals ``ones(2, dtype=int64)``, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.equal(st.tensor([1, 2]), st.tensor([1., 2.])), st.equal(st.ones(2), st.ones(3))
    (True, False)
    """
    a, b = _tensor(input), _tensor(other)
    if tuple(a.shape) != tuple(b.shape):
        return False
    return builtins.bool((a == b).all().item())


# isinf = (x == inf) | (x == -inf)
@bind("isinf")
def isinf(input):
    """Whether each element is +inf or -inf (always False for integers and bools).

    Examples
    --------
    >>> import sharded as st
    >>> st.isinf(st.tensor([1.0, float("inf"), -float("inf")])).tolist()
    [False, True, True]
    """
    x = _tensor(input)
    if x.dtype.is_complex:  # either part infinite, as torch
        return isinf(x.real) | isinf(x.imag)
    return (x == math.inf) | (x == -math.inf)


# isposinf = x == inf
@bind("isposinf")
def isposinf(input):
    """Whether each element is +inf.

    Examples
    --------
    >>> import sharded as st
    >>> st.isposinf(st.tensor([1.0, float("inf"), -float("inf")])).tolist()
    [False, True, False]
    """
    return _no_complex("isposinf", _tensor(input)) == math.inf


# isneginf = x == -inf
@bind("isneginf")
def isneginf(input):
    """Whether each element is -inf.

    Examples
    --------
    >>> import sharded as st
    >>> st.isneginf(st.tensor([1.0, float("inf"), -float("inf")])).tolist()
    [False, False, True]
    """
    return _no_complex("isneginf", _tensor(input)) == -math.inf


def _no_complex(name, x):
    """``x``; a complex ``x`` raises, as torch ("isposinf does not support complex inputs")."""
    if x.dtype.is_complex:
        raise DTypeError(f"{name} does not support complex inputs (got {x.dtype.name})")
    return x


# isreal = True everywhere for real dtypes, laid out like the input; imag == 0 for complex
@bind("isreal")
def isreal(input):
    """Whether each element is real: its imaginary part is 0 (always True for real dtypes).

    Examples
    --------
    >>> import sharded as st
    >>> st.isreal(st.tensor([1.0, float("nan")])).tolist()
    [True, True]
    """
    x = _tensor(input)
    if x.dtype.is_complex:
        return x.imag == 0
    return apply("full", x.layout, True, D.bool_)


# positive = the input itself (torch refuses bool, whose + is not defined)
@bind("positive")
def positive(input):
    """``+input``: the tensor itself; bool tensors raise, as in torch.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1, -2])
    >>> st.positive(x) is x
    True
    """
    x = _tensor(input)
    if x.dtype == D.bool_:
        raise DTypeError("The `+` operator, on a bool tensor is not supported.")
    return x


def _lerp_check(x, end, weight):
    """torch's lerp: floating point only, and ``end`` (and a tensor ``weight``) of the same
    dtype as ``input``."""
    if D.category(x.dtype) < 2:
        raise DTypeError(f"lerp is not implemented for {x.dtype.name}")
    for what, t in (("end", end), ("weight", weight)):
        if is_tensor(t) and t.dtype != x.dtype:
            raise DTypeError(
                f"lerp: expected dtype {x.dtype.name} for `{what}` but got {t.dtype.name}"
            )


# lerp = input + weight * (end - input)
@bind("lerp")
def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)``, as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.lerp(st.tensor([1.0, 2.0]), st.tensor([3.0, 4.0]), 0.25).tolist()
    [1.5, 2.5]
    """
    x, end = _tensor(input), _tensor(end)
    _lerp_check(x, end, weight)
    return x + weight * (end - x)


@bind("lerp_")
def lerp_(self, end, weight):
    """In-place :func:`lerp`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([0.0]); x.lerp_(st.tensor([2.0]), 0.5).tolist()
    [1.0]
    """
    end = _tensor(end)
    _lerp_check(self, end, weight)
    return self.add_(weight * (end - self))


def _value(out_float, value):
    """torch casts ``value`` to an integer result's dtype (0.5 -> 0)."""
    return value if out_float or not isinstance(value, float) else int(value)


# addcmul = input + value * tensor1 * tensor2
@bind("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.addcmul(st.tensor([1, 2]), st.tensor([1, 2]), st.tensor([1, 2]), value=2).tolist()
    [3, 10]
    """
    x = _tensor(input)
    prod = _tensor(tensor1) * tensor2
    out = D.result_type([x.dtype, prod.dtype], [], [])
    return x + _value(D.category(out) >= 2, value) * prod


@bind("addcmul_")
def addcmul_(self, tensor1, tensor2, *, value=1):
    """In-place :func:`addcmul`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.0]); x.addcmul_(st.tensor([2.0]), st.tensor([3.0])).tolist()
    [7.0]
    """
    return self.add_(_value(D.category(self.dtype) >= 2, value) * (_tensor(tensor1) * tensor2))


def _quotient(tensor1, tensor2):
    """``tensor1 / tensor2``; torch refuses integer division here."""
    t1, t2 = _tensor(tensor1), _tensor(tensor2)
    if max(D.category(t1.dtype), D.category(t2.dtype)) < 2:
        raise DTypeError(
            f"Integer division with addcdiv is no longer supported ({t1.dtype.name} / "
            f"{t2.dtype.name}); use a floating tensor1 or tensor2"
        )
    return t1 / t2


# addcdiv = input + value * tensor1 / tensor2
@bind("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``, as torch (integer tensor1 and tensor2 raise).

    Examples
    --------
    >>> import sharded as st
    >>> st.addcdiv(st.tensor([1.0]), st.tensor([3.0]), st.tensor([2.0]), value=2).tolist()
    [4.0]
    """
    return _tensor(input) + value * _quotient(tensor1, tensor2)


@bind("addcdiv_")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In-place :func:`addcdiv`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.0]); x.addcdiv_(st.tensor([3.0]), st.tensor([2.0])).tolist()
    [2.5]
    """
    return self.add_(value * _quotient(tensor1, tensor2))
