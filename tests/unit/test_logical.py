"""Comparison, logical and bitwise primitives."""

import numpy as np

import sharded as st
from tests.helpers import assert_matches_numpy

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


def test_comparisons_and_logic():
    x, y = st.from_numpy(A, shards=3), st.from_numpy(B - 2, shards=2)
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        assert_matches_numpy(getattr(x, op)(y), getattr(A, op)(B - 2), dtype=st.bool)
    m, n = x > 0, y > 0
    assert_matches_numpy(m & n, (A > 0) & (B > 2))
    assert_matches_numpy(m | n, (A > 0) | (B > 2))
    assert_matches_numpy(m ^ n, (A > 0) ^ (B > 2))
    assert_matches_numpy(~m, ~(A > 0))
    assert_matches_numpy(st.logical_and(x, y), np.logical_and(A, B - 2))
    assert_matches_numpy(st.logical_or(m, 0), np.logical_or(A > 0, 0))
    assert_matches_numpy(st.logical_xor(x, n), np.logical_xor(A, B > 2))
    assert_matches_numpy(st.logical_not(x), np.logical_not(A))
    i = st.arange(12, shards=3)
    assert_matches_numpy(i & 5, np.arange(12) & 5)
    assert_matches_numpy(3 | i, 3 | np.arange(12))
    assert_matches_numpy(~i, ~np.arange(12))
    assert (x == x).all().item() and x.eq(A).all().item()
