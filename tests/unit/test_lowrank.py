"""st.svd_lowrank and st.pca_lowrank (randomized: sharded's own generator) checked by the
properties torch's results have: singular values close to torch's exact ones (literals
below), orthonormal factors, a small reconstruction error; whole and with the batch split."""

import numpy as np
import pytest

import sharded as st

# a 12 x 9 matrix of rank 3 rounded to 2 decimals (from torch.manual_seed(0))
A = [
    [1.44, -7.49, -1.74, -2.96, 1.84, -1.39, 0.53, -2.64, 1.6],
    [-0.87, 1.05, 1.52, 0.32, -1.86, 2.38, 0.18, -0.29, 0.37],
    [0.11, -3.53, 0.05, -1.25, -0.17, 0.8, 0.32, -1.68, 0.86],
    [-1.4, 5.54, 0.88, 3.18, -0.64, 0.19, -0.95, 2.18, -2.7],
    [-1.78, 1.42, 1.56, 2.01, -1.55, 2.14, -0.6, -0.09, -1.85],
    [0.19, 0.95, 0.35, -0.4, -0.57, 0.51, 0.34, 0.25, 0.92],
    [0.6, -5.12, -0.6, -1.92, 0.55, 0.04, 0.41, -2.1, 1.16],
    [1.33, -1.1, -1.69, -0.98, 1.93, -2.57, 0.1, 0.34, 0.46],
    [-0.33, 2.62, 0.6, 0.74, -0.7, 0.52, -0.04, 0.92, -0.15],
    [-0.35, -0.47, 0.07, 0.42, 0.03, 0.12, -0.23, -0.24, -0.67],
    [1.01, -3.46, -1.33, -1.46, 1.48, -1.52, 0.2, -0.95, 0.68],
    [-1.71, -2.69, 0.4, 1.86, 0.05, 0.8, -1.07, -1.39, -3.09],
]
SV = [15.498910316298726, 6.928146569663641, 5.0847251164997465]  # torch.linalg.svdvals(A)[:3]
SV_C = [15.229747602205391, 6.360972175865527, 5.023156492012931]  # of A less its column means
SV4 = 0.01358591099263159  # the 4th: the best rank-3 error


def _props(U, S, V, a, sv, q):
    U, S, V = U.detach().numpy(), S.detach().numpy(), V.detach().numpy()
    assert U.shape == a.shape[:-1] + (q,) and V.shape == a.shape[:-2] + (a.shape[-1], q)
    eye = np.eye(q)
    np.testing.assert_allclose(
        np.swapaxes(U, -1, -2) @ U, np.broadcast_to(eye, U.shape[:-2] + eye.shape), atol=1e-10
    )
    np.testing.assert_allclose(
        np.swapaxes(V, -1, -2) @ V, np.broadcast_to(eye, V.shape[:-2] + eye.shape), atol=1e-10
    )
    np.testing.assert_allclose(S[..., :3], np.broadcast_to(sv, S.shape[:-1] + (3,)), rtol=1e-8)
    err = np.linalg.norm((U * S[..., None, :]) @ np.swapaxes(V, -1, -2) - a, 2, axis=(-2, -1))
    assert np.all(err < 1.01 * SV4)  # within rounding of the best rank-q error


def test_svd_lowrank_properties_and_seed():
    a = np.array(A)
    st.manual_seed(1)
    U, S, V = st.svd_lowrank(st.tensor(a), q=4)
    _props(U, S, V, a, SV, 4)
    st.manual_seed(1)
    assert np.array_equal(st.svd_lowrank(st.tensor(a), q=4)[1].numpy(), S.numpy())  # reproducible
    U, S, V = st.svd_lowrank(st.tensor(a.T))  # wide: q=6 by default
    _props(U, S, V, a.T, SV, 6)
    # M: the SVD of A - M (M broadcast), here the column means
    U, S, V = st.svd_lowrank(st.tensor(a), q=4, M=st.tensor(a.mean(0)))
    np.testing.assert_allclose(S.numpy()[:3], SV_C, rtol=1e-8)


def test_lowrank_split_batch_and_gradients():
    a = np.stack([np.array(A), -2 * np.array(A)])
    x = st.tensor(a, shards=2, requires_grad=True)
    U, S, V = st.svd_lowrank(x, q=5)
    assert U.layout.grid[0] == 2  # the batch split stays
    np.testing.assert_allclose(S.detach().numpy()[1, :3], 2 * np.array(SV), rtol=1e-8)
    U, S, V = st.pca_lowrank(x, q=4)
    np.testing.assert_allclose(S.detach().numpy()[:, :3], [SV_C, 2 * np.array(SV_C)], rtol=1e-8)
    # exact for a full-rank q: S is a function of A alone, whatever the random draw
    b = st.tensor(np.array(A)[:4, :3].reshape(1, 4, 3).repeat(2, 0), shards=2, requires_grad=True)
    assert st.autograd.gradcheck(lambda t: st.svd_lowrank(t, q=3)[1], (b,))
    assert st.autograd.gradcheck(lambda t: st.pca_lowrank(t, q=3)[1], (b,))


def test_pca_lowrank_and_errors():
    a = st.tensor(A, dtype=st.float64)
    U, S, V = st.pca_lowrank(a)  # q = min(6, m, n)
    assert S.shape == (6,)
    U, S, V = st.pca_lowrank(a, q=3, center=False)
    np.testing.assert_allclose(S.numpy(), SV, rtol=1e-6)
    with pytest.raises(
        st.ArgumentError,
        match=r"q\(=10\) must be non-negative integer and not greater than min\(m, n\)=9",
    ):
        st.pca_lowrank(a, q=10)
    with pytest.raises(st.ArgumentError, match=r"niter\(=-1\) must be non-negative"):
        st.pca_lowrank(a, niter=-1)
    with pytest.raises(st.ArgumentError, match=r"svd_lowrank: niter\(=-1\)"):
        st.svd_lowrank(a, niter=-1)
    with pytest.raises(
        st.ShapeError, match=r"A must have at least 2 dimensions \(got shape \[9\]\)"
    ):
        st.svd_lowrank(a[0])
    with pytest.raises(st.DTypeError, match="floating point or complex tensor, got int64"):
        st.pca_lowrank(a.long())
    with pytest.raises(st.DTypeError, match="M has dtype float32, A has dtype float64"):
        st.svd_lowrank(a, M=st.zeros(9, dtype=st.float32))
