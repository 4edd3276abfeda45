"""Relays (``sharded.runtime.driver.relay``): with one relay for every worker, the relay
composes each worker's batch from one shipment entry (layout commands, the workers' own queues,
reads and the links of reduction trees); results match numpy and errors surface at the next
read. Also the Ray executor's flush timer, which sleeps while nothing is queued."""

import time

import numpy as np
import pytest

import sharded as st
from sharded.runtime.driver import ray_executor, relay
from sharded.runtime.driver import session as _session


@pytest.fixture
def one_relay(ray_cluster, monkeypatch):
    monkeypatch.setattr(ray_executor, "RELAY_MIN", 2)  # 4 workers: one relay serves them all
    monkeypatch.setattr(relay, "WIRE_MAX", 0)  # reads through the relays, as past 32 workers
    monkeypatch.setattr(relay, "WIRE_RELAYS", False)  # ... by their actor calls
    st.shutdown()
    st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)
    try:
        assert len(_session.current().executor._relays) == 1
        yield _session.current().executor
    finally:
        st.shutdown()
        monkeypatch.undo()  # the package's session again: 4 workers, no relay
        st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)


def every_kind_of_shipment(x_shards, y_shards):
    """Layout ops shipped by the timer and by reads, a reshard (exports), two trees in one
    shipment, boolean indexing, an in-place op and a matmul, each checked against NumPy."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((37, 11)), rng.standard_normal((37, 11))
    x, y = st.tensor(a, shards=x_shards), st.tensor(b, shards=y_shards)  # y is resharded
    z, ref = x, a.copy()
    for _ in range(40):  # layout commands, shipped by the timer and by the read
        z, ref = z * 1.0001 + 0.5, ref * 1.0001 + 0.5
    np.testing.assert_allclose(z.numpy(), ref)
    np.testing.assert_allclose((x * y).sum(0).numpy(), (a * b).sum(0))
    assert np.isclose((x + y).sum().item(), (a + b).sum())
    s1, s2 = x.sum(), (x * 2).amax()  # two trees in one shipment
    assert np.isclose(s1.item() + s2.item(), a.sum() + 2 * a.max())
    np.testing.assert_allclose(x[x > 0].numpy(), a[a > 0])
    x.add_(1)
    np.testing.assert_allclose(x.numpy(), a + 1)
    np.testing.assert_allclose((x @ st.tensor(b.T, shards=2)).numpy(), (a + 1) @ b.T)


def test_one_relay_composes_every_kind_of_shipment(one_relay):
    every_kind_of_shipment(4, 3)


def test_one_relay_errors_surface_at_the_next_read(one_relay):
    x = st.tensor(np.arange(8.0), shards=4)
    with pytest.raises(st.errors.ShapeError):  # refused before anything is queued
        x + st.tensor(np.arange(3.0))
    assert (x * 2).sum().item() == 56.0


def test_flush_timer_ships_queued_work_and_then_sleeps(one_relay):
    ex = one_relay
    x = st.tensor(np.arange(8.0), shards=4)
    y = x * 2
    deadline = time.monotonic() + 10
    while (ex._bcast or any(ex._queues)) and time.monotonic() < deadline:
        time.sleep(0.01)  # no read: the timer ships the op on its own
    assert not ex._bcast and not any(ex._queues)
    # A command queued while the timer flushed leaves its wake-up set with nothing queued:
    # the timer clears it at its next tick (5 ms, or later on a loaded machine)
    while ex._queued.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert not ex._queued.is_set()  # nothing queued: the timer waits for the next command
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
