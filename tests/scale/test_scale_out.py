"""Scale-out on a simulated cluster of 4 nodes x 8 workers (32 worker actors, driver talking
to them through a relay): an elementwise chain, a reduction along the split dim, a matmul, a
reshard and an autograd training step match NumPy, and the driver's CPU per op at 32 shards
stays near its figure at 2 shards. Small sizes: the whole module takes well under a minute
once the cluster is up."""

import time

import numpy as np
import pytest

import sharded as st
from sharded.runtime.driver import session as _session
from sharded.runtime.driver.simcluster import simulated_cluster
from tests.helpers import assert_matches_numpy

WORKERS = 32


@pytest.fixture(scope="module", autouse=True)
def cluster32():
    st.shutdown()
    with simulated_cluster(4, 8, store_mb=100) as address:
        st.init(address=address, num_workers=WORKERS)
        try:
            yield
        finally:
            st.shutdown()


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_driver_uses_relays_and_spans_four_nodes():
    ex = _session.current().executor
    assert ex.num_workers == WORKERS
    assert len(ex._relays) >= 1
    assert len({w.node for w in ex.workers}) == 4


def test_elementwise_chain():
    a, b = _data(320), _data(320, seed=1)
    x, y = st.tensor(a, shards=WORKERS), st.tensor(b, shards=WORKERS)
    z = x
    for _ in range(10):
        z = z * 1.5 - y
    assert_matches_numpy((z.exp() + 1).log(), np.log(np.exp(_chain(a, b)) + 1))


def _chain(a, b):
    z = a
    for _ in range(10):
        z = z * 1.5 - b
    return z


def test_reduction_along_split_dim():
    a = _data(96, 5)
    x = st.tensor(a, shards=WORKERS, dim=0)
    assert_matches_numpy(x.sum(0), a.sum(0))
    assert_matches_numpy(x.amax(0), a.max(0))
    assert_matches_numpy(x.argmax(0), a.argmax(0))
    assert np.isclose(x.sum().item(), a.sum())
    assert np.isclose(x.mean().item(), a.mean())


def test_matmul():
    a, b = _data(64, 24), _data(24, 8, seed=2)
    x = st.tensor(a, shards=WORKERS, dim=0)
    w = st.tensor(b, shards=4, dim=1)
    assert_matches_numpy(x @ w, a @ b, rtol=1e-9, atol=1e-9)


def test_reshard():
    a = _data(64, 32)
    x = st.tensor(a, shards=WORKERS, dim=0)
    y = x.reshard(dim=1, shards=16)
    assert y.layout.split_dims == (1,)
    assert_matches_numpy(y, a)
    assert_matches_numpy(y + x, 2 * a)  # mismatched layouts: worker-to-worker transfers


def test_autograd_training_step():
    xa, ya, wa = _data(128, 6), _data(128, 1, seed=3), _data(6, 1, seed=4)
    x, y = st.tensor(xa, shards=WORKERS, dim=0), st.tensor(ya, shards=WORKERS, dim=0)
    w = st.tensor(wa, requires_grad=True)
    opt = st.optim.SGD([w], lr=0.1)
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    grad = 2 * xa.T @ (xa @ wa - ya) / len(xa)
    assert_matches_numpy(w.grad, grad, rtol=1e-9, atol=1e-9)
    opt.step()
    assert_matches_numpy(w.detach(), wa - 0.1 * grad, rtol=1e-9, atol=1e-9)
    assert np.isclose(loss.item(), np.mean((xa @ wa - ya) ** 2))


def _cpu_per_op(shards, ops=100):
    x = st.rand(4096 * shards, shards=shards, dtype=st.float64)
    best = []
    for _ in range(3):
        c = time.process_time()
        y = x
        for _ in range(ops // 2):
            y = y * 1.0001 + 0.5
        st.synchronize()
        best.append((time.process_time() - c) / ops)
    return min(best)


def test_driver_cpu_per_op_flat_in_the_worker_count():
    _cpu_per_op(2, 20)
    two, many = _cpu_per_op(2), _cpu_per_op(WORKERS)
    # The target (1.5x) is measured by `sharded bench --scaling`; this bound only catches
    # per-shard work coming back (it cost ~8x at 32 workers) and leaves room for a busy
    # machine, where the driver's CPU includes Ray's threads waiting longer on more workers.
    assert many <= 3.0 * two, (two, many)
