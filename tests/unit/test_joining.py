"""Joining and splitting: cat, stack, split, chunk, unbind, flip and roll against NumPy, on
every layout and on inputs laid out differently, with the layout rules of
``sharded.ops.shape.prims.joining``."""

import itertools

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
    moved,
    placements,
)

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.arange(42.0).reshape(7, 6) - 10.5
B = -np.arange(18.0).reshape(3, 6)
C = np.arange(14.0).reshape(7, 2) + 100

# placements that fit any 2-D shape (PLACEMENTS' uneven one is for 7 rows)
MIXED = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=3),
    dict(shards=3, dim=1),
    dict(layout=st.Layout.block((2, 2))),
    dict(layout=st.Layout(boundaries=(1,))),
    dict(layout=st.Layout.replicated()),
]
MIXED_IDS = ["1", "2", "3", "dim1", "block", "cut1", "repl"]


@pytest.mark.parametrize(
    "pq",
    list(itertools.product(range(len(MIXED)), repeat=2)),
    ids=[
        f"{MIXED_IDS[i]}+{MIXED_IDS[j]}" for i, j in itertools.product(range(len(MIXED)), repeat=2)
    ],
)
def test_cat_and_stack_of_differently_laid_out_inputs(pq):
    p, q = MIXED[pq[0]], MIXED[pq[1]]
    x, y, z = st.from_numpy(A, **p), st.from_numpy(B, **q), st.from_numpy(C, **q)
    assert_matches_numpy(st.cat([x, y, x]), np.concatenate([A, B, A]))
    assert_matches_numpy(st.cat([y, x], dim=-2), np.concatenate([B, A]))
    assert_matches_numpy(st.cat([x, z], 1), np.concatenate([A, C], 1))
    assert_matches_numpy(st.cat([z, x, z], -1), np.concatenate([C, A, C], -1))
    x2 = st.from_numpy(A * 2, **q)
    for d in (0, 1, 2, -1, -3):
        assert_matches_numpy(st.stack([x, x2, x], d), np.stack([A, A * 2, A], d))
    assert_matches_numpy(x, A)  # inputs untouched
    assert_matches_numpy(y, B)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_cat_stack_of_views_and_dtypes(place):
    x = st.from_numpy(A, **place)
    assert_matches_numpy(st.cat([x.t(), x.t()[:2]]), np.concatenate([A.T, A.T[:2]]))
    assert_matches_numpy(
        st.cat([x[::2], x[[1, 1]], x[x[:, 0] > 0]]),
        np.concatenate([A[::2], A[[1, 1]], A[A[:, 0] > 0]]),
    )
    assert_matches_numpy(st.cat([x[:0], x, x[:0]]), A)
    assert_matches_numpy(
        st.stack([x[:, 0], x[:, 5], x[:, ::-1][:, 2]]),
        np.stack([A[:, 0], A[:, 5], A[:, ::-1][:, 2]]),
    )
    assert_matches_numpy(st.concatenate([x, x], 1), np.concatenate([A, A], 1))
    i = st.from_numpy(np.arange(12, dtype=np.int32).reshape(2, 6))
    r = st.cat([i, x])  # promotes as torch: int32 + float64 -> float64
    assert_matches_numpy(r, np.concatenate([np.arange(12).reshape(2, 6), A]), dtype=st.float64)
    assert_matches_numpy(
        st.cat([st.arange(3), st.ones(2)]), np.array([0, 1, 2, 1, 1], np.float32), dtype=st.float32
    )
    assert_matches_numpy(
        st.cat([st.tensor([True]), st.tensor([2])]), np.array([1, 2]), dtype=st.int64
    )
    assert_matches_numpy(st.stack([st.tensor(1.0), st.tensor(2.0)]), np.array([1.0, 2.0]))
    assert_matches_numpy(st.cat([x[:1], np.ones((1, 6))]), np.concatenate([A[:1], np.ones((1, 6))]))


def test_cat_stack_errors():
    x = st.from_numpy(A, shards=3)
    with pytest.raises(st.ShapeError, match=r"dimension 0.*\[7, 6\].*\[7, 2\]"):
        st.cat([x, st.from_numpy(C)])
    with pytest.raises(st.ShapeError):
        st.cat([x, st.zeros(6)])
    with pytest.raises(st.ShapeError, match="zero-dimensional"):
        st.cat([st.tensor(1.0), st.tensor(2.0)])
    with pytest.raises(st.ArgumentError, match="non-empty"):
        st.cat([])
    with pytest.raises(st.DimError):
        st.cat([x, x], 2)
    with pytest.raises(st.ShapeError, match=r"equal size.*\[7, 6\].*\[3, 6\] at entry 1"):
        st.stack([x, st.from_numpy(B)])
    with pytest.raises(st.ArgumentError):
        st.stack([])
    with pytest.raises(st.DimError):
        st.stack([x, x], 3)


# ---------------------------------------------------------------- layout rules of cat
def test_cat_along_a_split_dim_concatenates_the_chunk_lists():
    x = st.from_numpy(A, shards=3)  # rows 3, 2, 2 on workers 0, 1, 2
    y = st.from_numpy(B, shards=2)  # rows 2, 1 on workers 0, 1
    before = moved()
    r = st.cat([x, y])
    assert_matches_numpy(r, np.concatenate([A, B]))
    assert r.layout.chunk_sizes(0) == (3, 2, 2, 2, 1)
    assert r.layout.workers == (0, 1, 2, 0, 1)  # each input keeps its shards where they are
    assert moved() == before
    # an input split differently along the other dims is aligned to the first one's
    yc = st.from_numpy(B, shards=2, dim=1)
    r = st.cat([x, yc])
    assert_matches_numpy(r, np.concatenate([A, B]))
    assert r.layout.grid == (4, 1) and r.layout.chunk_sizes(0)[:3] == (3, 2, 2)


def test_cat_along_an_unsplit_dim_keeps_the_first_layout():
    x = st.from_numpy(A, shards=3)
    before = moved()
    r = st.cat([x, x, st.from_numpy(C, shards=3)], 1)
    assert_matches_numpy(r, np.concatenate([A, A, C], 1))
    assert r.layout.bounds == ((0, 3, 5, 7), (0, 14)) and r.layout.workers == x.layout.workers
    assert moved() == before  # matching row blocks are concatenated shard by shard
    r = st.cat([x, st.from_numpy(A, shards=2)], 1)  # other row split: aligned, then joined
    assert r.layout.bounds[0] == (0, 3, 5, 7)
    assert moved() > before
    assert_matches_numpy(r, np.concatenate([A, A], 1))
    s = st.stack([x, x])  # stack is cat of unsqueezed views: no bytes move either
    before = moved()
    s = st.stack([x, x], 1)
    assert s.layout.bounds == ((0, 3, 5, 7), (0, 2), (0, 6)) and moved() == before
    assert_matches_numpy(s, np.stack([A, A], 1))


def test_cat_keeps_the_shards_of_a_split_input_after_an_unsplit_one():
    x = st.from_numpy(A, shards=3)
    head = st.from_numpy(B[:1], shards=1)  # e.g. a class token prepended to a sharded batch
    before = moved()
    r = st.cat([head, x])
    assert_matches_numpy(r, np.concatenate([B[:1], A]))
    assert r.layout.grid[0] > 1, f"everything gathered into {r.layout}"
    assert moved() - before <= B[:1].nbytes


def test_cat_when_the_first_input_splits_a_size_one_dim():
    x = st.from_numpy(np.ones((2, 1)), layout=st.Layout(chunks={1: [0, 1]}))
    y = st.from_numpy(np.full((2, 1), 2.0))
    assert_matches_numpy(st.cat([x, y]), np.concatenate([np.ones((2, 1)), np.full((2, 1), 2.0)]))


# ---------------------------------------------------------------- split, chunk, unbind
def _np_split(a, size_or_sections, d):
    n = a.shape[d]
    if isinstance(size_or_sections, int):
        cuts = list(range(size_or_sections, n, size_or_sections))
    else:
        cuts = list(np.cumsum(size_or_sections)[:-1])
    return np.split(a, cuts, d)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_split_chunk_unbind_match_numpy(place):
    x = st.from_numpy(A.copy(), **place)
    before = moved()
    for d in (0, 1, -1):
        n = A.shape[d]
        sections = [1, 0, 4, 1] if n == 6 else [2, 0, 5]
        for s in (1, 2, 4, n, n + 3, sections):
            ps, want = st.split(x, s, d), _np_split(A, s, d)
            assert len(ps) == len(want), (s, d)
            for p, w in zip(ps, want):
                assert_matches_numpy(p, w)
            assert len(x.split(s, d)) == len(want)
        for c in range(1, 9):
            k = -(-n // c)  # torch.chunk: pieces of ceil(n / c); fewer pieces if they run out
            ps, want = st.chunk(x, c, d), _np_split(A, k, d)
            assert len(ps) == len(want) <= c
            for p, w in zip(ps, want):
                assert_matches_numpy(p, w)
            assert [tuple(p.shape) for p in x.chunk(c, d)] == [w.shape for w in want]
        us = x.unbind(d)
        assert len(us) == n
        for i, u in enumerate(us):
            assert_matches_numpy(u, np.take(A, i, d))
        assert [r.tolist() for r in x] == A.tolist()  # iteration unbinds dim 0
    assert moved() == before  # all of them are views
    # ... which share storage with x
    top, bottom = st.split(x, [3, 4])
    a = A.copy()
    bottom.mul_(-1)
    a[3:] *= -1
    assert_matches_numpy(x, a)
    x.unbind(1)[2].fill_(0.5)
    a[:, 2] = 0.5
    assert_matches_numpy(x, a)
    assert_matches_numpy(top, a[:3])


def test_split_chunk_errors_and_edges():
    x = st.from_numpy(A, shards=3)
    with pytest.raises(st.ArgumentError, match="do not add up to size 7"):
        st.split(x, [3, 3])
    with pytest.raises(st.ArgumentError, match="positive"):
        st.split(x, 0)
    with pytest.raises(st.ArgumentError, match="greater than 0"):
        st.chunk(x, 0)
    with pytest.raises(st.DimError):
        st.split(x, 2, 2)
    with pytest.raises(st.DimError):
        x.unbind(-3)
    assert [tuple(p.shape) for p in st.chunk(st.zeros(5), 4)] == [(2,), (2,), (1,)]
    assert [tuple(p.shape) for p in st.chunk(st.zeros(6), 4)] == [(2,), (2,), (2,)]
    e = st.split(st.zeros(0, 2), 2)
    assert len(e) == 1 and tuple(e[0].shape) == (0, 2)


# ---------------------------------------------------------------- flip and roll
@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_flip_and_roll_match_numpy(place):
    x = st.from_numpy(A.copy(), **place)
    for dims in (0, 1, [0, 1], (-1,), [1, 0], ()):
        r = st.flip(x, dims)
        assert_matches_numpy(r, np.flip(A, dims) if dims != () else A)
    for s, d in [
        (1, 0),
        (-1, 0),
        (3, 1),
        (8, 0),
        (0, 1),
        (-13, 1),
        (7, 0),
        ((1, 2), (0, 1)),
        ((2, 2), (1, 1)),
        ((-3, 1), (-1, -2)),
        (7, None),
        (-50, None),
        (0, None),
    ]:
        assert_matches_numpy(st.roll(x, s, d), np.roll(A, s, d))
    assert_matches_numpy(x.flip([0]), A[::-1])
    assert_matches_numpy(x.roll(2, 1), np.roll(A, 2, 1))
    # flip and roll are copies: writing to them leaves x alone
    f, r = st.flip(x, 0), st.roll(x, 0, 0)
    f.add_(1)
    r.add_(1)
    assert_matches_numpy(x, A)
    assert_matches_numpy(st.roll(st.from_numpy(A[:, :0], **place), 3, 0), A[:, :0])


def test_flip_moves_nothing_and_roll_keeps_the_layout():
    x = st.from_numpy(A, shards=3)  # rows 3, 2, 2
    before = moved()
    f = st.flip(x, 0)
    assert_matches_numpy(f, A[::-1])
    assert moved() == before  # each shard flips its own rows; the chunk order reverses
    assert f.layout.chunk_sizes(0) == (2, 2, 3)
    before = moved()
    r = st.roll(x, 1, 0)
    assert_matches_numpy(r, np.roll(A, 1, 0))
    assert r.layout == x.layout  # not gathered: each shard got the rows rotating into it
    assert 0 < moved() - before <= 3 * A[0].nbytes  # one row crosses each of the 3 borders
    before = moved()
    r = st.roll(x, 2, 1)  # the columns are whole in every shard
    assert_matches_numpy(r, np.roll(A, 2, 1))
    assert r.layout == x.layout and moved() == before


# ---------------------------------------------------------------- hypothesis
@hs.composite
def join_cases(draw):
    nd = draw(hs.integers(1, 3))
    shape = [draw(hs.integers(1, 4)) for _ in range(nd)]
    d = draw(hs.integers(0, nd - 1))
    arrays = []
    for i in range(draw(hs.integers(1, 3))):
        s = list(shape)
        s[d] = draw(hs.integers(0, 4))
        a = np.arange(int(np.prod(s)), dtype=np.float64).reshape(s) + 100 * i
        arrays.append((a, draw(placements(tuple(s)))))
    return arrays, d


def test_hypothesis_joining_matches_numpy():
    @settings(
        max_examples=examples(60),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(join_cases(), hs.integers(-5, 5))
    def run(case, shift):
        arrays, d = case
        ts = [st.from_numpy(a, **p) for a, p in arrays]
        nps = [a for a, _ in arrays]
        cat = st.cat(ts, d)
        assert_matches_numpy(cat, np.concatenate(nps, d))
        assert_matches_numpy(st.roll(cat, shift, d), np.roll(np.concatenate(nps, d), shift, d))
        assert_matches_numpy(st.flip(cat, d), np.flip(np.concatenate(nps, d), d))
        same = [t for t, a in zip(ts, nps) if a.shape == nps[0].shape]
        assert_matches_numpy(
            st.stack(same, d), np.stack([a for a in nps if a.shape == nps[0].shape], d)
        )
        for p, w in zip(st.split(cat, [a.shape[d] for a in nps], d), nps):
            assert_matches_numpy(p, w)

    run()


def test_joining_kernels_with_numpy():
    from sharded.core.registry import PRIMITIVES
    from sharded.runtime.worker.core import KERNELS as K

    a, b = np.ones((2, 1)), np.zeros((2, 2))
    assert K["cat"](np, a, b, axis=1).tolist() == [[1, 0, 0], [1, 0, 0]]
    assert PRIMITIVES["cat"].kernels == ("cat", "copy")
    assert PRIMITIVES["reshard"].kernels == ("copy",)


def test_replicate_and_iteration():
    x = st.arange(6, shards=3).view(3, 2)
    r = x.replicate()
    assert r.layout.is_replicated and r.tolist() == x.tolist()
    assert [row.tolist() for row in x] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError, match="0-d"):
        iter(st.tensor(1.0))


def test_chunk_of_an_empty_dim_gives_chunks_empty_pieces_like_torch():
    # torch's answers (issue 12): chunk(zeros(0, 3), k) is k pieces of (0, 3)
    for k in (1, 2, 3):
        pieces = st.chunk(st.zeros(0, 3), k)
        assert [tuple(p.shape) for p in pieces] == [(0, 3)] * k
    assert [tuple(p.shape) for p in st.chunk(st.zeros(3, 0), 2, 1)] == [(3, 0), (3, 0)]
    assert [tuple(p.shape) for p in st.split(st.zeros(0, 3), 2)] == [(0, 3)]  # split: one
    assert [tuple(p.shape) for p in st.chunk(st.zeros(6), 4)] == [(2,), (2,), (2,)]
    assert [tuple(p.shape) for p in st.chunk(st.zeros(1, 3), 2)] == [(1, 3)]


# ------------------------------------------------- audit against torch (answers as literals)
@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)])
def test_cat_skips_1d_empty_inputs_as_torch(place):
    x = st.from_numpy(A, **place)
    e = st.from_numpy(np.zeros(0, np.float64))
    assert_matches_numpy(st.cat([e, x, e]), A)  # torch: a (0,) tensor joins anything
    assert_matches_numpy(st.cat([e, x], dim=1), A)
    assert_matches_numpy(st.concat([x, x], dim=-1), np.concatenate([A, A], 1))
    r = st.cat([st.zeros(0, dtype=st.float64), st.ones(2, 2)])
    assert r.dtype == st.float64 and tuple(r.shape) == (2, 2)  # still promotes the dtype
    assert tuple(st.cat([e, e]).shape) == (0,)
    with pytest.raises(IndexError):
        st.cat([e, x], dim=2)
    with pytest.raises(ValueError):
        st.cat([x, st.zeros(0, 6)], dim=1)  # a 2-d empty one is not skipped


def test_stack_family_checks_sizes_as_torch():
    for f in (st.vstack, st.row_stack, st.dstack, st.column_stack):
        with pytest.raises(RuntimeError):
            f([st.ones(2), st.ones(3)])  # torch: sizes must match (vstack gave a (2, 2))
    for f in (st.hstack, st.vstack, st.dstack, st.column_stack):
        with pytest.raises(RuntimeError):
            f([st.ones(2, 2), st.ones(3, 3)])
    assert st.row_stack([st.tensor([1, 2]), st.tensor([3, 4])]).tolist() == [[1, 2], [3, 4]]
    assert st.hstack([st.zeros(0), st.ones(2, 3)]).shape == (2, 3)  # (0,) skipped


@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)])
def test_flip_forms_and_errors(place):
    x = st.from_numpy(A, **place)
    assert_matches_numpy(x.flip(0, 1), A[::-1, ::-1])  # varargs method form
    assert_matches_numpy(st.fliplr(x), A[:, ::-1])
    assert_matches_numpy(x.flipud(), A[::-1])
    assert_matches_numpy(st.flip(x, dims=(-1,)), A[:, ::-1])
    for bad in ([0, 0], [1, -1]):
        with pytest.raises(RuntimeError):
            x.flip(bad)
    with pytest.raises(RuntimeError):
        st.fliplr(st.ones(3))  # torch: Input must be >= 2-d
    with pytest.raises(RuntimeError):
        st.flipud(st.tensor(1.0))


def test_zero_dim_inputs_raise_typed_errors_as_torch():
    s = st.tensor(1.0)
    for f, kind in [
        (lambda: st.split(s, 1), RuntimeError),
        (lambda: st.chunk(s, 1), RuntimeError),
        (lambda: st.unbind(s), IndexError),
        (lambda: s.narrow(0, 0, 1), RuntimeError),
        (lambda: st.roll(s, 1, 0), IndexError),
        (lambda: st.tensor_split(s, 2), RuntimeError),
    ]:
        with pytest.raises(kind) as e:
            f()
        assert isinstance(e.value, st.ShardedError)
    assert st.roll(s, 3).item() == 1.0  # without dims it rolls the flattened tensor


@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)])
def test_tensor_split_and_hvdsplit(place):
    a = np.arange(42.0).reshape(7, 6)
    x = st.from_numpy(a, **place)

    def same(got, want):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_matches_numpy(g, w)

    # torch: 7 in 3 sections -> 3, 2, 2; indices slice like Python, clipped, possibly empty
    same(st.tensor_split(x, 3), [a[:3], a[3:5], a[5:]])
    same(x.tensor_split(4, dim=1), [a[:, :2], a[:, 2:4], a[:, 4:5], a[:, 5:]])
    same(st.tensor_split(x, [5, 2]), [a[:5], a[5:2], a[2:]])
    same(st.tensor_split(x, (-1,), dim=1), [a[:, :-1], a[:, -1:]])
    same(st.tensor_split(x, [9]), [a, a[7:]])
    same(st.tensor_split(x, st.tensor([1, 3]), dim=0), [a[:1], a[1:3], a[3:]])
    same(st.tensor_split(x, st.tensor(2), dim=1), [a[:, :3], a[:, 3:]])
    same(st.tensor_split(x, 9), [a[i : i + 1] for i in range(7)] + [a[7:], a[7:]])
    same(st.hsplit(x, 3), [a[:, :2], a[:, 2:4], a[:, 4:]])
    same(x.vsplit([1, 4]), [a[:1], a[1:4], a[4:]])
    same(st.hsplit(st.arange(6.0), 2), [np.arange(3.0), np.arange(3.0, 6)])
    b = np.arange(24.0).reshape(2, 2, 6)
    same(st.dsplit(st.from_numpy(b), [2]), [b[:, :, :2], b[:, :, 2:]])
    for bad in (0, -1):
        with pytest.raises(RuntimeError):
            st.tensor_split(x, bad)
    with pytest.raises(RuntimeError):
        st.hsplit(x, 4)  # 6 is not divisible by 4
    with pytest.raises(RuntimeError):
        st.vsplit(st.ones(4), 2)  # needs 2 dims
    with pytest.raises(RuntimeError):
        st.dsplit(x, 2)  # needs 3 dims
    with pytest.raises(TypeError):
        st.tensor_split(x, st.tensor([1.0]))  # torch: indices must be long
    # the pieces are views: a write through one is seen in the base
    p = st.tensor_split(x, [2])[1]
    p.add_(1000)
    assert_matches_numpy(x, np.concatenate([a[:2], a[2:] + 1000]))


@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=3), dict(shards=2, dim=1)])
def test_unfold_windows_and_gradient(place):
    a = np.arange(42.0).reshape(7, 6)

    def windows(arr, d, size, step):
        d %= arr.ndim
        n = (arr.shape[d] - size) // step + 1
        w = [np.take(arr, range(i * step, i * step + size), axis=d) for i in range(n)]
        return np.moveaxis(np.stack(w, axis=d), d + 1, -1)

    x = st.from_numpy(a, **place)
    for d, size, step in [(0, 2, 1), (0, 3, 2), (1, 2, 2), (-1, 6, 1), (1, 4, 5), (0, 0, 3)]:
        assert_matches_numpy(x.unfold(d, size, step), windows(a, d, size, step))
    assert x.unfold(0, 2, 1).shape == (6, 6, 2)
    assert st.tensor(2.0).unfold(0, 1, 1).tolist() == [2.0]  # torch: a 0-d tensor -> (1,)
    for args in [(0, 8, 1), (0, 1, 0), (0, -1, 1)]:
        with pytest.raises(RuntimeError):
            x.unfold(*args)
    with pytest.raises(IndexError):
        x.unfold(2, 1, 1)
    # overlapping windows: every element's gradient counts the windows that hold it
    x = st.from_numpy(np.arange(5.0), requires_grad=True, **place if place.get("dim") != 1 else {})
    x.unfold(0, 3, 1).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]


def test_torch_keyword_names_and_block_diag():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = st.from_numpy(a, shards=2)
    assert [p.shape for p in x.split(split_size=2, dim=1)] == [(2, 2, 4), (2, 1, 4)]
    assert [p.shape for p in st.tensor_split(x, sections=2, dim=2)] == [(2, 3, 2)] * 2
    assert [p.shape for p in x.tensor_split(indices=[1], dim=1)] == [(2, 1, 4), (2, 2, 4)]
    assert [p.shape for p in st.hsplit(x, sections=3)] == [(2, 1, 4)] * 3
    assert_matches_numpy(st.swapaxes(x, axis0=0, axis1=2), a.swapaxes(0, 2))
    assert_matches_numpy(st.permute(x, dims=(2, 0, 1)), a.transpose(2, 0, 1))
    assert_matches_numpy(x.repeat(repeats=(1, 2, 1)), np.tile(a, (1, 2, 1)))
    assert_matches_numpy(x[:, :1].expand(size=(2, 3, 4)), np.broadcast_to(a[:, :1], (2, 3, 4)))
    assert_matches_numpy(st.broadcast_to(x, size=(2, 2, 3, 4)), np.broadcast_to(a, (2, 2, 3, 4)))
    assert_matches_numpy(x.view(size=(6, 4)), a.reshape(6, 4))
    assert_matches_numpy(st.reshape(x, shape=(4, 6)), a.reshape(4, 6))
    y = st.narrow_copy(x, 2, 1, 2)
    y.add_(100)  # a copy: the base is untouched
    assert_matches_numpy(x, a)
    assert_matches_numpy(y, a[:, :, 1:3] + 100)
    # torch.block_diag: 0-d -> 1x1, 1-d -> a row, dtypes promote, zeros elsewhere
    got = st.block_diag(st.tensor(1), st.tensor([2.0, 3.0]), st.ones(2, 1, dtype=st.float64))
    want = [[1, 0, 0, 0], [0, 2, 3, 0], [0, 0, 0, 1], [0, 0, 0, 1]]
    assert_matches_numpy(got, np.array(want, np.float64), dtype=st.float64)
    assert st.block_diag().shape == (1, 0)
    assert st.block_diag(st.zeros(0, 2), st.ones(1, 0)).shape == (1, 2)
    assert st.block_diag(st.tensor([True]), st.tensor([2])).dtype == st.int64
    with pytest.raises(RuntimeError):
        st.block_diag(st.ones(2, 2, 2))
    w = st.from_numpy(np.arange(4.0).reshape(2, 2), requires_grad=True)
    (st.block_diag(w, w) * st.arange(16.0).reshape(4, 4)).sum().backward()
    assert w.grad.tolist() == [[0 + 10, 1 + 11], [4 + 14, 5 + 15]]


@pytest.mark.parametrize("shards", [1, 2])
def test_narrow_start_tensor_must_be_0d_integral_like_torch(shards):
    # torch: "start must be an 0-dim integral Tensor." for 1-d, float or bool starts
    y = st.arange(10, shards=shards)
    assert y.narrow(0, st.tensor(2), 3).tolist() == [2, 3, 4]
    assert y.narrow(0, st.tensor(-3), 3).tolist() == [7, 8, 9]
    for start in (st.tensor([2]), st.tensor([2, 3]), st.tensor(2.0), st.tensor(True)):
        with pytest.raises(st.ArgumentError, match="0-dim integral Tensor"):
            st.narrow(y, 0, start, 3)
