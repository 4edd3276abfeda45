"""Rounding and sign primitives against NumPy, with torch's dtype rules and gradients."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = (np.arange(42.0).reshape(7, 6) - 20.5) / 4  # halves and quarters, both signs


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_rounding_layouts(place):
    x = st.from_numpy(A, **place)
    for name, ref in [
        ("floor", np.floor),
        ("ceil", np.ceil),
        ("trunc", np.trunc),
        ("round", np.round),  # half to even, as torch
        ("frac", lambda a: a - np.trunc(a)),
        ("sign", np.sign),
        ("sgn", np.sign),
    ]:
        assert_matches_numpy(getattr(st, name)(x), ref(A), rtol=0, atol=0)
        assert_matches_numpy(getattr(x, name)(), ref(A), rtol=0, atol=0)
    assert_matches_numpy(st.signbit(x), np.signbit(A), dtype=st.bool)
    assert_matches_numpy(st.copysign(x, -A.T[:1, :1] * 0 - 1), -np.abs(A))


def test_round_decimals_and_ints():
    assert st.round(st.tensor([2.567, 0.125]), decimals=2).tolist() == pytest.approx([2.57, 0.12])
    assert st.round(st.tensor([1234.0, 1251.0]), decimals=-2).tolist() == [1200.0, 1300.0]
    i = st.tensor([1, -2, 3], shards=2)
    for name in ("floor", "ceil", "trunc", "round", "sign"):
        r = getattr(st, name)(i)
        assert r.dtype == st.int64
    assert st.floor(i).tolist() == [1, -2, 3]
    assert st.floor(st.tensor([1, 2], dtype=st.uint8)).dtype == st.uint8
    assert st.sign(st.tensor([True, False])).tolist() == [True, False]
    with pytest.raises(st.DTypeError, match="bool"):
        st.floor(st.tensor([True]))
    with pytest.raises(st.DTypeError, match="frac"):
        st.frac(i)
    with pytest.raises(st.DTypeError, match="decimals=1"):
        st.round(i, decimals=1)
    with pytest.raises(st.ArgumentError, match="1.5"):
        st.round(st.tensor([1.0]), decimals=1.5)


def test_unsupported_dtypes_raise_not_implemented_as_torch():
    """torch: "floor_vml_cpu" not implemented for 'Bool', "frac_cpu" ... for 'Long' (a
    NotImplementedError); round(int, decimals=...) takes the decimals overload, which has no
    integer kernel even for decimals=0, while plain round(int) keeps the integers."""
    i = st.tensor([1, -2, 3], shards=2)
    for f in (st.floor, st.ceil, st.trunc, st.fix, st.round):
        with pytest.raises(NotImplementedError):
            f(st.tensor([True, False]))
    with pytest.raises(NotImplementedError):
        st.frac(i)
    for d in (0, 1):
        with pytest.raises(NotImplementedError):
            st.round(i, decimals=d)
        with pytest.raises(NotImplementedError):
            i.round_(decimals=d)
    with pytest.raises(NotImplementedError):
        st.special.round(i)
    assert st.round(i).tolist() == [1, -2, 3] and i.tolist() == [1, -2, 3]
    x = st.tensor([2.5, -0.5, 1.25, 0.35], dtype=st.float64, shards=3)
    assert st.special.round(x, decimals=1).tolist() == [2.5, -0.5, 1.2, 0.4]
    assert st.copysign(i, 1).dtype == st.float32


def test_sign_nan_signbit_nextafter():
    z = st.tensor([float("nan"), -0.0, 0.0, -3.0])
    assert st.sign(z).tolist() == [0.0, 0.0, 0.0, -1.0]
    assert st.signbit(z).tolist()[1:] == [True, False, True]
    assert st.signbit(st.tensor([-1, 2])).tolist() == [True, False]
    n = st.nextafter(st.tensor([1.0]), st.tensor([2.0]))
    assert n.tolist()[0] - 1 == pytest.approx(1.1920928955078125e-07)
    with pytest.raises(st.DTypeError):
        st.nextafter(st.tensor([1]), st.tensor([2]))


def test_inplace():
    x = st.tensor([1.5, -2.5], shards=2)
    assert x.floor_() is x and x.tolist() == [1.0, -3.0]
    y = st.tensor([2.567])
    y.round_(decimals=1)
    assert y.tolist() == pytest.approx([2.6])
    w = st.tensor([3, 4])
    with pytest.raises(st.DTypeError):
        w.copysign_(-1.0)  # float result into an int tensor
    assert w.tolist() == [3, 4]


def test_gradients():
    x = st.tensor([1.2, -2.3, 0.7], dtype=st.float64, shards=2, requires_grad=True)
    assert st.autograd.gradcheck(st.frac, (x,))
    other = st.tensor([-1.0, 1.0, -1.0], dtype=st.float64)
    assert st.autograd.gradcheck(lambda t: st.copysign(t, other), (x,))
    for name in ("floor", "ceil", "round", "trunc", "sign"):
        x.grad = None
        getattr(st, name)(x).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
    a = st.tensor([1.0, -2.0, 0.0], requires_grad=True)
    st.copysign(a, st.tensor([-1.0, 1.0, -1.0])).sum().backward()
    assert a.grad.tolist() == [-1.0, -1.0, 0.0]  # torch's values


def test_nextafter_refuses_python_numbers_as_torch():
    # torch: "nextafter(): argument 'other' (position 1) must be Tensor, not float"
    t = st.tensor([1.0])
    with pytest.raises(st.DTypeError, match="nextafter.*'other'.*float"):
        t.nextafter(2.0)
    with pytest.raises(st.DTypeError, match="nextafter_.*'other'.*float"):
        t.nextafter_(2.0)
    assert t.tolist() == [1.0] and st.nextafter(t, st.tensor(2.0)).tolist()[0] > 1.0


@pytest.mark.parametrize("shards", [1, 2])
def test_nextafter_gradient_like_torch(shards):
    # torch: input gets the gradient where input != other (else the result is other), other 0
    nan = float("nan")
    a = st.tensor([1.0, 2.0, 2.0, nan, 1.0, 0.0], dtype=st.float64, requires_grad=True)
    b = st.tensor([2.0, 2.0, 0.0, 1.0, nan, -0.0], dtype=st.float64, shards=shards)
    b.requires_grad_()
    st.nextafter(a, b).backward(st.ones(6, dtype=st.float64))
    assert a.grad.tolist() == [1.0, 0.0, 1.0, 1.0, 1.0, 0.0] and b.grad.tolist() == [0.0] * 6
    c = st.tensor([[1.0], [2.0]], dtype=st.float64, requires_grad=True, shards=shards)
    d = st.tensor([2.0, 0.0, 5.0], dtype=st.float64)
    (st.nextafter(c, d) * st.arange(6.0, dtype=st.float64).reshape(2, 3)).sum().backward()
    assert c.grad.tolist() == [[3.0], [9.0]]
