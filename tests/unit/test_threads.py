"""BLAS threads of a worker (sharded.runtime.worker.threads): the share rule, and setting the count
in this process (the Ray mirror checks real actors against their node's cores)."""

import os

import pytest
from threadpoolctl import threadpool_limits

from sharded.runtime.commands import Threads
from sharded.runtime.worker import threads
from sharded.runtime.worker.core import Worker

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


@pytest.mark.parametrize(("cpus", "workers", "want"), [(16, 2, 8), (2, 2, 1), (2, 4, 1), (3, 2, 1)])
def test_share_is_node_cpus_over_workers_at_least_one(cpus, workers, want):
    assert threads.share(cpus, workers) == want


def test_threads_command_sets_this_process_blas():
    if threads.blas_threads() is None:
        pytest.skip("no BLAS loaded")
    with threadpool_limits(limits=None):  # restores this process's pools afterwards
        w = Worker(0)
        assert w.run([Threads(1)]) == []
        assert w.stats()["blas_threads"] == threads.blas_threads() == 1


def test_blas_env_adds_the_spin_limit_for_a_start_and_restores_the_environment(monkeypatch):
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    with threads.blas_env():
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == threads.BLAS_ENV["OPENBLAS_THREAD_TIMEOUT"]
    assert "OPENBLAS_THREAD_TIMEOUT" not in os.environ
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "28")  # a user's own value is kept
    with threads.blas_env():
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "28"
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "28"
