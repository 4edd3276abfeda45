"""Exponential, logarithm and power primitives against NumPy, with gradients."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

P = np.linspace(0.1, 4, 42).reshape(7, 6)
REFS = {
    "expm1": np.expm1,
    "exp2": np.exp2,
    "log2": np.log2,
    "log10": np.log10,
    "square": np.square,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "reciprocal": lambda a: 1 / a,
}


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_exp_log_layouts(place):
    x = st.from_numpy(P, **place)
    for name, ref in REFS.items():
        assert_matches_numpy(getattr(st, name)(x), ref(P), rtol=1e-12)
        assert_matches_numpy(getattr(x, name)(), ref(P), rtol=1e-12)
    assert_matches_numpy(st.logaddexp(x, -x), np.logaddexp(P, -P), rtol=1e-12)
    assert_matches_numpy(st.logaddexp2(x, P[:1]), np.logaddexp2(P, P[:1]), rtol=1e-12)


def test_dtypes_and_values():
    i = st.tensor([-3, 2], shards=2)
    assert st.square(i).tolist() == [9, 4] and st.square(i).dtype == st.int64
    assert st.square(st.tensor([True, False])).dtype == st.int64
    for name in ("expm1", "exp2", "log2", "log10", "rsqrt", "reciprocal"):
        assert getattr(st, name)(i).dtype == st.float32
    with pytest.raises(st.DTypeError, match="logaddexp"):
        st.logaddexp(i, i)
    big = st.tensor([1000.0, -1000.0])
    assert st.logaddexp(big, big).tolist() == pytest.approx([1000 + np.log(2), -1000 + np.log(2)])
    assert st.reciprocal(st.tensor([0.0])).tolist() == [float("inf")]
    x = st.tensor([4.0, 16.0])
    assert x.rsqrt_() is x and x.tolist() == [0.5, 0.25]


def test_gradients():
    x = st.tensor([0.3, 1.5, 0.7], dtype=st.float64, shards=2, requires_grad=True)
    for name in REFS:
        assert st.autograd.gradcheck(getattr(st, name), (x,)), name
    y = st.tensor([1.3, 2.5], dtype=st.float64, requires_grad=True)
    z = st.tensor([0.4, -1.5], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(st.logaddexp, (y, z))
    assert st.autograd.gradcheck(st.logaddexp2, (y, z))


def test_logaddexp_refuses_python_numbers_as_torch():
    # torch: "logaddexp2(): argument 'other' (position 2) must be Tensor, not float"
    t = st.tensor([1.0])
    for name in ("logaddexp", "logaddexp2"):
        with pytest.raises(st.DTypeError, match=f"{name}.*'other'.*float"):
            getattr(st, name)(t, 1.0)
        with pytest.raises(st.DTypeError, match=f"{name}.*'input'.*int"):
            getattr(st, name)(1, t)
    assert st.logaddexp2(t, st.tensor(1.0)).tolist() == [2.0]


# Expected values are torch's (CPU): NumPy has no complex logaddexp, torch does
def test_logaddexp_complex_matches_torch():
    x = st.tensor([1 + 2j, -3 + 0.5j, 1000 + 1j], dtype=st.complex128, shards=2)
    y = st.tensor([0.5 - 1j, 2 + 3j, 1000 - 2j], dtype=st.complex128, requires_grad=True)
    x.requires_grad_()
    out = st.logaddexp(x, y)
    ref = [0.1049930143 + 1.7889591478j, 1.9945955334 + 2.9959456629j, 998.0443635266 - 0.5j]
    assert_matches_numpy(out, ref, dtype=st.complex128, atol=1e-9)
    out.abs().sum().backward()
    gx = [0.6519911519 + 2.3589073075j, -0.0063916736 - 0.0022449555j, 0.4964676749 - 7.0509595786j]
    gy = [-0.5934025259 - 1.3606250965j, 0.5605721097 + 0.8346415222j, 0.5035321996 + 7.050458599j]
    assert_matches_numpy(x.grad, gx, dtype=st.complex128, atol=1e-8)
    assert_matches_numpy(y.grad, gy, dtype=st.complex128, atol=1e-8)
    inf, nan = float("inf"), float("nan")
    a = st.tensor([inf, -inf, complex(-inf, 1), 0j, complex(nan, 0)], dtype=st.complex128)
    b = st.tensor([inf, -inf, 2 + 0j, 0j, 1 + 0j], dtype=st.complex128)
    got = st.logaddexp(a, b).tolist()
    assert got[:4] == [complex(inf, 0), complex(-inf, 0), 2 + 0j, pytest.approx(np.log(2))]
    assert np.isnan(got[4].real) and np.isnan(got[4].imag)
    mixed = st.logaddexp(
        st.tensor([1 + 1j], dtype=st.complex64), st.tensor([1.0], dtype=st.float64)
    )
    assert mixed.dtype == st.complex128  # torch's promotion
    assert_matches_numpy(mixed, [1.5625629401162227 + 0.5j], dtype=st.complex128, atol=1e-9)
    with pytest.raises(st.DTypeError, match="'other'.*complex"):
        st.logaddexp(st.tensor([1.0]), 1j)  # torch refuses Python numbers here
    with pytest.raises(st.DTypeError, match="logaddexp2"):
        st.logaddexp2(a, b)  # torch has no complex logaddexp2
    z = st.tensor([0.3 + 1j, -1 + 0.2j], dtype=st.complex128, requires_grad=True)
    w = st.tensor([1.1 - 0.4j, 0.5j], dtype=st.complex128, requires_grad=True)
    assert st.autograd.gradcheck(st.logaddexp, (z, w))


def test_logit_as_torch():
    """Values and gradients from torch: +-inf at 0 and 1 (gradient too), eps clamps (and
    zeroes the gradient outside [eps, 1 - eps]); integers give float32."""
    p = st.tensor([0.0, 0.25, 1.0, 2.0], dtype=st.float64, shards=2)
    v = st.logit(p).tolist()
    assert v[:3] == [-np.inf, pytest.approx(-1.0986122886681098), np.inf] and np.isnan(v[3])
    assert st.logit(st.tensor([0, 1])).dtype == st.float32
    g = st.tensor([0.0, 0.25, 1.0], dtype=st.float64, requires_grad=True)
    st.logit(g).sum().backward()
    assert g.grad.tolist() == [np.inf, pytest.approx(16 / 3), np.inf]
    g = st.tensor([0.0, 0.25, 1.0], dtype=st.float64, requires_grad=True)
    e = g.logit(eps=0.1)
    np.testing.assert_allclose(e.detach().numpy(), [-2.197224577336219, -1.0986122886681098,
                                                    2.1972245773362196])  # fmt: skip
    e.sum().backward()
    assert g.grad.tolist() == [0.0, pytest.approx(16 / 3), 0.0]
    q = st.tensor([0.5, 0.75])
    assert q.logit_() is q and q.tolist() == [0.0, pytest.approx(1.0986122886681098)]
    with pytest.raises(RuntimeError):
        st.tensor([0, 1]).logit_()
    with pytest.raises(NotImplementedError):
        st.logit(st.tensor([0.5j]))


@pytest.mark.parametrize("shards", [1, 2])
def test_logit_eps_above_half_and_negative_like_torch(shards):
    # torch: x < eps ? eps : (x > 1 - eps ? 1 - eps : x); a negative eps clamps nothing
    p = st.tensor([0.1, 0.3, 0.5, 0.7, 0.9], dtype=st.float64, shards=shards, requires_grad=True)
    y = st.logit(p, eps=0.6)
    np.testing.assert_allclose(
        y.detach().numpy(), [0.4054651081081642] * 3 + [-0.4054651081081643] * 2
    )
    y.sum().backward()
    assert p.grad.tolist() == [0.0] * 5
    assert st.logit(p, eps=1.0).tolist() == [np.inf] * 5
    assert st.logit(p, eps=0.5).tolist() == [0.0] * 5
    for eps in (None, -0.1):  # torch: no clamp; NaN (value and gradient) outside [0, 1]
        x = st.tensor([2.0, -0.05, 0.5, 0.0, 1.0], dtype=st.float64, shards=shards)
        x.requires_grad_()
        y = st.logit(x, eps=eps)
        y.backward(st.ones(5, dtype=st.float64))
        assert str(y.tolist()) == "[nan, nan, 0.0, -inf, inf]"
        assert str(x.grad.tolist()) == "[nan, nan, 4.0, inf, inf]"
