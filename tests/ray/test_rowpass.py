"""Logistic regression's gradient in one pass over each row block of X
(``sharded/runtime/worker/rowpass.py``) on real Ray actors of two nodes: single-thread
workers, and one worker per node running its shards' passes on two threads."""

import numpy as np

import sharded as st


def _logistic(xp, X, y, w, iters):
    for _ in range(iters):
        p = 1.0 / (1.0 + xp.exp(-(X @ w)))
        w = w - 0.5 * (X.T @ (p - y)) / X.shape[0]
    return w


def _data(n=80_000, d=8):  # 20,000 rows a shard: above rowpass.MIN_ROWS
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(np.float64)
    return X, y


def _fused_runs():
    return sum(w["fused_runs"] for w in st.stats()["workers"])


def _check(shards):
    Xn, yn = _data()
    X, y = st.from_numpy(Xn, shards=shards), st.from_numpy(yn, shards=shards)
    w = st.from_numpy(np.zeros(Xn.shape[1]), shards=1)
    before = _fused_runs()
    got = _logistic(st, X, y, w, 3).numpy()
    np.testing.assert_allclose(got, _logistic(np, Xn, yn, np.zeros(Xn.shape[1]), 3), rtol=1e-12)
    assert _fused_runs() > before  # (the chain is too small for elementwise fusion)


def test_one_pass_gradient_on_single_thread_workers():
    _check(shards=4)


def test_one_pass_gradient_on_a_worker_per_node(ray_cluster):
    st.shutdown()
    try:
        st.init(address=ray_cluster.address)  # one worker per node, its shards on 2 threads
        assert [w["kernel_threads"] for w in st.stats()["workers"]] == [2, 2]
        _check(shards=4)
    finally:
        st.shutdown()
        st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)
