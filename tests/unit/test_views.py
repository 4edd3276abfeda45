"""Views and shape ops: values against NumPy, shared storage with the base (torch's
semantics), bytes moved between workers, and torch's strides/offsets/contiguity."""

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
    sharded_arrays,
)

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.arange(42.0).reshape(7, 6) - 20.5
A3 = np.arange(60.0).reshape(3, 4, 5) * 0.5
PLACEMENTS3 = [
    dict(shards=1),
    dict(shards=3),
    dict(shards=2, dim=1),
    dict(shards=3, dim=2),
    dict(layout=st.Layout.block((2, 2, 1))),
    dict(layout=st.Layout(chunks=(0, 3, 0))),
    dict(layout=st.Layout(chunks={2: (1, 0, 4)})),
    dict(layout=st.Layout.replicated()),
]
PLACEMENT3_IDS = ["1", "3", "dim1", "dim2", "block", "empty", "uneven2", "repl"]


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_shape_ops_match_numpy(place):
    x = st.from_numpy(A, **place)
    if x.layout.grid[1] == 1:  # a view must not need other workers' columns
        assert_matches_numpy(x.view(7, 2, 3), A.reshape(7, 2, 3))
    assert_matches_numpy(x.view(-1, 6), A)
    assert_matches_numpy(x.view(7, 6, 1), A[..., None])
    assert_matches_numpy(x.reshape(42), A.reshape(42))
    assert_matches_numpy(x.reshape(-1), A.reshape(-1))
    assert_matches_numpy(x.reshape(3, -1, 7), A.reshape(3, -1, 7))
    assert_matches_numpy(x.reshape((6, 7)), A.reshape(6, 7))
    assert_matches_numpy(x.reshape(2, 3, 7).reshape(42, 1), A.reshape(42, 1))
    assert_matches_numpy(x.t(), A.T)
    assert_matches_numpy(x.T, A.T)
    assert_matches_numpy(x.transpose(0, 1), A.T)
    assert_matches_numpy(st.transpose(x, -1, -2), A.T)
    assert_matches_numpy(x.flatten(), A.ravel())
    assert_matches_numpy(x.t().flatten(), A.T.ravel())
    assert_matches_numpy(x.t().reshape(3, 14), A.T.reshape(3, 14))
    assert_matches_numpy(x.t().contiguous(), A.T)
    assert_matches_numpy(x.unsqueeze(0), A[None])
    assert_matches_numpy(x.unsqueeze(1), A[:, None])
    assert_matches_numpy(x.unsqueeze(-1), A[..., None])
    assert_matches_numpy(x[None], A[None])
    assert_matches_numpy(x[None].squeeze(0), A)
    assert_matches_numpy(x.unsqueeze(2).unsqueeze(0).squeeze(), A)
    assert_matches_numpy(x[:, :1].squeeze(), A[:, 0])
    assert_matches_numpy(x[:, :1].squeeze(0), A[:, :1])  # size 7: nothing to drop
    assert_matches_numpy(x[:, :1].expand(7, 4), np.broadcast_to(A[:, :1], (7, 4)))
    assert_matches_numpy(x.expand(2, 7, 6), np.broadcast_to(A, (2, 7, 6)))
    assert_matches_numpy(x.expand(3, -1, -1), np.broadcast_to(A, (3, 7, 6)))
    assert_matches_numpy(x[:1].expand_as(x), np.broadcast_to(A[:1], (7, 6)))
    assert_matches_numpy(
        st.broadcast_to(x[:, 2:3], (2, 7, 5)), np.broadcast_to(A[:, 2:3], (2, 7, 5))
    )
    assert_matches_numpy(x.t().permute(1, 0), A)


@pytest.mark.parametrize("place", PLACEMENTS3, ids=PLACEMENT3_IDS)
def test_three_d_shape_ops(place):
    x = st.from_numpy(A3, **place)
    for dims in [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0), (-1, 0, -2)]:
        assert_matches_numpy(x.permute(*dims), A3.transpose(dims))
        assert_matches_numpy(st.permute(x, dims), A3.transpose(dims))
    assert_matches_numpy(x.transpose(0, 2), A3.transpose(2, 1, 0))
    assert_matches_numpy(st.swapaxes(x, 1, 2), A3.swapaxes(1, 2))
    assert_matches_numpy(x.flatten(1), A3.reshape(3, 20))
    assert_matches_numpy(x.flatten(0, 1), A3.reshape(12, 5))
    assert_matches_numpy(x.flatten(-2, -1), A3.reshape(3, 20))
    assert_matches_numpy(x.permute(2, 0, 1).flatten(1), A3.transpose(2, 0, 1).reshape(5, 12))
    assert_matches_numpy(x.reshape(5, 12), A3.reshape(5, 12))
    assert_matches_numpy(x.permute(1, 2, 0).reshape(-1, 3), A3.transpose(1, 2, 0).reshape(-1, 3))
    assert_matches_numpy(x.unsqueeze(1).unsqueeze(-1).squeeze((1, 4)), A3)
    assert_matches_numpy(x.unsqueeze(3).squeeze(-1), A3)


def test_zero_d_and_one_d_edge_cases():
    s = st.tensor(3.5)
    assert_matches_numpy(s.t(), np.float32(3.5))
    assert_matches_numpy(s.reshape(1, 1), np.full((1, 1), 3.5, np.float32))
    assert_matches_numpy(s.flatten(), np.array([3.5], np.float32))
    assert_matches_numpy(s.unsqueeze(0), np.array([3.5], np.float32))
    assert_matches_numpy(s[None], np.array([3.5], np.float32))
    assert_matches_numpy(s.expand(2, 3), np.full((2, 3), 3.5, np.float32))
    assert_matches_numpy(st.tensor([4.0]).squeeze(), np.float32(4.0))
    v = st.arange(5, shards=2)
    assert_matches_numpy(v.t(), np.arange(5))
    assert_matches_numpy(v.view(5, 1).t(), np.arange(5)[None])
    e = st.zeros(0, 3, shards=2)
    assert_matches_numpy(e.reshape(3, 0), np.zeros((3, 0), np.float32))
    assert_matches_numpy(e.view(-1, 3), np.zeros((0, 3), np.float32))
    assert_matches_numpy(e.t(), np.zeros((3, 0), np.float32))


def test_shape_errors_name_the_shapes():
    x = st.from_numpy(A, shards=3)
    with pytest.raises(st.ShapeError, match=r"\[5, -1\].*42"):
        x.view(5, -1)
    with pytest.raises(st.ShapeError, match="only one dimension"):
        x.reshape(-1, -1)
    with pytest.raises(st.ShapeError, match=r"\[43\]"):
        x.reshape(43)
    with pytest.raises(st.DimError, match="permutation"):
        x.permute(0, 0)
    with pytest.raises(st.DimError):
        x.permute(0, 2)
    with pytest.raises(st.DimError, match="<= 2"):
        st.zeros(2, 3, 4).t()
    with pytest.raises(st.DimError):
        x.transpose(0, 2)
    with pytest.raises(st.DimError):
        x.unsqueeze(3)
    with pytest.raises(st.DimError):
        x.squeeze(2)
    with pytest.raises(st.DimError, match="start_dim"):
        x.flatten(1, 0)
    with pytest.raises(st.ShapeError, match="non-singleton dimension 1"):
        x.expand(7, 7)
    with pytest.raises(st.ShapeError, match="number of sizes"):
        x.expand(6)
    with pytest.raises(st.ShapeError, match="leading"):
        x.expand(-1, 7, 6)
    assert_matches_numpy(x, A)


# ---------------------------------------------------------------- nothing moves for views
VIEWS = {
    # name: (sharded view, numpy view); all are views in torch
    "view": (lambda x: x.view(7, 2, 3), lambda a: a.reshape(7, 2, 3)),
    "view_flat": (lambda x: x.view(-1), lambda a: a.reshape(-1)),
    "reshape": (lambda x: x.reshape(7, 3, 2), lambda a: a.reshape(7, 3, 2)),
    "t": (lambda x: x.t(), lambda a: a.T),
    "transpose": (lambda x: x.transpose(-1, 0), lambda a: a.T),
    "permute": (lambda x: x.unsqueeze(1).permute(2, 0, 1), lambda a: a[:, None].transpose(2, 0, 1)),
    "squeeze": (lambda x: x[:, 2:3].squeeze(-1), lambda a: a[:, 2]),
    "squeeze_all": (lambda x: x[None, :, None].squeeze(), lambda a: a),
    "unsqueeze": (lambda x: x.unsqueeze(2), lambda a: a[:, :, None]),
    "getitem_int": (lambda x: x[3], lambda a: a[3]),
    "getitem_neg_int": (lambda x: x[-2, 1:], lambda a: a[-2, 1:]),
    "getitem_scalar": (lambda x: x[-2, 3], lambda a: a[-2, 3, ...]),
    "select_select": (lambda x: x.select(1, 2).select(0, 5), lambda a: a[5, 2, ...]),
    "getitem_step": (lambda x: x[1::2, ::3], lambda a: a[1::2, ::3]),
    "getitem_neg_step": (lambda x: x[::-2, 4:0:-2], lambda a: a[::-2, 4:0:-2]),
    "getitem_none_ellipsis": (lambda x: x[None, ..., -3], lambda a: a[None, ..., -3]),
    "getitem_none_mid": (lambda x: x[2:6, None, 1], lambda a: a[2:6, None, 1]),
    "narrow": (lambda x: x.narrow(1, 2, 3), lambda a: a[:, 2:5]),
    "narrow_rows": (lambda x: st.narrow(x, 0, 1, 5), lambda a: a[1:6]),
    "select": (lambda x: x.select(1, -1), lambda a: a[:, -1]),
    "select_row": (lambda x: st.select(x, 0, 4), lambda a: a[4]),
    "split": (lambda x: st.split(x, 3)[1], lambda a: a[3:6]),
    "split_sizes": (lambda x: x.split([1, 4, 1], 1)[1], lambda a: a[:, 1:5]),
    "chunk": (lambda x: st.chunk(x, 3, 1)[2], lambda a: a[:, 4:6]),
    "unbind": (lambda x: x.unbind(1)[4], lambda a: a[:, 4]),
    "unbind_rows": (lambda x: st.unbind(x)[5], lambda a: a[5]),
    "chain": (lambda x: x.t()[1:, ::2].unsqueeze(0)[0, 2], lambda a: a.T[1:, ::2][None][0, 2]),
}
# (view, placement) pairs where the new shape cuts a shard: columns in chunks of 2 (dim1) or
# 3 (block) cannot become whole rows of 3 resp. 2, nor a flat run of memory
NOT_LOCAL = {("view", "dim1"), ("view_flat", "dim1"), ("view_flat", "block"), ("reshape", "block")}


@pytest.mark.parametrize("place, pid", list(zip(PLACEMENTS, PLACEMENT_IDS)), ids=PLACEMENT_IDS)
@pytest.mark.parametrize("name", list(VIEWS))
def test_views_share_storage_both_ways(name, place, pid):
    f, g = VIEWS[name]
    x, a = st.from_numpy(A.copy(), **place), A.copy()
    before = moved()
    if (name, pid) in NOT_LOCAL:
        if name.startswith("view"):  # view refuses, as torch does when it cannot share
            with pytest.raises(st.ViewError, match="between workers"):
                f(x)
            assert moved() == before
        else:  # reshape reshards and copies
            r = f(x)
            assert moved() > before and r._base is not x
            x.add_(1)
            assert_matches_numpy(r, g(A))
        return
    v, va = f(x), g(a)
    assert np.shares_memory(va, a)  # the reference really is a view
    assert_matches_numpy(v, va)
    assert moved() == before, f"{name} moved bytes between workers"
    assert v._base is x  # torch's ``_base``: the tensor whose storage this view shares
    # base -> view
    x.add_(1)
    a += 1
    assert_matches_numpy(v, va)
    # view -> base, an in-place op and a setitem on the view
    v.mul_(2)
    va *= 2
    assert_matches_numpy(x, a)
    v[...] = -7.25
    va[...] = -7.25
    assert_matches_numpy(x, a)
    x[:] = st.from_numpy(A, shards=2)
    a[:] = A
    assert_matches_numpy(v, va)
    # a view of the view is still a view of x
    w = v.unsqueeze(0)
    w.sub_(0.5)
    va -= 0.5
    assert_matches_numpy(x, a)
    # numpy() is a copy
    got = v.numpy()
    got[...] = 1e9
    assert_matches_numpy(x, a)


def test_numpy_is_a_copy():
    x = st.from_numpy(A.copy(), shards=3)
    n = x.numpy()
    n += 100
    assert_matches_numpy(x, A)
    n2 = x.t().numpy()
    n2[0, 0] = 1e9
    assert_matches_numpy(x, A)


@pytest.mark.parametrize("place", PLACEMENTS3, ids=PLACEMENT3_IDS)
def test_permutes_and_squeezes_move_nothing(place):
    x = st.from_numpy(A3, **place)
    before = moved()
    y = x.permute(2, 0, 1).transpose(0, 1).unsqueeze(0).unsqueeze(-1).squeeze(0)
    z = y.squeeze(-1).permute(1, 0, 2)
    assert_matches_numpy(z, A3.transpose(2, 0, 1).transpose(1, 0, 2).transpose(1, 0, 2))
    assert_matches_numpy(x.mT, A3.swapaxes(-1, -2))
    assert moved() == before
    # transposes permute the layout: the chunk bounds travel with their dims
    lay = x.permute(2, 0, 1).layout
    assert lay.bounds == (x.layout.bounds[2], x.layout.bounds[0], x.layout.bounds[1])
    assert lay.num_shards == x.layout.num_shards


def test_view_that_needs_other_workers_raises_and_reshape_reshards():
    x = st.from_numpy(A.copy(), shards=3, dim=1)  # columns split: rows span three workers
    before = moved()
    with pytest.raises(st.ViewError, match=r"reshape"):
        x.view(42)
    with pytest.raises(st.ViewError):
        x.view(7, 2, 3)  # column chunks of 2 are not whole rows of 3
    assert moved() == before  # a failed view changes nothing
    v = x.view(7, 3, 2)  # column chunks of 2 are whole rows of 2: a view
    assert moved() == before and v._base is x
    r = x.reshape(42)
    assert_matches_numpy(r, A.reshape(42))
    assert moved() > before  # the rows had to be assembled
    x.add_(1)  # a resharded reshape is a copy
    assert_matches_numpy(r, A.reshape(42))
    b = st.from_numpy(A, layout=st.Layout.block((2, 2)))
    with pytest.raises(st.ViewError):
        b.view(-1)
    before = moved()
    assert_matches_numpy(b.reshape(6, 7), A.reshape(6, 7))
    assert moved() > before


def test_resharding_reshape_stays_spread_over_the_workers():
    a = np.arange(42.0).reshape(1, 42)
    x = st.from_numpy(a, shards=4, dim=1)  # chunks 11, 11, 10, 10: not rows of 7
    with pytest.raises(st.ViewError):
        x.view(1, 6, 7)
    r = x.reshape(1, 6, 7)
    assert_matches_numpy(r, a.reshape(1, 6, 7))
    assert r.layout.num_shards > 1  # split along the 6 rows, not gathered on one worker


def test_view_raises_like_torch_on_incompatible_strides():
    x = st.from_numpy(A.copy(), shards=1)
    with pytest.raises(st.ViewError, match=r"view size \[42\].*size \[6, 7\].*stride \[1, 6\]"):
        x.t().view(42)
    with pytest.raises(st.ViewError):
        x[:, 1:5].view(28)  # rows are not adjacent in memory
    assert isinstance(st.ViewError("m"), RuntimeError)
    # torch merges dims whose strides line up, even after a step: a view
    v = x[:, ::2].view(21)
    assert_matches_numpy(v, A[:, ::2].reshape(21))
    assert v.stride() == (2,)
    x.add_(1)
    assert_matches_numpy(v, (A + 1)[:, ::2].reshape(21))
    # reshape copies where view cannot
    r = x.t().reshape(42)
    assert_matches_numpy(r, (A + 1).T.reshape(42))
    x.add_(1)
    assert_matches_numpy(r, (A + 1).T.reshape(42))


@pytest.mark.parametrize(
    "place",
    [
        dict(shards=3),
        dict(shards=2, dim=1),
        dict(layout=st.Layout.block((2, 2))),
        dict(layout=st.Layout(chunks=(4, 0, 3))),
        dict(layout=st.Layout.replicated()),
    ],
    ids=["rows", "cols", "block", "uneven", "repl"],
)
def test_views_that_keep_split_dims_whole_move_nothing(place):
    x = st.from_numpy(A.copy(), **place)
    before = moved()
    cols_split = x.layout.grid[1] > 1
    vs = [
        (x.unsqueeze(1), lambda a: a[:, None]),
        (x[:, None, :, None].squeeze(), lambda a: a),
        (x.view(7, 1, 6, 1).squeeze(-1), lambda a: a[:, None]),
        (x.reshape(7, 6, 1).permute(2, 1, 0), lambda a: a.T[None]),
    ]
    if not cols_split:  # merging or splitting the columns keeps row chunks whole
        vs += [
            (x.view(7, 2, 3), lambda a: a.reshape(7, 2, 3)),
            (x.view(7, 3, 2).flatten(1), lambda a: a),
            (x.view(42).view(14, 3), lambda a: a.reshape(14, 3)),
        ]
    else:  # splitting the rows keeps column chunks whole
        vs += [
            (x.view(7, 1, 6), lambda a: a[:, None]),
            (x.t().reshape(6, 7, 1), lambda a: a.T[..., None]),
        ]
    assert moved() == before
    x.add_(1)
    for v, g in vs:
        assert v._base is x  # all of them are views (as ``torch.Tensor._base``)
        assert_matches_numpy(v, g(A + 1))


# ---------------------------------------------------------------- strides
def _np_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


STRIDE_CASES = {
    # name: (sharded op, numpy op, torch's stride, torch's storage_offset)
    "base": (lambda x: x, lambda a: a, (6, 1), 0),
    "t": (lambda x: x.t(), lambda a: a.T, (1, 6), 0),
    "view": (lambda x: x.view(7, 2, 3), lambda a: a.reshape(7, 2, 3), (6, 3, 1), 0),
    "slice_steps": (lambda x: x[1::2, ::3], lambda a: a[1::2, ::3], (12, 3), 6),
    "row": (lambda x: x[3], lambda a: a[3], (1,), 18),
    "col": (lambda x: x[2:, 3], lambda a: a[2:, 3], (6,), 15),
    "narrow": (lambda x: x.narrow(1, 2, 3), lambda a: a[:, 2:5], (6, 1), 2),
    "select": (lambda x: x.select(1, 4), lambda a: a[:, 4], (6,), 4),
    "split": (lambda x: x.split(2)[2], lambda a: a[4:6], (6, 1), 24),
    "t_slice": (lambda x: x.t()[1:4, 2::2], lambda a: a.T[1:4, 2::2], (1, 12), 13),
    "unsqueeze0": (lambda x: x.unsqueeze(0), lambda a: a[None], (42, 6, 1), 0),
    "unsqueeze1": (lambda x: x.unsqueeze(1), lambda a: a[:, None], (6, 6, 1), 0),
    "unsqueeze_last": (lambda x: x.unsqueeze(-1), lambda a: a[..., None], (6, 1, 1), 0),
    "none_first": (lambda x: x[None], lambda a: a[None], (42, 6, 1), 0),
    "none_mid": (lambda x: x[:, None], lambda a: a[:, None], (6, 6, 1), 0),
    "none_last": (lambda x: x[..., None], lambda a: a[..., None], (6, 1, 1), 0),
    "none_then_int": (lambda x: x[None, ..., 2], lambda a: a[None, ..., 2], (42, 6), 2),
    "t_unsqueeze0": (lambda x: x.t().unsqueeze(0), lambda a: a.T[None], (6, 1, 6), 0),
    "t_unsqueeze1": (lambda x: x.t().unsqueeze(1), lambda a: a.T[:, None], (1, 42, 6), 0),
    "t_unsqueeze2": (lambda x: x.t().unsqueeze(2), lambda a: a.T[..., None], (1, 6, 1), 0),
    "squeeze": (lambda x: x[:, 2:3].squeeze(1), lambda a: a[:, 2], (6,), 2),
    "t_squeeze": (lambda x: x.t()[:, None].squeeze(1), lambda a: a.T, (1, 6), 0),
    "expand": (
        lambda x: x[:, :1].expand(7, 4),
        lambda a: np.broadcast_to(a[:, :1], (7, 4)),
        (6, 0),
        0,
    ),
    "expand_lead": (
        lambda x: x.expand(2, 7, 6),
        lambda a: np.broadcast_to(a, (2, 7, 6)),
        (0, 6, 1),
        0,
    ),
    "flat_of_step": (lambda x: x[:, ::2].view(21), lambda a: a[:, ::2].reshape(21), (2,), 0),
}


@pytest.mark.parametrize(
    "place",
    [dict(shards=1), dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout.replicated())],
    ids=["1", "rows", "cols", "repl"],
)
@pytest.mark.parametrize("name", list(STRIDE_CASES))
def test_stride_offset_contiguity_like_torch(name, place):
    f, g, torch_stride, torch_offset = STRIDE_CASES[name]
    a = A.copy()
    x = st.from_numpy(a, **place)
    if name == "flat_of_step" and place.get("dim") == 1:
        with pytest.raises(st.ViewError):  # the rows of x[:, ::2] span two workers
            f(x)
        return
    v, va = f(x), g(a)
    assert_matches_numpy(v, va)
    assert v.stride() == torch_stride
    assert v.storage_offset() == torch_offset
    # NumPy agrees on every dim of size > 1 (torch and NumPy differ only on size-1 dims)
    ns = _np_strides(va)
    assert all(s == n for s, n, k in zip(v.stride(), ns, va.shape) if k > 1)
    off = (va.__array_interface__["data"][0] - a.__array_interface__["data"][0]) // a.itemsize
    assert v.storage_offset() == off
    assert v.is_contiguous() == (
        va.flags.c_contiguous and 0 not in [s for s, k in zip(v.stride(), va.shape) if k > 1]
    )
    assert v.stride(-1) == torch_stride[-1] and v.stride(0) == torch_stride[0]


def test_empty_views_are_contiguous_like_torch():
    x = st.from_numpy(A, shards=3)
    e = x[:, ::2][:0]
    assert e.stride() == (6, 2) and e.numel() == 0
    assert e.is_contiguous()


def test_is_contiguous_cases():
    x = st.from_numpy(A, shards=3)
    assert x.is_contiguous() and x[2:5].is_contiguous() and x[3].is_contiguous()
    assert not x.t().is_contiguous() and not x[:, 1:3].is_contiguous()
    assert not x[:, ::2].is_contiguous() and not x[:, :1].is_contiguous()
    assert x.t().t().is_contiguous() and x.unsqueeze(1).is_contiguous()
    assert x[:, 1].unsqueeze(1).stride() == (6, 1)
    c = x.t().contiguous()
    assert c.is_contiguous() and c.stride() == (7, 1) and c.storage_offset() == 0
    assert x.contiguous() is x
    assert_matches_numpy(c, A.T)
    x.add_(1)  # contiguous() of a non-contiguous view is a copy
    assert_matches_numpy(c, A.T)


# ---------------------------------------------------------------- hypothesis: op chains
def _random_reshape(draw, shape):
    n = int(np.prod(shape))
    if n == 0:
        return tuple(draw(hs.permutations(list(shape))))
    divs = [d for d in range(1, n + 1) if n % d == 0]
    out, rest = [], n
    for _ in range(draw(hs.integers(0, 3))):
        d = draw(hs.sampled_from([d for d in divs if rest % d == 0]))
        out.append(d)
        rest //= d
    out.append(rest)
    out = draw(hs.permutations(out))
    if draw(hs.booleans()):
        out = list(out)
        out[draw(hs.integers(0, len(out) - 1))] = -1
    return tuple(out)


@hs.composite
def op_chains(draw):
    a, place = draw(sharded_arrays(max_dims=3, max_side=4))
    ops, shape = [], a.shape
    for _ in range(draw(hs.integers(1, 4))):
        nd = len(shape)
        kinds = (
            ["reshape", "view", "unsqueeze", "none"]
            + (["permute", "transpose", "squeeze_dim", "flatten"] if nd else [])
            + (["squeeze"] if 1 in shape else [])
            + (["t"] if nd <= 2 else [])
        )
        k = draw(hs.sampled_from(kinds))
        if k in ("reshape", "view"):
            arg = _random_reshape(draw, shape)
            shape = np.empty(shape).reshape(arg).shape
        elif k == "permute":
            arg = tuple(draw(hs.permutations(list(range(nd)))))
            shape = tuple(shape[d] for d in arg)
        elif k == "transpose":
            arg = (draw(hs.integers(-nd, nd - 1)), draw(hs.integers(-nd, nd - 1)))
            shape = np.empty(shape).swapaxes(*arg).shape
        elif k == "unsqueeze":
            arg = draw(hs.integers(-nd - 1, nd))
            shape = np.expand_dims(np.empty(shape), arg).shape
        elif k == "squeeze_dim":
            arg = draw(hs.integers(-nd, nd - 1))
            shape = shape if shape[arg] != 1 else np.squeeze(np.empty(shape), arg).shape
        elif k == "flatten":
            arg = tuple(sorted((draw(hs.integers(0, nd - 1)), draw(hs.integers(0, nd - 1)))))
            shape = (
                shape[: arg[0]] + (int(np.prod(shape[arg[0] : arg[1] + 1])),) + shape[arg[1] + 1 :]
            )
        else:
            arg = None
            shape = {
                "none": (1,) + shape,
                "squeeze": tuple(s for s in shape if s != 1),
                "t": shape[::-1],
            }[k]
        ops.append((k, arg))
    return a, place, ops


def _np_chain(a, ops):
    for k, arg in ops:
        if k in ("view", "reshape"):
            a = a.reshape(arg)
        elif k == "permute":
            a = a.transpose(arg)
        elif k == "transpose":
            a = a.swapaxes(*arg)
        elif k == "unsqueeze":
            a = np.expand_dims(a, arg)
        elif k == "squeeze_dim":
            a = np.squeeze(a, arg) if a.shape[arg] == 1 else a
        elif k == "squeeze":
            a = np.squeeze(a)
        elif k == "flatten":
            i, j = arg
            a = a.reshape(a.shape[:i] + (int(np.prod(a.shape[i : j + 1])),) + a.shape[j + 1 :])
        elif k == "none":
            a = a[None]
        elif k == "t":
            a = a.T
    return a


def _st_chain(x, ops):
    """The chain on the tensor; ``view`` falls back to ``reshape`` on ViewError (torch's
    stride rule or the layout refused to share storage)."""
    for k, arg in ops:
        if k == "view":
            try:
                x = x.view(arg)
            except st.ViewError:
                x = x.reshape(arg)
        elif k == "reshape":
            x = x.reshape(*arg)
        elif k == "permute":
            x = x.permute(*arg)
        elif k == "transpose":
            x = x.transpose(*arg)
        elif k == "unsqueeze":
            x = x.unsqueeze(arg)
        elif k == "squeeze_dim":
            x = x.squeeze(arg)
        elif k == "squeeze":
            x = x.squeeze()
        elif k == "flatten":
            x = x.flatten(*arg)
        elif k == "none":
            x = x[None]
        elif k == "t":
            x = x.t()
    return x


def test_hypothesis_shape_op_chains_match_numpy():
    @settings(
        max_examples=examples(150),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(op_chains())
    def run(case):
        a, place, ops = case
        base = a.copy()
        x = st.from_numpy(base, **place)
        y, b = _st_chain(x, ops), _np_chain(base, ops)
        assert_matches_numpy(y, b)
        if y._base is x and b.size > 1:
            # a view reports torch's strides: NumPy's on every dim of size > 1
            if np.shares_memory(b, base):
                ns = _np_strides(b)
                assert all(s == n for s, n, k in zip(y.stride(), ns, b.shape) if k > 1), (
                    y.stride(),
                    ns,
                )
                first = b.__array_interface__["data"][0] - base.__array_interface__["data"][0]
                assert y.storage_offset() == first // base.itemsize
                assert y.is_contiguous() == b.flags.c_contiguous
            # and it shares storage with x both ways
            x.add_(1)
            assert_matches_numpy(y, b + 1)
            y.mul_(-1)
            idx = np.arange(base.size).reshape(base.shape)
            hit = np.zeros(base.size, bool)
            hit[_np_chain(idx, ops).ravel()] = True
            assert_matches_numpy(x, np.where(hit.reshape(base.shape), -1, 1) * (base + 1))

    run()


# ------------------------------------------------- audit against torch (answers as literals)
@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=2), dict(shards=2, dim=1)])
def test_swapdims_adjoint_mh(place):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = st.from_numpy(a, **place)
    assert_matches_numpy(st.swapdims(x, 0, -1), a.swapaxes(0, -1))
    assert_matches_numpy(x.swapdims(1, 2), a.swapaxes(1, 2))
    assert_matches_numpy(x.mH, a.swapaxes(-1, -2))
    c = a[0] + 1j * a[1]
    z = st.from_numpy(c, **place if place.get("dim") != 1 else {})
    for y in (z.mH, z.H, z.adjoint(), st.adjoint(z)):
        assert_matches_numpy(y, c.conj().T)
    s = st.tensor(1 + 2j)
    assert s.mT.item() == 1 + 2j and s.mH.item() == 1 - 2j and s.H.item() == 1 - 2j
    for f in (lambda v: v.mH, lambda v: v.H, st.adjoint):
        with pytest.raises(RuntimeError):
            f(st.ones(3))  # torch: matrices only
    with pytest.raises(RuntimeError):
        x.H  # noqa: B018  (torch: 2-D only, mH for batches)
    with pytest.raises(IndexError):  # torch checks the dims of a 0-d tensor too
        st.tensor(1.0).transpose(0, 1)


@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=2), dict(shards=2, dim=1)])
def test_diag_copies_and_diag_embed_contiguous(place):
    x = st.from_numpy(A[:4, :4].copy(), **place)
    d = st.diag(x, 1)
    assert d.stride() == (1,) and d.is_contiguous()
    d.add_(100)  # torch.diag of a matrix is a new tensor (diagonal() is the view)
    assert_matches_numpy(x, A[:4, :4])
    v = st.from_numpy(np.arange(6.0).reshape(2, 3), **place)
    e = st.diag_embed(v, 1)
    assert e.shape == (2, 4, 4) and e.stride() == (16, 4, 1) and e.is_contiguous()
    assert e.numpy()[1].tolist() == np.diag(np.arange(3.0, 6), 1).tolist()
    e = st.diag_embed(v, 0, 0, -1)
    assert e.shape == (3, 2, 3) and e.stride() == (6, 3, 1)
    assert st.diag(st.zeros(0)).shape == (0, 0)  # an empty vector: a 0 x 0 matrix
    assert st.diag_embed(st.zeros(2, 0)).shape == (2, 0, 0)
    assert st.diag(st.zeros(0), -2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(IndexError):
        st.diag_embed(st.tensor(1.0))
