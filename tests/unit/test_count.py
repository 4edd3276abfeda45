"""bincount, histc, histogram and count_nonzero against NumPy (torch's rules), on every
layout; the count vectors are reduce-scattered, so results are sharded."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy, examples, placements

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))
INTS = rng.integers(0, 9, 7)
W = rng.standard_normal(7)
ONE_D = [p for p, i in zip(PLACEMENTS, PLACEMENT_IDS) if i not in ("dim1", "block")]


@pytest.mark.parametrize(
    "place", ONE_D, ids=[i for i in PLACEMENT_IDS if i not in ("dim1", "block")]
)
def test_bincount(place):
    x = st.from_numpy(INTS, **place)
    assert_matches_numpy(st.bincount(x), np.bincount(INTS), dtype=st.int64)
    assert_matches_numpy(x.bincount(minlength=15), np.bincount(INTS, minlength=15))
    w = st.from_numpy(W, shards=2)
    assert_matches_numpy(st.bincount(x, w), np.bincount(INTS, W), dtype=st.float64, rtol=1e-12)
    w32 = st.from_numpy(W.astype(np.float32), shards=3)
    assert st.bincount(x, weights=w32).dtype == st.float32
    assert st.bincount(x, weights=st.from_numpy(INTS)).dtype == st.float64
    assert st.bincount(x).layout.num_shards > 1  # reduce-scattered, not gathered


def test_bincount_edges_and_errors():
    e = st.tensor([], dtype=st.int64)
    assert st.bincount(e).shape == (0,) and st.bincount(e, minlength=3).tolist() == [0, 0, 0]
    assert st.bincount(st.tensor([1, 3], dtype=st.int32)).dtype == st.int64
    with pytest.raises(st.ArgumentError, match="-1"):
        st.bincount(st.tensor([1, -1], shards=2))
    with pytest.raises(st.ShapeError):
        st.bincount(st.tensor([[1]]))
    with pytest.raises(st.DTypeError, match="float"):
        st.bincount(st.tensor([1.0]))
    with pytest.raises(st.ShapeError, match="same length"):
        st.bincount(st.tensor([1, 2]), weights=st.tensor([1.0]))


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_histograms(place):
    x = st.from_numpy(A, **place)
    assert_matches_numpy(st.histc(x, bins=7), np.histogram(A, bins=7)[0], dtype=st.float64)
    assert_matches_numpy(x.histc(4, -1, 1), np.histogram(A[(A >= -1) & (A <= 1)], 4, (-1, 1))[0])
    h = st.histogram(x, bins=5, weight=st.from_numpy(A * A, **place), density=True)
    eh, ee = np.histogram(A, bins=5, weights=A * A, density=True)
    assert type(h).__name__ == "histogram"
    assert_matches_numpy(h.hist, eh, rtol=1e-12) and assert_matches_numpy(h.bin_edges, ee)
    h = x.histogram(st.tensor([-1.0, 0, 0.5, 2], dtype=st.float64, shards=2))
    assert_matches_numpy(h.hist, np.histogram(A, bins=[-1, 0, 0.5, 2])[0])
    h = st.histogram(x, bins=3, range=(0.0, 1.0))
    assert_matches_numpy(h.hist, np.histogram(A, bins=3, range=(0, 1))[0])
    assert_matches_numpy(st.count_nonzero(x > 0, dim=0), (A > 0).sum(0), dtype=st.int64)
    assert st.count_nonzero(x > 0).item() == (A > 0).sum()
    assert_matches_numpy(x.gt(0).count_nonzero((0, 1)), (A > 0).sum())


def test_histogram_torch_edge_cases():
    assert st.histc(st.tensor([2.0, 2.0]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]
    assert st.histc(st.tensor([]), bins=2).tolist() == [0.0, 0.0]
    assert st.histc(st.tensor([1.0, float("nan"), 2.0]), 2, 0, 2).tolist() == [0.0, 2.0]
    h = st.histogram(st.tensor([2.0, 2.0]), bins=2)
    assert h.hist.tolist() == [0.0, 2.0] and h.bin_edges.tolist() == [1.5, 2.0, 2.5]
    with pytest.raises(st.ArgumentError, match="larger"):
        st.histc(st.tensor([1.0]), bins=4, min=3, max=1)
    with pytest.raises(st.DTypeError, match="int64"):
        st.histc(st.tensor([1, 2]))
    with pytest.raises(st.ArgumentError, match="not finite"):
        st.histc(st.tensor([1.0, float("nan")]))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(hs.lists(hs.integers(0, 12), max_size=12), hs.data())
def test_bincount_random_layouts(vals, data):
    a = np.array(vals, dtype=np.int64)
    x = st.from_numpy(a, **data.draw(placements(a.shape)))
    m = data.draw(hs.integers(0, 5))
    assert_matches_numpy(st.bincount(x, minlength=m), np.bincount(a, minlength=m))


def test_count_errors_follow_torch():
    with pytest.raises(NotImplementedError, match="bincount_cpu"):
        st.bincount(st.tensor([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="bincount_cpu"):
        st.bincount(st.tensor([True]))
    with pytest.raises(RuntimeError, match="1-d"):
        st.bincount(st.tensor([[1, 2]]))
    with pytest.raises(RuntimeError, match="non-negative"):
        st.bincount(st.tensor([1, -1, 2], shards=2))
    with pytest.raises(RuntimeError, match="minlength"):
        st.bincount(st.tensor([1]), minlength=-1)
    with pytest.raises(TypeError, match="minlength"):
        st.bincount(st.tensor([1]), minlength=2.0)
    with pytest.raises(RuntimeError, match="same length"):
        st.bincount(st.tensor([1, 2]), st.tensor([1.0, 2.0, 3.0]))
    # torch: an empty input gives int64 zeros even with float weights
    r = st.bincount(st.tensor([], dtype=st.int64), st.tensor([]), minlength=2)
    assert r.dtype == st.int64 and r.tolist() == [0, 0]
    x = st.tensor([1.0, 2.0], shards=2)
    with pytest.raises(NotImplementedError, match="histogram_cpu"):
        st.histc(st.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="larger"):
        st.histc(x, bins=4, min=3, max=1)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        st.histc(x, bins=0)
    with pytest.raises(TypeError, match="bins"):
        st.histc(x, bins=4.0)
    with pytest.raises(RuntimeError, match="not finite"):
        st.histc(st.tensor([1.0, float("inf")]))
    with pytest.raises(NotImplementedError, match="histogram_cpu"):
        st.histogram(st.tensor([1, 2]), 3)
    with pytest.raises(NotImplementedError, match="linspace_cpu"):
        st.histogram(st.tensor([True]), 3)
    with pytest.raises(RuntimeError, match="not finite"):
        st.histogram(st.tensor([1.0, float("nan")]), 3)
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        st.histogram(x, 3, range=(1.0, -1.0))
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        st.histogram(x, st.tensor([1.0]))
    with pytest.raises(RuntimeError, match="one dimension"):
        st.histogram(x, st.tensor([[0.0, 1.0]]))
    with pytest.raises(RuntimeError, match="same dtype"):  # torch: bins keep the input's dtype
        st.histogram(x, st.tensor([0.0, 1.0], dtype=st.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        st.histogram(x, 2, weight=st.ones(2, dtype=st.float64))
    h = st.histogram(st.tensor([]), 2)  # torch: an empty input's range is [0, 1]
    assert h.hist.tolist() == [0.0, 0.0] and h.bin_edges.tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(RuntimeError, match="appears multiple times"):
        st.count_nonzero(st.ones((2, 3)), dim=(0, -2))
