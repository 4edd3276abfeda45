"""Creation planners: every shard is made where it lives, from its offsets alone.

Values never depend on the layout: ``arange``/``linspace`` compute element ``i`` from ``i``,
and the random generator is counter based: element ``i`` (its row-major position in the
global tensor) of the ``n``-th draw is ``hash(seed, counter + i)``. So ``st.manual_seed(s);
st.rand(shape, shards=k)`` gives identical values for every ``k``, dim and layout.
"""

from __future__ import annotations

import math

import numpy as np

from ..layout import Layout
from ..core.dataflow import Operand as Result
from ..core.registry import primitive

# Blocks above this size travel through the object store instead of inside the batch.
INLINE_BYTES = 1 << 16

_DEFAULT_SEED = 67280421310721  # torch's default initial seed
_rng = {"seed": _DEFAULT_SEED, "counter": 0}


def manual_seed(seed: int) -> None:
    """Seed the global generator and restart its counter."""
    _rng["seed"], _rng["counter"] = int(seed), 0


def initial_seed() -> int:
    return _rng["seed"]


def _draw(n: int):
    """Reserve ``n`` counters of the global stream; returns (seed, first counter)."""
    c = _rng["counter"]
    _rng["counter"] = c + n
    return _rng["seed"], c


def _each(ex, layout: Layout, kernel, params_of, dtype, label) -> Result:
    keys = []
    for s, (w, offs, shp) in enumerate(layout.shards()):
        k = ex.new_key()
        ex.submit(w, kernel, (), (k,), params_of(offs, shp), (label, s))
        keys.append(k)
    return Result(layout, dtype, tuple(keys))


@primitive("full", kind="creation")
def full(ex, layout, value, dtype) -> Result:
    dt = dtype.np.str
    return _each(ex, layout, "full", lambda o, s: {"shape": s, "value": value, "dtype": dt},
                 dtype, "full")


@primitive("empty", kind="creation")
def empty(ex, layout, dtype) -> Result:
    dt = dtype.np.str
    return _each(ex, layout, "empty", lambda o, s: {"shape": s, "dtype": dt}, dtype, "empty")


@primitive("arange", kind="creation")
def arange(ex, layout, start, step, dtype) -> Result:
    dt = dtype.np.str
    return _each(ex, layout, "arange", lambda o, s: {
        "start": start, "step": step, "first": o[0], "count": s[0], "dtype": dt}, dtype, "arange")


@primitive("linspace", kind="creation")
def linspace(ex, layout, start, stop, num, dtype, base=None) -> Result:
    dt = dtype.np.str
    return _each(ex, layout, "linspace", lambda o, s: {
        "start": float(start), "stop": float(stop), "num": num, "first": o[0], "count": s[0],
        "dtype": dt, "base": base}, dtype, "linspace" if base is None else "logspace")


@primitive("eye", kind="creation")
def eye(ex, layout, dtype) -> Result:
    dt = dtype.np.str
    return _each(ex, layout, "eye", lambda o, s: {"shape": s, "offsets": o, "dtype": dt},
                 dtype, "eye")


@primitive("random", kind="creation")
def random(ex, layout, dist, dtype, low=0, high=1) -> Result:
    seed, counter = _draw(math.prod(layout.shape))
    dt = dtype.np.str
    return _each(ex, layout, "random", lambda o, s: {
        "shape": s, "offsets": o, "gshape": layout.shape, "seed": seed, "counter": counter,
        "dist": dist, "dtype": dt, "low": low, "high": high}, dtype, f"random_{dist}")


@primitive("randperm", kind="creation")
def randperm(ex, layout, n, dtype) -> Result:
    seed, counter = _draw(n)
    dt = dtype.np.str
    return _each(ex, layout, "randperm", lambda o, s: {
        "n": n, "lo": o[0], "hi": o[0] + s[0], "seed": seed, "counter": counter, "dtype": dt},
        dtype, "randperm")


@primitive("from_numpy", kind="creation")
def from_numpy(ex, arr: np.ndarray, layout, dtype) -> Result:
    """Ship the blocks of a driver-side array to their workers (large blocks via put)."""
    dt = dtype.np.str
    keys = []
    shared = None
    for s, (w, offs, shp) in enumerate(layout.shards()):
        if layout.is_replicated:
            if shared is None:  # one copy in the object store serves every worker
                shared = ("x", ex.put(arr)) if arr.nbytes > INLINE_BYTES else ("c", arr)
            arg = shared
        else:
            piece = np.asarray(arr[tuple(slice(o, o + n) for o, n in zip(offs, shp))])
            arg = ("x", ex.put(piece)) if piece.nbytes > INLINE_BYTES else ("c", piece)
        k = ex.new_key()
        ex.submit(w, "copy", (arg,), (k,), {"dtype": dt}, ("from_numpy", s))
        keys.append(k)
    return Result(layout, dtype, tuple(keys))
