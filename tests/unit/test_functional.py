"""Derived ops (sharded.functional): compositions of primitives compared with numpy."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

rng = np.random.default_rng(0)
A = rng.standard_normal((7, 6))


@pytest.mark.parametrize(
    "place", [dict(shards=3), dict(shards=3, dim=1), dict(layout=st.Layout.block((2, 2)))]
)
def test_logsumexp_softmax_stable(place):
    big = A * 1000
    x = st.from_numpy(big, **place)
    m = big.max(1, keepdims=True)
    lse = m + np.log(np.exp(big - m).sum(1, keepdims=True))
    assert_matches_numpy(st.logsumexp(x, 1), lse[:, 0], rtol=1e-12)
    assert_matches_numpy(x.logsumexp(dim=1, keepdim=True), lse, rtol=1e-12)
    assert_matches_numpy(st.softmax(x, 1), np.exp(big - lse), rtol=1e-9, atol=1e-12)
    assert_matches_numpy(st.log_softmax(x, -1), big - lse, rtol=1e-9)
    m0 = big.max(0, keepdims=True)
    assert_matches_numpy(
        st.softmax(x, 0), np.exp(big - m0) / np.exp(big - m0).sum(0), rtol=1e-9, atol=1e-12
    )
    assert_matches_numpy(st.logsumexp(x), np.log(np.exp(big - big.max()).sum()) + big.max())
    ninf = st.full((2, 3), -float("inf"))
    assert st.logsumexp(ninf, 1).tolist() == [-float("inf")] * 2
