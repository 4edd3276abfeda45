"""Selection and conversion primitives: clamp, where, astype, fill_ against NumPy."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


def test_clamp_and_where():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(st.clamp(x, min=-1, max=1), np.clip(A, -1, 1))
    assert_matches_numpy(x.clamp(min=0.5), np.maximum(A, 0.5))
    assert_matches_numpy(st.clamp(x, max=st.from_numpy(B - 3, shards=2)), np.minimum(A, B - 3))
    assert_matches_numpy(st.where(x > 0, x, -x), np.abs(A))
    assert_matches_numpy(st.where(x > 0, 1.0, 0.0), (A > 0).astype(np.float32), dtype="float32")
    assert_matches_numpy(x.where(x > 0, 7), np.where(A > 0, A, 7))


def test_astype_and_fill():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(x.to(st.int32), A.astype(np.int32), dtype="int32")
    y = x.clone().fill_(2.5)
    assert_matches_numpy(y, np.full_like(A, 2.5))
    assert_matches_numpy(y.copy_(st.from_numpy(B[0], shards=2)), np.broadcast_to(B[0], A.shape))
    assert_matches_numpy(y.zero_(), np.zeros_like(A))
    with pytest.raises(st.ArgumentError, match="0-dimension"):
        y.fill_(st.ones(2))
    assert_matches_numpy(y, np.zeros_like(A))  # the failed fill changed nothing


# ---------------------------------------------------- issue 12: torch parity (torch 2.13's answers)
def test_clamp_gradient_is_one_at_the_bounds_like_torch():
    # torch 2.13 passes the gradient where min <= x <= max, bounds included
    x = st.tensor([0.0, 2.0, 1.0, -1.0, 3.0], requires_grad=True)
    x.clamp(0, 2).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]


def test_clamp_of_bool_refuses_a_bool_result_like_torch():
    # torch: clamp(bool, 0, 1) promotes to int64; a bool result is "not implemented for
    # 'Bool'" (scalar bounds, or two tensor bounds); one tensor bound runs clamp_min/max
    t = st.tensor([True, False], shards=2)
    r = st.clamp(t, 0, 1)
    assert r.dtype == st.int64 and r.tolist() == [1, 0]
    assert st.clip(t, min=0.5).tolist() == [1.0, 0.5] and st.clip(t, min=0.5).dtype == st.float32
    assert st.clamp(t, min=st.tensor(0)).dtype == st.int64
    tb, fb = st.tensor([True]), st.tensor([False])
    for call in (
        lambda: st.clamp(t, False, True),
        lambda: st.clamp(t, min=True),
        lambda: st.clip(t, max=False),
        lambda: t.clamp(fb, tb),
        lambda: st.clamp_min(t, True),
        lambda: t.clamp_max(True),
        lambda: t.clamp_(min=True),
        lambda: t.clamp_min_(False),
        lambda: t.clip_(False, True),
        lambda: st.clamp(st.tensor(True), max=True),
    ):
        with pytest.raises(st.DTypeError, match="not implemented for dtype bool"):
            call()
        with pytest.raises(NotImplementedError):  # torch's class (a RuntimeError) too
            call()
    assert t.tolist() == [True, False]  # operands intact
    with pytest.raises(st.DTypeError, match="can't be cast"):  # torch: Long -> bool refused
        t.clamp_(0, 1)
    assert t.tolist() == [True, False]
    assert st.clamp(t, min=tb).tolist() == [True, True]
    assert st.clamp_max(t, fb).tolist() == [False, False]
    t.clamp_max_(fb)
    assert t.tolist() == [False, False] and t.dtype == st.bool


def test_clamp_min_and_clamp_max_like_torch():
    x = st.tensor([-2.0, 0.5, 3.0], shards=2)
    assert st.clamp_min(x, 0).tolist() == [0.0, 0.5, 3.0]
    assert x.clamp_max(1).tolist() == [-2.0, 0.5, 1.0]
    assert x.clamp_min(st.tensor([1.0, 0.0, 4.0])).tolist() == [1.0, 0.5, 4.0]
    x.clamp_max_(2).clamp_min_(-1)
    assert x.tolist() == [-1.0, 0.5, 2.0]


def test_clamp_python_int_bounds_convert_like_torch():
    u = st.tensor([0, 7], dtype=st.uint8, shards=2)
    assert u.clamp(min=-3).tolist() == [253, 253]  # -3 wraps to 253
    assert u.clamp(-3, 5).tolist() == [5, 5] and u.clamp(max=-3).tolist() == [0, 7]
    v = st.tensor([0, 7], dtype=st.uint8)
    v.clamp_(min=-3)
    assert v.tolist() == [253, 253]
    for kw, dt in [({"max": 300}, st.uint8), ({"min": -256}, st.uint8), ({"max": 200}, st.int8)]:
        with pytest.raises(st.ValueOverflow, match="cannot be converted to type"):
            st.tensor([0, 7], dtype=dt).clamp(**kw)
    assert st.where(st.tensor([True, False]), u, -1).tolist() == [0, 255]


def test_error_classes_follow_torch():
    x = st.tensor([1.0, -2.0], shards=2)
    with pytest.raises(RuntimeError, match="at least one"):  # torch: RuntimeError
        st.clamp(x)
    with pytest.raises(RuntimeError, match="at least one"):
        x.clamp_()
    with pytest.raises(RuntimeError, match="bool condition"):  # torch: RuntimeError
        st.where(st.tensor([1, 0], shards=2), x, 0.0)
    assert st.clamp(x, min=0).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("shards", [1, 2])
def test_clamp_gradient_with_tensor_bounds_like_torch(shards):
    # torch: min gets the gradient where x < min < max, max where x > max or max < min
    # (every element is max there), x where min <= x <= max
    f64 = st.float64
    x = st.tensor([-2.0, 0.5, 3.0, 1.0], dtype=f64, requires_grad=True, shards=shards)
    lo = st.tensor([1.0, 0.0, 2.0, 2.0], dtype=f64, requires_grad=True)
    hi = st.tensor([0.0, 1.0, 1.0, 0.5], dtype=f64, requires_grad=True, shards=shards)
    y = st.clamp(x, lo, hi)
    assert y.tolist() == [0.0, 0.5, 1.0, 0.5]
    (y * st.tensor([1.0, 2.0, 3.0, 4.0], dtype=f64)).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0, 0.0]
    assert lo.grad.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert hi.grad.tolist() == [1.0, 0.0, 3.0, 4.0]


@pytest.mark.parametrize("shards", [1, 2])
def test_clamp_gradient_with_a_bound_that_broadcasts_the_input(shards):
    # a (5, 1) input against a (5,) bound: a (5, 5) result; torch's gradients, summed back
    f64 = st.float64
    w = st.arange(25.0, dtype=f64).reshape(5, 5)
    cases = [
        (st.clamp_min, [[3.0], [13.0], [34.0], [66.0], [86.0]], [0.0, 7.0, 21.0, 0.0, 70.0]),
        (st.clamp_max, [[10.0], [27.0], [37.0], [36.0], [24.0]], [45.0, 37.0, 22.0, 62.0, 0.0]),
    ]
    for fn, gx, gb in cases:
        x = st.arange(5.0, dtype=f64).reshape(5, 1).clone().requires_grad_()
        b = st.tensor([1.0, 2.0, 3.0, 0.0, 5.0], dtype=f64, requires_grad=True, shards=shards)
        (fn(x, b) * w).sum().backward()
        assert x.grad.tolist() == gx and b.grad.tolist() == gb
