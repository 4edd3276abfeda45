"""Vector and matrix norms of st.linalg against numpy (``sharded/ops/linalg/derived.py``)."""

import math

import numpy as np
import pytest

import sharded as st
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
t = float64_tensor


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norms(ord):
    a = rng.standard_normal((3, 4, 5))
    assert_matches_numpy(
        L.matrix_norm(t(a, shards=2, dim=2), ord=ord), np.linalg.norm(a, ord, axis=(-2, -1)), **TOL
    )
    assert_matches_numpy(
        L.matrix_norm(t(a, shards=3), ord=ord, dim=(0, 2), keepdim=True),
        np.linalg.norm(a, ord, axis=(0, 2), keepdims=True),
        **TOL,
    )


def test_vector_norms_and_norm():
    a = rng.standard_normal((4, 6))
    x = t(a, shards=3, dim=1)
    for ord in (2, 1, 0, 3.5, math.inf, -math.inf):
        assert_matches_numpy(L.vector_norm(x, ord), np.linalg.norm(a.ravel(), ord), **TOL)
        assert_matches_numpy(
            L.vector_norm(x, ord, dim=1, keepdim=True),
            np.linalg.norm(a, ord, axis=1, keepdims=True),
            **TOL,
        )
    assert_matches_numpy(L.norm(x), np.linalg.norm(a), **TOL)
    assert_matches_numpy(L.norm(x, 2), np.linalg.norm(a, 2), **TOL)
    assert_matches_numpy(L.norm(x, dim=0), np.linalg.norm(a, axis=0), **TOL)
    assert_matches_numpy(L.norm(x, "nuc"), np.linalg.norm(a, "nuc"), **TOL)


# ------------------------------------------------------------------------------ issue 12
# Expected values are torch's (CPU).
def test_vector_norm_half_accumulates_in_float32():
    # 300**2 overflows float16 (max 65504): torch sums the squares in float32
    x = st.tensor([300.0, 1], dtype=st.float16)
    assert_matches_numpy(L.vector_norm(x), 300.0, dtype=st.float16)
    assert_matches_numpy(L.vector_norm(x, dtype=st.float32), 300.0017, rtol=1e-6, dtype="float32")
    m = st.tensor([[300.0, 1], [3, 4]], dtype=st.float16, shards=2)
    assert_matches_numpy(L.vector_norm(m, 3, dim=1), [300.0, 4.4961], rtol=1e-3, dtype="float16")
    assert_matches_numpy(L.vector_norm(m, 1, dim=1), [301.0, 7.0], dtype=st.float16)
    assert_matches_numpy(x.norm(), 300.0, dtype=st.float16)


@pytest.mark.parametrize("ord", [2, 3, 0.5, 1, -1, -2, math.inf, -math.inf])
def test_vector_norm_gradient_at_zero_is_zero(ord):
    # torch's subgradient: 0 where the norm is 0 (d sqrt(s)/ds = inf times a 0 gave NaN)
    x = st.tensor([0.0, 0.0], requires_grad=True)
    n = L.vector_norm(x, ord)
    assert_matches_numpy(n, 0.0, dtype=st.float32)
    n.backward()
    assert_matches_numpy(x.grad, [0.0, 0.0], dtype=st.float32)
    # rows with and without a zero norm in one batch: [0,0] and [3,4]
    y = st.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True, shards=2)
    L.vector_norm(y, dim=1).sum().backward()
    assert_matches_numpy(y.grad, [[0.0, 0.0], [0.6, 0.8]])


# ------------------------------------------------------------------------------ complex
# Expected values are torch's (CPU, complex128).
CA = [[1 + 2j, 0.5 - 1j], [2 - 0.5j, 1 + 1j], [-1 + 0.5j, 3 - 2j]]
COMPLEX_NORMS = {
    "fro": 5.172040216394301,
    "nuc": 7.179074488573097,
    2: 4.289696063326721,
    -2: 2.8893784252463757,
    1: 6.1377988265869785,
    -1: 5.4156547790585154,
    math.inf: 4.7235852642138845,
    -math.inf: 3.3541019662496847,
}


@pytest.mark.parametrize("ord", list(COMPLEX_NORMS), ids=str)
@pytest.mark.parametrize("place", [dict(shards=2), dict(shards=2, dim=1)], ids=["rows", "cols"])
def test_complex_matrix_norms_are_real(ord, place):
    for dt, real, tol in ((st.complex128, st.float64, 1e-12), (st.complex64, st.float32, 1e-5)):
        n = L.matrix_norm(st.tensor(CA, dtype=dt, **place), ord=ord)
        assert n.dtype == real and abs(n.item() - COMPLEX_NORMS[ord]) < tol * 10
    stack = np.stack([np.array(CA), 2 * np.array(CA)])
    assert_matches_numpy(
        L.matrix_norm(st.tensor(stack, shards=2), ord=ord),
        [COMPLEX_NORMS[ord], 2 * COMPLEX_NORMS[ord]],
        **TOL,
    )


def test_complex_norm_pinv_rank_gradients_match_torch():
    fro = [
        [0.1933472978 + 0.3866945956j, 0.0966736489 - 0.1933472978j],
        [0.3866945956 - 0.0966736489j, 0.1933472978 + 0.1933472978j],
        [-0.1933472978 + 0.0966736489j, 0.5800418934 - 0.3866945956j],
    ]
    pinv = [
        [-0.0358305952 - 0.1167473605j, -0.0916129793 - 0.0585789183j],
        [-0.0974616023 - 0.0620666415j, -0.1185905308 + 0.0323044727j],
        [-0.0848507158 + 0.0132464625j, -0.0586265865 + 0.0616336553j],
    ]
    for fn, value, grad in (
        (lambda a: L.matrix_norm(a), 5.172040216394301, fro),
        (lambda a: L.pinv(a).real.sum(), 0.7144019528071607, pinv),
    ):
        x = st.tensor(CA, dtype=st.complex128, requires_grad=True, shards=2)
        out = fn(x)
        out.backward()
        assert abs(out.item() - value) < 1e-12
        assert_matches_numpy(x.grad, np.array(grad), dtype=st.complex128, atol=1e-9)
    assert L.matrix_rank(st.tensor(CA)).item() == 2
    assert L.matrix_rank(st.tensor([[1, 1j], [1j, -1]], dtype=st.complex64)).item() == 1
    pz = L.pinv(st.tensor(CA, dtype=st.complex128, shards=2))
    assert pz.dtype == st.complex128
    assert_matches_numpy(pz, np.linalg.pinv(np.array(CA)), **TOL)


@pytest.mark.parametrize("shards", [1, 2])
def test_pinv_gradient_is_torchs_at_singular_and_hermitian_inputs(shards):
    # the SVD's gradient has none at repeated singular values; the pseudo-inverse's does
    sing = t([[1.0, 2, 3], [2, 4, 6], [1, 2, 3]], shards=shards).requires_grad_()
    L.pinv(sing).pow(2).sum().backward()
    row = [-0.0002834467120181402, -0.0005668934240362803, -0.0008503401360544207]
    want = [row, [2 * v for v in row], row]
    assert_matches_numpy(sing.grad, np.array(want), atol=1e-15, rtol=1e-9)
    assert L.pinv(sing).grad_fn.name() == "LinalgPinvBackward0"
    # hermitian=True reads the lower triangle; its gradient is torch's general formula
    h = t([[2.0, 1, 0], [3, 1, 1], [0, 1, 4]], shards=shards).requires_grad_()
    L.pinv(h, hermitian=True).pow(2).sum().backward()
    want = [
        [-0.09579259259259233, 0.319920987654321, -0.009372839506172794],
        [-0.22755555555555548, -0.0032000000000002027, -0.04237037037037033],
        [0.0502222222222223, -0.0032000000000000153, -0.023851851851851978],
    ]
    assert_matches_numpy(h.grad, np.array(want), atol=1e-12, rtol=1e-9)
    # create_graph: the second derivative flows through P = pinv(A) too
    b = t([[1.0, 2], [3, 5], [0, 1]], shards=shards).requires_grad_()
    (g,) = st.autograd.grad(L.pinv(b).pow(2).sum(), b, create_graph=True)
    g.sum().backward()
    want = [[2.4417731029301883, -1.6453794139744966], [-6.874530428249356, 4.184823441021749]]
    want.append([22.613072877535757, -13.930879038317116])
    assert_matches_numpy(b.grad, np.array(want), atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf], ids=str)
def test_cond(p):
    # torch's values (float32): [[1, 2], [3, 4]], and inf for a singular matrix
    ref = {None: 14.933039665, 2: 14.933039665, -2: 0.0669656023, "fro": 15.0, "nuc": 17.0}
    ref.update({1: 21.0, -1: 6.0, math.inf: 21.0, -math.inf: 6.0})
    a = st.tensor([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]], shards=2)
    c = L.cond(a, p)
    assert c.dtype == st.float32 and abs(c[0].item() - ref[p]) < 1e-4 * ref[p]
    if p not in (None, 2, -2):  # the SVD's smallest singular value of [[1, 2], [2, 4]] is ~1e-8
        assert c[1].item() == math.inf
        with pytest.raises(st.ShapeError, match="square"):
            L.cond(st.ones(2, 3), p)
    z = st.tensor([[1 + 1j, 2], [3, 4j]], dtype=st.complex128, requires_grad=True)
    assert L.cond(z, p).dtype == st.float64
    assert st.autograd.gradcheck(lambda m: L.cond(m, p), (z,))


def test_rank_and_pinv_take_one_tolerance_per_matrix_as_torch():
    # tensor atol / rtol hold one value per matrix (batch shape), torch's answers
    d = np.zeros((3, 3, 3))
    d[:, [0, 1, 2], [0, 1, 2]] = [4.0, 2.0, 1.0]
    x = t(d, shards=2)
    r = t(np.array([0.1, 0.3, 0.6]))
    assert L.matrix_rank(x, rtol=r).tolist() == [3, 2, 1]
    assert L.pinv(x, rtol=r).diagonal(dim1=-2, dim2=-1).tolist() == [
        [0.25, 0.5, 1.0],
        [0.25, 0.5, 0.0],
        [0.25, 0.0, 0.0],
    ]
    a = t(np.array([0.5, 1.5, 3.0]))
    assert L.matrix_rank(x, atol=a).tolist() == [3, 2, 1]
    assert L.matrix_rank(x, atol=a, rtol=t(np.array(0.6))).tolist() == [1, 1, 1]
    # rtol defaults to eps * n only where atol is not positive
    assert L.matrix_rank(x, atol=t(np.array([0.0, -1.0, 1.5]))).tolist() == [3, 3, 2]
    assert L.matrix_rank(x, atol=1.5).tolist() == [2, 2, 2]
    assert L.matrix_rank(x, atol=1.5, rtol=0.6).tolist() == [1, 1, 1]


@pytest.mark.parametrize(
    "shape, rtol_shape",
    [((0, 2, 3, 3), (0, 2)), ((0, 2, 2), (0,)), ((0, 1, 2), (0,)), ((1, 0, 1), (1,))],
)
def test_pinv_of_empty_batches_with_tensor_rtol(shape, rtol_shape):
    # Array API suite's test_pinv: empty batches with an rtol per matrix (torch's shapes)
    x = t(rng.standard_normal(shape))
    out = L.pinv(x, rtol=t(rng.random(rtol_shape)))
    assert tuple(out.shape) == shape[:-2] + (shape[-1], shape[-2])


# ------------------------------------------------------------------------------ torch audit
# Expected answers are torch's (CPU), written as the numpy expressions they equal.
def test_norm_ord_without_dim_needs_1d_or_2d_and_ord0_has_zero_grad():
    with pytest.raises(st.ShapeError, match="1D or 2D"):  # torch: RuntimeError
        L.norm(t(np.ones((2, 3, 4))), ord=2)
    x = st.tensor([[0.0, 2.0], [3.0, 0.0]], dtype=st.float64, requires_grad=True)
    n = L.vector_norm(x, ord=0)
    assert n.item() == 2.0
    n.backward()
    assert_matches_numpy(x.grad, np.zeros((2, 2)))  # torch: differentiable, gradient 0


A33 = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
PLACES = [dict(shards=2), dict(shards=3, dim=2), dict(layout=st.Layout.block((1, 2, 2)))]


@pytest.mark.parametrize("place", PLACES, ids=["batch", "cols", "block"])
def test_matrix_power_exp_and_friends(place):
    a = t(A33, **place)
    for n in (0, 1, 3, -1, -2):
        assert_matches_numpy(L.matrix_power(a, n), np.linalg.matrix_power(A33, n), **TOL)
    assert_matches_numpy(a.matrix_power(2), A33 @ A33, **TOL)
    ints = st.tensor([[1, 1], [0, 1]])
    assert L.matrix_power(ints, 3).tolist() == [[1, 3], [0, 1]]  # int stays int
    with pytest.raises(st.DTypeError):  # torch: inverse of an integer matrix refused
        L.matrix_power(ints, -1)
    with pytest.raises(st.ShapeError):
        L.matrix_power(t(np.ones((2, 3))), 2)
    # exp: the eigen-decomposition of a symmetric matrix gives the reference
    s = A33 + A33.transpose(0, 2, 1)
    w, v = np.linalg.eigh(s)
    ref = (v * np.exp(w)[:, None, :]) @ v.transpose(0, 2, 1)
    assert_matches_numpy(L.matrix_exp(t(s, **place)), ref, rtol=1e-9, atol=1e-9)
    assert_matches_numpy(st.matrix_exp(t(np.zeros((2, 2)))), np.eye(2))
    b = rng.standard_normal((2, 3, 2))
    up = np.triu(A33)
    assert_matches_numpy(
        L.solve_triangular(a, t(b), upper=True), np.linalg.solve(up, b), **TOL
    )  # only the upper triangle is read
    unit = np.tril(A33, -1) + np.eye(3)
    assert_matches_numpy(
        L.solve_triangular(a, t(b), upper=False, unitriangular=True),
        np.linalg.solve(unit, b),
        **TOL,
    )
    lo = np.linalg.cholesky(A33 @ A33.transpose(0, 2, 1))
    spd = lo @ lo.transpose(0, 2, 1)
    assert_matches_numpy(st.cholesky_solve(t(b), t(lo, **place)), np.linalg.solve(spd, b), **TOL)
    up_f = t(lo.transpose(0, 2, 1), **place)
    assert_matches_numpy(st.cholesky_inverse(up_f, upper=True), np.linalg.inv(spd), **TOL)


def test_cross_diagonal_tensorinv_vander_and_toplevel_names():
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((1, 3))
    assert_matches_numpy(L.cross(t(x, shards=2), t(y)), np.cross(x, y), **TOL)
    assert_matches_numpy(
        L.cross(t(x.T, shards=3), t(x[::-1].T.copy()), dim=0),
        np.cross(x.T, x[::-1].T, axis=0),
        **TOL,
    )
    with pytest.raises(st.ShapeError):  # torch: RuntimeError, dim -1 must have size 3
        L.cross(t(np.ones((3, 4))), t(np.ones((3, 4))))
    a = rng.standard_normal((2, 3, 4))
    assert_matches_numpy(L.diagonal(t(a, shards=2)), np.diagonal(a, axis1=-2, axis2=-1))
    assert_matches_numpy(L.diagonal(t(a), offset=1, dim1=0, dim2=2), np.diagonal(a, 1, 0, 2))
    m = rng.standard_normal((6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)
    ti = L.tensorinv(t(m, shards=2), ind=1)
    assert ti.shape == (2, 3, 6)
    assert_matches_numpy(ti, np.linalg.tensorinv(m, ind=1), **TOL)
    v = L.vander(st.tensor([1, 2, 3]))
    assert v.dtype == st.int64 and v.tolist() == np.vander([1, 2, 3], increasing=True).tolist()
    assert_matches_numpy(L.vander(t([2.0, 3.0]), N=3), [[1, 2, 4], [1, 3, 9]])
    s = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    assert_matches_numpy(st.det(t(s)), np.linalg.det(s), **TOL)
    assert_matches_numpy(st.inverse(t(s)), np.linalg.inv(s), **TOL)
    assert_matches_numpy(st.slogdet(t(s)).logabsdet, np.linalg.slogdet(s)[1], **TOL)
    spd = s @ s.T
    assert_matches_numpy(st.logdet(t(spd)), np.log(np.linalg.det(spd)), **TOL)
    assert_matches_numpy(st.pinverse(t(s[:, :2])), np.linalg.pinv(s[:, :2]), **TOL)


def test_empty_norms_cond_and_product_checks():
    e = t(np.zeros((0, 3)))
    for ord in ("fro", "nuc", 2, 1, -1, math.inf):  # torch: 0 for an empty matrix
        assert L.matrix_norm(e, ord=ord).item() == 0.0
    with pytest.raises(IndexError):  # torch: amin over an empty dim
        L.matrix_norm(e, ord=-2)
    assert_matches_numpy(L.cond(t(np.zeros((2, 0, 0)))), np.zeros(2))
    with pytest.raises(st.ShapeError, match="first tensor must be 1D or 2D"):
        L.multi_dot([t(np.ones((2, 2, 2))), t(np.ones((2, 2)))])
    with pytest.raises(st.ShapeError, match="tensor 1 must be 2D"):
        L.multi_dot([t(np.ones((2, 2))), t(np.ones(2)), t(np.ones((2, 2)))])
    with pytest.raises(st.DTypeError, match="same dtype"):
        L.multi_dot([st.ones(2, 2), t(np.ones((2, 2)))])
    with pytest.raises(st.DTypeError):  # torch: floating point or complex only
        L.vecdot(st.tensor([1, 2]), st.tensor([3, 4]))
    with pytest.raises(NotImplementedError):  # torch: no half precision linalg, no bool matmul
        L.det(st.ones(2, 2, dtype=st.float16))
    with pytest.raises(NotImplementedError):
        st.ones(2, 2, dtype=st.bool) @ st.ones(2, 2, dtype=st.bool)
