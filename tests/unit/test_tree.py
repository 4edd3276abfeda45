"""The chunk -> combine tree (sharded.core.tree): its pure rules, and the combine tree on
layouts where partials meet on one worker, travel between workers, or the root holds none;
reductions as one layout command whose fan-in-8 tree the workers walk (issue 21)."""

import numpy as np
import pytest

import sharded as st
from sharded import dtypes as D
from sharded.core.dataflow import Operand
from sharded.core.tree import plan_reduce, reduce_groups, reduce_layout, tree_plan
from sharded.errors import OpFailed
from sharded.layout import Layout
from sharded.runtime.driver.local import LocalExecutor
from tests.helpers import assert_matches_numpy, current_executor, on_ray

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def test_groups_and_output_layout_are_pure():
    lay = Layout.from_bounds((4, 6), [(0, 2, 4), (0, 3, 6)], [0, 1, 2, 0])
    assert dict(reduce_groups(lay, (0,))) == {(0,): [0, 2], (1,): [1, 3]}
    assert dict(reduce_groups(lay, (0, 1))) == {(): [0, 1, 2, 3]}
    out = reduce_layout(lay, (0,), keepdim=False)
    assert out.shape == (6,) and out.bounds == ((0, 3, 6),) and list(out.workers) == [0, 1]
    out = reduce_layout(lay, (1,), keepdim=True)
    assert out.shape == (4, 1) and list(out.workers) == [0, 2]
    rep = Layout.from_bounds((4,), [(0, 4)], [0, 1], replicated=True)
    assert len(reduce_groups(rep, (0,))) == 2  # every copy reduces where it is
    assert reduce_layout(rep, (0,), False).is_replicated


@pytest.mark.parametrize("workers", [[0, 0, 1, 2, 1], [2, 0, 1, 0, 2], [1, 1, 1, 1, 1]])
def test_combine_tree_any_worker_pattern(workers):
    a = np.arange(40.0).reshape(5, 8)
    lay = st.Layout(chunks=(1, 1, 1, 1, 1), workers=workers)
    x = st.from_numpy(a, layout=lay)
    assert_matches_numpy(x.sum(0), a.sum(0))
    assert_matches_numpy(x.argmax(0), a.argmax(0))
    assert x.sum().item() == a.sum()


# ------------------------------------------------- reductions as one layout command (#21)
REDUCTIONS = {
    "sum": (lambda x, d, k: x.sum(d, keepdim=k), lambda a, d, k: a.sum(d, keepdims=k)),
    "mean": (lambda x, d, k: x.mean(d, keepdim=k), lambda a, d, k: a.mean(d, keepdims=k)),
    "prod": (lambda x, d, k: x.prod(d, keepdim=k), lambda a, d, k: a.prod(d, keepdims=k)),
    "amax": (lambda x, d, k: x.amax(d, keepdim=k), lambda a, d, k: a.max(d, keepdims=k)),
    "amin": (lambda x, d, k: x.amin(d, keepdim=k), lambda a, d, k: a.min(d, keepdims=k)),
    "var": (lambda x, d, k: x.var(d, keepdim=k), lambda a, d, k: a.var(d, ddof=1, keepdims=k)),
    "std": (lambda x, d, k: x.std(d, keepdim=k), lambda a, d, k: a.std(d, ddof=1, keepdims=k)),
    "norm": (
        lambda x, d, k: st.linalg.vector_norm(x, dim=d, keepdim=k),
        lambda a, d, k: np.sqrt((a * a).sum(d, keepdims=k)),
    ),
    "logsumexp": (
        lambda x, d, k: st.logsumexp(x, d if d is not None else (0, 1), keepdim=k),
        lambda a, d, k: np.log(np.exp(a).sum(d, keepdims=k)),
    ),
    "any": (
        lambda x, d, k: (x > 0.5).any(d, keepdim=k),
        lambda a, d, k: (a > 0.5).any(d, keepdims=k),
    ),
    "all": (
        lambda x, d, k: (x > -2).all(d, keepdim=k),
        lambda a, d, k: (a > -2).all(d, keepdims=k),
    ),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("shards", [1, 2, 3, 4, 5])
def test_every_reduction_matches_numpy_along_split_and_other_dims(name, shards):
    ours, ref = REDUCTIONS[name]
    a = np.random.default_rng(shards).standard_normal((7, 3))  # uneven shards along dim 0
    x = st.from_numpy(a, shards=shards, dim=0)
    for d in (None, 0, 1):
        for k in (False, True):
            if d is None and k and name not in ("logsumexp", "norm"):
                continue  # torch: a full reduction takes no keepdim without a dim
            assert_matches_numpy(ours(x, d, k), ref(a, d, k), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shards", [1, 2, 3, 4, 5])
def test_arg_reductions_and_empty_shards(shards):
    a = np.random.default_rng(7).standard_normal((3, 4))
    x = st.from_numpy(a, shards=shards, dim=0)  # 4 and 5 shards of 3 rows: empty shards
    assert x.argmax().item() == a.argmax() and x.argmin().item() == a.argmin()
    assert x.argmax(0).tolist() == a.argmax(0).tolist()
    assert x.argmin(1, keepdim=True).tolist() == a.argmin(1, keepdims=True).tolist()
    v = x.max(0)
    np.testing.assert_array_equal(v.values.numpy(), a.max(0))
    assert v.indices.tolist() == a.argmax(0).tolist()
    assert x.sum().item() == pytest.approx(a.sum(), rel=1e-12)
    assert_matches_numpy(x.sum(0), a.sum(0), rtol=1e-12)
    e = st.from_numpy(np.zeros((0, 3)), shards=shards, dim=0)
    assert_matches_numpy(e.sum(0), np.zeros(3))


def test_grid_layouts_reduce_with_global_indices():
    a = np.random.default_rng(3).standard_normal((6, 8))
    x = st.from_numpy(a, layout=st.Layout(grid=(2, 3)))
    for d in (0, 1):
        assert x.argmax(d).tolist() == a.argmax(d).tolist()
        assert_matches_numpy(x.sum(d), a.sum(d), rtol=1e-12)
    assert x.argmin().item() == a.argmin()


def test_a_reduction_is_one_command_and_a_read_one_call_per_worker():
    ex = current_executor()
    x = st.arange(20.0, shards=5, dtype=st.float64)
    ex.sync()
    n = ex.commands
    s = x.sum()
    m = x.amax(0, keepdim=True)
    assert ex.commands - n == 2  # one layout command each, not one per shard
    calls = []
    orig = ex._dispatch
    ex._dispatch = lambda w, *a: calls.append(w) or orig(w, *a)
    try:
        assert s.item() == 190.0
    finally:
        del ex._dispatch
    # partials, combine and the read: one batch a worker (on Ray the timer may have shipped
    # the reduction before the read, which then is one more batch on the root only)
    assert len(calls) == len(set(calls)) or on_ray()
    assert on_ray() or sorted(calls) == sorted(set(x._layout.workers))
    assert m.tolist() == [19.0]


def test_tree_plan_links_a_fan_in_of_eight():
    workers = list(range(20))
    lay = Layout.from_bounds((20,), [tuple(range(21))], workers)
    groups, edges, roots = tree_plan(lay, (0,))
    assert roots == [0] and groups[0][0] == tuple(workers)
    parent = dict(edges)
    assert [parent[w] for w in (1, 8, 9, 16, 17, 19)] == [0, 0, 1, 1, 2, 2]
    assert tree_plan(lay, (0,))[0] is groups  # cached per layout and dims


def _filled(ex, workers, shape):
    """A float64 Operand whose shard ``s`` (on ``workers[s]``) is full of ``s``."""
    n = len(workers)
    lay = Layout.from_bounds((n * shape,), [tuple(range(0, n * shape + 1, shape))], workers)
    keys = ex.new_keys(n)
    for s, w in enumerate(workers):
        ex.submit(w, "full", (), (keys[s],), {"shape": (shape,), "value": float(s), "dtype": "<f8"})
    return Operand(lay, D.float64, keys)


@pytest.mark.parametrize("n", [9, 20, 70])
def test_deep_trees_on_many_workers(n):
    ex = LocalExecutor(n)
    try:
        x = _filled(ex, list(range(n - 1, -1, -1)), 3)  # root: the last worker
        s = plan_reduce(ex, x, "sum", (0,), False, D.float64)[0]
        v, i = plan_reduce(ex, x, "max", (0,), False, D.float64, arg=True, flat=True)
        (got, idx) = ex.fetch([(n - 1, s.keys[0], None), (n - 1, i.keys[0], None)])
        assert float(got) == 3 * n * (n - 1) / 2 and int(idx) == 3 * (n - 1)
    finally:
        ex.close()


def test_trees_that_would_wait_on_each_other_are_shipped_apart():
    ex = LocalExecutor(2)
    try:
        x, y = _filled(ex, [0, 1], 2), _filled(ex, [1, 0], 2)  # roots 0 and 1
        a = plan_reduce(ex, x, "sum", (0,), False, D.float64)[0]
        b = plan_reduce(ex, y, "sum", (0,), False, D.float64)[0]
        assert [float(v) for v in ex.fetch([(0, a.keys[0], None), (1, b.keys[0], None)])] == [
            2.0,
            2.0,
        ]
    finally:
        ex.close()


def test_groups_whose_trees_cross_fall_back_to_rounds():
    lay = Layout.from_bounds((6, 4), [(0, 2, 4, 6), (0, 2, 4)], [0, 1, 2, 0, 1, 2])
    assert tree_plan(lay, (0,)) is None  # group 0 roots on 0 with 1 under it, group 1 inverse
    a = np.arange(24.0).reshape(6, 4)
    x = st.from_numpy(a, layout=st.Layout(grid=(3, 2), workers=[0, 1, 2, 0, 1, 2]))
    assert_matches_numpy(x.sum(0), a.sum(0))
    assert x.argmax(0).tolist() == a.argmax(0).tolist()


def test_a_failed_partial_is_raised_at_the_read_and_leaves_operands_intact():
    x = st.arange(6, shards=3)
    zero = st.zeros(6, dtype=st.int64, shards=3)
    with pytest.raises(OpFailed, match="div"):
        (x // zero).sum().item()
    assert x.sum().item() == 15
