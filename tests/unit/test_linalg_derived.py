"""Vector and matrix norms of st.linalg against numpy (``sharded/ops/linalg/derived.py``)."""

import math

import numpy as np
import pytest

import sharded as st
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

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
