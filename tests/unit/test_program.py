"""Stored st.jit programs compiled on the worker (sharded.runtime.worker.program): a call gives the
store, the poisoned keys and the error records the generic batch path gives for the same
commands with their keys bound (fused windows, in-place and sliced operands, missing operands
and failing kernels included); a jitted function that runs one is bit-identical to eager, and
a traced reduction is recorded as one tree command."""

import pickle

import numpy as np
import pytest

import sharded as st
from sharded.runtime.commands import (
    Const,
    Free,
    Fresh,
    Input,
    JitExport,
    JitSubmit,
    JitTree,
    Kernel,
    Key,
)
from sharded.runtime.driver.session import current
from sharded.runtime.worker import fusion
from sharded.runtime.worker.core import KERNELS, Worker
from sharded.runtime.worker.program import Compiled

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F8 = np.dtype(np.float64).str
BASE, INKEYS = 1000, [[7, 8]]


def _bind(cmds, base, inkeys):
    """The symbolic commands with their keys bound (what the generic path would run)."""

    def m(k):
        if type(k) is int:
            return k
        return base + k.offset if type(k) is Fresh else inkeys[k.input][k.shard]

    out = []
    for c in cmds:
        if type(c) is Free:
            out.append(Free([m(k) for k in c.keys]))
            continue
        args = tuple(Key(m(a.key), a.slices) if type(a) is Key else a for a in c.args)
        out.append(c._replace(args=args, outs=tuple(m(k) for k in c.outs)))
    return out


def _worker(fuse, n=20):
    w = Worker(0)
    w.fusion, w.fusion_block, w.fusion_min = fuse, 4, 8
    w.store[7] = np.arange(float(n)) - 5
    w.store[8] = np.linspace(-1.0, 1.0, n)
    w.store[9] = np.full(n, 0.5)  # a captured tensor (its key as itself)
    return w


def _ew(kernel, args, out, inplace=False, label=None):
    return Kernel(kernel, args, (out,), {"cast": None, "out": F8}, label or (kernel, 0), inplace)


def _program():
    x, y, c = Key(Input(0, 0)), Key(Input(0, 1)), Key(9)
    f = [Key(Fresh(i)) for i in range(8)]
    return [
        _ew("mul", (x, Const(2.0)), Fresh(0)),
        _ew("add", (f[0], y), Fresh(1)),
        _ew("mul", (f[1], c), Fresh(2)),
        Free([Fresh(0), Fresh(1)]),
        _ew("sub", (f[2], Const(np.arange(20.0))), Fresh(3)),  # an array constant
        _ew("add", (f[3], Const(1.0)), Fresh(3), inplace=True),  # in place: ends a window
        Kernel("copy_all", (Key(Fresh(3), (slice(2, 6),)),), (Fresh(4),), None, ("s", 0), False),
        _ew("add", (f[2], Key(Fresh(7), None)), Fresh(5)),  # reads a key never made
        _ew("mul", (f[5], Const(3.0)), Fresh(6)),  # poisoned by it
        Free([Fresh(2)]),
    ]


def _state(w, errors):
    return (
        errors,
        {k: (a.dtype, a.shape, a.tobytes()) for k, a in sorted(w.store.items())},
        sorted(w.poisoned.items()),
        w.commands_run,
    )


@pytest.mark.parametrize("fuse", [True, False])
def test_compiled_run_is_the_generic_run(fuse):
    prog = _program()
    want_w = _worker(fuse)
    want = _state(want_w, want_w.run(_bind(prog, BASE, INKEYS)))
    for p in (Compiled(prog, KERNELS), pickle.loads(pickle.dumps(Compiled(prog, KERNELS)))):
        for _ in range(2):  # the second call no longer offers the pool to small outputs
            w = _worker(fuse)
            assert _state(w, p.run(w, BASE, INKEYS)) == want
    assert want[0][0]["cascade"] and "shard 1007 is not on worker 0" in want[0][0]["cause"]
    assert want_w.fused_runs == int(fuse)


def test_failing_kernel_poisons_its_outputs_as_the_generic_run():
    prog = [
        _ew("add", (Key(Input(0, 0), None), Const(1.0)), Fresh(0)),
        Kernel("nope", (), (), {}, None, False),
    ]
    prog.append(_ew("matmul", (Key(Fresh(0), None), Key(Input(0, 1), (None,))), Fresh(1)))
    want_w = _worker(False)
    want = _state(want_w, want_w.run(_bind(prog, BASE, INKEYS)))
    w = _worker(False)
    assert _state(w, Compiled(prog, KERNELS).run(w, BASE, INKEYS)) == want
    assert [e["cause"].split(":")[0] for e in want[0]] == ["KeyError", "TypeError"]


def test_a_window_of_tiny_tensors_runs_in_the_loop():
    w = _worker(True, n=4)  # 4 elements < fusion_min: never fused, as the generic path
    p = Compiled(_program()[:3], KERNELS)
    assert [type(s).__name__ for s in p.steps] == ["_Window"]
    assert p.run(w, BASE, INKEYS) == [] and w.fused_runs == 0 and w.commands_run == 3
    x, y = np.arange(4.0) - 5, np.linspace(-1.0, 1.0, 4)
    np.testing.assert_array_equal(w.store[BASE + 2], (x * 2 + y) * 0.5)


# ---------------------------------------------------------------- through st.jit
def _fused_commands():
    return sum(w["fused_commands"] for w in st.stats()["workers"])


def _same(got, want):
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    assert got.numpy().tobytes() == want.numpy().tobytes()


def test_jitted_chain_runs_compiled_and_fused_bit_identical():
    ex = current().executor
    fusion.configure(ex, True, block_elems=5, min_elems=8)
    try:

        def chain(x, y):
            for _ in range(6):
                x = st.tanh(x * 1.5 - y / 3) + 1
            return x, x.sum(dim=1)

        f = st.jit(chain)
        st.manual_seed(4)
        x, y = st.randn(40, 3, shards=2, dtype=st.float64), st.randn(40, 3, shards=2)
        for _ in range(2):  # two traces
            for g, e in zip(f(x, y), chain(x, y)):
                _same(g, e)
        for _ in range(2):  # two replays, eager between them
            before = _fused_commands()
            got = f(x, y)
            st.synchronize()
            assert _fused_commands() > before  # the stored program's windows fused
            for g, e in zip(got, chain(x, y)):
                _same(g, e)
        prog = next(iter(f.entries.values())).program
        assert f.stats["replays"] == 2 and prog.compiled
        assert [type(c) for c in prog.cmds].count(JitTree) == 1  # sum(dim=1): within workers
    finally:
        fusion.configure(ex, True)
        ex.sync()


def test_traced_reduction_is_one_tree_command():
    def f(x):
        return (x * 2).sum(dim=0), x.amax(dim=0, keepdim=True), x.argmax()

    jf = st.jit(f)
    for seed in range(4):
        st.manual_seed(seed)
        x = st.randn(12, 5, shards=3, dtype=st.float64)
        for g, e in zip(jf(x), f(x)):
            _same(g, e)
    prog = next(iter(jf.entries.values())).program
    assert jf.stats["replays"] == 2
    assert [type(c) for c in prog.cmds].count(JitTree) == 3
    assert not any(type(c) in (JitSubmit, JitExport) for c in prog.cmds)  # no per-shard path
