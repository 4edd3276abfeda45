"""In-place samplers random_ / exponential_ / cauchy_ / log_normal_ / geometric_: torch's
bounds, dtypes, checks and error classes; sample statistics within loose bounds; the same
values for any layout after ``st.manual_seed`` (never compared with torch's draws)."""

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

N = 4000
LAYOUTS = [dict(), dict(shards=3), dict(layout=st.Layout(chunks={0: (1000, 0, 3000)}))]


@pytest.mark.parametrize("place", LAYOUTS, ids=["1", "3", "uneven"])
def test_random_bounds_per_dtype(place):
    st.manual_seed(1)
    x = st.zeros(N, **place).random_()  # float32: [0, 2**24]
    a = x.numpy()
    assert x.dtype == st.float32 and a.min() >= 0 and a.max() <= 2**24
    assert np.all(a == np.floor(a)) and a.mean() > 2**22
    a = st.zeros(N, **place).random_(10).numpy()
    assert set(np.unique(a)) == set(range(10)) and abs(a.mean() - 4.5) < 0.3
    a = st.zeros(N, **place).random_(-3, 3).numpy()
    assert set(np.unique(a)) == set(range(-3, 3))
    a = st.zeros(N, dtype=st.float64, **place).random_(to=4).numpy()
    assert set(np.unique(a)) == {0.0, 1.0, 2.0, 3.0}
    a = st.zeros(N, **place).random_(**{"from": 2, "to": 4}).numpy()
    assert set(np.unique(a)) == {2.0, 3.0}
    u8 = st.zeros(N, dtype=st.uint8, **place).random_()
    assert u8.dtype == st.uint8 and u8.numpy().max() > 250 and u8.numpy().min() < 5
    i64 = st.zeros(N, dtype=st.int64, **place).random_().numpy()
    assert i64.min() >= 0 and i64.max() > 2**62  # [0, 2**63 - 1]
    b = st.zeros(N, dtype=st.bool, **place).random_()
    assert b.dtype == st.bool and 0.45 < b.numpy().mean() < 0.55


def test_random_errors():
    for args, kw in [((3, 3), {}), ((0,), {}), ((5, 2), {})]:
        with pytest.raises(RuntimeError):  # from >= to (random_(0) is from=0, to=0)
            st.zeros(3).random_(*args, **kw)
    with pytest.raises(RuntimeError):  # from is out of bounds for uint8
        st.zeros(3, dtype=st.uint8).random_(-1, 3)
    with pytest.raises(RuntimeError):  # to - 1 is out of bounds for uint8
        st.zeros(3, dtype=st.uint8).random_(0, 300)
    with pytest.raises(NotImplementedError):
        st.zeros(3, dtype=st.complex64).random_()


@pytest.mark.parametrize("place", LAYOUTS, ids=["1", "3", "uneven"])
def test_continuous_sample_statistics(place):
    st.manual_seed(2)
    e = st.zeros(N, **place).exponential_(2.0)
    a = e.numpy()
    assert e.dtype == st.float32 and a.min() >= 0
    assert abs(a.mean() - 0.5) < 0.05 and abs(a.var() - 0.25) < 0.06
    c = st.zeros(N, dtype=st.float64, **place).cauchy_(1.0, 2.0).numpy()
    q1, q2, q3 = np.quantile(c, [0.25, 0.5, 0.75])  # median 1, quartiles 1 -+ sigma
    assert abs(q2 - 1) < 0.25 and abs(q1 + 1) < 0.35 and abs(q3 - 3) < 0.35
    ln = st.zeros(N, **place).log_normal_(0.0, 0.5).numpy()
    assert ln.min() > 0 and abs(np.log(ln).mean()) < 0.05 and abs(np.log(ln).std() - 0.5) < 0.05
    assert abs(ln.mean() - np.exp(0.125)) < 0.05
    d = st.zeros(N, **place).log_normal_().numpy()  # torch's defaults mean=1, std=2
    assert abs(np.log(d).mean() - 1) < 0.15


@pytest.mark.parametrize("dtype", [st.int64, st.float32, st.float16])
def test_geometric(dtype):
    st.manual_seed(3)
    g = st.zeros(N, dtype=dtype, shards=3).geometric_(0.25)
    a = g.numpy().astype(np.float64)
    assert g.dtype == dtype and a.min() >= 1 and np.all(a == np.floor(a))
    assert abs(a.mean() - 4) < 0.3 and abs(a.var() - 12) < 2.5  # mean 1/p, var (1-p)/p^2


def test_sampler_errors_torch_classes():
    x = st.zeros(3)
    for call in [
        lambda: x.exponential_(0),
        lambda: x.exponential_(-1),
        lambda: x.cauchy_(0, 0),
        lambda: x.log_normal_(0, 0),
        lambda: x.geometric_(0),
        lambda: x.geometric_(1),
        lambda: x.geometric_(1.5),
    ]:
        with pytest.raises(RuntimeError):
            call()
    with pytest.raises(RuntimeError):  # a continuous distribution needs a float dtype
        st.zeros(3, dtype=st.int64).exponential_()
    with pytest.raises(RuntimeError):
        st.zeros(3, dtype=st.int64).cauchy_()
    with pytest.raises(NotImplementedError):
        st.zeros(3, dtype=st.int64).log_normal_()
    with pytest.raises(NotImplementedError):
        st.zeros(3, dtype=st.bool).geometric_(0.5)
    leaf = st.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError):  # in-place on a leaf that requires grad
        leaf.exponential_()
    assert x.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "fill",
    [
        lambda t: t.random_(0, 1000),
        lambda t: t.exponential_(),
        lambda t: t.cauchy_(),
        lambda t: t.log_normal_(),
        lambda t: t.geometric_(0.3),
    ],
    ids=["random_", "exponential_", "cauchy_", "log_normal_", "geometric_"],
)
def test_same_values_for_any_layout_after_seed(fill):
    st.manual_seed(7)
    a = fill(st.zeros(7, 5, dim=0, shards=3)).numpy()
    st.manual_seed(7)
    b = fill(st.zeros(7, 5, dim=1, shards=2)).numpy()
    st.manual_seed(7)
    c = fill(st.zeros(7, 5)).numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.all(a == a.ravel()[0])
