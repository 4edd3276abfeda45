"""Per-shard kernels: pure functions ``f(xp, *arrays, **params)`` run inside workers.

No Ray and no driver state here; ``xp`` is NumPy or CuPy, so every kernel runs on CPU and GPU
shards alike. Commands name kernels by string (cheap to ship in batches); :data:`KERNELS` maps
the names to the functions.
"""

from __future__ import annotations

import numpy as np

from .core.registry import kernel as _register


def kernel(name: str, pooled=False):
    """Register a kernel under ``name``."""
    return _register(name=name, pooled=pooled)


def _cast(xp, a, dtype):
    if dtype is None or not hasattr(a, "dtype") or a.dtype == dtype:
        return a
    return a.astype(dtype)


# ------------------------------------------------------------------------------ elementwise
@kernel("ufunc", pooled=True)
def ufunc(xp, *arrays, fn, cast=None, out=None, alloc=None):
    """``xp.<fn>(*arrays)`` computed in dtype ``cast`` and returned as dtype ``out``.

    Python scalars stay Python scalars, so NumPy's weak scalar typing keeps the array's dtype.
    ``alloc(shape, dtype)`` may offer a recycled output block (the worker's buffer pool).
    """
    args = [_cast(xp, a, cast) for a in arrays]
    f = getattr(xp, fn)
    if alloc is not None and out is not None:
        shape = np.broadcast_shapes(*[a.shape for a in args if hasattr(a, "shape")])
        buf = alloc(shape, out) if shape else None
        if buf is not None:
            try:
                return f(*args, out=buf)
            except TypeError:  # the ufunc's natural dtype differs from ``out``
                pass
    return _cast(xp, f(*args), out)




@kernel("sigmoid")
def sigmoid(xp, a, cast=None, out=None):
    a = _cast(xp, a, cast)
    return _cast(xp, 1 / (1 + xp.exp(-a)), out)


@kernel("relu")
def relu(xp, a, cast=None, out=None):
    return _cast(xp, xp.maximum(a, a.dtype.type(0)), out)


@kernel("relu_grad")
def relu_grad(xp, g, a, cast=None, out=None):
    """``g`` where ``a > 0``, else 0: the ReLU backward in one pass."""
    return _cast(xp, g * (a > 0), out)


@kernel("clamp")
def clamp(xp, a, lo=None, hi=None, cast=None, out=None):
    a = _cast(xp, a, cast)
    if lo is not None:
        a = xp.maximum(a, _cast(xp, lo, cast))
    if hi is not None:
        a = xp.minimum(a, _cast(xp, hi, cast))
    return _cast(xp, a, out)


@kernel("where")
def where(xp, cond, a, b, cast=None, out=None):
    return _cast(xp, xp.where(cond, _cast(xp, a, cast), _cast(xp, b, cast)), out)


@kernel("astype")
def astype(xp, a, out):
    return a.astype(out, copy=True)


@kernel("copy_all")
def copy_all(xp, *arrays):
    """Owned copies of every argument (one output each)."""
    out = tuple(xp.array(a, copy=True) for a in arrays)
    return out[0] if len(out) == 1 else out


# ------------------------------------------------------------------------------ reductions
_REDUCE = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "all": "all", "any": "any"}
_COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
            "all": "logical_and", "any": "logical_or"}


def _finish(xp, out, squeeze):
    return xp.squeeze(out, axis=squeeze) if squeeze else out


@kernel("reduce_chunk")
def reduce_chunk(xp, a, fn, axis, dtype=None, squeeze=None):
    """Reduce a block over ``axis`` keeping dims (a partial of a cross-shard reduction)."""
    kw = {"dtype": dtype} if fn in ("sum", "prod") else {}
    return _finish(xp, xp.asarray(getattr(xp, _REDUCE[fn])(a, axis=axis, keepdims=True, **kw)),
                   squeeze)


@kernel("reduce_combine")
def reduce_combine(xp, *parts, fn, squeeze=None):
    """Combine partials of the same block position, in order."""
    f = getattr(xp, _COMBINE[fn])
    out = parts[0]
    for p in parts[1:]:
        out = f(out, p)
    return _finish(xp, out, squeeze)


@kernel("arg_chunk")
def arg_chunk(xp, a, fn, axis, offsets, gshape, squeeze=None):
    """``(values, global indices)`` of the max/min of a block along ``axis`` (``None``: the
    whole block, indices into the flattened global tensor, as torch's argmax)."""
    f = xp.argmax if fn == "max" else xp.argmin
    if axis is None:
        i = int(f(a))
        coords = np.unravel_index(i, a.shape)
        g = np.ravel_multi_index([c + o for c, o in zip(coords, offsets)], gshape)
        keep = (1,) * a.ndim
        v, idx = a.reshape(-1)[i:i + 1].reshape(keep), xp.full(keep, g, dtype=np.int64)
    else:
        i = xp.expand_dims(f(a, axis=axis), axis)
        v, idx = xp.take_along_axis(a, i, axis=axis), (i + offsets[axis]).astype(np.int64)
    return _finish(xp, v, squeeze), _finish(xp, idx, squeeze)


@kernel("arg_combine")
def arg_combine(xp, *parts, fn, squeeze=None):
    """Combine ``(v1, i1, v2, i2, ...)`` pairs: the better value wins, ties go to the lower
    index (so the result is independent of the combine order); NaN beats everything."""
    v, idx = parts[0], parts[1]
    for vb, ib in zip(parts[2::2], parts[3::2]):
        better = (vb > v) if fn == "max" else (vb < v)
        take = better | ((vb == v) & (ib < idx))
        if v.dtype.kind == "f":
            nb, na = xp.isnan(vb), xp.isnan(v)
            take = (take & ~na) | (nb & ~na) | (nb & na & (ib < idx))
        v, idx = xp.where(take, vb, v), xp.where(take, ib, idx)
    return _finish(xp, v, squeeze), _finish(xp, idx, squeeze)


@kernel("matmul")
def matmul(xp, a, b, out=None, stack=False):
    """Block product (BLAS through NumPy / cuBLAS through CuPy); ``stack`` adds a leading
    dim of 1 (a partial product, one entry of a stack that is summed afterwards)."""
    r = _cast(xp, xp.matmul(_cast(xp, a, out), _cast(xp, b, out)), out)
    return r[None] if stack else r
from . import kernels_linalg  # noqa: E402,F401
