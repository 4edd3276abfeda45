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


# ------------------------------------------- reshape (used by reductions, views, matmul)
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


@kernel("matmul")
def matmul(xp, a, b, out=None, stack=False):
    """Block product (BLAS through NumPy / cuBLAS through CuPy); ``stack`` adds a leading
    dim of 1 (a partial product, one entry of a stack that is summed afterwards)."""
    r = _cast(xp, xp.matmul(_cast(xp, a, out), _cast(xp, b, out)), out)
    return r[None] if stack else r
from . import kernels_linalg  # noqa: E402,F401
