import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))
INTS = rng.integers(-5, 5, (7, 6))

DIMS = [None, 0, 1, -1, (0, 1), (1, 0)]


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_every_layout(place, dim, keepdim):
    x = st.from_numpy(A, **place)
    ax = dim if not isinstance(dim, tuple) else tuple(dim)
    kw = dict(keepdims=keepdim)
    assert_matches_numpy(x.sum(dim, keepdim=keepdim), A.sum(ax, **kw), rtol=1e-12)
    assert_matches_numpy(st.mean(x, dim, keepdim), A.mean(ax, **kw), rtol=1e-12)
    assert_matches_numpy(x.prod(dim, keepdim=keepdim), A.prod(ax, **kw), rtol=1e-12)
    assert_matches_numpy(x.amax(dim if dim is not None else (), keepdim), A.max(ax, **kw))
    assert_matches_numpy(x.amin(dim if dim is not None else (), keepdim), A.min(ax, **kw))
    assert_matches_numpy(x.var(dim, keepdim=keepdim), A.var(ax, ddof=1, **kw), rtol=1e-10)
    assert_matches_numpy(x.std(dim, keepdim=keepdim, correction=0), A.std(ax, **kw), rtol=1e-10)
    assert_matches_numpy((x > 0).all(dim, keepdim), (A > 0).all(ax, **kw))
    assert_matches_numpy((x > 0).any(dim, keepdim), (A > 0).any(ax, **kw))


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_arg_reductions_every_layout(place):
    x = st.from_numpy(INTS, **place)  # many ties: the first index must win, as numpy/torch
    assert x.argmax().item() == INTS.argmax() and x.argmin().item() == INTS.argmin()
    for d in (0, 1):
        assert_matches_numpy(x.argmax(d), INTS.argmax(d), dtype=st.int64)
        assert_matches_numpy(x.argmin(d, keepdim=True), np.expand_dims(INTS.argmin(d), d))
        v, i = x.max(d)
        assert_matches_numpy(v, INTS.max(d)) and assert_matches_numpy(i, INTS.argmax(d))
        res = st.min(x, dim=d, keepdim=True)
        assert_matches_numpy(res.values, INTS.min(d, keepdims=True))
        assert_matches_numpy(res.indices, np.expand_dims(INTS.argmin(d), d))
    assert x.max().item() == INTS.max() and x.min().item() == INTS.min()
    assert x.argmax(keepdim=True).shape == (1, 1)


def test_integer_and_bool_reduction_dtypes():
    i = st.tensor(INTS.astype(np.int32), shards=3)
    assert i.sum().dtype == st.int64 and i.sum().item() == INTS.sum()
    assert i.prod(0).dtype == st.int64
    assert (i > 0).sum().dtype == st.int64 and (i > 0).sum().item() == (INTS > 0).sum()
    assert i.amax().dtype == st.int32
    assert i.sum(dtype=st.float64).dtype == st.float64
    with pytest.raises(st.DTypeError, match="int32"):
        i.mean()
    assert i.mean(dtype=st.float64).item() == pytest.approx(INTS.mean())


def test_nan_propagates_and_wins_argmax():
    x = st.tensor([1.0, float("nan"), 3.0, float("nan")], shards=3)
    assert np.isnan(x.max().item()) and np.isnan(x.sum().item())
    assert x.argmax().item() == 1


def test_full_reduction_is_0d():
    s = st.ones(5, 4, shards=2).sum()
    assert s.shape == () and s.ndim == 0 and s.item() == 20.0
    assert st.ones(3).mean(dim=0, keepdim=True).shape == (1,)


def test_empty_reductions():
    e = st.zeros(0, 3, shards=2)
    assert_matches_numpy(e.sum(0), np.zeros(3))
    assert_matches_numpy(e.sum(1), np.zeros(0))
    assert_matches_numpy(e.prod(), np.float32(1.0))
    assert np.isnan(e.mean().item())
    with pytest.raises(st.ArgumentError, match="size 0"):
        e.max()
    with pytest.raises(st.ArgumentError, match="size 0"):
        e.argmax(0)
    assert_matches_numpy(e.amax(1), np.zeros(0))


def test_dim_and_axis_spellings():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(x.sum(axis=0), A.sum(0))
    assert_matches_numpy(st.sum(x, dim=[0, 1]), A.sum())
    with pytest.raises(st.DimError, match="dim 2"):
        x.sum(2)
    with pytest.raises(st.ArgumentError, match="multiple"):
        x.sum((0, 0))
    with pytest.raises(st.ArgumentError):
        x.sum(dim=0, axis=0)
