"""``st.init(workers_per_node=...)``: fewer workers, each on its share of the node's cores,
and a default placement that makes one shard per thread (the in-process executor counts
this process as the one node; tests/ray/test_recovery.py runs it on a Ray cluster)."""

import os

import numpy as np
import pytest

import sharded as st
from sharded.errors import ArgumentError
from sharded.runtime.driver import session
from sharded.runtime.worker import threads


@pytest.fixture
def fresh(cli_session):
    """No session before the test; the package's session again after it."""
    yield


def test_one_worker_per_node_owns_the_cores(fresh):
    st.init(executor="local", workers_per_node=1, min_shard_bytes=0)
    ex = session.current().executor
    cores = threads.share(os.cpu_count() or 1, 1)
    assert ex.num_workers == 1 and ex.workers[0].threads == cores
    assert ex.stats()[0]["blas_threads"] == cores
    x = st.arange(4 * cores * 10, dtype=st.float64)
    assert x.layout.num_shards == min(cores, x.shape[0])  # one shard per thread
    np.testing.assert_array_equal((x * 2 + 1).numpy(), np.arange(x.shape[0]) * 2.0 + 1)
    assert st.tensor([1.0, 2.0]).layout.num_shards <= 2  # (never more than the dim has)


def test_env_and_bad_values(fresh, monkeypatch):
    monkeypatch.setenv("SHARDED_WORKERS_PER_NODE", "2")
    st.init(executor="local")
    assert session.current().executor.num_workers == 2
    st.shutdown()
    st.init(executor="local", num_workers=3)  # an explicit count wins over the env
    assert session.current().executor.num_workers == 3
    st.shutdown()
    monkeypatch.setenv("SHARDED_WORKERS_PER_NODE", "one")
    with pytest.raises(ArgumentError, match="SHARDED_WORKERS_PER_NODE.*'one'"):
        st.init(executor="local")
    monkeypatch.delenv("SHARDED_WORKERS_PER_NODE")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ArgumentError, match=f"workers_per_node.*{bad!r}"):
            st.init(executor="local", workers_per_node=bad)
    st.init(executor="local", workers_per_node=1)  # the session is usable after the errors
    assert st.ones(3).sum().item() == 3


def test_results_ops_lay_out_take_a_shard_per_thread(fresh):
    """Where an op lays its result out itself (a gather by host indices, a reshape that
    re-cuts, ``reshard(dim=...)``, a sort's middle layout), one worker owning the cores gets
    one shard per thread, as a worker per core would hold one each."""
    st.init(executor="local", workers_per_node=1, min_shard_bytes=0)
    ex = session.current().executor
    cores = ex.workers[0].threads
    assert ex.num_workers == 1 and ex.num_slots == cores
    a = np.arange(8 * 6 * 5, dtype=np.float64).reshape(8, 6, 5)[:, ::-1] % 7
    x = st.tensor(a.copy())
    g = x[[7, 0, 3, 3, 5, 1]]  # host indices: a gather, rows split anew
    assert g.layout.num_shards == min(cores, 6)
    np.testing.assert_array_equal(g.numpy(), a[[7, 0, 3, 3, 5, 1]])
    r = x.reshard(dim=1)
    assert r.layout.grid == (1, min(cores, 6), 1)
    np.testing.assert_array_equal(r.numpy(), a)
    t = r.transpose(0, 1).reshape(6, 40)  # not local on dim-1 cuts: re-cut first
    np.testing.assert_array_equal(t.numpy(), a.transpose(1, 0, 2).reshape(6, 40))
    v, i = st.sort(x, dim=0)  # split along the sort dim: sorted in a layout whole along it
    np.testing.assert_array_equal(v.numpy(), np.sort(a, axis=0, kind="stable"))
    np.testing.assert_array_equal(i.numpy(), np.argsort(a, axis=0, kind="stable"))


def test_a_contraction_split_on_one_threaded_worker_sums_partials_of_its_threads(fresh):
    """``X.T @ r`` with the rows of both split over one worker's threads: a partial per
    thread (made at once), summed by the tree, as two workers' partials would be."""
    st.init(executor="local", workers_per_node=1, min_shard_bytes=0)
    rng = np.random.default_rng(5)
    for shards in (2, 3, 5):
        X, r, R = (
            rng.standard_normal((40, 3)),
            rng.standard_normal(40),
            rng.standard_normal((40, 2)),
        )
        Xs, rs, Rs = (st.tensor(a, shards=shards) for a in (X, r, R))
        np.testing.assert_allclose((Xs.T @ rs).numpy(), X.T @ r, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose((Xs.T @ Rs).numpy(), X.T @ R, rtol=1e-12, atol=1e-12)
