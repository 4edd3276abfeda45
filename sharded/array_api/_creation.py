"""Creation functions of the Array API namespace (``asarray``, ``arange``, ``eye`` ...).

``device=None`` means sharded's default placement (``"cpu"`` shards, one per worker); the
default floating dtype is sharded's (``st.get_default_dtype()``, float32 unless changed), and
``__array_namespace_info__().default_dtypes()`` reports it.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import dtypes as D
from ..errors import ArgumentError, DTypeError
from ..tensor import ShardedTensor
from ._dtypes import _as_dtype, astype
from ._st import ST

_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _dev(device):
    return "cpu" if device is None else device


def _shape(shape) -> tuple:
    return (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)


def _scalar_dtype(v) -> D.DType:
    if isinstance(v, builtins.bool):
        return D.bool_
    if isinstance(v, builtins.int):
        return D.int64
    if isinstance(v, builtins.float):
        return D.get_default_dtype()
    return getattr(D, "complex128" if D.get_default_dtype() == D.float64 else "complex64")


def _nested_dtype(obj):
    """The dtype the standard gives nested Python scalars: the highest kind present."""
    best = None
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, (list, tuple)):
            stack.extend(o)
            continue
        d = o.dtype if isinstance(o, ShardedTensor) else _scalar_dtype(o)
        best = d if best is None else D.promote_types(best, d)
    return best


def _to_nested(obj):
    if isinstance(obj, (list, tuple)):
        return [_to_nested(o) for o in obj]
    return obj.item() if isinstance(obj, ShardedTensor) else obj


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """An array from an array, Python scalars, nested sequences or a buffer.

    ``copy=False`` refuses (``ValueError``) where a copy would be needed; ``copy=None`` shares
    ``obj``'s shards when its dtype and device already fit.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.asarray([[1, 2], [3, 4]], dtype=xp.float64).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    dt = None if dtype is None else _as_dtype(dtype)
    if isinstance(obj, ShardedTensor):
        same = (dt is None or dt == obj.dtype) and (device is None or device == obj.device)
        if same and copy is not True:
            return obj
        if copy is False:
            raise ArgumentError(
                f"asarray(copy=False) cannot convert {obj.dtype.name} on {obj.device} to "
                f"{dt.name if dt else obj.dtype.name} on {device or obj.device} without a copy"
            )
        return astype(obj, dt or obj.dtype, copy=True, device=device)
    if copy is False:
        raise ArgumentError(
            f"asarray(copy=False) cannot share memory with a {type(obj).__name__}: sharded "
            "arrays live in worker actors"
        )
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__"):
        a = np.asarray(obj)
        if dt is not None:
            a = a.astype(dt.np)
        return ST.from_numpy(np.array(a, copy=True), device=_dev(device))
    if not isinstance(obj, (list, tuple) + _SCALARS) and hasattr(obj, "__buffer__"):
        return ST.from_numpy(np.array(memoryview(obj)), device=_dev(device))
    if dt is None:
        dt = _nested_dtype(obj)
        if dt is None:  # an empty sequence
            dt = D.get_default_dtype()
    data = _to_nested(obj)
    if dt.np.kind in "iu":
        _check_ints(data, dt)
    return ST.tensor(data, dtype=dt, device=_dev(device))


def _check_ints(data, dt):
    if isinstance(data, list):
        for d in data:
            _check_ints(d, dt)
    elif isinstance(data, builtins.float) and not math.isfinite(data):
        raise DTypeError(f"{data} cannot be stored in {dt.name}")


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in ``[start, stop)``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.arange(1, 7, 2).tolist(), xp.arange(3.0).dtype == xp.float32
    ([1, 3, 5], True)
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ArgumentError("arange step must be nonzero, got 0")
    dt = None if dtype is None else _as_dtype(dtype)
    n = builtins.max(0, math.ceil((stop - start) / step))
    if dt is None:
        ints = builtins.all(isinstance(v, builtins.int) for v in (start, stop, step))
        dt = D.int64 if ints else D.get_default_dtype()
    if n == 0:
        return ST.zeros(0, dtype=dt, device=_dev(device))
    if dt.np.kind in "iu":
        return ST.arange(start, stop, step, dtype=dt, device=_dev(device))
    # start + i * step in float64, then cast: the standard's element rule, and the length
    # above (torch may round the length differently)
    i = ST.arange(0, n, 1, dtype=D.float64, device=_dev(device))
    return (i * float(step) + float(start)).to(dt)


def empty(shape, *, dtype=None, device=None):
    """An uninitialised array (zeros here).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.empty((2, 3)).shape
    sharded.Size([2, 3])
    """
    return zeros(shape, dtype=dtype, device=device)


def zeros(shape, *, dtype=None, device=None):
    """An array of zeros.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.zeros(3, dtype=xp.int8).tolist()
    [0, 0, 0]
    """
    return full(shape, 0, dtype=dtype or D.get_default_dtype(), device=device)


def ones(shape, *, dtype=None, device=None):
    """An array of ones.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.ones((2,)).tolist()
    [1.0, 1.0]
    """
    return full(shape, 1, dtype=dtype or D.get_default_dtype(), device=device)


def full(shape, fill_value, *, dtype=None, device=None):
    """An array filled with ``fill_value`` (dtype from the value when not given).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.full((2,), True).tolist(), xp.full(2, 7).dtype
    ([True, True], sharded.int64)
    """
    if isinstance(fill_value, ShardedTensor):
        fill_value = fill_value.item()
    dt = _scalar_dtype(fill_value) if dtype is None else _as_dtype(dtype)
    return ST.full(_shape(shape), fill_value, dtype=dt, device=_dev(device))


def _like(x, value, dtype, device):
    return full(x.shape, value, dtype=dtype or x.dtype, device=device or x.device)


def empty_like(x, /, *, dtype=None, device=None):
    """An uninitialised array shaped like ``x`` (zeros here).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.empty_like(xp.ones(2)).shape
    sharded.Size([2])
    """
    return _like(x, 0, dtype, device)


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros shaped like ``x``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.zeros_like(xp.asarray([1, 2])).tolist()
    [0, 0]
    """
    return _like(x, 0, dtype, device)


def ones_like(x, /, *, dtype=None, device=None):
    """Ones shaped like ``x``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.ones_like(xp.asarray([1, 2])).tolist()
    [1, 1]
    """
    return _like(x, 1, dtype, device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """``fill_value`` shaped like ``x`` (``x``'s dtype unless given).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.full_like(xp.asarray([1, 2]), 9).tolist()
    [9, 9]
    """
    return _like(x, fill_value, dtype, device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """Ones on the ``k``-th diagonal, zeros elsewhere.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.eye(2, 3, k=1, dtype=xp.int64).tolist()
    [[0, 1, 0], [0, 0, 1]]
    """
    m = n_rows if n_cols is None else n_cols
    dt = D.get_default_dtype() if dtype is None else _as_dtype(dtype)
    rows = ST.arange(n_rows, dtype=D.int64, device=_dev(device)).reshape(n_rows, 1)
    cols = ST.arange(m, dtype=D.int64, device=_dev(device)).reshape(1, m)
    # a diagonal past either edge matches nothing: clip k, which may exceed int64
    k = builtins.max(-n_rows, builtins.min(k, m))
    return ((rows + k) == cols).to(dt)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    dt = D.get_default_dtype() if dtype is None else _as_dtype(dtype)
    if num == 0:
        return zeros(0, dtype=dt, device=device)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div else 0.0
    i = ST.arange(0, num, 1, dtype=D.float64, device=_dev(device))
    out = i * float(step) + float(start)
    if endpoint and num > 1:
        out[-1] = float(stop)
    return out.to(dt)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids from 1-D arrays (``indexing="xy"`` or ``"ij"``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> [g.shape for g in xp.meshgrid(xp.arange(2), xp.arange(3))]
    [sharded.Size([3, 2]), sharded.Size([3, 2])]
    """
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return []
    return list(ST.meshgrid(*arrays, indexing=indexing))


def tril(x, /, *, k=0):
    """The lower triangle of the last two dims (below the ``k``-th diagonal, included).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.tril(xp.ones((2, 2), dtype=xp.int64)).tolist()
    [[1, 0], [1, 1]]
    """
    return ST.tril(x, k)


def triu(x, /, *, k=0):
    """The upper triangle of the last two dims (above the ``k``-th diagonal, included).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.triu(xp.ones((2, 2), dtype=xp.int64)).tolist()
    [[1, 1], [0, 1]]
    """
    return ST.triu(x, k)


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from any object with ``__dlpack__`` (its data is copied into the shards).

    Examples
    --------
    >>> import numpy as np
    >>> from sharded import array_api as xp
    >>> xp.from_dlpack(np.arange(3)).tolist()
    [0, 1, 2]
    """
    if isinstance(x, ShardedTensor):
        return (
            x
            if copy is not True and device in (None, x.device)
            else x.to_device(device or x.device).clone()
        )
    if copy is False:
        raise ArgumentError("from_dlpack(copy=False): sharded arrays cannot share foreign memory")
    a = np.from_dlpack(x)
    return ST.from_numpy(np.array(a, copy=True), device=_dev(device))


__all__ = [
    "asarray", "arange", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
    "ones_like", "full_like", "eye", "linspace", "meshgrid", "tril", "triu", "from_dlpack",
]  # fmt: skip
