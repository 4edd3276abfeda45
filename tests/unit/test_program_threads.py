"""A stored ``st.jit`` program on a worker with several kernel threads
(:mod:`sharded.runtime.worker.program`): back-to-back independent per-shard kernels run at once
on the pool, a fusion window of independent per-shard chains runs each chain fused on it, and
both give what one thread gives; kernels that depend on one another stay in order.

Concurrency is shown as in ``test_worker_threads``: a real kernel that waits at a 2-party
barrier passes only while another call runs at the same time."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from sharded.runtime.commands import Const, Free, Fresh, Input, Kernel, Key, Threads
from sharded.runtime.worker import threads
from sharded.runtime.worker.core import KERNELS, Worker
from sharded.runtime.worker.program import Compiled

F8 = np.dtype(np.float64).str
P = {"cast": None, "out": F8}
DATA = [np.linspace(-1.0, 1.0, 5000) * (s + 1) + s / 7 for s in range(2)]


@pytest.fixture(autouse=True)
def _blas_restored():
    with threadpool_limits(limits=None):  # Threads(n) sets this process's BLAS: put it back
        yield
    threads._SHARE[0] = None


def _worker(n, **attrs):
    w = Worker(0)
    assert w.run([Threads(n)]) == []
    for k, v in attrs.items():
        setattr(w, k, v)
    for s, d in enumerate(DATA):
        w.store[s] = d.copy()
    return w


def _meet(monkeypatch):
    barrier, seen = threading.Barrier(2, timeout=10), set()

    def meet(xp, x, **params):
        barrier.wait()
        seen.add(threading.get_ident())
        return xp.add(x, 1.0)

    meet.fusable, meet.pooled = False, False
    monkeypatch.setitem(KERNELS, "meet", meet)
    return seen


def _k(name, args, outs, params=None):
    return Kernel(name, args, outs, params or {}, (name, None), False)


def test_independent_per_shard_kernels_of_a_program_run_at_once(monkeypatch):
    seen = _meet(monkeypatch)
    w = _worker(2, par_min=0)
    prog = [_k("meet", (Key(Input(0, s)),), (Fresh(s),)) for s in range(2)]
    assert Compiled(prog, w.kernels).run(w, 100, [[0, 1]]) == []
    assert len(seen) == 2 and w.stats()["parallel_sections"] >= 1
    for s in range(2):
        np.testing.assert_array_equal(w.store[100 + s], DATA[s] + 1)


def _program():
    """Per shard: x * 1.5 (a run of two independent kernels), then a fused window of two
    chains (exp(. + 0.25) - x, temporaries freed), then a kernel reading both shards."""
    cmds = [_k("mul", (Key(Input(0, s)), Const(1.5)), (Fresh(s),), P) for s in range(2)]
    for s in range(2):
        cmds += [
            _k("add", (Key(Fresh(s)), Const(0.25)), (Fresh(10 + s),), P),
            _k("exp", (Key(Fresh(10 + s)),), (Fresh(20 + s),), P),
            Free([Fresh(10 + s)]),
            _k("sub", (Key(Fresh(20 + s)), Key(Input(0, s))), (Fresh(30 + s),), P),
            Free([Fresh(20 + s)]),
        ]
    cmds.append(_k("add", (Key(Fresh(30)), Key(Fresh(31))), (Fresh(40),), P))
    return cmds


@pytest.mark.parametrize("fuse", [{}, {"fusion_block": 100, "fusion_min": 8}])
def test_a_program_on_two_threads_gives_what_one_thread_gives(fuse):
    got = []
    for n in (1, 2):
        w = _worker(n, par_min=0, **fuse)
        assert Compiled(_program(), w.kernels).run(w, 100, [[0, 1]]) == []
        got.append({k: w.store[k].tobytes() for k in (100, 101, 130, 131, 140)})
        # (unfused, a window too small to fuse runs in the loop, one thread: as before)
        assert (w.stats()["parallel_sections"] > 0) == (n > 1 and bool(fuse))
        assert 110 not in w.store and 120 not in w.store  # the temporaries were freed
    assert got[0] == got[1]
    want = np.exp(DATA[0] * 1.5 + 0.25) - DATA[0] + np.exp(DATA[1] * 1.5 + 0.25) - DATA[1]
    np.testing.assert_allclose(np.frombuffer(got[1][140]), want, rtol=1e-12)


def test_kernels_that_read_one_anothers_output_stay_in_order():
    w = _worker(2, par_min=0)
    prog = [
        _k("mul", (Key(Input(0, 0)), Const(2.0)), (Fresh(0),), P),
        _k("add", (Key(Fresh(0)), Const(1.0)), (Fresh(1),), P),
        _k("mul", (Key(Fresh(1)), Key(Input(0, 1))), (Fresh(2),), P),
    ]
    assert Compiled(prog, w.kernels).run(w, 100, [[0, 1]]) == []
    np.testing.assert_array_equal(w.store[102], (DATA[0] * 2 + 1) * DATA[1])
