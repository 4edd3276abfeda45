"""The Array API namespace (``sharded.array_api``) against NumPy's answers for the places where
it adds semantics to sharded's ops: promotion by the standard's table, ``axis=()``, integer
sums, ``correction``, ``unique_*``, stable sorts, cumulative sums with ``include_initial``,
special values of ``floor_divide`` and ``sign``, creation keywords and the inspection object.
Inputs are split over 1, 2 and 3 shards (uneven and empty ones)."""

import math

import numpy as np
import pytest

import sharded as st
import sharded.array_api as xp
from sharded.array_api._st import ST
from sharded.ops import FAMILIES
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

SHARDS = [1, 2, 3]


def arr(a, shards=2, dtype=None):
    a = np.asarray(a, dtype=dtype)
    return st.from_numpy(a, shards=min(shards, max(a.shape[0], 1)) if a.ndim else None)


def test_namespace_of_an_array_and_info():
    x = st.ones(2)
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(st.ArgumentError, match="2099.12"):
        x.__array_namespace__(api_version="2099.12")
    info = xp.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] is True
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    d = info.default_dtypes()
    assert d["integral"] == xp.int64 and d["indexing"] == xp.int64
    assert d["real floating"] == st.get_default_dtype()
    assert set(info.dtypes(kind="signed integer")) == {"int8", "int16", "int32", "int64"}
    assert info.dtypes(kind="bool") == {"bool": xp.bool}
    assert xp.__array_api_version__ == "2024.12"


def test_dtype_functions():
    assert xp.isdtype(xp.uint8, "unsigned integer") and not xp.isdtype(xp.int8, "real floating")
    assert xp.isdtype(xp.float64, ("integral", xp.float64))
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert xp.result_type(xp.int16, xp.int64, 1) == xp.int64
    assert xp.result_type(xp.float32, 1.5) == xp.float32
    assert xp.can_cast(xp.uint8, xp.int16) and not xp.can_cast(xp.int64, xp.int8)
    assert not xp.can_cast(xp.int32, xp.float64) and not xp.can_cast(xp.bool, xp.int8)
    f = xp.finfo(xp.float32)
    assert (f.bits, f.eps, f.dtype) == (32, float(np.finfo(np.float32).eps), xp.float32)
    i = xp.iinfo(xp.int16)
    assert (i.bits, i.min, i.max, i.dtype) == (16, -32768, 32767, xp.int16)
    with pytest.raises(st.DTypeError, match="int8"):
        xp.finfo(xp.int8)
    y = xp.astype(arr([1.7, -2.5, 3.0]), xp.int32)
    assert_matches_numpy(y, np.array([1.7, -2.5, 3.0]).astype(np.int32), dtype=st.int32)


@pytest.mark.parametrize("shards", SHARDS)
def test_zero_d_operands_promote_like_arrays(shards):
    a = np.array([1, -2, 3], np.int8)
    b = np.array(300, np.int64)
    x = arr(a, shards)
    # torch would keep int8 (a 0-d tensor only raises the category): the standard says int64
    out = xp.add(x, st.tensor(300))
    assert_matches_numpy(out, a.astype(np.int64) + b, dtype=st.int64)
    assert_matches_numpy(xp.multiply(2, x), a * np.int8(2), dtype=st.int8)
    want = np.where(a > 0, a.astype(np.int64), 1000)
    assert_matches_numpy(xp.where(x > 0, x, st.tensor(1000)), want, dtype=st.int64)


def test_elementwise_functions_against_numpy():
    a = np.array([-2.5, -0.0, 0.5, 3.0, np.nan, np.inf])
    b = np.array([1.5, 2.0, -0.0, -np.inf, 1.0, 2.0])
    x, y = arr(a, 3), arr(b, 2)
    with np.errstate(all="ignore"):  # the special values are the point of the test
        check_elementwise(x, y, a, b)


def check_elementwise(x, y, a, b):
    assert_matches_numpy(xp.copysign(x, y), np.copysign(a, b))
    assert_matches_numpy(xp.hypot(x, y), np.hypot(a, b))
    assert_matches_numpy(xp.nextafter(x, y), np.nextafter(a, b), rtol=0, atol=0)
    assert_matches_numpy(xp.signbit(x), np.signbit(a))
    assert_matches_numpy(xp.reciprocal(x), np.reciprocal(a))
    assert_matches_numpy(xp.sign(x), np.sign(a))  # NaN stays NaN (torch maps it to 0)
    assert_matches_numpy(xp.logaddexp(x, y), np.logaddexp(a, b))


def test_floor_divide_with_infinities():
    a = np.array([np.inf, np.inf, -np.inf, -np.inf, 2.0, -2.0, 7.0, np.inf])
    b = np.array([2.0, -2.0, 2.0, -2.0, -np.inf, np.inf, 2.0, np.inf])
    out = xp.floor_divide(arr(a, 3), arr(b, 2)).numpy()
    want = [np.inf, -np.inf, -np.inf, np.inf, -0.0, -0.0, 3.0, np.nan]
    np.testing.assert_array_equal(out, want)
    assert np.signbit(out[4]) and np.signbit(out[5])
    ints = xp.floor_divide(arr([7, -7, 9], 2), 2)
    assert_matches_numpy(ints, np.floor_divide([7, -7, 9], 2))


def test_clip_keeps_dtype_and_shape():
    a = np.array([1, 5, 9, -3], np.int16)
    assert_matches_numpy(xp.clip(arr(a, 3), 0, 6), np.clip(a, 0, 6), dtype=st.int16)
    assert_matches_numpy(xp.clip(arr(a), max=st.tensor(4, dtype=st.int16)), np.minimum(a, 4))
    assert_matches_numpy(xp.clip(arr(a)), a)
    f = np.array([[0.5, 2.5], [-1.0, 9.0]])
    assert_matches_numpy(xp.clip(arr(f), min=arr([0.0, 1.0], 1)), np.maximum(f, [0.0, 1.0]))


@pytest.mark.parametrize("shards", SHARDS)
def test_reductions(shards):
    a = np.arange(24, dtype=np.int8).reshape(4, 6) - 10
    x = arr(a, shards)
    assert_matches_numpy(xp.sum(x), a.sum(dtype=np.int64), dtype=st.int64)
    assert_matches_numpy(xp.sum(x, axis=(0, 1), keepdims=True), a.sum((0, 1), keepdims=True))
    assert_matches_numpy(xp.sum(x, axis=()), a.astype(np.int64), dtype=st.int64)
    assert_matches_numpy(xp.prod(x, axis=0, dtype=xp.int64), a.prod(0, dtype=np.int64))
    assert_matches_numpy(xp.max(x, axis=()), a)
    assert_matches_numpy(xp.min(x, axis=-1, keepdims=True), a.min(-1, keepdims=True))
    f = a.astype(np.float64)
    y = arr(f, shards)
    assert_matches_numpy(xp.std(y, axis=1, correction=1), f.std(1, ddof=1))
    assert_matches_numpy(xp.var(y), f.var())
    assert_matches_numpy(xp.mean(y, axis=(0,)), f.mean(0))
    assert_matches_numpy(xp.all(x, axis=1), a.all(1))
    assert_matches_numpy(xp.any(x, axis=(), keepdims=True), a != 0)
    assert_matches_numpy(xp.count_nonzero(x, axis=0), np.count_nonzero(a, axis=0))
    assert_matches_numpy(xp.count_nonzero(x, keepdims=True), np.full((1, 1), 23))
    assert_matches_numpy(xp.argmax(y, keepdims=True), np.argmax(f, keepdims=True))


def test_cumulative_and_diff():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    x = arr(a)
    want = np.concatenate([np.zeros((2, 1), np.int64), np.cumsum(a, 1)], 1)
    assert_matches_numpy(xp.cumulative_sum(x, axis=1, include_initial=True), want)
    assert_matches_numpy(xp.cumulative_prod(x, axis=0), np.cumprod(a, 0), dtype=st.int64)
    with pytest.raises(st.ArgumentError, match="2 dims"):
        xp.cumulative_sum(x)
    assert_matches_numpy(xp.diff(x, axis=0), np.diff(a, axis=0))
    assert_matches_numpy(xp.diff(x, n=2), np.diff(a, n=2))


def test_sets_keep_nans_distinct_and_first_indices():
    a = np.array([[3.0, 1.0, np.nan], [1.0, 3.0, np.nan]])
    r = xp.unique_all(arr(a, 2))
    vals, idx, inv, cnt = np.unique(a, True, True, True, equal_nan=False)
    assert_matches_numpy(r.values, vals)
    assert_matches_numpy(r.indices, idx)
    assert_matches_numpy(r.inverse_indices, inv.reshape(a.shape))
    assert_matches_numpy(r.counts, cnt)
    assert_matches_numpy(xp.unique_values(arr([2, 2, 1], 3)), [1, 2])
    assert_matches_numpy(xp.unique_counts(arr([2, 2, 1], 3)).counts, [1, 2])
    assert_matches_numpy(xp.unique_inverse(arr([2, 2, 1])).inverse_indices, [1, 1, 0])


@pytest.mark.parametrize("shards", SHARDS)
def test_sorting_is_stable(shards):
    a = np.array([2, 1, 2, 1, 3, 2], np.int64)
    x = arr(a, shards)
    assert_matches_numpy(xp.argsort(x), np.argsort(a, kind="stable"))
    # descending and stable: equal elements keep their original order
    assert_matches_numpy(xp.argsort(x, descending=True), [4, 0, 2, 5, 1, 3])
    assert_matches_numpy(xp.sort(x, descending=True), np.sort(a)[::-1])
    assert_matches_numpy(xp.sort(st.tensor(5)), np.array(5))


def test_searching_and_indexing():
    a = np.array([1.0, 3.0, 3.0, 5.0])
    x = arr(a, 3)
    v = np.array([3.0, 0.0, 6.0])
    assert_matches_numpy(xp.searchsorted(x, arr(v)), np.searchsorted(a, v))
    assert_matches_numpy(xp.searchsorted(x, arr(v), side="right"), np.searchsorted(a, v, "right"))
    perm = np.array([1, 2, 0])
    s = xp.searchsorted(arr([5.0, 1.0, 3.0]), arr(v), sorter=arr(perm))
    assert_matches_numpy(s, np.searchsorted([5.0, 1.0, 3.0], v, sorter=perm))
    m = np.arange(12).reshape(3, 4)
    assert_matches_numpy(xp.take(arr(m), arr([3, 0]), axis=1), np.take(m, [3, 0], axis=1))
    assert_matches_numpy(xp.take(arr(a), arr([1])), np.take(a, [1]))
    ind = np.array([[1], [0], [3]])
    assert_matches_numpy(
        xp.take_along_axis(arr(m), arr(ind), axis=1), np.take_along_axis(m, ind, 1)
    )
    assert [t.tolist() for t in xp.nonzero(arr([[0, 1], [2, 0]]))] == [[0, 1], [1, 0]]


def test_manipulation():
    a = np.arange(6).reshape(2, 3, 1)
    x = arr(a)
    assert_matches_numpy(xp.squeeze(x, axis=2), a.squeeze(2))
    with pytest.raises(st.ShapeError, match="size 3"):
        xp.squeeze(x, axis=1)
    assert_matches_numpy(xp.expand_dims(x, axis=-1), np.expand_dims(a, -1))
    assert_matches_numpy(xp.flip(x), np.flip(a))
    assert_matches_numpy(xp.roll(x, 2), np.roll(a, 2))
    assert_matches_numpy(xp.repeat(arr([1, 2]), arr([2, 1])), np.repeat([1, 2], [2, 1]))
    assert_matches_numpy(xp.concat([x, x], axis=None), np.concatenate([a, a], axis=None))
    mixed = xp.concat([arr([1], dtype=np.int8), st.tensor([300], dtype=st.int16)])
    assert_matches_numpy(mixed, np.array([1, 300], np.int16), dtype=st.int16)
    assert [u.tolist() for u in xp.unstack(arr([[1, 2], [3, 4]]), axis=1)] == [[1, 3], [2, 4]]
    assert_matches_numpy(xp.permute_dims(x, (2, 0, 1)), np.transpose(a, (2, 0, 1)))
    assert_matches_numpy(xp.tile(arr([1, 2]), (2, 2)), np.tile([1, 2], (2, 2)))


def test_creation():
    assert_matches_numpy(xp.eye(3, 4, k=-1, dtype=xp.int32), np.eye(3, 4, k=-1, dtype=np.int32))
    assert_matches_numpy(xp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, False))
    assert_matches_numpy(xp.linspace(2.0, 3.0, 5), np.linspace(2.0, 3.0, 5))
    assert_matches_numpy(xp.arange(1, 0, 1), np.arange(1, 0, 1))
    assert_matches_numpy(xp.arange(0.0, 1.0, 0.3, dtype=xp.float64), np.arange(0.0, 1.0, 0.3))
    assert xp.arange(5).dtype == xp.int64
    assert xp.full((2,), True).dtype == xp.bool
    assert_matches_numpy(xp.full_like(arr([1, 2]), 7), [7, 7])
    x = arr([1.0, 2.0])
    assert xp.asarray(x) is x
    assert xp.asarray(x, copy=True) is not x
    with pytest.raises(st.ArgumentError, match="copy=False"):
        xp.asarray(x, dtype=xp.int64, copy=False)
    assert_matches_numpy(xp.asarray([[1, 2.5]]), np.array([[1, 2.5]], np.float32))
    assert_matches_numpy(xp.asarray([True, 2]), np.array([1, 2]), dtype=st.int64)
    assert_matches_numpy(xp.from_dlpack(np.arange(3)), np.arange(3))
    assert_matches_numpy(xp.tril(arr(np.ones((3, 3))), k=-1), np.tril(np.ones((3, 3)), -1))


def test_array_methods():
    x = arr(np.arange(6).reshape(2, 3))
    assert x.to_device("cpu") is x
    assert x.mT.shape == (3, 2)
    assert np.from_dlpack(x).tolist() == x.tolist()
    with pytest.raises(BufferError):
        x.__dlpack__(copy=False)
    assert complex(st.tensor([2.0])) == 2 + 0j
    assert_matches_numpy(x << 1, np.arange(6).reshape(2, 3) << 1)
    assert_matches_numpy(1 << x, 1 << np.arange(6).reshape(2, 3))
    assert_matches_numpy(x >> 1, np.arange(6).reshape(2, 3) >> 1)


def test_linalg_extension():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = arr(a)
    assert_matches_numpy(xp.linalg.matrix_power(x, 3), np.linalg.matrix_power(a, 3))
    assert_matches_numpy(xp.linalg.matrix_power(x, -2), np.linalg.matrix_power(a, -2))
    assert_matches_numpy(xp.linalg.matrix_power(x, 0), np.eye(2))
    assert_matches_numpy(xp.linalg.trace(arr([[1, 2], [3, 4]])), np.array(5), dtype=st.int64)
    assert_matches_numpy(xp.linalg.diagonal(x, offset=1), np.diagonal(a, 1))
    assert_matches_numpy(xp.vecdot(x, arr([1.0, 2.0])), a @ [1.0, 2.0])
    u8 = xp.vecdot(arr([1, 2], dtype=np.uint8), arr([3, 4], dtype=np.uint8))
    assert u8.dtype == xp.uint8 and int(u8) == 11
    c = xp.linalg.cross(arr([1, 0, 0]), arr([[0, 1, 0], [0, 0, 1]]))
    assert_matches_numpy(c, np.cross([1, 0, 0], [[0, 1, 0], [0, 0, 1]]))
    assert_matches_numpy(xp.linalg.vector_norm(x, axis=0, ord=1), np.abs(a).sum(0))
    s = xp.linalg.slogdet(x)
    assert float(s.sign) == 1.0 and math.isclose(float(s.logabsdet), math.log(5.0))
    assert_matches_numpy(xp.linalg.solve(x, arr([1.0, 2.0])), np.linalg.solve(a, [1.0, 2.0]))
    assert_matches_numpy(xp.tensordot(x, x, axes=([1], [0])), np.tensordot(a, a, ([1], [0])))
    assert_matches_numpy(xp.matrix_transpose(x), a.T)


def test_complex_expm1_and_sign_follow_the_standard():
    inf, nan = math.inf, math.nan
    z = xp.asarray(
        np.array([0j, complex(inf, 0), complex(-inf, inf), complex(nan, 0), 1e-9 + 1e-9j, 1 + 2j])
    )
    got = np.array(xp.expm1(z).tolist())
    assert got[0] == 0 and not np.signbit(got[0].real)
    assert got[1] == complex(inf, 0) and got[2] == complex(-1, 0)
    assert np.isnan(got[3].real) and got[3].imag == 0
    np.testing.assert_allclose(got[4:], np.expm1(np.array([1e-9 + 1e-9j, 1 + 2j])), rtol=1e-12)
    sg = xp.sign(xp.asarray([0j, 3 + 4j], dtype=xp.complex128)).tolist()  # z / |z|, as torch
    assert sg[0] == 0 and sg[1] == pytest.approx(0.6 + 0.8j, rel=1e-15)
    assert xp.real(xp.asarray([1 + 2j])).tolist() == [1.0]
    assert xp.conj(xp.asarray([1 + 2j])).tolist() == [1 - 2j]


def test_st_namespace_is_the_star_imported_families():
    # sharded.array_api reaches st's functions through ops.FAMILIES: the same modules
    # whose names sharded/__init__ star-imports, and the same functions (st's own wrapped
    # with torch's out= and tensor-only-argument rules, which the Array API does not have)
    for m in FAMILIES:
        for n in m.__all__:
            f, g = getattr(st, n), getattr(ST, n)
            assert f is g or f.__wrapped__ is g, n
    assert st.eq is not ST.eq and ST.eq(3, st.tensor([3])).tolist() == [True]


@pytest.fixture
def fulls(monkeypatch):
    """Counts the 0-d arrays the namespace makes for Python scalars (``full`` calls)."""
    calls = []
    real = ST.full

    def full(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(ST, "full", full)
    return calls


def test_python_scalars_ride_in_the_command_where_torch_agrees(fulls):
    x, i, b = arr([1.5, -2.0]), arr(np.array([3, 5], np.int8)), arr([True, False])
    assert xp.add(x, 1.5).tolist() == [3.0, -0.5]
    assert xp.subtract(2, i).tolist() == [-1, -3] and xp.subtract(2, i).dtype == xp.int8
    assert xp.less(x, 0.5).tolist() == [False, True]
    assert xp.where(b, x, 0.0).tolist() == [1.5, 0.0]
    assert xp.clip(i, 4, 4.5).tolist() == [4, 4]
    assert xp.floor_divide(x, 2.0).tolist() == [0.0, -1.0]
    assert fulls == []
    # as a 0-d array: torch takes no number (maximum, atan2...), the kinds differ, or the
    # value does not fit the dtype (full then refuses or gives inf, as before)
    assert xp.maximum(x, 0.0).tolist() == [1.5, 0.0]
    assert xp.logical_and(b, True).tolist() == [True, False]  # torch: logical_and(x, True) refused
    assert xp.multiply(i, 1.5).dtype == xp.float32
    assert xp.subtract(x, True).tolist() == [0.5, -3.0]  # torch refuses x - True
    assert xp.add(arr(np.array([1.0], np.float32)), 1e300).tolist() == [math.inf]
    with pytest.raises(st.ShardedError, match="300"):
        xp.add(i, 300)
    assert len(fulls) == 6


def test_clip_has_the_broadcast_shape_of_x_and_its_bounds():
    # the standard (and np.clip): array bounds broadcast with x
    x = xp.asarray(0, dtype=xp.uint8)
    out = xp.clip(x, max=xp.asarray(np.zeros(0, np.uint8)))
    assert out.shape == (0,) and out.dtype == xp.uint8
    lo = np.array([[0.0], [2.0], [5.0]])
    out = xp.clip(arr([1.0, 3.0]), min=arr(lo), max=4.0)
    assert_matches_numpy(out, np.clip(np.array([1.0, 3.0], np.float32), lo, 4.0))


@pytest.mark.parametrize("shards", SHARDS)
def test_take_counts_negative_indices_from_the_end(shards):
    # the standard's take / take_along_axis (torch's index_select and gather refuse them)
    a = np.arange(12).reshape(4, 3)
    x = arr(a, shards)
    assert_matches_numpy(xp.take(x, xp.asarray([0, -1, -3]), axis=1), np.take(a, [0, -1, -3], 1))
    assert_matches_numpy(xp.take(x, xp.asarray([-4, 2]), axis=0), np.take(a, [-4, 2], 0))
    i = np.array([[-1, 0, 2], [1, -2, -4]])
    assert_matches_numpy(xp.take_along_axis(x, arr(i), axis=0), np.take_along_axis(a, i, 0))
    with pytest.raises(st.IndexOutOfRange, match="-5"):  # out of range: named as given
        xp.take(x, xp.asarray([-5]), axis=0).tolist()


def test_cumulative_sum_and_prod_keep_the_asked_dtype():
    x = arr(np.array([1, 2, 200], np.uint8))
    for n, init in ((3, False), (4, True)):
        out = xp.cumulative_sum(x, dtype=xp.uint8, include_initial=init)
        assert out.dtype == xp.uint8 and out.shape == (n,)
        assert xp.cumulative_prod(x, dtype=xp.int16, include_initial=init).dtype == xp.int16
    assert xp.cumulative_sum(x).dtype == xp.int64  # the default accumulator
    empty = xp.cumulative_sum(arr(np.zeros(0, np.uint8)), dtype=xp.uint8, include_initial=True)
    assert empty.dtype == xp.uint8 and empty.tolist() == [0]


def test_eye_with_a_diagonal_past_the_edge_or_beyond_int64():
    assert xp.eye(0, k=-(2**63) - 1).shape == (0, 0)
    assert xp.eye(2, 3, k=2**70).tolist() == np.eye(2, 3).__mul__(0).tolist()
    for k in (-3, -2, 2, 3):
        assert_matches_numpy(xp.eye(3, 2, k=k), np.eye(3, 2, k=k, dtype=np.float32))
