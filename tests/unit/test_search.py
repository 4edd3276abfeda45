"""searchsorted / bucketize against NumPy (torch's rules): the sorted sequence split anywhere,
values on every layout, batched sequences, and the exchange on the cheaper side."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sharded as st
from tests.helpers import (
    PLACEMENT_IDS,
    PLACEMENTS,
    assert_matches_numpy,
    current_executor,
    examples,
    placements,
    traced_peak,
)

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
SEQ = np.sort(rng.integers(0, 20, 11)).astype(np.float64)  # with repeats
VALS = rng.integers(-2, 23, (7, 5)).astype(np.float64)
VALS[0, 0] = np.nan  # NaN goes past the end, as torch
SEQ_PLACES = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=5),
    dict(layout=st.Layout(chunks=(4, 0, 7))),
    dict(layout=st.Layout.replicated()),
]


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("splace", SEQ_PLACES, ids=["1", "2", "5", "uneven", "repl"])
def test_searchsorted_split_sequence(place, splace):
    s, v = st.from_numpy(SEQ, **splace), st.from_numpy(VALS, **place)
    for right in (False, True):
        side = "right" if right else "left"
        exp = np.searchsorted(SEQ, VALS, side=side)
        assert_matches_numpy(st.searchsorted(s, v, right=right), exp, dtype=st.int64)
        assert_matches_numpy(s.searchsorted(v, side=side, out_int32=True), exp, dtype=st.int32)
        assert_matches_numpy(st.bucketize(v, s, right=right), exp)


def test_both_directions_and_transfer_pieces():
    ex = current_executor()
    s = st.from_numpy(SEQ, shards=3)
    small = st.from_numpy(VALS[:1, :1], shards=1)  # the values travel, counts come back
    assert_matches_numpy(st.searchsorted(s, small), np.searchsorted(SEQ, VALS[:1, :1]))
    old = ex.transfer_bytes
    try:
        ex.transfer_bytes = 16  # pieces of two elements
        v = st.from_numpy(VALS, shards=2, dim=1)
        assert_matches_numpy(st.searchsorted(s, v), np.searchsorted(SEQ, VALS))
    finally:
        ex.transfer_bytes = old


def test_batched_sequence():
    seq = np.sort(rng.standard_normal((7, 6)), axis=1)
    vals = rng.standard_normal((7, 3))
    exp = np.stack([np.searchsorted(seq[i], vals[i], side="right") for i in range(7)])
    for sp in (dict(shards=2, dim=1), dict(shards=3), dict(layout=st.Layout.block((2, 2)))):
        for vp in PLACEMENTS:
            vp = vp if "chunks" not in repr(vp) else dict(shards=2)
            got = st.searchsorted(st.from_numpy(seq, **sp), st.from_numpy(vals, **vp), right=True)
            assert_matches_numpy(got, exp)


def test_scalars_sorter_and_errors():
    s = st.tensor([1.0, 3, 3, 5, 7], shards=3)
    r = st.searchsorted(s, 3.0)
    assert r.shape == () and r.item() == 1
    assert st.bucketize(3, s).item() == 1
    got = st.searchsorted(st.tensor([3.0, 1, 5]), st.tensor([2.0, 4]), sorter=st.tensor([1, 0, 2]))
    assert got.tolist() == [1, 2]
    assert st.searchsorted(st.tensor([1, 3, 5], shards=2), st.tensor([2.5])).tolist() == [1]
    with pytest.raises(st.ArgumentError, match="opposites"):
        st.searchsorted(s, st.tensor([1.0]), side="left", right=True)
    with pytest.raises(st.ShapeError, match=r"\[2, 3\]"):
        st.searchsorted(st.ones(2, 3), st.ones(3, 1))
    with pytest.raises(st.ShapeError):
        st.bucketize(st.ones(2), st.ones(2, 3))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(hs.integers(0, 9), hs.data())
def test_searchsorted_random_layouts(n, data):
    seq = np.sort(data.draw(hs.lists(hs.integers(0, 6), min_size=n, max_size=n))).astype(float)
    shape = tuple(data.draw(hs.lists(hs.integers(0, 4), min_size=1, max_size=3)))
    vals = rng.integers(-1, 8, shape).astype(float)
    s = st.from_numpy(seq, **data.draw(placements(seq.shape)))
    v = st.from_numpy(vals, **data.draw(placements(shape)))
    right = data.draw(hs.booleans())
    exp = np.searchsorted(seq, vals, side="right" if right else "left")
    assert_matches_numpy(st.searchsorted(s, v, right=right), exp)


def test_peak_memory_of_a_split_search():
    # relative to an elementwise op (one output block per worker): the output, a search
    # temporary, and in-process (one tracer, exports are copies) the pieces in transit
    n = 300_000
    s = st.from_numpy(np.sort(rng.standard_normal(n)), shards=3)
    v = st.from_numpy(rng.standard_normal(n), shards=3)

    assert traced_peak(lambda: st.searchsorted(s, v)) <= 3.5 * traced_peak(lambda: v + 1)


def test_search_errors_follow_torch():
    s = st.tensor([1.0, 2.0, 3.0], shards=2)
    v = st.tensor([0.5, 2.0])
    with pytest.raises(RuntimeError, match="left"):
        st.searchsorted(s, v, side="middle")
    with pytest.raises(RuntimeError, match="opposites"):
        st.searchsorted(s, v, side="left", right=True)
    with pytest.raises(RuntimeError, match="positive dimension"):
        st.searchsorted(st.tensor(1.0), v)
    s2 = st.tensor([[1.0, 2.0], [3.0, 4.0]], shards=2)
    with pytest.raises(RuntimeError, match="scalar"):
        st.searchsorted(s2, 1.5)
    with pytest.raises(RuntimeError, match="first N-1"):
        st.searchsorted(s2, st.ones((3, 1)))
    with pytest.raises(RuntimeError, match="1 dimension"):
        st.bucketize(v, s2)
    # torch's keyword for the values is input= (the docs call them values)
    assert st.searchsorted(s, input=v).tolist() == [0, 1]
    assert st.searchsorted(sorted_sequence=s, values=v, right=True).tolist() == [0, 2]
    r = st.searchsorted(s2, st.ones((2, 0)))  # no values per row
    assert r.shape == (2, 0) and r.dtype == st.int64
