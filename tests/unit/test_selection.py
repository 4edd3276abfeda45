"""Selection and conversion primitives: clamp, where, astype, fill_ against NumPy."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


def test_clamp_and_where():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(st.clamp(x, min=-1, max=1), np.clip(A, -1, 1))
    assert_matches_numpy(x.clamp(min=0.5), np.maximum(A, 0.5))
    assert_matches_numpy(st.clamp(x, max=st.from_numpy(B - 3, shards=2)), np.minimum(A, B - 3))
    assert_matches_numpy(st.where(x > 0, x, -x), np.abs(A))
    assert_matches_numpy(st.where(x > 0, 1.0, 0.0), (A > 0).astype(np.float32), dtype="float32")
    assert_matches_numpy(x.where(x > 0, 7), np.where(A > 0, A, 7))


def test_astype_and_fill():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(x.to(st.int32), A.astype(np.int32), dtype="int32")
    y = x.clone().fill_(2.5)
    assert_matches_numpy(y, np.full_like(A, 2.5))
    assert_matches_numpy(y.copy_(st.from_numpy(B[0], shards=2)), np.broadcast_to(B[0], A.shape))
    assert_matches_numpy(y.zero_(), np.zeros_like(A))
    with pytest.raises(st.ArgumentError, match="0-dimension"):
        y.fill_(st.ones(2))
    assert_matches_numpy(y, np.zeros_like(A))  # the failed fill changed nothing
