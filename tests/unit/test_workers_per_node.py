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
