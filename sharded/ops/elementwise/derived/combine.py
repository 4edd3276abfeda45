"""Arithmetic derived from the elementwise primitives: ``positive``, ``lerp``, ``addcmul`` and
``addcdiv``, with the in-place ``lerp_``, ``addcmul_`` and ``addcdiv_``.

Each is a composition of ``+``, ``-``, ``*`` and ``/`` (the in-place forms end in ``add_``),
with torch's dtype checks first, so none needs a rule or a gradient of its own.
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dispatch import as_tensor, is_tensor
from ....core.registry import bind
from ....errors import DTypeError

# the in-place forms are tensor methods only, as in torch
__all__ = ["positive", "lerp", "addcmul", "addcdiv"]


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


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
