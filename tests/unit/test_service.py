"""publish / get / list_published / unpublish on the in-process executor (one client); the
multi-client behaviour runs on a real Ray head in tests/service/test_published.py."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import sharded as st


@pytest.fixture(autouse=True)
def session():
    st.shutdown()
    st.init(executor="local", num_workers=2)
    yield
    st.shutdown()
    # the package's session (tests/unit/conftest.py)
    st.init(executor="local", num_workers=3, min_shard_bytes=0)


def _live():
    return st.stats()["live_shards"]


def _workers():
    return st.runtime.current().executor._workers


def test_publish_is_a_snapshot_without_copy_until_written():
    x = st.arange(6.0, shards=2)
    st.publish("w", x)
    for w, k in zip(x.layout.workers, x._keys):
        store = _workers()[w].store
        pub = [v for kk, v in store.items() if kk != k and v.base is store[k]]
        assert len(pub) == 1 and not pub[0].flags.writeable  # a read-only view, no copy
    view = x[1:3]
    view.mul_(10)  # writes through a view of x: the snapshot gets its own copy first
    x.add_(1)
    assert x.tolist() == [1.0, 11.0, 21.0, 4.0, 5.0, 6.0]
    assert st.get("w").tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_get_is_read_only_views_too():
    st.publish("w", st.ones(4, 2, shards=2))
    y = st.get("w")
    for write in (
        lambda: y.add_(1),
        lambda: y.t().mul_(2),
        lambda: y[0].fill_(3),
        lambda: y.__setitem__(0, 5.0),
    ):
        with pytest.raises(
            st.PublishedReadOnly, match=r"'w' is a published snapshot \(version 1\)"
        ):
            write()
    with pytest.raises(RuntimeError):
        y.zero_()
    z = y.clone()
    z.add_(1)  # a copy is an ordinary tensor
    assert z.numpy().tolist() == [[2.0, 2.0]] * 4 and y.numpy().tolist() == [[1.0, 1.0]] * 4
    assert y.dtype == st.float32 and tuple(y.shape) == (4, 2)


def test_replace_keeps_old_version_for_its_holder_then_frees_it():
    st.publish("w", st.zeros(4, shards=2))
    old = st.get("w")
    st.publish("w", st.ones(4, shards=2))
    assert old.tolist() == [0.0] * 4 and st.get("w").tolist() == [1.0] * 4
    n = _live()
    del old
    gc.collect()
    st.list_published()  # releases of dropped tensors are sent at the next service call
    st.synchronize()
    assert _live() == n - 2


def test_unpublish_frees_when_no_one_holds_it_and_names_are_listed():
    assert st.list_published() == []
    x = st.rand(8, shards=2)
    st.publish("b", x)
    st.publish("a", x)
    assert st.list_published() == ["a", "b"]
    base = _live()
    y = st.get("a")
    st.unpublish("a")
    assert st.list_published() == ["b"]
    np.testing.assert_array_equal(y.numpy(), x.numpy())  # still readable while held
    del y
    gc.collect()
    st.list_published()
    st.synchronize()
    assert _live() == base - 2
    with pytest.raises(st.PublishedNotFound, match="no tensor is published under 'a'"):
        st.get("a")
    with pytest.raises(st.PublishedNotFound):
        st.unpublish("a")


def test_bad_arguments():
    with pytest.raises(st.ArgumentError, match="non-empty str, got ''"):
        st.publish("", st.zeros(2))
    with pytest.raises(TypeError, match="got ndarray"):
        st.publish("n", np.zeros(2))
    for bad in ("", 3):
        with pytest.raises(
            st.ArgumentError, match=f"namespace must be a non-empty str, got {bad!r}"
        ):
            st.list_published(namespace=bad)
    with pytest.raises(st.ArgumentError, match="address='h:1' needs namespace="):
        st.published_entries(address="h:1")
    with pytest.raises(st.ArgumentError, match="namespace='lab' needs executor='ray'"):
        st.shutdown()
        st.init(executor="local", namespace="lab")


def test_publish_of_failed_tensor_raises_and_publishes_nothing():
    ex = st.runtime.current().executor
    x = st.arange(4.0, shards=2)
    n = _live()
    # a kernel that fails in the worker poisons shard 0 of x (the error is deferred)
    ex.submit(x.layout.workers[0], "no-such-kernel", (), (x._keys[0],), label=("boom", 0))
    with pytest.raises(st.OpFailed, match="op 'boom' failed on shard 0"):
        st.publish("bad", x)
    assert st.list_published() == []
    st.synchronize()
    assert _live() == n - 1  # the poisoned shard; no published copies left behind
    st.publish("good", st.ones(2))  # the session still works
    assert st.get("good").tolist() == [1.0, 1.0]
