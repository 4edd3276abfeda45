"""Reads over the driver's wire (:mod:`sharded.runtime.net.wire`) on the two-node Ray cluster:
their batches run in order with the Ray batches sent before and after them, results match
numpy, with and without relays, and a worker lost while a wire batch runs or waits costs a
recovery, not the wait's bound."""

import time

import numpy as np
import pytest

import sharded as st
from sharded.runtime.driver import ray_executor, relay, session
from tests.support.raynet import kill_during_a_read, own_session


def _ex():
    return session.current().executor


def _wired(ex) -> int:
    """A number that grows with every wire batch sent (it takes one key itself)."""
    return next(ex._wire._keys)


def test_a_read_goes_over_the_wire_and_matches_numpy():
    ex = _ex()
    assert ex._wire_ok()
    xn = np.arange(4000.0).reshape(1000, 4) - 1000.5
    x = st.from_numpy(xn, shards=4)
    before = _wired(ex)
    assert x.sum().item() == pytest.approx(xn.sum())
    assert _wired(ex) > before + 1  # the tree's batches went by wire
    np.testing.assert_allclose(x.sum(dim=0).numpy(), xn.sum(axis=0))
    np.testing.assert_array_equal(x.amax(dim=0).numpy(), xn.max(axis=0))
    np.testing.assert_array_equal(x.argmin(dim=0).numpy(), xn.argmin(axis=0))
    np.testing.assert_allclose(x.var(dim=0).numpy(), xn.var(axis=0, ddof=1))
    np.testing.assert_array_equal(x.numpy(), xn)
    assert x[3, 2].item() == xn[3, 2]


def test_a_large_gather_goes_through_ray(monkeypatch):
    """A gather of more than SHARDED_WIRE_READ_MAX bytes takes Ray's object store (no socket
    copy); a small one, and the reduction of the large tensor, still go by wire."""
    from sharded.runtime.net import wire

    ex = _ex()
    monkeypatch.setattr(ray_executor, "WIRE_READ_MAX", 4096)
    xn = np.arange(1024.0) * 0.5  # 8 KB: past the bound
    x = st.from_numpy(xn, shards=4) + 1.0
    before = _wired(ex)
    np.testing.assert_array_equal(x.numpy(), xn + 1.0)
    assert _wired(ex) == before + 1  # (the counter's own key: nothing went by wire)
    np.testing.assert_array_equal(x[:100].numpy(), xn[:100] + 1.0)  # 800 bytes: by wire
    assert x.sum().item() == (xn + 1.0).sum()
    assert _wired(ex) > before + 3
    assert wire.READ_MAX == 8 << 20  # the default: reads up to 8 MiB by wire


def test_wire_reads_keep_the_order_of_ray_batches():
    """Ray batches (a reshard's transfers take refs, so they go by Ray) and wire reads in
    turn, on the same workers: every read sees exactly the ops queued before it."""
    rng = np.random.default_rng(5)
    an = rng.standard_normal((64, 48))
    a = st.from_numpy(an, shards=4)
    want = an.copy()
    for i in range(12):
        a = a.reshard(dim=i % 2, shards=4) * 1.5 + i  # transfers by Ray, then layout ops
        want = want * 1.5 + i
        assert a.sum().item() == pytest.approx(want.sum())
        np.testing.assert_allclose(a[i].numpy(), want[i])
    np.testing.assert_allclose(a.numpy(), want)


def test_a_slow_ray_batch_comes_first():
    """A matmul (sent by Ray, slow) on worker 1, then a read of its result and of another
    tensor over the wire: the wire batch waits for the matmul on the worker."""
    rows = st.Layout(dim=0, shards=1, workers=(1,))
    a = st.rand(900, 900, layout=rows, dtype=st.float64)
    an = a.numpy()
    b = a @ a
    time.sleep(0.05)  # the flush timer ships the matmul through Ray
    assert b.sum().item() == pytest.approx((an @ an).sum())
    c = b - 1.0
    np.testing.assert_allclose(c.numpy(), an @ an - 1.0)


def test_op_errors_surface_through_a_wire_read():
    x = st.from_numpy(np.arange(8.0), shards=4)
    idx = st.from_numpy(np.array([0, 9]), shards=1)
    with pytest.raises((st.errors.OpFailed, IndexError, st.errors.ShardingError)):
        x[idx].numpy()
    assert (x * 2).sum().item() == 56.0  # the session goes on


def test_a_worker_lost_during_a_wire_read_is_recovered():
    ex = _ex()
    kill_during_a_read(ex, (0, 1))
    assert ex._wire_ok()  # the wire reaches the replacement


@pytest.fixture
def relayed(ray_cluster, monkeypatch):
    monkeypatch.setattr(ray_executor, "RELAY_MIN", 2)  # 4 workers: one relay serves them all
    monkeypatch.setattr(relay, "WIRE_MAX", 4)
    with own_session(ray_cluster, monkeypatch, num_workers=4) as ex:
        yield ex


def test_wire_reads_behind_relays(relayed):
    ex = relayed
    assert ex._relays and ex._wire_ok()
    rng = np.random.default_rng(2)
    an = rng.standard_normal((40, 12))
    a = st.from_numpy(an, shards=4)
    want = an
    for i in range(10):
        a = (a * 0.5 + i).reshard(dim=i % 2, shards=3 + i % 2)
        want = want * 0.5 + i
        before = _wired(ex)
        assert a.sum().item() == pytest.approx(want.sum())
        assert _wired(ex) > before + 1
        np.testing.assert_allclose(a.sum(dim=1).numpy(), want.sum(axis=1))
    st.synchronize()


def test_a_worker_lost_behind_relays_during_a_wire_read(relayed):
    kill_during_a_read(relayed, (0, 1, 2))
