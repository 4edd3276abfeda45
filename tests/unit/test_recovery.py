"""Recovery from lost workers (sharded.runtime.recovery) on the in-process executor: a worker
killed at any batch leaves every result bit for bit as in the run without a kill."""

import numpy as np
import pytest

import sharded as st
from sharded.runtime import session
from sharded.runtime.local_executor import LocalExecutor


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
        per_worker[entry[0]] += 1
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
    on2 = sum(1 for entry in ex._rec.log if entry[0] == 2)
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
    from sharded.runtime import recovery

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
