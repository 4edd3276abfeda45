"""Derived ops (sharded.ops.reduce.derived.moments): compositions of primitives compared with
numpy."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))


@pytest.mark.parametrize(
    "place", [dict(shards=3), dict(shards=3, dim=1), dict(layout=st.Layout.block((2, 2)))]
)
def test_logsumexp_softmax_stable(place):
    big = A * 1000
    x = st.from_numpy(big, **place)
    m = big.max(1, keepdims=True)
    lse = m + np.log(np.exp(big - m).sum(1, keepdims=True))
    assert_matches_numpy(st.logsumexp(x, 1), lse[:, 0], rtol=1e-12)
    assert_matches_numpy(x.logsumexp(dim=1, keepdim=True), lse, rtol=1e-12)
    assert_matches_numpy(st.softmax(x, 1), np.exp(big - lse), rtol=1e-9, atol=1e-12)
    assert_matches_numpy(st.log_softmax(x, -1), big - lse, rtol=1e-9)
    m0 = big.max(0, keepdims=True)
    assert_matches_numpy(
        st.softmax(x, 0), np.exp(big - m0) / np.exp(big - m0).sum(0), rtol=1e-9, atol=1e-12
    )
    assert_matches_numpy(st.logsumexp(x), np.log(np.exp(big - big.max()).sum()) + big.max())
    ninf = st.full((2, 3), -float("inf"))
    assert st.logsumexp(ninf, 1).tolist() == [-float("inf")] * 2


# ---------------------------------------------------- issue 12: torch parity (torch 2.13's answers)
def test_std_gradient_is_zero_where_std_is_zero():
    x = st.tensor([2.0, 2.0], requires_grad=True)
    x.std().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    y = st.tensor([[2.0, 2.0], [1.0, 3.0]], requires_grad=True, shards=2)
    y.std(1).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [[0, 0], [-0.70710677, 0.70710677]], rtol=1e-6)
    z = st.tensor([2.0], requires_grad=True)
    z.std().backward()  # torch: nan (0 degrees of freedom)
    assert np.isnan(z.grad.tolist()[0])


def test_log_softmax_of_an_inf_row_is_nan_like_torch():
    r = st.log_softmax(st.tensor([float("inf"), 1.0]), 0).tolist()
    assert np.isnan(r).all()  # torch shifts by the unmasked max
    assert np.isnan(st.softmax(st.tensor([float("inf"), 1.0]), 0).tolist()).all()
    assert st.logsumexp(st.tensor([float("inf"), 1.0]), 0).item() == np.inf
    assert np.isnan(st.log_softmax(st.tensor([-np.inf, -np.inf]), 0).tolist()).all()


@pytest.mark.parametrize("dim", [0, -1])
def test_derived_reductions_of_a_0d_tensor(dim):
    x = st.tensor(3.0)
    assert x.mean(dim).item() == 3.0 and x.logsumexp(dim).item() == 3.0
    assert np.isnan(x.var(dim).item()) and np.isnan(x.std(dim).item())
    assert x.var(dim, correction=0).item() == 0.0
    assert x.softmax(dim).item() == 1.0 and x.log_softmax(dim).item() == 0.0
    assert x.softmax(dim).shape == ()


def test_softmax_family_over_an_empty_dim():
    z = st.zeros(2, 0, shards=2)
    assert st.logsumexp(z, 1).tolist() == [-np.inf, -np.inf]
    assert st.logsumexp(z, 0).shape == (0,)
    assert st.logsumexp(st.zeros(0), 0).item() == -np.inf
    assert st.logsumexp(z, (0, 1)).item() == -np.inf
    assert st.softmax(z, 1).shape == (2, 0) and st.log_softmax(z, 1).shape == (2, 0)
    assert st.softmax(st.zeros(0, 3), 1).shape == (0, 3)


# torch 2.13's answers for the comparison helpers
def test_isclose_allclose_equal_like_torch():
    inf, nan = float("inf"), float("nan")
    a = st.tensor([1.0, nan, inf, 2.0, -inf], shards=2)
    b = st.tensor([1.0 + 1e-6, nan, inf, 2.1, inf], shards=3)
    assert st.isclose(a, b).tolist() == [True, False, True, False, False]
    assert st.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False, False]
    assert a.isclose(b).dtype == st.bool
    assert st.allclose(a[:1], b[:1]) is True and st.allclose(a, b) is False
    assert st.equal(a, a) is False  # NaN differs from NaN
    assert st.equal(a[:1], a[:1]) is True
    assert st.equal(st.ones(2), st.ones(3)) is False
    assert st.equal(st.ones(2), st.ones(2, dtype=st.int64)) is True
    i = st.tensor([1, 2, 3])
    assert st.isclose(i, st.tensor([1, 3, 3])).tolist() == [True, False, True]
    assert st.isclose(st.tensor([True, False]), st.tensor([True, True])).tolist() == [True, False]
    with pytest.raises(st.DTypeError, match="float32 did not match float64"):
        st.isclose(st.ones(2), st.ones(2, dtype=st.float64))
    with pytest.raises(st.ArgumentError, match="rtol must be greater than or equal to zero"):
        st.isclose(st.ones(2), st.ones(2), rtol=-1)


def test_inf_predicates_isreal_positive_like_torch():
    inf, nan = float("inf"), float("nan")
    a = st.tensor([1.0, nan, inf, 2.0, -inf], shards=2)
    assert st.isinf(a).tolist() == [False, False, True, False, True]
    assert a.isposinf().tolist() == [False, False, True, False, False]
    assert a.isneginf().tolist() == [False, False, False, False, True]
    assert st.isreal(a).tolist() == [True] * 5 and st.isreal(a).layout == a.layout
    i = st.tensor([1, 2, 3], shards=2)
    assert st.isinf(i).tolist() == [False] * 3 and st.isposinf(i).dtype == st.bool
    assert st.positive(i) is i
    with pytest.raises(st.DTypeError, match="bool tensor is not supported"):
        st.positive(st.tensor([True]))


@pytest.mark.parametrize("place", PLACEMENTS[1:6:2], ids=PLACEMENT_IDS[1:6:2])
def test_lerp_addcmul_addcdiv(place):
    a = np.arange(12.0).reshape(3, 4) - 5
    b = np.linspace(1, 3, 12).reshape(3, 4)
    x, y = st.from_numpy(a, **place), st.from_numpy(b)
    assert_matches_numpy(st.lerp(x, y, 0.25), a + 0.25 * (b - a))
    assert_matches_numpy(x.lerp(y, y), a + b * (b - a))
    assert_matches_numpy(st.addcmul(x, y, y, value=2), a + 2 * b * b)
    assert_matches_numpy(x.addcdiv(x, y, value=0.5), a + 0.5 * a / b)
    z = x.clone()
    assert z.lerp_(y, 0.5) is z
    assert_matches_numpy(z, (a + b) / 2)
    assert_matches_numpy(x.clone().addcmul_(y, y), a + b * b)
    assert_matches_numpy(x.clone().addcdiv_(y, y, value=3), a + 3)


def test_lerp_addcmul_addcdiv_torch_rules():
    i, f = st.tensor([1, 2]), st.tensor([1.0, 2.0])
    assert st.lerp(
        st.tensor([1.0, 2.0]), st.tensor([3.0, 4.0]), st.tensor([0.75, 0.25])
    ).tolist() == [2.5, 2.5]
    with pytest.raises(st.DTypeError, match="int64"):
        st.lerp(i, i, 0.5)
    with pytest.raises(st.DTypeError, match="float64"):
        st.lerp(f, f.double(), 0.5)
    assert st.addcmul(i, i, i).dtype == st.int64 and st.addcmul(f, i, i).dtype == st.float32
    assert st.addcmul(i, i, i, value=0.5).tolist() == [1, 2]  # torch casts value to int
    with pytest.raises(st.DTypeError, match="int64"):
        st.addcdiv(f, i, i)
    assert st.addcdiv(i, f, f).dtype == st.float32
    kw = dict(dtype=st.float64, requires_grad=True)
    x, y, w = st.tensor([1.0, -2.0], **kw), st.tensor([0.5, 3.0], **kw), st.tensor([0.3, 0.9], **kw)
    assert st.autograd.gradcheck(st.lerp, (x, y, w))
    assert st.autograd.gradcheck(lambda a, b, c: st.addcmul(a, b, c, value=2), (x, y, w))
    assert st.autograd.gradcheck(st.addcdiv, (x, y, w))
