"""Reduction trees whose partials go worker to worker through mailboxes
(:mod:`sharded.runtime.net.mailbox`) on the two-node Ray cluster: the results match numpy, and a
child lost while its parent waits for its partial costs a recovery, not the wait's bound."""

import os
import signal
import threading
import time

import numpy as np
import pytest
import ray

import sharded as st
from sharded.runtime.driver import ray_executor, session


def _ex():
    return session.current().executor


@pytest.fixture(autouse=True)
def mailboxes(ray_cluster, monkeypatch):
    """A session whose Ray shipments' trees go by mailbox too (``SHARDED_MAILBOX=1``)."""
    monkeypatch.setattr(ray_executor, "MAILBOX", "1")
    st.shutdown()
    st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)
    try:
        yield
    finally:
        st.shutdown()
        monkeypatch.undo()  # the package's session again
        st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)


def test_trees_use_the_mailboxes():
    ex = _ex()
    assert ex._mail
    before = ex._shipno
    xn = np.arange(4000.0).reshape(1000, 4) - 1000.5
    x = st.from_numpy(xn, shards=4)
    assert x.sum().item() == pytest.approx(xn.sum())
    np.testing.assert_allclose(x.sum(dim=0).numpy(), xn.sum(axis=0))
    np.testing.assert_array_equal(x.amax(dim=0).numpy(), xn.max(axis=0))
    np.testing.assert_array_equal(x.argmin(dim=0).numpy(), xn.argmin(axis=0))
    np.testing.assert_allclose(x.var(dim=0).numpy(), xn.var(axis=0, ddof=1))
    assert ex._shipno > before  # those trees went through the mailboxes


def test_mailbox_results_equal_the_ray_path(monkeypatch):
    xn = np.random.default_rng(3).standard_normal((999, 3))
    x = st.from_numpy(xn, shards=4)
    mailed = [x.sum(dim=0).numpy(), x.std().item(), x.norm().item()]
    monkeypatch.setattr(_ex(), "_mail", False)
    plain = [x.sum(dim=0).numpy(), x.std().item(), x.norm().item()]
    for a, b in zip(mailed, plain):  # the same combines in the same order: bit for bit
        np.testing.assert_array_equal(a, b)


def test_a_lost_child_ends_its_parents_wait():
    """Worker 1 (a child in the tree) is busy with a matmul, so worker 0's batch waits in
    its mailbox for worker 1's partial; worker 1 is killed meanwhile. The driver aborts the
    wait, rebuilds worker 1 and replays: the read is right, in seconds (not the 30 min
    bound of the wait)."""
    ex = _ex()
    rows = st.Layout(dim=0, shards=1, workers=(1,))
    a = st.rand(2500, 2500, layout=rows, dtype=st.float64)
    st.synchronize()
    xn = np.arange(10.0)
    x = st.from_numpy(xn, layout=st.Layout(dim=0, shards=2, workers=(0, 1)))
    before = ex.recovery_stats()["count"]
    pid = st.stats()["workers"][1]["pid"]
    b = a @ a  # queued on worker 1, before its part of the tree
    # early: the matmul (~0.5 s) outlasts it on any machine (at 0.4 s the read could end
    # first); a kill before the read was sent is found by the read as well
    t = threading.Timer(0.15, os.kill, (pid, signal.SIGKILL))
    t0 = time.monotonic()
    t.start()
    try:
        got = x.sum().item()
    finally:
        t.join()
    took = time.monotonic() - t0
    assert got == xn.sum()
    assert took < 60
    assert ex.recovery_stats()["count"] >= before + 1
    assert ex._mail  # every worker learnt where the replacement listens
    assert x.sum().item() == xn.sum()
    np.testing.assert_allclose(b.numpy(), a.numpy() @ a.numpy())
    assert ray.get(ex._actors[0].mail_open.remote()) == ex._mail_addrs[0]
