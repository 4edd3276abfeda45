import gc

import numpy as np
import pytest

import sharded as st
from sharded.runtime.commands import Key


def test_worker_error_surfaces_at_next_read_naming_op_and_shard():
    x = st.arange(6, shards=3)
    # an integer // by a tensor holding 0 (torch raises) fails in the worker, read later
    bad = st.from_numpy(np.zeros(6, np.int64), shards=3) // st.tensor(0)
    with pytest.raises(st.OpFailed, match=r"'floor_divide'.*ZeroDivisionError"):
        bad.numpy()
    # a genuine worker-side failure: a kernel fed inconsistent params
    from sharded.runtime import current

    ex = current().executor
    k = ex.new_key()
    ex.submit(1, "reshape", (Key(x._keys[1], None),), (k,), {"shape": (7,)}, ("view", 1))
    with pytest.raises(st.OpFailed, match=r"'view'.*shard 1.*reshape") as e:
        x.sum().item()
    assert e.value.op == "view" and e.value.shard == 1
    assert x.sum().item() == 15  # operands intact, cluster usable
    ex.free(1, [k])


def test_failed_result_raises_when_read():
    from sharded.runtime import current

    ex = current().executor
    x = st.arange(4, shards=2)
    k = ex.new_key()
    ex.submit(0, "reshape", (Key(x._keys[0], None),), (k,), {"shape": (5,)}, ("view", 0))
    with pytest.raises(st.OpFailed):
        st.synchronize()
    with pytest.raises(st.OpFailed, match="view"):
        ex.fetch([(0, k, None)])
    st.synchronize()  # reported once; nothing pending any more


def test_tensor_after_shutdown_raises_session_closed():
    x = st.ones(3)
    st.shutdown()
    try:
        with pytest.raises(st.SessionClosed, match="shut down"):
            x + 1
        with pytest.raises(st.SessionClosed):
            x.numpy()
        assert "shut down" in repr(x)
    finally:
        st.init(executor="local", num_workers=3, min_shard_bytes=0)
    assert (st.ones(3) + 1).tolist() == [2.0, 2.0, 2.0]


def test_init_is_idempotent():
    s = st.init(executor="local", num_workers=3)
    assert st.init() is s and st.is_initialized()


def _live():
    gc.collect()
    return st.stats()["live_shards"]


def test_dropping_tensors_frees_their_shards():
    base = _live()
    x = st.rand(1000, 10, shards=4)
    assert _live() == base + 4
    del x
    assert _live() == base


def test_long_loop_keeps_worker_memory_flat():
    z = st.zeros(50_000, shards=3, dtype=st.float64)
    base = _live()
    for _ in range(2000):
        z = z * 1.0 + 1
    assert z.sum().item() == 2000 * 50_000
    assert _live() == base
    rss = [w["live_bytes"] for w in st.stats()["workers"]]
    assert sum(rss) < 10 * 50_000 * 8
