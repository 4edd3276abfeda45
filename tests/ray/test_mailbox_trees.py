"""Reduction trees whose partials go worker to worker through mailboxes
(:mod:`sharded.runtime.net.mailbox`) on the two-node Ray cluster: the results match numpy, and a
child lost while its parent waits for its partial costs a recovery, not the wait's bound."""

import numpy as np
import pytest
import ray

import sharded as st
from sharded.runtime.driver import ray_executor, session
from tests.support.raynet import kill_during_a_read, own_session


def _ex():
    return session.current().executor


@pytest.fixture(autouse=True)
def mailboxes(ray_cluster, monkeypatch):
    """A session whose Ray shipments' trees go by mailbox too (``SHARDED_MAILBOX=1``)."""
    monkeypatch.setattr(ray_executor, "MAILBOX", "1")
    with own_session(ray_cluster, monkeypatch, num_workers=4):
        yield


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
    kill_during_a_read(ex, (0, 1), 10)
    assert ex._mail  # every worker learnt where the replacement listens
    assert ray.get(ex._actors[0].mail_open.remote()) == ex._mail_addrs[0]
