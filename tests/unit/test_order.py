"""topk, kthvalue, median, nanmedian, quantile, nanquantile and mode against NumPy (torch's
semantics: NaN largest, lower median, NaN propagation), on every placement, with the
distributed selection forced through several radix rounds and the tie path."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import sharded as st
import sharded.ops.order.kernels.select as OK
import sharded.ops.order.prims.select as O
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy, examples, placements

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))
AN = A.copy()
AN[2, 3] = AN[5, 0] = np.nan
INTS = rng.integers(-3, 3, (7, 6))
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.fixture(params=[4096, 2], ids=["cand", "rounds"])
def candidates(request, monkeypatch):
    """Run with the default candidate limit and with 2 (forces radix rounds and ties)."""
    monkeypatch.setattr(O, "CANDIDATES", request.param)
    return request.param


def _np_sorted(a, d):
    return np.sort(a, axis=d)  # NumPy sorts NaN last, as torch orders them


def _check_indices(x, vals, idx, d, keepdim=False):
    """``x[idx] == vals`` along ``d`` (tie indices may differ from torch's)."""
    i = idx.numpy() if keepdim else np.expand_dims(idx.numpy(), d)
    got = np.take_along_axis(x, i, d)
    v = vals.numpy() if keepdim else np.expand_dims(vals.numpy(), d)
    np.testing.assert_array_equal(got, v)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_every_layout(place, largest):
    for a in (AN, INTS):
        x = st.from_numpy(a, **place)
        for d in (0, 1):
            k = 3
            v, i = st.topk(x, k, dim=d, largest=largest)
            s = _np_sorted(a, d)
            exp = np.flip(s, d).take(range(k), d) if largest else s.take(range(k), d)
            assert_matches_numpy(v, exp)
            assert i.dtype == st.int64
            _check_indices(a, v, i, d, keepdim=True)
    assert st.topk(st.from_numpy(A, **place), 7, dim=0).values.shape == (7, 6)


def test_topk_nan_first_and_method():
    x = st.tensor([3.0, float("nan"), 1.0, 2.0, float("nan"), 0.0], shards=3)
    r = x.topk(3)
    assert np.isnan(r.values.numpy()[:2]).all() and r.values.tolist()[2] == 3.0
    assert sorted(r.indices.tolist()[:2]) == [1, 4] and r.indices.tolist()[2] == 0
    assert x.topk(3, largest=False).indices.tolist() == [5, 2, 3]
    with pytest.raises(st.ArgumentError, match="k=7"):
        x.topk(7)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_kthvalue_median_every_layout(place, candidates):
    for a in (A, AN, INTS):
        x = st.from_numpy(a, **place)
        for d in (0, 1):
            n = a.shape[d]
            s = _np_sorted(a, d)
            for k in (1, (n + 1) // 2, n):
                r = st.kthvalue(x, k, d)
                assert_matches_numpy(r.values, s.take(k - 1, d))
                _check_indices(a, r.values, r.indices, d)
            r = x.median(d, keepdim=True)
            exp = s.take([(n - 1) // 2], d)
            if a.dtype.kind == "f":
                exp = np.where(np.isnan(a).any(d, keepdims=True), np.nan, exp)
            assert_matches_numpy(r.values, exp)
            _check_indices(a, r.values, r.indices, d, keepdim=True)
            r = st.nanmedian(x, d)
            if a.dtype.kind == "f":
                cnt = (~np.isnan(a)).sum(d)
                exp = np.take_along_axis(s, np.expand_dims((cnt - 1) // 2, d), d).squeeze(d)
                assert_matches_numpy(r.values, exp)
                _check_indices(a, r.values, r.indices, d)


def test_median_whole_tensor(candidates):
    b = rng.standard_normal(1001)
    for sh in (1, 2, 5):
        x = st.from_numpy(b, shards=sh)
        assert x.median().item() == np.sort(b)[500]
        assert st.median(x).shape == ()
        b2 = b.copy()
        b2[17] = np.nan
        x = st.from_numpy(b2, shards=sh)
        assert np.isnan(st.median(x).item())
        assert st.nanmedian(x).item() == np.sort(b2)[499]
        r = st.median(x, 0)
        assert np.isnan(r.values.item()) and r.indices.item() == 17  # torch: the first NaN
    z = st.zeros(50, shards=3)  # all ties: the rank sits in one piece
    r = st.median(z, 0)
    assert r.values.item() == 0.0 and 0 <= r.indices.item() < 50
    assert np.isnan(st.nanmedian(st.full((4,), float("nan"), shards=2)).item())
    assert st.median(st.tensor([2, 1, 2, 2, 1], shards=2)).item() == 2  # lower median, ints


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("interp", MODES)
def test_quantile_every_layout(place, interp, candidates):
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.7, 1.0])
    qt = st.tensor(q, dtype=st.float64)
    x = st.from_numpy(A, **place)
    for d in (None, 0, 1):
        got = st.quantile(x, qt, dim=d, interpolation=interp)
        assert_matches_numpy(got, np.quantile(A, q, axis=d, method=interp), rtol=1e-12)
        got = x.quantile(0.3, dim=d, keepdim=True, interpolation=interp)
        exp = np.quantile(A, 0.3, axis=d, method=interp, keepdims=True)
        assert_matches_numpy(got, exp, rtol=1e-12)
    xn = st.from_numpy(AN, **place)
    for d in (None, 0, 1):
        assert_matches_numpy(
            st.quantile(xn, qt, d, interpolation=interp),
            np.quantile(AN, q, axis=d, method=interp),
            rtol=1e-12,
        )
        assert_matches_numpy(
            xn.nanquantile(qt, d, interpolation=interp),
            np.nanquantile(AN, q, axis=d, method=interp),
            rtol=1e-12,
        )


@pytest.mark.parametrize("shards", [1, 2])
def test_quantile_gradient_with_respect_to_q_like_torch(shards):
    # linear: the slope (x[ceil r] - x[floor r]) (n - 1) at r = q (n - 1), 0 at a whole rank
    # and for a row holding NaN; torch records no gradient for q in the other modes
    f64 = st.float64
    v = st.tensor([3.0, 1.0, 4.0, 1.5, 9.0], dtype=f64, shards=shards)
    q = st.tensor([0.1, 0.5, 0.9], dtype=f64, requires_grad=True)
    r = st.quantile(v, q)
    assert r.tolist() == pytest.approx([1.2, 3.0, 7.0])
    (r * st.tensor([1.0, 2.0, 3.0], dtype=f64)).sum().backward()
    assert q.grad.tolist() == pytest.approx([2.0, 0.0, 60.0])
    assert not st.quantile(v, q, interpolation="lower").requires_grad
    x = st.tensor([[1.0, np.nan, 3.0, 2.0], [4.0, 0.0, 1.0, 7.0]], dtype=f64, shards=shards)
    q0 = st.tensor(0.3, dtype=f64, requires_grad=True)
    st.nanquantile(x, q0, dim=1).sum().backward()
    assert q0.grad.item() == pytest.approx(5.0)
    q0.grad = None
    st.quantile(x, q0, dim=1, keepdim=True).nansum().backward()
    assert q0.grad.item() == pytest.approx(3.0)
    q2 = st.tensor([0.3, 0.5], dtype=f64, requires_grad=True)
    st.nanquantile(x, q2, dim=0).sum().backward()
    assert q2.grad.tolist() == pytest.approx([10.0, 10.0])


def test_quantile_errors_and_dtypes():
    x = st.tensor([1.0, 2.0, 3.0], shards=2)
    with pytest.raises(st.DTypeError, match="int64"):
        st.quantile(st.tensor([1, 2]), 0.5)
    with pytest.raises(st.ArgumentError, match="1.5"):
        st.quantile(x, 1.5)
    with pytest.raises(st.ArgumentError, match="cubic"):
        st.quantile(x, 0.5, interpolation="cubic")
    f = st.tensor(A.astype(np.float32), shards=3)
    got = st.quantile(f, 0.4, dim=0)
    assert got.dtype == st.float32
    assert_matches_numpy(got, np.quantile(A.astype(np.float32), 0.4, axis=0), rtol=1e-6)
    assert x.quantile(0.5).item() == 2.0  # x is unchanged and usable after the errors


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_mode_every_layout(place):
    x = st.from_numpy(INTS, **place)
    for d in (0, 1):
        r = st.mode(x, d)
        for row, (v, i) in enumerate(zip(r.values.numpy().ravel(), r.indices.numpy().ravel())):
            line = np.take(INTS, row, 1 - d)
            vals, cnt = np.unique(line, return_counts=True)
            assert v == vals[cnt.argmax()]  # the smallest most frequent value
            assert i == np.nonzero(line == v)[0][-1]  # its last occurrence
    assert st.mode(st.tensor([1.0, 2, 2, 3, 3, 1], shards=2)).indices.item() == 5


def test_kthvalue_errors():
    x = st.tensor([1.0, 2.0], shards=2)
    with pytest.raises(st.ArgumentError, match="k=3"):
        x.kthvalue(3)
    with pytest.raises(st.DimError):
        st.kthvalue(st.tensor(1.0), 1, dim=2)


@pytest.mark.parametrize(
    "place",
    [
        dict(shards=1),
        dict(shards=3),
        dict(shards=3, dim=1),
        dict(layout=st.Layout(chunks=(4, 0, 3))),
    ],
    ids=["1", "rows", "cols", "uneven"],
)
def test_gradients(place):
    a = st.from_numpy(A.copy(), **place).requires_grad_()
    check = st.autograd.gradcheck
    assert check(lambda t: st.topk(t, 2, dim=0).values, (a,))
    assert check(lambda t: st.topk(t, 2, dim=1, largest=False).values, (a,))
    assert check(lambda t: st.kthvalue(t, 3, 0).values, (a,))
    assert check(lambda t: t.median(1).values, (a,))
    assert check(lambda t: t.median(), (a,))
    assert check(lambda t: st.nanmedian(t, 0, keepdim=True).values, (a,))
    for interp in MODES:
        assert check(lambda t, m=interp: st.quantile(t, 0.3, dim=0, interpolation=m), (a,))
    qt = st.tensor([0.2, 0.9], dtype=st.float64)
    assert check(lambda t: st.quantile(t, qt, dim=1, keepdim=True), (a,))
    assert check(lambda t: st.quantile(t, qt), (a,))
    m = st.from_numpy(np.round(A), **place).requires_grad_()
    st.mode(m, 0).values.sum().backward()
    assert m.grad.numpy().sum() == 6.0


@settings(max_examples=examples(40), deadline=None)
@given(data=hs.data())
def test_property_random_layouts(data):
    shape = tuple(data.draw(hs.lists(hs.integers(1, 6), min_size=1, max_size=3)))
    a = np.round(rng.standard_normal(shape), 1)  # coarse values: many ties
    place = data.draw(placements(shape))
    d = data.draw(hs.integers(0, len(shape) - 1))
    k = data.draw(hs.integers(1, shape[d]))
    x = st.from_numpy(a, **place)
    s = np.sort(a, axis=d)
    assert_matches_numpy(st.topk(x, k, d, largest=False).values, s.take(range(k), d))
    assert_matches_numpy(st.kthvalue(x, k, d).values, s.take(k - 1, d))
    assert_matches_numpy(x.median(d).values, s.take((shape[d] - 1) // 2, d))
    q = data.draw(hs.floats(0, 1))
    assert_matches_numpy(st.quantile(x, q, d), np.quantile(a, q, axis=d), rtol=1e-12)


def _mode_ref(a, d, keepdim=False):
    """The mode of ``a`` held by one worker (the local kernel, checked against torch above)."""
    r = st.mode(st.from_numpy(a, shards=1), d, keepdim)
    return r.values.numpy(), r.indices.numpy()


@pytest.mark.parametrize(
    "place",
    [
        dict(shards=2),
        dict(shards=5),
        dict(shards=3, dim=1),
        dict(layout=st.Layout(chunks=(0, 4, 0, 5))),
        dict(layout=st.Layout.block((3, 2))),
        dict(layout=st.Layout(chunks=(1,) * 9)),
    ],
)
@pytest.mark.parametrize("kind", ["ints", "floats_nan", "bool", "all_distinct", "all_nan"])
def test_mode_along_a_split_dim_by_value_counts(place, kind):
    rng = np.random.default_rng(3)
    a = {
        "ints": rng.integers(-3, 4, (9, 6)),
        "floats_nan": np.where(rng.random((9, 6)) < 0.3, np.nan, rng.integers(0, 3, (9, 6)) * 0.5),
        "bool": rng.random((9, 6)) < 0.4,
        "all_distinct": rng.permutation(54).reshape(9, 6).astype(np.float32),
        "all_nan": np.full((9, 6), np.nan),
    }[kind]
    x = st.from_numpy(a, **place)
    for d in (0, 1):
        for keepdim in (False, True):
            r = st.mode(x, d, keepdim)
            v, i = _mode_ref(a, d, keepdim)
            assert np.array_equal(r.values.numpy(), v, equal_nan=True)
            assert np.array_equal(r.indices.numpy(), i)
            assert r.values.dtype == x.dtype and r.values.shape == v.shape


def test_mode_split_matches_torch_and_keeps_its_gradient():
    # torch: mode([2, 2, 1, 1, 5, 5, 1, 2]) = (1, 6); ties -> the smallest value, last index
    x = st.tensor([2, 2, 1, 1, 5, 5, 1, 2], shards=3)
    assert (st.mode(x).values.item(), st.mode(x).indices.item()) == (1, 6)
    y = st.tensor([2.0, 2, 1, 1, 5, 5, 1, 2], layout=st.Layout(chunks=(3, 0, 5))).requires_grad_()
    st.mode(y, 0).values.backward()
    assert y.grad.tolist() == [0, 0, 0, 0, 0, 0, 1, 0]


def test_error_classes_follow_torch():
    """torch's builtin class for each refusal (our typed errors subclass it too)."""
    x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], shards=2)
    with pytest.raises(RuntimeError, match="k=4"):  # "selected index k out of range"
        st.topk(x, 4)
    with pytest.raises(RuntimeError, match="k=-1"):
        x.topk(-1)
    with pytest.raises(TypeError):  # the parser: k must be an int
        st.topk(x, 2.0)
    with pytest.raises(RuntimeError, match="k=0"):
        st.kthvalue(x, 0)
    with pytest.raises(RuntimeError, match="k=3"):
        x.kthvalue(3, dim=0)
    e = st.zeros(2, 0, shards=2)
    for f in (
        lambda: st.kthvalue(e, 1, 1),
        lambda: st.median(e, 1),
        lambda: st.nanmedian(e, -1),
        lambda: st.mode(e, 1),
    ):
        with pytest.raises(IndexError, match="non-zero size"):
            f()
    b = st.tensor([True, False, True], shards=2)
    for f in (lambda: b.topk(1), lambda: b.kthvalue(1), lambda: b.median(), lambda: b.median(0)):
        with pytest.raises(NotImplementedError):  # torch has no CPU kernel for bool
            f()
    assert st.mode(b).values.item() is True  # mode takes bools
    assert st.kthvalue(st.tensor(True), 1).values.item() is True  # 0-d: no kernel runs
    with pytest.raises(RuntimeError, match="non-empty"):
        st.quantile(st.zeros(0), 0.5)
    with pytest.raises(RuntimeError, match="non-empty"):  # before the dtype check
        st.quantile(st.zeros(2, 0, dtype=st.int64), 0.5, dim=0)
    with pytest.raises(RuntimeError, match="float or double"):
        st.quantile(st.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match=r"range \[0, 1\]"):
        x.nanquantile(st.tensor([0.1, 1.2], dtype=st.float32))
    with pytest.raises(RuntimeError, match="cubic"):
        st.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(st.DTypeError, match="complex"):
        st.kthvalue(st.tensor([1 + 1j, 2j]), 1)
    assert x.topk(1).values.tolist() == [[3.0], [6.0]]  # x intact, the session usable


@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)])
def test_topk_k0_and_0d(place):
    x = st.from_numpy(A, **place)
    for d in (0, 1):
        v, i = st.topk(x, 0, d)
        shape = (0, 6) if d == 0 else (7, 0)
        assert v.shape == i.shape == shape and v.dtype == x.dtype and i.dtype == st.int64
    # torch: a 0-d input gives its element, 0-d, for k = 0 as for k = 1
    for k in (0, 1):
        r = st.topk(st.tensor(2.5), k)
        assert r.values.shape == () and r.values.item() == 2.5 and r.indices.item() == 0


@pytest.mark.parametrize("shards", [1, 2])
def test_quantile_infinities_and_shapes(shards, candidates):
    # torch: lower/higher/nearest gather a value; linear/midpoint lerp (0 * inf is NaN)
    x = st.tensor([float("-inf"), float("inf")], dtype=st.float64, shards=shards)
    q = st.tensor([0.0, 0.3, 0.5, 1.0], dtype=st.float64)
    inf, nan = float("inf"), float("nan")
    torch_says = {
        "lower": [-inf, -inf, -inf, inf],
        "higher": [-inf, inf, inf, inf],
        "nearest": [-inf, -inf, -inf, inf],
        "linear": [nan, nan, nan, nan],
        "midpoint": [nan, nan, nan, nan],
    }
    for interp, exp in torch_says.items():
        got = st.quantile(x, q, interpolation=interp).numpy()
        assert np.array_equal(got, np.array(exp), equal_nan=True), interp
    y = st.tensor([1.0, inf], shards=shards)
    assert np.array_equal(st.quantile(y, q.float()).numpy(), [1.0, inf, nan, nan], equal_nan=True)
    # a 0-d input keeps no dim with keepdim (torch); an empty q gives an empty result
    z = st.tensor(3.0)
    assert st.quantile(z, 0.4, dim=0, keepdim=True).shape == ()
    assert st.quantile(z, st.tensor([0.1, 0.9]), dim=0, keepdim=True).shape == (2,)
    assert st.quantile(z, 0.4, keepdim=True).shape == ()
    e = st.tensor([], dtype=st.float32)
    assert st.quantile(st.ones(4, 5, shards=shards), e).shape == (0,)
    assert st.nanquantile(st.ones(4, 5, shards=shards), e, dim=0).shape == (0, 5)


@pytest.mark.parametrize("shards", [1, 3])
def test_median_of_all_spreads_gradient_over_ties(shards, candidates):
    # torch's median()/nanmedian() backward: evenly over the elements equal to the result
    x = st.tensor([0.0, 2.0, -1.0, 0.0, 0.0], shards=shards).requires_grad_()
    st.median(x).backward()
    assert np.allclose(x.grad.numpy(), [1 / 3, 0, 0, 1 / 3, 1 / 3])
    x = st.tensor([0.0, float("nan"), -1.0, float("nan"), 0.0], shards=shards).requires_grad_()
    st.median(x).backward()  # NaN: over every NaN
    assert x.grad.tolist() == [0.0, 0.5, 0.0, 0.5, 0.0]
    x = st.tensor([[1.0, float("nan")], [1.0, 3.0]], shards=shards).requires_grad_()
    st.nanmedian(x).backward()
    assert x.grad.tolist() == [[0.5, 0.0], [0.5, 0.0]]
    x = st.tensor([0.0, 0.0, 1.0], shards=shards).requires_grad_()
    st.median(x, 0).values.backward()  # with a dim: the selected index only
    assert x.grad.tolist() == [0.0, 1.0, 0.0]  # torch: index 1 (the lower median's rank)


def test_gradients_of_a_replicated_input():
    # each replica must not add its own copy of the gradient
    a = st.tensor([[1.0, 2.0, 3.0], [6.0, 5.0, 4.0]], layout=st.Layout.replicated())
    a.requires_grad_()
    (st.median(a, 1).values * st.tensor([1.0, 2.0])).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]
    b = st.tensor([3.0, 1.0, 2.0], layout=st.Layout.replicated()).requires_grad_()
    st.topk(b, 1).values.sum().backward()
    st.quantile(b, 0.25).backward()
    assert np.allclose(b.grad.numpy(), [1.0, 0.5, 0.5])


@pytest.mark.parametrize("place", PLACEMENTS[:5], ids=PLACEMENT_IDS[:5])
def test_topk_ties_do_not_depend_on_the_layout(place):
    # tie order is torch's implementation detail; ours is the lowest indices on any layout
    a = np.array([[0.0, -1.0, 0.0, 1.0, 0.0]] * 2)
    x = st.from_numpy(a.T.copy(), **place)  # the tied dim is dim 0, split in most layouts
    assert st.topk(x, 2, dim=0).indices.tolist() == [[3, 3], [0, 0]]
    assert st.topk(x, 3, dim=0, largest=False).indices.tolist() == [[1, 1], [0, 0], [2, 2]]


def test_q_and_k_forms_torch_takes():
    x = st.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], shards=2)
    # a 0-d q tensor adds no q dim (torch: shapes (), (2,)); a 1-element 1-d q does
    assert st.quantile(x, st.tensor(0.5)).shape == ()
    assert st.quantile(x, st.tensor(0.5), dim=1).tolist() == [2.0, 4.0]
    assert st.quantile(x, st.tensor([0.5]), dim=1).shape == (1, 2)
    with pytest.raises(TypeError):  # a list is not a q torch's parser takes
        st.quantile(x, [0.5, 0.2])
    # k may be a one-element integer tensor
    assert st.topk(x, st.tensor(1)).values.tolist() == [[3.0], [5.0]]
    assert st.kthvalue(x, st.tensor(2)).values.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_topk_of_a_long_line_keeps_a_sampled_cut_exactly(dtype):
    # a long line with a small k keeps the candidates of a sampled cut (one compare) before
    # the exact selection: the same picks as the full selection, NaN, ties and -0.0 included
    rng = np.random.default_rng(3)
    for trial in range(12):
        n = int(rng.integers(1 << 16, 1 << 17))
        if dtype == "int64":
            m = rng.integers(-40, 40, n)
        else:
            m = np.round(rng.standard_normal(n), 1 + trial % 3).astype(dtype)
            m[rng.integers(0, n, 30)] = np.nan
            m[rng.integers(0, n, 30)] = -0.0
        if trial % 4 == 0:
            m = np.sort(m)
        kk = int(rng.integers(1, 1500))
        for largest in (True, False):
            full = OK._top_positions(m, kk, largest)
            c = OK._candidates(m, kk, largest)
            got = full if c is None else c[OK._top_positions(m[c], kk, largest)]
            assert np.array_equal(got, full)
    x = (
        rng.integers(-40, 40, 200_000)
        if dtype == "int64"
        else np.round(rng.standard_normal(200_000), 2).astype(dtype)
    )  # 3 shards of more than 2^16: each takes the sampled cut
    v, i = st.tensor(x, shards=3).topk(50)
    o = np.lexsort((np.arange(x.size), -x.astype(np.float64)))[:50]
    assert np.array_equal(i.numpy(), o) and np.array_equal(v.numpy(), x[o])
