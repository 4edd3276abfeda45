"""A worker's shards on threads (sharded.runtime.worker.parallel): with a CPU share of 2 a bare
Worker runs its shards' chains, a tree's chunks and a fused group's blocks on 2 threads,
bit-identical to the sequential path; conflicting chains fall back; errors are recorded as
sequentially; BLAS gets its share per lane meanwhile.

Concurrency is shown with real kernels that meet at a barrier: they only pass it when two of
them run at once (sequentially the barrier times out and the kernel fails)."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from sharded.runtime.commands import (
    Const,
    Free,
    Group,
    GroupFree,
    Kernel,
    Key,
    Keys,
    LayoutCmds,
    Mod,
    ReduceGroup,
    Ref,
    Threads,
    Tree,
    TreeSpec,
)
from sharded.runtime.worker import expand, fusion, parallel, threads
from sharded.runtime.worker.core import KERNELS, Worker

F8 = np.dtype(np.float64).str
P = {"cast": None, "out": F8}
S = 4  # shards, all on the one worker
DESC = Mod(1, S)
DATA = [np.linspace(-1.0, 1.0, 1000) * (s + 1) + s / 7 for s in range(S)]


@pytest.fixture(autouse=True)
def _blas_restored():
    with threadpool_limits(limits=None):  # Threads(n) sets this process's BLAS: put it back
        yield
    threads._SHARE[0] = None


def _worker(n, data=DATA, **attrs):
    w = Worker(0)
    assert w.run([Threads(n)]) == []
    for k, v in attrs.items():
        setattr(w, k, v)
    w.run([Kernel("mul", (Const(d), Const(1.0)), (s,), P, None, False) for s, d in enumerate(data)])
    return w


def _group(op, args, out):
    return Group(op, DESC, args, out, P, op, False)


def _sum_tree(start, out):
    n = len(DATA[0])
    bounds = (tuple(n * s for s in range(S + 1)),)
    spec = TreeSpec(
        "reduce_chunk", {"fn": "sum", "axis": (0,), "dtype": F8}, "reduce_combine", "sum",
        start, (out,), bounds, False, (0,), (ReduceGroup((0,), tuple(range(S))),), "sum", 8,
    )  # fmt: skip
    return Tree(DESC, spec)


def _chain():
    """exp(1.5 x + 0.25) * x - 1 over the layout, temporaries freed, then its sum."""
    return [
        _group("mul", (Keys(0), Const(1.5)), 10),
        _group("add", (Keys(10), Const(0.25)), 20),
        GroupFree(DESC, 10),
        _group("exp", (Keys(20),), 30),
        GroupFree(DESC, 20),
        _group("mul", (Keys(30), Keys(0)), 40),
        GroupFree(DESC, 30),
        _group("sub", (Keys(40), Const(1.0)), 50),
        GroupFree(DESC, 40),
        _sum_tree(50, 90),
    ]


def _results(w, keys):
    return [w.fetch([(k, None)])[0] for k in keys]


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _meet(monkeypatch, name, fusable=False, op=lambda xp, x: xp.add(x, 1.0)):
    """A real kernel ``name`` (``op``: x + 1) that waits at a 2-party barrier: it passes only while
    another call runs at the same time; the threads it ran on are recorded."""
    barrier, seen = threading.Barrier(2, timeout=10), set()

    def meet(xp, x, alloc=None, **params):
        if not fusable or alloc is not None:  # (a fused group's first block runs alone)
            barrier.wait()
        seen.add(threading.get_ident())
        return op(xp, x)

    meet.fusable, meet.pooled = fusable, False
    monkeypatch.setitem(KERNELS, name, meet)
    return seen


@pytest.mark.parametrize("fuse", [{}, {"fusion_block": 100, "fusion_min": 8}])
def test_chains_and_tree_on_two_threads_are_bit_identical_to_one(fuse):
    seq, par = _worker(1, **fuse), _worker(2, par_min=0, **fuse)
    assert seq.stats()["kernel_threads"] == 1 and par.stats()["kernel_threads"] == 2
    for w in (seq, par):
        assert w.run([LayoutCmds(None, _chain())]) == []
    for a, b in zip(_results(seq, [50, 51, 52, 53, 90]), _results(par, [50, 51, 52, 53, 90])):
        _same(a, b)
    want = np.exp(1.5 * DATA[2] + 0.25) * DATA[2] - 1
    np.testing.assert_allclose(_results(par, [52])[0], want)
    assert par.commands_run == seq.commands_run  # every kernel counted once
    assert par.fused_commands == seq.fused_commands == (20 if fuse else 0)  # fused per chain
    assert sorted(par.store) == sorted(seq.store)  # temporaries freed alike
    assert seq._kpool is None  # the sequential path starts no threads


def test_shards_chains_run_at_once(monkeypatch):
    seen = _meet(monkeypatch, "meet")
    w = _worker(2, par_min=0)
    errs = w.run([LayoutCmds(None, [Group("meet", DESC, (Keys(0),), 10, {}, "meet", False)])])
    assert errs == []
    assert len(seen) == 2  # two threads, each passed the barrier with the other
    np.testing.assert_array_equal(_results(w, [13])[0], DATA[3] + 1)


def test_tree_chunks_run_at_once(monkeypatch):
    # each shard's partial: its sum (dims kept, as the real chunk kernel keeps them)
    seen = _meet(monkeypatch, "reduce_chunk", op=lambda xp, x: x.sum(keepdims=True))
    w = _worker(2, par_min=0)
    assert w.run([LayoutCmds(None, [_sum_tree(0, 90)])]) == []
    assert len(seen) == 2
    # the partials, combined in shard order
    np.testing.assert_allclose(_results(w, [90])[0], sum(d.sum() for d in DATA))


def test_conflicting_chains_fall_back_to_the_sequential_order():
    # every shard of the second op reads shard 0's output: written by chain 0
    cmds = [_group("mul", (Keys(0), Const(2.0)), 10), _group("add", (Keys(0), Key(10)), 20)]
    w = _worker(2, par_min=0)
    write = Kernel("mul", (Key(0), Const(2.0)), (10,), P, ("mul", 0), False)
    read = Kernel("add", (Key(1), Key(10)), (21,), P, ("add", 1), False)
    assert not parallel.independent(w, [[write], [read]])
    assert not parallel.independent(w, [[write], [Free((10,))]])  # a free writes too
    assert parallel.independent(w, [[write], [read._replace(args=(Key(1), Key(0)))]])
    assert w.run([LayoutCmds(None, cmds)]) == []
    for s in range(S):
        np.testing.assert_array_equal(_results(w, [20 + s])[0], DATA[s] + 2 * DATA[0])


def test_in_place_write_into_memory_another_chain_reads_is_a_conflict():
    w = _worker(2, par_min=0)
    w.store[9] = w.store[1][:10]  # a view of shard 1 under a key of its own
    write = Kernel("add", (Key(1), Const(1.0)), (1,), P, ("add", 1), True)
    read = Kernel("mul", (Key(9), Const(1.0)), (8,), P, ("mul", 0), False)
    assert not parallel.independent(w, [[read], [write]])
    apart = Kernel("mul", (Key(0), Const(1.0)), (8,), P, ("mul", 0), False)
    assert parallel.independent(w, [[apart], [write]])


def test_an_error_in_one_chain_is_recorded_as_sequentially_and_the_worker_goes_on():
    data = [d if s != 2 else d[:7] for s, d in enumerate(DATA)]  # shard 2 mismatches the row
    row = Const(np.ones(len(DATA[0])))
    cmds = [_group("add", (Keys(0), row), 10), _group("mul", (Keys(10), Const(3.0)), 20)]
    seq, par = _worker(1, data), _worker(2, data, par_min=0)
    errs = [w.run([LayoutCmds(None, cmds)]) for w in (seq, par)]
    assert errs[0] == errs[1] and len(errs[1]) == 2
    assert errs[1][0]["shard"] == 2 and not errs[1][0]["cascade"] and errs[1][1]["cascade"]
    _same(_results(seq, [23])[0], _results(par, [23])[0])
    assert par.run([LayoutCmds(None, [GroupFree(DESC, 10), _group("neg", (Keys(0),), 30)])]) == []
    np.testing.assert_array_equal(_results(par, [32])[0], -data[2])


def _fused(w):
    # one shard of 1000 rows in blocks of 100: a fused group whose blocks split over the pool
    w.fusion_block, w.fusion_min = 100, 8
    cmds = [
        Kernel("mul", (Key(0), Const(1.5)), (10,), P, ("mul", 0), False),
        Kernel("exp", (Key(10),), (11,), P, ("exp", 0), False),
        Free((10,)),
        Kernel("sub", (Key(11), Key(0)), (12,), P, ("sub", 0), False),
        Free((11,)),
    ]
    assert w.run(cmds) == []
    assert w.fused_commands == 3
    return w.fetch([(12, None)])[0]


def test_fused_blocks_split_over_two_threads_are_bit_identical():
    _same(_fused(_worker(1, DATA[:1])), _fused(_worker(2, DATA[:1])))


def test_fused_blocks_run_at_once(monkeypatch):
    seen = _meet(monkeypatch, "meet", fusable=True)
    w = _worker(2, DATA[:1])
    w.fusion_block, w.fusion_min = 200, 8  # the first block alone, then 2 + 2 on two lanes
    cmds = [
        Kernel("meet", (Key(0),), (10,), {}, ("meet", 0), False),
        Kernel("mul", (Key(10), Const(2.0)), (11,), P, ("mul", 0), False),
        Free((10,)),
    ]
    assert w.run(cmds) == [] and w.fused_commands == 2
    assert len(seen) == 2
    np.testing.assert_array_equal(w.fetch([(11, None)])[0], (DATA[0] + 1) * 2)


def test_blas_takes_its_share_per_lane_while_chains_run(monkeypatch):
    if threads.blas_threads() is None:
        pytest.skip("no BLAS loaded")
    seen = []

    def probe(xp, x):  # (not fusable: it may call BLAS)
        seen.append((threads.blas_threads(), threads.cpu_share()))
        return x

    monkeypatch.setitem(KERNELS, "probe", probe)
    w = _worker(2, par_min=0)
    if threads.blas_threads() != 2:
        pytest.skip("this BLAS cannot run 2 threads here")
    assert w.run([LayoutCmds(None, [Group("probe", DESC, (Keys(0),), 10, {}, "p", False)])]) == []
    assert seen == [(1, 1)] * S  # 2 lanes of a share of 2: one thread each
    assert threads.blas_threads() == 2 and threads.cpu_share() == 2  # restored after


def test_lanes_blas_limit_holds_when_another_thread_set_the_share(monkeypatch):
    """A real worker takes its Threads command on one thread and batches on another (Ray's
    actor thread, the wire's): threadpoolctl 3.6+ lets only the first thread that set an
    OpenBLAS limit set one again, so a lane's limit set from the batch's thread did nothing
    and the lanes' BLAS ran on the whole share (4 threads on 2 cores)."""
    if threads.blas_threads() is None:
        pytest.skip("no BLAS loaded")
    seen = []

    def probe(xp, x):
        seen.append(threads.blas_threads())
        return x

    monkeypatch.setitem(KERNELS, "probe", probe)
    with threadpool_limits(limits=None):  # restores this process's pools afterwards
        box, made, done = {}, threading.Event(), threading.Event()

        def serve():  # the share is set (and OpenBLAS's control taken) on this thread,
            box["w"] = _worker(2, par_min=0)  # which stays alive, as a worker's does
            made.set()
            done.wait(30)

        other = threading.Thread(target=serve)
        other.start()
        try:
            assert made.wait(30)
            if threads.blas_threads() != 2:
                pytest.skip("this BLAS cannot run 2 threads here")
            cmds = [LayoutCmds(None, [Group("probe", DESC, (Keys(0),), 10, {}, "p", False)])]
            assert box["w"].run(cmds) == []  # on this (another) thread
        finally:
            done.set()
            other.join(30)
        assert seen == [1] * S
        assert threads.blas_threads() == 2


def test_a_lanes_blas_limit_reaches_scipys_blas_loaded_after_the_scan(monkeypatch):
    """SciPy's linear algebra brings its own OpenBLAS, loaded at first use (after the worker's
    Threads command scanned the libraries): the next section scans again, so a lane's limit
    covers it too, not only NumPy's."""
    import scipy.linalg  # noqa: F401  (its OpenBLAS)

    class Stale:  # a scan from before SciPy loaded: it knows no library
        lib_controllers: list = []

    monkeypatch.setattr(parallel, "_CONTROLLER", [Stale(), False])
    got = parallel._controller()
    assert not isinstance(got, Stale) and parallel._CONTROLLER[1] is True
    paths = {c.filepath for c in got.lib_controllers}
    from threadpoolctl import threadpool_info

    assert {p["filepath"] for p in threadpool_info() if p["user_api"] == "blas"} <= paths
    assert parallel._controller() is got  # scanned once


def test_small_work_and_the_switch_stay_sequential(monkeypatch):
    w = _worker(2)  # the default least work: far more than these 1000-element shards
    assert w.run([LayoutCmds(None, _chain())]) == [] and w._kpool is None
    monkeypatch.setenv("SHARDED_SHARD_THREADS", "0")
    w = _worker(2)
    assert w.stats()["kernel_threads"] == 1


def test_the_drivers_per_shard_kernels_run_at_once(monkeypatch):
    """Per-shard commands sent one by one (a matmul's panels, a sort's local sorts) run on
    the pool too when they are independent, with the same results as one after another."""
    seen = _meet(monkeypatch, "meet")
    w = _worker(2, par_min=0)
    cmds = [Kernel("meet", (Key(s),), (20 + s,), {}, ("meet", s), False) for s in range(S)]
    assert w.run(cmds) == []
    assert len(seen) == 2 and w.stats()["parallel_sections"] >= 1
    for s in range(S):
        _same(_results(w, [20 + s])[0], DATA[s] + 1)


def test_frees_between_per_shard_kernels_wait_for_the_run(monkeypatch):
    """A free between two per-shard kernels (a sort frees each destination's scratch after
    its kernel) no longer cuts the run: both kernels run at once, the free after them. A
    free of what another kernel of the run reads, and frees after the run's last kernel,
    stay out of it."""
    seen = _meet(monkeypatch, "meet")
    w = _worker(2, par_min=0)
    cmds = [
        Kernel("meet", (Key(0),), (20,), {}, ("meet", 0), False),
        Free((2,)),  # (a block none of the run's kernels reads)
        Kernel("meet", (Key(1),), (22,), {}, ("meet", 1), False),
        Free((0,)),
    ]
    assert parallel.kernel_run(w, cmds, 0, None) == 3  # (the trailing free runs in order)
    assert w.run(cmds) == []
    assert len(seen) == 2
    _same(_results(w, [20])[0], DATA[0] + 1)
    _same(_results(w, [22])[0], DATA[1] + 1)
    assert 2 not in w.store and 0 not in w.store
    reads = [cmds[0], Free((1,)), cmds[2]]  # frees what the next kernel reads: run stops
    assert parallel.kernel_run(w, reads, 0, None) is None


def test_kernels_on_received_blocks_run_at_once(monkeypatch):
    """Kernels whose operands came with the batch (``Ref``: a sort's pieces, sent by other
    shards of the same worker) are sized by those blocks: large ones run on the pool, small
    ones in order."""
    seen = _meet(monkeypatch, "meet")
    w = _worker(2)  # the default par_min: the received blocks decide
    big = [np.arange(float(w.par_min)) + s for s in range(2)]
    cmds = [Kernel("meet", (Ref(s),), (40 + s,), {}, ("meet", s), False) for s in range(2)]
    assert parallel.kernel_run(w, cmds, 0, None, big) == 2
    assert parallel.kernel_run(w, cmds, 0, None, [b[:8] for b in big]) is None
    assert w.run(cmds, *big) == []
    assert len(seen) == 2
    for s in range(2):
        _same(_results(w, [40 + s])[0], big[s] + 1)


def test_kernels_are_sized_by_their_largest_operand(monkeypatch):
    """A convolution's first operand is its small weight: the run is sized by the largest
    stored operand (the image block), so the shards' convolutions run at once."""
    barrier, seen = threading.Barrier(2, timeout=10), set()

    def meet2(xp, k, x):
        barrier.wait()
        seen.add(threading.get_ident())
        return xp.add(x, k.sum())

    meet2.fusable, meet2.pooled = False, False
    monkeypatch.setitem(KERNELS, "meet2", meet2)
    big = [np.arange(float(2 * 1000)) + s for s in range(2)]
    w = _worker(2, data=[np.ones(3), np.ones(3)] + big, par_min=1500)
    cmds = [Kernel("meet2", (Key(s), Key(2 + s)), (40 + s,), {}, ("m", s), False) for s in (0, 1)]
    assert parallel.kernel_run(w, cmds, 0, None) == 2
    assert w.run(cmds) == [] and len(seen) == 2
    for s in range(2):
        _same(_results(w, [40 + s])[0], big[s] + 3)
    small = [c._replace(args=c.args[:1]) for c in cmds]  # the weights alone: too small
    assert parallel.kernel_run(w, small, 0, None) is None


def test_kernels_that_depend_or_write_unsaid_stay_in_order(monkeypatch):
    """A kernel that reads another's output, or one run for its effect (no outputs: it may
    write its operands, as an LU's update does), is never run beside the others."""
    w = _worker(2, par_min=0)
    dep = [
        Kernel("mul", (Key(0), Const(2.0)), (30,), P, None, False),
        Kernel("mul", (Key(30), Const(3.0)), (31,), P, None, False),  # reads 30
    ]
    assert parallel.kernel_run(w, dep, 0, None) is None
    effect = Kernel("mul", (Key(1), Const(2.0)), (), P, None, False)
    assert parallel.kernel_run(w, [dep[0], effect], 0, None) is None
    two = [dep[0], Kernel("mul", (Key(1), Const(2.0)), (32,), P, None, False)]
    assert parallel.kernel_run(w, two + [dep[1]], 0, None) == 2  # the run stops before 31
    assert w.run(dep) == []
    _same(_results(w, [31])[0], DATA[0] * 2.0 * 3.0)


def test_a_window_of_independent_shards_runs_each_chain_fused_at_once():
    """The driver's per-shard kernels of two ops (a broadcast's: one kernel per shard, back
    to back) make one fusion window; a worker on 2 threads runs its per-shard chains on the
    pool, each fused on its own, with the results and fused counts of the sequential run."""
    cmds = [Kernel("mul", (Key(s), Const(1.5)), (20 + s,), P, ("mul", s), False) for s in range(S)]
    cmds += [
        Kernel("add", (Key(20 + s), Key(s)), (30 + s,), P, ("add", s), False) for s in range(S)
    ]
    cmds.append(Free(tuple(20 + s for s in range(S))))
    assert fusion.windows(cmds, KERNELS) == {0: len(cmds)}
    chains, after = parallel.window_chains(cmds)
    assert [[c.outs if type(c) is Kernel else c.keys for c in ch] for ch in chains] == [
        [(20 + s,), (30 + s,), [20 + s]] for s in range(S)
    ] and after == []
    fuse = {"fusion_block": 100, "fusion_min": 8}
    seq, par = _worker(1, **fuse), _worker(2, par_min=0, **fuse)
    for w in (seq, par):
        assert w.run(cmds) == []
    for s in range(S):
        _same(_results(seq, [30 + s])[0], _results(par, [30 + s])[0])
    np.testing.assert_allclose(_results(par, [31])[0], DATA[1] * 2.5)
    assert par.stats()["parallel_sections"] >= 1 and seq._kpool is None
    assert par.fused_commands == seq.fused_commands == 2 * S
    assert sorted(par.store) == sorted(seq.store)
    # a kernel reading two chains' outputs makes the window one chain: fused as before
    joined = cmds[:2] + [Kernel("add", (Key(20), Key(21)), (40,), P, None, False)]
    assert parallel.window_chains(joined) is None


def test_a_reduction_along_an_unsplit_dim_runs_its_groups_chunks_at_once(monkeypatch):
    """A reduction along a dim that is not split is a group per shard (each its own root):
    the groups' chunks run on the pool together, then their combines, each result the
    sequential one."""
    seen = _meet(monkeypatch, "reduce_chunk", op=lambda xp, x: x.sum(keepdims=True))
    n = len(DATA[0])
    spec = TreeSpec(
        "reduce_chunk", {"fn": "sum", "axis": (0,), "dtype": F8}, "reduce_combine", "sum",
        0, (60,), (tuple(n * s for s in range(S + 1)),), False, (0,),
        tuple(ReduceGroup((0,), (s,)) for s in range(S)), "sum", 8,
    )  # fmt: skip
    w = _worker(2, par_min=0)
    assert w.run([LayoutCmds(None, [Tree(DESC, spec)])]) == []
    assert len(seen) == 2
    for s in range(S):
        np.testing.assert_allclose(_results(w, [60 + s])[0], DATA[s].sum())
    assert not [k for k in w.store if k < 0]  # the partials are freed


def test_tiny_shards_run_straight_from_the_layout_command_as_the_general_path_would(
    monkeypatch,
):
    """Shards under ``expand.TINY_ELEMS`` run their kernels without per-shard records: the
    same results, error records (a missing operand's cascade, a failing kernel's own),
    commands counted and keys freed as the general path's."""
    ran = []
    real = expand._run_tiny
    monkeypatch.setattr(expand, "_run_tiny", lambda w, c, *a: ran.append(c.label) or real(w, c, *a))
    cmds = [
        _group("mul", (Keys(0), Const(3.0)), 10),
        _group("add", (Keys(10), Const(1.0)), 20),
        GroupFree(DESC, 10),
        Group("mul", DESC, (Keys(20), Const(2.0)), 20, P, "mul_", True),  # in place
        Group("no_such_kernel", DESC, (Keys(20),), 40, P, "bad", False),
        # 1,000 x 1,000 elements: the general path, and so is what reads its output
        _group("mul", (Keys(20), Const(np.linspace(0.0, 1.0, 1000))), 50),
        _group("neg", (Keys(50),), 60),
    ]
    out = []
    for par_min in (None, 0):  # the default: tiny; 0: the general path
        w = _worker(1) if par_min is None else _worker(1, par_min=0)
        w._free([1])  # shard 1's operand is gone: its commands cascade
        errs = w.run([LayoutCmds(None, cmds)])
        out.append((w, errs))
    (tiny, e1), (general, e2) = out
    assert ran == ["mul", "add", "mul_", "bad"]
    assert e1 == e2 and any(e.get("cascade") for e in e1) and any(e["op"] == "bad" for e in e1)
    assert tiny.commands_run == general.commands_run
    assert sorted(tiny.store) == sorted(general.store) and 10 not in tiny.store
    for k in (20, 22, 23, 60, 62, 63):
        _same(_results(tiny, [k])[0], _results(general, [k])[0])
    want = -(DATA[2] * 3.0 + 1.0) * 2.0 * np.linspace(0.0, 1.0, 1000)
    np.testing.assert_allclose(_results(tiny, [62])[0], want)
