"""The LU family (``lu_family.py``): ``st.linalg.lu``, ``lu_factor``, ``lu_factor_ex``,
``lu_solve`` and ``st.lu_unpack`` against NumPy reconstructions and torch's answers (pivots,
info, errors and gradients written here as literals), over batched, rectangular, complex and
split layouts; gradients also against finite differences."""

import math

import numpy as np
import pytest

import sharded as st
from sharded.autograd import gradcheck
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

L = st.linalg
TOL = LINALG_TOL
t = float64_tensor
rng = np.random.default_rng(11)
NAN = math.nan

PLACES = [
    dict(),
    dict(shards=2),  # the first (batch) dim
    dict(shards=2, dim=-2),  # rows
    dict(shards=3, dim=-1),  # columns, uneven
    dict(layout=st.Layout.replicated()),
]
PLACE_IDS = ["whole", "batch", "rows", "cols", "repl"]


def check_factors(a, P, Lo, U):
    """``P L U == a``, ``P`` a permutation, ``L`` unit lower (m x k), ``U`` upper (k x n)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    p, lo, u = P.numpy(), Lo.numpy(), U.numpy()
    assert p.shape == a.shape[:-2] + (m, m)
    assert lo.shape == a.shape[:-2] + (m, k) and u.shape == a.shape[:-2] + (k, n)
    np.testing.assert_allclose(p @ lo @ u, a, rtol=1e-10, atol=1e-10)
    assert np.array_equal(p.sum(-1), np.ones(p.shape[:-1])) and set(np.unique(p)) <= {0, 1}
    assert np.array_equal(np.tril(lo), lo) and np.all(np.diagonal(lo, 0, -2, -1) == 1)
    assert np.array_equal(np.triu(u), u)
    # partial pivoting: multipliers at most 1; a complex pivot is chosen by |re| + |im|
    # (LAPACK's cabs1), which bounds a multiplier's modulus by sqrt(2) only
    bound = math.sqrt(2) if np.iscomplexobj(lo) else 1
    assert np.all(np.abs(lo) <= bound + 1e-12)


# ------------------------------------------------------------------------------ values
@pytest.mark.parametrize("place", PLACES, ids=PLACE_IDS)
@pytest.mark.parametrize("shape", [(3, 4, 4), (2, 5, 3), (2, 3, 5), (4, 4), (2, 2, 3, 3)])
def test_lu_reconstructs_batched_rectangular(shape, place):
    a = rng.standard_normal(shape)
    x = t(a, **place)
    P, Lo, U = L.lu(x)
    check_factors(a, P, Lo, U)
    LU, piv = L.lu_factor(x)
    assert piv.dtype == st.int32 and LU.dtype == st.float64
    assert tuple(piv.shape) == shape[:-2] + (min(shape[-2:]),)
    P2, L2, U2 = st.lu_unpack(LU, piv)
    assert_matches_numpy(P2, P.numpy())
    assert_matches_numpy(L2, Lo.numpy(), **TOL)
    assert_matches_numpy(U2, U.numpy(), **TOL)
    LU3, piv3, info = L.lu_factor_ex(x)
    assert info.dtype == st.int32 and tuple(info.shape) == shape[:-2]
    assert np.all(info.numpy() == 0) and np.array_equal(piv3.numpy(), piv.numpy())


def test_torch_literals():
    """Pivots, packed factors and info as torch (LAPACK getrf) returns them."""
    P, Lo, U = L.lu(t([[1, 2], [3, 4], [5, 6]]))
    assert P.tolist() == [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    assert_matches_numpy(Lo, np.array([[1, 0], [0.2, 1], [0.6, 0.5]]), **TOL)
    assert_matches_numpy(U, np.array([[5, 6], [0, 0.8]]), **TOL)
    LU, piv = L.lu_factor(t([[1, 2], [3, 4], [5, 6]]))
    assert piv.tolist() == [3, 3]
    assert_matches_numpy(LU, np.array([[5, 6], [0.2, 0.8], [0.6, 0.5]]), **TOL)
    LU, piv = L.lu_factor(t([[1, 2, 3], [4, 5, 6]]))
    assert piv.tolist() == [2, 2]
    assert_matches_numpy(LU, np.array([[4, 5, 6], [0.25, 0.75, 1.5]]), **TOL)
    # singular: getrf goes on past the zero pivot and reports its column in info
    LU, piv, info = L.lu_factor_ex(t([[1, 2, 3], [2, 4, 6], [1, 1, 1]]))
    assert piv.tolist() == [2, 3, 3] and info.item() == 3
    assert_matches_numpy(LU, np.array([[2, 4, 6], [0.5, -1, -2], [0.5, 0, 0]]), **TOL)
    LU, piv, info = L.lu_factor_ex(st.zeros(3, 3))
    assert piv.tolist() == [1, 2, 3] and info.item() == 1 and LU.abs().sum().item() == 0
    assert L.lu(st.zeros(3, 3)).P.tolist() == np.eye(3).tolist()
    # ties: the first largest |a| (idamax); complex magnitudes are |re| + |im| (izamax)
    assert L.lu_factor(t([[-1, 2], [1, 3]])).pivots.tolist() == [1, 2]
    z = st.tensor([[1 + 1j, 2], [1.5, 3]], dtype=st.complex128)
    LU, piv = L.lu_factor(z)
    assert piv.tolist() == [1, 2] and LU.dtype == st.complex128
    assert_matches_numpy(LU, np.array([[1 + 1j, 2], [0.75 - 0.75j, 1.5 + 1.5j]]), **TOL)
    # NaN: idamax's running max never moves to a NaN after the first entry
    assert L.lu_factor_ex(t([[1, 2], [NAN, 1], [3, 0]])).pivots.tolist() == [3, 2]
    LU, piv, info = L.lu_factor_ex(t([[NAN, 2], [1, 1]]))
    assert piv.tolist() == [1, 2] and info.item() == 0


def test_dtypes_complex_and_float32():
    a = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
    P, Lo, U = L.lu(st.from_numpy(a, shards=2))
    assert P.dtype == Lo.dtype == U.dtype == st.complex128
    check_factors(a, P, Lo, U)
    f = L.lu(st.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert f.P.dtype == f.L.dtype == f.U.dtype == st.float32
    assert L.lu_factor(st.eye(2, dtype=st.complex64)).LU.dtype == st.complex64


def test_empty_shapes():
    P, Lo, U = L.lu(st.zeros(3, 0))
    assert P.tolist() == np.eye(3).tolist() and Lo.shape == (3, 0) and U.shape == (0, 0)
    P, Lo, U = L.lu(st.zeros(0, 3))
    assert P.shape == (0, 0) and Lo.shape == (0, 0) and U.shape == (0, 3)
    LU, piv, info = L.lu_factor_ex(st.zeros(2, 3, 0))
    assert LU.shape == (2, 3, 0) and piv.shape == (2, 0) and info.tolist() == [0, 0]
    LU, piv, info = L.lu_factor_ex(st.zeros(0, 3, 3))
    assert LU.shape == (0, 3, 3) and piv.shape == (0, 3) and info.shape == (0,)


def test_lu_unpack_flags_and_integer_data():
    LU, piv = L.lu_factor(t([[1, 2], [3, 4], [5, 6]]))
    P, Lo, U = st.lu_unpack(LU, piv, unpack_data=False)
    assert P.tolist() == [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    assert Lo.shape == U.shape == (0,) and Lo.dtype == st.float64
    P, Lo, U = st.lu_unpack(LU, piv, unpack_pivots=False)
    assert P.shape == (0,) and Lo.shape == (3, 2) and U.shape == (2, 2)
    LU, piv = L.lu_factor(t(rng.standard_normal((2, 3, 3))))
    P, Lo, U = st.lu_unpack(LU, piv[0])  # pivots broadcast over LU's batch, as torch
    assert P.shape == (2, 3, 3) and np.array_equal(P.numpy()[1], P.numpy()[0])
    with pytest.raises(st.ShapeError, match="do not fit"):
        st.lu_unpack(LU[0], piv)
    P, Lo, U = st.lu_unpack(st.zeros(3, 3, dtype=st.int64), st.tensor([3, 2, 3], dtype=st.int32))
    assert P.dtype == st.int64 and P.tolist() == [[0, 0, 1], [0, 1, 0], [1, 0, 0]]
    assert Lo.tolist() == np.eye(3).tolist()


# ------------------------------------------------------------------------------ lu_solve
@pytest.mark.parametrize("place", PLACES, ids=PLACE_IDS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(place, left, adjoint):
    a = rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))
    b = rng.standard_normal((3, 4, 2) if left else (3, 2, 4)) + 0j
    LU, piv = L.lu_factor(st.from_numpy(a, **place))
    x = L.lu_solve(LU, piv, st.from_numpy(b, shards=2), left=left, adjoint=adjoint)
    op = a.conj().transpose(0, 2, 1) if adjoint else a
    ref = np.linalg.solve(op, b) if left else np.linalg.solve(op.transpose(0, 2, 1), b.mT).mT
    assert_matches_numpy(x, ref, **TOL)


def test_lu_solve_broadcasts_b_and_torch_literals():
    a = rng.standard_normal((4, 4))
    b = rng.standard_normal((5, 4, 3))
    LU, piv = L.lu_factor(t(a))
    assert_matches_numpy(L.lu_solve(LU, piv, t(b, shards=2)), np.linalg.solve(a, b), **TOL)
    LU, piv = L.lu_factor(t([[2, 1, 1], [4, -6, 0], [-2, 7, 2]]))
    assert piv.tolist() == [2, 2, 3]
    x = L.lu_solve(LU, piv, t([[1, 0], [2, 1], [0, 3]]))
    assert_matches_numpy(x, np.array([[0.125, -1.4375], [-0.25, -1.125], [1.0, 4.0]]), **TOL)
    # a singular factor solves to inf/NaN without an error, as getrs
    LU, piv, _ = L.lu_factor_ex(st.zeros(2, 2, dtype=st.float64))
    assert not np.isfinite(L.lu_solve(LU, piv, st.ones(2, 1, dtype=st.float64)).numpy()).any()


# ------------------------------------------------------------------------------ errors
def test_errors_match_torch():
    a = st.eye(3, dtype=st.float64)
    for bad in (st.eye(2, dtype=st.int64), st.eye(2, dtype=st.float16), st.eye(2) > 0):
        for fn in (L.lu, L.lu_factor, L.lu_factor_ex):
            with pytest.raises(NotImplementedError, match="lu_cpu"):  # torch's error
                fn(bad)
    with pytest.raises(RuntimeError, match="2 or more dimensions"):
        L.lu(st.ones(3))
    for fn in (L.lu, L.lu_factor, L.lu_factor_ex):
        with pytest.raises(st.ArgumentError, match="without pivoting is not implemented"):
            fn(a, pivot=False)
    # lu_factor (and _ex with check_errors) refuse a zero pivot; lu and lu_factor_ex do not
    with pytest.raises(L.LinAlgError, match=r"U\[2,2\] is zero"):
        L.lu_factor(t([[1, 2], [2, 4]]))
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 1\): U\[1,1\] is zero"):
        L.lu_factor(st.stack([a, st.zeros(3, 3, dtype=st.float64)]), pivot=True)
    with pytest.raises(RuntimeError, match="lu_factor_ex"):
        L.lu_factor_ex(st.zeros(2, 2), check_errors=True)
    LU, piv = L.lu_factor(a)
    b = st.ones(3, 2, dtype=st.float64)
    with pytest.raises(st.ShapeError, match="at least 2 dimensions"):
        L.lu_solve(LU, piv, st.ones(3, dtype=st.float64))
    with pytest.raises(TypeError, match="int32"):
        L.lu_solve(LU, piv.long(), b)
    with pytest.raises(TypeError, match="same dtype"):
        L.lu_solve(LU, piv, st.ones(3, 2))
    with pytest.raises(st.ShapeError, match="AX = B"):
        L.lu_solve(LU, piv, st.ones(2, 3, dtype=st.float64))
    with pytest.raises(st.ShapeError, match="XA = B"):
        L.lu_solve(LU, piv, b, left=False)
    with pytest.raises(st.ShapeError, match="Number of pivots"):
        L.lu_solve(LU, piv[:2], b)
    with pytest.raises(st.ShapeError, match="square"):
        L.lu_solve(LU[:2], piv[:2], b[:2])
    with pytest.raises(TypeError, match="floating point"):
        L.lu_solve(LU.long(), piv, b.long())
    # pivot values are checked by the workers: raised at the next read, an IndexError
    with pytest.raises(IndexError, match="between 1 and 3"):
        L.lu_solve(LU, st.tensor([4, 3, 3], dtype=st.int32), b).tolist()
    with pytest.raises(IndexError, match="between 1 and 3"):
        st.lu_unpack(LU, st.tensor([0, 3, 3], dtype=st.int32))[0].tolist()
    with pytest.raises(TypeError, match="int32"):
        st.lu_unpack(LU, piv.long())
    with pytest.raises(RuntimeError, match="2 or more dimensions"):
        st.lu_unpack(LU[0], piv)
    assert np.array_equal(LU.numpy(), np.eye(3)) and piv.tolist() == [1, 2, 3]  # intact


# ------------------------------------------------------------------------------ gradients
A3 = [[2, 1, 1], [4, -6, 0], [-2, 7, 2]]


@pytest.mark.parametrize("place", [dict(), dict(shards=2, dim=-2)], ids=["whole", "rows"])
def test_gradients_match_torch_literals(place):
    w = np.arange(9.0).reshape(3, 3)
    x = st.from_numpy(np.array(A3, float), requires_grad=True, **place)
    _, Lo, U = L.lu(x)
    ((t(w) * Lo).sum() + (t(w.T) * U).sum()).backward()
    ref = [[7.125, 4.25, -1.0], [-3.0, 0.75, 10.5], [1.125, -0.25, 8.0]]
    assert_matches_numpy(x.grad, np.array(ref), **TOL)
    x = st.from_numpy(np.array(A3, float), requires_grad=True, **place)
    (t(w) * L.lu_factor(x).LU).sum().backward()
    ref = [[7.125, 4.25, -3.0], [-3.0, -1.25, 7.5], [1.125, -0.25, 8.0]]
    assert_matches_numpy(x.grad, np.array(ref), **TOL)
    for a, ref in [
        ([[1, 2], [3, 4], [5, 6]], [[-1.45, 1.375], [-1.3, 1.25], [3.07, 0.975]]),  # tall
        ([[1, 2, 3], [4, 5, 6]], [[-5.25, 2.0, 2.0], [3.3125, 1.5, 1.5]]),  # wide
    ]:
        x = st.from_numpy(np.array(a, float), requires_grad=True, **place)
        _, Lo, U = L.lu(x)
        (Lo.sum() + 2 * U.sum()).backward()
        assert_matches_numpy(x.grad, np.array(ref), **TOL)
    LU, piv = L.lu_factor(t(A3))
    LU.requires_grad_(True)
    b = st.from_numpy(np.array([[1.0, 0], [2, 1], [0, 3]]), requires_grad=True)
    L.lu_solve(LU, piv, b).sum().backward()
    ref = [[0.328125, 0.34375, -1.25], [-0.75, 0.859375, -3.125], [-1.125, 0.1875, -1.875]]
    assert_matches_numpy(LU.grad, np.array(ref), **TOL)
    assert_matches_numpy(b.grad, np.array([[0.25, 0.25], [0.3125, 0.3125], [0.375, 0.375]]), **TOL)


def leaf(a, **place):
    return st.from_numpy(np.asarray(a), requires_grad=True, **place)


@pytest.mark.parametrize("shape", [(2, 3, 3), (3, 5), (4, 2)], ids=["square", "wide", "tall"])
@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
def test_gradcheck_lu_and_lu_factor(shape, cplx):
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
    assert gradcheck(lambda x: L.lu(x)[1:], (leaf(a, shards=2),))
    assert gradcheck(lambda x: L.lu_factor(x).LU, (leaf(a),))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_gradcheck_lu_solve(left, adjoint):
    a = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    b = rng.standard_normal((2, 3, 2) if left else (2, 2, 3)) + 0j
    LU, piv = L.lu_factor(st.from_numpy(a))

    def fn(lu, rhs):
        return L.lu_solve(lu, piv, rhs, left=left, adjoint=adjoint)

    assert gradcheck(fn, (leaf(LU.numpy()), leaf(b, shards=2)))
