"""The executor protocol, driven directly on :class:`LocalExecutor` (no tensors, no session):
commands are queued until a read, frees are grouped per worker, kernel errors are raised typed
at the next read, and back-pressure bounds the batches in flight."""

import numpy as np
import pytest

import sharded  # noqa: F401  (fills the kernel table the workers run from)
from sharded.errors import OpFailed, SessionClosed
from sharded.runtime import executor as E
from sharded.runtime.local_executor import LocalExecutor

F8 = np.dtype(np.float64).str


def _full(ex, w, value, shape=(3,), label=("full", 0)):
    k = ex.new_key()
    ex.submit(w, "full", (), (k,), {"shape": shape, "value": value, "dtype": F8}, label)
    return k


def _live(ex):
    return [s["live_shards"] for s in ex.stats()]


@pytest.fixture
def ex():
    e = LocalExecutor(2)
    yield e
    e.close()


def test_submit_queues_until_a_read(ex):
    k = _full(ex, 0, 2.0)
    assert ex._workers[0].store == {}  # nothing ran: the command waits in the queue
    (a,) = ex.fetch([(0, k, None)])
    np.testing.assert_array_equal(a, [2.0, 2.0, 2.0])
    assert ex.commands == 1


def test_fetch_slices_and_orders_items_across_workers(ex):
    k0, k1 = _full(ex, 0, 1.0, (4,)), _full(ex, 1, 5.0, (2,))
    b, a = ex.fetch([(1, k1, None), (0, k0, (slice(1, 3),))])
    assert a.tolist() == [1.0, 1.0] and b.tolist() == [5.0, 5.0]


def test_commands_see_earlier_results_and_constants(ex):
    k = _full(ex, 0, 3.0)
    c = ex.new_key()
    ex.submit(0, "copy", (("k", k, (slice(0, 2),)),), (c,), {"dtype": F8}, ("copy", 0))
    d = ex.new_key()
    ex.submit(1, "copy", (("c", np.arange(3.0)),), (d,), {"dtype": F8}, ("copy", 1))
    a, b = ex.fetch([(0, c, None), (1, d, None)])
    assert a.tolist() == [3.0, 3.0] and b.tolist() == [0.0, 1.0, 2.0]


def test_export_moves_a_piece_to_another_worker(ex):
    k = _full(ex, 0, 7.0, (4,))
    (h,) = ex.export({0: [(k, (slice(0, 2),), 16)]})[0]
    d = ex.new_key()
    ex.submit(1, "copy", (("x", h),), (d,), {"dtype": F8}, ("copy", 0))
    assert ex.fetch([(1, d, None)])[0].tolist() == [7.0, 7.0]


def test_free_pairs_sends_one_free_per_worker(ex):
    keys = [(0, _full(ex, 0, 1.0)), (1, _full(ex, 1, 1.0)), (0, _full(ex, 0, 1.0))]
    ex.sync()
    assert _live(ex) == [2, 1]
    ex.free_pairs(keys)
    assert [q for q in ex._queues] == [
        [("free", (keys[0][1], keys[2][1]))],
        [("free", (keys[1][1],))],
    ]
    assert _live(ex) == [0, 0]


def test_kernel_error_is_raised_typed_at_the_next_read(ex):
    bad = _full(ex, 1, 1.0, shape=(-1,), label=("full", 4))  # numpy refuses the shape
    ex.flush_all()  # the batch ran; the error waits for a read
    with pytest.raises(OpFailed) as info:
        ex.sync()
    e = info.value
    assert (e.op, e.shard, e.worker) == ("full", 4, 1) and "ValueError" in e.cause
    ex.sync()  # raised once: the executor is usable again
    good = _full(ex, 1, 2.0)
    assert ex.fetch([(1, good, None)])[0].tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(OpFailed, match="full"):  # the failed shard names its op when read
        ex.fetch([(1, bad, None)])


def test_dependent_ops_report_the_original_failure_only(ex):
    bad = _full(ex, 0, 1.0, shape=(-1,), label=("full", 0))
    c = ex.new_key()
    ex.submit(0, "copy", (("k", bad, None),), (c,), {"dtype": F8}, ("copy", 0))
    with pytest.raises(OpFailed) as info:
        ex.fetch([(0, c, None)])
    assert info.value.op == "full"  # not the copy that read its result
    ex.sync()  # the cascade was not recorded as a second error


def test_back_pressure_bounds_batches_in_flight(ex):
    pending = _full(ex, 1, 1.0)  # queued on worker 1 while worker 0 hits the limit
    for i in range(E.MAX_INFLIGHT + 3):
        _full(ex, 0, float(i))
        ex._flush(0)
        assert len(ex._inflight[0]) <= E.MAX_INFLIGHT
    # waiting on worker 0 first shipped worker 1's queue, so it was not held back
    assert ex._queues[1] == [] and pending in ex._workers[1].store


def test_a_full_queue_is_shipped_without_a_read(ex, monkeypatch):
    monkeypatch.setattr(E, "MAX_BATCH", 4)
    for i in range(4):
        _full(ex, 0, float(i))
    assert ex._queues[0] == [] and len(ex._workers[0].store) == 4


def test_closed_executor_refuses_work_and_ignores_frees():
    e = LocalExecutor(1)
    k = _full(e, 0, 1.0)
    e.close()
    e.free(0, [k])  # finalizers may still run after close: a no-op, never an error
    with pytest.raises(SessionClosed):
        _full(e, 0, 1.0)
    with pytest.raises(SessionClosed):
        e.fetch([(0, k, None)])
