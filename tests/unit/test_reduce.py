import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))
INTS = rng.integers(-5, 5, (7, 6))

DIMS = [None, 0, 1, -1, (0, 1), (1, 0)]


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_every_layout(place, dim, keepdim):
    x = st.from_numpy(A, **place)
    ax = dim if not isinstance(dim, tuple) else tuple(dim)
    kw = dict(keepdims=keepdim)
    assert_matches_numpy(x.sum(dim, keepdim=keepdim), A.sum(ax, **kw), rtol=1e-12)
    assert_matches_numpy(st.mean(x, dim, keepdim), A.mean(ax, **kw), rtol=1e-12)
    assert_matches_numpy(x.prod(dim, keepdim=keepdim), A.prod(ax, **kw), rtol=1e-12)
    assert_matches_numpy(x.amax(dim if dim is not None else (), keepdim), A.max(ax, **kw))
    assert_matches_numpy(x.amin(dim if dim is not None else (), keepdim), A.min(ax, **kw))
    assert_matches_numpy(x.var(dim, keepdim=keepdim), A.var(ax, ddof=1, **kw), rtol=1e-10)
    assert_matches_numpy(x.std(dim, keepdim=keepdim, correction=0), A.std(ax, **kw), rtol=1e-10)
    assert_matches_numpy((x > 0).all(dim, keepdim), (A > 0).all(ax, **kw))
    assert_matches_numpy((x > 0).any(dim, keepdim), (A > 0).any(ax, **kw))


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_arg_reductions_every_layout(place):
    x = st.from_numpy(INTS, **place)  # many ties: the first index must win, as numpy/torch
    assert x.argmax().item() == INTS.argmax() and x.argmin().item() == INTS.argmin()
    for d in (0, 1):
        assert_matches_numpy(x.argmax(d), INTS.argmax(d), dtype=st.int64)
        assert_matches_numpy(x.argmin(d, keepdim=True), np.expand_dims(INTS.argmin(d), d))
        v, i = x.max(d)
        assert_matches_numpy(v, INTS.max(d)) and assert_matches_numpy(i, INTS.argmax(d))
        res = st.min(x, dim=d, keepdim=True)
        assert_matches_numpy(res.values, INTS.min(d, keepdims=True))
        assert_matches_numpy(res.indices, np.expand_dims(INTS.argmin(d), d))
    assert x.max().item() == INTS.max() and x.min().item() == INTS.min()
    assert x.argmax(keepdim=True).shape == (1, 1)


def test_integer_and_bool_reduction_dtypes():
    i = st.tensor(INTS.astype(np.int32), shards=3)
    assert i.sum().dtype == st.int64 and i.sum().item() == INTS.sum()
    assert i.prod(0).dtype == st.int64
    assert (i > 0).sum().dtype == st.int64 and (i > 0).sum().item() == (INTS > 0).sum()
    assert i.amax().dtype == st.int32
    assert i.sum(dtype=st.float64).dtype == st.float64
    with pytest.raises(st.DTypeError, match="int32"):
        i.mean()
    assert i.mean(dtype=st.float64).item() == pytest.approx(INTS.mean())


def test_nan_propagates_and_wins_argmax():
    x = st.tensor([1.0, float("nan"), 3.0, float("nan")], shards=3)
    assert np.isnan(x.max().item()) and np.isnan(x.sum().item())
    assert x.argmax().item() == 1


def test_full_reduction_is_0d():
    s = st.ones(5, 4, shards=2).sum()
    assert s.shape == () and s.ndim == 0 and s.item() == 20.0
    assert st.ones(3).mean(dim=0, keepdim=True).shape == (1,)


def test_empty_reductions():
    e = st.zeros(0, 3, shards=2)
    assert_matches_numpy(e.sum(0), np.zeros(3))
    assert_matches_numpy(e.sum(1), np.zeros(0))
    assert_matches_numpy(e.prod(), np.float32(1.0))
    assert np.isnan(e.mean().item())
    with pytest.raises(st.ArgumentError, match="size 0"):
        e.max()
    with pytest.raises(st.ArgumentError, match="size 0"):
        e.argmax(0)
    assert_matches_numpy(e.amax(1), np.zeros(0))


def test_dim_and_axis_spellings():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(x.sum(axis=0), A.sum(0))
    assert_matches_numpy(st.sum(x, dim=[0, 1]), A.sum())
    with pytest.raises(st.DimError, match="dim 2"):
        x.sum(2)
    with pytest.raises(st.ArgumentError, match="multiple"):
        x.sum((0, 0))
    with pytest.raises(st.ArgumentError):
        x.sum(dim=0, axis=0)


# ---------------------------------------------------- issue 12: torch parity (torch 2.13's answers)
def test_prod_gradient_at_zeros_matches_torch():
    def grad(data, **kw):
        x = st.tensor(data, requires_grad=True)
        x.prod(**kw).sum().backward()
        return x.grad.tolist()

    assert grad([1.0, 0.0, 3.0]) == [0.0, 3.0, 0.0]
    assert grad([1.0, 0.0, 0.0]) == [0.0, 0.0, 0.0]
    assert grad([[1.0, 0.0, 3.0], [2.0, 3.0, 0.0]], dim=1) == [[0.0, 3.0, 0.0], [0.0, 0.0, 6.0]]
    assert grad([2.0, 3.0]) == [3.0, 2.0]


@pytest.mark.parametrize("name", ["max", "min"])
def test_inplace_write_to_max_min_values_still_backprops(name):
    x = st.tensor([[1.0, 2.0], [3.0, 0.0]], requires_grad=True, shards=2)
    y = getattr(x, name)(1).values
    y[0] = 1
    y.sum().backward()  # torch saves the indices, not the values
    assert x.grad.tolist() == ([[0.0, 0.0], [1.0, 0.0]] if name == "max" else [[0, 0], [0, 1.0]])


@pytest.mark.parametrize("dim", [0, -1])
def test_reductions_of_a_0d_tensor_along_dim_0_or_minus_1(dim):
    x = st.tensor(3.0)
    for name in ("sum", "mean", "amax", "amin", "prod"):
        r = getattr(x, name)(dim)
        assert r.shape == () and r.item() == 3.0, name
    assert x.sum(dim, keepdim=True).shape == () and x.sum((dim,)).item() == 3.0
    assert x.all(dim).item() is True and x.any(dim).dtype == st.bool
    for name in ("argmax", "argmin"):
        r = getattr(x, name)(dim)
        assert r.shape == () and r.item() == 0 and r.dtype == st.int64
        assert getattr(x, name)(dim, keepdim=True).shape == ()
    v, i = x.max(dim)
    assert v.item() == 3.0 and i.item() == 0 and v.shape == () and i.shape == ()
    assert x.min(dim, keepdim=True).values.shape == ()
    with pytest.raises(st.DimError, match="range of \\[-1, 0\\]"):
        x.sum(1)
    with pytest.raises(st.ArgumentError, match="multiple times"):
        x.sum((0, -1))


def test_all_any_of_uint8_are_uint8_like_torch():
    u = st.tensor([[1, 2], [0, 3]], dtype=st.uint8, shards=2)
    r = st.all(u, dim=1)
    assert r.dtype == st.uint8 and r.tolist() == [1, 0]
    assert st.all(u).dtype == st.uint8 and st.all(u).item() == 0
    assert u.any(1).dtype == st.uint8 and u.any(1).tolist() == [1, 1]
    assert st.all(st.tensor([[1, 2], [0, 3]], dtype=st.int8), dim=1).dtype == st.bool


# ---------------------------------------------- differential audit against torch 2.13 (literals)
NAN, INF = float("nan"), float("inf")


def test_nansum_nanmean_like_torch():
    x = st.tensor([[1.0, NAN, 3.0], [NAN, NAN, NAN]], shards=2)
    assert st.nansum(x).item() == 4.0 and x.nansum(1).tolist() == [4.0, 0.0]
    assert st.nanmean(x, 1).tolist()[0] == 2.0 and np.isnan(x.nanmean(1).tolist()[1])
    assert st.nanmean(x, 1, keepdim=True, dtype=st.float64).dtype == st.float64
    i = st.tensor([1, 2], dtype=st.int32)
    assert st.nansum(i).dtype == st.int64 and st.nansum(i, dtype=st.float32).item() == 3.0
    with pytest.raises(RuntimeError, match="nanmean"):
        st.nanmean(i)
    with pytest.raises(RuntimeError, match="complex"):
        st.nansum(st.tensor([1j]))
    with pytest.raises(IndexError):  # the bad dim is reported before the complex dtype
        st.nansum(st.tensor([1j]), dim=2)
    g = st.tensor([1.0, NAN, 3.0], requires_grad=True, shards=2)
    st.nanmean(g).backward()
    assert g.grad.tolist() == [0.5, 0.0, 0.5]


def test_var_mean_std_mean_like_torch():
    x = st.tensor([[1.0, 2.0], [3.0, 5.0]], shards=2)
    v, m = st.var_mean(x, 1)
    assert v.tolist() == [0.5, 2.0] and m.tolist() == [1.5, 4.0]
    s, m = st.std_mean(x, 0, False, True)  # (dim, unbiased, keepdim)
    assert s.tolist() == [[1.0, 1.5]] and m.tolist() == [[2.0, 3.5]]
    s, m = st.std_mean(x, dim=(0, 1), correction=0)
    assert s.item() == pytest.approx(np.std([1, 2, 3, 5])) and m.item() == 2.75
    with pytest.raises(RuntimeError, match="floating"):
        st.var_mean(st.tensor([1, 2]))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert np.isnan(st.var(st.tensor([1.0])).item())


def test_var_std_bool_second_argument_is_unbiased():
    x = st.tensor([1.0, 2.0, 4.0], shards=2)  # torch's var(input, unbiased) overload
    assert st.std(x, False).item() == pytest.approx(np.std([1, 2, 4]))
    assert x.var(True).item() == pytest.approx(np.var([1, 2, 4], ddof=1))


@pytest.mark.parametrize("shards", [1, 2])
def test_var_mean_std_mean_bool_second_argument_is_unbiased(shards):
    # torch: var_mean(x, True) -> (8., 4.), var_mean(x, False) -> (6.6667, 4.),
    # std_mean(x, True) -> (2.8284, 4.) over all of x, float64
    x = st.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], dtype=st.float64, shards=shards)
    v, m = st.var_mean(x, True)
    assert v.item() == 8.0 and m.item() == 4.0 and v.shape == ()
    v, m = st.var_mean(x, False)
    assert v.item() == pytest.approx(20 / 3) and m.item() == 4.0
    s, m = st.std_mean(x, True)
    assert s.item() == pytest.approx(8**0.5) and m.item() == 4.0
    s, m = st.std_mean(x, False)
    assert s.item() == pytest.approx((20 / 3) ** 0.5) and m.item() == 4.0


def test_aminmax_like_torch():
    x = st.tensor([[1, 5], [3, 2], [0, 7]], shards=3)
    r = st.aminmax(x)
    assert (r.min.item(), r.max.item()) == (0, 7) and r.min.dtype == st.int64
    lo, hi = x.aminmax(dim=0, keepdim=True)
    assert lo.tolist() == [[0, 2]] and hi.tolist() == [[3, 7]]
    assert st.aminmax(x, keepdim=True).max.shape == (1, 1)
    assert [t.item() for t in st.aminmax(st.tensor(2.0), dim=0)] == [2.0, 2.0]
    with pytest.raises(TypeError, match="tuple"):
        st.aminmax(x, dim=(0,))
    with pytest.raises(RuntimeError, match="empty"):
        st.aminmax(st.zeros(0, 3))
    with pytest.raises(IndexError, match="size 0"):
        st.aminmax(st.zeros(0, 3), dim=0)


def test_module_level_norm():
    assert st.norm(st.tensor([[3.0, 4.0], [0.0, 0.0]], shards=2), dim=1).tolist() == [5.0, 0.0]
    assert st.norm(st.tensor([3.0, -4.0]), p=1).item() == 7.0


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_over_empty_dim_list_reduce_nothing(name):
    a = np.array([[1, 0], [2, 3]])
    x = st.tensor(a, shards=2)  # torch: dim=() keeps every dim (sum/amax reduce them all)
    r = getattr(x, name)(())
    assert r.dtype == st.bool and r.tolist() == (a != 0).tolist()
    assert getattr(st, name)(st.zeros(0, 3), dim=(), keepdim=True).shape == (0, 3)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_refuse_bool_and_tuple_dims(name):
    with pytest.raises(RuntimeError, match="bool"):
        getattr(st.tensor([True, False]), name)()
    with pytest.raises(TypeError, match="must be int, not tuple"):
        getattr(st.ones(2, 3), name)(dim=(0,))
    v, i = st.tensor([True, False, True]).max(0)  # max along a dim takes bool, as torch
    assert v.item() is True and i.item() == 0


@pytest.mark.parametrize("call", [lambda e: e.max(1), lambda e: e.amin(1), lambda e: e.argmax()])
def test_empty_max_min_arg_raise_index_error(call):
    with pytest.raises(IndexError, match="size 0"):  # torch: "Expected reduction dim ..."
        call(st.zeros(3, 0, shards=2))


def test_max_without_dim_sends_a_nan_result_gradient_to_the_nans():
    # torch's max() splits the gradient over the NaNs; amax() gives NaN everywhere
    x = st.tensor([1.0, NAN, 3.0, NAN], requires_grad=True, shards=3)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.0, 0.5]
    y = st.tensor([1.0, 3.0, 3.0], requires_grad=True, shards=2)
    y.min().backward()
    assert y.grad.tolist() == [1.0, 0.0, 0.0]
    z = st.tensor([1.0, NAN], requires_grad=True)
    z.amax().backward()
    assert np.isnan(z.grad.numpy()).all()


def test_prod_gradient_with_nan_and_inf_matches_torch():
    def grad(data, **kw):
        x = st.tensor(data, requires_grad=True, shards=2)
        x.prod(**kw).sum().backward()
        return x.grad.numpy()

    # no zero anywhere: grad = prod / x (inf / inf is NaN)
    np.testing.assert_array_equal(grad([2.0, INF, 3.0]), [INF, NAN, INF])
    # a zero somewhere: the exact product of the others (0 * inf is NaN)
    np.testing.assert_array_equal(
        grad([[-1.0, 2.0, INF, 2.0, 0.0], [1.0, 2.0, 3.0, 4.0, 5.0]], dim=1),
        [[NAN, NAN, 0.0, NAN, -INF], [120.0, 60.0, 40.0, 30.0, 24.0]],
    )
    np.testing.assert_array_equal(grad([2.0, NAN, 0.0]), [NAN, 0.0, NAN])
