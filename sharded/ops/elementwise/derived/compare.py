"""Comparisons derived from the elementwise primitives: ``isclose``, ``allclose``, ``equal``,
``isinf``, ``isposinf``, ``isneginf``, ``isreal``; and the predicates ``is_nonzero`` (a value
against 0) and ``is_signed`` (of the dtype), read as Python bools.

Each is a composition of comparisons, ``abs`` and ``&``/``|`` (reached through tensor
methods and operators), so none needs a rule or a gradient of its own; ``allclose`` and
``equal`` reduce with ``all`` and read one Python bool.
"""

from __future__ import annotations

import math

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, DTypeError, ShapeError
from ..prims.unary import isfinite

__all__ = [
    "isclose",
    "allclose",
    "equal",
    "isinf",
    "isposinf",
    "isneginf",
    "isreal",
    "is_nonzero",
    "is_signed",
]


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


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
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


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
    return bool((a == b).all().item())


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


# ---------------------------------------------------------- predicates read as Python bools
@bind("is_nonzero")
def is_nonzero(input):
    """Whether a one-element tensor is not zero (more or fewer elements: RuntimeError).

    Examples
    --------
    >>> import sharded as st
    >>> st.is_nonzero(st.tensor([0.0])), st.tensor([[2]]).is_nonzero()
    (False, True)
    """
    n = input.numel()
    if n != 1:
        raise ShapeError(
            f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
            f"is ambiguous"
        )
    return bool(input.item() != 0)


def is_signed(input):
    """Whether the dtype is signed (bool and uint8: False; floats and complex: True).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1]).is_signed(), st.tensor([True]).is_signed()
    (True, False)
    """
    return input.is_signed()
