"""Shared test helpers: every numeric result is compared with NumPy through one function."""

from __future__ import annotations

import collections
import math

import numpy as np
from hypothesis import strategies as hs

import sharded as st


def assert_matches_numpy(t, expected, rtol=1e-6, atol=1e-6, dtype=None):
    """``t`` (a ShardedTensor) has ``expected``'s shape and values, and dtype ``dtype`` if
    given (a sharded dtype or anything ``st.dtypes.as_dtype`` accepts)."""
    assert isinstance(t, st.ShardedTensor), f"expected a ShardedTensor, got {type(t)}"
    got = t.detach().numpy()  # torch: numpy() of a tensor that requires grad raises
    exp = np.asarray(expected)
    assert tuple(t.shape) == exp.shape, f"shape {tuple(t.shape)} != {exp.shape}"
    assert got.shape == exp.shape
    if dtype is not None:
        assert t.dtype == st.dtypes.as_dtype(dtype), f"dtype {t.dtype} != {dtype}"
    assert got.dtype == t.dtype.np
    if exp.dtype.kind in "biu" and got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, exp)
    else:
        wide = np.complex128 if "c" in (exp.dtype.kind, got.dtype.kind) else np.float64
        np.testing.assert_allclose(
            got.astype(wide), exp.astype(wide), rtol=rtol, atol=atol, equal_nan=True
        )


# Layouts every op is checked on: even, uneven (7 rows on 3), empty shards, other dim, a 2-D
# block grid and replicated.
PLACEMENTS = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=3),
    dict(shards=5),
    dict(shards=3, dim=1),
    dict(layout=st.Layout.block((2, 2))),
    dict(layout=st.Layout(chunks=(4, 0, 3))),
    dict(layout=st.Layout.replicated()),
]
PLACEMENT_IDS = ["1", "2", "3", "5empty", "dim1", "block", "uneven", "repl"]


LINALG_TOL = dict(rtol=1e-10, atol=1e-10)


def current_executor():
    """The executor of the current session (planner-level tests submit to it directly)."""
    return st.runtime.driver.session.current().executor


def float64_tensor(a, **place):
    """``a`` as a float64 tensor with the placement keywords ``place``."""
    return st.from_numpy(np.asarray(a, dtype=np.float64), **place)


# ------------------------------------------------------- shared by the hypothesis tests
def moved():
    """Bytes moved between workers so far (the counter of ``st.stats()``)."""
    return st.stats()["bytes_moved"]


def on_ray() -> bool:
    """Whether the session runs on Ray. Before any session exists (a decorator evaluated at
    import, when a module is collected for both the unit run and its Ray mirror) this says
    True, so counts fixed at import suit the mirror, and no Ray is started to find out."""
    if not st.is_initialized():
        return True
    return st.runtime.current().executor.kind == "ray"


def examples(n: int) -> int:
    """Hypothesis example counts: full on the in-process executor, fewer on a Ray cluster
    (every example there is a few dozen actor round trips)."""
    return n if not on_ray() else max(10, n // 5)


# ---------------------------------------------------------------- layouts for hypothesis
@hs.composite
def placements(draw, shape):
    """A random placement for ``shape``: shards=1..4 on any dim (empty shards included), an
    uneven explicit chunking, a block grid, or replicated."""
    nd = len(shape)
    kind = draw(hs.sampled_from(["shards", "chunks", "block", "repl"] if nd else ["shards"]))
    if kind == "repl":
        return dict(layout=st.Layout.replicated())
    if kind == "shards":
        if not nd:
            return {}
        return dict(shards=draw(hs.integers(1, 4)), dim=draw(hs.integers(0, nd - 1)))
    if kind == "block":
        return dict(layout=st.Layout.block(tuple(draw(hs.integers(1, 2)) for _ in shape)))
    d = draw(hs.integers(0, nd - 1))
    n = shape[d]
    cuts = sorted(draw(hs.lists(hs.integers(0, n), min_size=0, max_size=3)))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    return dict(layout=st.Layout(chunks={d: sizes}))


@hs.composite
def sharded_arrays(draw, max_dims=3, min_dims=1, max_side=4, min_side=0):
    sides = [n for n in range(min_side, max_side + 1) if n] * 4 + [0] * (min_side == 0)
    shape = tuple(draw(hs.lists(hs.sampled_from(sides), min_size=min_dims, max_size=max_dims)))
    a = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)
    return a, draw(placements(shape))


def traced_peak(f) -> int:
    """The largest traced allocation peak of any worker while ``f()`` runs (in process: all
    workers share one tracer), in steady state: ``f`` runs once untraced first, so that the
    measure is the extra memory the op needs and not which blocks the workers' pools happened
    to hold (that depends on when earlier frees ran)."""
    r = f()
    st.synchronize()
    del r
    st.trace_memory()
    r = f()
    st.synchronize()
    peak = max(w["traced_peak_bytes"] for w in st.stats()["workers"])
    st.trace_memory(False)
    del r
    return peak


def block_bytes(t) -> int:
    """What an elementwise op's output blocks of ``t``'s layout and dtype add to
    :func:`traced_peak`: the busiest worker's blocks on Ray, every block in process (one
    tracer). A bound relative to this does not depend on what the workers' pools hold (an
    elementwise op may take its output from the pool, so its own traced peak can be ~0)."""
    per = collections.Counter()
    for w, _, shape in t.layout.shards():
        per[w] += math.prod(shape) * t.element_size()
    return max(per.values()) if st.info()["executor"] == "ray" else sum(per.values())


def ray_ref_slack() -> int:
    """Bytes a worker's traced peak may exceed a bound by on the Ray executor when the op's
    batches take Ray references (another worker's export, a carry) and the op it is
    compared with takes none: Ray allocates ~0.5-0.8 MB in the worker for a call's arguments,
    and the reference op's batch, which takes none, goes over the driver's wire."""
    return 800_000 if st.info()["executor"] == "ray" else 0
