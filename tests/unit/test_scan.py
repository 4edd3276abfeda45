"""Scans (cumsum, cumprod, logcumsumexp, cummax, cummin) against NumPy with torch's rules,
on every layout, along the split dim and the other one; gradients by finite differences."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sharded as st
from tests.helpers import (
    PLACEMENT_IDS,
    PLACEMENTS,
    assert_matches_numpy,
    examples,
    ray_ref_slack,
    sharded_arrays,
    traced_peak,
)

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))
INTS = rng.integers(0, 3, (7, 6))  # many ties


def running_arg(a, axis, better):
    """torch's cummax/cummin indices: the last index reaching the running extreme (NaN is
    the extreme from its first appearance, each later NaN taking over)."""
    a = np.moveaxis(np.asarray(a, dtype=np.float64), axis, -1)
    out = np.zeros(a.shape, dtype=np.int64)
    for line in np.ndindex(a.shape[:-1]):
        best, ix = None, 0
        for j, v in enumerate(a[line]):
            if (
                best is None
                or np.isnan(v)
                or (not np.isnan(best) and (v == best or better(v, best)))
            ):
                best, ix = v, j
            out[line + (j,)] = ix
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans_every_layout(place, dim):
    x = st.from_numpy(A, **place)
    assert_matches_numpy(x.cumsum(dim), np.cumsum(A, dim), rtol=1e-12)
    assert_matches_numpy(st.cumprod(x, dim), np.cumprod(A, dim), rtol=1e-12)
    assert_matches_numpy(st.logcumsumexp(x, dim), np.logaddexp.accumulate(A, dim), rtol=1e-12)
    xi = st.from_numpy(INTS, **place)
    r = st.cummax(xi, dim)
    assert_matches_numpy(r.values, np.maximum.accumulate(INTS, dim), dtype=st.int64)
    assert_matches_numpy(r.indices, running_arg(INTS, dim, np.greater), dtype=st.int64)
    v, i = xi.cummin(dim)
    assert_matches_numpy(v, np.minimum.accumulate(INTS, dim))
    assert_matches_numpy(i, running_arg(INTS, dim, np.less))


def test_nan_and_ties_follow_torch():
    t = st.tensor([1, 3, 3, 2, float("nan"), 5, float("nan"), 1.0], shards=3)
    assert st.cummax(t, 0).indices.tolist() == [0, 1, 2, 2, 4, 4, 6, 6]
    assert st.cummin(t, 0).indices.tolist() == [0, 0, 0, 0, 4, 4, 6, 6]
    assert np.isnan(st.cummax(t, 0).values.numpy()[4:]).all()
    b = st.cummax(st.tensor([True, False, True], shards=2), 0)
    assert b.values.tolist() == [True, True, True] and b.indices.tolist() == [0, 0, 2]
    assert type(b).__name__ == "cummax" and b.values.dtype == st.bool


def test_dtypes_as_torch():
    for dt in (st.int32, st.int8, st.uint8, st.bool):
        x = st.tensor([1, 0, 1], dtype=dt, shards=2)
        assert x.cumsum(0).dtype == st.int64 and st.cumprod(x, 0).dtype == st.int64
        assert x.cumsum(0, dtype=st.float32).dtype == st.float32
    assert st.tensor([1.0, 2.0], dtype=st.float32).cumsum(0).dtype == st.float32
    big = st.tensor([2**40, 2**40], dtype=st.int64, shards=2)
    assert big.cumsum(0).tolist() == [2**40, 2**41]
    with pytest.raises(st.DTypeError, match="int64"):
        st.logcumsumexp(st.tensor([1, 2]), 0)
    with pytest.raises(st.DimError):
        st.cumsum(st.ones(2, 3), 2)


def test_zero_dim_empty_and_inplace():
    assert st.cumsum(st.tensor(3.0), 0).item() == 3.0
    assert st.cummax(st.tensor(3.0), -1).indices.item() == 0
    e = st.zeros(0, 4)
    assert e.cumsum(0).shape == (0, 4) and st.cummax(e, 1).values.shape == (0, 4)
    x = st.tensor([1.0, 2.0, 3.0, 4.0], shards=3)
    assert x.cumsum_(0) is x and x.tolist() == [1.0, 3.0, 6.0, 10.0]
    x.cumprod_(0)
    assert x.tolist() == [1.0, 3.0, 18.0, 180.0]


def test_failed_scan_leaves_session_usable():
    x = st.tensor([1.0, 2.0], shards=2)
    with pytest.raises(st.DimError):
        x.cumsum(5)
    assert x.cumsum(0).tolist() == [1.0, 3.0]


GRAD_PLACES = [
    dict(shards=1),
    dict(shards=3),
    dict(shards=2, dim=1),
    dict(layout=st.Layout(chunks=(2, 0, 3))),
    dict(layout=st.Layout.block((2, 2))),
]


@pytest.mark.parametrize("place", GRAD_PLACES, ids=["1", "rows", "cols", "uneven", "block"])
@pytest.mark.parametrize("dim", [0, 1])
def test_gradients(place, dim):
    a = rng.standard_normal((5, 4))
    z = a.copy()
    z[1, 2] = z[3, 2] = z[2, 1] = 0.0  # cumprod's gradient must be right at zeros
    gc = st.autograd.gradcheck
    x = st.from_numpy(a, **place).requires_grad_()
    xz = st.from_numpy(z, **place).requires_grad_()
    assert gc(lambda t: t.cumsum(dim), (x,))
    assert gc(lambda t: t.cumprod(dim), (xz,))
    assert gc(lambda t: t.cumprod(dim), (x,))
    assert gc(lambda t: st.logcumsumexp(t, dim), (x,))
    assert gc(lambda t: st.cummax(t, dim).values, (x,))
    assert gc(lambda t: st.cummin(t, dim)[0], (x,))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(sharded_arrays(), hs.data())
def test_scans_random_layouts(case, data):
    a, place = case
    a = np.sin(a)  # bounded values, ties-free
    d = data.draw(hs.integers(0, a.ndim - 1))
    x = st.from_numpy(a, **place)
    assert_matches_numpy(x.cumsum(d), np.cumsum(a, d), rtol=1e-12, atol=1e-12)
    assert_matches_numpy(x.cumprod(d), np.cumprod(a, d), rtol=1e-12, atol=1e-12)
    r = st.cummax(x, d)
    assert_matches_numpy(r.values, np.maximum.accumulate(a, d) if a.size else a)
    assert_matches_numpy(r.indices, running_arg(a, d, np.greater))


def test_carry_applied_slab_by_slab(monkeypatch):
    # tiny slabs: the carry must chain through every slab, reversed scans included
    monkeypatch.setattr(st.ops.order.prims.scan, "_BLOCK", 5)
    for place in (dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout(chunks=(4, 0, 3)))):
        x = st.from_numpy(A, **place)
        for d in (0, 1):
            assert_matches_numpy(x.cumsum(d), np.cumsum(A, d), rtol=1e-12)
            assert_matches_numpy(st.logcumsumexp(x, d), np.logaddexp.accumulate(A, d), rtol=1e-12)
            r = st.core.dispatch.apply("cumscan", x, "sum", d, None, True)
            assert_matches_numpy(r, np.flip(np.cumsum(np.flip(A, d), d), d), rtol=1e-12)


def test_peak_memory_of_a_split_scan():
    # no more than an elementwise op: the output blocks plus a few slices (and, on Ray, what
    # Ray allocates for a batch that takes refs: the scan's carries)
    x = st.from_numpy(rng.standard_normal((3000, 40)), shards=3)
    slack = ray_ref_slack()
    assert traced_peak(lambda: x.cumsum(0)) <= 1.15 * traced_peak(lambda: x + 1) + slack


@pytest.mark.parametrize("chunks", [(3,) * 8 + (0, 2), (1,) * 26])
def test_long_lines_combine_prefixes_at_a_root(chunks):
    # more than a few shards along the dim: carries are combined on the line's first worker
    a = rng.standard_normal((sum(chunks), 3))
    a[5, 0] = np.nan
    x = st.from_numpy(a, layout=st.Layout(chunks=chunks))
    assert_matches_numpy(x.cumsum(0), np.cumsum(a, 0), rtol=1e-12)
    assert_matches_numpy(x.cumprod(0), np.cumprod(a, 0), rtol=1e-12)
    with np.errstate(invalid="ignore"):  # NaN in the NumPy reference
        expected = np.logaddexp.accumulate(a, 0)
    assert_matches_numpy(st.logcumsumexp(x, 0), expected, rtol=1e-12)
    r = st.cummax(x, 0)
    assert_matches_numpy(r.values, np.maximum.accumulate(a, 0))
    assert_matches_numpy(r.indices, running_arg(a, 0, np.greater))
    assert_matches_numpy(st.cummin(x, 0).indices, running_arg(a, 0, np.less))
    xg = st.from_numpy(np.sin(np.arange(26.0)).reshape(26, 1), layout=st.Layout(chunks=(2,) * 13))
    xg.requires_grad_()
    assert st.autograd.gradcheck(lambda t: st.cummax(t, 0).values, (xg,))
    assert st.autograd.gradcheck(lambda t: t.cumsum(0), (xg,))


def _cumarg_grad_ref(a, g, d, cmp):
    """The cummax/cummin gradient: ``g`` added at the running arg indices along ``d``."""
    idx = running_arg(a, d, cmp)
    out = np.zeros_like(g)
    np.put_along_axis(out, idx, 0, d)
    moved_i, moved_g = np.moveaxis(idx, d, -1), np.moveaxis(g, d, -1)
    mo = np.moveaxis(out, d, -1)
    for line in np.ndindex(moved_i.shape[:-1]):
        mo[line] = np.bincount(moved_i[line], moved_g[line], minlength=mo.shape[-1])
    return out


@pytest.mark.parametrize(
    "chunks", [(1,) * 26, (3,) * 8 + (0, 2), (5, 5, 6, 5, 5), (26,), (0, 13, 0, 13)]
)
def test_cummax_backward_across_many_shards(chunks):
    # a plateau, a long fall and late new maxima: gradient sums of many later shards aim at
    # one early index and must combine on the way back (a reverse scan, linear in shards)
    a = np.concatenate([[5.0, 5.0], np.linspace(4, -4, 14), [6.0, 1.0, 6.0], -np.ones(7)])
    a = np.stack([a, a[::-1], np.sin(np.arange(26.0))], axis=1)
    g = rng.standard_normal(a.shape)
    for cmp, f in ((np.greater, st.cummax), (np.less, st.cummin)):
        x = st.from_numpy(a, layout=st.Layout(chunks=chunks)).requires_grad_()
        f(x, 0).values.backward(st.from_numpy(g, layout=st.Layout(chunks=chunks)))
        assert np.allclose(x.grad.numpy(), _cumarg_grad_ref(a, g, 0, cmp), rtol=1e-12)


def test_scan_dtype_errors_follow_torch():
    x = st.tensor([1.0, 2.0, 3.0], shards=2)
    # torch: "Bad in-place call" (RuntimeError) when dtype= differs from the tensor's
    with pytest.raises(RuntimeError, match="Bad in-place call"):
        x.cumsum_(0, dtype=st.float64)
    assert x.tolist() == [1.0, 2.0, 3.0]  # the failed op left its operand intact
    assert x.cumprod_(0, dtype=st.float32).tolist() == [1.0, 2.0, 6.0]
    b = st.tensor([True, False, True], shards=2)
    with pytest.raises(NotImplementedError, match="cumsum_out_cpu"):
        b.cumsum_(0)
    with pytest.raises(NotImplementedError, match="cumprod_out_cpu"):
        st.cumprod(b, 0, dtype=st.bool)
    # 0-d and empty inputs return before torch needs a bool kernel
    assert st.tensor(True).cumsum_(0).item() is True
    assert st.cumsum(st.zeros(0, dtype=st.bool), 0, dtype=st.bool).dtype == st.bool
    i = st.tensor([1, 2], shards=2)
    with pytest.raises(NotImplementedError, match="logcumsumexp"):
        st.logcumsumexp(i, 0)
    with pytest.raises(IndexError):  # torch checks the dim before the dtype
        st.logcumsumexp(i, 5)
    assert isinstance(pytest.raises(st.DTypeError, st.logcumsumexp, b, 0).value, TypeError)


def test_zero_d_scans_are_the_element():
    x = st.tensor(float("-inf"), requires_grad=True)
    y = st.logcumsumexp(x, -1)
    (y * 0.5).backward()
    assert y.item() == float("-inf") and x.grad.item() == 0.5  # torch: grad passes through
    for f in (st.cumsum, st.cumprod):
        r = f(st.tensor(True), 0)
        assert r.dtype == st.int64 and r.shape == () and r.item() == 1
    assert st.cumsum(st.tensor(2, dtype=st.int32), -1, dtype=st.float64).dtype == st.float64


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_complex_logcumsumexp_and_gradient(place):
    r = np.random.default_rng(3)
    a = r.standard_normal((7, 6)) + 1j * r.standard_normal((7, 6))
    a[2, 1] = complex(-np.inf, 0)
    w = r.standard_normal((7, 6)) + 1j * r.standard_normal((7, 6))
    for d in (0, 1):
        x = st.from_numpy(a, requires_grad=True, **place)
        y = st.logcumsumexp(x, d)
        out = np.log(np.cumsum(np.exp(a), d))
        assert_matches_numpy(y, out, rtol=1e-12, dtype=st.complex128)
        (y * st.from_numpy(w)).sum().real.backward()
        # torch's gradient: conj(sum_{k >= i} w_k exp(x_i - out_k))
        rev = np.flip(np.cumsum(np.flip(w * np.exp(-out), d), d), d)
        assert_matches_numpy(x.grad, np.conj(rev * np.exp(a)), rtol=1e-10)


def test_complex_logcumsumexp_torch_values():
    x = st.tensor([1 + 1j, 2 - 1j, 0j], shards=2)
    got = st.logcumsumexp(x, 0).numpy()  # torch's values, folded left to right
    np.testing.assert_allclose(got, [1 + 1j, 1.9063 - 0.6238j, 2.0232 - 0.5465j], atol=1e-4)
    inf = float("inf")
    z = [complex(-inf, 0), complex(-inf, 1), complex(1, 2), complex(inf, 1)]
    for shards in (1, 4):  # two -inf keep the earlier one's angle (torch)
        got = st.logcumsumexp(st.tensor(z, shards=shards), 0).tolist()
        assert got[:3] == [complex(-inf, 0), complex(-inf, 0), complex(1, 2)]
        assert got[3].real == inf
