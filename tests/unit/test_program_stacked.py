"""A stored program's window of small per-shard chains runs once over the shards stacked
(``sharded/runtime/worker/stacked.py``): same results, the same error records."""

import numpy as np
import pytest

import sharded as st
from sharded.runtime.commands import Const, Free, Fresh, Input, Kernel, Key
from sharded.runtime.worker import stacked
from sharded.runtime.worker.core import Worker
from sharded.runtime.worker.program import Compiled


def _add(src, out, value=1.0):
    return Kernel("add", (Key(src), Const(value)), (out,), {}, None, False)


def _chains(shards=2, ops=3):
    """``ops`` adds chained on each of ``shards`` input shards, intermediates freed."""
    cmds, fresh = [], 0
    cur = [Input(0, s) for s in range(shards)]
    for _ in range(ops):
        nxt = [Fresh(fresh + s) for s in range(shards)]
        cmds += [_add(c, n) for c, n in zip(cur, nxt)]
        if type(cur[0]) is Fresh:
            cmds.append(Free(cur))
        cur, fresh = nxt, fresh + shards
    return cmds, cur


@pytest.fixture
def spy(monkeypatch):
    ran = []
    real = stacked.run

    def run(w, stack, bind):
        ok = real(w, stack, bind)
        ran.append(ok)
        return ok

    monkeypatch.setattr(stacked, "run", run)
    return ran


def test_chains_run_stacked_bit_identical(spy):
    cmds, outs = _chains(shards=3, ops=4)
    w = Worker(0)
    blocks = [np.arange(5.0), np.arange(4.0) / 3, np.linspace(0, 1, 6)]  # uneven shards
    for k, b in zip((7, 8, 9), blocks):
        w.store[k] = b
    prog = Compiled(cmds, w.kernels)
    assert prog.run(w, 100, [[7, 8, 9]]) == [] and spy == [True]
    for o, b in zip(outs, blocks):
        got = w.store[100 + o.offset]
        np.testing.assert_array_equal(got, b + 1.0 + 1.0 + 1.0 + 1.0)
        assert got.base is None  # a block of its own, not a view of the stacked result
    assert sorted(w.store) == [7, 8, 9] + [100 + o.offset for o in outs]  # temps never kept
    assert w.commands_run == 12


def test_chains_that_differ_do_not_stack():
    cmds, _ = _chains()
    assert stacked.plan(cmds, Worker(0).kernels) is not None
    other = list(cmds)
    other[1] = _add(Input(0, 1), Fresh(1), value=2.0)  # another constant on one shard
    assert stacked.plan(other, Worker(0).kernels) is None
    shared = [_add(Input(0, 0), Fresh(0)), _add(Input(0, 0), Fresh(1))]  # one block, read twice
    assert stacked.plan(shared, Worker(0).kernels) is None


def test_unstackable_blocks_run_one_by_one(spy):
    cmds, outs = _chains()
    w = Worker(0)
    w.store[7], w.store[8] = np.ones(3), np.ones((2, 2))  # dims differ: no concatenation
    assert Compiled(cmds, w.kernels).run(w, 100, [[7, 8]]) == [] and spy == [False]
    np.testing.assert_array_equal(w.store[100 + outs[0].offset], np.full(3, 4.0))
    np.testing.assert_array_equal(w.store[100 + outs[1].offset], np.full((2, 2), 4.0))


def test_a_missing_shard_leaves_the_store_and_is_recorded_as_unstacked():
    cmds, outs = _chains()
    w = Worker(0)
    w.store[7] = np.ones(3)  # shard 1's block (key 8) is missing
    stack = stacked.plan(cmds, w.kernels)
    assert not stacked.run(w, stack, lambda k: 100 + k.offset if type(k) is Fresh else 7 + k.shard)
    assert list(w.store) == [7] and w.commands_run == 0
    errors = Compiled(cmds, w.kernels).run(w, 100, [[7, 8]])
    assert errors and all(e["cascade"] for e in errors)
    assert "shard 8 is not on worker 0" in errors[0]["cause"]
    np.testing.assert_array_equal(w.store[100 + outs[0].offset], np.full(3, 4.0))
    assert 100 + outs[1].offset in w.poisoned


def test_jit_of_tiny_ops_on_one_worker_matches_eager(spy):
    # four uneven shards on one worker: the call's windows run stacked
    lay = st.Layout.from_bounds((1001,), [(0, 251, 501, 751, 1001)], [0, 0, 0, 0])
    z0 = st.tensor(np.arange(1001, dtype=np.float32), layout=lay)

    def chain(z):
        for i in range(20):
            z = z * 1.5 + i if i % 2 else (z - 0.25) / 2
        return z

    jc = st.jit(chain)
    want = chain(z0).numpy()
    for _ in range(4):
        got = jc(z0)
    np.testing.assert_array_equal(got.numpy(), want)
    assert jc.stats["replays"] >= 1 and True in spy
    assert got.layout == z0.layout
