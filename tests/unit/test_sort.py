"""Sorting (sort, argsort, msort) and its gradient, against NumPy with torch's semantics
(stable ties, NaN largest / first when descending), on 1..5 shards, uneven and empty shards."""

import hypothesis.strategies as hs
import numpy as np
import pytest
from hypothesis import given, settings

import sharded as st
from sharded.autograd import gradcheck
from tests.helpers import examples, placements, sharded_arrays

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def ref_sort(a, dim=-1, descending=False):
    """torch's stable sort: ties keep order, NaN largest (first when descending)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    if descending:
        n = a.shape[dim]
        idx = n - 1 - np.flip(np.argsort(np.flip(a, dim), axis=dim, kind="stable"), dim)
    else:
        idx = np.argsort(a, axis=dim, kind="stable")
    return np.take_along_axis(a, idx, dim), idx


def same_bits(got, want):
    """Equal to the last bit (the sign of a zero, a NaN's sign and payload)."""
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and got.tobytes() == want.tobytes()


def check(a, sdim=-1, descending=False, **place):
    x = st.tensor(a, **place) if place else st.tensor(a)
    r = st.sort(x, dim=sdim, descending=descending)
    v, i = ref_sort(a, sdim, descending)
    assert np.array_equal(r.indices.numpy(), i)
    assert same_bits(r.values.numpy(), v)
    assert r.values.dtype == x.dtype and r.indices.dtype == st.int64
    assert r.values.layout == x.layout and r.indices.layout == x.layout
    vv, ii = st.sort(x, dim=sdim, descending=descending)  # both in one pass
    assert same_bits(vv.numpy(), v) and np.array_equal(ii.numpy(), i)
    return r


RNG = np.random.default_rng(7)
DATA = {
    "random": RNG.random(97),
    "ties": RNG.integers(0, 4, 60).astype(np.float64),
    "int64": RNG.integers(-(2**62), 2**62, 41),
    "int32": RNG.integers(-5, 5, 33).astype(np.int32),
    "bool": RNG.random(20) > 0.5,
    "float32": RNG.standard_normal(30).astype(np.float32),
    "uint8": RNG.integers(0, 255, 25).astype(np.uint8),
}
NAN = np.array([3.0, np.nan, 1.0, -0.0, np.inf, 0.0, np.nan, -np.inf, 1.0, 2.0, np.nan, 0.0])
DATA["nan"] = np.tile(NAN, 5)
# equal values whose bits differ: zeros of both signs, NaNs of both signs and two payloads
BITS = np.tile(NAN, 6)
BITS[1::12] = -np.nan
BITS[10::24] = np.frombuffer(np.array([0x7FF8_0000_0000_0123], np.uint64).tobytes(), np.float64)
BITS[5::36] = -0.0
DATA["bits"] = BITS
DATA["bits32"] = BITS.astype(np.float32)
PLACES = [
    {},
    dict(shards=1),
    dict(shards=2),
    dict(shards=5),
    dict(layout=st.Layout(chunks=(0, 7, 0, 1))),  # filled at the right length below
    dict(layout=st.Layout.replicated()),
]


def _place(place, n):
    if "layout" in place and place["layout"]._req.get("chunks") is not None:
        return dict(layout=st.Layout(chunks=(0, min(7, n), 0, n - min(7, n))))
    return place


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("name", sorted(DATA))
def test_sort_1d(name, place, descending):
    a = DATA[name]
    check(a, 0, descending, **_place(place, len(a)))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_all_equal_and_sorted(descending):
    check(np.zeros(40), 0, descending, shards=4)
    check(np.arange(40.0), 0, descending, shards=3)
    check(np.arange(40.0)[::-1].copy(), 0, descending, shards=3)


def test_sort_empty_and_tiny():
    check(np.zeros(0), 0, shards=1)
    check(np.array([2.0]), 0)
    check(np.array([2.0, 1.0]), 0, shards=2)
    r = st.sort(st.tensor(5.0))
    assert r.values.item() == 5.0 and r.indices.item() == 0


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize(
    "place",
    [dict(dim=0, shards=3), dict(dim=1, shards=2), dict(layout=st.Layout.block((2, 2)))],
)
def test_sort_2d(dim, place, descending):
    a = RNG.integers(0, 5, (7, 6)).astype(np.float64)
    a[2, 3] = np.nan
    check(a, dim, descending, **place)


@pytest.mark.parametrize("dim", [0, 1])
def test_sort_2d_blocks_of_many_lines(dim):
    # blocks past the packed keys' threshold: every line of a block sorts in one uint64 sort
    a = RNG.integers(0, 50, (80, 2000)).astype(np.float64)
    a[a == 7] = -0.0
    a[a == 9] = np.nan
    check(a, dim, False, dim=0, shards=2)
    check(a, dim, True, dim=1, shards=2)


def test_sort_3d_split_dim():
    a = RNG.random((3, 8, 4))
    check(a, 1, False, dim=1, shards=3)
    check(a, 1, True, dim=1, shards=3)


def test_namedtuple_methods_and_argsort():
    x = st.tensor([3.0, 1.0, 2.0, 1.0], shards=2)
    r = x.sort()
    assert type(r).__name__ == "sort" and r._fields == ("values", "indices")
    v, i = r
    assert v.tolist() == [1.0, 1.0, 2.0, 3.0] and i.tolist() == [1, 3, 2, 0]
    assert x.argsort(descending=True).tolist() == [0, 2, 1, 3]
    assert st.argsort(x, stable=True).tolist() == [1, 3, 2, 0]
    m = st.tensor([[3, 1], [1, 2]], shards=2)
    assert m.msort().tolist() == [[1, 1], [3, 2]] == st.msort(m).tolist()


def test_errors_leave_session_usable():
    x = st.tensor([1.0, 2.0])
    with pytest.raises(st.errors.DimError):
        st.sort(x, dim=1)
    with pytest.raises(st.errors.ArgumentError):
        st.sort(x, descending="yes")
    assert st.sort(x).values.tolist() == [1.0, 2.0]


def test_argument_checks_follow_torch():
    # torch: a 0-d tensor takes dim 0 or -1 only (IndexError); stable=None is the default
    # order; a non-bool descending is the parser's TypeError
    z = st.tensor(3.0)
    with pytest.raises(IndexError):
        st.sort(z, dim=1)
    with pytest.raises(IndexError):
        z.argsort(dim=-2)
    assert st.sort(z, dim=-1).values.item() == 3.0 and st.sort(z, 0).indices.item() == 0
    x = st.tensor([2.0, 1.0, 2.0], shards=2)
    assert st.sort(x, stable=None).indices.tolist() == [1, 0, 2]
    with pytest.raises(TypeError):
        st.sort(x, descending=1)
    with pytest.raises(st.ArgumentError):  # still one of ours
        st.sort(x, stable="no")


def test_sort_moves_bounded_memory():
    n = 30_000
    a = RNG.random(n)
    x = st.tensor(a, shards=3)
    ex = st.runtime.current().executor
    ex.transfer_bytes, old = 4096, ex.transfer_bytes  # many bounded pieces
    try:
        r = st.sort(x)
    finally:
        ex.transfer_bytes = old
    assert np.array_equal(r.values.numpy(), np.sort(a))


def _leaf(a, **place):
    return st.from_numpy(np.asarray(a, dtype=np.float64), requires_grad=True, **place)


@pytest.mark.parametrize(
    "place,dim",
    [
        (dict(shards=3), 0),
        (dict(layout=st.Layout(chunks=(4, 0, 2, 3))), 0),
    ],
)
def test_gradcheck_sort_1d(place, dim):
    a = RNG.permutation(9).astype(np.float64)
    assert gradcheck(
        lambda x: st.sort(x, descending=True).values * st.arange(9.0), (_leaf(a, **place),)
    )
    assert gradcheck(lambda x: st.sort(x).values ** 2, (_leaf(a, **place),))


@pytest.mark.parametrize(
    "place", [dict(dim=0, shards=2), dict(dim=1, shards=3), dict(layout=st.Layout(chunks=(1, 3)))]
)
@pytest.mark.parametrize("dim", [0, 1])
def test_gradcheck_sort_2d(place, dim):
    a = RNG.permutation(20).astype(np.float64).reshape(4, 5)
    w = st.tensor(RNG.random((4, 5)))
    assert gradcheck(lambda x: st.sort(x, dim=dim).values * w, (_leaf(a, **place),))


def test_double_backward_through_unpermute():
    a = RNG.permutation(6).astype(np.float64)
    x = _leaf(a, shards=2)
    g = _leaf(RNG.random(6), shards=3)
    idx = st.sort(x).indices
    from sharded.core.dispatch import apply

    assert gradcheck(lambda gg: apply("unpermute", gg, idx, 0) * st.arange(6.0), (g,))


@settings(max_examples=examples(40), deadline=None)
@given(data=hs.data(), ad=sharded_arrays(max_dims=3, max_side=5), descending=hs.booleans())
def test_sort_property(data, ad, descending):
    a, place = ad
    a = (a * 7 % 5).astype(np.float64)  # ties
    if a.size:
        a.reshape(-1)[:: max(1, a.size // 3)] = np.nan
    dim = data.draw(hs.integers(-a.ndim, a.ndim - 1)) if a.ndim else 0
    check(a, dim, descending, **place)


@settings(max_examples=examples(15), deadline=None)
@given(data=hs.data())
def test_sort_property_1d_layouts(data):
    n = data.draw(hs.integers(0, 40))
    a = np.asarray(data.draw(hs.lists(hs.integers(-3, 3), min_size=n, max_size=n)), np.int64)
    place = data.draw(placements((n,)))
    check(a, 0, data.draw(hs.booleans()), **place)


def check_values(a, sdim=0, descending=False, **place):
    """The values-only sort (what ``msort`` runs without a gradient) against NumPy."""
    from sharded.core.dispatch import apply

    x = st.tensor(a, **place) if place else st.tensor(a)
    v = apply("sort_values", x, sdim, descending)
    assert same_bits(v.numpy(), ref_sort(a, sdim, descending)[0])
    assert v.dtype == x.dtype and v.layout == x.layout
    r = st.sort(x, dim=sdim, descending=descending).values  # (the lazy values, 1-d split)
    assert same_bits(r.numpy(), ref_sort(a, sdim, descending)[0])


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("name", sorted(DATA))
def test_sort_values_1d(name, place, descending):
    a = DATA[name]
    check_values(a, 0, descending, **_place(place, len(a)))


@pytest.mark.parametrize("shards", [7, 12, 20])
@pytest.mark.parametrize("name", ["ties", "nan", "int64", "random"])
def test_sort_many_shards(name, shards):
    # more than 8 destinations group by a radix argsort; more than 16 splitters take the
    # searchsorted path of the bucketing
    a = np.tile(DATA[name], 3)
    for descending in (False, True):
        check(a, 0, descending, shards=shards)
        check_values(a, 0, descending, shards=shards)


def test_sort_values_2d_and_msort():
    a = RNG.integers(0, 5, (9, 4)).astype(np.float64)
    a[3, 1] = np.nan
    a[a == 4] = -0.0
    for place in (dict(dim=0, shards=3), dict(dim=1, shards=2), dict(shards=1)):
        for dim in (0, 1):
            check_values(a, dim, True, **place)
            check_values(a, dim, False, **place)
        m = st.msort(st.tensor(a, **place)).numpy()
        assert same_bits(m, ref_sort(a, 0)[0])
    v = st.msort(st.tensor(DATA["bits"], shards=3))
    assert same_bits(v.numpy(), ref_sort(DATA["bits"], 0)[0])


def test_complex_is_refused_as_by_torch():
    z = st.tensor(np.array([3 + 1j, 1 + 2j, 2j, 0j]), shards=2)
    for f in (st.sort, st.msort, st.argsort):
        with pytest.raises(st.errors.UnsupportedDType):
            f(z)


def test_msort_with_grad_uses_indexed_sort():
    x = _leaf([3.0, 1.0, 2.0, 5.0], shards=2)
    st.msort(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_sort_skewed_sample_lands_balanced():
    # every value equal but one: the splitters tie on the value and split by position
    a = np.zeros(3000)
    a[1234] = -1.0
    check(a, 0, False, shards=3)
    check(a, 0, True, layout=st.Layout(chunks=(2000, 0, 1000)))
    check_values(a, 0, True, shards=3)
