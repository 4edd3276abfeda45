"""diff against NumPy on every layout (one-row halos across shards) and its gradient."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy, examples, sharded_arrays

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("dim", [0, 1])
def test_diff_every_layout(place, dim):
    x = st.from_numpy(A, **place)
    for n in (0, 1, 2, 3, 7, 9):
        assert_matches_numpy(st.diff(x, n=n, dim=dim), np.diff(A, n=n, axis=dim), rtol=1e-12)
    pre, app = A.take([0], axis=dim), A.take([1, 2], axis=dim)
    got = x.diff(dim=dim, prepend=st.from_numpy(pre), append=st.from_numpy(app))
    assert_matches_numpy(got, np.diff(A, axis=dim, prepend=pre, append=app), rtol=1e-12)


def test_diff_dtypes_as_torch():
    b = st.tensor([True, False, True, True], shards=3)
    assert st.diff(b).tolist() == [True, True, False] and st.diff(b).dtype == st.bool
    u = st.diff(st.tensor([1, 5, 2], dtype=st.uint8, shards=2))
    assert u.tolist() == [4, 253] and u.dtype == st.uint8
    assert st.diff(st.tensor([1.0, 2.0]), n=3).shape == (0,)
    with pytest.raises(st.ArgumentError, match="one-dimensional"):
        st.diff(st.tensor(1.0))
    with pytest.raises(st.ArgumentError, match="-1"):
        st.diff(st.tensor([1.0, 2.0]), n=-1)


@pytest.mark.parametrize(
    "place",
    [
        dict(shards=1),
        dict(shards=3),
        dict(shards=2, dim=1),
        dict(layout=st.Layout(chunks=(2, 0, 3))),
    ],
    ids=["1", "rows", "cols", "uneven"],
)
@pytest.mark.parametrize("dim", [0, 1])
def test_diff_gradient(place, dim):
    x = st.from_numpy(rng.standard_normal((5, 4)), **place).requires_grad_()
    assert st.autograd.gradcheck(lambda t: st.diff(t, dim=dim), (x,))
    assert st.autograd.gradcheck(lambda t: st.diff(t, n=2, dim=dim), (x,))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(sharded_arrays(), hs.data())
def test_diff_random_layouts(case, data):
    a, place = case
    d = data.draw(hs.integers(0, a.ndim - 1))
    n = data.draw(hs.integers(0, 3))
    assert_matches_numpy(st.diff(st.from_numpy(a, **place), n=n, dim=d), np.diff(a, n=n, axis=d))


def test_diff_errors_and_promotion_follow_torch():
    x = st.tensor([1, 4, 9, 16], shards=2)
    with pytest.raises(RuntimeError, match="one-dimensional"):
        st.diff(st.tensor(1.0))
    with pytest.raises(RuntimeError, match="non-negative"):
        st.diff(x, n=-1)
    with pytest.raises(TypeError):
        st.diff(x, n=1.0)
    with pytest.raises(TypeError, match="prepend"):
        st.diff(x, prepend=2.0)
    m = st.ones((4, 3), shards=2)
    with pytest.raises(RuntimeError, match="same dimension"):
        st.diff(m, dim=0, append=st.ones(3))
    with pytest.raises(RuntimeError, match="except along the differencing"):
        st.diff(m, dim=0, append=st.ones((1, 2)))
    # prepend/append are concatenated first, so the dtypes promote as in cat (torch)
    r = st.diff(x, append=st.tensor([20.5, 30.0]))
    assert r.dtype == st.float32 and r.tolist() == [3.0, 5.0, 7.0, 4.5, 9.5]
    r = st.diff(st.tensor([True, False]), append=st.tensor([1]))
    assert r.dtype == st.int64 and r.tolist() == [-1, 1]


@pytest.mark.parametrize("shards", [1, 2])
def test_diff_of_order_zero_ignores_prepend_and_append_like_torch(shards):
    # torch checks them, then returns a copy of input (its dtype; no prepend/append)
    x = st.tensor([1.0, 4.0, 9.0], shards=shards, requires_grad=True)
    y = st.diff(x, n=0, prepend=st.tensor([0.0], dtype=st.float64), append=st.tensor([5.0, 6.0]))
    assert y.tolist() == [1.0, 4.0, 9.0] and y.dtype == st.float32 and y is not x
    (y * st.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(st.ShapeError, match="same dimension as input"):
        st.diff(x, n=0, prepend=st.ones(2, 2))
