"""Row-streamed passes (``sharded/runtime/worker/rowpass.py``): ``X.T @ f(X @ w)`` in one
pass over each block of ``X``; results as NumPy's (the tail's sums in another order), values
the driver keeps written whole, anything unusual left to the op-by-op path."""

import numpy as np
import pytest

import sharded as st
from sharded.runtime.commands import Const, Free, Kernel, Key
from sharded.runtime.worker import rowpass
from sharded.runtime.worker.core import Worker
from sharded.runtime.worker.fusion import configure


@pytest.fixture
def small_rows(monkeypatch, spy_runs):
    """Passes over blocks of 7 rows from 40 rows on (the worker is in this process)."""
    monkeypatch.setattr(rowpass, "MIN_ROWS", 40)
    monkeypatch.setattr(rowpass, "BLOCK_BYTES", 7 * 8 * 8)
    return spy_runs(rowpass)


def _data(n=300, d=8, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), (rng.random(n) > 0.5).astype(np.float64)


def _logistic(xp, X, y, w, iters):
    for _ in range(iters):
        p = 1.0 / (1.0 + xp.exp(-(X @ w)))
        w = w - 0.5 * (X.T @ (p - y)) / X.shape[0]
    return w


def test_logistic_gradient_in_one_pass_matches_numpy(small_rows):
    Xn, yn = _data()
    X, y = st.from_numpy(Xn, shards=5), st.from_numpy(yn, shards=5)  # 5 shards on 3 workers
    w = st.from_numpy(np.zeros(8), shards=1)  # (one worker's: the others receive it)
    got = _logistic(st, X, y, w, 4).numpy()
    np.testing.assert_allclose(got, _logistic(np, Xn, yn, np.zeros(8), 4), rtol=1e-12)
    assert any(small_rows)
    assert X.numpy().tolist() == Xn.tolist() and y.numpy().tolist() == yn.tolist()


def test_kept_values_and_hoisted_transpose(small_rows):
    """``R`` (the driver holds it) is written whole; ``X.T`` made before the loop."""
    Xn, _ = _data(seed=1)
    rng = np.random.default_rng(2)
    Wn, Yn = rng.standard_normal((8, 3)), rng.standard_normal((300, 3))
    X, Y, W = st.from_numpy(Xn, shards=3), st.from_numpy(Yn, shards=3), st.from_numpy(Wn, shards=1)
    Xt = X.T
    st.synchronize()
    del small_rows[:]
    R = X @ W - Y
    G = Xt @ (R * 2.0)
    np.testing.assert_allclose(G.numpy(), Xn.T @ ((Xn @ Wn - Yn) * 2.0), rtol=1e-12)
    assert R.numpy().tolist() == (Xn @ Wn - Yn).tolist()
    assert any(small_rows)


def test_other_ops_between_run_op_by_op(small_rows):
    Xn, yn = _data(seed=3)
    X, y = st.from_numpy(Xn, shards=3), st.from_numpy(yn, shards=3)
    w = st.from_numpy(np.linspace(-1, 1, 8), shards=1)
    st.synchronize()
    del small_rows[:]
    g = X.T @ st.cumsum(X @ w - y, 0)  # (a scan is not row-wise)
    want = Xn.T @ np.cumsum(Xn @ np.linspace(-1, 1, 8) - yn)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    assert small_rows and not any(small_rows)


def test_fusion_off_turns_it_off(small_rows):
    ex = st.init().executor
    Xn, yn = _data(seed=4)
    X, y = st.from_numpy(Xn, shards=3), st.from_numpy(yn, shards=3)
    w = st.from_numpy(np.linspace(-1, 1, 8), shards=1)
    configure(ex, False)
    try:
        g = (X.T @ (X @ w - y)).numpy()
    finally:
        configure(ex, True)
    assert not any(small_rows)
    np.testing.assert_allclose(g, Xn.T @ (Xn @ np.linspace(-1, 1, 8) - yn), rtol=1e-12)


def _batch(missing=False):
    """``X.T @ (X @ w - y)`` as one worker's commands (keys: X 1, w 2, y 3)."""
    y = Key(99 if missing else 3)
    mm = {"out": "<f8"}
    return [
        Kernel("matmul", (Key(1), Key(2)), (10,), mm, None, False),
        Kernel("sub", (Key(10), y), (11,), {}, None, False),
        Kernel("mul", (Key(11), Const(2.0)), (12,), {}, None, False),
        Free((10, 11)),
        Kernel("permute", (Key(1),), (13,), {"axes": (1, 0)}, None, False),
        Kernel("matmul", (Key(13), Key(12)), (14,), mm, None, False),
        Free((12, 13)),
    ]


def _worker(fusion=True):
    w = Worker(0)
    w.fusion = fusion
    Xn, yn = _data(n=100, seed=5)
    w.store.update({1: Xn, 2: np.linspace(-1, 1, 8), 3: yn})
    return w


def test_worker_pass_temporaries_never_stored(small_rows):
    on, off = _worker(), _worker(False)
    assert on.run(_batch()) == [] and off.run(_batch()) == []
    assert small_rows == [True]
    assert sorted(on.store) == sorted(off.store) == [1, 2, 3, 14]
    np.testing.assert_allclose(on.store[14], off.store[14], rtol=1e-13)
    assert on.commands_run == off.commands_run == 5
    assert on.fused_runs == 1


def test_worker_missing_operand_falls_back_with_the_same_error(small_rows):
    on, off = _worker(), _worker(False)
    e_on, e_off = on.run(_batch(missing=True)), off.run(_batch(missing=True))
    assert small_rows and not any(small_rows)
    assert len(e_on) == len(e_off) >= 1
    assert [e["op"] for e in e_on] == [e["op"] for e in e_off]
    assert sorted(on.store) == sorted(off.store)
    assert on.commands_run == off.commands_run


def test_half_precision_runs_op_by_op(small_rows):
    """(a float16 product is rounded to float16: summing a tail's blocks would round once
    per block, so such blocks keep the unfused path)"""
    on, off = _worker(), _worker(False)
    for w in (on, off):
        w.store.update({k: v.astype(np.float16) for k, v in w.store.items()})
    assert on.run(_batch()) == [] and off.run(_batch()) == []
    assert small_rows and not any(small_rows)
    assert on.store[14].tobytes() == off.store[14].tobytes()
