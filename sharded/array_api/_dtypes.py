"""Data types of the Array API namespace: the dtype objects, ``isdtype``, ``result_type``,
``can_cast``, ``finfo``, ``iinfo`` and ``astype``.

The dtype objects are sharded's own (``xp.float32 is st.float32``). Promotion follows the
standard's table, which differs from torch's in one place that matters here: a 0-d array counts
as much as any other array (torch lets only dimensioned tensors decide the width). Complex
dtypes are exposed when :mod:`sharded.dtypes` has them.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from .. import dtypes as D
from ..errors import DTypeError
from ..tensor import ShardedTensor

bool = D.bool_
int8, int16, int32, int64, uint8 = D.int8, D.int16, D.int32, D.int64, D.uint8
float32, float64 = D.float32, D.float64
complex64 = getattr(D, "complex64", None)
complex128 = getattr(D, "complex128", None)

#: every dtype this namespace exposes, bool first (the order of ``info.dtypes()``)
DTYPES = tuple(
    d
    for d in (bool, int8, int16, int32, int64, uint8, float32, float64, complex64, complex128)
    if d is not None
)

_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def _as_dtype(dtype) -> D.DType:
    if isinstance(dtype, D.DType):
        return dtype
    raise DTypeError(f"expected a dtype of this namespace, got {dtype!r}")


def isdtype(dtype, kind) -> builtins.bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of either).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.isdtype(xp.int8, "integral"), xp.isdtype(xp.float32, ("bool", xp.float64))
    (True, False)
    """
    dtype = _as_dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, D.DType):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise DTypeError(f"unknown dtype kind {kind!r}; expected one of {sorted(_KINDS)}")
        return dtype.np.kind in _KINDS[kind]
    raise DTypeError(f"kind must be a dtype, a kind name or a tuple of them, got {kind!r}")


def promote(a: D.DType, b: D.DType) -> D.DType:
    """The standard's promotion of two dtypes (NumPy's table within a kind; across kinds,
    which the standard leaves open, the higher kind wins as in torch)."""
    if a == b:
        return a
    ka, kb = a.np.kind, b.np.kind
    if (ka in "iu") == (kb in "iu") and (ka == "b") == (kb == "b"):
        return D.from_numpy_dtype(np.promote_types(a.np, b.np))
    return D.promote_types(a, b)


def scalar_fits(dt: D.DType, s) -> builtins.bool:
    """Whether a Python scalar may join an array of ``dt`` without changing its dtype (the
    standard's rule; torch's too: a number of a lower or equal kind keeps the tensor's dtype).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> scalar_fits(xp.int8, 3), scalar_fits(xp.int8, 1.5), scalar_fits(xp.float32, True)
    (True, False, True)
    """
    if isinstance(s, builtins.bool):
        return True
    if isinstance(s, builtins.int):
        return dt.np.kind != "b"
    if isinstance(s, builtins.float):
        return dt.np.kind in "fc"
    return dt.np.kind == "c"


def result_type(*arrays_and_dtypes) -> D.DType:
    """The dtype of an op over these arrays, dtypes and Python scalars.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.result_type(xp.int8, xp.uint8), xp.result_type(xp.asarray(1, dtype=xp.int16), 2)
    (sharded.int16, sharded.int16)
    """
    dts, scalars = [], []
    for a in arrays_and_dtypes:
        if isinstance(a, ShardedTensor):
            dts.append(a.dtype)
        elif isinstance(a, D.DType):
            dts.append(a)
        elif isinstance(a, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
            scalars.append(a)
        else:
            raise DTypeError(f"result_type takes arrays, dtypes and scalars, got {a!r}")
    if not dts:
        raise DTypeError("result_type needs at least one array or dtype")
    out = dts[0]
    for d in dts[1:]:
        out = promote(out, d)
    for s in scalars:
        if not scalar_fits(out, s):
            out = D.result_type([out], scalars=[s]) if not isinstance(s, complex) else out
    return out


def can_cast(from_, to) -> builtins.bool:
    """Whether the standard's promotion rules allow casting ``from_`` to ``to``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.can_cast(xp.int8, xp.int32), xp.can_cast(xp.float64, xp.float32)
    (True, False)
    """
    f = from_.dtype if isinstance(from_, ShardedTensor) else _as_dtype(from_)
    to = _as_dtype(to)
    kf, kt = f.np.kind, to.np.kind
    if kf == "b":
        return kt == "b"
    if kt == "b":
        return False
    if kf in "iu" and kt in "iu":
        return np.can_cast(f.np, to.np, "safe")
    if kf in "iu":  # mixed kinds: not part of the standard's promotion graph
        return False
    if kf == "f" and kt == "c":
        return to.np.itemsize >= 2 * f.np.itemsize
    return kf == kt and to.np.itemsize >= f.np.itemsize


@dataclass(frozen=True)
class finfo_object:
    """Limits of a floating dtype (the standard's ``finfo`` result)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: D.DType


@dataclass(frozen=True)
class iinfo_object:
    """Limits of an integer dtype (the standard's ``iinfo`` result)."""

    bits: int
    max: int
    min: int
    dtype: D.DType


def finfo(type) -> finfo_object:
    """Machine limits of a floating dtype (or of an array's dtype).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.finfo(xp.float32).bits, xp.finfo(xp.float64).dtype
    (32, sharded.float64)
    """
    dt = type.dtype if isinstance(type, ShardedTensor) else _as_dtype(type)
    if dt.np.kind not in "fc":
        raise DTypeError(f"finfo() needs a floating dtype, got {dt.name}")
    f = np.finfo(dt.np)
    real = D.from_numpy_dtype(f.dtype) if dt.np.kind == "c" else dt
    return finfo_object(
        builtins.int(f.bits),
        builtins.float(f.eps),
        builtins.float(f.max),
        builtins.float(f.min),
        builtins.float(f.tiny),
        real,
    )


def iinfo(type) -> iinfo_object:
    """Limits of an integer dtype (or of an array's dtype).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.iinfo(xp.int8).min, xp.iinfo(xp.uint8).max
    (-128, 255)
    """
    dt = type.dtype if isinstance(type, ShardedTensor) else _as_dtype(type)
    if dt.np.kind not in "iu":
        raise DTypeError(f"iinfo() needs an integer dtype, got {dt.name}")
    i = np.iinfo(dt.np)
    return iinfo_object(builtins.int(i.bits), builtins.int(i.max), builtins.int(i.min), dt)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (a new array unless ``copy=False`` and nothing changes).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.astype(xp.asarray([1.7, -2.5]), xp.int32).tolist()
    [1, -2]
    """
    dtype = _as_dtype(dtype)
    if device is not None and device != x.device:
        x = x.to(device)
    if x.dtype == dtype:
        return x.clone() if copy else x
    return x.to(dtype)
