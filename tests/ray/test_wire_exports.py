"""Small exports by the driver's wire: a block another worker takes (a vector a matrix-vector
product gathers) comes to the driver over the wire and goes on inline in the command that takes
it, so an iterative solver's iteration makes no Ray call at all; a block whose taker is known
goes straight to the taker's mailbox (a post), so the driver does not wait for it."""

import time

import numpy as np
import pytest
import ray

import sharded as st
from sharded.errors import OpFailed
from sharded.runtime.commands import Transfer
from sharded.runtime.driver import posts, reading, session
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


def _waits(monkeypatch):
    count = [0]
    wait = reading.Reading._wait

    def counted(self, *a, **k):
        count[0] += 1
        return wait(self, *a, **k)

    monkeypatch.setattr(reading.Reading, "_wait", counted)
    return count


def test_a_matrix_vector_products_vector_goes_worker_to_worker(monkeypatch):
    n = 96
    An, bn, A, b = _system(n, 5)
    x0 = st.zeros(n, shards=4, dtype=st.float64)
    want = _np_cg(An, bn, np.zeros(n), 5)
    ex, waits, took = _ex(), {}, {}
    for posting in (False, True):
        monkeypatch.setattr(posts, "ENABLED", posting)
        _cg(A, b, x0, 1)
        st.synchronize()
        count, taken = _waits(monkeypatch), ex.posts_taken
        x = _cg(A, b, x0, 5)
        np.testing.assert_allclose(x.numpy(), want, rtol=1e-9, atol=1e-12)
        waits[posting], took[posting] = count[0], ex.posts_taken - taken
    # every product gathers the vector (to one worker, then to all: 6 pieces by post)
    assert took[False] == 0 and took[True] >= 6 * 6, took
    assert waits[True] < waits[False], waits  # (the driver waited for each gather before)


def test_a_posted_value_taken_twice_by_one_worker_comes_from_the_driver_the_second_time():
    ex = _ex()
    src = st.from_numpy(np.arange(4.0), shards=2)  # shard 1 on worker 1
    key = src._keys[1]
    h = ex.export({1: [(key, None, 16, 0)]})[1][0]
    assert type(h) is posts.Posted and h.to == 0
    outs = [ex.new_key(), ex.new_key()]
    for out in outs:
        ex.submit(0, "copy", (Transfer(h),), (out,), {"dtype": "float64"}, ("copy", 0))
    assert h.taken
    for out in outs:
        np.testing.assert_array_equal(ex.fetch([(0, out, None)])[0], [2.0, 3.0])
    ex.free(0, outs)


def test_a_post_of_a_failed_export_fails_the_command_that_takes_it():
    ex = _ex()
    h = ex.export({0: [(10**15, None, 8, 1)]})[0][0]  # a key worker 0 does not hold
    assert type(h) is posts.Posted
    out = ex.new_key()
    ex.submit(1, "copy", (Transfer(h),), (out,), {"dtype": "float64"}, ("copy", 0))
    with pytest.raises(OpFailed, match="export"):
        ex.fetch([(1, out, None)])
    assert (st.arange(4.0, shards=2) + 1).tolist() == [1.0, 2.0, 3.0, 4.0]


def _sends(monkeypatch):
    """Counts the batches sent over the driver's wire."""
    count = [0]
    send = wire.Wire.send

    def counted(self, *a, **k):
        count[0] += 1
        return send(self, *a, **k)

    monkeypatch.setattr(wire.Wire, "send", counted)
    return count


def test_a_split_product_and_the_dot_read_after_it_are_one_batch_per_worker(monkeypatch):
    # the vector's pieces ride in the batches that take them (posted first, taken after), and
    # the dot's reduction rides with the product: one send per worker, no Ray call, where
    # the posts, the products and the reduction were a send per worker each
    n, nw = 96, _ex().num_workers
    An, _, A, _ = _system(n, 6)
    pn = np.random.default_rng(6).standard_normal(n)
    p = st.from_numpy(pn, shards=nw)
    (p @ (A @ p)).item()  # (warm: the plans and the connections)
    st.synchronize()
    sends, before = _sends(monkeypatch), _ray_batches()
    taken = _ex().posts_taken
    got = [(p @ (A @ p)).item() for _ in range(3)]
    np.testing.assert_allclose(got, [pn @ (An @ pn)] * 3, rtol=1e-12)
    assert sends[0] == 3 * nw, sends  # (before: 3 sends per worker)
    assert _ray_batches() == before
    assert _ex().posts_taken - taken >= 3 * (nw - 1)  # the pieces went worker to worker


def test_posts_waiting_in_a_queue_go_first_in_a_shipment_through_ray():
    # a flush that is not the wire's (here a plain flush of every queue) sends the batches
    # through Ray: each worker's posts go as exports of their own first, then the products,
    # which take them as refs; the log keeps both, so a replay finds the exports first
    n, ex = 64, _ex()
    An, _, A, _ = _system(n, 7)
    pn = np.arange(n, dtype=np.float64)
    p = st.from_numpy(pn, shards=ex.num_workers)
    st.synchronize()
    before = _ray_batches()
    y = A @ p
    assert ex._pend  # the posts wait in the queues
    ex.flush_all()
    assert not ex._pend and _ray_batches() > before + ex.num_workers  # (the exports first)
    np.testing.assert_allclose(y.numpy(), An @ pn, rtol=1e-12)


def test_posts_riding_off_restores_a_batch_per_post(monkeypatch):
    n, nw = 64, _ex().num_workers
    An, _, A, _ = _system(n, 8)
    pn = np.ones(n)
    p = st.from_numpy(pn, shards=nw)
    counts = {}
    for ride in (False, True):
        monkeypatch.setattr(posts, "RIDE", ride)
        (A @ p).numpy()
        st.synchronize()
        sends = _sends(monkeypatch)
        np.testing.assert_allclose((A @ p).numpy(), An @ pn, rtol=1e-12)
        counts[ride] = sends[0]
    assert counts[True] == nw < counts[False], counts  # (a post batch per exporter)
