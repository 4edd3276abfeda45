"""Fused elementwise runs (sharded.runtime.worker.fusion): a chain of elementwise ops whose
temporaries die within the batch is evaluated block by block in the worker, bit-identical to
the same chain run op by op; errors and operands behave as without fusion.

The workers get tiny blocks and thresholds here (``configure``), so small tensors exercise
uneven last blocks; the Ray mirror sends the same settings to the actors."""

import numpy as np
import pytest

import sharded as st
from sharded.runtime.commands import Const, Export, Free, Fusion, Kernel, Key
from sharded.runtime.driver.session import current
from sharded.runtime.worker import fusion
from sharded.runtime.worker.core import KERNELS, Worker

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F8 = np.dtype(np.float64).str


def _ex():
    return current().executor


def _fused_commands():
    return sum(w["fused_commands"] for w in st.stats()["workers"])


@pytest.fixture
def tiny_blocks():
    """Fusion on with blocks of 5 elements (rows) from 8 elements up; restored after."""
    ex = _ex()
    fusion.configure(ex, True, block_elems=5, min_elems=8)
    yield
    fusion.configure(ex, True)
    ex.sync()


def _both(fn):
    """``fn()`` (tensors) read back with fusion on, then off: (on, off, fused commands)."""
    ex = _ex()
    before = _fused_commands()
    on = [t.numpy() for t in fn()]
    fused = _fused_commands() - before
    fusion.configure(ex, False)
    try:
        off = [t.numpy() for t in fn()]
    finally:
        fusion.configure(ex, True, block_elems=5, min_elems=8)
    return on, off, fused


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def test_affine_chain_fuses_and_matches_bitwise(tiny_blocks):
    st.manual_seed(3)
    x = st.rand(37, 3, dtype=st.float64)
    y = st.rand(37, 3, dtype=st.float64)
    on, off, fused = _both(lambda: [2 * x + 3 * y - 1])
    assert fused >= 4 * 3  # every worker ran its four commands as one group
    _same(on[0], off[0])
    np.testing.assert_array_equal(on[0], 2 * x.numpy() + 3 * y.numpy() - 1)


def test_broadcast_scalars_and_promotion(tiny_blocks):
    st.manual_seed(4)
    x = st.rand(41, 6, dtype=st.float32)
    row = st.rand(6, dtype=st.float64)  # broadcast along dim 0: passed whole to every block
    col = st.randint(0, 5, (41, 1))  # int64 column, split with the rows
    base = np.linspace(-1, 1, 6)

    def chain():
        a = st.exp(x * 0.5 + row) - col
        b = (a > 0.3) & (col != 2)
        c = st.where(b, a, 0.0)  # not fusable: ends the group, runs as usual
        return [a, b, c, st.sqrt(st.abs(x - 0.5) + 1) * 2 + base]

    on, off, fused = _both(chain)
    assert fused > 0
    for a, b in zip(on, off):
        _same(a, b)
    assert on[0].dtype == np.float64 and on[1].dtype == np.bool_


def test_int_and_bool_chains(tiny_blocks):
    i = st.arange(60).reshape(20, 3)
    on, off, fused = _both(lambda: [((i * 3 + 1) ^ (i - 7)) | 4, ~((i % 3) == 0) & (i > 4)])
    assert fused > 0
    for a, b in zip(on, off):
        _same(a, b)
    n = np.arange(60).reshape(20, 3)
    np.testing.assert_array_equal(on[0], ((n * 3 + 1) ^ (n - 7)) | 4)


@pytest.mark.parametrize("seed", range(6))
def test_random_chains_match_unfused_bitwise(tiny_blocks, seed):
    rng = np.random.default_rng(seed)
    shapes = [(29, 4), (4,), (29, 1), ()]
    unary = [st.exp, st.sin, st.tanh, st.sqrt, st.log1p, st.abs, st.neg]
    binary = [st.add, st.sub, st.mul, st.div, st.maximum, st.minimum, st.atan2, st.hypot]
    st.manual_seed(seed)
    leaves = [st.rand(29, 4, dtype=st.float64), st.rand(29, 4)]
    leaves += [st.rand(4, dtype=st.float64), st.rand(29, 1), st.randint(-3, 3, (29, 4))]
    plan = []
    for _ in range(int(rng.integers(3, 9))):
        if rng.random() < 0.35:
            plan.append(("u", int(rng.integers(len(unary))), None))
        else:
            other = int(rng.integers(-2, len(leaves)))  # negative: a Python scalar
            plan.append(("b", int(rng.integers(len(binary))), other))
    assert shapes  # the leaves above cover full, row, column and scalar operands

    def chain():
        t = leaves[0] * 1.5
        for kind, f, other in plan:
            if kind == "u":
                t = unary[f](t)
            else:
                o = leaves[other] if other >= 0 else (2.5 if other == -1 else 3)
                if other < 0 and binary[f] in (st.atan2, st.hypot, st.maximum, st.minimum):
                    o = st.tensor(o)  # torch takes no Python number there: a 0-d tensor
                t = binary[f](t, o)
        return [t]

    on, off, fused = _both(chain)
    assert fused > 0
    _same(on[0], off[0])


def test_inplace_ops_in_a_chain(tiny_blocks):
    st.manual_seed(5)
    x = st.rand(33, 2, dtype=st.float64)
    y = st.rand(33, 2, dtype=st.float64)

    def chain():
        t = x * 2 + 1
        t.mul_(y)  # in place: ends the group, t must be materialized before it
        t += 3
        u = t * t - y
        return [t, u, x]

    on, off, _ = _both(chain)
    for a, b in zip(on, off):
        _same(a, b)
    xn, yn = x.numpy(), y.numpy()
    np.testing.assert_array_equal(on[0], (xn * 2 + 1) * yn + 3)


def test_intermediate_kept_by_the_driver_is_stored(tiny_blocks):
    st.manual_seed(6)
    x = st.rand(40, dtype=st.float64)
    on, off, fused = _both(lambda: (lambda a: [a, (a * 2 - x).exp()])(x + 1))
    assert fused > 0
    for a, b in zip(on, off):
        _same(a, b)


def test_error_in_the_middle_surfaces_and_operands_stay(tiny_blocks):
    x = st.arange(30).reshape(10, 3)
    zero = st.zeros(10, 3, dtype=st.int64)
    t = (x * 2 + 1) // zero  # integer division by a zero tensor fails in the worker
    r = (t + 1) * 3 - x
    with pytest.raises(st.OpFailed, match="floor_divide"):
        r.numpy()
    np.testing.assert_array_equal(x.numpy(), np.arange(30).reshape(10, 3))
    ok = (x * 2 + 1) * 3 - 1  # the session goes on, fused
    np.testing.assert_array_equal(ok.numpy(), (np.arange(30).reshape(10, 3) * 2 + 1) * 3 - 1)


def test_fusion_off_runs_op_by_op(tiny_blocks):
    fusion.configure(_ex(), False)
    x = st.rand(50, dtype=st.float64)
    before = _fused_commands()
    (2 * x + 3 * x - 1).numpy()
    assert _fused_commands() == before


# ---------------------------------------------------------------- the worker, command level
def _cmd(kernel, args, key, **params):
    return Kernel(kernel, args, (key,), params, (kernel, 0), False)


@pytest.fixture
def failing_kernel():
    """A fusable test kernel that raises on negative values (in some block)."""

    def k(xp, a, cast=None, out=None, alloc=None):
        if (a < 0).any():
            raise ValueError(f"negative value {a.min()}")
        return a + 1

    k.pooled, k.fusable, k.kernel_name = True, True, "_fusion_test_fail"
    KERNELS["_fusion_test_fail"] = k
    yield
    del KERNELS["_fusion_test_fail"]


def _worker(on):
    w = Worker(0)
    w.fusion, w.fusion_block, w.fusion_min = on, 4, 8
    w.store[1] = np.arange(20.0) - 13  # some negative values, in a late block
    return w


def _batch():
    k = Key(1, None)
    return [
        _cmd("mul", (k, Const(2.0)), 2, cast=None, out=F8),
        _cmd("_fusion_test_fail", (Key(2, None),), 3),
        _cmd("add", (Key(3, None), Const(1.0)), 4, cast=None, out=F8),
        Free((2, 3)),
        _cmd("add", (Key(4, None), k), 5, cast=None, out=F8),
    ]


def test_kernel_error_inside_a_group_is_recorded_as_unfused(failing_kernel):
    results = []
    for on in (True, False):
        w = _worker(on)
        errs = w.run(_batch())
        results.append((errs, sorted(w.store), sorted(w.poisoned), w.fused_runs))
    (e1, s1, p1, f1), (e0, s0, p0, f0) = results
    assert e1 == e0 and s1 == s0 == [1] and p1 == p0 == [4, 5] and f1 == f0 == 0
    assert "negative value" in e1[0]["cause"] and e1[0]["op"] == "_fusion_test_fail"


def test_worker_group_without_errors_skips_the_temporaries(failing_kernel):
    w = _worker(True)
    w.store[1] = np.arange(21.0)
    assert w.run(_batch()) == []
    assert sorted(w.store) == [1, 4, 5] and w.fused_runs == 1 and w.fused_commands == 4
    x = np.arange(21.0)
    np.testing.assert_array_equal(w.store[5], (x * 2 + 1 + 1) + x)


def test_windows_need_two_fusable_commands():
    add = _cmd("add", (Key(1, None), Const(1.0)), 2, cast=None, out=F8)
    assert fusion.windows([add], KERNELS) == {}
    inplace = add._replace(inplace=True)
    assert fusion.windows([add, inplace, add], KERNELS) == {}
    assert fusion.windows([add, Free((1,)), add, Export(2, None)], KERNELS) == {0: 3}


def test_references_internal_only_when_freed_after_member_uses():
    cmds = [
        _cmd("mul", (Key(1, None), Const(2.0)), 2),
        _cmd("add", (Key(2, None), Const(1.0)), 3),
        Free((2,)),
        _cmd("add", (Key(3, (slice(0, 2),)), Const(1.0)), 4),
        Free((3,)),
    ]
    idx = fusion.References(cmds)
    assert idx.internal(2, 0, {0, 1})
    assert not idx.internal(3, 1, {0, 1, 3})  # read through a slice
    assert not idx.internal(4, 3, {3})  # never freed in the batch


def test_switch_in_the_same_batch_applies_to_the_commands_after_it(failing_kernel):
    w = _worker(True)
    w.store[1] = np.arange(21.0)
    assert w.run([Fusion(False, None, None)] + _batch()) == []
    assert w.fused_runs == 0 and sorted(w.store) == [1, 4, 5]


def test_init_fusion_false_turns_it_off():
    if current().executor.kind != "local":
        pytest.skip("starts its own in-process session")
    st.shutdown()
    try:
        st.init(executor="local", num_workers=2, fusion=False)
        x = st.rand(300_000, dtype=st.float64)
        np.testing.assert_array_equal(((2 * x + 1) * 3).numpy(), (2 * x.numpy() + 1) * 3)
        assert _fused_commands() == 0
    finally:
        st.shutdown()
        st.init(executor="local", num_workers=3, min_shard_bytes=0)


def test_bad_slice_in_a_window_fails_like_unfused():
    cmds = [
        _cmd("mul", (Key(1, (slice(0, 4), 7)),), 2, cast=None, out=F8),  # too many indices
        _cmd("add", (Key(2, None), Const(1.0)), 3, cast=None, out=F8),
        Free((2,)),
    ]
    out = []
    for on in (True, False):
        w = _worker(on)
        out.append((w.run(cmds), sorted(w.store), sorted(w.poisoned)))
    assert out[0] == out[1] and out[0][0][0]["op"] == "mul" and out[0][2] == [3]
