"""Shared test helpers: every numeric result is compared with NumPy through one function."""

from __future__ import annotations

import numpy as np

import sharded as st


def assert_matches_numpy(t, expected, rtol=1e-6, atol=1e-6, dtype=None):
    """``t`` (a ShardedTensor) has ``expected``'s shape and values, and dtype ``dtype`` if
    given (a sharded dtype or anything ``st.dtypes.as_dtype`` accepts)."""
    assert isinstance(t, st.ShardedTensor), f"expected a ShardedTensor, got {type(t)}"
    got = t.numpy()
    exp = np.asarray(expected)
    assert tuple(t.shape) == exp.shape, f"shape {tuple(t.shape)} != {exp.shape}"
    assert got.shape == exp.shape
    if dtype is not None:
        assert t.dtype == st.dtypes.as_dtype(dtype), f"dtype {t.dtype} != {dtype}"
    assert got.dtype == t.dtype.np
    if exp.dtype.kind in "biu" and got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, exp)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), exp.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True
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
    return st.runtime.session.current().executor


def float64_tensor(a, **place):
    """``a`` as a float64 tensor with the placement keywords ``place``."""
    return st.from_numpy(np.asarray(a, dtype=np.float64), **place)
