"""The chunk -> combine tree (sharded.core.tree): its pure rules, and the combine tree on
layouts where partials meet on one worker, travel between workers, or the root holds none."""

import numpy as np
import pytest

import sharded as st
from sharded.core.tree import reduce_groups, reduce_layout
from sharded.layout import Layout
from tests.helpers import assert_matches_numpy


def test_groups_and_output_layout_are_pure():
    lay = Layout.from_bounds((4, 6), [(0, 2, 4), (0, 3, 6)], [0, 1, 2, 0])
    assert dict(reduce_groups(lay, (0,))) == {(0,): [0, 2], (1,): [1, 3]}
    assert dict(reduce_groups(lay, (0, 1))) == {(): [0, 1, 2, 3]}
    out = reduce_layout(lay, (0,), keepdim=False)
    assert out.shape == (6,) and out.bounds == ((0, 3, 6),) and list(out.workers) == [0, 1]
    out = reduce_layout(lay, (1,), keepdim=True)
    assert out.shape == (4, 1) and list(out.workers) == [0, 2]
    rep = Layout.from_bounds((4,), [(0, 4)], [0, 1], replicated=True)
    assert len(reduce_groups(rep, (0,))) == 2  # every copy reduces where it is
    assert reduce_layout(rep, (0,), False).is_replicated


@pytest.mark.parametrize("workers", [[0, 0, 1, 2, 1], [2, 0, 1, 0, 2], [1, 1, 1, 1, 1]])
def test_combine_tree_any_worker_pattern(workers):
    a = np.arange(40.0).reshape(5, 8)
    lay = st.Layout(chunks=(1, 1, 1, 1, 1), workers=workers)
    x = st.from_numpy(a, layout=lay)
    assert_matches_numpy(x.sum(0), a.sum(0))
    assert_matches_numpy(x.argmax(0), a.argmax(0))
    assert x.sum().item() == a.sum()
