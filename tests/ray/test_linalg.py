"""The unit suite's linalg, matmul and einsum tests on the multi-node Ray cluster (4 workers
over 2 nodes): real worker-to-worker transfers for panels, pivots and partial products. The
layout-pair sweep and the gradchecks run on a subset to keep the suite short."""

import pytest

import sharded as st
from sharded.autograd import gradcheck
from tests.unit.test_einsum import *
from tests.unit.test_linalg import *
from tests.unit.test_linalg import GRADS, TOL, assert_matches_numpy, leaf, t
from tests.unit.test_linalg_derived import *
from tests.unit.test_linalg_lu import *
from tests.unit.test_linalg_tall import *
from tests.unit.test_matmul import *
from tests.unit.test_matmul import A77, B77

del test_matmul_every_layout_pair, test_gradcheck, test_gradcheck_distributed  # noqa: F821

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
