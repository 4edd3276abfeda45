"""Statistical, utility and linear-algebra functions of the Array API namespace.

Reductions take ``axis`` as an int, a tuple or None. ``axis=()`` reduces nothing (torch reads
an empty dim list as "every dim"), so it returns a copy in the result dtype. Integer sums and
products accumulate in int64 (the standard's default integer), floats in their own dtype.
"""

from __future__ import annotations

from .. import dtypes as D
from ..errors import ArgumentError, DimError
from ._dtypes import _as_dtype, promote
from ._elementwise import conj, prepare
from ._manip import _axes
from ._st import ST


def _acc_dtype(x, dtype):
    if dtype is not None:
        return _as_dtype(dtype)
    k = x.dtype.np.kind
    return D.int64 if k in "iub" else x.dtype


def _reduce(fn, x, axis, keepdims, out_dtype=None, **kw):
    """``fn`` over ``axis``; ``out_dtype`` is what ``axis=()`` (no reduction) casts to."""
    axes = _axes(axis, x.ndim)
    if x.ndim and not axes:
        return x.to(out_dtype) if out_dtype not in (None, x.dtype) else x.clone()
    return fn(x, axes if x.ndim else None, keepdims, **kw)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """Sum over ``axis`` (ints accumulate in int64).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.sum(xp.asarray([[1, 2], [3, 4]], dtype=xp.int8), axis=0).tolist()
    [4, 6]
    """
    dt = _acc_dtype(x, dtype)
    return _reduce(ST.sum, x, axis, keepdims, dt, dtype=dt)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product over ``axis`` (ints accumulate in int64).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> int(xp.prod(xp.asarray([2, 3, 4])))
    24
    """
    dt = _acc_dtype(x, dtype)
    return _reduce(ST.prod, x, axis, keepdims, dt, dtype=dt)


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean over ``axis`` (NaN for an empty reduction).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> float(xp.mean(xp.asarray([1.0, 2.0])))
    1.5
    """
    return _reduce(ST.mean, x, axis, keepdims)


def max(x, /, *, axis=None, keepdims=False):
    """Maximum over ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.max(xp.asarray([[1, 5], [3, 2]]), axis=1).tolist()
    [5, 3]
    """
    return _reduce(ST.amax, x, axis, keepdims) if x.ndim else x.clone()


def min(x, /, *, axis=None, keepdims=False):
    """Minimum over ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.min(xp.asarray([[1, 5], [3, 2]]), axis=1).tolist()
    [1, 2]
    """
    return _reduce(ST.amin, x, axis, keepdims) if x.ndim else x.clone()


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation over ``axis`` with ``correction`` degrees of freedom removed.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> float(xp.std(xp.asarray([1.0, 3.0])))
    1.0
    """
    return _reduce(_corrected(ST.std), x, axis, keepdims, correction=correction)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance over ``axis`` with ``correction`` degrees of freedom removed.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> float(xp.var(xp.asarray([1.0, 3.0]), correction=1))
    2.0
    """
    return _reduce(_corrected(ST.var), x, axis, keepdims, correction=correction)


def _corrected(fn):
    def run(x, dims, keepdims, correction):
        return fn(x, dims, keepdim=keepdims, correction=correction)

    return run


def _cumulative(fn, x, axis, dtype, include_initial, initial):
    if axis is None:
        if x.ndim > 1:
            raise ArgumentError(f"axis is required for an array of {x.ndim} dims")
        axis = 0
    if x.ndim == 0:
        raise DimError("cumulative functions need an array of at least one dim")
    dt = _acc_dtype(x, dtype)
    axis = axis % x.ndim
    out = fn(x.to(dt) if dt != x.dtype else x, axis, dtype=dt)  # torch's own: int64 for ints
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        out = ST.cat([ST.full(tuple(shape), initial, dtype=dt, device=x.device), out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sum along ``axis`` (a leading 0 with ``include_initial=True``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.cumulative_sum(xp.asarray([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    return _cumulative(ST.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running product along ``axis`` (a leading 1 with ``include_initial=True``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.cumulative_prod(xp.asarray([1, 2, 3])).tolist()
    [1, 2, 6]
    """
    return _cumulative(ST.cumprod, x, axis, dtype, include_initial, 1)


def all(x, /, *, axis=None, keepdims=False):
    """Whether every element over ``axis`` is true.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> bool(xp.all(xp.asarray([1, 0])))
    False
    """
    return _logical(ST.all, x, axis, keepdims)


def any(x, /, *, axis=None, keepdims=False):
    """Whether any element over ``axis`` is true.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> bool(xp.any(xp.asarray([1, 0])))
    True
    """
    return _logical(ST.any, x, axis, keepdims)


def _logical(fn, x, axis, keepdims):
    axes = _axes(axis, x.ndim)
    b = x if x.dtype == D.bool_ else ST.ne(x, 0)
    if x.ndim and not axes:
        return b.clone() if b is x else b
    return fn(b, axes if x.ndim else None, keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.diff(xp.asarray([1, 4, 9])).tolist()
    [3, 5]
    """
    return ST.diff(x, n, axis, prepend, append)


# ------------------------------------------------------------------ linear algebra
def matmul(x1, x2, /):
    """Matrix product (NumPy's rules for 1-D operands and batch dims).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.matmul(xp.asarray([[1, 2]]), xp.asarray([[3], [4]])).tolist()
    [[11]]
    """
    x1, x2 = _same(x1, x2)
    return ST.matmul(x1, x2)


def _same(x1, x2):
    if x1.dtype != x2.dtype:
        dt = promote(x1.dtype, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    return x1, x2


def matrix_transpose(x, /):
    """``x`` with its last two dims swapped.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.matrix_transpose(xp.ones((2, 3))).shape
    sharded.Size([3, 2])
    """
    if x.ndim < 2:
        raise DimError(f"matrix_transpose needs at least 2 dims, got {x.ndim}")
    return x.mT


def tensordot(x1, x2, /, *, axes=2):
    """Sum of products over ``axes`` (a count of trailing/leading dims, or two lists).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> int(xp.tensordot(xp.asarray([1, 2]), xp.asarray([3, 4]), axes=1))
    11
    """
    x1, x2 = _same(x1, x2)
    if not isinstance(axes, int):
        axes = [list(a) for a in axes]
    return ST.tensordot(x1, x2, axes)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product of vectors along ``axis`` (broadcasting the other dims).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.vecdot(xp.asarray([[1, 2], [3, 4]]), xp.asarray([1, 1])).tolist()
    [3, 7]
    """
    x1, x2 = prepare(x1, x2)
    x1, x2 = _same(x1, x2)
    n = builtins_max(x1.ndim, x2.ndim)
    if not -n <= axis < 0 and not (axis >= 0 and axis < n):
        raise DimError(f"axis {axis} is out of range for arrays of {n} dims")
    a = axis if axis < 0 else axis - n
    if x1.shape[a] != x2.shape[a]:
        raise ArgumentError(f"vecdot: sizes {x1.shape[a]} and {x2.shape[a]} along axis {axis}")
    prod_ = (conj(x1) if x1.dtype.np.kind == "c" else x1) * x2
    return ST.sum(prod_, a, dtype=prod_.dtype)


def builtins_max(a, b):
    return a if a > b else b


__all__ = [
    "sum", "prod", "mean", "max", "min", "std", "var", "cumulative_sum", "cumulative_prod",
    "all", "any", "diff", "matmul", "matrix_transpose", "tensordot", "vecdot",
]  # fmt: skip
