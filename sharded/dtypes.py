"""Dtypes and torch's type-promotion rules.

A dtype is a small immutable object (``st.float32``) wrapping a NumPy dtype. Promotion follows
torch, not NumPy: a Python scalar or a 0-d tensor only changes the result's *category*
(bool < integer < floating < complex), never its width, so ``int32 tensor + 5`` stays int32 and
``int64 tensor + 2.5`` becomes the default float dtype (float32). Complex dtypes are
``complex64`` (``st.cfloat``) and ``complex128`` (``st.cdouble``); as in torch, a complex type
meeting a wider float widens (``complex64, float64 -> complex128``) and a Python complex takes
the complex counterpart of the default float (``complex64`` under float32).

``bfloat16`` is stored as ``ml_dtypes.bfloat16``. NumPy files that extension type under kind
``'V'``, so every floating test here goes through :func:`kind`, which reports it as ``'f'``.
As in torch, ``bfloat16`` meeting ``float16`` gives ``float32``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .errors import DTypeError, ValueOverflow


@dataclass(frozen=True)
class DType:
    """A tensor element type, e.g. ``st.float32``.

    Examples
    --------
    >>> import sharded as st
    >>> st.float32.itemsize, st.float32.is_floating_point
    (4, True)
    """

    name: str

    @property
    def np(self) -> np.dtype:
        """The NumPy dtype that stores this type."""
        return _NP[self.name]

    @property
    def np_str(self) -> str:
        """The NumPy dtype as a string ``np.dtype`` reads back: its ``str`` (``'<f4'``), but
        the name for bfloat16, whose ``str`` (``'<V2'``) would read back as raw bytes."""
        return self.name if self.name == "bfloat16" else self.np.str

    @property
    def itemsize(self) -> int:
        return self.np.itemsize

    @property
    def kind(self) -> str:
        """The NumPy kind of the type (``'f'`` for bfloat16 too, see :func:`kind`)."""
        return kind(self.np)

    @property
    def is_floating_point(self) -> bool:
        """True for real floating types only (complex is not floating point, as in torch)."""
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_signed(self) -> bool:
        return self.kind in "ifc"

    def __repr__(self) -> str:
        return f"sharded.{self.name}"


_NAMES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
BF16_NP = np.dtype(ml_dtypes.bfloat16)
_NP = {n: BF16_NP if n == "bfloat16" else np.dtype(n) for n in _NAMES}
_BY_NP = {v: DType(k) for k, v in _NP.items()}

bool_ = DType("bool")
uint8, int8, int16 = DType("uint8"), DType("int8"), DType("int16")
int32, int64 = DType("int32"), DType("int64")
float16, float32, float64 = DType("float16"), DType("float32"), DType("float64")
bfloat16 = DType("bfloat16")
complex64, complex128 = DType("complex64"), DType("complex128")
ALL = tuple(DType(n) for n in _NAMES)

_default_float = float32


def get_default_dtype() -> DType:
    """The dtype of floating tensors created from Python floats (float32 unless changed).

    Examples
    --------
    >>> import sharded as st
    >>> st.get_default_dtype()
    sharded.float32
    """
    return _default_float


def set_default_dtype(dt) -> None:
    """Set the default floating dtype, like ``torch.set_default_dtype``.

    Examples
    --------
    >>> import sharded as st
    >>> st.set_default_dtype(st.float64); st.set_default_dtype(st.float32)
    """
    global _default_float
    d = as_dtype(dt)
    if not d.is_floating_point:
        raise DTypeError(f"default dtype must be floating point, got {d}")
    _default_float = d


def as_dtype(dt) -> DType:
    """Convert ``st.float32``, ``"float32"``, ``np.float32``, ``float`` ... to a :class:`DType`.

    Examples
    --------
    >>> import sharded as st
    >>> st.dtypes.as_dtype("int8")
    sharded.int8
    """
    if isinstance(dt, DType):
        return dt
    if dt is builtins.float:
        return _default_float
    if dt is builtins.int:
        return int64
    if dt is builtins.bool:
        return bool_
    if dt is builtins.complex:
        return default_complex()
    try:
        npdt = np.dtype(dt)
    except TypeError:
        raise DTypeError(f"unsupported dtype {dt!r}; supported: {', '.join(_NAMES)}") from None
    return from_numpy_dtype(npdt)


def kind(npdt) -> str:
    """NumPy's kind letter of ``npdt`` (a NumPy dtype or array), with ``'f'`` for bfloat16
    (NumPy files extension types under ``'V'``).

    Examples
    --------
    >>> import sharded as st
    >>> kind(st.bfloat16.np), kind(np.dtype("int8"))
    ('f', 'i')
    """
    npdt = getattr(npdt, "dtype", npdt)
    return "f" if npdt == BF16_NP else npdt.kind


def is_bf16(a) -> bool:
    """Whether ``a`` (an array, NumPy dtype or :class:`DType`) is bfloat16."""
    dt = a.np if isinstance(a, DType) else getattr(a, "dtype", a)
    return dt == BF16_NP


def finfo_np(npdt):
    """NumPy's ``finfo`` of ``npdt``, bfloat16 included (``ml_dtypes.finfo``)."""
    return ml_dtypes.finfo(npdt) if is_bf16(npdt) else np.finfo(npdt)


def category(dt: DType) -> int:
    """0 for bool, 1 for integers, 2 for floating point, 3 for complex: the order promotion
    respects."""
    return _CATEGORY[dt.kind]


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def default_complex() -> DType:
    """The complex counterpart of the default float: complex64 under float32, else complex128.

    Examples
    --------
    >>> import sharded as st
    >>> st.dtypes.default_complex()
    sharded.complex64
    """
    return complex128 if _default_float == float64 else complex64


def to_complex(dt: DType) -> DType:
    """The complex type holding ``dt``'s values: float64 -> complex128, float16/32 ->
    complex64, other reals -> the default complex, complex unchanged.

    Examples
    --------
    >>> import sharded as st
    >>> st.dtypes.to_complex(st.float64), st.dtypes.to_complex(st.int32)
    (sharded.complex128, sharded.complex64)
    """
    if dt.is_complex:
        return dt
    if dt.is_floating_point:
        return complex128 if dt == float64 else complex64
    return default_complex()


def to_real(dt: DType) -> DType:
    """The real type of a complex type's parts (complex64 -> float32); reals unchanged.

    Examples
    --------
    >>> import sharded as st
    >>> st.dtypes.to_real(st.complex128)
    sharded.float64
    """
    if not dt.is_complex:
        return dt
    return float64 if dt == complex128 else float32


def promote_types(a: DType, b: DType) -> DType:
    """Promotion of two tensor dtypes, as ``torch.promote_types``.

    Within a category the wider type wins (``uint8, int8 -> int16``); across categories the
    higher category's type wins unchanged (``int64, float16 -> float16``), unlike NumPy.

    Examples
    --------
    >>> import sharded as st
    >>> st.promote_types(st.uint8, st.int8), st.promote_types(st.int64, st.float32)
    (sharded.int16, sharded.float32)
    """
    ca, cb = category(a), category(b)
    if a == b:
        return a
    if bfloat16 in (a, b) and ca >= 2 and cb >= 2:
        # torch: bfloat16 with any other float or complex promotes as float32 would
        # (bfloat16, float16 -> float32)
        return promote_types(float32 if a == bfloat16 else a, float32 if b == bfloat16 else b)
    if ca == 3 and cb == 2 or ca == 2 and cb == 3:
        # torch keeps the float's precision: complex64 with float64 -> complex128
        return _BY_NP[np.promote_types(a.np, b.np)]
    if ca != cb:
        return a if ca > cb else b
    return _BY_NP[np.promote_types(a.np, b.np)]


def scalar_dtype(v) -> DType:
    """The dtype torch gives a Python scalar: bool, int64 or the default float."""
    if is_bf16(v):  # an ml_dtypes scalar is no np.floating
        return bfloat16
    if isinstance(v, (builtins.bool, np.bool_)):
        return bool_
    if isinstance(v, (builtins.int, np.integer)):
        return int64
    if isinstance(v, (builtins.float, np.floating)):
        return _default_float
    if isinstance(v, (builtins.complex, np.complexfloating)):
        return default_complex()
    raise DTypeError(f"unsupported scalar {v!r} of type {type(v).__name__}")


def _combine(higher, lower):
    """torch's combine_categories: ``lower`` matters only where it raises the category."""
    if higher is None:
        return lower
    if lower is None or category(higher) >= category(lower):
        return higher
    if category(lower) == 3 and category(higher) == 2:
        return to_complex(higher)  # float64 tensor + 1j -> complex128, as torch
    return lower if category(lower) >= 2 else promote_types(higher, lower)


def _promote_all(dts):
    out = None
    for d in dts:
        out = d if out is None else promote_types(out, d)
    return out


def result_type(tensors=(), zero_dim=(), scalars=()) -> DType:
    """torch's result type of an op over dimensioned tensors, 0-d tensors and Python scalars.

    Dimensioned tensors decide; 0-d tensors and then scalars only count where they raise the
    category (bool < integer < floating).

    Examples
    --------
    >>> import sharded as st
    >>> st.dtypes.result_type([st.int32], scalars=[2.5]), st.dtypes.result_type([st.int8], [], [7])
    (sharded.float32, sharded.int8)
    """
    wrapped = _promote_all([scalar_dtype(s) for s in scalars])
    out = _combine(_promote_all(tensors), _combine(_promote_all(zero_dim), wrapped))
    if out is None:
        raise DTypeError("result_type needs at least one operand")
    return out


def result_type_of(tensor, other) -> DType:
    """``torch.result_type``: the dtype an arithmetic op on ``tensor`` and ``other`` (tensors
    or Python numbers) gives.

    Examples
    --------
    >>> import sharded as st
    >>> st.result_type(st.tensor([1, 2]), 1.0), st.result_type(st.tensor([1], dtype=st.uint8), -1)
    (sharded.float32, sharded.uint8)
    """
    groups = ([], [], [])  # dimensioned tensors, 0-d tensors, Python scalars
    for v in (tensor, other):
        if hasattr(v, "dtype") and hasattr(v, "ndim"):
            groups[0 if v.ndim else 1].append(v.dtype)
        else:
            groups[2].append(v)
    return result_type(*groups)


def can_cast(from_, to) -> bool:
    """``torch.can_cast``: whether a same-kind cast is allowed (no float to integer, complex
    to real, or non-bool to bool; any width within a kind).

    Examples
    --------
    >>> import sharded as st
    >>> st.can_cast(st.float64, st.int32), st.can_cast(st.int64, st.int8)
    (False, True)
    """
    return category(as_dtype(from_)) <= category(as_dtype(to))


def from_numpy_dtype(npdt) -> DType:
    """The :class:`DType` of a NumPy dtype; raises :class:`DTypeError` for unsupported ones."""
    npdt = np.dtype(npdt)
    if npdt not in _BY_NP:
        raise DTypeError(f"unsupported dtype {npdt}; supported: {', '.join(_NAMES)}")
    return _BY_NP[npdt]


def infer_dtype(data) -> DType:
    """The dtype ``st.tensor(data)`` gives: NumPy arrays keep theirs; Python floats -> default."""
    if isinstance(data, (np.ndarray, np.generic)):  # np.float64(2.0) stays float64, as torch
        return from_numpy_dtype(data.dtype)
    arr = np.asarray(data)
    if arr.dtype.kind in "iufc" and arr.size and isinstance(data, (list, tuple)):
        leaves = _numpy_leaves(data)
        if leaves is not None:  # torch promotes NumPy scalars in a list as the dtypes they are
            return leaves
    if arr.dtype.kind == "c":
        return default_complex()
    if arr.dtype.kind == "f":
        return _default_float
    if arr.dtype.kind in "iu":
        return (
            int64
            if arr.dtype.kind == "i" or arr.dtype.itemsize == 8
            else from_numpy_dtype(arr.dtype)
        )
    if arr.dtype.kind == "b":
        return bool_
    raise DTypeError(f"cannot infer a dtype for data of NumPy kind {arr.dtype}")


def _numpy_leaves(data):
    """The promoted dtype of nested ``data`` whose leaves include NumPy scalars or arrays
    (Python numbers count as their default dtypes); None if it has none."""
    out, found, todo = None, False, [data]
    while todo:
        v = todo.pop()
        if isinstance(v, (list, tuple)):
            todo.extend(v)
            continue
        found |= isinstance(v, (np.ndarray, np.generic))
        dt = from_numpy_dtype(v.dtype) if hasattr(v, "dtype") else scalar_dtype(v)
        out = dt if out is None else promote_types(out, dt)
    return out if found else None


# ------------------------------------------------------------ Python ints outside a dtype
# torch converts a Python int to an integer dtype the C way, modulo 2**bits. Two rules:
# an operand of a binary op (``uint8 > -1``, ``uint8 * -3``) wraps whenever it fits 64 bits;
# a fill value, a clamp bound or tensor data must first pass c10's ``overflows`` check: a
# signed dtype takes its own range, an unsigned one ``[-max, max]`` (``-3`` -> 253 for uint8).
def _is_int(v) -> bool:
    return isinstance(v, (builtins.int, np.integer)) and not isinstance(
        v, (builtins.bool, np.bool_)
    )


def wrap_int(v, dt: DType):
    """``v`` as torch's binary ops see it against a ``dt`` operand: a Python int wrapped into
    the integer dtype ``dt`` (other values and dtypes unchanged).

    Raises :class:`ValueOverflow` for ints beyond 64 bits, as torch.

    Examples
    --------
    >>> import sharded as st
    >>> wrap_int(-1, st.uint8), wrap_int(300, st.int8), wrap_int(2.5, st.uint8)
    (255, 44, 2.5)
    """
    if not _is_int(v) or dt.np.kind not in "iu":
        return v
    v = builtins.int(v)
    info = np.iinfo(dt.np)
    lo, hi = builtins.int(info.min), builtins.int(info.max)
    if lo <= v <= hi:
        return v
    if not -(2**63) <= v < 2**64:
        raise ValueOverflow(f"Python int {v} is too big to convert to {dt.name}")
    return (v - lo) % (hi - lo + 1) + lo


def check_int(v, dt: DType):
    """``v`` converted as torch converts a fill value, clamp bound, written scalar or tensor
    element into the integer dtype ``dt``: ints outside c10's ``overflows`` range (an unsigned
    type takes ``-max..max``) raise :class:`ValueOverflow`, the rest wrap; a float must be
    finite and inside the type's own range (it is truncated later). Other values and dtypes
    pass unchanged.

    Examples
    --------
    >>> import sharded as st
    >>> check_int(-3, st.uint8), check_int(-128, st.int8), check_int(2.5, st.uint8)
    (253, -128, 2.5)
    """
    if dt.np.kind not in "iu" or isinstance(v, (builtins.bool, np.bool_)):
        return v
    info = np.iinfo(dt.np)
    lo, hi = builtins.int(info.min), builtins.int(info.max)
    if isinstance(v, (builtins.float, np.floating)):
        if not (np.isfinite(v) and lo <= builtins.float(v) <= hi):
            raise ValueOverflow(
                f"value {v!r} cannot be converted to type {dt.name} without overflow"
            )
        return v
    if not _is_int(v):
        return v
    v = builtins.int(v)
    if not ((-hi <= v <= hi) if lo == 0 else (lo <= v <= hi)):
        raise ValueOverflow(f"value {v} cannot be converted to type {dt.name} without overflow")
    return wrap_int(v, dt)


def check_fill(v, dt: DType):
    """``v`` as torch checks a fill value for ``dt``: :func:`check_int` for integer dtypes;
    for floating and complex ones a finite number beyond the type's range (``1e300`` for
    float32, ``70000`` for float16) or an int beyond 64 bits raises :class:`ValueOverflow`
    (inf and NaN pass).

    Examples
    --------
    >>> import sharded as st
    >>> check_fill(3.5, st.float16), check_fill(float("inf"), st.float32)
    (3.5, inf)
    """
    if dt.kind not in "fc" or isinstance(v, (builtins.bool, np.bool_)):
        return check_int(v, dt)
    if _is_int(v) and not -(2**63) <= v < 2**64:
        raise ValueOverflow(f"Python int {v} is too big to convert to {dt.name}")
    if not isinstance(v, (builtins.int, builtins.float, builtins.complex, np.number)):
        return v
    big = builtins.float(finfo_np(dt.np).max)
    parts = (v.real, v.imag) if isinstance(v, (builtins.complex, np.complexfloating)) else (v,)
    if any(np.isfinite(p) and abs(builtins.float(p)) > big for p in parts):
        raise ValueOverflow(f"value {v!r} cannot be converted to type {dt.name} without overflow")
    return v


def int_array(data, dt: DType):
    """Nested Python ints ``data`` as a NumPy array of integer dtype ``dt``, each element
    checked and wrapped by :func:`check_int` (NumPy itself refuses ``-3`` for uint8); other
    data is returned unchanged.

    Examples
    --------
    >>> import sharded as st
    >>> int_array([-1, 7], st.uint8).tolist()
    [255, 7]
    """
    if dt.np.kind not in "iu" or isinstance(data, np.ndarray):
        return data
    try:
        a = np.asarray(data)
    except (OverflowError, ValueError):
        return data
    if a.dtype.kind not in "iu" or a.size == 0:
        return data
    info = np.iinfo(dt.np)
    lo, hi = builtins.int(info.min), builtins.int(info.max)
    bad = (a < -hi) | (a > hi) if lo == 0 else (a < lo) | (a > hi)
    if bad.any():
        v = builtins.int(a[bad].flat[0])
        raise ValueOverflow(f"value {v} cannot be converted to type {dt.name} without overflow")
    return a.astype(dt.np)


# ------------------------------------------------------------------------ type limits
class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo`` (default: the default dtype).

    Examples
    --------
    >>> import sharded as st
    >>> f = st.finfo(st.float16)
    >>> f.bits, f.max, f.eps, f.dtype
    (16, 65504.0, 0.0009765625, 'float16')
    """

    def __init__(self, type=None):
        dt = get_default_dtype() if type is None else to_real(as_dtype(type))
        if not dt.is_floating_point:
            raise DTypeError(
                f"finfo() requires a floating point input type, got {dt.name}; use iinfo"
            )
        f = finfo_np(dt.np)
        self.bits, self.dtype = builtins.int(f.bits), dt.name
        self.eps, self.resolution = builtins.float(f.eps), 10.0 ** -builtins.int(f.precision)
        self.max, self.min = builtins.float(f.max), builtins.float(f.min)
        self.tiny = self.smallest_normal = builtins.float(f.tiny)

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype, as ``torch.iinfo`` (bool is refused, as in torch).

    Examples
    --------
    >>> import sharded as st
    >>> i = st.iinfo(st.uint8)
    >>> i.bits, i.min, i.max, i.dtype
    (8, 0, 255, 'uint8')
    """

    def __init__(self, type):
        dt = as_dtype(type)
        if dt.np.kind not in "iu":
            raise DTypeError(
                f"iinfo() requires an integer input type, got {dt.name}"
                + ("" if dt.name == "bool" else "; use finfo")
            )
        i = np.iinfo(dt.np)
        self.bits, self.dtype = builtins.int(i.bits), dt.name
        self.min, self.max = builtins.int(i.min), builtins.int(i.max)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
