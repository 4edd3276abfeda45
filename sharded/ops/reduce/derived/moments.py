"""Reductions derived from ``sum`` and ``amax``: ``mean``, ``var``, ``std``, ``var_mean``,
``std_mean``, ``nansum``, ``nanmean``, ``logsumexp``, ``softmax``, ``log_softmax`` and the
method ``Tensor.sum_to_size``.

Each function says in one line what it computes from primitives (reached through the public
functions and tensor methods of the op families), so autograd differentiates the primitives
it is made of.
"""

from __future__ import annotations

import builtins
import math
import numbers
import warnings

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor, via_float32
from ....core.registry import bind
from ....errors import ArgumentTypeError, DTypeError, ShapeError
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
@via_float32
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
@via_float32
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
@via_float32
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
@via_float32
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
    if isinstance(dim, bool):  # torch's var_mean(input, unbiased) overload: a bool is not a dim
        dim, unbiased = None, dim
    return var(x, dim, unbiased, keepdim, correction=correction), mean(x, dim, keepdim)


# std_mean = (std(x), mean(x)) over the same dims (a function only, as torch)
@via_float32
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
    if isinstance(dim, bool):  # torch's std_mean(input, unbiased) overload: a bool is not a dim
        dim, unbiased = None, dim
    return std(x, dim, unbiased, keepdim, correction=correction), mean(x, dim, keepdim)


# nansum = sum(where(isnan(x), 0, x))
@bind("nansum")
@via_float32
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
@via_float32
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


# sum_to_size = sum over the dims that broadcasting would expand (a method only, as torch)
@bind("sum_to_size")
def sum_to_size(self, *size):
    """Sum this tensor down to ``size`` (to which it must broadcast): the inverse of
    ``expand``.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, 3).sum_to_size(1, 3).tolist()
    [[2.0, 2.0, 2.0]]
    """
    if not size:
        raise ArgumentTypeError('sum_to_size() missing 1 required positional arguments: "size"')
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = tuple(size[0])
    shape, lead = tuple(self.shape), self.ndim - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise ShapeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if not size:  # torch sums to () even a 0-d tensor (bool and ints become int64)
        return self.sum()
    if tuple(size) == shape:
        return self
    dims = list(range(lead)) + [
        lead + i for i, (s, n) in enumerate(zip(size, shape[lead:])) if s == 1 and n != 1
    ]
    return self.sum(dims, keepdim=True).reshape(size)


# logsumexp = m + log(sum(exp(x - m))), m the finite max
@bind("logsumexp")
@via_float32
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
@via_float32
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
@via_float32
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
