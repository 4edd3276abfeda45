"""The workers' pool of freed blocks on Ray: a loop's later iterations run in the memory its
first one freed, so the pool stops growing after it."""

import numpy as np

import sharded as st


def _kmeans_step(x, c):
    labels = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1).argmin(1)
    onehot = (labels[:, None] == st.arange(c.shape[0])).double()
    return (onehot.T @ x) / onehot.sum(0)[:, None]


def test_a_loops_later_iterations_take_every_large_result_from_the_pool():
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((400_000, 2)) + rng.integers(0, 4, (400_000, 1)) * 5
    x = st.tensor(xn, shards=4)  # 100K rows a worker: its (100K, 10, 2) temporaries are 16 MB
    c, pooled = st.tensor(xn[:10].copy()), []
    for _ in range(4):
        c = _kmeans_step(x, c)
        c.numpy()
        pooled.append([w["pool_bytes"] for w in st.stats()["workers"]])
    # the first iteration fills the pool; the others find every large result a block there
    # (the differences, powers, sums, casts and argmins too) and give it back: no growth
    assert min(pooled[0]) >= 16 << 20
    assert pooled[1] == pooled[2] == pooled[3]
    want = xn[:10].copy()
    for _ in range(4):
        lab = ((xn[:, None, :] - want[None]) ** 2).sum(-1).argmin(1)
        oh = (lab[:, None] == np.arange(10)).astype(np.float64)
        want = (oh.T @ xn) / oh.sum(0)[:, None]
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-12)
