"""Layout commands (issue 21): an op on equal layouts is one command that each worker expands
for the shards it holds; keys are a range; a free is one command; per-worker commands stay
ordered against layout commands; a read waits only for the workers it reads from."""

import numpy as np
import pytest

import sharded as st
from sharded.core.dataflow import compact
from sharded.errors import OpFailed
from sharded.layout import Layout
from sharded.runtime.commands import Const, Group, Kernel, Key, Keys, LayoutCmds, Mod, OnWorkers
from sharded.runtime.driver import session as _session
from sharded.runtime.driver.executor import layout_workers
from sharded.runtime.driver.local import LocalExecutor
from sharded.runtime.worker.core import Worker

F8 = np.dtype(np.float64).str


@pytest.fixture
def ex():
    e = LocalExecutor(3)
    yield e
    e.close()


def _lay(n, workers):
    return Layout.from_bounds((n,), [tuple(range(n + 1))], workers)


def test_keys_are_a_range_and_compact_keeps_consecutive_keys_as_one(ex):
    r = ex.new_keys(4)
    assert isinstance(r, range) and len(r) == 4
    assert ex.new_key() == r.stop
    assert compact([5, 6, 7]) == range(5, 8)
    assert compact([5, 7]) == (5, 7)


def test_layout_description_regular_and_explicit():
    assert layout_workers(_lay(5, [0, 1, 2, 0, 1]))[0] == Mod(3, 5)
    desc, targets = layout_workers(_lay(3, [2, 0, 2]))
    assert desc == OnWorkers((2, 0, 2)) and targets == {0, 2}


def test_worker_expands_a_group_command_for_its_own_shards():
    w = Worker(1)
    assert w.mine(Mod(3, 7)) == [1, 4]
    assert w.mine(OnWorkers((0, 1, 1))) == [1, 2]
    full = [
        Kernel("full", (), (10 + s,), {"shape": (2,), "value": s, "dtype": F8}, None, False)
        for s in (1, 4)
    ]
    grp = Group(
        "add", Mod(3, 7), (Keys(10), Const(1.0)), 20, {"cast": None, "out": F8}, "add", False
    )
    assert w.run(full + [LayoutCmds(None, [grp])]) == []
    assert w.fetch([(21, None), (24, None)])[1].tolist() == [5.0, 5.0]


def test_group_op_free_and_ordering_against_per_worker_commands(ex):
    lay = _lay(6, [i % 3 for i in range(6)])
    a = ex.new_keys(6)
    for s in range(6):
        ex.submit(s % 3, "full", (), (a[s],), {"shape": (2,), "value": float(s), "dtype": F8})
    b = ex.new_keys(6)
    ex.submit_group(lay, "mul", (Keys(a.start), Const(2.0)), b.start, {"cast": None, "out": F8})
    # a per-worker command queued after the layout command reads its result
    k = ex.new_key()
    ex.submit(1, "add", (Key(b[4], None), Const(1.0)), (k,), {"cast": None, "out": F8})
    assert ex.fetch([(1, k, None)])[0].tolist() == [9.0, 9.0]
    assert [v.tolist() for v in ex.fetch([(s % 3, b[s], None) for s in range(6)])][5] == [10.0] * 2
    before = sum(s["live_shards"] for s in ex.stats())
    ex.free_group(lay, b)
    assert sum(s["live_shards"] for s in ex.stats()) == before - 6


def test_elementwise_ops_on_equal_layouts_are_one_command_each():
    ex = _session.current().executor
    x = st.arange(16.0, shards=3, dtype=st.float64)
    assert isinstance(x._keys, range)
    n = ex.commands
    y = (x * 2 + 1).exp()
    assert ex.commands - n == 3  # three ops, one command each (not 3 x 3)
    np.testing.assert_allclose(y.numpy(), np.exp(np.arange(16.0) * 2 + 1))
    z = x + st.arange(16.0, shards=2, dtype=st.float64)  # other layout: per-shard path
    np.testing.assert_allclose(z.numpy(), 2 * np.arange(16.0))


def test_a_failed_group_command_is_raised_typed_and_names_the_op():
    x = st.arange(4, shards=2)
    zero = st.zeros(4, dtype=st.int64, shards=2)
    with pytest.raises(OpFailed, match="div"):  # raised by a worker, at the read
        (x // zero).tolist()
    assert x.tolist() == [0, 1, 2, 3]  # operands intact, session usable
