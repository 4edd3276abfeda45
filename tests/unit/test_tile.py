"""repeat/tile/repeat_interleave, movedim, unflatten, rot90, broadcasting, atleast_*d, the
*stack family and take against NumPy on several layouts, with gradients (torch's errors)."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(1)
A = rng.standard_normal((7, 4))
GRAD_PLACES = [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)]


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_repeat_tile_interleave(place):
    x = st.from_numpy(A, **place)
    assert_matches_numpy(x.repeat(2, 1, 3), np.tile(A, (2, 1, 3)))
    assert_matches_numpy(x.repeat((1, 2)), np.tile(A, (1, 2)))
    assert_matches_numpy(st.tile(x, (2,)), np.tile(A, (2,)))
    assert_matches_numpy(x.tile((2, 1, 1)), np.tile(A, (2, 1, 1)))
    for d in (0, 1, -1):
        assert_matches_numpy(x.repeat_interleave(2, dim=d), np.repeat(A, 2, axis=d))
    assert_matches_numpy(st.repeat_interleave(x, 3), np.repeat(A, 3))
    counts = [1, 0, 2, 3, 1, 0, 2]
    got = x.repeat_interleave(st.tensor(counts, shards=2), dim=0)
    assert_matches_numpy(got, np.repeat(A, counts, axis=0))
    assert_matches_numpy(x.repeat_interleave(st.tensor([2]), dim=1), np.repeat(A, 2, axis=1))


def test_repeat_errors_as_torch():
    x = st.ones(2, 3)
    with pytest.raises(st.ArgumentError, match="can not be smaller"):
        x.repeat(2)
    with pytest.raises(st.ArgumentError, match="non-negative"):
        x.repeat_interleave(-1)
    with pytest.raises(st.ShapeError, match="repeats.size\\(0\\) = 2 and input.size\\(1\\) = 3"):
        x.repeat_interleave(st.tensor([1, 2]), dim=1)
    assert st.repeat_interleave(st.tensor([1, 2, 0, 1])).tolist() == [0, 1, 1, 3]


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_movedim_unflatten_rot90_take(place):
    x = st.from_numpy(A, **place)
    assert_matches_numpy(st.movedim(x, 0, 1), np.moveaxis(A, 0, 1))
    assert_matches_numpy(x.moveaxis(-1, 0), np.moveaxis(A, -1, 0))
    assert_matches_numpy(x.unflatten(1, (2, -1)), A.reshape(7, 2, 2))
    for k in (-1, 0, 1, 2, 3, 6):
        assert_matches_numpy(x.rot90(k), np.rot90(A, k))
        assert_matches_numpy(st.rot90(x, k, (1, 0)), np.rot90(A, k, (1, 0)))
    idx = [[0, -1], [7, 19]]
    assert_matches_numpy(st.take(x, st.tensor(idx)), np.take(A, idx))


def test_shape_errors_as_torch():
    x = st.ones(2, 3)
    with pytest.raises(st.ArgumentError, match="repeated dim in `source`"):
        x.movedim((0, 0), (1, 0))
    with pytest.raises(st.ShapeError, match="don't multiply up to the size of dim 1 \\(3\\)"):
        x.unflatten(1, (2, 2))
    with pytest.raises(st.ArgumentError, match="dim0 = 0 and dim1 = 0"):
        st.rot90(x, 1, (0, 0))
    with pytest.raises(st.ArgumentError, match="total dims = 1"):
        st.rot90(st.ones(3))
    with pytest.raises(st.IndexOutOfRange, match="6"):
        st.take(x, st.tensor([6]))
    with pytest.raises(st.ShapeError, match="do not broadcast"):
        st.broadcast_tensors(x, st.ones(3, 2))
    with pytest.raises(st.ArgumentError, match="non-empty"):
        st.hstack([])


def test_broadcast_atleast_view_type_as():
    a, b = st.broadcast_tensors(st.ones(2, 1, shards=2), st.arange(3.0))
    assert a.shape == b.shape == (2, 3)
    assert b.tolist() == [[0.0, 1.0, 2.0]] * 2
    assert st.atleast_1d(st.tensor(1.0)).shape == (1,)
    assert st.atleast_2d(st.tensor(1.0)).shape == (1, 1)
    assert st.atleast_2d(st.ones(3)).shape == (1, 3)
    shapes = [t.shape for t in st.atleast_3d(st.tensor(1.0), st.ones(3), st.ones(2, 3))]
    assert shapes == [(1, 1, 1), (1, 3, 1), (2, 3, 1)]
    assert st.atleast_3d([st.ones(2, 3, 4)])[0].shape == (2, 3, 4)
    x = st.arange(6.0, shards=2)
    assert x.view_as(st.zeros(2, 3)).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(st.ShapeError, match="size 6"):
        x.view_as(st.zeros(5))
    assert st.tensor([1, 2]).type_as(st.zeros(1, dtype=st.float64)).dtype == st.float64


def test_stacks_as_numpy():
    u, v = rng.standard_normal(3), rng.standard_normal((3, 2))
    tu, tv = st.from_numpy(u, shards=2), st.from_numpy(v, shards=3)
    assert_matches_numpy(st.column_stack([tu, tv]), np.column_stack([u, v]))
    assert_matches_numpy(st.hstack([tu, tu]), np.hstack([u, u]))
    assert_matches_numpy(st.hstack([tv, tv]), np.hstack([v, v]))
    assert_matches_numpy(st.vstack([tu, tu]), np.vstack([u, u]))
    assert_matches_numpy(st.dstack([tu, tu]), np.dstack([u, u]))
    assert_matches_numpy(st.dstack([tv, tv]), np.dstack([v, v]))
    mixed = st.hstack([st.tensor([1, 2]), st.tensor([0.5])])
    assert mixed.dtype == st.float32 and mixed.tolist() == [1.0, 2.0, 0.5]


@pytest.mark.parametrize("place", GRAD_PLACES, ids=["1", "rows", "cols"])
def test_shape_gradients(place):
    x = st.from_numpy(rng.standard_normal((3, 4)), **place).requires_grad_()
    check = st.autograd.gradcheck
    assert check(lambda t: t.repeat(2, 1, 2), (x,))
    assert check(lambda t: t.repeat_interleave(2, dim=1), (x,))
    assert check(lambda t: t.repeat_interleave(st.tensor([2, 0, 1]), dim=0), (x,))
    assert check(lambda t: st.rot90(t, 1), (x,))
    assert check(lambda t: st.movedim(t, 0, 1), (x,))
    assert check(lambda t: st.take(t, st.tensor([[1, 11], [0, 1]])), (x,))
    assert check(lambda t: st.column_stack([t, t]), (x,))


# ------------------------------------------------- audit against torch (answers as literals)
@pytest.mark.parametrize("place", GRAD_PLACES)
def test_repeat_tile_interleave_always_copy(place):
    # torch: repeat/tile/repeat_interleave return a new tensor even when nothing repeats
    x = st.from_numpy(A, **place)
    for y in (
        x.repeat(1, 1),
        x.tile((1,)),
        x.tile(1, 1),
        x.repeat_interleave(1, 0),
        st.tile(x, ()),
    ):
        y.add_(100)
        assert_matches_numpy(x, A)
    assert_matches_numpy(x.tile(2, 1), np.tile(A, (2, 1)))  # varargs method form
    y = st.tensor(3.0).repeat(2)
    assert y.tolist() == [3.0, 3.0] and y.stride() == (1,) and y.is_contiguous()


def test_zero_dim_dims_as_torch():
    s = st.tensor(5.0)
    with pytest.raises(IndexError):  # torch refuses any dim of a 0-d input here
        st.repeat_interleave(s, 2, dim=0)
    assert st.repeat_interleave(s, 2).tolist() == [5.0, 5.0]
    for src, dst in [(0, -1), (-1, 0), ([0], [0])]:
        assert st.movedim(s, src, dst).item() == 5.0  # dims 0/-1 name the one "dim"
    with pytest.raises(IndexError):
        st.movedim(s, 1, 0)


def test_broadcast_shapes_ravel_reshape_as():
    assert st.broadcast_shapes((3, 1), (2, 1, 4)) == (2, 3, 4)
    assert st.broadcast_shapes(2, (3, 1)) == (3, 2)
    assert st.broadcast_shapes() == ()
    assert isinstance(st.broadcast_shapes((1,)), st.Size)
    with pytest.raises(RuntimeError):
        st.broadcast_shapes((2,), (3,))
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(st.ravel(x), A.ravel())
    assert_matches_numpy(x.t().ravel(), A.T.ravel())
    assert_matches_numpy(x.reshape_as(st.zeros(4, 7)), A.reshape(4, 7))
