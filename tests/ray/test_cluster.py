"""Behaviour only a real multi-node cluster shows: placement, transfers, memory, naming."""

import gc

import numpy as np
import pytest
import ray

import sharded as st
from tests.helpers import assert_matches_numpy


def test_shards_sit_on_different_nodes():
    x = st.rand(8, 3, shards=4)
    nodes = [p["node"] for p in x.placement()]
    assert len(set(nodes)) == 2
    assert nodes[0] != nodes[1], "neighbouring shards go to different nodes"
    workers = {p["worker"] for p in x.placement()}
    assert workers == {0, 1, 2, 3}


def test_worker_actors_are_named():
    s = st.runtime.current()
    names = [w.name for w in s.executor.workers]
    assert names == [f"sharded-worker-{i}" for i in range(4)]
    listed = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
    assert set(names) <= listed


def test_uneven_and_empty_shards_across_nodes():
    a = np.arange(7 * 3, dtype=np.float64).reshape(7, 3)
    x = st.from_numpy(a, shards=3)
    y = st.from_numpy(a, shards=9)  # 2 empty shards
    assert_matches_numpy(x + y, 2 * a)
    assert_matches_numpy((x * y).sum(0), (a * a).sum(0))


def test_mismatched_layouts_move_worker_to_worker():
    a = np.arange(64.0).reshape(8, 8)
    x = st.from_numpy(a, shards=4)
    y = st.from_numpy(a, shards=4, dim=1)
    before = st.stats()["bytes_moved"]
    assert_matches_numpy(x + y, 2 * a)
    assert st.stats()["bytes_moved"] > before
    z = x.reshard(layout=st.Layout.block((2, 2)))
    assert_matches_numpy(z, a)
    assert z.layout.grid == (2, 2)
    assert_matches_numpy(x.replicate() + 1, a + 1)


def test_reduction_tree_over_nodes():
    st.manual_seed(3)
    x = st.rand(1001, 7, shards=4, dtype=st.float64)
    a = x.numpy()
    assert x.sum().item() == pytest.approx(a.sum(), rel=1e-12)
    assert_matches_numpy(x.max(0).indices, a.argmax(0))
    assert x.argmin().item() == a.argmin()
    assert_matches_numpy(st.softmax(x, 0), np.exp(a) / np.exp(a).sum(0), rtol=1e-10)


def test_200_chained_ops_batch():
    z = st.zeros(1000, shards=4)
    for _ in range(200):
        z = z + 1
    assert_matches_numpy(z, np.full(1000, 200.0))


def test_memory_flat_over_long_loop():
    z = st.zeros(100_000, shards=4, dtype=st.float64)
    gc.collect()
    base = st.stats()["live_shards"]
    for _ in range(1000):
        z = z + 1
    assert z.sum().item() == 1000 * 100_000
    gc.collect()
    stats = st.stats()
    assert stats["live_shards"] == base
    assert sum(w["live_bytes"] for w in stats["workers"]) < 4 * 100_000 * 8 * 3


def test_freed_blocks_reach_the_worker_pool():
    """A freed big block is kept for reuse inside a Ray actor too (Ray's per-method shims
    once held an extra reference, so none was ever pooled)."""
    x = st.zeros(4 * 300_000, shards=4, dtype=st.float64)
    y = x + 1
    st.synchronize()
    before = [w["pool_bytes"] for w in st.stats()["workers"]]
    del y
    gc.collect()
    st.synchronize()
    after = [w["pool_bytes"] for w in st.stats()["workers"]]
    assert all(a - b == 300_000 * 8 for a, b in zip(after, before)), (before, after)
    assert (x + 2).sum().item() == 2 * 4 * 300_000  # a new result takes a pooled block


def test_each_worker_pools_a_share_of_its_nodes_memory():
    from sharded.runtime.worker.store import pool_share

    mem = {n["NodeID"]: n["Resources"]["memory"] for n in ray.nodes() if n["Alive"]}
    s = st.stats()["workers"]
    per_node = {nid: sum(w["node"] == nid for w in s) for nid in mem}
    assert [w["pool_max_bytes"] for w in s] == [
        pool_share(mem[w["node"]], per_node[w["node"]]) for w in s
    ]
    assert all(w["pool_max_bytes"] == 256 << 20 for w in s)  # 4 GiB / 2 workers / 8


def test_errors_leave_cluster_usable():
    x = st.arange(10, shards=4)
    with pytest.raises(st.ShapeError):
        x + st.ones(3)
    with pytest.raises(st.ArgumentError):
        x.item()
    assert x.sum().item() == 45


def test_stats_report_every_worker():
    s = st.stats()
    assert len(s["workers"]) == 4
    assert len({w["node"] for w in s["workers"]}) == 2
    assert all(w["rss_bytes"] > 0 for w in s["workers"])
    info = st.info()
    assert info["executor"] == "ray" and len(info["nodes"]) == 2


def test_reshard_streams_through_bounded_buffers():
    ex = st.runtime.current().executor
    st.manual_seed(0)
    x = st.rand(2000, 1000, dtype=st.float64, shards=4)  # 4 MB per shard
    a = x.numpy()
    old = ex.transfer_bytes
    ex.transfer_bytes = 1 << 20
    try:
        moved = st.stats()["bytes_moved"]
        st.trace_memory(True)
        y = x.reshard(dim=1)
        st.synchronize()
        peaks = [w["traced_peak_bytes"] for w in st.stats()["workers"]]
        st.trace_memory(False)
    finally:
        ex.transfer_bytes = old
    shard = 2000 * 1000 * 8 // 4
    assert max(peaks) <= shard + (1 << 20) + (256 << 10), peaks
    assert st.stats()["bytes_moved"] - moved == 2000 * 1000 * 8 * 3 // 4
    assert_matches_numpy(y, a)
    assert y.layout.grid == (1, 4)


def test_views_move_no_bytes():
    x = st.rand(8, 6, shards=4)
    before = st.stats()["bytes_moved"]
    v = x.t().reshape(6, 8)[1:, ::2].unsqueeze(0).squeeze(0)
    x.view(8, 2, 3).permute(2, 0, 1)
    assert st.stats()["bytes_moved"] == before
    assert_matches_numpy(v, x.numpy().T[1:, ::2])
