"""st.histogramdd and st.nonzero_static against torch 2.13's values (literals below), on
whole and split inputs, with torch's errors."""

import numpy as np
import pytest

import sharded as st

PTS = [
    [[0.1, 2.0, -1.0], [0.7, 0.3, 0.5], [1.0, 1.0, 1.0]],
    [[0.4, 0.9, 0.2], [-0.5, 0.5, 0.0], [0.9, 1.5, 0.8]],
]
WEIGHT = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


@pytest.mark.parametrize("shards", [1, 2])
def test_histogramdd_matches_torch(shards):
    x = st.tensor(PTS, dtype=st.float64, shards=shards)
    hist, edges = st.histogramdd(x, [2, 1, 3])
    assert hist.dtype == st.float64 and hist.shape == (2, 1, 3)
    assert hist.tolist() == [[[1.0, 1.0, 0.0]], [[0.0, 1.0, 3.0]]]
    np.testing.assert_allclose(edges[0].numpy(), [-0.5, 0.25, 1.0])
    np.testing.assert_allclose(edges[1].numpy(), [0.3, 2.0])
    np.testing.assert_allclose(edges[2].numpy(), [-1.0, -1 / 3, 1 / 3, 1.0])
    w = st.tensor(WEIGHT, dtype=st.float64, shards=shards)
    got = st.histogramdd(x, 2, range=[0.0, 1.0, 0.0, 1.0, 0.0, 1.0], weight=w).hist
    assert got.tolist() == [[[0.0, 0.0], [4.0, 0.0]], [[0.0, 2.0], [0.0, 3.0]]]
    bins = [st.tensor(e, dtype=st.float64) for e in ([0, 0.5, 1], [0, 2], [-1, 0, 0.25, 1])]
    got = st.histogramdd(x, bins, density=True).hist
    np.testing.assert_allclose(got.numpy(), [[[0.2, 0.8, 0.0]], [[0.0, 0.0, 0.8]]], rtol=1e-12)
    hist, edges = st.histogramdd(x.float(), [3, 2, 2])
    assert hist.dtype == st.float32
    assert hist.tolist() == [[[0, 1], [0, 0]], [[0, 1], [1, 0]], [[0, 2], [0, 1]]]
    assert edges[1].tolist() == [0.30000001192092896, 1.149999976158142, 2.0]
    # torch: an empty input bins [0, 1]; a flat dim widens by 0.5 each way
    hist, edges = st.histogramdd(st.zeros(0, 2), 2)
    assert hist.tolist() == [[0, 0], [0, 0]] and edges[0].tolist() == [0.0, 0.5, 1.0]
    hist, edges = st.histogramdd(st.full((3, 2), 2.0, shards=shards), 2)
    assert hist.tolist() == [[0, 0], [0, 3]] and edges[1].tolist() == [1.5, 2.0, 2.5]


def test_histogramdd_errors():
    x = st.tensor([[0.0, 1.0], [1.0, 1.5], [2.0, 0.0], [0.5, 2.0]])
    with pytest.raises(st.ShapeError, match="size of bins must be equal to the innermost"):
        st.histogramdd(x, [2, 3, 4])
    with pytest.raises(st.ArgumentError, match="bins must be > 0, but got 0 for dimension 0"):
        st.histogramdd(x, 0)
    with pytest.raises(st.ArgumentError, match="got 0 elements in the bins tensor for dimension 1"):
        st.histogramdd(x, [2, -1])
    with pytest.raises(st.ArgumentError, match="range should have 4 elements, but got 2"):
        st.histogramdd(x, 2, range=[0.0, 1.0])
    with pytest.raises(st.ArgumentError, match="min 1 max 0 for dimension 0"):
        st.histogramdd(x, 2, range=[1.0, 0.0, 0.0, 1.0])
    with pytest.raises(st.ArgumentError, match=r"dimension 0's range \[0, inf\] is not finite"):
        st.histogramdd(x, 2, range=[0.0, float("inf"), 0.0, 1.0])
    with pytest.raises(st.UnsupportedDType, match="not implemented for 'int64'"):
        st.histogramdd(x.long(), 2)
    with pytest.raises(st.ShapeError, match=r"shape \[4, 2\] and weight with shape \[3\]"):
        st.histogramdd(x, 2, weight=st.ones(3))
    with pytest.raises(st.DTypeError, match=r"input\(float32\), and weight\(float64\)"):
        st.histogramdd(x, 2, weight=st.ones(4, dtype=st.float64))
    with pytest.raises(st.ShapeError, match="at least 2 dimensions"):
        st.histogramdd(x[:, 0], 3)
    with pytest.raises(st.ShapeError, match="2 dimensions in the bins tensor for dimension 1"):
        st.histogramdd(x, [st.tensor([0.0, 1.0]), st.tensor([[0.0, 1.0]])])
    with pytest.raises(st.DTypeError, match="bins for dimension 1 with dtype float64"):
        st.histogramdd(x, [st.tensor([0.0, 1.0]), st.tensor([0.0, 1.0], dtype=st.float64)])


@pytest.mark.parametrize("shards", [1, 2])
def test_nonzero_static_matches_torch(shards):
    x = st.tensor([[0, 1, 0], [2, 0, 3]], shards=shards)
    assert st.nonzero_static(x, size=2).tolist() == [[0, 1], [1, 0]]
    got = st.nonzero_static(x, size=5, fill_value=-7)
    assert got.dtype == st.int64
    assert got.tolist() == [[0, 1], [1, 0], [1, 2], [-7, -7], [-7, -7]]
    assert x.bool().nonzero_static(size=4).tolist() == [[0, 1], [1, 0], [1, 2], [-1, -1]]
    assert st.nonzero_static(x, size=0).shape == (0, 2)
    assert st.nonzero_static(st.tensor(3.0), size=2).shape == (2, 0)  # torch: (size, 0)
    assert st.nonzero_static(st.tensor([1 + 0j, 0j]), size=2).tolist() == [[0], [-1]]
    with pytest.raises(st.ArgumentError, match="'size' must be an non-negative integer"):
        st.nonzero_static(x, size=-1)
    with pytest.raises(st.ArgumentTypeError, match="argument 'size' must be int, not float"):
        st.nonzero_static(x, size=2.0)
    with pytest.raises(st.ArgumentTypeError, match="'fill_value' must be int, not float"):
        st.nonzero_static(x, size=2, fill_value=2.5)
    with pytest.raises(TypeError):
        st.nonzero_static(x, 2)  # size is keyword-only
