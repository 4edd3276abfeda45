"""``x[index tensor]``, ``x[mask]`` and their setitem forms, routed worker to worker: NumPy's
answers (torch's literals where they differ), gradients, a driver that reads no index value,
and ``st.jit`` of a vectorized batch gather."""

import numpy as np
import pytest

import sharded as st
from sharded.errors import IndexOutOfRange

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.arange(24.0).reshape(2, 3, 4)
PLACES = [{}, dict(shards=2, dim=0), dict(shards=2, dim=1), dict(shards=2, dim=2)]
IDS = ["whole", "split0", "split1", "split2"]


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_getitem_matches_numpy(place):
    x = st.from_numpy(A, **place)
    i = np.array([1, -1, 0, 1])
    j = np.array([[0], [3]])
    ti, tj = st.from_numpy(i, shards=2), st.from_numpy(j)
    for key, want in [
        ((ti,), A[i]),
        ((slice(None), ti % 3), A[:, i % 3]),
        ((ti, slice(None)), A[i, :]),
        ((Ellipsis, tj), A[..., j]),
        ((slice(None), ti[:2] % 3, tj), A[:, i[:2] % 3, j]),  # adjacent: dims stay in place
        ((ti[:2], slice(None), tj), A[i[:2], :, j]),  # apart: broadcast dims go first
        ((slice(None), st.tensor([True, False, True])), A[:, [True, False, True]]),
        (
            (st.tensor([[True, False, True], [False, False, True]]),),
            A[np.array([[1, 0, 1], [0, 0, 1]], bool)],
        ),
    ]:
        got = x[key]
        assert got.shape == want.shape, key
        np.testing.assert_array_equal(got.numpy(), want)
    # torch (not NumPy): an int selects before the advanced index
    assert tuple(x[0, :, tj].shape) == (3, 2, 1)
    assert x[0, :, tj][:, :, 0].tolist() == [[0.0, 3.0], [4.0, 7.0], [8.0, 11.0]]
    # int32 indices, an empty index, a bool mask over all dims (counts only)
    assert x[st.tensor([1], dtype=st.int32)].shape == (1, 3, 4)
    assert tuple(x[:, st.tensor([], dtype=st.int64)].shape) == (2, 0, 4)
    np.testing.assert_array_equal(x[x > 20].numpy(), A[A > 20])


@pytest.mark.parametrize("place", PLACES[:3], ids=IDS[:3])
def test_bad_indices_raise(place):
    x = st.from_numpy(A, **place)
    with pytest.raises(IndexOutOfRange, match="index 5 is out of bounds for dimension 1"):
        x[:, st.tensor([0, 5])]
    with pytest.raises(IndexOutOfRange, match="index -3 is out of bounds for dimension 0"):
        x[st.tensor([-3])]
    with pytest.raises(IndexError, match="shape mismatch"):
        x[st.tensor([0, 1]), st.tensor([0, 1, 2])]
    with pytest.raises(IndexError, match="must be long, int, byte or bool"):
        x[st.tensor([0.0])]
    with pytest.raises(IndexOutOfRange, match="index 7"):  # checked for an empty result too
        x[:0, st.tensor([7])]


@pytest.mark.parametrize("place", PLACES, ids=IDS)
def test_setitem_matches_numpy(place):
    i = np.array([2, -1])
    for key, value in [
        ((st.tensor([1, -1]),), 7.0),
        ((slice(None), st.from_numpy(i, shards=2)), np.array([[1.0], [2.0]])),
        (
            (st.tensor([0]), slice(None), st.tensor([3, 0])),
            st.tensor([[-1.0], [-2.0]], dtype=st.float64),
        ),
        ((st.from_numpy(A > 15),), st.arange(8, dtype=st.float64)),
        ((slice(None), st.tensor([False, True, False])), -5.0),
    ]:
        x = st.from_numpy(A, **place)
        x[key] = value
        npkey = tuple(k.numpy() if isinstance(k, st.ShardedTensor) else k for k in key)
        npval = value.numpy() if isinstance(value, st.ShardedTensor) else value
        want = A.copy()
        want[npkey] = npval
        np.testing.assert_array_equal(x.numpy(), want)
    x = st.zeros(4, dtype=st.int64)
    x[st.tensor([1, 2])] = 2.7  # a scalar is cast (torch)
    assert x.tolist() == [0, 2, 2, 0]
    x[st.tensor([1, 2])] = st.tensor([1.5, 2.5])  # a tensor too (torch refuses it)
    assert x.tolist() == [0, 1, 2, 0]
    with pytest.raises(IndexOutOfRange, match="index 4"):
        x[st.tensor([4])] = 1
    assert x.tolist() == [0, 1, 2, 0]  # nothing written


@pytest.mark.parametrize("place", [{}, dict(shards=2, dim=0), dict(shards=2, dim=1)])
def test_gradients(place):
    w = st.from_numpy(np.arange(24.0).reshape(6, 4), **place).requires_grad_()
    c = st.arange(18, dtype=st.float64).reshape(6, 3)
    (w[:, st.tensor([1, 1, -1])] * c).sum().backward()
    assert w.grad.tolist() == [  # torch's: repeated indices accumulate
        [0.0, 1.0, 0.0, 2.0],
        [0.0, 7.0, 0.0, 5.0],
        [0.0, 13.0, 0.0, 8.0],
        [0.0, 19.0, 0.0, 11.0],
        [0.0, 25.0, 0.0, 14.0],
        [0.0, 31.0, 0.0, 17.0],
    ]
    w.grad = None
    w[st.tensor([[0, 5, 0], [5, 5, -1]], shards=2)].sum().backward()
    assert w.grad[:, 0].tolist() == [2.0, 0.0, 0.0, 0.0, 0.0, 4.0]
    # setitem: overwritten points get no gradient, the value's flows back (torch's)
    z = st.zeros(5, dtype=st.float64, **({} if place.get("dim") == 1 else place)).requires_grad_()
    v = st.tensor([1.0, 2.0], dtype=st.float64).requires_grad_()
    y = z * 1
    y[st.tensor([3, 0])] = v * 3
    (y * st.arange(5, dtype=st.float64)).sum().backward()
    assert z.grad.tolist() == [0.0, 1.0, 2.0, 0.0, 4.0]
    assert v.grad.tolist() == [9.0, 0.0]


def _spy_reads(monkeypatch, ex):
    keys = []
    fetch = type(ex).fetch

    def spy(self, items, *a, **k):
        keys.extend(it[1] for it in items)
        return fetch(self, items, *a, **k)

    monkeypatch.setattr(type(ex), "fetch", spy)
    return keys


def test_driver_reads_no_index_value(monkeypatch):
    x = st.from_numpy(np.arange(40.0).reshape(8, 5), shards=2)
    idx = st.from_numpy(np.array([[7, 0], [-1, 3], [2, 2]]), shards=2)  # split itself
    mask = st.from_numpy(np.arange(40).reshape(8, 5) % 3 == 0, shards=2)
    cols = st.tensor([4, 0, 4])
    reads = _spy_reads(monkeypatch, x._executor())
    y, m, c = x[idx], x[mask], x[:, cols]
    x[idx] = -1.0
    x[:, cols] = st.ones(8, 3, dtype=st.float64)
    forbidden = set(idx._keys) | set(mask._keys) | set(cols._keys)
    assert not forbidden & set(reads)
    monkeypatch.undo()
    a = np.arange(40.0).reshape(8, 5)
    np.testing.assert_array_equal(y.numpy(), a[idx.numpy()])
    np.testing.assert_array_equal(m.numpy(), a[mask.numpy()])
    np.testing.assert_array_equal(c.numpy(), a[:, [4, 0, 4]])
    a[idx.numpy()] = -1.0
    a[:, [4, 0, 4]] = 1.0
    np.testing.assert_array_equal(x.numpy(), a)


def test_jit_batch_gather():
    @st.jit
    def batch_gather(x, indices, offset):
        flat = x.reshape(-1)
        return flat[indices + offset]

    a = np.arange(20.0).reshape(4, 5)
    x = st.from_numpy(a, shards=2)
    off = (np.arange(4) * 5)[:, None]
    rng = np.random.default_rng(0)
    for _ in range(5):  # traced, traced again, then replayed
        i = rng.integers(-5, 5, (4, 3))
        got = batch_gather(x, st.from_numpy(i, shards=2), st.from_numpy(off))
        np.testing.assert_array_equal(got.numpy(), a.reshape(-1)[i + off])
    bad = st.from_numpy(np.full((4, 3), 9), shards=2)
    with pytest.raises(IndexError, match="index 24 is out of bounds for dimension 0 with size 20"):
        batch_gather(x, bad, st.from_numpy(off)).numpy()  # raised at the read


@pytest.mark.parametrize("xs", [1, 2, 3, 10])
@pytest.mark.parametrize("ish", [None, 2, 3])
def test_gather_any_shard_counts_in_small_chunks(monkeypatch, xs, ish):
    # route_split buckets in chunks of points (3 here: several chunks per block); the index
    # on another number of shards than x, every kind of block: all local, all remote, mixed,
    # negative, int32, empty; 10 shards of x take the sorted bucketing (more than 8 owners)
    from sharded.ops.index.kernels import route

    monkeypatch.setattr(route, "CHUNK", 3)
    a = np.arange(40.0) * 1.5
    x = st.from_numpy(a, shards=xs)
    place = {} if ish is None else dict(shards=ish)
    for i in [
        np.arange(40),  # each block on its own shard where the counts match
        np.arange(40)[::-1].copy(),  # each block on the far shards
        np.array([39, 0, -1, -40, 20, 20, 7, -21, 33, 1, 0]),
        np.array([5] * 9),  # one owner for all
        np.zeros(0, np.int64),
    ]:
        for dt in (np.int64, np.int32):
            got = x[st.from_numpy(i.astype(dt), **place)]
            np.testing.assert_array_equal(got.numpy(), a[i])
    b = np.arange(60.0).reshape(6, 10)
    y = st.from_numpy(b, shards=min(xs, 6))  # rows split: the column index takes a row's own
    i = st.from_numpy(np.array([[9, -10], [3, 3], [0, 5]]), **place)
    np.testing.assert_array_equal(y[:, i].numpy(), b[:, i.numpy()])
    r = st.from_numpy(np.array([[5, -6], [3, 3], [0, 2]]), **place)
    np.testing.assert_array_equal(y[r, 2:].numpy(), b[r.numpy(), 2:])
    np.testing.assert_array_equal(
        st.gather(y, 1, y.to(st.int64) % 10).numpy(),
        np.take_along_axis(b, b.astype(np.int64) % 10, 1),
    )
    with pytest.raises(
        IndexOutOfRange, match=r"index -41 is out of bounds .* size 40 \(also out of range: 40\)"
    ):
        x[st.from_numpy(np.array([3, -41, 40, -41]), **place)]


def test_route_kernels_write_into_pooled_blocks():
    # a worker hands its kernels freed blocks (a fresh one costs its page faults): the
    # buckets, the picked values and the placed block are written into them
    from sharded.ops.index.kernels import route as R

    given = []

    def alloc(shape, dtype):
        given.append(np.full(shape, -7, dtype=dtype))
        return given[-1]

    idx = np.array([5, -1, 0, 9, 4, 6, 2])
    out = R.route_split(np, idx, offs=(0,), shape=(7,), cmap=(("i", 0),), sizes=(10,),
                        bounds=((0, 5, 10),), cands=[(0,), (1,)], nidx=1, wrap=True,
                        alloc=alloc)  # fmt: skip
    status, lc0, p0, lc1, p1 = out
    assert status.tolist() == [0, 0, 0, 3, 4]
    assert lc0.tolist() == [[0, 4, 2]] and p0.tolist() == [2, 4, 6]
    assert lc1.tolist() == [[0, 4, 4, 1]] and p1.tolist() == [0, 1, 3, 5]
    assert all(any(o is g for g in given) for o in (lc0, p0, lc1, p1))
    xs = [np.arange(5.0), np.arange(5.0, 10.0)]
    v0, v1 = (R.route_pick(np, s, lc, alloc=alloc) for s, lc in zip(xs, (lc0, lc1)))
    assert v0 is given[-2] and v1 is given[-1]
    got = R.route_place(np, p0, v0, p1, v1, shape=(7,), dtype="<f8", alloc=alloc)
    assert got is given[-1] and got.tolist() == [5.0, 9.0, 0.0, 9.0, 4.0, 6.0, 2.0]
    # the shard this worker holds (candidate 0): its points picked into the result at once,
    # an empty bucket; the other bucket placed into that block later
    out = R.route_split(np, idx, xs[0], offs=(0,), shape=(7,), cmap=(("i", 0),), sizes=(10,),
                        bounds=((0, 5, 10),), cands=[(0,), (1,)], nidx=1, wrap=True, own=(0,),
                        alloc=alloc)  # fmt: skip
    status, res, lc0, p0, lc1, p1 = out
    assert status.tolist() == [0, 0, 0, 3, 4] and lc0.shape == (1, 0) and p0.shape == (0,)
    assert res is given[-1] and res[[2, 4, 6]].tolist() == [0.0, 4.0, 2.0]
    v1 = R.route_pick(np, xs[1], lc1)
    got = R.route_place(np, res, p1, v1, shape=(7,), dtype="<f8", into=True)
    assert got is res and got.tolist() == [5.0, 9.0, 0.0, 9.0, 4.0, 6.0, 2.0]
