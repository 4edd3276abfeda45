"""unique and unique_consecutive against NumPy with torch's semantics (sorted output, NaNs
each their own value, inverse shaped like the input), on 1..5 shards, uneven and empty ones."""

import re

import hypothesis.strategies as hs
import numpy as np
import pytest
from hypothesis import given, settings

import sharded as st
from tests.helpers import examples, ray_ref_slack, sharded_arrays, traced_peak

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def ref_unique(a):
    a = np.asarray(a)
    f = a.reshape(-1)
    perm = np.argsort(f, kind="stable")
    s = f[perm]
    m = np.ones(s.size, bool)
    m[1:] = s[1:] != s[:-1]
    starts = np.flatnonzero(m)
    inv = np.empty(s.size, np.int64)
    inv[perm] = np.cumsum(m) - 1
    return s[m], inv.reshape(a.shape), np.diff(np.append(starts, s.size))


def ref_consecutive(a):
    a = np.asarray(a)
    f = a.reshape(-1)
    m = np.ones(f.size, bool)
    m[1:] = f[1:] != f[:-1]
    starts = np.flatnonzero(m)
    return f[m], (np.cumsum(m) - 1).reshape(a.shape), np.diff(np.append(starts, f.size))


def check(fn, ref, a, **place):
    x = st.tensor(a, **place)
    v, i, c = fn(x, return_inverse=True, return_counts=True)
    rv, ri, rc = ref(a)
    assert np.array_equal(v.numpy(), rv, equal_nan=True)
    assert v.dtype == x.dtype and i.dtype == st.int64 and c.dtype == st.int64
    assert np.array_equal(i.numpy(), ri) and tuple(i.shape) == tuple(np.shape(a))
    assert np.array_equal(c.numpy(), rc)
    assert np.array_equal(fn(x).numpy(), rv, equal_nan=True)
    v2, c2 = fn(x, return_counts=True)
    assert np.array_equal(c2.numpy(), rc)


RNG = np.random.default_rng(3)
NAN = np.array([3.0, np.nan, 1.0, np.nan, 1.0, -0.0, 0.0, 2.0, 2.0, np.inf])
DATA = {
    "ints": RNG.integers(0, 10, 57),
    "runs": np.repeat(RNG.integers(0, 3, 12), RNG.integers(1, 6, 12)),
    "floats": RNG.random(31),
    "nan": np.tile(NAN, 4),
    "bool": RNG.random(20) > 0.3,
    "2d": RNG.integers(0, 4, (5, 6)).astype(np.int32),
}
PLACES = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=5),
    dict(layout=st.Layout(chunks={0: (0, 2, 0, -1)})),
    dict(layout=st.Layout.replicated()),
]


def _place(place, shape):
    lay = place.get("layout")
    if lay is not None and lay._req.get("chunks") is not None:
        n = shape[0]
        return dict(layout=st.Layout(chunks={0: (0, min(2, n), 0, n - min(2, n))}))
    return place


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("which", ["unique", "unique_consecutive"])
def test_sets(which, name, place):
    a = DATA[name]
    fn, ref = (st.unique, ref_unique) if which == "unique" else (
        st.unique_consecutive, ref_consecutive)  # fmt: skip
    check(fn, ref, a, **_place(place, a.shape))


def test_empty_zero_d_and_methods():
    check(st.unique, ref_unique, np.zeros(0))
    check(st.unique_consecutive, ref_consecutive, np.zeros(0))
    v, i, c = st.unique(st.tensor(3.0), return_inverse=True, return_counts=True)
    assert v.tolist() == [3.0] and i.shape == () and i.item() == 0 and c.tolist() == [1]
    x = st.tensor([2, 2, 1, 2], shards=3)
    assert x.unique().tolist() == [1, 2] == st.unique(x, sorted=False).tolist()
    assert x.unique_consecutive().tolist() == [2, 1, 2]


def test_run_across_many_shards():
    a = np.array([1, 1, 1, 1, 1, 1, 2, 2, 1])
    check(st.unique_consecutive, ref_consecutive, a, layout=st.Layout(chunks=(2, 1, 0, 3, 3)))
    check(st.unique, ref_unique, a, layout=st.Layout(chunks=(2, 1, 0, 3, 3)))


@pytest.mark.parametrize("fn", [st.unique, st.unique_consecutive])
def test_unique_dim_refused(fn):
    with pytest.raises(st.errors.DimError):
        fn(st.tensor([[1, 2]]), dim=3)
    # torch refuses 0-sized dims other than dim, and more than one 0-sized dim
    for shape, dim, why in [((5, 0), 0, "other than dim"), ((0, 3, 0), 1, "other than dim"),
                            ((0, 0), 0, "more than one")]:  # fmt: skip
        for place in (dict(shards=2), dict(shards=1)):
            with pytest.raises(st.errors.ArgumentError, match=re.escape(f"{shape}: ") + ".*" + why):
                fn(st.zeros(*shape, **place), dim=dim)


def check_dim(a, along, **place):
    """unique(dim=) of a split tensor against np.unique(axis=) (torch's order without NaN)."""
    x, dim = st.tensor(a, **place), along
    v, i, c = st.unique(x, dim=dim, return_inverse=True, return_counts=True)
    rv, ri, rc = np.unique(a, axis=dim, return_inverse=True, return_counts=True)
    assert v.dtype == x.dtype and i.dtype == st.int64 and c.dtype == st.int64
    assert np.array_equal(v.numpy(), rv) and tuple(v.shape) == rv.shape
    assert np.array_equal(i.numpy(), ri.reshape(-1)) and np.array_equal(c.numpy(), rc)
    assert np.array_equal(st.unique(x, dim=dim).numpy(), rv)
    v2, c2 = st.unique(x, dim=dim, return_counts=True)
    assert np.array_equal(c2.numpy(), rc)
    v3, i3 = st.unique(x, sorted=False, dim=dim, return_inverse=True)
    assert np.array_equal(i3.numpy(), ri.reshape(-1))


SPLIT = [
    dict(shards=2),
    dict(shards=3),
    dict(shards=5),
    dict(layout=st.Layout(chunks=(0, 4, 0, 5, 0))),
    dict(layout=st.Layout(chunks=(9, 0))),
]


@pytest.mark.parametrize("place", SPLIT)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim_split(place, dim):
    a = RNG.integers(0, 2, (9, 3, 2)).astype(np.int32)
    check_dim(a, dim, **place)  # along the split dim (0) and along kept ones (a reshard)
    cols = {**place, "dim": 1} if "shards" in place else dict(shards=2, dim=1)
    check_dim(np.moveaxis(a, 0, 1).copy(), dim, **cols)


@pytest.mark.parametrize("place", [dict(layout=st.Layout.block((2, 2))), dict(shards=4, dim=1)])
def test_unique_dim_block_and_columns(place):
    a = RNG.integers(0, 3, (6, 8)).astype(np.float64)
    check_dim(a, 0, **place)
    check_dim(a, 1, **place)


def test_unique_dim_many_and_bounded_pieces():
    a = RNG.integers(0, 4, (3000, 4))
    ex = st.runtime.current().executor
    ex.transfer_bytes, old = 200, ex.transfer_bytes
    try:
        check_dim(a, 0, shards=3)
        check_dim(a.T.copy(), 1, shards=2, dim=1)
        check_dim(a.astype(np.int8), 0, shards=3)  # rows of 4 bytes, counts of 8
        check_dim(np.zeros((0, 4)), 0, shards=2)
    finally:
        ex.transfer_bytes = old


def test_unique_dim_nan_and_bool():
    # expected values from torch.unique(dim=0): a row with NaN equals no row, -0.0 == 0.0
    n = np.nan
    a = np.array([[1.0, n], [0.0, 2.0], [1.0, n], [2.0, 3.0], [-0.0, 2.0]])
    for place in (dict(shards=2), dict(shards=3), dict(layout=st.Layout(chunks=(1, 0, 4)))):
        v, i, c = st.unique(st.tensor(a, **place), dim=0, return_inverse=True, return_counts=True)
        want = [[0.0, 2.0], [1.0, n], [1.0, n], [2.0, 3.0]]
        assert np.array_equal(v.numpy(), want, equal_nan=True)
        assert i.tolist() == [1, 0, 2, 3, 0] and c.tolist() == [2, 1, 1, 1]
        v, i, c = st.unique(st.tensor(a.T, **place, dim=1) if "shards" in place else
                            st.tensor(a.T, shards=2), dim=1, return_inverse=True,
                            return_counts=True)  # fmt: skip
        assert np.array_equal(v.numpy(), np.array(want).T, equal_nan=True)
        assert i.tolist() == [1, 0, 2, 3, 0] and c.tolist() == [2, 1, 1, 1]
    b = np.array([[True, False], [False, True], [True, False]])
    v, i, c = st.unique(st.tensor(b, shards=2), dim=0, return_inverse=True, return_counts=True)
    assert v.tolist() == [[False, True], [True, False]] and i.tolist() == [1, 0, 1]
    assert c.tolist() == [1, 2]


def test_unique_dim_peak_memory():
    # all rows distinct (the worst case). In-process every worker shares one tracer, so this
    # is a sum over the workers at the peak instant, and an exported piece counts twice (its
    # source's block and the copy in flight; on Ray the copy sits in the object store): the
    # export step holds sources' uniques, counts and inverse ids plus the copies. Measured
    # 2.6x an elementwise op's output (3.4x before the sources freed their uniques before the
    # merges and the merges stopped concatenating their pieces); unique_consecutive 1.5x.
    x = st.from_numpy(RNG.integers(0, 1 << 20, (60_000, 4)), shards=3)

    one = traced_peak(lambda: x * 2)
    slack = ray_ref_slack()
    assert traced_peak(lambda: st.unique(x, dim=0, return_inverse=True)) <= 2.9 * one + slack
    both = dict(return_inverse=True, return_counts=True)
    assert traced_peak(lambda: st.unique_consecutive(x, dim=0, **both)) <= 1.8 * one + slack


@pytest.mark.parametrize("place", [dict(shards=1), dict(layout=st.Layout.replicated())])
def test_unique_dim(place):
    # expected values from torch.unique / unique_consecutive with dim
    x = st.tensor([[1, 2], [1, 2], [0, 5], [0, 5], [1, 2]], **place)
    v, i, c = st.unique(x, dim=0, return_inverse=True, return_counts=True)
    assert v.tolist() == [[0, 5], [1, 2]] and i.tolist() == [1, 1, 0, 0, 1]
    assert c.tolist() == [2, 3]
    v, i, c = st.unique_consecutive(x, dim=0, return_inverse=True, return_counts=True)
    assert v.tolist() == [[1, 2], [0, 5], [1, 2]] and i.tolist() == [0, 0, 1, 1, 2]
    assert c.tolist() == [2, 2, 1]
    v, i, c = st.unique(x, dim=1, return_inverse=True, return_counts=True)
    assert v.tolist() == x.tolist() and i.tolist() == [0, 1] and c.tolist() == [1, 1]
    e = st.unique(st.zeros(0, 3, shards=1), dim=0)
    assert tuple(e.shape) == (0, 3)


def test_unique_complex_refused():
    x = st.tensor([[1 + 1j], [2], [1 + 1j]], shards=2)  # torch: not implemented for complex
    for f in (st.unique, st.unique_consecutive):
        for dim in (None, 0):
            with pytest.raises(st.errors.DTypeError, match="complex"):
                f(x, dim=dim)


def test_unique_not_differentiable():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    assert not st.unique(x).requires_grad


def test_unique_bounded_pieces():
    a = RNG.integers(0, 5000, 20_000)
    ex = st.runtime.current().executor
    ex.transfer_bytes, old = 2048, ex.transfer_bytes
    try:
        check(st.unique, ref_unique, a, shards=3)
        check(st.unique, ref_unique, (a % 200 - 100).astype(np.int8), shards=3)  # 1-byte values
    finally:
        ex.transfer_bytes = old


@settings(max_examples=examples(30), deadline=None)
@given(ad=sharded_arrays(max_dims=3, max_side=5), mod=hs.integers(1, 6))
def test_sets_property(ad, mod):
    a, place = ad
    a = (a.astype(np.int64) * 7 // 3) % mod
    check(st.unique, ref_unique, a, **place)
    check(st.unique_consecutive, ref_consecutive, a, **place)


def ref_consecutive_dim(a, dim):
    """torch.unique_consecutive(dim=) in NumPy: runs of equal neighbouring slices (NaN != NaN)."""
    m = np.moveaxis(a, dim, 0).reshape(a.shape[dim], a.size // max(1, a.shape[dim]))
    new = np.ones(m.shape[0], bool)
    new[1:] = (m[1:] != m[:-1]).any(axis=1) if m.shape[1] else False
    starts = np.flatnonzero(new)
    vals = np.take(a, starts, axis=dim)
    return vals, np.cumsum(new) - 1, np.diff(np.append(starts, m.shape[0]))


def check_consecutive_dim(a, along, **place):
    x, dim = st.tensor(a, **place), along
    v, i, c = st.unique_consecutive(x, dim=dim, return_inverse=True, return_counts=True)
    rv, ri, rc = ref_consecutive_dim(a, dim % a.ndim)
    assert v.dtype == x.dtype and i.dtype == st.int64 and c.dtype == st.int64
    assert tuple(v.shape) == rv.shape and np.array_equal(v.numpy(), rv, equal_nan=True)
    assert np.array_equal(i.numpy(), ri) and np.array_equal(c.numpy(), rc)
    assert np.array_equal(st.unique_consecutive(x, dim=dim).numpy(), rv, equal_nan=True)
    v2, c2 = st.unique_consecutive(x, dim=dim, return_counts=True)
    assert np.array_equal(v2.numpy(), rv, equal_nan=True) and np.array_equal(c2.numpy(), rc)
    v3, i3 = st.unique_consecutive(x, dim=dim, return_inverse=True)
    assert np.array_equal(i3.numpy(), ri)


# runs that cross shard borders (whole shards inside one run), uneven and empty shards
RUNS = np.repeat(np.array([[0, 1], [0, 1], [2, 2], [0, 1], [3, 3]]), [4, 1, 3, 2, 1], axis=0)
CONSEC_PLACES = [1, 2, 3, 4, 5, (0, 4, 0, 5, 2), (1, 0, 0, 9, 1), (11, 0), "replicated"]


def _on(place, dim):
    """Shards cut along ``dim``: a count, chunk sizes, or replicated."""
    if place == "replicated":
        return dict(layout=st.Layout.replicated())
    if isinstance(place, int):
        return dict(shards=place, dim=dim)
    return dict(layout=st.Layout(chunks={dim: place}))


@pytest.mark.parametrize("place", CONSEC_PLACES)
def test_unique_consecutive_dim_split(place):
    check_consecutive_dim(RUNS, 0, **_on(place, 0))
    check_consecutive_dim(RUNS.T.copy(), 1, **_on(place, 1))
    a = RNG.integers(0, 2, (11, 2, 3)).astype(np.int16)
    a[3:7] = a[3]  # a run over a border
    for dim in (0, 1, 2, -1):  # along the split dim, and along kept ones (a reshard)
        check_consecutive_dim(a, dim, **_on(place, 0))


@pytest.mark.parametrize("place", [dict(layout=st.Layout.block((2, 2))), dict(shards=3, dim=1)])
def test_unique_consecutive_dim_block_and_columns(place):
    a = np.repeat(RNG.integers(0, 2, (4, 6)), [3, 1, 2, 2], axis=0).astype(np.float32)
    check_consecutive_dim(a, 0, **place)
    check_consecutive_dim(a, 1, **place)
    check_consecutive_dim(np.zeros((8, 6)), 0, **place)  # one run over every shard


def test_unique_consecutive_dim_nan_bool_empty():
    # expected values from torch.unique_consecutive(dim=0): a row with NaN starts its own run
    n = np.nan
    a = np.array([[1.0, n], [1.0, n], [0.0, 2.0], [-0.0, 2.0], [0.0, 2.0]])
    for place in (dict(shards=1), dict(shards=2), dict(layout=st.Layout(chunks=(2, 0, 3)))):
        v, i, c = st.unique_consecutive(
            st.tensor(a, **place), dim=0, return_inverse=True, return_counts=True
        )
        assert np.array_equal(v.numpy(), [[1.0, n], [1.0, n], [0.0, 2.0]], equal_nan=True)
        assert i.tolist() == [0, 1, 2, 2, 2] and c.tolist() == [1, 1, 3]
    b = np.array([[True, False], [True, False], [False, True]])
    v, c = st.unique_consecutive(st.tensor(b, shards=3), dim=0, return_counts=True)
    assert v.tolist() == [[True, False], [False, True]] and c.tolist() == [2, 1]
    for place in (dict(shards=2), dict(shards=1)):  # torch: shape (0, 3) -> (0, 3), [], []
        v, i, c = st.unique_consecutive(
            st.zeros(0, 3, **place), dim=0, return_inverse=True, return_counts=True
        )
        assert tuple(v.shape) == (0, 3) and i.tolist() == [] and c.tolist() == []
        v = st.unique_consecutive(st.zeros(5, 0, **place), dim=1)  # torch: (5, 0)
        assert tuple(v.shape) == (5, 0)
    # 1-d with dim=0: the flattened case's answer, inverse without reshape
    x = st.tensor([2, 2, 1, 1, 1, 2], shards=4)
    v, i, c = st.unique_consecutive(x, dim=0, return_inverse=True, return_counts=True)
    assert v.tolist() == [2, 1, 2] and i.tolist() == [0, 0, 1, 1, 1, 2] and c.tolist() == [2, 3, 1]


def test_unique_consecutive_dim_bounded_pieces():
    a = np.repeat(RNG.integers(0, 3, (400, 5)), RNG.integers(1, 4, 400), axis=0)
    ex = st.runtime.current().executor
    ex.transfer_bytes, old = 16, ex.transfer_bytes
    try:
        check_consecutive_dim(a, 0, shards=3)
        check_consecutive_dim(a.T.copy(), 1, shards=2, dim=1)
    finally:
        ex.transfer_bytes = old


@settings(max_examples=examples(30), deadline=None)
@given(
    ad=sharded_arrays(min_dims=1, max_dims=3, max_side=5),
    mod=hs.integers(1, 3),
    d=hs.integers(0, 2),
)
def test_unique_dim_property(ad, mod, d):
    a, place = ad
    a = (a.astype(np.int64) * 7 // 3) % mod
    dim = d % a.ndim
    if any(n == 0 for i, n in enumerate(a.shape) if i != dim):
        return  # torch refuses (test_unique_dim_refused)
    check_consecutive_dim(a, dim, **place)
    check_dim(a, dim, **place)


def test_set_errors_follow_torch():
    for f in (st.unique, st.unique_consecutive):
        for d in (0, -1):
            with pytest.raises(IndexError, match="no dimensions"):
                f(st.tensor(1.0), dim=d)
        with pytest.raises(RuntimeError, match="0-sized dims"):
            f(st.zeros((3, 0)), dim=0)
        with pytest.raises(NotImplementedError):
            f(st.tensor([1j, 2j]))
        with pytest.raises(TypeError):  # still a DTypeError
            f(st.tensor([1j, 2j]), dim=0)
