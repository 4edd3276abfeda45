"""Linear algebra on the multi-node Ray cluster (4 workers over 2 nodes), where panels, pivots
and partial products move worker to worker: a subset of the layout-pair sweep of
tests/unit/test_matmul.py and of the gradchecks of tests/unit/test_linalg.py, which stay local
(``ray_mirror(False)``); the rest of those modules, and of the einsum, linalg_derived,
linalg_lu and linalg_tall ones, runs here unchanged."""

import pytest

import sharded as st
from sharded.autograd import gradcheck
from tests.helpers import assert_matches_numpy
from tests.unit.test_linalg import GRADS, TOL, leaf, t
from tests.unit.test_matmul import A77, B77

PAIRS = [
    (dict(shards=2), dict(shards=3)),
    (dict(shards=3, dim=1), dict(shards=4)),
    (dict(layout=st.Layout.block((2, 2))), dict(layout=st.Layout.block((2, 2)))),
    (dict(layout=st.Layout(chunks=(4, 0, 3))), dict(layout=st.Layout.replicated())),
    (dict(layout=st.Layout.replicated()), dict(shards=3, dim=1)),
]


@pytest.mark.parametrize("pa, pb", PAIRS, ids=["rows", "kcols", "grid", "uneven-rep", "rep-cols"])
def test_matmul_layout_pairs_on_cluster(pa, pb):
    a, b = t(A77, **pa), t(B77, **pb)
    assert_matches_numpy(a @ b, A77 @ B77, **TOL)
    assert_matches_numpy(a.mT @ b, A77.T @ B77, **TOL)


@pytest.mark.parametrize("name", ["solve", "cholesky", "qr_tall", "lstsq_tall"])
def test_gradcheck_on_cluster(name):
    fn, arrays = GRADS[name]
    assert gradcheck(fn, tuple(leaf(a, shards=2) for a in arrays))
