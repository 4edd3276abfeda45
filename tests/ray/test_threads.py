"""BLAS threads on real Ray actors: Ray starts an actor with ``OMP_NUM_THREADS`` equal to
its CPUs (1), which OpenBLAS reads at load, so a worker would multiply on one thread; each
worker instead takes ``node CPUs // workers on its node`` (sharded.runtime.worker.threads)."""

import os

import ray

import sharded as st
from sharded.runtime.worker import threads


@ray.remote(num_cpus=1)
def _plain_task():
    return threads.blas_threads(), os.environ.get("OMP_NUM_THREADS")


def _expected(info):
    cpus = {n["node"]: n["cpus"] for n in info["nodes"]}
    per_node = {}
    for w in info["workers"]:
        per_node[w["node"]] = per_node.get(w["node"], 0) + 1
    return [threads.share(cpus[w["node"]], per_node[w["node"]]) for w in info["workers"]]


def test_workers_blas_threads_are_their_share(ray_cluster):
    info = st.info()  # the package session: 4 workers on 2 nodes of 2 CPUs -> 1 each
    assert [w["blas_threads"] for w in info["workers"]] == _expected(info) == [1, 1, 1, 1]
    st.shutdown()
    try:
        # What limits the threads without sharded: Ray's OMP_NUM_THREADS=1, read by OpenBLAS
        # in any task or actor of one CPU (the session's workers are gone: CPUs are free).
        ray.init(address=ray_cluster.address, ignore_reinit_error=True)
        assert ray.get(_plain_task.remote(), timeout=120) == (1, "1")
        # One worker per node: each takes both of its node's CPUs.
        st.init(address=ray_cluster.address, num_workers=2)
        info = st.info()
        assert [w["blas_threads"] for w in info["workers"]] == _expected(info) == [2, 2]
        a = st.rand(64, 64, dtype=st.float64)
        np_a = a.numpy()
        assert abs((a @ a).numpy() - np_a @ np_a).max() < 1e-9  # BLAS works with 2 threads
    finally:
        st.shutdown()
        ray.shutdown()  # ours (the plain task's): the session below owns Ray again
        # the package's session again (tests/ray/conftest.py): later modules split small
        # tensors too
        st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)
