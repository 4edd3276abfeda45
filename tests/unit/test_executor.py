"""The executor protocol, driven directly on :class:`LocalExecutor` (no tensors, no session):
commands are queued until a read, frees are grouped per worker, kernel errors are raised typed
at the next read, and back-pressure bounds the batches in flight."""

import numpy as np
import pytest

import sharded  # noqa: F401  (fills the kernel table the workers run from)
from sharded import dtypes as D
from sharded.core.dataflow import Operand
from sharded.core.tree import plan_reduce
from sharded.errors import OpFailed, SessionClosed
from sharded.layout import Layout
from sharded.runtime.commands import Const, Free, Kernel, Key, LayoutSync, Transfer
from sharded.runtime.driver import executor as E
from sharded.runtime.driver.local import LocalExecutor

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
    ex.submit(0, "copy", (Key(k, (slice(0, 2),)),), (c,), {"dtype": F8}, ("copy", 0))
    d = ex.new_key()
    ex.submit(1, "copy", (Const(np.arange(3.0)),), (d,), {"dtype": F8}, ("copy", 1))
    a, b = ex.fetch([(0, c, None), (1, d, None)])
    assert a.tolist() == [3.0, 3.0] and b.tolist() == [0.0, 1.0, 2.0]


def test_export_moves_a_piece_to_another_worker(ex):
    k = _full(ex, 0, 7.0, (4,))
    (h,) = ex.export({0: [(k, (slice(0, 2),), 16)]})[0]
    d = ex.new_key()
    ex.submit(1, "copy", (Transfer(h),), (d,), {"dtype": F8}, ("copy", 0))
    assert ex.fetch([(1, d, None)])[0].tolist() == [7.0, 7.0]


def test_free_pairs_sends_one_free_per_worker(ex):
    keys = [(0, _full(ex, 0, 1.0)), (1, _full(ex, 1, 1.0)), (0, _full(ex, 0, 1.0))]
    ex.sync()
    assert _live(ex) == [2, 1]
    ex.free_pairs(keys)
    assert [q for q in ex._queues] == [
        [Free((keys[0][1], keys[2][1]))],
        [Free((keys[1][1],))],
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
    ex.submit(0, "copy", (Key(bad, None),), (c,), {"dtype": F8}, ("copy", 0))
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


# ------------------------------------------------------- batches split at refs (_split)
@pytest.fixture
def batches(ex, monkeypatch):
    """``ex`` whose batches are logged as ``(worker, [command names])``."""
    log, orig = [], ex._dispatch

    def spy(w, cmds, refs, nexp):
        log.append((w, [_name(c) for c in cmds if type(c) is not LayoutSync]))
        return orig(w, cmds, refs, nexp)

    monkeypatch.setattr(ex, "_dispatch", spy)
    return log


def _name(c) -> str:
    """A command's kernel, or its kind (``Free`` -> "free")."""
    return c.kernel if type(c) is Kernel else c.TAG


def _copy_of(ex, w, h):
    d = ex.new_key()
    ex.submit(w, "copy", (Transfer(h),), (d,), {"dtype": F8}, ("copy", 0))
    return d


def test_work_queued_before_a_command_taking_refs_ships_first(ex, batches):
    k = _full(ex, 0, 7.0)
    (h1,) = ex.export({0: [(k, None)]})[0]
    a = _copy_of(ex, 1, h1)  # waits for worker 0's export (a sort's exchange, say)
    (h2,) = ex.export({0: [(k, None)]})[0]  # a later export call: made by a later batch
    b = _copy_of(ex, 1, h2)
    assert [v.tolist() for v in ex.fetch([(1, a, None), (1, b, None)])] == [[7.0] * 3] * 2
    # the first copy shipped on its own: it does not wait for the second one's data
    assert [c for w, c in batches if w == 1] == [["copy"], ["copy", "export", "export"]]


def test_commands_taking_refs_of_one_export_call_share_a_batch(ex, batches):
    k = _full(ex, 0, 7.0)
    h1, h2 = ex.export({0: [(k, (slice(0, 1),)), (k, (slice(1, 3),))]})[0]
    a, b = _copy_of(ex, 1, h1), _copy_of(ex, 1, h2)  # the pieces of one reshard
    assert [v.tolist() for v in ex.fetch([(1, a, None), (1, b, None)])] == [[7.0], [7.0] * 2]
    assert [c for w, c in batches if w == 1] == [["copy", "copy", "export", "export"]]


def test_frees_queued_before_a_command_taking_refs_do_not_ship_alone(ex, batches):
    k, f = _full(ex, 0, 7.0), _full(ex, 1, 1.0)
    ex.sync()
    batches.clear()
    ex.free(1, [f])
    (h,) = ex.export({0: [(k, None)]})[0]
    a = _copy_of(ex, 1, h)
    assert ex.fetch([(1, a, None)])[0].tolist() == [7.0] * 3
    assert [c for w, c in batches if w == 1] == [["free", "copy", "export"]]


def test_work_queued_on_a_tree_parent_ships_before_the_tree(ex, batches):
    # shard 0 (the root, worker 0) and shard 1 (worker 1): worker 1's partial feeds worker 0
    keys = ex.new_keys(2)
    lay = Layout.from_bounds((6,), [(0, 3, 6)], [0, 1])
    for s in range(2):
        ex.submit(s, "full", (), (keys[s],), {"shape": (3,), "value": 1.0, "dtype": F8})
    ex.sync()
    batches.clear()
    other = _full(ex, 0, 2.0)  # independent work on the parent (a forward pass, say)
    s = plan_reduce(ex, Operand(lay, D.float64, keys), "sum", (0,), False, D.float64)[0]
    assert batches == [(0, ["full"])]  # shipped on its own: it does not wait for worker 1
    assert [float(v.sum()) for v in ex.fetch([(0, s.keys[0], None), (0, other, None)])] == [
        6.0,
        6.0,
    ]
    ex.free(0, [other])
    s2 = plan_reduce(ex, Operand(lay, D.float64, keys), "sum", (0,), False, D.float64)[0]
    assert len(batches) == 3  # frees alone do not ship before a tree: the read is one shipment
    assert float(ex.fetch([(0, s2.keys[0], None)])[0]) == 6.0
    assert sorted(w for w, _ in batches[3:]) == [0, 1]


# ------------------------------------------------------- the transport and the executor table
def test_an_executor_missing_transport_hooks_is_refused_naming_them():
    from sharded.runtime.driver.transport import Transport

    class Bare(E.Executor):  # ships batches, but cannot wait for them nor recover a loss
        def _dispatch(self, w, cmds, refs, nexp):
            return [], []

        def _stats(self, w):
            return {}

    with pytest.raises(TypeError, match="_get"):
        Bare([E.WorkerInfo(0, "sharded-worker-0", "local", "cpu")])
    assert sorted(Transport.__abstractmethods__) == [
        "_dead_workers", "_dispatch", "_get", "_hkey", "_replace", "_settle", "_snapshot",
        "_stats", "open",
    ]  # fmt: skip
    assert isinstance(LocalExecutor(1), Transport)


def test_init_picks_the_executor_class_from_the_table():
    from sharded.errors import ShardingError
    from sharded.runtime.driver import session as S

    assert list(S.EXECUTORS) == ["ray", "local", "simulated"]
    assert S.executor_class("local") is LocalExecutor
    msg = "executor must be 'ray', 'local' or 'simulated', got 'dask'"
    with pytest.raises(ShardingError, match=msg):
        S.executor_class("dask")
    ex, owns_ray, address = LocalExecutor.open(num_workers=None, devices=["cpu"] * 3)
    assert (ex.num_workers, owns_ray, address) == (3, False, None)
