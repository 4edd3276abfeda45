"""torch's in-place samplers ``random_``, ``exponential_``, ``cauchy_``, ``log_normal_``
and ``geometric_`` (tensor methods only, as in torch).

Each draws from the counter-based ``random`` primitive (reached by name) on the tensor's own
layout, in float64, and transforms the draw locally by inversion -- so, like ``normal_`` and
``uniform_``, the values are the same for any shard count and layout after the same
``st.manual_seed``, and nothing is read by the driver.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as D
from ...core.dispatch import apply
from ...core.registry import bind
from ...errors import ArgumentError, ArgumentTypeError, DTypeError, UnsupportedDType

__all__: list[str] = []


def _uniform(t):
    """Uniform [0, 1) float64 draws laid out like ``t``."""
    return apply("random", t._layout, "uniform", D.float64)


def _continuous(name, t):
    if not t.dtype.is_floating_point:
        raise DTypeError(
            f"{name} distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {t.dtype.name}"
        )


# the largest integer each floating dtype holds exactly: torch's default bound of random_
_MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _random_bounds(dt):
    """``[lo, hi]`` of the values a ``dt`` tensor can take from ``random_``."""
    if dt.name == "bool":
        return 0, 1
    if dt.is_floating_point:
        m = 2 ** _MANTISSA[dt.name]
        return -m, m
    info = np.iinfo(dt.np)
    return int(info.min), int(info.max)


@bind("random_")
def random_(self, *args, generator=None, **kw):
    """Fill with integers uniform in ``[from, to)`` (``random_(to)`` and ``random_(from,
    to)`` as torch; with no ``to``: ``[0, 2**mantissa]`` for floating dtypes, ``[0, max]``
    for integer ones), in place.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(100, shards=3).random_(3, 5)
    >>> sorted(set(x.tolist()))
    [3.0, 4.0]
    """
    if len(args) > 2:
        raise ArgumentTypeError(f"random_() takes at most 2 arguments ({len(args)} given)")
    lo, hi = (0, args[0]) if len(args) == 1 else (tuple(args) + (0, None))[:2]
    lo, hi = kw.pop("from", lo), kw.pop("to", hi)
    if kw:
        raise ArgumentTypeError(f"random_() got unexpected keyword arguments {sorted(kw)}")
    if self.dtype.is_complex:
        raise UnsupportedDType(f'"random_" not implemented for {self.dtype.name}')
    tmin, tmax = _random_bounds(self.dtype)
    if hi is None:
        hi = tmax + 1
        if lo > tmax:
            raise ArgumentError(f"random_ expects 'from' ({lo}) to be at most {tmax}")
    elif lo >= hi:
        raise ArgumentError(
            f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}"
        )
    if not self.dtype.is_floating_point and self.dtype.name != "bool":
        if not tmin <= lo <= tmax:
            raise ArgumentError(f"from is out of bounds for {self.dtype.name}")
        if not tmin <= hi - 1 <= tmax:
            raise ArgumentError(f"to - 1 is out of bounds for {self.dtype.name}")
    if not self.numel():
        return self
    draw = apply("random", self._layout, "integers", D.int64, low=int(lo), high=int(hi))
    return self.copy_(draw)


@bind("exponential_")
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples of the exponential distribution of rate ``lambd`` (mean
    ``1 / lambd``), in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> x = st.zeros(1000, shards=2).exponential_(2.0)
    >>> x.min().item() >= 0 and abs(x.mean().item() - 0.5) < 0.1
    True
    """
    if not lambd > 0:
        raise ArgumentError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    _continuous("Exponential", self)
    u = _uniform(self)
    return self.copy_((-u).log1p() * (-1.0 / lambd))  # u < 1: log1p(-u) is finite


@bind("cauchy_")
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with samples of the Cauchy distribution ``median + sigma * tan(pi (u - 1/2))``,
    in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> x = st.zeros(1001, shards=3).cauchy_(5.0, 0.5)
    >>> abs(x.median().item() - 5.0) < 0.2
    True
    """
    if not sigma > 0:
        raise ArgumentError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _continuous("Cauchy", self)
    u = _uniform(self)
    return self.copy_(((u - 0.5) * math.pi).tan() * sigma + median)


@bind("log_normal_")
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with ``exp(N(mean, std**2))`` samples, in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> x = st.zeros(1000, shards=2).log_normal_(0.0, 0.25)
    >>> x.min().item() > 0 and abs(x.log().mean().item()) < 0.05
    True
    """
    if not std > 0:
        raise ArgumentError(f"log_normal_ expects std > 0.0, but found std={std}")
    if not self.dtype.is_floating_point:
        raise UnsupportedDType(f'"log_normal_" not implemented for {self.dtype.name}')
    z = apply("random", self._layout, "normal", D.float64)
    return self.copy_((z * std + mean).exp())


@bind("geometric_")
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2,
    ...), in place; integer tensors too, as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> x = st.zeros(1000, dtype=st.int64, shards=3).geometric_(0.5)
    >>> x.min().item() >= 1 and abs(x.double().mean().item() - 2.0) < 0.2
    True
    """
    if not 0 < p < 1:
        raise ArgumentError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    if self.dtype.is_complex or self.dtype.name == "bool":
        raise UnsupportedDType(f'"geometric_" not implemented for {self.dtype.name}')
    u = _uniform(self)
    # inversion: ceil(log(1 - u) / log(1 - p)); u = 0 would give 0 trials, so at least 1
    k = ((-u).log1p() / math.log1p(-p)).ceil().clamp(min=1.0)
    return self.copy_(k)
