"""tril/triu (masks from global positions), diagonals, kron, cross, vander and meshgrid
against NumPy on every layout, with their gradients (expected values from torch)."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))
GRAD_PLACES = [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)]


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_tril_triu_every_layout(place):
    x = st.from_numpy(A, **place)
    for k in (-8, -2, 0, 1, 3, 9):
        assert_matches_numpy(st.tril(x, k), np.tril(A, k))
        assert_matches_numpy(x.triu(diagonal=k), np.triu(A, k))
    # the mask moves nothing: the result keeps the input's layout
    assert st.tril(x).layout == x.layout
    y = st.from_numpy(A, **place)
    assert y.tril_(1) is y
    assert_matches_numpy(y, np.tril(A, 1))
    y.triu_(-1)
    assert_matches_numpy(y, np.triu(np.tril(A, 1), -1))


def test_tril_batched_and_errors():
    B = rng.standard_normal((3, 4, 5))
    x = st.from_numpy(B, shards=3)
    assert_matches_numpy(st.triu(x, 1), np.triu(B, 1))
    assert_matches_numpy(st.from_numpy(B, shards=2, dim=2).tril(-1), np.tril(B, -1))
    with pytest.raises(st.ArgumentError, match="at least 2 dimensions"):
        st.tril(st.ones(3))
    with pytest.raises(st.ArgumentError, match="1.5"):
        st.triu(st.ones(2, 2), 1.5)


@pytest.mark.parametrize("place", GRAD_PLACES, ids=["1", "rows", "cols"])
def test_triangular_gradients(place):
    x = st.from_numpy(rng.standard_normal((4, 5)), **place).requires_grad_()
    assert st.autograd.gradcheck(lambda t: st.tril(t, 1), (x,))
    assert st.autograd.gradcheck(lambda t: st.triu(t, -1), (x,))
    assert st.autograd.gradcheck(lambda t: st.diagonal(t, 1), (x,))
    assert st.autograd.gradcheck(lambda t: st.diag_embed(t, -1), (x,))
    assert st.autograd.gradcheck(lambda t: st.trace(t), (x,))
    y = st.from_numpy(rng.standard_normal((2, 3)), **place).requires_grad_()
    assert st.autograd.gradcheck(lambda a, b: st.kron(a, b), (x, y))


def test_tri_indices_as_torch():
    assert st.tril_indices(3, 3, 1).tolist() == [
        [0, 0, 1, 1, 1, 2, 2, 2],
        [0, 1, 0, 1, 2, 0, 1, 2],
    ]
    t = st.triu_indices(3, 4, -1)
    assert t.dtype == st.int64
    assert t.tolist() == [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2], [0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3]]
    assert st.tril_indices(0, 3).shape == (2, 0)
    assert st.tril_indices(2, 2, dtype=st.int32).dtype == st.int32
    with pytest.raises(st.ArgumentError, match="-1"):
        st.tril_indices(-1, 2)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_diagonal_every_layout(place):
    x = st.from_numpy(A, **place)
    for k in (-9, -3, 0, 2, 5, 7):
        for d1, d2 in ((0, 1), (1, 0), (-1, -2)):
            assert_matches_numpy(x.diagonal(k, d1, d2), np.diagonal(A, k, d1, d2))
        assert_matches_numpy(st.diag(x, k), np.diag(A, k))
    assert st.trace(x).item() == pytest.approx(np.trace(A))


def test_diag_embed_and_diag_vectors():
    B = rng.standard_normal((2, 3, 4))
    x = st.from_numpy(B, shards=2)
    want = np.zeros((2, 3, 4, 4))
    idx = np.arange(4)
    want[..., idx, idx] = B
    assert_matches_numpy(st.diag_embed(x), want)
    # torch.diag_embed(B, 1, 0, 2): the 5x5 planes in dims 0 and 2
    got = st.diag_embed(x, 1, 0, 2)
    assert got.shape == (5, 2, 5, 3)
    w = np.zeros((2, 3, 5, 5))
    w[..., idx, idx + 1] = B
    assert_matches_numpy(got, np.moveaxis(w, (2, 3), (0, 2)))
    v = np.arange(1.0, 5.0)
    for k in (-2, 0, 3):
        assert_matches_numpy(st.diag(st.from_numpy(v, shards=3), k), np.diag(v, k))
    with pytest.raises(st.ArgumentError, match="3D"):
        st.diag(st.ones(2, 2, 2))
    with pytest.raises(st.ArgumentError, match="identical 1, 1"):
        st.diagonal(st.ones(2, 3), 0, 1, 1)
    with pytest.raises(st.ArgumentError, match="dim 3"):
        st.trace(st.ones(2, 2, 2))
    assert st.trace(st.ones(2, 2, dtype=st.int32)).dtype == st.int64


def test_kron_cross_vander():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 2, 2))
    assert_matches_numpy(st.kron(st.from_numpy(a, shards=2), st.from_numpy(b)), np.kron(a, b))
    u, v = rng.standard_normal((5, 3)), rng.standard_normal((1, 3))
    got = st.cross(st.from_numpy(u, shards=3), st.from_numpy(v), dim=1)
    assert_matches_numpy(got, np.cross(u, v))
    assert_matches_numpy(st.from_numpy(u.T, shards=3, dim=1).cross(st.from_numpy(u.T)), 0 * u.T)
    with pytest.raises(st.ShapeError, match="Got 2 and 2"):
        st.cross(st.ones(2, 3), st.ones(2, 3), dim=0)
    with pytest.raises(st.ArgumentError, match="no dimension of size 3"):
        st.cross(st.ones(2, 4), st.ones(2, 4))
    x = np.array([1, 2, 3, 5])
    t = st.tensor(x, dtype=st.int32, shards=2)
    assert st.vander(t).dtype == st.int64
    assert_matches_numpy(st.vander(t), np.vander(x))
    assert_matches_numpy(st.vander(t, N=2, increasing=True), np.vander(x, 2, increasing=True))
    assert st.vander(st.tensor([True, False])).dtype == st.int64
    with pytest.raises(st.ArgumentError, match="one-dimensional"):
        st.vander(st.ones(2, 2))


def test_meshgrid_as_numpy():
    x, y, z = np.arange(3.0), np.arange(4.0), np.arange(2.0)
    tx, ty, tz = (st.from_numpy(t, shards=2) for t in (x, y, z))
    for ind in ("ij", "xy"):
        got = st.meshgrid(tx, ty, tz, indexing=ind)
        for g, w in zip(got, np.meshgrid(x, y, z, indexing=ind)):
            assert_matches_numpy(g, w)
    a, b = st.meshgrid([tx, ty])
    assert a.shape == (3, 4) and b.shape == (3, 4)
    with pytest.raises(st.ArgumentError, match="ab"):
        st.meshgrid(tx, indexing="ab")
    with pytest.raises(st.ArgumentError, match="2D"):
        st.meshgrid(st.ones(2, 2))


@pytest.mark.parametrize(
    "place",
    [dict(shards=1), dict(shards=2, dim=0), dict(layout=st.Layout.replicated())],
    ids=["whole", "batch-split", "replicated"],
)
def test_diagonal_of_whole_planes_is_a_view(place):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = st.from_numpy(a, **place)
    for k, d1, d2 in [(0, 1, 2), (1, 2, 1), (-1, 1, 2)]:
        d = x.diagonal(k, d1, d2)
        assert_matches_numpy(d, np.diagonal(a, k, d1, d2))
    d = x.diagonal(0, 1, 2)
    assert d.stride() == (12, 5)  # torch's strides: a view
    d[1, 2] = -1.0  # writes through to x[1, 2, 2]
    assert x[1, 2, 2].item() == -1.0
    g = st.from_numpy(np.arange(24.0).reshape(2, 3, 4), **place).requires_grad_(True)
    assert st.autograd.gradcheck(lambda t: t.diagonal(1, 2, 1) * 3, (g,))
