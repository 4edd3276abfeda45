"""select_scatter / slice_scatter / diagonal_scatter / index_reduce / put / fill_diagonal_
against NumPy references with torch's semantics, on layouts split along the dim each op
works on (uneven shards included); torch's answers (gradients, errors) encoded as literals."""

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.arange(1, 36, dtype=np.float32).reshape(5, 7)
W = (np.arange(1, 36, dtype=np.float32).reshape(5, 7) % 7) - 3  # backward weights
LAYOUTS = [
    dict(),
    dict(shards=3, dim=0),  # 5 rows over 3 shards: uneven
    dict(shards=2, dim=1),
    dict(layout=st.Layout(chunks={0: (1, 0, 4)})),  # an empty shard
    dict(layout=st.Layout(chunks={1: (4, 3)})),
]
IDS = ["1", "rows3", "cols2", "rows_empty", "cols_uneven"]


def _t(a, grad=False, **place):
    t = st.tensor(a, **place)
    return t.requires_grad_(True) if grad else t


@pytest.mark.parametrize("place", LAYOUTS, ids=IDS)
@pytest.mark.parametrize("dim,index", [(0, 2), (1, -1), (-2, 4), (1, 0)])
def test_select_scatter(place, dim, index):
    x = _t(A, True, **place)
    n = A.shape[1 - dim % 2]
    src = _t(np.arange(n, dtype=np.float32) * 10, True)
    out = st.select_scatter(x, src, dim, index)
    want = A.copy()
    np.moveaxis(want, dim, 0)[index] = np.arange(n) * 10
    np.testing.assert_array_equal(out.detach().numpy(), want)
    (out * st.tensor(W)).sum().backward()
    gx = W.copy()
    np.moveaxis(gx, dim, 0)[index] = 0  # torch: no gradient where input was overwritten
    np.testing.assert_array_equal(x.grad.detach().numpy(), gx)
    np.testing.assert_array_equal(src.grad.detach().numpy(), np.moveaxis(W, dim, 0)[index])


@pytest.mark.parametrize("place", LAYOUTS, ids=IDS)
@pytest.mark.parametrize(
    "dim,start,end,step",
    [(0, None, None, 1), (0, 1, None, 2), (1, -3, None, 1), (1, 0, 100, 3), (0, 4, 1, 1)],
)
def test_slice_scatter(place, dim, start, end, step):
    x = _t(A, True, **place)
    sl = [slice(None)] * 2
    sl[dim] = slice(start, end, step)
    shape = A[tuple(sl)].shape
    s = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 100
    src = _t(s, True, **(dict(shards=2, dim=dim) if shape[dim] >= 2 else {}))
    out = x.slice_scatter(src, dim=dim, start=start, end=end, step=step)
    want = A.copy()
    want[tuple(sl)] = s
    np.testing.assert_array_equal(out.detach().numpy(), want)
    (out * st.tensor(W)).sum().backward()
    gx = W.copy()
    gx[tuple(sl)] = 0
    np.testing.assert_array_equal(x.grad.detach().numpy(), gx)
    np.testing.assert_array_equal(src.grad.detach().numpy(), W[tuple(sl)])


@pytest.mark.parametrize("place", LAYOUTS, ids=IDS)
@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (2, 0, 1), (-3, 0, 1), (1, 1, 0), (9, 0, 1)])
def test_diagonal_scatter(place, offset, d1, d2):
    x = _t(A, True, **place)
    n = np.diagonal(A, offset, d1, d2).shape[-1]
    src = _t(np.arange(n, dtype=np.float32) + 50, True)
    out = st.diagonal_scatter(x, src, offset, d1, d2)
    want, gx = A.copy(), W.copy()
    r, c = np.diag_indices(n) if n else (np.zeros(0, int),) * 2
    rows, cols = r + max(-offset, 0), c + max(offset, 0)
    if d1 == 1:  # diagonal(offset, 1, 0) runs along the transpose
        rows, cols = c + max(offset, 0), r + max(-offset, 0)
    want[rows, cols] = np.arange(n) + 50
    gx[rows, cols] = 0
    np.testing.assert_array_equal(out.detach().numpy(), want)
    (out * st.tensor(W)).sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), gx)
    np.testing.assert_array_equal(src.grad.detach().numpy(), W[rows, cols])


def test_diagonal_scatter_3d_batch_dims():
    a = np.arange(60.0).reshape(3, 4, 5)
    x = st.tensor(a, dim=2, shards=2)
    out = x.diagonal_scatter(st.ones(4, 3, dtype=st.float64), 1, 0, 2)
    want = a.copy()
    for i in range(3):
        want[i, :, i + 1] = 1
    np.testing.assert_array_equal(out.detach().numpy(), want)


def test_view_scatters_cast_src_and_errors():
    x = st.tensor(A, dim=0, shards=3)
    # torch casts src to input's dtype
    out = st.select_scatter(x, st.arange(7.0, dtype=st.float64), 0, 1)
    assert out.dtype == st.float32 and out[1].tolist() == list(range(7))
    out = st.slice_scatter(x, st.ones(5, 2, dtype=st.int64), 1, 5)
    assert out.dtype == st.float32 and out[:, 5:].sum().item() == 10
    with pytest.raises(IndexError):  # select(): index 5 out of range
        st.select_scatter(x, st.ones(7), 0, 5)
    with pytest.raises(RuntimeError):  # src size != slice size
        st.select_scatter(x, st.ones(6), 0, 1)
    with pytest.raises(IndexError):  # torch: select() cannot be applied to a 0-dim tensor
        st.select_scatter(st.tensor(1.0), st.tensor(2.0), 0, 0)
    with pytest.raises(RuntimeError):  # slice step must be positive
        st.slice_scatter(x, st.ones(5, 7), 0, None, None, 0)
    with pytest.raises(RuntimeError):
        st.slice_scatter(x, st.ones(5, 7), 0, 3, 1)
    with pytest.raises(RuntimeError):  # diagonal dimensions cannot be identical
        st.diagonal_scatter(x, st.ones(5), 0, 1, 1)
    with pytest.raises(IndexError):
        st.diagonal_scatter(st.zeros(3), st.ones(0))
    assert x.tolist() == A.tolist()  # operands intact


def _ref_index_reduce(x, dim, idx, src, reduce, include_self):
    out = np.moveaxis(x.copy(), dim, 0)
    s = np.moveaxis(src, dim, 0)
    for j in set(idx.tolist()):
        vals = [s[k] for k in range(len(idx)) if idx[k] == j]
        vals = ([out[j]] if include_self else []) + vals
        if reduce == "prod":
            out[j] = np.prod(vals, axis=0)
        elif reduce == "mean":
            tot = np.sum(vals, axis=0)
            out[j] = tot // len(vals) if x.dtype.kind in "iu" else tot / len(vals)
        elif reduce == "amax":
            out[j] = np.max(vals, axis=0)
        else:
            out[j] = np.min(vals, axis=0)
    return np.moveaxis(out, 0, dim)


@pytest.mark.parametrize("place", LAYOUTS, ids=IDS)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, -1])
def test_index_reduce(place, reduce, include_self, dim):
    if dim == 0:
        src, idx = np.arange(28, dtype=np.float32).reshape(4, 7) % 5 - 2, np.array([4, 0, 4, 2])
    else:
        src, idx = np.arange(15, dtype=np.float32).reshape(5, 3) % 4 + 0.5, np.array([6, 1, 6])
    x = st.tensor(A, **place)
    src_t = st.tensor(src, **(dict(shards=2, dim=dim) if dim == 0 else dict(shards=3, dim=1)))
    out = x.index_reduce(dim, st.tensor(idx), src_t, reduce, include_self=include_self)
    want = _ref_index_reduce(A, dim % 2, idx, src, reduce, include_self)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6)
    assert x.tolist() == A.tolist()


def test_index_reduce_prod_gradient_torch():
    # torch's gradients of index_reduce(0, [4, 0, 4, 2], src, 'prod') (zeros in src included)
    x = st.tensor(A, dim=0, shards=3).requires_grad_(True)
    s = st.tensor(np.arange(28.0, dtype=np.float32).reshape(4, 7) % 5 - 2, dim=1, shards=2)
    s.requires_grad_(True)
    out = st.index_reduce(x, 0, st.tensor([4, 0, 4, 2]), s, "prod")
    (out * st.tensor(W)).sum().backward()
    assert out.tolist()[4] == [-116.0, 60.0, -0.0, 0.0, 66.0, -136.0, 70.0]
    assert x.grad.tolist()[4] == [8.0, -2.0, -0.0, 0.0, 4.0, -12.0, -6.0]
    assert x.grad.tolist()[1] == W[1].tolist()  # rows not written: the plain gradient
    assert s.grad.tolist() == [
        [-116.0, 60.0, -0.0, 0.0, 66.0, 204.0, 210.0],
        [-2.0, -2.0, 0.0, 4.0, 10.0, 18.0, -21.0],
        [116.0, 30.0, 0.0, 32.0, 132.0, -204.0, 105.0],
        [-30.0, -16.0, 0.0, 18.0, 38.0, 60.0, -63.0],
    ]


def test_index_reduce_int_inplace_0d_and_errors():
    x = st.tensor([5, 5], shards=2)
    assert x.index_reduce(0, st.tensor([0, 0]), st.tensor([2, 3]), "mean").tolist() == [3, 5]
    r = x.index_reduce(0, st.tensor([0, 0]), st.tensor([2, 3]), "mean", include_self=False)
    assert r.tolist() == [2, 5]  # integer mean rounds down, as torch
    y = st.tensor(A, dim=1, shards=2)
    y.index_reduce_(
        1, st.tensor([0, 6], dtype=st.int32), st.full((5, 2), 3.0), "amin", include_self=False
    )
    assert y[:, 0].tolist() == [3.0] * 5 and y[:, 6].tolist() == [3.0] * 5
    z = st.tensor(5.0).index_reduce(0, st.tensor(0), st.tensor(7.0), "amax")
    assert z.shape == () and z.item() == 7.0
    b = st.ones(3, 3, dtype=st.bool).index_reduce(
        0, st.tensor([0]), st.zeros(1, 3, dtype=st.bool), "amin"
    )
    assert b.tolist() == [[False] * 3, [True] * 3, [True] * 3]
    ones = st.ones(5, 2)
    for args, err in [
        ((1, st.tensor([0, 1]), ones, "sum"), RuntimeError),  # reduce not one of the four
        ((1, st.tensor([[0, 1]]), ones, "prod"), IndexError),  # index must be a vector
        ((1, st.tensor([0, 7]), ones, "prod"), IndexError),
        ((1, st.tensor([0, -1]), ones, "prod"), IndexError),  # no wrapping, as torch
        ((1, st.tensor([0, 1]), st.ones(4, 2), "prod"), RuntimeError),
        ((1, st.tensor([0, 1, 2]), ones, "prod"), RuntimeError),
        ((1, st.tensor([0, 1]), st.ones(5, 2, dtype=st.float64), "prod"), RuntimeError),
    ]:
        with pytest.raises(err):
            st.tensor(A, dim=1, shards=3).index_reduce(*args)
    with pytest.raises(RuntimeError):  # 0-d self, 1-d source
        st.tensor(5.0).index_reduce(0, st.tensor([0]), st.tensor([2.0]), "amax")
    with pytest.raises(NotImplementedError):
        st.tensor([1j, 2]).index_reduce(0, st.tensor([0]), st.tensor([1j]), "prod")


@pytest.mark.parametrize("place", LAYOUTS, ids=IDS)
@pytest.mark.parametrize("accumulate", [False, True])
def test_put(place, accumulate):
    x = _t(A, True, **place)
    src = _t(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), True)
    out = st.put(x, st.tensor([[0, -1], [17, 3]]), src, accumulate)
    want, gx = A.copy().ravel(), W.copy().ravel()
    for i, v in zip([0, 34, 17, 3], [1, 2, 3, 4]):
        want[i] = want[i] + v if accumulate else v
        if not accumulate:
            gx[i] = 0
    np.testing.assert_array_equal(out.detach().numpy(), want.reshape(5, 7))
    (out * st.tensor(W)).sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), gx.reshape(5, 7))
    assert src.grad.tolist() == [[W.ravel()[0], W.ravel()[34]], [W.ravel()[17], W.ravel()[3]]]


def test_put_inplace_and_errors():
    x = st.tensor(np.arange(35).reshape(5, 7), dim=0, shards=3)
    x.put_(st.tensor([5, 6, 5]), st.tensor([1, 2, 3]), True)
    assert x.reshape(-1)[4:8].tolist() == [4, 9, 8, 7]
    assert st.put(st.tensor(3.0), st.tensor(0), st.tensor(1.0), True).item() == 4.0
    assert st.put(st.zeros(0), st.tensor([], dtype=st.int64), st.zeros(0)).shape == (0,)
    y = st.tensor(A, dim=1, shards=2)
    for args, err in [
        ((st.tensor([35]), st.tensor([1.0])), IndexError),
        ((st.tensor([-36]), st.tensor([1.0])), IndexError),
        ((st.tensor([1], dtype=st.int32), st.tensor([1.0])), RuntimeError),  # a long index
        ((st.tensor([1]), st.tensor([1.0], dtype=st.float64)), RuntimeError),
        ((st.tensor([1, 2]), st.tensor([1.0])), IndexError),
    ]:
        with pytest.raises(err):
            y.put(*args)
    with pytest.raises(IndexError):
        st.put(st.zeros(0), st.tensor([0]), st.tensor([1.0]))
    assert y.tolist() == A.tolist()


@pytest.mark.parametrize("place", [dict(), dict(shards=3, dim=0), dict(shards=2, dim=1)])
@pytest.mark.parametrize(
    "shape,wrap,ones",
    [
        ((5, 7), False, [(i, i) for i in range(5)]),
        ((7, 3), False, [(0, 0), (1, 1), (2, 2)]),
        ((7, 3), True, [(0, 0), (1, 1), (2, 2), (4, 0), (5, 1), (6, 2)]),
        ((8, 3), True, [(0, 0), (1, 1), (2, 2), (4, 0), (5, 1), (6, 2)]),
        ((4, 3), True, [(0, 0), (1, 1), (2, 2)]),
        ((1, 4), True, [(0, 0)]),
    ],
)
def test_fill_diagonal_(place, shape, wrap, ones):
    x = st.zeros(*shape, **place)
    assert x.fill_diagonal_(2.5, wrap=wrap) is x
    want = np.zeros(shape, np.float32)
    for p in ones:
        want[p] = 2.5
    np.testing.assert_array_equal(x.detach().numpy(), want)


def test_fill_diagonal_nd_dtypes_gradient_errors():
    x = st.zeros(3, 3, 3, dim=2, shards=2).fill_diagonal_(1)
    assert [tuple(p) for p in np.argwhere(x.detach().numpy())] == [(0, 0, 0), (1, 1, 1), (2, 2, 2)]
    assert st.zeros(3, 4, dtype=st.int64).fill_diagonal_(1.7).tolist()[1] == [0, 1, 0, 0]
    assert st.zeros(2, 2, dtype=st.bool).fill_diagonal_(2).tolist() == [
        [True, False],
        [False, True],
    ]
    assert st.zeros(0, 3).fill_diagonal_(1).shape == (0, 3)
    x0 = st.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4), shards=2).requires_grad_(True)
    y = x0 * 1
    y.fill_diagonal_(0.0)
    y.sum().backward()
    assert x0.grad.tolist() == [[0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1]]
    with pytest.raises(RuntimeError):  # dimensions must larger than 1
        st.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError):  # all dimensions of input must be of equal length
        st.zeros(3, 3, 2).fill_diagonal_(1)
