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


# ------------------------------------------------------------------------------ creation
@kernel("full")
def full(xp, shape, value, dtype):
    return xp.full(shape, value, dtype=dtype)


@kernel("empty")
def empty(xp, shape, dtype):
    return xp.empty(shape, dtype=dtype)


@kernel("copy_all")
def copy_all(xp, *arrays):
    """Owned copies of every argument (one output each)."""
    out = tuple(xp.array(a, copy=True) for a in arrays)
    return out[0] if len(out) == 1 else out


@kernel("arange")
def arange(xp, start, step, first, count, dtype):
    """Elements ``first .. first+count-1`` of ``start + i*step`` (computed per index, so any
    shard yields exactly the values the whole range would)."""
    i = xp.arange(first, first + count, dtype=np.int64)
    if np.dtype(dtype).kind in "iub" and float(start).is_integer() and float(step).is_integer():
        return (int(start) + i * int(step)).astype(dtype)
    return (start + i * float(step)).astype(dtype)


@kernel("linspace")
def linspace(xp, start, stop, num, first, count, dtype, base=None):
    """Elements ``first..first+count-1`` of ``numpy.linspace(start, stop, num)`` (optionally
    ``base ** ...`` for logspace), computed in float64 like NumPy."""
    i = xp.arange(first, first + count, dtype=np.float64)
    step = (stop - start) / (num - 1) if num > 1 else 0.0
    y = start + i * step
    if num > 1 and first + count == num:
        y[-1:] = stop  # NumPy pins the last element to stop exactly
    if base is not None:
        y = xp.power(float(base), y)
    return y.astype(dtype)


@kernel("eye")
def eye(xp, shape, offsets, dtype):
    r = xp.arange(offsets[0], offsets[0] + shape[0])[:, None]
    c = xp.arange(offsets[1], offsets[1] + shape[1])[None, :]
    return (r == c).astype(dtype)


# ------------------------------------------------------------------- counter-based RNG
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix64(x):
    """SplitMix64's finaliser: a bijection of uint64 that scrambles every input bit."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def _global_index(xp, shape, offsets, gshape):
    """Row-major global position of every element of a block: the RNG counter."""
    idx = xp.zeros((1,) * len(shape), dtype=np.uint64)
    stride = 1
    for d in reversed(range(len(shape))):
        r = xp.arange(offsets[d], offsets[d] + shape[d], dtype=np.uint64) * np.uint64(stride)
        idx = idx + r.reshape((1,) * d + (shape[d],) + (1,) * (len(shape) - d - 1))
        stride *= gshape[d]
    return xp.broadcast_to(idx, shape)


def random_bits(xp, idx, seed: int, counter: int, stream: int = 0):
    """64 random bits per element, a pure function of (seed, stream, counter + global index)."""
    with np.errstate(over="ignore"):
        key = _mix64(np.uint64(seed % 2**64) ^ _mix64(np.uint64(stream + 1) * _GOLDEN))
        return _mix64((idx + np.uint64(counter % 2**64) + np.uint64(1)) * _GOLDEN + key)


def _unit(xp, bits, dtype):
    """Uniform [0, 1) floats from random bits, using as many bits as the dtype's mantissa."""
    mant = {2: 11, 4: 24}.get(np.dtype(dtype).itemsize, 53)
    return ((bits >> np.uint64(64 - mant)).astype(np.float64) * 2.0 ** -mant).astype(dtype)


@kernel("random")
def random(xp, shape, offsets, gshape, seed, counter, dist, dtype, low=0, high=1):
    """A block of a random tensor; values depend only on the global element position."""
    idx = _global_index(xp, shape, offsets, gshape)
    bits = random_bits(xp, idx, seed, counter)
    if dist == "uniform":
        return _unit(xp, bits, dtype)
    if dist == "normal":
        u1 = 1.0 - _unit(xp, bits, np.float64)  # (0, 1]: log stays finite
        u2 = _unit(xp, random_bits(xp, idx, seed, counter, stream=1), np.float64)
        return (xp.sqrt(-2.0 * xp.log(u1)) * xp.cos(2 * np.pi * u2)).astype(dtype)
    if dist == "integers":
        span = np.uint64(high - low)
        return ((bits % span).astype(np.int64) + low).astype(dtype)
    raise ValueError(f"unknown distribution {dist!r}")


@kernel("randperm")
def randperm(xp, n, lo, hi, seed, counter, dtype):
    """Entries ``lo:hi`` of a random permutation of ``range(n)``: every worker ranks the same n
    random keys, so the permutation is identical for any sharding."""
    keys = random_bits(xp, xp.arange(n, dtype=np.uint64), seed, counter)
    return xp.argsort(keys, kind="stable")[lo:hi].astype(dtype)


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


@kernel("reshape")
def reshape(xp, a, shape):
    return a.reshape(shape)


# ------------------------------------------------------------------ views and indexing
@kernel("transpose")
def transpose(xp, a, axes):
    """A view with permuted axes."""
    return a.transpose(axes)


@kernel("view")
def view(xp, a, shape):
    """A view with a new shape; raises instead of copying (a view must share memory)."""
    v = a.view()
    v.shape = shape
    return v


@kernel("broadcast_to")
def broadcast_to(xp, a, shape):
    """A read-only view repeating size-1 dims (torch's ``expand``)."""
    return xp.broadcast_to(a, shape)


@kernel("index")
def index(xp, a, key):
    """Basic indexing (ints, slices, None): a view."""
    return a[key]


@kernel("contiguous")
def contiguous(xp, a):
    """A C-ordered copy (never the same memory: the result of ``contiguous()``/``clone()``
    must not alias its input)."""
    return xp.array(a, order="C", copy=True)


@kernel("scatter_assemble")
def scatter_assemble(xp, *pieces, shape, dtype, positions):
    """Build a block from 1-D value pieces: piece ``i`` lands at flat ``positions[i]``."""
    out = xp.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    for p, pos in zip(pieces, positions):
        flat[pos] = p.reshape(-1)
    return out


@kernel("mask_select")
def mask_select(xp, a, m):
    """``a[m]`` for a bool mask over the leading dims of a block."""
    return a[m]


@kernel("count")
def count(xp, m):
    """Number of true elements of a block, as a 0-d int64 array."""
    return xp.asarray(xp.count_nonzero(m), dtype=np.int64)


@kernel("put_mask")
def put_mask(xp, a, m, v):
    """Set ``a[m] = v`` in place (``v`` a scalar or broadcastable to the selection); NumPy
    checks shapes before writing, so a failure leaves ``a`` unchanged."""
    a[m] = v
    return a


@kernel("put_points")
def put_points(xp, a, *values, coords):
    """``a`` with points ``coords[i]`` set to ``values[i]`` (later pieces win on repeats)."""
    for v, c in zip(values, coords):
        a[c] = v
    return a


@kernel("concat")
def concat(xp, *blocks, axis):
    return xp.concatenate(blocks, axis=axis)


@kernel("add_points")
def add_points(xp, a, *values, coords):
    """Add ``values[i]`` at points ``coords[i]`` of ``a`` in place (repeats accumulate)."""
    for v, c in zip(values, coords):
        if xp is np:
            np.add.at(a, c, v)
        else:  # CuPy's scatter_add is the same operation
            xp.add.at(a, c, v) if hasattr(xp.add, "at") else xp.scatter_add(a, c, v)
    return a
