"""Derived ops: compositions of primitives that need no rule or gradient of their own.

Each function says in one line what it computes from primitives (reached through the public
functions and tensor methods of the op families), so autograd differentiates the primitives
it is made of.
"""

from __future__ import annotations

import builtins
import math

from . import dtypes as D
from .core.dispatch import apply, as_tensor, is_tensor
from .core.registry import bind
from .errors import DTypeError
from .layout import normalize_dim
from .ops.reduce import amax, dims_of, sum
from .ops.selection import where
from .ops.unary import exp, isfinite, log, sqrt

__all__ = ["mean", "var", "std", "logsumexp", "softmax", "log_softmax"]


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
    if not dt.is_floating_point:
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
    if not x.dtype.is_floating_point:
        raise DTypeError(f"var(): input dtype should be floating point, got {x.dtype.name}")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = dims_of(x, dim, axis)
    # var = sum((x - mean)^2) / (n - correction), two passes for stability
    d = x - mean(x, dims, keepdim=True)
    return sum(d * d, dims, keepdim) / builtins.max(_count(x, dims) - correction, 0)


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
    if not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    dims = dims_of(x, dim)
    m = _shift(x, dims)
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
    elif not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    d = dims_of(x, normalize_dim(dim, x.ndim))
    # torch shifts by the unmasked max: a row holding inf gives nan everywhere (not -inf)
    s = x - _shift(x, d)
    return s - log(sum(exp(s), d, keepdim=True))
