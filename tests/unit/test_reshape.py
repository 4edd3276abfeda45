"""The reshape and views families at the kernel and rule level (NumPy as ``xp``); their
behaviour on tensors is tested in ``test_views.py``."""

import numpy as np
import pytest

import sharded as st
from sharded.core.registry import PRIMITIVES
from sharded.layout import Layout
from sharded.ops import reshape as R
from sharded.runtime.worker import KERNELS as K


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
