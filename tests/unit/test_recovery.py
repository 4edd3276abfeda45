"""Recovery from lost workers (sharded.runtime.driver.recovery) on the in-process executor: a worker
killed at any batch leaves every result bit for bit as in the run without a kill."""

import datetime
import time

import numpy as np
import pytest

import sharded as st
from sharded.runtime.driver import recovery, session
from sharded.runtime.driver.local import LocalExecutor


def _ex():
    return session.current().executor


def pipeline(mid_reads=True, hook=None):
    """Elementwise, reduction, matmul, reshard, softmax, indexing and an SGD step on a small
    MLP; returns every result as NumPy."""
    st.manual_seed(7)
    x = st.rand(48, 24, shards=3, dtype=st.float64)
    y = (x * 2 + 1).exp().sum(dim=1)
    out = []
    if mid_reads:
        out.append(np.array(y.sum().item()))
    if hook:
        hook()
    a = st.randn(24, 16, shards=2, dtype=st.float64)
    m = x @ a
    r = m.reshard(dim=1, shards=3)
    s = st.softmax(r, dim=1)
    idx = s[3:40:2, ::3]
    x[5:9] = 0.5  # driver data written in place
    net = st.nn.Sequential(st.nn.Linear(24, 8), st.nn.Tanh(), st.nn.Linear(8, 1)).double()
    opt = st.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        loss = st.nn.functional.mse_loss(net(x), y.reshape(48, 1) / 100)
        loss.backward()
        opt.step()
        if mid_reads:
            out.append(np.array(loss.item()))
    out += [y.numpy(), m.numpy(), s.numpy(), idx.numpy(), x.numpy()]
    out += [p.detach().numpy() for p in net.parameters()]
    return out


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert u.dtype == v.dtype and u.shape == v.shape
        assert np.array_equal(u, v, equal_nan=True), (u, v)


@pytest.fixture(scope="module")
def reference():
    ex = _ex()
    n0 = len(ex._rec.log)
    ref = pipeline()
    per_worker = [0] * ex.num_workers
    for entry in ex._rec.log[n0:]:
        per_worker[entry.w] += 1
    return ref, per_worker


@pytest.mark.parametrize("seed", range(20))
def test_kill_at_random_batch_is_bit_identical(reference, seed):
    ref, per_worker = reference
    ex = _ex()
    rng = np.random.default_rng(seed)
    w = int(rng.integers(ex.num_workers))
    after = int(rng.integers(per_worker[w]))
    before = ex.recovery_stats()["count"]
    ex.lose(w, after=after)
    try:
        got = pipeline()
    finally:
        ex._doom.clear()
    _same(ref, got)
    assert ex.recovery_stats()["count"] == before + 1


def test_kill_between_ops_and_two_workers_one_after_the_other(reference):
    ref, _ = reference
    ex = _ex()
    before = ex.recovery_stats()
    ex.lose(0)
    try:
        got = pipeline(hook=lambda: ex.lose(2, after=5))
    finally:
        ex._doom.clear()
    _same(ref, got)
    after = ex.recovery_stats()
    assert after["count"] == before["count"] + 2
    assert after["workers_replaced"] == before["workers_replaced"] + 2
    assert after["shards_rebuilt"] > before["shards_rebuilt"]
    assert after["seconds"] > before["seconds"]


def test_kill_during_recovery_is_recovered_again(reference):
    ref, _ = reference
    ex = _ex()
    before = ex.recovery_stats()["workers_replaced"]
    ex.lose(1)
    on2 = sum(1 for entry in ex._rec.log if entry.w == 2)
    ex.lose(2, after=on2 // 2)  # dies while the log is replayed
    try:
        got = pipeline()
    finally:
        ex._doom.clear()
    _same(ref, got)
    assert ex.recovery_stats()["workers_replaced"] >= before + 2


def test_tensors_made_before_the_loss_survive_it():
    st.manual_seed(3)
    x = st.rand(30, 4, shards=3)
    want = x.numpy()
    _ex().lose(1)
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_array_equal((x + 1).numpy(), want + 1)


def test_cut_bounds_the_log_and_recovery_restarts_from_it(monkeypatch):
    from sharded.runtime.driver import recovery

    ex = _ex()
    st.manual_seed(11)
    x = st.rand(20, 5, shards=3)
    x.add_(1)
    monkeypatch.setattr(recovery, "LOG_MAX_COMMANDS", 0)
    st.synchronize()  # the log is over its bound: cut here
    monkeypatch.setattr(recovery, "LOG_MAX_COMMANDS", 10**6)
    stats = ex.recovery_stats()
    assert stats["log_batches"] == 0 and stats["cuts"] >= 1
    y = x * 3
    want = y.numpy()
    ex.lose(0)
    ex.lose(1, after=1)
    np.testing.assert_array_equal((x * 3).numpy(), want)
    np.testing.assert_array_equal(y.numpy(), want)
    assert ex.recovery_stats()["batches_replayed"] >= 1


def test_recovery_off_raises_worker_lost_naming_the_worker():
    ex = LocalExecutor(3)
    ex.set_recovery(False, "st.init(recovery=False)")
    ex.submit(1, "full", (), (1,), {"shape": (2,), "value": 1.0, "dtype": "float64"})
    ex.lose(1)
    with pytest.raises(st.WorkerLost, match="sharded-worker-1 died.*recovery is off"):
        ex.fetch([(1, 1, None)])
    assert ex.recovery_stats() == {"enabled": False, "reason": "st.init(recovery=False)"}


def test_recovery_env_switch(monkeypatch):
    monkeypatch.setenv("SHARDED_RECOVERY", "0")
    assert LocalExecutor(1).recovery_stats()["enabled"] is False
    monkeypatch.setenv("SHARDED_RECOVERY", "1")
    assert LocalExecutor(1).recovery_stats()["enabled"] is True


def test_stats_report_recoveries():
    rec = st.stats()["recoveries"]
    assert rec["enabled"] is True
    assert {"count", "seconds", "shards_rebuilt", "batches_replayed"} <= set(rec)


def test_recovery_turned_on_mid_session_starts_from_a_cut():
    ex = LocalExecutor(3)
    ex.set_recovery(False)
    ex.submit(1, "full", (), (1,), {"shape": (2,), "value": 2.0, "dtype": "float64"})
    ex.set_recovery(True)  # the unlogged batch is in the cut
    ex.submit(1, "full", (), (2,), {"shape": (1,), "value": 5.0, "dtype": "float64"})
    ex.lose(1)
    a, b = ex.fetch([(1, 1, None), (1, 2, None)])
    np.testing.assert_array_equal(a, [2.0, 2.0])
    np.testing.assert_array_equal(b, [5.0])


def test_driver_data_changed_after_the_op_does_not_change_the_replay():
    a = np.arange(6.0)
    t = st.from_numpy(a, shards=3)
    st.synchronize()
    a[:] = -1.0  # the program reuses its buffer
    _ex().lose(0)
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0))


@pytest.fixture
def fresh():
    """A session of its own (a loss with recovery off, a short timeout), then the usual one."""

    def start(**kw):
        st.shutdown()
        kw = {"min_shard_bytes": 0, **kw}
        return st.init(executor="local", num_workers=3, **kw).executor

    yield start
    st.shutdown()
    st.init(executor="local", num_workers=3, min_shard_bytes=0)


def test_worker_lost_names_the_tensors_that_had_shards_on_it(fresh):
    ex = fresh(recovery=False, min_shard_bytes=1 << 20)
    x = st.zeros(48, 24, shards=3, dtype=st.float64)
    y = st.ones(8, shards=2, dtype=st.int64)
    whole = [st.full((2, 2), 1.0) for _ in range(3)]  # kept whole: one on each worker
    on_2 = [t for t in whole if t.layout.workers == (2,)]
    assert x.layout.workers == (0, 1, 2) and y.layout.workers == (0, 1) and len(on_2) == 1
    st.synchronize()
    ex.lose(1)
    with pytest.raises(st.WorkerLost) as e:
        (x + 1).numpy()
    msg = str(e.value)
    assert msg.startswith("sharded-worker-1 died (worker 1 was lost); recovery is off")
    # x, the (x + 1) being read, y and the whole one on worker 1: largest first
    assert "4 tensors with shards on sharded-worker-1 are lost: float64[48, 24] (3 shards)" in msg
    assert e.value.tensors == (
        "float64[48, 24] (3 shards)",
        "float64[48, 24] (3 shards)",
        "int64[8] (2 shards)",
        "float32[2, 2] (1 shard)",
    )
    assert e.value.workers == ("sharded-worker-1",)
    assert "the other 2 tensors may miss work that needed it" in msg
    assert msg.endswith("start again from your data or a checkpoint")


def test_worker_lost_describes_a_few_tensors_and_counts_all(fresh):
    ex = fresh(recovery=False)
    ts = [st.zeros(i + 1, 3, shards=3) for i in range(8)]
    ex.lose(0)
    with pytest.raises(st.WorkerLost, match=r"8 tensors .* float32\[8, 3\] .*, and 3 more") as e:
        st.synchronize()
    assert len(e.value.tensors) == 8 and len(ts) == 8
    assert e.value.tensors[-1] == "float32[1, 3] (1 shard)"  # (shards= capped by the length)


def test_dropped_tensors_leave_the_live_table():
    ex = _ex()
    x = st.zeros(4, shards=2)
    sid = id(x._storage)
    assert ex.live[sid][1] == st.float32
    v = x[1:]  # a view shares the entry
    del x
    assert sid in ex.live
    del v
    assert sid not in ex.live


def test_jit_replays_and_published_snapshots_are_in_the_live_table():
    ex = _ex()
    f = st.jit(lambda a: a.double() * 2)
    x = st.ones(6, shards=3)
    for _ in range(3):  # traces until two agree, then replays
        y = f(x)
    assert f.stats["replays"] >= 1
    assert ex.live[id(y._storage)][:2] == (y.layout, st.float64)
    st.publish("snap", y)
    try:
        got = st.get("snap")
        lay, dtype, label = ex.live[id(got._storage)]
        assert dtype == st.float64 and label.startswith("published 'snap' v")
        assert "float64[6] published 'snap' v" in str(recovery.unrecoverable(ex, "why"))
        sid = id(got._storage)
        del got
        assert sid not in ex.live
    finally:
        st.unpublish("snap")


def test_failed_recovery_names_every_tensor_of_the_session(fresh, monkeypatch):
    ex = fresh()
    x = st.rand(30, shards=3)
    y = x * 2
    monkeypatch.setattr(ex, "_replace", lambda w: None)  # a replacement that never starts
    ex.lose(2)
    with pytest.raises(st.WorkerLost) as e:
        y.numpy()
    assert "recovery failed 3 times (last: worker 2 was lost)" in str(e.value)
    assert "2 tensors of this session are lost: float32[30] (3 shards)" in str(e.value)


def _until_stalled_batches_end(ex):
    """Wait (at most 30 s) until every stalled batch (queued, or one a wait gave up on) has
    "finished"."""
    deadline = time.monotonic() + 30
    while not all(ex._ready(ex._late + [h for d in ex._inflight for h in d])):
        assert time.monotonic() < deadline, "a stalled batch runs 30 s on"
        time.sleep(0.02)


# A stall far longer than the session's timeout: a loaded machine (a slow planner, an
# oversleep) can neither let the stalled batch finish in time nor make the wait look long.
STALL_S = 3.0


def test_a_read_longer_than_the_timeout_raises_wait_timeout_and_the_session_goes_on(fresh):
    ex = fresh(timeout=0.2)
    x = st.arange(6.0, shards=3)
    st.synchronize()
    ex.stall(1, STALL_S)  # worker 1's batches now take 3 s
    y = x * 2
    t0 = time.monotonic()
    with pytest.raises(st.WaitTimeout) as e:
        y.numpy()
    assert 0.2 <= time.monotonic() - t0 < 2.0  # gave up at the timeout, not at the batch's end
    assert isinstance(e.value, TimeoutError) and isinstance(e.value, st.ShardedError)
    assert e.value.workers == ("sharded-worker-1",) and e.value.what == "a read"
    assert str(e.value).startswith("waited 0.2 s for a read from sharded-worker-1 (the session")
    ex.stall(1, 0)
    np.testing.assert_array_equal(y.numpy(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0))  # operands intact
    _until_stalled_batches_end(ex)  # the batch the first read gave up on; synchronize collects it
    st.synchronize()
    assert ex._late == []


def test_synchronize_longer_than_the_timeout_keeps_the_errors_for_later():
    ex = LocalExecutor(3)
    ex.timeout = 0.1
    ex.stall(2, STALL_S)
    ex.submit(2, "full", (), (1,), {"shape": (2,), "value": 1.0, "dtype": "no-such-dtype"})
    with pytest.raises(st.WaitTimeout, match="for st.synchronize.. from sharded-worker-2"):
        ex.sync()
    _until_stalled_batches_end(ex)
    with pytest.raises(st.OpFailed, match="op 'full' failed on worker 2"):
        ex.sync()  # the batch the first wait gave up on still reports its error
    ex.sync()


def test_timeout_from_init_and_env(monkeypatch):
    assert LocalExecutor(1).timeout == 1800.0  # 30 minutes, as torch's process groups
    monkeypatch.setenv("SHARDED_TIMEOUT", "2.5")
    assert LocalExecutor(1).timeout == 2.5
    monkeypatch.setenv("SHARDED_TIMEOUT", "soon")
    with pytest.raises(st.ArgumentError, match="SHARDED_TIMEOUT must be seconds, got 'soon'"):
        LocalExecutor(1)
    monkeypatch.delenv("SHARDED_TIMEOUT")
    ex = _ex()
    try:
        assert st.init(timeout=datetime.timedelta(seconds=90)).executor.timeout == 90.0
        assert st.init(timeout=7).executor is ex and ex.timeout == 7.0
    finally:
        ex.timeout = 1800.0
    for bad in (0, -1.0, float("nan"), "5", True):
        with pytest.raises(st.ArgumentError, match="timeout must be"):
            st.init(timeout=bad)
    assert ex.timeout == 1800.0


def test_a_due_cut_waits_for_a_slow_worker_without_failing_the_read(fresh, monkeypatch):
    from sharded.runtime.driver import recovery

    ex = fresh(timeout=0.1)
    x = st.arange(6.0, shards=3)
    st.synchronize()
    ex.stall(2, STALL_S)
    y = x + 1  # worker 2's batch takes 3 s
    monkeypatch.setattr(recovery, "LOG_MAX_COMMANDS", 0)  # a cut is due at the next read
    np.testing.assert_array_equal(x[:2].numpy(), [0.0, 1.0])  # reads worker 0 only
    assert ex.recovery_stats()["cuts"] == 0  # deferred: worker 2 is not done
    ex.stall(2, 0)
    _until_stalled_batches_end(ex)
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0) + 1)
    assert ex.recovery_stats()["cuts"] == 1
