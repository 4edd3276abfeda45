"""The distributed block LU (solve, inv, det, slogdet, tensorsolve; ``lu.py``) and blocked
Cholesky (``cholesky.py``) of one big split matrix, and their errors."""

import math

import numpy as np
import pytest

import sharded as st
from sharded.ops.linalg import lu as LD
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
t = float64_tensor


@pytest.fixture
def dist_small(monkeypatch):
    """Small split matrices take the distributed path (no gathering) in these tests."""
    monkeypatch.setattr(LD, "DIST_MIN_BYTES", 0)


SQUARE = [
    (50, dict(shards=2)),
    (61, dict(layout=st.Layout(chunks=(20, 0, 41)))),
    (64, dict(shards=3, dim=1)),
    (70, dict(layout=st.Layout.block((2, 2)))),
    (37, dict(shards=5)),
]


@pytest.mark.parametrize("n, place", SQUARE, ids=["2", "uneven-empty", "cols", "block", "5"])
def test_block_lu_and_cholesky(n, place, dist_small):
    a = rng.standard_normal((n, n))
    x = t(a, **place)
    b = rng.standard_normal((n, 3))
    sol = L.solve(x, t(b, shards=3))
    assert np.abs(a @ sol.numpy() - b).max() < 1e-10 and sol.layout.grid[1] == 1
    assert_matches_numpy(L.solve(x, t(b[:, 0], shards=2)), np.linalg.solve(a, b[:, 0]), **TOL)
    assert_matches_numpy(L.inv(x), np.linalg.inv(a), **TOL)
    assert_matches_numpy(L.det(x), np.linalg.det(a), rtol=1e-10)
    sign, logabs = L.slogdet(x)
    ref = np.linalg.slogdet(a)
    assert sign.item() == ref[0] and abs(logabs.item() - ref[1]) < 1e-10
    spd = a @ a.T + n * np.eye(n)
    s = t(spd, **place)
    c = L.cholesky(s)
    assert c.layout == s.layout
    assert_matches_numpy(c, np.linalg.cholesky(spd), **TOL)
    assert_matches_numpy(L.cholesky(s, upper=True), np.linalg.cholesky(spd).T, **TOL)


def test_big_matrix_errors(dist_small):
    a = rng.standard_normal((60, 60))
    a[17] = 0.0  # an exactly zero row: an exactly zero pivot
    x = t(a, shards=2)
    with pytest.raises(L.LinAlgError, match="singular"):
        L.solve(x, st.ones(60, 1, dtype=st.float64))
    with pytest.raises(L.LinAlgError, match="linalg.inv"):
        L.inv(x)
    assert L.det(x).item() == 0.0 and L.slogdet(x).logabsdet.item() == -math.inf
    assert_matches_numpy(x, a)
    s = np.eye(60)
    s[30, 30] = -1.0
    with pytest.raises(L.LinAlgError, match="leading minor of order 31"):
        L.cholesky(t(s, shards=2))


def test_tensorsolve_tutorial(dist_small):
    a = st.eye(2 * 3 * 4, dtype=st.float64).reshape(2 * 3, 4, 2, 3, 4)
    b = t(rng.standard_normal((2 * 3, 4)))
    x = L.tensorsolve(a, b)
    assert x.shape == (2, 3, 4)
    assert_matches_numpy(L.tensordot(a, x, dims=x.ndim), b.numpy(), **TOL)
    an = rng.standard_normal((6, 4, 2, 3, 4))
    x = L.tensorsolve(t(an, shards=2), b)
    assert_matches_numpy(x, np.linalg.tensorsolve(an, b.numpy()), **TOL)
    with pytest.raises(st.ShapeError, match="tensorsolve"):
        L.tensorsolve(t(an), t(np.ones(5)))
