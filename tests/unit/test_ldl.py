"""st.linalg.ldl_factor / ldl_factor_ex / ldl_solve against torch 2.13's values (literals
below: LAPACK's sytrf/hetrf and sytrs/hetrs), whole and with the batch split, with torch's
errors."""

import numpy as np
import pytest

import sharded as st

A = [[4.0, 1.0, 2.0], [1.0, -3.0, 0.5], [2.0, 0.5, 5.0]]
A2 = [[0.0, 1.0, 2.0], [1.0, 0.0, 0.5], [2.0, 0.5, 0.0]]  # zero diagonal: a 2 x 2 pivot
B = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
# torch.linalg.ldl_factor(A), ldl_factor(A2) and ldl_solve(LD, pivots, B)
LD_A = [[4.0, 0.0, 0.0], [0.25, -3.25, 0.0], [0.5, 0.0, 4.0]]
LD_A2 = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.25, 0.5, -0.5]]
PIV_A2 = [-3, -3, 3]
X_A2 = [[2.625, 3.25], [-0.5, -1.0], [0.75, 1.5]]
H = [[2, 1 + 1j, 0.5j], [1 - 1j, -1, 2], [-0.5j, 2, 0.5]]
LD_H = [[2, 0, 0], [0.5 - 0.5j, -2, 0], [-0.25j, -0.875 - 0.125j, 1.9375]]
X_H = [
    [-0.5161290322580645 - 1.806451612903226j, -0.12903225806451601 - 2.193548387096774j],
    [2.032258064516129 - 0.25806451612903225j, 2.451612903225806 - 0.25806451612903225j],
    [3.6774193548387095 + 0.5161290322580645j, 4.387096774193548 + 0.9032258064516129j],
]
S = [[0, 1 + 1j, 0.5j], [1 + 1j, 0, 2], [0.5j, 2, 0.5]]  # complex symmetric
LD_S = [[0, 0, 0], [1 + 1j, 0, 0], [1 - 1j, 0.25 + 0.25j, -0.5 - 1j]]
X_S = [[0.5 - 5.5j, 2 - 6j], [1.5 - 0.75j, 2 - 1j], [-1.5 + 2.5j, -2 + 2j]]


def f64(x, **kw):
    return st.tensor(x, dtype=st.float64, **kw)


def test_ldl_matches_torch_real_and_complex():
    LD, piv = st.linalg.ldl_factor(f64(A))
    np.testing.assert_allclose(LD.numpy(), LD_A, atol=1e-12)
    assert piv.dtype == st.int32 and piv.tolist() == [1, 2, 3]
    LD, piv, info = st.linalg.ldl_factor_ex(f64(A2))
    np.testing.assert_allclose(LD.numpy(), LD_A2, atol=1e-12)
    assert piv.tolist() == PIV_A2 and info.dtype == st.int32 and info.item() == 0
    np.testing.assert_allclose(st.linalg.ldl_solve(LD, piv, f64(B)).numpy(), X_A2, atol=1e-12)
    # int64 pivots are taken too, as torch
    np.testing.assert_allclose(st.linalg.ldl_solve(LD, piv.long(), f64(B)).numpy(), X_A2)
    c = st.complex128
    LD, piv = st.linalg.ldl_factor(st.tensor(H, dtype=c), hermitian=True)
    np.testing.assert_allclose(LD.numpy(), LD_H, atol=1e-12)
    assert piv.tolist() == [1, 2, 3]
    x = st.linalg.ldl_solve(LD, piv, st.tensor(B, dtype=c), hermitian=True)
    np.testing.assert_allclose(x.numpy(), X_H, atol=1e-12)
    LD, piv = st.linalg.ldl_factor(st.tensor(S, dtype=c))
    np.testing.assert_allclose(LD.numpy(), LD_S, atol=1e-12)
    assert piv.tolist() == [-2, -2, 3]
    np.testing.assert_allclose(
        st.linalg.ldl_solve(LD, piv, st.tensor(B, dtype=c)).numpy(), X_S, atol=1e-12
    )
    # empty batches and matrices, as torch
    LD, piv = st.linalg.ldl_factor(st.zeros(0, 3, 3, dtype=st.float64))
    assert LD.shape == (0, 3, 3) and piv.shape == (0, 3)
    assert st.linalg.ldl_factor(st.zeros(0, 0)).pivots.shape == (0,)


def test_ldl_split_batch_and_broadcast():
    a = f64(np.stack([A, A2, A2, A]), shards=2)
    LD, piv, info = st.linalg.ldl_factor_ex(a)
    assert LD.layout.grid[0] == 2  # each block factored where it lies
    np.testing.assert_allclose(LD.numpy()[1], LD_A2, atol=1e-12)
    np.testing.assert_allclose(LD.numpy()[3], LD_A, atol=1e-12)
    assert piv.tolist()[2] == PIV_A2 and info.tolist() == [0, 0, 0, 0]
    x = st.linalg.ldl_solve(LD, piv, f64(B))  # B broadcast over the batch
    assert x.shape == (4, 3, 2)
    np.testing.assert_allclose(x.numpy()[2], X_A2, atol=1e-12)
    np.testing.assert_allclose(np.stack([A, A2, A2, A]) @ x.numpy(), np.stack([B] * 4), atol=1e-12)
    # a split matrix (no batch) is gathered and factored whole
    LD, piv = st.linalg.ldl_factor(f64(A2, shards=2))
    np.testing.assert_allclose(LD.numpy(), LD_A2, atol=1e-12)


def test_ldl_errors():
    a = f64(A)
    with pytest.raises(st.ShapeError, match="must have at least 2 dimensions"):
        st.linalg.ldl_factor(a[0])
    with pytest.raises(st.ShapeError, match="square matrices, but they are 2 by 3 matrices"):
        st.linalg.ldl_factor_ex(a[:2])
    with pytest.raises(st.DTypeError, match="floating point or complex tensor as input. Got int64"):
        st.linalg.ldl_factor(a.long())
    with pytest.raises(st.UnsupportedDType, match="not implemented for 'float16'"):
        st.linalg.ldl_factor(a.half())
    z = st.zeros(2, 3, 3, dtype=st.float64)
    assert st.linalg.ldl_factor_ex(z).info.tolist() == [1, 1]
    with pytest.raises(
        st.linalg.LinAlgError, match=r"\(Batch element 0\): .*D\[1,1\] is exactly zero"
    ):
        st.linalg.ldl_factor(z)
    with pytest.raises(
        st.linalg.LinAlgError, match=r"ldl_factor_ex: The factorization .* D\[1,1\]"
    ):
        st.linalg.ldl_factor_ex(z[0], check_errors=True)
    LD, piv = st.linalg.ldl_factor(a)
    b = f64(B)
    with pytest.raises(st.ShapeError, match="tensor B must have at least 2 dimensions"):
        st.linalg.ldl_solve(LD, piv, b[0])
    with pytest.raises(st.ShapeError, match="each A matrix is 3 by 3 but each b matrix is 2 by 2"):
        st.linalg.ldl_solve(LD, piv, b[:2])
    with pytest.raises(st.ShapeError, match=r"pivots with shape \[2\] instead"):
        st.linalg.ldl_solve(LD, piv[:2], b)
    with pytest.raises(st.DTypeError, match="Expected pivots to be integers. Got float64"):
        st.linalg.ldl_solve(LD, piv.double(), b)
    with pytest.raises(st.DTypeError, match="b of type float32 and A of type float64"):
        st.linalg.ldl_solve(LD, piv, b.float())
    with pytest.raises(IndexError, match="invalid pivot 5 for LD of size 3"):
        st.linalg.ldl_solve(LD, st.tensor([5, 2, 3], dtype=st.int32), b).numpy()
    with pytest.raises(IndexError, match="invalid pivot -1"):  # a negative pivot not in a pair
        st.linalg.ldl_solve(LD, st.tensor([1, 2, -1], dtype=st.int32), b).numpy()
