"""Gradchecks on the multi-node Ray cluster, on one row-sharded layout (4 shards over 2
nodes) to keep the suite short: the unit module's sweeps over layouts stay local
(``ray_mirror(False)``); the rest of tests/unit/test_autograd.py runs here unchanged."""

import pytest

import sharded as st
from sharded.autograd import gradcheck
from tests.unit.test_autograd import BINARY, REDUCE, UNARY, VIEWS, A, B, leaf


@pytest.mark.parametrize("name", sorted({**UNARY, **REDUCE, **VIEWS}))
def test_gradcheck_on_cluster(name):
    assert gradcheck({**UNARY, **REDUCE, **VIEWS}[name], (leaf(A, shards=4),))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_gradcheck_binary_on_cluster(name):
    assert gradcheck(BINARY[name], (leaf(A, shards=4), leaf(B, layout=st.Layout.replicated())))
