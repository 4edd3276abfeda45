"""gather / scatter / scatter_add / scatter_reduce / take_along_dim against NumPy references
with torch's semantics (torch's answers were taken from a CPU torch and encoded here)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy, examples, placements

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

RNG = np.random.default_rng(0)
IDX_PLACES = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=3, dim=1),
    dict(layout=st.Layout(chunks=(0, 3, 2))),
]


def ref_scatter(x, dim, idx, src, reduce=None, include_self=True):
    """torch's scatter/scatter_reduce, element by element (src None: a scalar in ``value``)."""
    out = x.copy()
    hits = {}
    for i in np.ndindex(*idx.shape):
        p = list(i)
        p[dim] = idx[i]
        hits.setdefault(tuple(p), []).append(src[i] if isinstance(src, np.ndarray) else src)
    for p, vals in hits.items():
        vals = ([x[p]] if include_self and reduce else []) + vals
        if reduce is None:
            out[p] = vals[-1]
        elif reduce == "sum":
            out[p] = np.sum(vals)
        elif reduce == "prod":
            out[p] = np.prod(vals)
        elif reduce == "mean":
            s = np.sum(vals)
            out[p] = s // len(vals) if x.dtype.kind in "iu" else s / len(vals)
        elif reduce == "amax":
            out[p] = np.max(vals)
        else:
            out[p] = np.min(vals)
    return out


def ref_gather(a, dim, idx):
    """torch's gather: the index may be smaller than the input along every dim."""
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    return a[tuple(grid)]


def _index(shape, dim, n, unique=False):
    if unique:  # one write per point: torch's plain scatter is only defined then
        idx = np.argsort(RNG.random(shape[:dim] + (n,) + shape[dim + 1 :]), axis=dim)
        return np.take(idx, range(shape[dim]), axis=dim)
    return RNG.integers(0, n, size=shape)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("ip", IDX_PLACES)
@pytest.mark.parametrize("dim", [0, 1])
def test_gather_matches_numpy(place, ip, dim):
    a = np.arange(35.0).reshape(7, 5)
    idx = _index((5, 4), dim, a.shape[dim])
    x = st.from_numpy(a, **place)
    out = st.gather(x, dim, st.from_numpy(idx, **ip))
    assert_matches_numpy(out, ref_gather(a, dim, idx))
    assert out.layout.bounds == st.from_numpy(idx, **ip).layout.bounds  # laid out like index
    assert_matches_numpy(x.gather(dim - 2, st.from_numpy(idx, **ip)), ref_gather(a, dim, idx))


def test_gather_along_a_non_split_dim_moves_nothing():
    a = np.arange(24.0).reshape(6, 4)
    x = st.from_numpy(a, shards=3)
    idx = st.from_numpy(RNG.integers(0, 4, size=(6, 4)), shards=3)
    before = st.stats()["bytes_moved"]
    assert_matches_numpy(x.gather(1, idx), np.take_along_axis(a, idx.numpy(), 1))
    assert st.stats()["bytes_moved"] == before


def test_gather_errors_before_queuing():
    x = st.from_numpy(np.arange(6.0).reshape(2, 3), shards=2)
    with pytest.raises(st.errors.DTypeError, match="int32/int64"):
        x.gather(1, st.tensor([[0.0]]))
    with pytest.raises(IndexError, match="range"):
        x.gather(2, st.tensor([[0]]))
    with pytest.raises(st.errors.ShapeError, match="same number of dimensions"):
        x.gather(1, st.tensor([0]))
    with pytest.raises(st.errors.ShapeError, match="no larger than self"):
        x.gather(1, st.zeros(3, 1, dtype=st.int64))
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 1 with size 3"):
        x.gather(1, st.tensor([[-1]]))
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        x.gather(0, st.tensor([[2, 0]], shards=1))
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]  # the session stays usable
    assert st.gather(x, 0, st.zeros(0, 3, dtype=st.int64)).shape == (0, 3)
    assert x.gather(1, st.tensor([[0]], dtype=st.int32)).tolist() == [[0.0]]  # torch takes int32


@pytest.mark.parametrize("dtype", [st.uint8, st.bool, st.int16])
def test_an_empty_index_of_any_dtype_passes_as_in_torch(dtype):
    # torch 2.13 checks the index dtype only when the index has elements
    x = st.arange(5.0, shards=2)
    empty = st.tensor([], dtype=dtype)
    out = st.gather(x, 0, empty)
    assert out.shape == (0,) and out.dtype == st.float32
    assert st.gather(st.ones(5, 5, shards=2), 0, st.zeros(2, 0, dtype=dtype)).shape == (2, 0)
    assert st.scatter(x, 0, empty, st.tensor([])).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert st.scatter_add(x, 0, empty, st.tensor([])).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(st.errors.DTypeError, match="int32/int64 for index, got"):
        st.gather(x, 0, st.tensor([1], dtype=dtype))


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_and_scatter_add(place, dim):
    a = np.arange(35.0).reshape(7, 5)
    src = RNG.random((5, 4))
    idx = _index((5, 4), dim, a.shape[dim], unique=True)
    x = st.from_numpy(a, **place)
    i, s = st.from_numpy(idx, shards=2), st.from_numpy(src, shards=3, dim=1)
    assert_matches_numpy(x.scatter(dim, i, s), ref_scatter(a, dim, idx, src))
    assert_matches_numpy(x.scatter(dim, i, value=2.5), ref_scatter(a, dim, idx, 2.5))
    assert_matches_numpy(x.scatter(dim, i, s, reduce="add"), ref_scatter(a, dim, idx, src, "sum"))
    rep = _index((5, 4), dim, a.shape[dim])
    ir = st.from_numpy(rep, shards=3)
    assert_matches_numpy(st.scatter_add(x, dim, ir, s), ref_scatter(a, dim, rep, src, "sum"))
    big = st.from_numpy(RNG.random((6, 6)), shards=2)  # src larger than index: its corner
    assert_matches_numpy(
        x.scatter_add(dim, ir, big), ref_scatter(a, dim, rep, big.numpy()[:5, :4], "sum")
    )
    assert_matches_numpy(x, a)  # out of place
    y = x.clone()
    assert y.scatter_add_(dim, ir, s) is y
    assert_matches_numpy(y, ref_scatter(a, dim, rep, src, "sum"))
    y = x.clone()
    y.scatter_(dim, i, 1.0, reduce="multiply")
    assert_matches_numpy(y, a)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize(
    "place", [dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout(chunks=(4, 0, 3)))]
)
def test_scatter_reduce(reduce, include_self, place):
    a = RNG.integers(-5, 5, size=(7, 3)).astype(np.float64)
    idx = RNG.integers(0, 7, size=(9, 3))
    src = RNG.integers(-5, 5, size=(9, 3)).astype(np.float64)
    src[0, 0] = np.nan
    x = st.from_numpy(a, **place)
    out = x.scatter_reduce(
        0,
        st.from_numpy(idx, shards=2),
        st.from_numpy(src, shards=3),
        reduce,
        include_self=include_self,
    )
    assert_matches_numpy(out, ref_scatter(a, 0, idx, src, reduce, include_self))
    ai, si = a.astype(np.int64), np.nan_to_num(src).astype(np.int64)
    xi = st.from_numpy(ai, **place)
    xi.scatter_reduce_(
        0,
        st.from_numpy(idx, shards=2),
        st.from_numpy(si, shards=1),
        reduce,
        include_self=include_self,
    )
    assert_matches_numpy(xi, ref_scatter(ai, 0, idx, si, reduce, include_self))


def test_scatter_torch_answers():
    x = st.tensor([5, 5, 5])
    i = st.tensor([0, 0, 1])
    assert x.scatter_reduce(0, i, st.tensor([2, 3, 4]), "mean").tolist() == [3, 4, 5]
    assert x.scatter_reduce(0, i, st.tensor([-2, 3, 4]), "mean", include_self=False).tolist() == [
        0,
        4,
        5,
    ]
    assert st.tensor([1.0, 2.0]).scatter(0, st.tensor([0]), 5.0, reduce="add").tolist() == [
        6.0,
        2.0,
    ]
    with pytest.raises(st.errors.ArgumentError, match="sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, i, x, "foo")
    with pytest.raises(st.errors.ArgumentError, match="add or multiply"):
        x.scatter(0, i, 1, reduce="max")
    with pytest.raises(st.errors.DTypeError, match="self.dtype to be equal to src.dtype"):
        x.scatter(0, i, st.ones(3))
    y = st.tensor([1.0, 2.0, 3.0], shards=2)
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        y.scatter_(0, st.tensor([3]), 1.0)
    assert y.tolist() == [1.0, 2.0, 3.0]  # a failed scatter leaves its operand intact


@pytest.mark.parametrize(
    "place", [dict(shards=2), dict(shards=2, dim=1), dict(layout=st.Layout(chunks=(3, 0, 1)))]
)
def test_gradients(place):
    a = RNG.random((4, 3))
    x = st.from_numpy(a, **place).requires_grad_()
    idx = st.from_numpy(RNG.integers(0, 4, size=(5, 3)), shards=2)
    uniq = st.from_numpy(_index((4, 3), 0, 4, unique=True), shards=3)
    s = st.from_numpy(RNG.random((5, 3)), shards=2).requires_grad_()
    s4 = st.from_numpy(RNG.random((4, 3)), shards=1).requires_grad_()
    gc = st.autograd.gradcheck
    assert gc(lambda t: t.gather(0, idx), (x,))
    assert gc(lambda t: st.take_along_dim(t, idx[:, :1], 0), (x,))
    assert gc(lambda t, u: t.scatter(0, uniq, u), (x, s4))
    assert gc(lambda t: t.scatter(0, uniq, 3.0), (x,))
    assert gc(lambda t, u: t.scatter_add(0, idx, u), (x, s))
    for r in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            assert gc(
                lambda t, u, r=r, inc=inc: t.scatter_reduce(0, idx, u, r, include_self=inc), (x, s)
            ), (
                r,
                inc,
            )


@pytest.mark.parametrize(
    "place", [dict(shards=1), dict(shards=3), dict(layout=st.Layout(chunks=(0, 3, 1)))]
)
def test_prod_gradient_at_zeros_like_torch(place):
    # torch's answers: point 1 has a zero self and one zero source, point 3 a single zero
    # source among two, point 2 none
    for inc, gx, gs, out in (
        (True, [5, 0, 0, 0], [2, 0, 0, 9, 32, 0], [10, 0, 0, 0]),
        (False, [0, 0, 0, 0], [1, 14, 0, 3, 8, 0], [5, 0, 0, 0]),
    ):
        x = st.tensor([2.0, 0.0, 3.0, 4.0], **place).requires_grad_()
        s = st.tensor([5.0, 0.0, 7.0, 0.0, 0.0, 2.0], shards=2).requires_grad_()
        i = st.tensor([0, 1, 1, 2, 3, 3], shards=3)
        r = x.scatter_reduce(0, i, s, "prod", include_self=inc)
        r.backward(st.arange(1.0, 5.0))
        assert r.tolist() == out
        assert x.grad.tolist() == gx and s.grad.tolist() == gs


def test_amax_gradient_splits_ties_like_torch():
    s = st.tensor([1.0, 2.0, 3.0], shards=2).requires_grad_()
    src = st.tensor([3.0, 1.0, 3.0], shards=3).requires_grad_()
    o = s.scatter_reduce(0, st.tensor([2, 0, 2]), src, "amax")
    o.backward(st.tensor([1.0, 10.0, 100.0]))
    assert np.allclose(s.grad.numpy(), [0.5, 10.0, 100 / 3])
    assert np.allclose(src.grad.numpy(), [100 / 3, 0.5, 100 / 3])


@pytest.mark.parametrize("place", PLACEMENTS[:5], ids=PLACEMENT_IDS[:5])
def test_take_along_dim(place):
    a = RNG.random((4, 6))
    x = st.from_numpy(a, **place)
    i = np.argsort(a, axis=1)[:, :2]
    assert_matches_numpy(st.take_along_dim(x, st.from_numpy(i), 1), np.take_along_axis(a, i, 1))
    j = np.argmax(a, axis=0)[None]
    assert_matches_numpy(x.take_along_dim(st.from_numpy(j), 0), np.take_along_axis(a, j, 0))
    flat = np.array([23, 0, 5])
    assert_matches_numpy(st.take_along_dim(x, st.from_numpy(flat)), a.reshape(-1)[flat])
    col = np.array([[1], [0], [2], [5]])  # broadcast against the input along the other dims
    assert_matches_numpy(
        st.take_along_dim(x, st.from_numpy(col[:1]), 1),
        np.take_along_axis(a, np.broadcast_to(col[:1], (4, 1)), 1),
    )


@settings(max_examples=examples(25), deadline=None)
@given(hs.data())
def test_gather_scatter_property(data):
    shape = tuple(data.draw(hs.lists(hs.integers(1, 4), min_size=1, max_size=3)))
    a = np.arange(1.0, np.prod(shape) + 1).reshape(shape)
    dim = data.draw(hs.integers(0, len(shape) - 1))
    ishape = tuple(
        data.draw(hs.integers(0, n)) if d != dim else data.draw(hs.integers(0, 5))
        for d, n in enumerate(shape)
    )
    idx = RNG.integers(0, shape[dim], size=ishape)
    x = st.from_numpy(a, **data.draw(placements(shape)))
    i = st.from_numpy(idx, **data.draw(placements(ishape)))
    assert_matches_numpy(x.gather(dim, i), ref_gather(a, dim, idx))
    src = np.ones(ishape)
    assert_matches_numpy(
        x.scatter_add(dim, i, st.from_numpy(src)), ref_scatter(a, dim, idx, src, "sum")
    )


def test_take_along_dim_wants_int64_indices_like_torch():
    x = st.tensor([[1.0, 2.0], [3.0, 4.0]], shards=2)
    with pytest.raises(st.DTypeError, match="dtype of indices should be int64 but got int32"):
        st.take_along_dim(x, st.tensor([[1]], dtype=st.int32), 1)
    assert st.gather(x, 1, st.tensor([[1]], dtype=st.int32)).tolist() == [[2.0]]


@pytest.mark.parametrize("ip", [dict(shards=1), dict(shards=2)])
def test_gather_reads_a_0d_operand_as_1d_like_torch(ip):
    # torch.gather(torch.tensor(5.), 0, torch.tensor([0, 0])) is tensor([5., 5.])
    x = st.tensor(5.0)
    assert st.gather(x, 0, st.tensor([0, 0, 0], **ip)).tolist() == [5.0, 5.0, 5.0]
    assert st.gather(st.tensor(5), -1, st.tensor([0, 0], **ip)).tolist() == [5, 5]
    assert st.gather(x, 0, st.tensor([0], dtype=st.int32)).tolist() == [5.0]
    assert st.gather(x, 0, st.zeros(0, dtype=st.int64)).shape == (0,)
    assert st.gather(x, 0, st.zeros(0, 2, dtype=st.int64)).shape == (0, 2)
    got = st.gather(st.tensor([1.0, 2.0, 3.0], **ip), 0, st.tensor(2))  # a 0-d index as well
    assert got.shape == () and got.item() == 3.0
    with pytest.raises(st.IndexOutOfRange, match="index 3 is out of bounds for dimension 0 with "):
        st.gather(x, 0, st.tensor([0, 3], **ip))
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 0 with size 1"):
        st.gather(x, 0, st.tensor([-1]))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        st.gather(st.tensor([1.0, 2.0, 3.0]), 0, st.tensor(3))
    with pytest.raises(st.DimError, match=r"range of \[-1, 0\], but got 1"):
        st.gather(x, 1, st.tensor([0]))
    with pytest.raises(st.ShapeError, match="same number of dimensions"):
        st.gather(x, 0, st.tensor([[0]]))
    with pytest.raises(st.ShapeError, match="same number of dimensions"):
        st.gather(st.tensor([[5.0]]), 0, st.tensor(0))
    assert x.item() == 5.0  # the session stays usable
    w = st.tensor(5.0, requires_grad=True)
    st.gather(w, 0, st.tensor([0, 0, 0])).sum().backward()
    assert w.grad.shape == () and w.grad.item() == 3.0


@pytest.mark.parametrize("ip", [dict(shards=1), dict(shards=2)])
def test_scatter_reads_0d_operands_as_1d_like_torch(ip):
    # torch's answers: torch.tensor(1.).scatter_add(0, torch.tensor(0), torch.tensor(5.)) is
    # tensor(6.); a 0-d index into a 1-d input writes one place
    x = st.tensor(1.0)
    got = x.scatter(0, st.tensor(0), st.tensor(5.0))
    assert got.shape == () and got.item() == 5.0
    assert x.scatter(-1, st.tensor(0), 7.0).item() == 7.0
    assert x.scatter(0, st.tensor([0]), st.tensor(5.0)).item() == 5.0
    assert x.scatter(0, st.tensor(0), st.tensor([5.0, 7.0])).item() == 5.0
    assert x.scatter_add(0, st.tensor(0), st.tensor(5.0)).item() == 6.0
    assert x.scatter_reduce(0, st.tensor(0), st.tensor(5.0), "amax").item() == 5.0
    assert x.scatter(0, st.zeros(0, dtype=st.int64), st.tensor([])).item() == 1.0
    v = st.zeros(3, **ip)
    assert v.scatter(0, st.tensor(1), st.tensor(5.0)).tolist() == [0.0, 5.0, 0.0]
    assert v.scatter(0, st.tensor(1), st.tensor([5.0, 6.0])).tolist() == [0.0, 5.0, 0.0]
    assert v.scatter(0, st.tensor(2), 4.0).tolist() == [0.0, 0.0, 4.0]
    y = st.tensor(1.0)
    assert y.scatter_add_(0, st.tensor(0), st.tensor(5.0)) is y and y.item() == 6.0
    with pytest.raises(st.DimError, match=r"range of \[-1, 0\], but got 1"):
        x.scatter(1, st.tensor(0), st.tensor(5.0))
    with pytest.raises(st.IndexOutOfRange, match="index 1 is out of bounds for dimension 0"):
        x.scatter(0, st.tensor(1), st.tensor(5.0))
    with pytest.raises(st.ShapeError, match="same number of dimensions"):
        x.scatter(0, st.tensor([[0]]), st.tensor([[5.0]]))
    with pytest.raises(st.ShapeError, match="same number of dimensions"):
        st.zeros(2, 2, **ip).scatter(0, st.tensor(1), st.tensor(5.0))
    assert x.item() == 1.0  # operands intact
    w, s = st.tensor(2.0, requires_grad=True), st.tensor(3.0, requires_grad=True)
    (w.scatter_add(0, st.tensor(0), s) * w).backward()
    assert (w.grad.item(), s.grad.item()) == (7.0, 2.0)  # torch: tensor(7.) tensor(2.)


@pytest.mark.parametrize("shards", [1, 2])
def test_take_along_dim_wraps_negative_indices_like_torch(shards):
    # torch (with a dim): [[30, 10], [40, 60]] and [[40, 50, 60], [10, 20, 30]]
    x = st.tensor([[10, 20, 30], [40, 50, 60]], shards=shards)
    i = st.tensor([[-1, 0], [-3, 2]], shards=shards)
    assert st.take_along_dim(x, i, 1).tolist() == [[30, 10], [40, 60]]
    assert st.take_along_dim(x, st.tensor([[-1], [-2]]), -2).tolist() == [
        [40, 50, 60],
        [10, 20, 30],
    ]
    f = st.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    st.take_along_dim(f, st.tensor([[-1, -1, 0]]), 1).sum().backward()
    assert f.grad.tolist() == [[1.0, 0.0, 2.0]]
    with pytest.raises(st.IndexOutOfRange, match="index -4 is out of bounds"):
        st.take_along_dim(x, st.tensor([[-4]]), 1)
    with pytest.raises(st.IndexOutOfRange, match="index -1 is out of bounds"):
        st.take_along_dim(x, st.tensor([-1, 0]))  # torch refuses negatives with dim=None


def test_take_along_dim_out_of_range_names_the_values():
    # torch's CPU kernel does not check here (it returns what it reads); we keep refusing,
    # naming the offending values; torch checks the flattened (dim=None) form with this message
    x = st.from_numpy(np.arange(6.0).reshape(2, 3), shards=2)
    with pytest.raises(st.IndexOutOfRange, match=r"take_along_dim: index 5 .* dimension 1 with"):
        st.take_along_dim(x, st.tensor([[0, 5, 7, 5]]), 1)
    with pytest.raises(IndexError, match=r"size 3 \(also out of range: 7\)"):
        st.take_along_dim(x, st.tensor([[0, 5, 7, 5]]), 1)
    with pytest.raises(IndexError, match="index -7 is out of bounds for dimension 0 with size 6"):
        st.take_along_dim(x, st.tensor([-7]))
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    # 0-d operands, as torch
    assert st.take_along_dim(st.tensor(5.0), st.tensor([0, 0])).tolist() == [5.0, 5.0]
    with pytest.raises(st.ShapeError, match="0 dimensions for input, and 1 dimensions for ind"):
        st.take_along_dim(st.tensor(5.0), st.tensor([0, 0]), 0)
    with pytest.raises(st.DimError, match="Dimension specified as 0 but tensor has no dimensions"):
        st.take_along_dim(st.tensor(5.0), st.tensor(0), -1)


def test_scatter_reduce_refuses_dtypes_torch_has_no_kernel_for():
    # torch: amax/amin of complex are NotImplementedError (only when there is work to do);
    # mean of bool always is (its final floor division)
    c = st.tensor(np.array([1 + 1j, 2 + 0j]), shards=2)
    idx = st.tensor([0, 0])
    for red in ("amax", "amin"):
        with pytest.raises(st.DTypeError, match=red):
            c.scatter_reduce(0, idx, c, red)
        assert_matches_numpy(c.scatter_reduce(0, idx[:0], c[:0], red), c.numpy())
    b = st.tensor([True, False], shards=2)
    for i in (idx, idx[:0]):
        with pytest.raises(st.DTypeError, match="mean"):
            b.scatter_reduce(0, i, b[: i.numel()], "mean")
    assert c.tolist() == [1 + 1j, 2 + 0j]  # operands intact


def test_scatter_src_of_another_rank_is_a_typed_error():
    # torch: "Index tensor must have the same number of dimensions as src tensor"
    x = st.zeros(4, 3, shards=2)
    with pytest.raises(st.ShapeError, match="src"):
        st.scatter(x, 0, st.tensor([[1, 0]]), st.tensor(2.0))
    assert x.sum().item() == 0.0


def test_empty_index_keeps_operands_in_the_graph_like_torch():
    # torch: an empty gather requires grad and gives input zeros; an empty scatter gives src
    # zeros (src.grad is a tensor, not None)
    x = st.from_numpy(RNG.random((3, 4)), shards=2).requires_grad_()
    out = st.gather(x, 1, st.zeros(0, 0, dtype=st.int64))
    assert out.requires_grad and tuple(out.shape) == (0, 0)
    out.sum().backward()
    assert_matches_numpy(x.grad, np.zeros((3, 4)))
    for src_shape in ((1, 2), (1, 0)):
        x = st.from_numpy(np.array([[-0.0, 1.0], [2.0, 3.0]]), shards=2).requires_grad_()
        src = st.from_numpy(np.ones(src_shape)).requires_grad_()
        out = x.scatter_add(0, st.zeros(1, 0, dtype=st.int64), src)
        assert np.signbit(out.detach().numpy()[0, 0])  # x - 0.0 keeps -0.0
        (out * 2).sum().backward()
        assert_matches_numpy(src.grad, np.zeros(src_shape))
        assert_matches_numpy(x.grad, np.full((2, 2), 2.0))
