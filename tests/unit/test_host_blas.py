"""``sharded.backend.host_blas``: gemm with ``beta = 1``, trsm and LAPACK getrf through
SciPy's BLAS, against NumPy (contiguous operands by SciPy's wrappers, strided outputs by its
Cython BLAS); and the fallback when SciPy is not there."""

import itertools

import numpy as np
import pytest

from sharded.backend import host_blas as H

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 1e-4, np.complex64: 1e-4, np.float64: 1e-12, np.complex128: 1e-12}


def _rand(rng, shape, dt, order="C"):
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x, dt, order=order)


pytestmark = pytest.mark.skipif(H._scipy() is None, reason="SciPy is not installed")


@pytest.mark.parametrize("alpha", [-1.0, 0.5])
@pytest.mark.parametrize("dt", DTYPES)
def test_gemm_add_every_memory_order(dt, alpha):
    rng = np.random.default_rng(0)
    for oc, oa, ob in itertools.product("CF", repeat=3):
        a, b = _rand(rng, (7, 5), dt, oa), _rand(rng, (5, 9), dt, ob)
        c = _rand(rng, (7, 9), dt, oc)
        ref = c + alpha * (a @ b)
        assert H.gemm_add(c, a, b, alpha)
        np.testing.assert_allclose(c, ref, rtol=TOL[dt], atol=TOL[dt])


@pytest.mark.parametrize("dt", DTYPES)
def test_gemm_add_strided_views_of_one_buffer(dt):
    rng = np.random.default_rng(1)
    big = _rand(rng, (20, 30), dt)
    for order in "CF":
        big = np.asarray(big, order=order)
        c, a, b = big[3:10, 4:13], big[10:17, 0:5], big[11:16, 14:23]  # disjoint blocks
        ref, rest = c - a @ b, big.copy()
        assert H.gemm_add(c, a, b, -1.0)
        np.testing.assert_allclose(big[3:10, 4:13], ref, rtol=TOL[dt], atol=TOL[dt])
        rest[3:10, 4:13] = big[3:10, 4:13]
        assert (big == rest).all()  # nothing outside the view changed


@pytest.mark.parametrize("dt", DTYPES)
def test_gemm_add_vector_products_are_gemv(dt):
    # a vector operand (1-D, or a matrix of one column or row; contiguous or strided): one
    # gemv, in place; 1-D operands were declined before
    rng = np.random.default_rng(3)
    tol = dict(rtol=TOL[dt], atol=TOL[dt])
    for order in "CF":
        a = _rand(rng, (7, 5), dt, order)
        b = _rand(rng, (5, 9), dt, order)
        x, y = _rand(rng, (10,), dt)[::2], _rand(rng, (14,), dt)[::2]  # strided vectors
        ref = y + 0.5 * (a @ x)
        assert H.gemm_add(y, a, x, 0.5)
        np.testing.assert_allclose(y, ref, **tol)
        v, z = _rand(rng, (5,), dt), _rand(rng, (9,), dt)
        ref = z - v @ b
        assert H.gemm_add(z, v, b, -1.0)  # vector @ matrix
        np.testing.assert_allclose(z, ref, **tol)
        c1, c2 = _rand(rng, (7, 1), dt), _rand(rng, (1, 9), dt)
        r1, r2 = c1 + a @ x[:, None], c2 + v[None] @ b
        assert H.gemm_add(c1, a, x[:, None]) and H.gemm_add(c2, v[None], b)
        np.testing.assert_allclose(c1, r1, **tol)
        np.testing.assert_allclose(c2, r2, **tol)
    s = _rand(rng, (), dt)[()]
    one = np.array([s])
    assert H.gemm_add(one, x[None], x)  # 1 x 1: a dot product
    np.testing.assert_allclose(one, [s + x @ x], **tol)


def test_gemm_add_vector_declines():
    a, x, y = np.ones((4, 3)), np.ones(3), np.ones(4)
    assert not H.gemm_add(y, a, np.ones(4))  # shapes that do not multiply
    assert not H.gemm_add(y[::-1], a, x)  # a negative stride
    assert not H.gemm_add(np.ones(()), x, x)  # 0-d: not a BLAS call
    assert (y == 1).all()


def test_gemm_add_declines_what_it_cannot_address():
    c, a, b = np.ones((4, 4)), np.ones((4, 2)), np.ones((2, 4))
    assert not H.gemm_add(c, a.astype(np.float32), b, -1.0)  # mixed dtypes
    assert not H.gemm_add(c.astype(np.int64), a.astype(np.int64), b.astype(np.int64))
    assert (c == 1).all()
    # no unit stride: the operand is copied, the output computed in a copy and put back
    big = np.ones((8, 8))
    assert H.gemm_add(big[::2, ::2], np.ones((8, 4))[::2, ::2], b)
    assert (big[::2, ::2] == 3).all() and big.sum() == 64 + 2 * 16
    assert H.gemm_add(c, np.ones((4, 0)), np.ones((0, 4))) and (c == 1).all()  # k = 0


@pytest.mark.parametrize("dt", DTYPES)
def test_getrf_is_p_l_u(dt):
    rng = np.random.default_rng(2)
    a = _rand(rng, (50, 8), dt, "F")
    a0 = a.copy()
    piv, zero = H.getrf(a)
    lo, up = np.tril(a, -1) + np.eye(50, 8), np.triu(a[:8])
    perm = np.arange(50)
    for i, p in enumerate(piv):
        perm[[i, p]] = perm[[p, i]]
    np.testing.assert_allclose(a0[perm], lo @ up, rtol=TOL[dt] * 10, atol=TOL[dt] * 10)
    assert zero == -1
    # partial pivoting: multipliers at most 1 (complex: sqrt 2, the pivot being the
    # largest by |re| + |im|, as LAPACK's izamax)
    assert (np.abs(lo) <= (np.sqrt(2) if np.dtype(dt).kind == "c" else 1) + TOL[dt]).all()


def test_getrf_reports_the_first_zero_pivot():
    a = np.asfortranarray([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
    piv, zero = H.getrf(a)
    assert zero == 2  # rank 2: the third pivot is exactly zero
    assert piv.tolist() == [1, 2, 2]


def test_getrf_declines_row_major_blocks():
    a = np.ones((6, 3))
    assert H.getrf(a) is None and (a == 1).all()


def test_no_library_means_the_caller_computes(monkeypatch):
    monkeypatch.setattr(H, "_found", {"lib": None})
    c = np.ones((3, 3))
    assert not H.gemm_add(c, np.ones((3, 3)), np.ones((3, 3)))
    assert H.getrf(np.asfortranarray(np.eye(3))) is None
    assert (c == 1).all()


@pytest.mark.parametrize("dt", DTYPES)
def test_trsm_unit_lower_every_memory_order(dt):
    rng = np.random.default_rng(3)
    for ol, ox in itertools.product("CF", repeat=2):
        lo, x = _rand(rng, (6, 6), dt, ol), _rand(rng, (6, 4), dt, ox)
        ref = np.linalg.solve(np.tril(lo, -1) + np.eye(6), x)  # the diagonal is not read
        assert H.trsm_unit_lower(lo, x)
        np.testing.assert_allclose(x, ref, rtol=TOL[dt] * 10, atol=TOL[dt] * 10)


@pytest.mark.parametrize("dt", DTYPES)
def test_trsm_in_a_view_of_a_bigger_block(dt):
    rng = np.random.default_rng(4)
    for om, ol in itertools.product("CF", repeat=2):
        m = _rand(rng, (10, 12), dt, om)
        lo = _rand(rng, (3, 3), dt, ol)
        ref = np.linalg.solve(np.tril(lo, -1) + np.eye(3), m[2:5, 4:9])
        rest = m.copy()
        assert H.trsm_unit_lower(lo, m[2:5, 4:9])
        np.testing.assert_allclose(m[2:5, 4:9], ref, rtol=TOL[dt] * 10, atol=TOL[dt] * 10)
        rest[2:5, 4:9] = m[2:5, 4:9]
        assert (m == rest).all()  # nothing outside the view changed
    assert not H.trsm_unit_lower(lo[:2], m[:3, :2])  # not square: declined
