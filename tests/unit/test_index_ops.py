"""index_select / index_add / index_copy / index_fill, masked_* and nonzero
against NumPy, with torch's answers (taken from a CPU torch) encoded where they differ."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy, examples, placements

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

RNG = np.random.default_rng(1)
A = np.arange(1.0, 36.0).reshape(7, 5)
# the shared placements, with an uneven chunking (an empty shard) that fits 3 rows
SMALL = PLACEMENTS[:6] + [dict(layout=st.Layout(chunks=(2, 0, 1))), PLACEMENTS[7]]


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_add_copy_fill(place, dim):
    x = st.from_numpy(A, **place)
    n = A.shape[dim]
    idx = RNG.integers(0, n, size=6)
    i = st.from_numpy(idx, shards=2)
    assert_matches_numpy(st.index_select(x, dim, i), np.take(A, idx, axis=dim))
    assert_matches_numpy(x.index_select(dim, i[:0]), np.take(A, idx[:0], axis=dim))
    src_shape = list(A.shape)
    src_shape[dim] = 6
    src = RNG.random(src_shape)
    exp = A.copy()
    np.add.at(np.moveaxis(exp, dim, 0), idx, 2 * np.moveaxis(src, dim, 0))
    assert_matches_numpy(x.index_add(dim, i, st.from_numpy(src, shards=3), alpha=2), exp)
    uniq = RNG.permutation(n)[:3]
    src3 = np.take(src, range(3), axis=dim)
    exp = A.copy()
    np.moveaxis(exp, dim, 0)[uniq] = np.moveaxis(src3, dim, 0)
    assert_matches_numpy(x.index_copy(dim, st.from_numpy(uniq), st.from_numpy(src3)), exp)
    exp = A.copy()
    np.moveaxis(exp, dim, 0)[idx] = -1.0
    assert_matches_numpy(x.index_fill(dim, i, -1.0), exp)
    assert_matches_numpy(x.index_fill(dim, i, st.tensor(-1.0)), exp)
    assert_matches_numpy(x, A)
    y = x.clone()
    assert y.index_fill_(dim, i, -1.0) is y
    assert_matches_numpy(y, exp)


def test_index_errors_like_torch():
    x = st.from_numpy(A, shards=3)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0"):
        x.index_select(0, st.tensor([0, 7]))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, st.tensor([[0]]))
    with pytest.raises(st.errors.DTypeError, match="int32 or int64"):
        x.index_select(0, st.tensor([0.0]))
    with pytest.raises(st.errors.ShapeError, match="source tensor shape must match"):
        x.index_add(0, st.tensor([0]), st.ones(1, 2, dtype=st.float64))
    with pytest.raises(IndexError, match=r"Number of indices \(2\) should be equal"):
        x.index_copy(0, st.tensor([0, 1]), st.ones(1, 5, dtype=st.float64))
    with pytest.raises(st.errors.DTypeError, match="same dtype"):
        x.index_add(0, st.tensor([0]), st.ones(1, 5))
    with pytest.raises(st.errors.ArgumentError, match="0-dimensional value tensor"):
        x.index_fill(0, st.tensor([0]), st.tensor([1.0, 2.0]))
    y = x.clone()
    with pytest.raises(IndexError, match="index -8 is out of bounds"):
        y.index_add_(0, st.tensor([-8]), st.ones(1, 5, dtype=st.float64))
    assert_matches_numpy(y, A)


@pytest.mark.parametrize("place", SMALL, ids=PLACEMENT_IDS)
def test_out_of_range_indices_are_named_once(place):
    # the index is expanded over the other dims and split over blocks: a bad value still
    # counts once (torch: "index 2 is out of bounds for dimension 0 with size 2")
    x = st.from_numpy(np.arange(1.0, 10.0).reshape(3, 3), **place)
    for dim in (0, 1):
        with pytest.raises(st.IndexOutOfRange) as e:
            x.index_select(dim, st.tensor([3]))
        assert str(e.value).endswith(f"index 3 is out of bounds for dimension {dim} with size 3")
        with pytest.raises(st.IndexOutOfRange) as e:
            x.index_select(dim, st.tensor([5, -1, 0, 5, -1, 3], shards=2))
        msg = str(e.value)
        assert f"index 5 is out of bounds for dimension {dim} with size 3" in msg
        assert msg.endswith("(also out of range: -1, 3)")
    with pytest.raises(st.IndexOutOfRange, match=r"index 4 is out of bounds.*size 3$"):
        x.index_add_(0, st.tensor([4, 4]), st.ones(2, 3, dtype=st.float64))
    assert x.tolist() == np.arange(1.0, 10.0).reshape(3, 3).tolist()


@pytest.mark.parametrize("place", SMALL, ids=PLACEMENT_IDS)
def test_index_fill_and_copy_index_rules_like_torch(place):
    x = st.from_numpy(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), **place)
    # torch's index_fill counts negative indices from the end (duplicates are fine)
    assert x.index_fill(0, st.tensor([0, 0, -1]), 9.0).tolist() == [[9, 9], [3, 4], [9, 9]]
    assert x.index_fill(1, st.tensor([-2]), 0.0).tolist() == [[0, 2], [0, 4], [0, 6]]
    y = x.clone()
    y.index_fill_(0, st.tensor([-2]), 7.0)
    assert y.tolist() == [[1, 2], [7, 7], [5, 6]]
    with pytest.raises(st.IndexOutOfRange, match="index -4 is out of bounds for dimension 0"):
        x.index_fill(0, st.tensor([-4]), 1.0)
    with pytest.raises(st.IndexOutOfRange, match="index -1 is out of bounds for dimension 0"):
        x.index_copy(
            0, st.tensor([-1]), st.ones(1, 2, dtype=st.float64)
        )  # index_copy does not wrap
    # index_select/index_add take int32 indices; index_copy/index_fill want int64
    i32 = st.tensor([0], dtype=st.int32)
    with pytest.raises(st.DTypeError, match="Expected a long tensor for index, but got int32"):
        x.index_copy_(0, i32, st.ones(1, 2, dtype=st.float64))
    with pytest.raises(st.DTypeError, match="Expected dtype int64 for index, got int32"):
        x.index_fill_(0, i32, 1.0)
    assert x.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert x.index_select(0, i32).tolist() == [[1, 2]]


@pytest.mark.parametrize("place", SMALL, ids=PLACEMENT_IDS)
def test_masked_ops(place):
    a = np.arange(12.0).reshape(3, 4)
    x = st.from_numpy(a, **place)
    m = np.array([[True], [False], [True]])
    sm = st.from_numpy(m)
    assert_matches_numpy(x.masked_select(sm), a[np.broadcast_to(m, a.shape)])
    assert_matches_numpy(st.masked_select(x, x > 4.0), a[a > 4])
    exp = a.copy()
    exp[np.broadcast_to(m, a.shape)] = np.arange(100.0, 108.0)
    assert_matches_numpy(x.masked_scatter(sm, st.arange(100.0, 112.0, dtype=st.float64)), exp)
    assert_matches_numpy(x.masked_fill(sm, -1.0), np.where(m, -1.0, a))
    assert_matches_numpy(x.masked_fill(sm, st.tensor(-2.0)), np.where(m, -2.0, a))
    assert_matches_numpy(x, a)
    y = x.clone()
    assert y.masked_fill_(y > 5.0, 0.0) is y
    assert_matches_numpy(y, np.where(a > 5, 0.0, a))
    y = x.clone()
    assert y.masked_scatter_(y > 5.0, st.zeros(20, dtype=st.float64)) is y
    assert_matches_numpy(y, np.where(a > 5, 0.0, a))
    with pytest.raises(st.errors.DTypeError, match="only supports boolean masks"):
        x.masked_fill(st.tensor([1, 0, 1]).view(3, 1), 1.0)
    with pytest.raises(st.errors.ShapeError, match="Number of elements of source"):
        x.masked_scatter(x > 0, st.ones(3, dtype=st.float64))


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_nonzero(place):
    a = RNG.integers(0, 2, size=(7, 5))
    x = st.from_numpy(a, **place)
    assert_matches_numpy(st.nonzero(x), np.argwhere(a), dtype="int64")
    assert_matches_numpy(x.argwhere(), np.argwhere(a))
    for t, e in zip(x.nonzero(as_tuple=True), np.nonzero(a)):
        assert_matches_numpy(t, e)
    for t, e in zip(st.where(x > 0), np.nonzero(a)):
        assert_matches_numpy(t, e)
    assert st.nonzero(st.zeros(3, 0)).shape == (0, 2)
    assert st.argwhere(st.tensor(0.0)).shape == (0, 0)
    assert st.nonzero(st.tensor(5.0)).shape == (1, 0)
    assert [t.tolist() for t in st.tensor(0.0).nonzero(as_tuple=True)] == [[]]


@pytest.mark.parametrize(
    "place", [dict(shards=2), dict(shards=2, dim=1), dict(layout=st.Layout(chunks=(3, 0, 1)))]
)
def test_gradients(place):
    a = RNG.random((4, 3))
    x = st.from_numpy(a, **place).requires_grad_()
    i = st.tensor([2, 0, 2])
    u = st.from_numpy(RNG.random((3, 3)), shards=2).requires_grad_()
    m = st.from_numpy(a > 0.5)
    gc = st.autograd.gradcheck
    assert gc(lambda t: t.index_select(0, i), (x,))
    assert gc(lambda t: t.index_select(1, i[:2]), (x,))
    assert gc(lambda t, s: t.index_add(0, i, s, alpha=2.0), (x, u))
    assert gc(lambda t, s: t.index_copy(0, st.tensor([3, 0, 1]), s), (x, u))
    assert gc(lambda t: t.index_fill(1, i[:1], 2.0), (x,))
    v = st.from_numpy(RNG.random(3), shards=2).requires_grad_()
    assert gc(lambda t, s: t.index_put((i, st.tensor([0, 1, 1])), s, accumulate=True), (x, v))
    assert gc(lambda t, s: t.index_put((st.tensor([3, 1, 0]), st.tensor([0, 1, 1])), s), (x, v))
    assert gc(lambda t: t.masked_select(m), (x,))
    assert gc(lambda t: t.masked_fill(m, 0.5), (x,))
    w = st.from_numpy(RNG.random(14), shards=3).requires_grad_()
    assert gc(lambda t, s: t.masked_scatter(m, s), (x, w))


def test_masked_scatter_gradient_like_torch():
    s = st.tensor([1.0, 2.0, 3.0, 4.0], shards=2).requires_grad_()
    src = st.tensor([5.0, 6.0], shards=2).requires_grad_()
    o = s.masked_scatter(st.tensor([True, False, True, False]), src)
    o.backward(st.tensor([1.0, 2.0, 3.0, 4.0]))
    assert s.grad.tolist() == [0.0, 2.0, 0.0, 4.0] and src.grad.tolist() == [1.0, 3.0]


@settings(max_examples=examples(25), deadline=None)
@given(hs.data())
def test_index_select_and_nonzero_property(data):
    shape = tuple(data.draw(hs.lists(hs.integers(1, 4), min_size=1, max_size=3)))
    a = RNG.integers(0, 2, size=shape).astype(np.float64)
    dim = data.draw(hs.integers(0, len(shape) - 1))
    idx = RNG.integers(0, shape[dim], size=data.draw(hs.integers(0, 5)))
    x = st.from_numpy(a, **data.draw(placements(shape)))
    i = st.from_numpy(idx, **data.draw(placements(idx.shape)))
    assert_matches_numpy(x.index_select(dim, i), np.take(a, idx, axis=dim))
    assert_matches_numpy(x.nonzero(), np.argwhere(a))
    assert_matches_numpy(x.masked_select(x > 0), a[a > 0])


def test_out_of_place_masked_ops_broadcast_input_and_mask_like_torch():
    x = st.tensor([1.0, 2.0], shards=2)
    got = x.masked_scatter(st.tensor([[True], [False]]), st.tensor([7.0, 8.0, 9.0, 10.0]))
    assert got.shape == (2, 2) and got.tolist() == [[7.0, 8.0], [1.0, 2.0]]
    got = st.tensor([1.0]).masked_fill(st.tensor([[True], [False]]), 0.0)
    assert got.shape == (2, 1) and got.tolist() == [[0.0], [1.0]]
    for call in (  # in place, the input keeps its shape (torch refuses these too)
        lambda: x.masked_fill_(st.tensor([[True], [False]]), 0.0),
        lambda: x.masked_scatter_(st.tensor([[True], [False]]), st.tensor([7.0, 8.0, 9.0, 10.0])),
    ):
        with pytest.raises(st.ShapeError, match="must broadcast to input"):
            call()
    assert x.tolist() == [1.0, 2.0]


def test_index_add_alpha_float_on_integers_truncates_like_torch():
    # torch: torch.tensor([1, 2, 3]).index_add(0, torch.tensor([0]), torch.tensor([5]),
    # alpha=1.5) is tensor([6, 2, 3]) (alpha converted to the integer dtype)
    x = st.tensor([1, 2, 3], shards=2)
    assert x.index_add(0, st.tensor([0]), st.tensor([5]), alpha=1.5).tolist() == [6, 2, 3]


def test_scalar_source_takes_one_index_like_torch():
    # torch raises IndexError for a 0-d source with not exactly one index
    for x in (st.tensor(1.0), st.zeros(3, shards=2)):
        for n in (0, 2):
            with pytest.raises(IndexError, match="one"):
                x.index_copy(0, st.zeros(n, dtype=st.int64), st.tensor(5.0))
            with pytest.raises(IndexError, match="no dimensions"):
                x.index_add(0, st.zeros(n, dtype=st.int64), st.tensor(5.0))
    assert st.tensor(1.0).index_add(0, st.tensor([0]), st.tensor(5.0)).item() == 6.0


def test_index_fill_index_dtype_is_an_index_error_and_value_tensor_gets_a_gradient():
    x = st.zeros(4, 3, shards=2)
    for bad in (st.tensor([1], dtype=st.int32), st.tensor([1.0]), st.tensor([True] * 4)):
        with pytest.raises(st.IndexDTypeError):  # torch: IndexError "Expected dtype int64"
            x.index_fill(0, bad, 1.0)
        assert isinstance(st.IndexDTypeError("x"), (IndexError, TypeError))
    # torch: v.grad is the sum of the output grads at the filled points
    x = st.from_numpy(RNG.random((4, 3)), shards=3).requires_grad_()
    v = st.tensor(2.0).requires_grad_()
    w = np.arange(12.0).reshape(4, 3)
    out = x.index_fill(0, st.tensor([0, -2]), v)
    assert_matches_numpy(
        out, np.where(np.isin(np.arange(4), [0, 2])[:, None], 2.0, x.detach().numpy())
    )
    (out * st.from_numpy(w, shards=2)).sum().backward()
    assert v.grad.item() == pytest.approx(w[[0, 2]].sum())
    assert_matches_numpy(x.grad, np.where(np.isin(np.arange(4), [0, 2])[:, None], 0.0, w))


def test_masked_fill_broadcasts_an_empty_input_to_the_mask():
    # torch: torch.zeros(4, 0, 4).masked_fill(torch.ones(2, 4, 0, 4, dtype=bool), 0) has
    # shape (2, 4, 0, 4)
    out = st.zeros(4, 0, 4).masked_fill(st.ones(2, 4, 0, 4, dtype=st.bool), 0)
    assert tuple(out.shape) == (2, 4, 0, 4)


def test_take_refuses_non_long_indices_like_torch():
    # torch: take(): Expected a long tensor for index, but got Int
    x = st.arange(6.0, shards=2)
    for bad in (st.tensor([1], dtype=st.int32), st.tensor([1.0])):
        with pytest.raises(st.DTypeError, match="long"):
            st.take(x, bad)
    assert st.take(x, st.tensor([-1, 0])).tolist() == [5.0, 0.0]


def test_empty_index_ops_keep_operands_in_the_graph_like_torch():
    # torch: results of empty index_* / masked_scatter ops require grad and give zeros
    x = st.from_numpy(RNG.random(3), shards=2).requires_grad_()
    out = x.index_select(0, st.zeros(0, dtype=st.int64))
    assert out.requires_grad
    out.sum().backward()
    assert_matches_numpy(x.grad, np.zeros(3))
    for op in ("index_add", "index_copy"):
        x = st.zeros(2, shards=2).requires_grad_()
        s = st.zeros(0).requires_grad_()
        (getattr(x, op)(0, st.zeros(0, dtype=st.int64), s) * 3).sum().backward()
        assert_matches_numpy(x.grad, np.full(2, 3.0))
        assert_matches_numpy(s.grad, np.zeros(0))
    x = st.zeros(0, 2).requires_grad_()
    out = x.index_fill(1, st.tensor([1]), 1.5)
    assert out.requires_grad and tuple(out.shape) == (0, 2)
    s = st.zeros(0, 2).requires_grad_()
    x = st.ones(2, 1).requires_grad_()
    x.masked_scatter(st.tensor([False]), s).sum().backward()
    assert_matches_numpy(s.grad, np.zeros((0, 2)))
    assert_matches_numpy(x.grad, np.ones((2, 1)))


def test_index_select_checks_indices_of_an_empty_input_like_torch():
    # torch: torch.zeros(0, 3).index_select(1, torch.tensor([0, -2])) raises (negative), and
    # so does index 3; torch.zeros(0, 0).index_select(1, torch.tensor([0])) too
    x = st.zeros(0, 3, shards=2, dim=1)
    for bad in ([0, -2], [3]):
        with pytest.raises(st.IndexOutOfRange, match="dimension 1"):
            x.index_select(1, st.tensor(bad))
    assert tuple(x.index_select(1, st.tensor([0, 2, 2])).shape) == (0, 3)
    with pytest.raises(IndexError):
        st.zeros(0, 0).index_select(1, st.tensor([0]))


@pytest.mark.parametrize("shards", [1, 2])
def test_masked_fill_refuses_a_float_value_out_of_range_like_torch(shards):
    # torch: "value cannot be converted to type float without overflow"; inf and NaN pass
    m = st.tensor([True, False, True], shards=shards)
    x = st.tensor([1.0, 2.0, 3.0], shards=shards)
    for v, dt in [(1e300, st.float32), (70000.0, st.float16), (1e300, st.complex64)]:
        with pytest.raises(
            st.ValueOverflow, match=re.escape(f"{v!r} cannot be converted to type {dt.name}")
        ):
            x.to(dt).masked_fill(m, v)
    with pytest.raises(OverflowError, match="too big"):
        x.masked_fill_(m, 2**200)
    assert x.tolist() == [1.0, 2.0, 3.0]
    assert x.masked_fill(m, float("inf")).tolist() == [float("inf"), 2.0, float("inf")]
    assert x.to(st.float16).masked_fill(m, 65504.0).tolist() == [65504.0, 2.0, 65504.0]
    with pytest.raises(st.ValueOverflow, match="int64"):
        st.tensor([1, 2, 3], shards=shards).masked_fill(m, 2**63)
