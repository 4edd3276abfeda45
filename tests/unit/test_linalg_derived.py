"""Vector and matrix norms of st.linalg against numpy (``sharded/ops/linalg/derived.py``)."""

import math

import numpy as np
import pytest

import sharded as st
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
t = float64_tensor


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norms(ord):
    a = rng.standard_normal((3, 4, 5))
    assert_matches_numpy(
        L.matrix_norm(t(a, shards=2, dim=2), ord=ord), np.linalg.norm(a, ord, axis=(-2, -1)), **TOL
    )
    assert_matches_numpy(
        L.matrix_norm(t(a, shards=3), ord=ord, dim=(0, 2), keepdim=True),
        np.linalg.norm(a, ord, axis=(0, 2), keepdims=True),
        **TOL,
    )


def test_vector_norms_and_norm():
    a = rng.standard_normal((4, 6))
    x = t(a, shards=3, dim=1)
    for ord in (2, 1, 0, 3.5, math.inf, -math.inf):
        assert_matches_numpy(L.vector_norm(x, ord), np.linalg.norm(a.ravel(), ord), **TOL)
        assert_matches_numpy(
            L.vector_norm(x, ord, dim=1, keepdim=True),
            np.linalg.norm(a, ord, axis=1, keepdims=True),
            **TOL,
        )
    assert_matches_numpy(L.norm(x), np.linalg.norm(a), **TOL)
    assert_matches_numpy(L.norm(x, 2), np.linalg.norm(a, 2), **TOL)
    assert_matches_numpy(L.norm(x, dim=0), np.linalg.norm(a, axis=0), **TOL)
    assert_matches_numpy(L.norm(x, "nuc"), np.linalg.norm(a, "nuc"), **TOL)
