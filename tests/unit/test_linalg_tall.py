"""The distributed tall QR (CholeskyQR2 / TSQR) and the tall lstsq and svd through it
(``sharded/ops/linalg/tall.py``), on even, uneven, column-split and block layouts."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import LINALG_TOL, assert_matches_numpy, current_executor, float64_tensor

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
ex = current_executor
t = float64_tensor


TALL_PLACES = [
    dict(shards=2),
    dict(shards=3),
    dict(layout=st.Layout(chunks=(40, 0, 37, 3, 20))),
    dict(shards=3, dim=1),
    dict(layout=st.Layout.block((2, 2))),
]
TALL_IDS = ["2", "3", "uneven-empty-short", "cols", "block"]


@pytest.mark.parametrize("place", TALL_PLACES, ids=TALL_IDS)
def test_tall_qr_lstsq_svd(place):
    a = rng.standard_normal((100, 7))
    x = t(a, **place)
    moved = ex().bytes_moved
    q, r = L.qr(x)
    if place == dict(shards=2):  # only k x k matrices travel
        assert ex().bytes_moved - moved < 100 * 7 * 8 / 4
    qn, rn = q.numpy(), r.numpy()
    assert r.layout.is_replicated and q.layout.grid[1] == 1
    assert np.abs(qn.T @ qn - np.eye(7)).max() < 1e-10
    assert np.abs(qn @ rn - a).max() < 1e-10 and np.all(np.diag(rn) >= 0)
    assert np.allclose(np.triu(rn), rn)
    ill = a.copy()
    ill[:, 3] = ill[:, 2] + 1e-9 * ill[:, 1]  # cond ~ 1e9: the TSQR fallback
    q2, r2 = L.qr(t(ill, **place))
    q2n = q2.numpy()
    assert np.abs(q2n.T @ q2n - np.eye(7)).max() < 1e-10
    assert np.abs(q2n @ r2.numpy() - ill).max() < 1e-10
    with pytest.raises(L.LinAlgError, match="method='tsqr'"):
        L.qr(t(ill, **place), method="cholqr2")
    q3, r3 = L.qr(x, method="tsqr")  # the same unique QR by the other algorithm
    assert_matches_numpy(q3, qn, **TOL)
    assert_matches_numpy(r3, rn, **TOL)
    b = rng.standard_normal((100, 3))
    sol = L.lstsq(x, t(b, shards=2), driver="gels")  # gels: the residuals of a tall system
    ref = np.linalg.lstsq(a, b, rcond=None)
    assert_matches_numpy(sol.solution, ref[0], **TOL)
    assert_matches_numpy(sol.residuals, ref[1], rtol=1e-9)
    assert_matches_numpy(L.lstsq(x, t(b[:, 0])).solution, ref[0][:, 0], **TOL)
    u, s, vh = L.svd(x, full_matrices=False)
    assert_matches_numpy(s, np.linalg.svd(a, compute_uv=False), **TOL)
    assert_matches_numpy((u * s) @ vh, a, **TOL)
    assert u.layout.grid[1] == 1 and u.layout.grid[0] > 1


@pytest.mark.parametrize("place", TALL_PLACES, ids=TALL_IDS)
@pytest.mark.parametrize("dtype", [st.complex64, st.complex128], ids=["c64", "c128"])
def test_tall_qr_lstsq_svd_complex(place, dtype):
    """Complex input: Q unitary in A's row layout, R with a real positive diagonal, by both
    algorithms; lstsq's residuals and the singular values are real, as torch."""
    err = 1e-10 if dtype == st.complex128 else 1e-4
    a = rng.standard_normal((100, 6)) + 1j * rng.standard_normal((100, 6))
    x = st.tensor(a, dtype=dtype, **place)
    for method in ("cholqr2", "tsqr"):
        q, r = L.qr(x, method=method)
        qn, rn = q.numpy(), r.numpy()
        assert q.dtype == r.dtype == dtype and q.layout.grid[1] == 1 and r.layout.is_replicated
        assert np.abs(qn.conj().T @ qn - np.eye(6)).max() < err
        assert np.abs(qn @ rn - a).max() < err and np.allclose(np.triu(rn), rn)
        assert np.all(np.diag(rn).real > 0) and np.all(np.diag(rn).imag == 0)
    b = rng.standard_normal((100, 2)) + 1j
    sol = L.lstsq(x, st.tensor(b, dtype=dtype, shards=2), driver="gelss")
    ref = np.linalg.lstsq(a, b, rcond=None)
    assert sol.residuals.dtype == sol.singular_values.dtype == D_REAL[dtype]
    assert_matches_numpy(sol.solution, ref[0], rtol=err, atol=err)
    assert_matches_numpy(sol.residuals, ref[1], rtol=err * 10)
    u, s, vh = L.svd(x, full_matrices=False)
    assert s.dtype == D_REAL[dtype] and u.layout.grid[0] > 1
    assert_matches_numpy(s, np.linalg.svd(a, compute_uv=False), rtol=err, atol=err)
    assert np.abs((u.numpy() * s.numpy()) @ vh.numpy() - a).max() < err * 10
    assert_matches_numpy(L.svdvals(x), np.linalg.svd(a, compute_uv=False), rtol=err, atol=err)


D_REAL = {st.complex64: st.float32, st.complex128: st.float64}


@pytest.mark.parametrize("method", ["cholqr2", "tsqr"])
def test_tall_qr_complex_gradient_matches_batched(method):
    """The tall QR's gradient (``qr_grad``, conjugate transposes) equals the batched one
    (checked against torch in test_linalg) and finite differences."""
    a = rng.standard_normal((30, 4)) + 1j * rng.standard_normal((30, 4))
    w = t(rng.standard_normal((30, 4)))

    def loss(x):
        q, r = L.qr(x, method=method) if x.layout.num_shards > 1 else L.qr(x)
        return (q.abs() ** 2 * w).sum() + (r.abs() ** 2).sum() + (q @ r).imag.sum()

    xs = st.tensor(a, requires_grad=True, shards=3)
    xr = st.tensor(a, requires_grad=True, layout=st.Layout.replicated())
    loss(xs).backward()
    loss(xr).backward()
    assert_matches_numpy(xs.grad, xr.grad.numpy(), dtype=st.complex128, **TOL)
    x = st.tensor(a[:8, :3], requires_grad=True, shards=2)
    assert st.autograd.gradcheck(lambda m: L.qr(m, method=method), (x,))
