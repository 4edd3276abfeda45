"""Two named namespaces on one small cluster whose CPUs the first one's detached workers hold.

A cluster of its own (a 2-CPU head), made and torn down here: the package's shared 4-worker
session would hold the CPUs these tests measure.
"""

import contextlib
import io
import re
import threading
import time

import pytest
import ray

import sharded as st
from sharded.cli import main as cli_main
from sharded.runtime.driver import session


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    # the package's session, if the modules before made it, comes back after this one
    prev = session.current() if st.is_initialized() else None
    back = prev and dict(
        address=prev.address,
        num_workers=prev.executor.num_workers,
        min_shard_bytes=prev.min_shard_bytes,
    )
    st.shutdown()
    c = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 2,
            "memory": 2 << 30,
            "object_store_memory": 200 << 20,
            "include_dashboard": False,
        },
    )
    yield c
    st.shutdown()
    if ray.is_initialized():
        ray.shutdown()
    c.shutdown()
    if back:
        st.init(**back)


@pytest.fixture(scope="module", autouse=True)
def ray_session(cluster):
    """Replaces the package's session: these tests open their own, one namespace at a time."""
    yield


def _named(address):
    """``{namespace: sorted actor names}`` of the cluster's live named actors."""
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        out = {}
        for a in ray.util.list_named_actors(all_namespaces=True):
            out.setdefault(a["namespace"], []).append(a["name"])
        return {ns: sorted(names) for ns, names in out.items()}
    finally:
        ray.shutdown()


def _cli(*argv):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli_main(list(argv))
    return rc, buf.getvalue()


def test_a_full_cluster_fails_fast_naming_the_namespace_that_holds_it(cluster, monkeypatch):
    st.init(address=cluster.address, namespace="lab", num_workers=2)  # both CPUs
    st.publish("w", st.arange(6.0))
    st.shutdown()  # the workers and the published tensor stay

    monkeypatch.setenv("SHARDED_PLACEMENT_TIMEOUT_S", "1")
    t0 = time.monotonic()
    with pytest.raises(st.PlacementFailed) as e:
        st.init(address=cluster.address, namespace="other")
    assert time.monotonic() - t0 < 10  # was 120 s
    assert isinstance(e.value, st.WorkerLost)  # what it raised before
    msg = str(e.value)
    # (st.init()'s default on Ray: one worker on the node, reserving both of its CPUs)
    assert "no room for 1 workers of namespace 'other' after 1" in msg
    assert "needs 2 CPUs, has 0 free" in msg
    assert "cluster's 2 CPUs (0 free), namespace 'lab' holds 2 with 2 sharded workers." in msg
    assert "sharded service status" in msg and "st.init(num_workers=...)" in msg
    assert [(h["namespace"], h["workers"], h["cpus"]) for h in e.value.holders] == [("lab", 2, 2.0)]
    assert [need for need, free in e.value.short.values()] == [2.0]
    # nothing of 'other' was made: a later st.init(namespace="other", ...) starts afresh
    assert "other" not in _named(cluster.address)

    # the registry of 'lab' is read with lab's own workers: joining them places nothing
    monkeypatch.setenv("SHARDED_PLACEMENT_TIMEOUT_S", "0")
    st.init(address=cluster.address, namespace="lab", num_workers=4)  # (first client's 2 win)
    assert st.list_published() == ["w"]
    assert st.get("w").tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert (st.get("w") * 2).sum().item() == 30.0
    st.shutdown()

    # the status shows each namespace's workers with their CPUs
    rc, out = _cli("service", "status", "--address", cluster.address)
    assert rc == 0, out
    assert "namespace 'lab': 2 sharded workers, 2 CPUs" in out, out
    rc, out = _cli("service", "status", "--address", cluster.address, "--namespace", "lab")
    assert rc == 0 and out.count("cpus 1") == 2, out


def test_the_registry_is_read_without_workers_and_a_second_namespace_starts_clean(
    cluster, monkeypatch
):
    # as the first test left it: lab's 2 detached workers hold both CPUs, "w" published
    if ray.is_initialized():
        ray.shutdown()
    monkeypatch.setenv("SHARDED_PLACEMENT_TIMEOUT_S", "0")
    with pytest.raises(st.PlacementFailed, match="namespace 'lab' holds 2"):
        st.init(address=cluster.address, namespace="other")
    assert not st.is_initialized() and not ray.is_initialized()

    # lab's names from a client with no session and no room: connects, starts nothing
    assert st.list_published(namespace="lab", address=cluster.address) == ["w"]
    [e] = st.published_entries(namespace="lab")
    assert (e["name"], tuple(e["shape"]), e["dtype"]) == ("w", (6,), "float32")
    assert not st.is_initialized()
    with pytest.raises(
        st.ArgumentError, match=r"in namespace 'lob' \(namespaces with one: \['lab'\]"
    ):
        st.list_published(namespace="lob")
    with pytest.raises(st.ArgumentError, match="needs namespace="):
        st.list_published(address=cluster.address)
    named = ray.util.list_named_actors(all_namespaces=True)  # (Ray is connected now)
    assert "other" not in {a["namespace"] for a in named}  # the failed start left nothing

    # with a node of room, "other" starts with its own plan (1 worker, not the failed 2)
    node = cluster.add_node(num_cpus=1, memory=1 << 30, object_store_memory=100 << 20)
    try:
        cluster.wait_for_nodes()
        monkeypatch.setenv("SHARDED_PLACEMENT_TIMEOUT_S", "10")  # (the new node's CPUs show)
        # planned on the node with room (lab's holds no free CPU), not on the first one
        st.init(address=cluster.address, namespace="other", num_workers=1)
        assert session.current().executor.num_workers == 1
        assert st.list_published() == [] and st.list_published(namespace="lab") == ["w"]
        with pytest.raises(st.PublishedNotFound, match="published in namespace 'lab'"):
            st.get("w")
        st.publish("v", st.ones(2))
        rc, out = _cli("service", "status", "--address", cluster.address)
        assert rc == 0, out
        lines = [ln.split() for ln in out.splitlines()]
        assert ["namespace", "'lab':", "2", "sharded", "workers,", "2", "CPUs"] in lines, out
        assert ["namespace", "'other':", "1", "sharded", "workers,", "1", "CPUs"] in lines, out
        workers = [ln for ln in lines if ln[0].startswith("sharded-worker-")]
        assert [(w[0], w[3:5]) for w in workers] == [
            ("sharded-worker-0", ["cpus", "1"]),
            ("sharded-worker-1", ["cpus", "1"]),
            ("sharded-worker-0", ["cpus", "1"]),
        ], out
        assert ["published:", "w"] in lines and ["published:", "v"] in lines, out
    finally:
        st.shutdown()
        _cli("service", "stop", "--address", cluster.address, "--namespace", "other")
        ray.shutdown()
        cluster.remove_node(node)


@ray.remote
class _Holder:
    def ping(self):
        return 1


def test_placement_waits_within_the_bound_for_cpus_coming_free(cluster, monkeypatch):
    rc, out = _cli("service", "stop", "--address", cluster.address, "--namespace", "lab")
    assert rc == 0 and "stopped 3 actors" in out, out  # (the command left Ray connected)
    holder = _Holder.options(num_cpus=2, name="holder", namespace="tmp").remote()
    ray.get(holder.ping.remote())
    threading.Timer(1.5, ray.kill, args=(holder,)).start()
    monkeypatch.setenv("SHARDED_PLACEMENT_TIMEOUT_S", "20")
    t0 = time.monotonic()
    try:
        st.init(address=cluster.address, num_workers=2)  # waits for the holder to go
        assert time.monotonic() - t0 >= 1.0
        assert st.arange(4.0, shards=2).sum().item() == 6.0
    finally:
        st.shutdown()
        ray.shutdown()


def test_a_start_that_times_out_leaves_nothing_half_made(cluster, monkeypatch):
    from sharded.runtime.driver import ray_executor

    # the workers take longer than this bound to start: the start fails as a lost worker
    monkeypatch.setattr(ray_executor, "READY_TIMEOUT_S", 0.01)
    with pytest.raises(st.WorkerLost, match="did not start within 0.01s"):
        st.init(address=cluster.address, namespace="slow", num_workers=1)
    assert not st.is_initialized()
    assert "slow" not in _named(cluster.address)  # was: a registry and a detached worker
    monkeypatch.undo()
    st.init(address=cluster.address, namespace="slow", num_workers=1)  # afresh, as planned
    try:
        assert st.arange(3.0).sum().item() == 3.0
    finally:
        st.shutdown()
        _cli("service", "stop", "--address", cluster.address, "--namespace", "slow")
        ray.shutdown()


def test_gpu_workers_without_room_fail_fast_naming_what_holds_the_gpus(cluster, monkeypatch):
    node = cluster.add_node(num_cpus=0, num_gpus=1, object_store_memory=100 << 20)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    holder = _Holder.options(num_cpus=0, num_gpus=1, name="gpu-holder", namespace="tmp").remote()
    try:
        ray.get(holder.ping.remote())
        monkeypatch.setenv("SHARDED_PLACEMENT_TIMEOUT_S", "0.5")
        t0 = time.monotonic()
        with pytest.raises(st.PlacementFailed) as e:
            st.init(address=cluster.address, namespace="g", num_workers=1, gpu_workers=1)
        assert time.monotonic() - t0 < 10  # was: 120 s, then WorkerLost
        msg = str(e.value)
        assert re.match(r"no room for 1 GPU workers of namespace 'g' after 0\.\d s: at 1 GPUs", msg)
        assert (
            "the free GPUs hold 0. Of the cluster's 1 GPUs (0 free), namespace 'tmp' holds 1 "
            "with 1 other actors." in msg
        )
        assert e.value.holders == ({"namespace": "tmp", "workers": 0, "others": 1, "gpus": 1.0},)
        named = ray.util.list_named_actors(all_namespaces=True)
        assert "g" not in {a["namespace"] for a in named}  # nothing was started
    finally:
        st.shutdown()
        ray.kill(holder)
        ray.shutdown()
        cluster.remove_node(node)
