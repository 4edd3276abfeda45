"""st.linalg.householder_product and st.orgqr against torch 2.13's values and gradients
(literals below), whole and with the batch split, with torch's errors."""

import numpy as np
import pytest

import sharded as st

A = [[0.5, -1.2, 0.3], [0.4, 0.7, -0.2], [-0.6, 0.1, 0.9], [0.2, -0.3, 0.5]]
TAU = [1.3, 0.6, 1.1]
# torch.linalg.householder_product(A, TAU) and with TAU[:1]
Q3 = [
    [-0.3, -0.3016, 0.098852],
    [-0.52, 0.27936, -0.0534592],
    [0.78, 0.12096, -0.1686112],
    [-0.26, 0.11968, -0.5023296],
]
Q1 = [[-0.3, -0.52, 0.78], [-0.52, 0.792, 0.312], [0.78, 0.312, 0.532], [-0.26, -0.104, 0.156]]
# gradients of (householder_product(A, TAU) * (arange(12).reshape(4, 3) - 5)).sum()
GRAD_A = [
    [0.0, 0.0, 0.0],
    [4.85836, 0.0, 0.0],
    [-2.476968, 0.923568, 0.0],
    [-7.481916, -4.425216, -7.5920592],
]
GRAD_TAU = [6.393456, 0.654988, -3.654312]


def test_householder_product_matches_torch():
    a = st.tensor(A, dtype=st.float64, requires_grad=True)
    tau = st.tensor(TAU, dtype=st.float64, requires_grad=True)
    q = st.linalg.householder_product(a, tau)
    np.testing.assert_allclose(q.detach().numpy(), Q3, atol=1e-12)
    np.testing.assert_allclose(st.orgqr(a, tau[:1]).detach().numpy(), Q1, atol=1e-12)
    (q * st.tensor(np.arange(12.0).reshape(4, 3) - 5)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), GRAD_A, atol=1e-12)
    np.testing.assert_allclose(tau.grad.numpy(), GRAD_TAU, atol=1e-12)
    ac = st.tensor([[1 + 1j, 0.5j], [0.5 - 0.5j, 1.0], [0.2j, -0.3 + 0.1j]], dtype=st.complex128)
    got = ac.orgqr(st.tensor([0.8 + 0.4j, 1.2 - 0.3j], dtype=st.complex128))
    want = [[0.2 - 0.4j, 0.2272 + 0.1296j], [-0.6 + 0.2j, -0.0216 + 0.2512j]]
    np.testing.assert_allclose(got.numpy()[:2], want, atol=1e-12)
    # no reflector: the identity (zero gradients, as torch's)
    assert st.linalg.householder_product(st.ones(3, 2), st.ones(0)).tolist() == [
        [1.0, 0.0],
        [0.0, 1.0],
        [0.0, 0.0],
    ]


def test_householder_product_split_batch_and_gradcheck():
    a = np.stack([np.array(A), np.array(A)[::-1]])
    tau = np.stack([TAU, TAU[::-1]])
    x = st.tensor(a, shards=2, requires_grad=True)
    t = st.tensor(tau, shards=2, requires_grad=True)
    q = st.linalg.householder_product(x, t)
    assert q.layout.grid[0] == 2  # the batch split stays where it is
    np.testing.assert_allclose(q.detach().numpy()[0], Q3, atol=1e-12)
    assert st.autograd.gradcheck(st.linalg.householder_product, (x, t))


def test_householder_product_errors():
    a, tau = st.tensor(A, dtype=st.float64), st.tensor(TAU, dtype=st.float64)
    with pytest.raises(st.ShapeError, match="input must have at least 2 dimensions"):
        st.linalg.householder_product(a[0], tau)
    with pytest.raises(st.ShapeError, match=r"shape\[-2\] must be greater than or equal"):
        st.linalg.householder_product(a.mT, tau[:2])
    with pytest.raises(st.ShapeError, match=r"tau.shape\[-1\] \(got 3 and 4\)"):
        st.linalg.householder_product(a, st.ones(4, dtype=st.float64))
    with pytest.raises(st.ShapeError, match="tau.ndim equal to 2 and input.ndim is equal to 2"):
        st.linalg.householder_product(a, tau[None])
    with pytest.raises(st.ShapeError, match=r"equal to input.shape\[:-2\], but got \[3\]"):
        st.linalg.householder_product(a.expand(2, 4, 3), st.ones(3, 2, dtype=st.float64))
    with pytest.raises(st.DTypeError, match="tau dtype float32 does not match input dtype float64"):
        st.linalg.householder_product(a, tau.float())
    with pytest.raises(st.UnsupportedDType, match="not implemented for 'int64'"):
        st.orgqr(a.long(), tau.long())
