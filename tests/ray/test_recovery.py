"""Recovery from lost workers on the two-node Ray cluster: ``ray.kill`` of an actor, SIGKILL of
its process, and removal of a node, each compared bit for bit with the run without a loss."""

import os
import signal
import threading
import time

import numpy as np
import pytest
import ray

import sharded as st
from sharded.runtime.commands import Transfer
from sharded.runtime.driver import session
from tests.ray.conftest import CPUS_PER_NODE, NODES
from tests.unit.test_recovery import _same, pipeline


def _ex():
    return session.current().executor


def _actor(w):
    return _ex()._actors[w]


def _pid(w):
    return st.stats()["workers"][w]["pid"]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except (FileNotFoundError, ProcessLookupError):  # (gone between the open and the read)
        return False


def _until_ended(pid, what):
    deadline = time.monotonic() + 30
    while _running(pid):
        assert time.monotonic() < deadline, f"{what} (pid {pid}) runs 30 s on"
        time.sleep(0.02)


def _stop(pid):
    """SIGSTOP ``pid`` and wait (at most 30 s) until every thread of it has stopped: the
    signal is delivered asynchronously, and on a busy machine a thread already running (the
    worker's wire server) can answer a command before the group stop reaches it."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 30
    while True:
        states = []
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:  # (a thread that ended between the listing and the read)
                pass
        if all(s in "Tt" for s in states):
            return
        assert time.monotonic() < deadline, f"pid {pid} not stopped 30 s after SIGSTOP: {states}"
        time.sleep(0.01)


def _kill(w):
    """``ray.kill`` of worker ``w``'s actor, waiting (at most 30 s) for its process to end:
    ``ray.kill`` returns at once, and a batch sent in between could still run on the worker."""
    pid = _pid(w)
    ray.kill(_actor(w))
    _until_ended(pid, f"worker {w} after ray.kill")


@pytest.fixture(scope="module")
def reference():
    return pipeline()


def test_ray_kill_between_ops(reference):
    ex = _ex()
    before = ex.recovery_stats()["count"]
    got = pipeline(hook=lambda: _kill(1))
    _same(reference, got)
    assert ex.recovery_stats()["count"] == before + 1
    assert ex.workers[1].name == "sharded-worker-1"
    assert ray.get_actor("sharded-worker-1", namespace=ex._spawn[1][1]["namespace"])


def _sigkill_during_pipeline(reference, w, delay):
    """Worker ``w``'s process dies ``delay`` s into the pipeline; the results are the same."""
    pid = _pid(w)
    t = threading.Timer(delay, os.kill, (pid, 9))
    t.start()
    try:
        got = pipeline()
    finally:
        t.join()
    _same(reference, got)
    assert _pid(w) != pid  # (a kill after the pipeline ended is found here)


@pytest.mark.parametrize("delay", [0.05, 0.15])
def test_sigkill_during_the_pipeline(reference, delay):
    """The process of a worker dies at a seeded moment while the pipeline runs."""
    _sigkill_during_pipeline(reference, 2, delay)


def test_two_workers_one_after_the_other(reference):
    ex = _ex()
    before = ex.recovery_stats()
    _kill(0)

    def second():
        _kill(3)

    got = pipeline(hook=second)
    _same(reference, got)
    after = ex.recovery_stats()
    assert after["count"] >= before["count"] + 2
    assert after["workers_replaced"] >= before["workers_replaced"] + 2
    assert after["shards_rebuilt"] > before["shards_rebuilt"]


def test_kill_during_a_reshard_of_20_mb():
    st.manual_seed(5)
    x = st.rand(1280, 2048, shards=4, dtype=st.float64)  # 20 MiB
    want = x.numpy()[:, 1000:1010].copy()
    pid, before = _pid(1), _ex().recovery_stats()["count"]
    y = x.reshard(dim=1, shards=4)
    time.sleep(0.02)  # the transfers are under way
    os.kill(pid, 9)
    np.testing.assert_array_equal(y[:, 1000:1010].numpy(), want)
    np.testing.assert_array_equal(x[:, 1000:1010].numpy(), want)
    assert _ex().recovery_stats()["count"] == before + 1


def test_stats_and_no_unhandled_noise(reference, capfd):
    _kill(2)
    _same(reference, pipeline())
    rec = st.stats()["recoveries"]
    assert rec["enabled"] and rec["count"] >= 1 and rec["seconds"] > 0
    time.sleep(1)  # Ray reports unhandled errors when their refs are dropped
    assert "Unhandled error" not in capfd.readouterr().err


def _restart(address, n=NODES * CPUS_PER_NODE, **kw):
    st.shutdown()
    st.init(address=address, num_workers=n, min_shard_bytes=0, **kw)


@pytest.mark.parametrize("relays", [False, True])
@pytest.mark.parametrize("cut", [False, True])
def test_remove_a_node(ray_cluster, monkeypatch, cut, relays):
    """Also after a cut: every snapshot has a second copy on another node; also behind
    relays (a cut then waits for what the relays started, and keeps the exports they hold)."""
    from sharded.runtime.driver import ray_executor, recovery

    node = ray_cluster.add_node(num_cpus=CPUS_PER_NODE, object_store_memory=150 * 2**20)
    ray_cluster.wait_for_nodes()
    try:
        if relays:
            monkeypatch.setattr(ray_executor, "RELAY_MIN", 2)
        _restart(ray_cluster.address, n=(NODES + 1) * CPUS_PER_NODE)
        ex = _ex()
        assert bool(ex._relays) == relays
        gone = {w for w, i in enumerate(ex.workers) if i.node == node.node_id}
        assert gone
        pids = {w: _pid(w) for w in gone}
        reference = pipeline()  # this session's own: 6 workers split the weights otherwise
        st.manual_seed(4)
        big = st.rand(600_000, shards=6, dtype=st.float64)  # 800 kB a worker: in the object
        want = big.numpy()  # store (small snapshots would live in the driver's memory)
        if cut:  # a cut at the first read of the pipeline: the rest replays from it
            monkeypatch.setattr(recovery, "LOG_MAX_COMMANDS", 0)

        def remove():
            monkeypatch.setattr(recovery, "LOG_MAX_COMMANDS", 10**6)
            assert ex.recovery_stats()["cuts"] == int(cut)
            ray_cluster.remove_node(node)
            # remove_node waits for the node's raylet, not for the worker processes it
            # started: they exit when they notice their raylet is gone (Ray checks every
            # second), and until then the next ops could still run on them
            for w, pid in pids.items():
                _until_ended(pid, f"worker {w} of the removed node")

        got = pipeline(hook=remove)
        _same(reference, got)
        np.testing.assert_array_equal(big.numpy(), want)
        assert all(i.node != node.node_id for i in ex.workers)
        assert ex.recovery_stats()["workers_replaced"] >= len(gone)
    finally:
        monkeypatch.undo()
        if node in ray_cluster.worker_nodes:
            ray_cluster.remove_node(node)
        _restart(ray_cluster.address)


def test_recovery_off_raises_worker_lost(ray_cluster):
    _restart(ray_cluster.address, recovery=False)
    try:
        assert st.stats()["recoveries"]["enabled"] is False
        x = st.ones(8, shards=4)
        _kill(1)
        with pytest.raises(st.WorkerLost, match="sharded-worker-1.*recovery is off") as e:
            (x + 1).numpy()
        assert "2 tensors with shards on sharded-worker-1 are lost: float32[8] (4 shards)" in (
            str(e.value)
        )
        assert e.value.workers == ("sharded-worker-1",)
    finally:
        _restart(ray_cluster.address)


def test_cut_on_ray_restores_from_snapshots(monkeypatch):
    from sharded.runtime.driver import recovery

    ex = _ex()
    st.manual_seed(11)
    x = st.rand(40, 6, shards=4)
    x.add_(1)
    monkeypatch.setattr(recovery, "LOG_MAX_COMMANDS", 0)
    st.synchronize()  # over the bound: every worker snapshots, the log restarts
    monkeypatch.setattr(recovery, "LOG_MAX_COMMANDS", 10**6)
    assert ex.recovery_stats()["log_batches"] == 0
    y = x * 3
    want, xs = y.numpy(), x.numpy()
    _kill(2)
    np.testing.assert_array_equal((x * 3).numpy(), want)
    np.testing.assert_array_equal(y.numpy(), want)
    x.mul_(2)  # restored shards are writable
    np.testing.assert_array_equal(x.numpy(), xs * 2)


@pytest.mark.parametrize("fanout", [32, 2])
def test_recovery_behind_relays(ray_cluster, monkeypatch, reference, fanout):
    """More workers than SHARDED_RELAY_MIN: batches go through relays (one, or two whose trees
    cross), and a kill between ops, a SIGKILL during the pipeline and a kill during a
    reshard are rebuilt bit for bit like without relays. With one relay reads go over the
    driver's wire (as up to SHARDED_WIRE_MAX workers), with two through the relays."""
    from sharded.runtime.driver import ray_executor, relay

    monkeypatch.setattr(ray_executor, "RELAY_MIN", 2)
    monkeypatch.setattr(ray_executor, "RELAY_FANOUT", fanout)
    monkeypatch.setattr(relay, "WIRE_MAX", 32 if fanout == 32 else 0)
    _restart(ray_cluster.address)
    try:
        ex = _ex()
        assert ex._relays and len(ex._relays) == -(-ex.num_workers // fanout)
        assert st.stats()["recoveries"]["enabled"]
        _same(reference, pipeline(hook=lambda: _kill(1)))
        assert ex.recovery_stats()["count"] == 1
        _sigkill_during_pipeline(reference, 2, 0.1)
        x = st.rand(256, 512, shards=4, dtype=st.float64)
        want = x.numpy()
        y = x.reshard(dim=1, shards=4)
        _kill(3)
        np.testing.assert_array_equal(y.numpy(), want)
        np.testing.assert_array_equal((x + 1).numpy(), want + 1)
        assert ex.recovery_stats()["count"] >= 3
        relay = ex._relays[0]
        ray.kill(relay)  # a relay itself: a fresh one, and its workers rebuilt
        _same(reference, pipeline())
        assert ex._relays[0] is not relay
        np.testing.assert_array_equal(y.numpy(), want)
        # an op error in flight at a loss: the relay drops it, the replay's surfaces
        bad = {"shape": (2,), "value": 1.0, "dtype": "no-such-dtype"}
        pid = _pid(1)
        ex.submit(2, "full", (), (ex.new_key(),), bad)
        z = x * 2
        ray.kill(_actor(1))
        _until_ended(pid, "worker 1 after ray.kill")
        with pytest.raises(st.OpFailed, match="op 'full' failed on worker 2"):
            st.synchronize()
        st.synchronize()
        np.testing.assert_array_equal(z.numpy(), want * 2)
        # an export whose worker dies before it is made: its first use finds the loss, and
        # a later use (through the other relay, too) gets the replayed export
        k = ex.new_key()
        ex.submit(0, "full", (), (k,), {"shape": (4,), "value": 7.0, "dtype": "float64"})
        pid = _pid(0)
        (h,) = ex.export({0: [(k, (slice(1, 3),))]})[0]
        ray.kill(_actor(0))
        _until_ended(pid, "worker 0 after ray.kill")
        for w in (1, 3, 2):
            out = ex.new_key()
            ex.submit(w, "copy", (Transfer(h),), (out,), {"dtype": "float64"}, ("copy", 0))
            assert ex.fetch([(w, out, None)])[0].tolist() == [7.0, 7.0]
    finally:
        monkeypatch.undo()
        _restart(ray_cluster.address)


def test_relays_with_recovery_off_raise_worker_lost(ray_cluster, monkeypatch):
    from sharded.runtime.driver import ray_executor

    monkeypatch.setattr(ray_executor, "RELAY_MIN", 2)
    _restart(ray_cluster.address, recovery=False)
    try:
        assert _ex()._relays
        x = st.ones(8, shards=4)
        assert (x + 1).sum().item() == 16.0
        _kill(1)
        with pytest.raises(st.WorkerLost, match="sharded-worker-1.*recovery is off"):
            (x + 1).numpy()
    finally:
        monkeypatch.undo()
        _restart(ray_cluster.address)


def test_a_stuck_worker_raises_wait_timeout_and_a_later_read_works():
    """A worker that does not answer (its process stopped) makes a read wait no longer than
    the session's timeout; once it goes on, the same tensor reads fine."""
    ex = _ex()
    x = st.arange(8.0, shards=4)
    st.synchronize()
    pid, before = _pid(1), ex.recovery_stats()["count"]
    st.init(timeout=2)  # the live session's bound
    _stop(pid)
    try:
        y = x * 2
        t0 = time.monotonic()
        with pytest.raises(st.WaitTimeout, match="for a read from sharded-worker-1 ") as e:
            y.numpy()
        assert 2 <= time.monotonic() - t0 < 20  # the bound: the stopped worker never answers
        assert e.value.workers == ("sharded-worker-1",)
    finally:
        os.kill(pid, signal.SIGCONT)
        ex.timeout = 1800.0
    np.testing.assert_array_equal(y.numpy(), np.arange(8.0) * 2)
    st.synchronize()
    assert ex.recovery_stats()["count"] == before and _pid(1) == pid  # nothing replaced


def test_a_lost_threaded_worker_loses_all_its_shards(ray_cluster, monkeypatch):
    """``st.init()``'s default on Ray (no ``num_workers``, no ``workers_per_node``): one
    worker per node on both of its CPUs, a default placement makes one shard per thread (4
    over the 2 workers); killing a worker loses both of its shards at once, and the replay
    rebuilds them bit for bit."""
    monkeypatch.delenv("SHARDED_WORKERS_PER_NODE", raising=False)
    _restart(ray_cluster.address, n=None)
    try:
        ex = _ex()
        assert [i.threads for i in ex.workers] == [CPUS_PER_NODE] * NODES
        assert len({i.node for i in ex.workers}) == NODES  # one worker on each node
        reference = pipeline()
        st.manual_seed(3)
        x = st.rand(64, 4096, dtype=st.float64)  # no shards=: one per thread
        assert x.layout.num_shards == NODES * CPUS_PER_NODE
        assert sorted(x.layout.workers) == [0, 0, 1, 1]
        want = ((x * 2 + 1).sum(dim=1)).numpy()
        # (shards of 64K elements: each worker ran its two on its two threads)
        assert all(w["parallel_sections"] > 0 for w in st.stats()["workers"])
        before = ex.recovery_stats()["count"]
        _same(reference, pipeline(hook=lambda: _kill(1)))
        np.testing.assert_array_equal(((x * 2 + 1).sum(dim=1)).numpy(), want)
        assert ex.recovery_stats()["count"] == before + 1
    finally:
        _restart(ray_cluster.address)


def test_a_lost_child_of_a_tree_no_wait_covered():
    """A sum nobody reads at once is shipped by the flush timer, no wait covering it, its
    partials linked by mailbox (by the driver's wire). Its child worker is killed while its
    batch still waits behind a matmul: the later read, which waits for the parent's worker
    alone, notices the child's connection end and recovers, in seconds (not the 30 min
    bound of the parent's take), and the sum and the matmul are right."""
    ex = _ex()
    assert ex._wait_sees_losses  # (no relays: such trees go by mailbox)
    a = st.rand(2500, 2500, layout=st.Layout(dim=0, shards=1, workers=(1,)), dtype=st.float64)
    xn = np.arange(8.0)
    x = st.from_numpy(xn, layout=st.Layout(dim=0, shards=2, workers=(0, 1)))
    an = a.numpy()
    pid, before, shipno = _pid(1), ex.recovery_stats()["count"], ex._shipno
    b = a @ a  # worker 1 is busy for ~0.5 s
    s = x.sum()  # worker 1's partial comes after the matmul
    deadline = time.monotonic() + 10
    while ex._shipno == shipno:  # the timer ships it with its tree linked by mailbox
        assert time.monotonic() < deadline, "the flush timer did not ship the sum"
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    t0 = time.monotonic()
    assert s.item() == xn.sum()
    assert time.monotonic() - t0 < 60
    assert ex.recovery_stats()["count"] == before + 1
    np.testing.assert_allclose(b.numpy(), an @ an)
