"""The distributed block LU (solve, inv, det, slogdet, tensorsolve; ``lu_dist.py``) and blocked
Cholesky (``cholesky.py``) of one big split matrix, and their errors."""

import math

import numpy as np
import pytest

import sharded as st
from sharded.ops.linalg.prims import lu_dist as LD
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

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
    (90, dict(layout=st.Layout(chunks=(45, 45), workers=(1, 1)))),
]


@pytest.mark.parametrize(
    "n, place", SQUARE, ids=["2", "uneven-empty", "cols", "block", "5", "one-worker"]
)
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


@pytest.mark.parametrize("n, place", SQUARE[:4], ids=["2", "uneven-empty", "cols", "block"])
def test_blocked_cholesky_complex(n, place, dist_small):
    """Hermitian positive-definite input: ``A = L L^H``, ``U = L^H``; the gradient through
    the distributed factor equals the batched one (checked against torch in test_linalg)."""
    a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    h = a @ a.conj().T + n * np.eye(n)
    s = st.tensor(h, **place)
    lo = L.cholesky(s)
    assert lo.layout == s.layout and lo.dtype == st.complex128
    assert_matches_numpy(lo, np.linalg.cholesky(h), **TOL)
    assert_matches_numpy(L.cholesky(s, upper=True), np.linalg.cholesky(h).conj().T, **TOL)
    x = st.tensor(h, requires_grad=True, **place)
    y = st.tensor(h[None], requires_grad=True)  # one batch element: the batched kernel
    (L.cholesky(x).real.sum() + L.cholesky(x, upper=True).imag.sum()).backward()
    (L.cholesky(y).real.sum() + L.cholesky(y, upper=True).imag.sum()).backward()
    assert_matches_numpy(x.grad, y.grad.numpy()[0], dtype=st.complex128, **TOL)
    bad = np.eye(n, dtype=complex)
    bad[1, 2], bad[2, 1] = 2j, -2j  # Hermitian, not positive-definite at order 3
    with pytest.raises(L.LinAlgError, match="leading minor of order 3"):
        L.cholesky(st.tensor(bad, **place))


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


@pytest.mark.parametrize("shards", [1, 2])
def test_tensorsolve_needs_only_a_square_reshape(shards):
    # torch solves A (3, 2, 6) against B (2, 3): A.shape[:B.ndim] need not equal B.shape,
    # only prod(A.shape[:2]) == prod(A.shape[2:]) == B.numel(); torch's X below
    a = np.arange(36.0).reshape(3, 2, 6) ** 0.5 + 3 * np.eye(6).reshape(3, 2, 6)
    b = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = L.tensorsolve(t(a, shards=shards), t(b, shards=shards))
    want = [-0.5426753389493234, -0.18368534686218643, 0.015863576729672986]
    want += [0.2252473589760099, 0.44542359038234003, 0.6745277168433559]
    assert x.shape == (6,)
    assert_matches_numpy(x, np.array(want), **TOL)
    with pytest.raises(st.ShapeError, match="tensorsolve"):  # torch: 24 != 4
        L.tensorsolve(t(np.ones((2, 2, 3, 4))), t(np.ones(4)))
    with pytest.raises(st.ShapeError, match="tensorsolve"):  # torch: no (6, 6) reshape of 72
        L.tensorsolve(t(np.ones((4, 3, 6))), t(b))


@pytest.mark.parametrize("big", [True, False], ids=["block-lu", "batched"])
def test_complex_det_slogdet_and_sign_gradient(big, monkeypatch):
    """torch's values: a complex sign (the determinant's phase) with a gradient, a real
    log|det|; the block LU's panels carry the phase of their pivots."""
    monkeypatch.setattr(LD, "DIST_MIN_BYTES", 0 if big else 1 << 30)
    m = [[1 + 2j, 0.5], [1j, 3 - 1j]]
    a = st.tensor(m, dtype=st.complex128, requires_grad=True, shards=2)
    s, la = L.slogdet(a)
    assert la.dtype == st.float64 and s.dtype == st.complex128
    assert abs(s.item() - (0.7432941462471663 + 0.6689647316224496j)) < 1e-12
    assert abs(la.item() - 1.9061013350729676) < 1e-12
    (s.real * 2 + s.imag * 3 + la).backward()
    ref = [[-0.1326 + 0.6158j, -0.1980 + 0.0218j], [-0.0109 - 0.0990j, 0.4178 + 0.1544j]]
    assert_matches_numpy(a.grad, np.array(ref), dtype=st.complex128, atol=1e-4)
    z = rng.standard_normal((20, 20)) + 1j * rng.standard_normal((20, 20))
    assert_matches_numpy(L.det(st.tensor(z, shards=2)), np.linalg.det(z), rtol=1e-10)
    x = st.tensor(z[:3, :3], requires_grad=True, shards=2)
    assert st.autograd.gradcheck(lambda t: tuple(L.slogdet(t)), (x,))
