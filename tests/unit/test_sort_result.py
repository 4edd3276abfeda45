"""What ``sort`` along the split dim of a 1-d tensor returns: a namedtuple like torch's whose
values and indices are made when first read (``st.sort(x).values`` moves no indices), from
a copy of the input taken at the call, freed once both are read or the result is dropped."""

import copy
import gc

import numpy as np
import pytest

import sharded as st
from sharded.ops.order.prims.sort import SortResult, _LazySort

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.random.default_rng(3).random(3000)


def moved(f):
    """``f()`` and the bytes the workers sent one another for it."""
    ex = st.runtime.current().executor
    st.synchronize()
    before = ex.bytes_moved
    out = f()
    st.synchronize()
    return out, ex.bytes_moved - before


def live():
    st.synchronize()
    gc.collect()
    st.synchronize()
    return st.stats()["live_shards"]


def test_the_values_alone_move_no_indices():
    x = st.tensor(A, shards=3)
    v, by_values = moved(lambda: st.sort(x).values)
    m, by_msort = moved(lambda: st.msort(x))
    (vv, ii), by_both = moved(lambda: tuple(st.sort(x)))
    assert np.array_equal(v.numpy(), np.sort(A)) and np.array_equal(m.numpy(), np.sort(A))
    assert np.array_equal(vv.numpy(), np.sort(A))
    assert np.array_equal(ii.numpy(), np.argsort(A, kind="stable"))
    assert by_values == by_msort  # the same values-only sort
    assert by_both >= 2 * by_values  # values with their int64 positions


def test_it_is_torchs_namedtuple():
    x = st.tensor([3.0, 1.0, 2.0, 1.0], shards=2)
    r = st.sort(x)
    assert type(r) is _LazySort and isinstance(r, SortResult) and isinstance(r, tuple)
    assert type(r).__name__ == "sort" and r._fields == ("values", "indices") and len(r) == 2
    assert r[0].tolist() == [1.0, 1.0, 2.0, 3.0] and r[-1].tolist() == [1, 3, 2, 0]
    v, i = r
    assert v is r.values is r[0] and i is r.indices is r[1]
    assert r[:] == (v, i) and list(reversed(r)) == [i, v] and r._asdict()["indices"] is i
    assert r.index(v) == 0 and v in r  # (identity first: tensors compare elementwise)
    assert repr(r).startswith("sort(values=tensor([1., 1., 2., 3.]")
    c = copy.copy(r)
    assert type(c) is SortResult and c.values is v
    with pytest.raises(IndexError):
        r[2]


def test_each_part_is_made_on_its_first_read():
    x = st.tensor(A, shards=3)
    r = st.sort(x, descending=True)
    want = np.argsort(-A, kind="stable")
    i = r.indices  # the indices alone, then the values from the same groups
    assert np.array_equal(i.numpy(), want) and r.indices is i
    assert np.array_equal(r.values.numpy(), A[want])
    assert np.array_equal(r[0].numpy(), A[want])


def test_later_changes_to_the_input_do_not_reach_it():
    a = np.array([4.0, 2.0, 3.0, 1.0, 0.0, 5.0, 2.0])
    x = st.tensor(a, shards=3)
    r, s = st.sort(x), st.sort(x)
    x.add_(10.0)
    x.data.mul_(-1.0)  # (no version count: the same blocks, written in place)
    assert r.values.tolist() == sorted(a)
    assert r.indices.tolist() == np.argsort(a, kind="stable").tolist()
    v, i = s
    assert v.tolist() == sorted(a) and i.tolist() == np.argsort(a, kind="stable").tolist()
    assert x.tolist() == (-(a + 10)).tolist()


def test_the_kept_groups_are_freed():
    x = st.tensor(A, shards=3)
    base = live()
    r = st.sort(x)
    assert live() > base  # the groups: values and positions of every shard
    v = r.values
    i = r.indices
    assert live() == base + 6  # both read: the groups went, the results stay
    del r, v, i
    assert live() == base
    r = st.sort(x)
    assert r.values.numel() == A.size
    del r  # dropped with the indices unread
    assert live() == base
    st.sort(x)  # never read
    assert live() == base


def test_a_recorded_sort_is_made_at_the_call():
    x = st.from_numpy(A[:50].copy(), requires_grad=True, shards=2)
    r = st.sort(x)
    assert type(r) is SortResult and r.values.requires_grad
    r.values.sum().backward()
    assert np.array_equal(x.grad.numpy(), np.ones(50))
    with st.no_grad():
        r = st.sort(x)
        assert type(r) is _LazySort
    assert not r.values.requires_grad and np.array_equal(r.values.numpy(), np.sort(A[:50]))
    m = st.msort(x.detach())
    assert np.array_equal(m.numpy(), np.sort(A[:50]))


@pytest.mark.ray_mirror(False)  # (it ends the session)
def test_a_result_of_a_closed_session():
    r = st.sort(st.tensor(A[:100], shards=2))
    st.shutdown()
    try:
        with pytest.raises(st.errors.SessionClosed):
            _ = r.values
        del r  # nothing left to free
    finally:
        st.init(executor="local", num_workers=3, min_shard_bytes=0)
