"""Random tensors from a counter-based generator: the same values for every sharding.

Element ``i`` (its row-major position in the global tensor) of the ``n``-th draw is
``hash(seed, counter + i)``, computed by the worker that holds it. So ``st.manual_seed(s);
st.rand(shape, shards=k)`` gives identical values for every ``k``, dim and layout, and no
generator state travels between workers: the driver only reserves a range of counters per draw.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand
from ....core.dispatch import apply, as_tensor, is_tensor, like_kw, placement, size_of
from ....core.registry import kernel, nondiff, primitive
from ....errors import (
    ArgumentError,
    ArgumentTypeError,
    DTypeError,
    UnsupportedArgument,
    UnsupportedDType,
)

_DEFAULT_SEED = 67280421310721  # torch's default initial seed
_rng = {"seed": _DEFAULT_SEED, "counter": 0}


def manual_seed(seed: int) -> None:
    """Seed the generator: later random tensors are reproducible for any sharding.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(1); a = st.rand(4, shards=1).tolist()
    >>> st.manual_seed(1); a == st.rand(4, shards=3).tolist()
    True
    """
    _rng["seed"], _rng["counter"] = int(seed), 0


def seed() -> int:
    """Seed the generator with a non-deterministic number and return it (torch's ``seed``).

    Examples
    --------
    >>> import sharded as st
    >>> s = st.seed(); s == st.initial_seed()
    True
    """
    s = int.from_bytes(os.urandom(8), "little") >> 1  # torch's seeds fit in 63 bits too
    manual_seed(s)
    return s


def _no_generator(name, generator):
    if generator is not None:
        raise UnsupportedArgument(f"{name}: generator= is not supported; seed st.manual_seed")


def initial_seed() -> int:
    """The seed of the generator (the last ``manual_seed``, else torch's default).

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(7); st.initial_seed()
    7
    """
    return _rng["seed"]


def get_rng_state():
    """The generator's state as a uint8 tensor (16 bytes: seed and counter, little-endian);
    ``set_rng_state`` of it replays the same draws.

    Examples
    --------
    >>> import sharded as st
    >>> s = st.get_rng_state(); a = st.rand(3).tolist()
    >>> st.set_rng_state(s); a == st.rand(3).tolist()
    True
    """
    words = np.array([_rng["seed"] % 2**64, _rng["counter"] % 2**64], dtype="<u8")
    return as_tensor(words.view(np.uint8), dtype=D.uint8)


def set_rng_state(new_state) -> None:
    """Restore a state returned by :func:`get_rng_state`.

    Examples
    --------
    >>> import sharded as st
    >>> st.set_rng_state(st.get_rng_state())
    """
    raw = np.asarray(new_state.numpy() if is_tensor(new_state) else new_state)
    if raw.dtype != np.uint8 or raw.shape != (16,):
        raise ArgumentError(
            "set_rng_state expects the 16-byte uint8 tensor of get_rng_state, got dtype "
            f"{raw.dtype} and shape {tuple(raw.shape)}"
        )
    seed, counter = (int(v) for v in raw.view("<u8"))
    _rng["seed"], _rng["counter"] = seed, counter


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Restore the generator's state when the block ends (torch's ``torch.random.fork_rng``).

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> with st.random.fork_rng():
    ...     a = st.rand(2).tolist()
    >>> a == st.rand(2).tolist()
    True
    """
    if not enabled:
        yield
        return
    saved = dict(_rng)
    try:
        yield
    finally:
        _rng.update(saved)


def _draw(n: int):
    """Reserve ``n`` counters of the global stream; returns (seed, first counter)."""
    c = _rng["counter"]
    _rng["counter"] = c + n
    return _rng["seed"], c


# ------------------------------------------------------------------- counter-based bits
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
    """64 random bits per element, a pure function of (seed, stream, counter + global index).

    Examples
    --------
    >>> import numpy as np
    >>> from sharded.ops.random.prims.counter import random_bits
    >>> a = random_bits(np, np.arange(4, dtype=np.uint64), 1, 0)
    >>> bool((a[2:] == random_bits(np, np.arange(2, dtype=np.uint64), 1, 2)).all())
    True
    """
    with np.errstate(over="ignore"):
        key = _mix64(np.uint64(seed % 2**64) ^ _mix64(np.uint64(stream + 1) * _GOLDEN))
        return _mix64((idx + np.uint64(counter % 2**64) + np.uint64(1)) * _GOLDEN + key)


def _unit(xp, bits, dtype):
    """Uniform [0, 1) floats from random bits, using as many bits as the dtype's mantissa."""
    dt = np.dtype(dtype)
    # bfloat16 keeps 8 bits (float16's 11 would round values near 1 up to 1.0)
    mant = 8 if dt.name == "bfloat16" else {2: 11, 4: 24}.get(dt.itemsize, 53)
    return ((bits >> np.uint64(64 - mant)).astype(np.float64) * 2.0**-mant).astype(dtype)


def _complex_draw(xp, idx, bits, seed, counter, dist, dtype):
    """torch's complex draws: uniform real and imaginary parts each in [0, 1); normal with
    each part N(0, 1/2) (unit variance of the complex value). Box-Muller's cos and sin of one
    draw are independent normals; the imaginary uniform reads stream 2."""
    rdt = np.dtype(dtype.char.lower())  # complex64 -> float32, complex128 -> float64
    if dist == "uniform":
        im = _unit(xp, random_bits(xp, idx, seed, counter, stream=2), rdt)
        return (_unit(xp, bits, rdt) + 1j * im).astype(dtype)
    u1 = 1.0 - _unit(xp, bits, np.float64)
    u2 = _unit(xp, random_bits(xp, idx, seed, counter, stream=1), np.float64)
    r, t = xp.sqrt(-xp.log(u1)), 2 * np.pi * u2  # sqrt(-2 log u1) / sqrt(2)
    return (r * xp.cos(t) + 1j * (r * xp.sin(t))).astype(dtype)


# ------------------------------------------------------------------------------ random
@kernel(name="random")
def random_kernel(xp, shape, offsets, gshape, seed, counter, dist, dtype, low=0, high=1):
    """A block of a random tensor; values depend only on the global element position."""
    idx = _global_index(xp, shape, offsets, gshape)
    bits = random_bits(xp, idx, seed, counter)
    if np.dtype(dtype).kind == "c":
        return _complex_draw(xp, idx, bits, seed, counter, dist, np.dtype(dtype))
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


@primitive(
    "random",
    kernels=[random_kernel],
    kind="creation",
    out_spec=lambda layout, dist, dtype, low=0, high=1: (tuple(layout.shape), dtype),
)
def _plan_random(ex, layout, dist, dtype, low=0, high=1) -> Operand:
    seed, counter = _draw(math.prod(layout.shape))
    dt = dtype.np_str
    keys = []
    for s, (w, offs, shp) in enumerate(layout.shards()):
        k = ex.new_key()
        ex.submit(
            w,
            "random",
            (),
            (k,),
            {
                "shape": shp,
                "offsets": offs,
                "gshape": layout.shape,
                "seed": seed,
                "counter": counter,
                "dist": dist,
                "dtype": dt,
                "low": low,
                "high": high,
            },
            ("random", s),
        )
        keys.append(k)
    return Operand(layout, dtype, keys)


def _finish(t, requires_grad: bool):
    return t.requires_grad_(True) if requires_grad else t


def _sampler(name, dist):
    """``name(*size, ...)``: a tensor of ``size`` drawn from ``dist`` (``rand``, ``randn``)."""

    def f(
        *size,
        dtype=None,
        shards=None,
        dim=None,
        layout=None,
        device="cpu",
        requires_grad=False,
        generator=None,
        **kw,
    ):
        if "size" in kw:
            if size:
                raise ArgumentTypeError(f"{name}() got the size both as arguments and size=")
            size = (kw.pop("size"),)
        elif not size:  # torch: rand() has no overload without a size (rand(()) is 0-d)
            raise ArgumentTypeError(f"{name}() missing its size argument")
        if kw:
            raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kw)}")
        _no_generator(name, generator)
        dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
        if not (dt.is_floating_point or dt.is_complex):  # torch: not implemented for 'Long'
            raise UnsupportedDType(
                f"{name}() needs a floating point or complex dtype, got {dt.name}"
            )
        lay = placement(size_of(size), shards, dim, layout, device, dt)
        return _finish(apply("random", lay, dist, dt), requires_grad)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""A tensor of the given size drawn by ``{name}`` (default dtype float32),
    identical for every sharding after the same ``manual_seed``.

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}(2, 3, shards=2).shape
    sharded.Size([2, 3])
    """
    return f


rand = _sampler("rand", "uniform")
randn = _sampler("randn", "normal")


def randint(
    low=0,
    high=None,
    size=None,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
    generator=None,
):
    """Integers uniform in ``[low, high)``: ``randint(high, size)`` or
    ``randint(low, high, size)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0); int(st.randint(3, 5, (10,)).min().item()) >= 3
    True
    """
    if size is None:
        low, high, size = 0, low, high
    elif high is None:  # randint(5, size=(2,)) is randint(0, 5, (2,)), as torch
        low, high = 0, low
    if size is None or high is None:
        raise ArgumentError(
            "randint() needs high and size: randint(high, size) or randint(low, high, size)"
        )
    _no_generator("randint", generator)
    for v in (low, high):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ArgumentTypeError(f"randint(): low and high must be ints, got {v!r}")
    if high <= low:
        raise ArgumentError(f"randint(): low={low} must be below high={high}")
    shape = size_of((tuple(size),) if not isinstance(size, numbers.Integral) else (size,))
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    if dt.is_complex:
        raise DTypeError(f"randint(): complex dtype {dt.name} is not supported, as in torch")
    _check_bounds(low, high, dt)
    lay = placement(shape, shards, dim, layout, device, dt)
    return _finish(apply("random", lay, "integers", dt, int(low), int(high)), requires_grad)


def _check_bounds(low, high, dt):
    """torch: ``from``/``to - 1`` must be representable in the dtype (bool: 0 and 1; half:
    integers up to 2**11 exactly)."""
    if dt == D.bool_:
        lo, hi = 0, 1
    elif dt.is_floating_point:
        lo = hi = None
        if dt == D.float16:
            lo, hi = -(2**11), 2**11
    else:
        info = np.iinfo(dt.np)
        lo, hi = int(info.min), int(info.max)
    if lo is not None and not (lo <= low and high - 1 <= hi):
        raise ArgumentError(
            f"randint(): [{low}, {high}) is out of bounds for {dt.name} ([{lo}, {hi}])"
        )


# ------------------------------------------------------------------------------ randperm
@kernel(name="randperm")
def randperm_kernel(xp, n, lo, hi, seed, counter, dtype):
    """Entries ``lo:hi`` of a random permutation of ``range(n)``: every worker ranks the same n
    random keys, so the permutation is identical for any sharding."""
    keys = random_bits(xp, xp.arange(n, dtype=np.uint64), seed, counter)
    return xp.argsort(keys, kind="stable")[lo:hi].astype(dtype)


@primitive(
    "randperm",
    kernels=[randperm_kernel],
    kind="creation",
    out_spec=lambda layout, n, dtype: (tuple(layout.shape), dtype),
)
def _plan_randperm(ex, layout, n, dtype) -> Operand:
    seed, counter = _draw(n)
    dt = dtype.np_str
    keys = []
    for s, (w, offs, shp) in enumerate(layout.shards()):
        k = ex.new_key()
        ex.submit(
            w,
            "randperm",
            (),
            (k,),
            {
                "n": n,
                "lo": offs[0],
                "hi": offs[0] + shp[0],
                "seed": seed,
                "counter": counter,
                "dtype": dt,
            },
            ("randperm", s),
        )
        keys.append(k)
    return Operand(layout, dtype, keys)


def randperm(
    n,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
    generator=None,
):
    """A random permutation of ``0 .. n-1`` (identical for any sharding).

    Examples
    --------
    >>> import sharded as st
    >>> sorted(st.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    _no_generator("randperm", generator)
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    if dt.is_complex or dt == D.bool_:
        raise UnsupportedDType(f"randperm is not implemented for {dt.name}")
    top = {D.float16: 2**11, D.float32: 2**24}.get(dt)  # exact integers of the float dtype
    if top is None and not dt.is_floating_point:
        top = int(np.iinfo(dt.np).max)
    if top is not None and n - 1 > top:
        raise ArgumentError(f"randperm(): n={n} is too large for dtype {dt.name}")
    lay = placement(size_of((n,)), shards, dim, layout, device, dt)
    return _finish(apply("randperm", lay, int(n), dt), requires_grad)


# Random tensors have no tensor inputs: nothing to differentiate.
nondiff("random", "randperm")


# ------------------------------------------------------------------------------ *_like


def rand_like(
    input, *, dtype=None, shards=None, dim=None, layout=None, device=None, requires_grad=False
):
    """``rand`` with the shape, dtype and layout of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.rand_like(st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    return rand(input.shape, **like_kw(input, dtype, shards, dim, layout, device, requires_grad))


def randn_like(
    input, *, dtype=None, shards=None, dim=None, layout=None, device=None, requires_grad=False
):
    """``randn`` with the shape, dtype and layout of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.randn_like(st.ones(2, 3, dtype=st.float64)).dtype
    sharded.float64
    """
    return randn(input.shape, **like_kw(input, dtype, shards, dim, layout, device, requires_grad))


def randint_like(
    input,
    low=0,
    high=None,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    """``randint`` with the shape, dtype and layout of ``input``: ``randint_like(x, high)``
    or ``randint_like(x, low, high)``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.randint_like(st.zeros(2, 3), 3, 5)
    >>> x.shape, x.dtype, bool(((x >= 3) & (x < 5)).all())
    (sharded.Size([2, 3]), sharded.float32, True)
    """
    if high is None:
        low, high = 0, low
    kw = like_kw(input, dtype, shards, dim, layout, device, requires_grad)
    return randint(low, high, tuple(input.shape), **kw)


__all__ = [
    "rand",
    "randint_like",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "manual_seed",
    "initial_seed",
    "seed",
    "get_rng_state",
    "set_rng_state",
]
