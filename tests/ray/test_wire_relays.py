"""Reads past SHARDED_WIRE_MAX workers through wire relays (:mod:`sharded.runtime.driver.
wire_relays`) on the two-node Ray cluster: 6 workers behind 2 relays of 3 (relays from 2
workers, the wire's per-worker reads up to 2 workers): each read sends one ``Fan`` frame per
relay, not one batch per worker, results match numpy, the Ray batches keep their order with
the wire's, and a lost worker behind a wire relay is rebuilt bit for bit."""

import numpy as np
import pytest
import ray

import sharded as st
from sharded.runtime.driver import ray_executor, relay
from tests.ray.test_recovery import _kill
from tests.ray.test_relay import every_kind_of_shipment
from tests.support.raynet import kill_during_a_read, own_session
from tests.unit.test_recovery import _same, pipeline


@pytest.fixture
def fanned(ray_cluster, monkeypatch):
    monkeypatch.setattr(ray_executor, "RELAY_MIN", 2)
    monkeypatch.setattr(ray_executor, "RELAY_FANOUT", 3)
    monkeypatch.setattr(relay, "WIRE_MAX", 2)
    # (a bound on every wait: a batch waiting for another that never comes fails the test)
    with own_session(ray_cluster, monkeypatch, num_workers=6, timeout=120) as ex:
        assert len(ex._relays) == 2 and ex._fan_on
        yield ex


def _frames(ex):
    """Frames the driver sent over its wire so far (each takes a key of its answer)."""
    return next(ex._wire._keys)


def test_one_frame_per_relay_per_read(fanned):
    ex = fanned
    rng = np.random.default_rng(3)
    xn = rng.standard_normal((60, 7))
    x = st.from_numpy(xn, shards=6)
    st.synchronize()
    before, fans = _frames(ex), ex.fan_frames
    assert x.sum().item() == pytest.approx(xn.sum())
    # two frames, one per relay (the counter takes one key itself), not one per worker
    assert (_frames(ex) - before, ex.fan_frames - fans) == (3, 2)
    np.testing.assert_array_equal(x.numpy(), xn)
    np.testing.assert_allclose(x.sum(dim=0).numpy(), xn.sum(axis=0))
    np.testing.assert_array_equal(x[7:11].numpy(), xn[7:11])
    assert x[13, 2].item() == xn[13, 2]
    assert ex.recovery_stats()["count"] == 0


def test_matmul_and_ray_batches_in_order(fanned):
    """A matmul's transfers go through the Ray relays, its result's reads by wire relays:
    every read sees exactly the ops queued before it."""
    ex = fanned
    rng = np.random.default_rng(4)
    an, bn = rng.standard_normal((36, 20)), rng.standard_normal((20, 9))
    a, b = st.from_numpy(an, shards=6), st.from_numpy(bn, shards=3)
    want = an
    for i in range(4):
        a = (a * 0.5 + i).reshard(dim=i % 2, shards=6 - i % 2)
        want = want * 0.5 + i
        fans = ex.fan_frames
        assert a.sum().item() == pytest.approx(want.sum())
        assert ex.fan_frames > fans
        np.testing.assert_allclose(a.numpy(), want)
    np.testing.assert_allclose((a @ b).numpy(), want @ bn)
    np.testing.assert_allclose((a @ b).sum(dim=1).numpy(), (want @ bn).sum(axis=1))
    with pytest.raises((st.errors.OpFailed, IndexError, st.errors.ShardingError)):
        a[st.from_numpy(np.array([0, 99]), shards=1)].numpy()
    assert (a * 0).sum().item() == 0.0  # the session goes on
    st.synchronize()


def test_every_kind_of_shipment(fanned):
    """Layout ops shipped by the timer and by reads, reshards (exports through the Ray
    relays, held for a whole flush while a wire batch waits for them), two trees in one
    shipment, boolean indexing, in-place ops."""
    every_kind_of_shipment(6, 5)


def test_a_worker_lost_behind_a_wire_relay_is_rebuilt(fanned):
    ex = fanned
    reference = pipeline()
    before = ex.recovery_stats()["count"]
    _same(reference, pipeline(hook=lambda: _kill(1)))  # (worker 1: the second relay's)
    assert ex.recovery_stats()["count"] == before + 1
    assert ex._fan_on  # the relays reach the replacement
    kill_during_a_read(ex, (0, 1, 2, 3, 4, 5))
    fans = ex.fan_frames
    _same(reference, pipeline())
    assert ex.fan_frames > fans
    old = ex._relays[0]
    ray.kill(old)  # a relay itself: a fresh one (a wire relay too), its workers rebuilt
    _same(reference, pipeline())
    assert ex._relays[0] is not old and ex._fan_on
