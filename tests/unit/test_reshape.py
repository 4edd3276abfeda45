"""The reshape and views families at the kernel and rule level (NumPy as ``xp``), and which
writes into expanded views torch allows; the other tensor-level behaviour is tested in
``test_views.py``."""

import numpy as np
import pytest

import sharded as st
from sharded.core.registry import PRIMITIVES
from sharded.layout import Layout
from sharded.ops.shape.prims import reshape as R
from sharded.runtime.worker.core import KERNELS as K
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.arange(42.0).reshape(7, 6) - 20.5


def test_view_kernels_share_memory_and_copies_do_not():
    a = np.arange(6.0).reshape(2, 3)
    for name, kw in [
        ("permute", {"axes": (1, 0)}),
        ("reshape_view", {"shape": (3, 2)}),
        ("expand", {"shape": (2, 2, 3)}),
        ("index_basic", {"key": (1, Ellipsis)}),
        ("squeeze_dims", {"shape": (6,)}),
        ("reshape", {"shape": (6,)}),
    ]:
        assert np.shares_memory(K[name](np, a, **kw), a), name
    assert not np.shares_memory(K["contiguous"](np, a.T), a)
    with pytest.raises(AttributeError):  # a view must not silently copy
        K["reshape_view"](np, a.T, shape=(6,))


def test_kernels_are_named_like_their_primitives():
    for name in (
        "permute",
        "reshape_view",
        "expand",
        "index_basic",
        "contiguous",
        "squeeze_dims",
        "gather",
        "scatter_add",
        "put_points",
        "put_mask",
        "mask_select",
        "cat",
    ):
        assert name in PRIMITIVES[name].kernels and name in K
    for name in ("permute", "reshape_view", "expand", "index_basic", "contiguous"):
        assert PRIMITIVES[name].kind == "view"


def test_reshape_rules():
    lay = Layout(dim=0, shards=2).bind((4, 3), 2)
    assert R.dim_groups((4, 3), (2, 2, 3)) == [([0], [0, 1]), ([1], [2])]
    assert R.reshape_bounds(lay, (2, 2, 3)) == [(0, 1, 2), (0, 2), (0, 3)]
    assert R.reshape_bounds(lay, (3, 4)) is None
    fb = R.fallback_layout(lay, (3, 4), 2)
    assert fb.shape == (4, 3) and R.reshape_bounds(fb, (3, 4)) is not None
    cut = Layout.from_bounds((1, 4), [(0, 1, 1), (0, 4)], [0, 1])  # a size-1 dim cut (1, 0)
    small, sources = R.compact(cut)
    assert small.grid == (1, 1) and sources == [0]
    assert R.expand_plan(cut, (3, 4))[0].shape == (3, 4)
    assert R.infer_shape((-1, 2), 6) == (3, 2)
    with pytest.raises(st.ShapeError):
        R.infer_shape((-1, -1), 6)
    assert R.view_strides((2, 3), (1, 2), (6,)) is None


# ------------------------------------------------- expand: which writes torch allows
@pytest.mark.parametrize(
    "place",
    [dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout.replicated())],
    ids=["rows", "cols", "repl"],
)
def test_expand_refuses_writes_where_elements_share_memory(place):
    x, a = st.from_numpy(A.copy(), **place), A.copy()
    e, ea = x[:, 1:2].expand(7, 4), np.broadcast_to(a[:, 1:2], (7, 4))
    e2 = x.expand(2, 7, 6)
    assert e.stride() == (6, 0) and e2.stride() == (0, 6, 1)
    assert not e.is_contiguous()
    x.add_(1)
    a += 1
    assert_matches_numpy(e, ea)  # shares storage with x
    assert_matches_numpy(e2, np.broadcast_to(a, (2, 7, 6)))
    for write in (  # torch raises for each of these (an overlapping destination)
        lambda: e.add_(1),
        lambda: e.fill_(st.tensor(0.0)),
        lambda: e.copy_(st.zeros(7, 4)),
        lambda: e.__setitem__(0, 5.0),
        lambda: e2.mul_(2),
        lambda: e.t().sub_(1),
        lambda: e[2].relu_(),
        lambda: e.clamp_(0, 1),
    ):
        with pytest.raises(st.ArgumentError, match="single memory location"):
            write()
    assert_matches_numpy(x, a)  # nothing changed
    c = e.contiguous()  # a copy may be written
    c.add_(1)
    assert_matches_numpy(c, ea + 1)
    assert_matches_numpy(x, a)


@pytest.mark.parametrize(
    "place",
    [dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout.replicated())],
    ids=["rows", "cols", "repl"],
)
def test_expand_writes_that_torch_allows_reach_the_base(place):
    # torch's answers: fill_ with a number, a non-overlapping view of an expanded view, and
    # advanced assignment write into the memory the repeated elements share
    cases = [
        (lambda x: x[:, 1:2].expand(7, 4).fill_(0), lambda a: a.__setitem__(np.s_[:, 1], 0)),
        (lambda x: x[:, 1:2].expand(7, 4).__setitem__(np.s_[:, 1], 5.0), None),
        (lambda x: x.expand(2, 7, 6).__setitem__(0, 5.0), lambda a: a.fill(5.0)),
        (lambda x: x.expand(2, 7, 6).__setitem__([0, 1], 5.0), lambda a: a.fill(5.0)),
    ]
    for write, numpy_write in cases:
        x, a = st.from_numpy(A.copy(), **place), A.copy()
        write(x)
        (numpy_write or (lambda a: a.__setitem__(np.s_[:, 1], 5.0)))(a)
        assert_matches_numpy(x, a)


def test_expand_regressions_match_torch():
    # issue 12: only views whose elements overlap in memory are read-only in torch
    assert_matches_numpy(st.zeros(1).expand(3).fill_(7), np.full(3, 7.0))
    b = st.zeros(1, 2)
    assert_matches_numpy(b.expand(3, 2)[2:].fill_(7), np.full((1, 2), 7.0))
    assert_matches_numpy(b, np.full((1, 2), 7.0))
    b = st.ones(3)
    assert_matches_numpy(b.expand(1, 3).mul_(2), np.full((1, 3), 2.0))  # no OpFailed later
    assert_matches_numpy(b, np.full(3, 2.0))
    b = st.zeros(3, 1)
    b.expand(3, 2)[:, 0].add_(1)  # a column of the expanded view: no overlap
    assert_matches_numpy(b, np.ones((3, 1)))
    b = st.zeros(3, 1)
    b.expand(3, 2)[b.expand(3, 2) == 0] = 5  # a mask write (torch: allowed, deprecated)
    assert_matches_numpy(b, np.full((3, 1), 5.0))
    with pytest.raises(st.ArgumentError, match="single memory location"):
        st.ones(3).expand(2, 3).mul_(2)
    with pytest.raises(st.ArgumentError, match="single memory location"):
        st.zeros(1).expand(3).zero_().add_(1)


@pytest.mark.parametrize("f", [lambda t: t.reshape(3, 0), lambda t: t.view(-1), lambda t: t[None]])
def test_an_empty_view_keeps_the_graph(f):
    # torch: a reshape/view/unsqueeze of an empty tensor that requires grad has a grad_fn, and
    # backward through it gives the input an empty gradient (not None)
    x = st.zeros(0, 3, shards=2, requires_grad=True)
    y = f(x)
    assert y.requires_grad and y.dtype == st.float32
    (y * 2).sum().backward()
    assert x.grad is not None and x.grad.shape == (0, 3)
    assert not f(st.zeros(0, 3)).requires_grad


# ------------------------------------------------- audit against torch (answers as literals)
def test_squeeze_flatten_zero_dim_and_repeated_dims():
    s = st.tensor(2.0)
    for d in (0, -1, (0,), (-1,), ()):
        assert s.squeeze(d).shape == ()  # torch: 0 and -1 name the one "dim" of a 0-d tensor
    with pytest.raises(IndexError):
        s.squeeze(1)
    for d in ((0, 0), (0, -3)):
        with pytest.raises(RuntimeError):  # torch: dim 0 appears multiple times
            st.zeros(1, 2, 1).squeeze(d)
    assert st.zeros(1, 2, 1).squeeze((0, -1)).shape == (2,)
    assert s.flatten(0, -1).shape == (1,)
    with pytest.raises(IndexError):
        s.flatten(1, 2)
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(x[:, :1].broadcast_to((7, 6)), np.broadcast_to(A[:, :1], (7, 6)))
