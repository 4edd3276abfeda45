"""Small exports by the driver's wire: a block another worker takes (a vector a matrix-vector
product gathers) comes to the driver over the wire and goes on inline in the command that takes
it, so an iterative solver's iteration makes no Ray call at all."""

import time

import numpy as np
import pytest
import ray

import sharded as st
from sharded.errors import OpFailed
from sharded.runtime.commands import Transfer
from sharded.runtime.driver import session
from sharded.runtime.net import wire


def _ex():
    return session.current().executor


def _ray_batches() -> int:
    return sum(_ex()._nray)


def _cg(A, b, x, iters):
    """Conjugate gradient as a user writes it: two scalar reads per iteration."""
    r = b - A @ x
    p = r.clone()
    rs = r.dot(r).item()
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / p.dot(Ap).item()
        x = x + alpha * p
        r = r - alpha * Ap
        rn = r.dot(r).item()
        p = r + (rn / rs) * p
        rs = rn
    return x


def _np_cg(A, b, x, iters):
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rn = r @ r
        p = r + (rn / rs) * p
        rs = rn
    return x


def _system(n, seed):
    """A symmetric positive definite system, in NumPy and row-split over the 4 workers."""
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    An, bn = m @ m.T + n * np.eye(n), rng.standard_normal(n)
    return An, bn, st.from_numpy(An, shards=4), st.from_numpy(bn, shards=4)


def test_an_iteration_of_cg_makes_no_ray_call():
    n = 96
    An, bn, A, b = _system(n, 3)
    x0 = st.zeros(n, shards=4, dtype=st.float64)
    _cg(A, b, x0, 2)  # (warm: the plans and the connections)
    st.synchronize()
    before = _ray_batches()
    x = _cg(A, b, x0, 6)
    np.testing.assert_allclose(x.numpy(), _np_cg(An, bn, np.zeros(n), 6), rtol=1e-9, atol=1e-12)
    assert _ray_batches() == before  # every batch, exports included, went by the wire


def test_a_large_export_still_goes_through_ray(monkeypatch):
    monkeypatch.setattr(wire, "XFER_MAX", 0)
    from sharded.runtime.driver import ray_executor

    monkeypatch.setattr(ray_executor, "WIRE_XFER_MAX", 0)
    An = np.arange(64.0).reshape(8, 8)
    pn = np.arange(8.0)
    A, p = st.from_numpy(An, shards=4), st.from_numpy(pn, shards=4)
    (A @ p).numpy()
    before = _ray_batches()
    np.testing.assert_allclose((A @ p).numpy(), An @ pn)
    assert _ray_batches() > before


def test_an_export_that_failed_fails_the_command_that_takes_it():
    ex = _ex()
    h = ex.export({0: [(10**15, None, 8)]})[0][0]  # a key worker 0 does not hold
    assert type(h) is wire.Part
    out = ex.new_key()
    ex.submit(1, "copy", (Transfer(h),), (out,), {"dtype": "float64"}, ("copy", 0))
    with pytest.raises(OpFailed, match="export"):
        ex.fetch([(1, out, None)])
    x = st.arange(6.0, shards=2)  # the session goes on
    assert (x * 2).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_a_worker_lost_between_wired_exports_is_recovered():
    n = 64
    An, bn, A, b = _system(n, 4)
    x = _cg(A, b, st.zeros(n, shards=4, dtype=st.float64), 3)
    ex = _ex()
    pid = st.stats()["workers"][2]["pid"]
    ray.kill(ex._actors[2])
    deadline = time.monotonic() + 30
    while True:  # (ray.kill returns at once)
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            break
        assert time.monotonic() < deadline
        time.sleep(0.02)
    x = _cg(A, b, x, 3)  # the replay rebuilds worker 2's shards (A's rows, the vectors)
    want = _np_cg(An, bn, _np_cg(An, bn, np.zeros(n), 3), 3)
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-9, atol=1e-12)
    assert ex.recovery_stats()["count"] >= 1
