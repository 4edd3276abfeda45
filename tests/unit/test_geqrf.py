"""st.geqrf and st.ormqr against torch 2.13's values and gradients (literals below), whole
and with the batch split, with torch's errors."""

import numpy as np
import pytest

import sharded as st

A = [[4.0, 1.0, 2.0], [1.0, -3.0, 0.5], [2.0, 0.5, 5.0], [1.0, 2.0, 3.0]]
# torch.geqrf(A)
QR = [
    [-4.69041575982343, -0.8528028654224418, -4.583815401645625],
    [0.11506929330390492, 3.677326103669251, 1.384405121381365],
    [0.23013858660780984, -0.010681123404801379, -3.9143401517407006],
    [0.11506929330390492, -0.25931243434851653, 0.24609990676238785],
]
TAU = [1.852802865422442, 1.8737872643792637, 1.8857870008216442]
C = np.arange(8.0).reshape(4, 2)
# torch.ormqr(QR, TAU, C), with transpose=True, and ormqr(QR, TAU, C.mT, left=False)
QC = [
    [1.8708605640014453, 1.5506266123765147],
    [0.02146205066622306, -0.8263602327303002],
    [-5.873710402479923, -7.5093120252046495],
    [4.242516498287844, 4.9520620738101115],
]
QTC = [
    [-3.411211461689767, -5.116817192534651],
    [1.3844051213813644, 1.1248291611223589],
    [-5.479099411938419, -6.256031500795293],
    [3.5251281476884633, 4.173129645425313],
]
W = [[1.0, -2], [0.5, 3], [-1, 1], [2, 0.25]]
# gradients of (torch.ormqr(QR, TAU, C, transpose=True) * W).sum()
GRAD_A = [
    [0.0, 0.0, 0.0],
    [23.068811591093358, 0.0, 0.0],
    [18.279434414348668, -19.02858596956201, 0.0],
    [1.2066720384282092, -35.64290066680761, -27.644643850475887],
]
GRAD_TAU = [5.464895983054532, -1.9118963780874116, -3.208986381792378]
GRAD_C = [
    [-1.4407538956698565, 2.428161003930626],
    [0.3677039250450238, -2.2497672549700862],
    [-0.6056954461700492, 0.07879664136489539],
    [1.916286790151068, 1.7603614761646522],
]
AC = [[1 + 1j, 0.5j], [0.5 - 0.5j, 1.0], [0.2j, -0.3 + 0.1j]]
TC = [0.8 + 0.4j, 1.2 - 0.3j]
CC = [[1, 2j], [0.5, -1], [1j, 1 + 1j]]
# torch.ormqr(AC, TC, CC, transpose=True) and ormqr(AC, TC, CC.mT, left=False)
CL = [[-0.26 + 0.38j, -0.28 + 0.84j], [0.05184 + 0.04888j, 0.42032 + 1.17424j]]
CL += [[0.00356 + 0.97852j, 0.42848 + 0.67376j]]
CR = [[0.06 - 0.22j, 0.38096 + 0.55928j, -0.00236 + 0.82212j]]
CR += [[1.64 + 0.12j, 0.23104 + 0.34272j, 0.82896 + 0.58608j]]


def f64(x, **kw):
    return st.tensor(x, dtype=st.float64, **kw)


def test_geqrf_matches_torch_and_q():
    a, tau = st.geqrf(f64(A))
    np.testing.assert_allclose(a.numpy(), QR, atol=1e-12)
    np.testing.assert_allclose(tau.numpy(), TAU, atol=1e-12)
    a2, tau2 = f64(A).geqrf()
    np.testing.assert_allclose(a2.numpy(), QR, atol=1e-12)
    # Q R == A, Q from the reflectors
    q = st.linalg.householder_product(a, tau).numpy()
    np.testing.assert_allclose(q @ np.triu(a.numpy())[:3], A, atol=1e-12)
    assert st.geqrf(st.zeros(0, 3)).tau.shape == (0,)
    x = st.tensor(np.stack([A, np.array(A) * 2]), dtype=st.float32, shards=2)
    a, tau = st.geqrf(x)
    assert a.layout.grid[0] == 2 and a.dtype == st.float32  # the batch split stays
    want = np.triu(QR) * 2 + np.tril(QR, -1)  # 2A: R doubles, the reflectors stay
    np.testing.assert_allclose(a.numpy()[1], want, rtol=1e-5)
    np.testing.assert_allclose(tau.numpy()[1], TAU, rtol=1e-5)


def test_ormqr_matches_torch_with_gradients():
    a = f64(QR, requires_grad=True)
    tau = f64(TAU, requires_grad=True)
    c = f64(C, requires_grad=True)
    np.testing.assert_allclose(st.ormqr(a, tau, c).detach().numpy(), QC, atol=1e-12)
    np.testing.assert_allclose(a.ormqr(tau, c.mT, left=False).detach().numpy(), np.transpose(QTC))
    out = st.ormqr(a, tau, c, transpose=True)
    np.testing.assert_allclose(out.detach().numpy(), QTC, atol=1e-12)
    (out * f64(W)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), GRAD_A, atol=1e-12)
    np.testing.assert_allclose(tau.grad.numpy(), GRAD_TAU, atol=1e-12)
    np.testing.assert_allclose(c.grad.numpy(), GRAD_C, atol=1e-12)
    z = st.complex128
    ac, tc, cc = st.tensor(AC, dtype=z), st.tensor(TC, dtype=z), st.tensor(CC, dtype=z)
    np.testing.assert_allclose(st.ormqr(ac, tc, cc, transpose=True).numpy(), CL, atol=1e-12)
    np.testing.assert_allclose(st.ormqr(ac, tc, cc.mT, left=False).numpy(), CR, atol=1e-12)


def test_ormqr_split_batch_gradcheck():
    a = f64(np.stack([QR, np.array(QR)[:, ::-1]]), shards=2, requires_grad=True)
    tau = f64(np.stack([TAU, TAU[::-1]]), shards=2, requires_grad=True)
    c = f64(np.stack([C, -C]), shards=2, requires_grad=True)
    out = st.ormqr(a, tau, c)
    assert out.layout.grid[0] == 2
    np.testing.assert_allclose(out.detach().numpy()[0], QC, atol=1e-12)
    for left, tr in ((True, True), (False, False)):
        cc = c if left else c.mT

        def f(x, t, y, left=left, tr=tr):
            return st.ormqr(x, t, y, left=left, transpose=tr)

        assert st.autograd.gradcheck(f, (a, tau, cc))


def test_geqrf_ormqr_errors():
    a, tau, c = f64(QR), f64(TAU), f64(C)
    with pytest.raises(st.ShapeError, match="torch.geqrf: input must have at least 2"):
        st.geqrf(a[0])
    with pytest.raises(st.UnsupportedDType, match="\"geqrf_cpu\" not implemented for 'int64'"):
        st.geqrf(a.long())
    with pytest.raises(st.ShapeError, match="input must have at least 2 dimensions"):
        st.ormqr(a[0], tau, c)
    with pytest.raises(st.ShapeError, match="other must have at least 2 dimensions"):
        st.ormqr(a, tau, c[0])
    with pytest.raises(st.ShapeError, match="tau.ndim equal to 2 and input.ndim is equal to 2"):
        st.ormqr(a, tau[None], c)
    with pytest.raises(
        st.ShapeError, match=r"other.shape\[-1\] must be equal to input.shape\[-2\]"
    ):
        st.ormqr(a, tau, c, left=False)
    with pytest.raises(
        st.ShapeError, match=r"equal to min\(other.shape\[-2\], input.shape\[-1\]\)"
    ):
        st.ormqr(a, tau[:2], c)
    with pytest.raises(st.ShapeError, match="other.ndim equal to 3 and input.ndim is equal to 2"):
        st.ormqr(a, tau, c.expand(2, 4, 2))
    with pytest.raises(st.ShapeError, match=r"batch dimensions of other .* but got \[3\]"):
        st.ormqr(a.expand(2, 4, 3), tau.expand(2, 3), c.expand(3, 4, 2))
    with pytest.raises(st.DTypeError, match="input has dtype float64 and tau has dtype float32"):
        st.ormqr(a, tau.float(), c)
    with pytest.raises(st.DTypeError, match="input has dtype float64 and other has dtype float32"):
        st.ormqr(a, tau, c.float())
    with pytest.raises(st.UnsupportedDType, match="\"ormqr_cpu\" not implemented for 'int64'"):
        st.ormqr(a.long(), tau.long(), c.long())
