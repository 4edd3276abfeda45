"""Comparison, logical and bitwise primitives."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

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
    assert_matches_numpy(st.logical_or(m, st.tensor(0)), np.logical_or(A > 0, 0))
    assert_matches_numpy(st.logical_xor(x, n), np.logical_xor(A, B > 2))
    assert_matches_numpy(st.logical_not(x), np.logical_not(A))
    i = st.arange(12, shards=3)
    assert_matches_numpy(i & 5, np.arange(12) & 5)
    assert_matches_numpy(3 | i, 3 | np.arange(12))
    assert_matches_numpy(~i, ~np.arange(12))
    assert (x == x).all().item() and x.eq(A).all().item()


def test_torch_aliases_and_inplace_forms():
    """torch's alias names (greater, less_equal, not_equal...) and in-place forms (eq_,
    logical_and_, bitwise_or_...): an in-place comparison keeps the tensor's dtype."""
    x = st.from_numpy(A, shards=3)
    for alias, op in [("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                      ("less_equal", "le"), ("not_equal", "ne")]:  # fmt: skip
        assert getattr(st, alias)(x, 0.5).tolist() == getattr(st, op)(x, 0.5).tolist()
        assert getattr(x, alias)(0.5).tolist() == getattr(x, op)(0.5).tolist()
        y = x.clone()
        assert getattr(y, alias + "_")(0.5) is y and y.dtype == st.float64
        assert_matches_numpy(y, getattr(A, f"__{op}__")(0.5) * 1.0)
    y = x.clone()
    y.eq_(A)
    assert y.tolist() == np.ones_like(A).tolist()
    b = st.tensor([True, False, True], shards=2)
    assert b.clone().logical_and_(st.tensor([True, True, False])).tolist() == [True, False, False]
    assert b.clone().logical_not_().tolist() == [False, True, False]
    i = st.tensor([1, 2, 3], shards=2)
    assert i.bitwise_or_(st.tensor([4, 4, 4])).tolist() == [5, 6, 7]
    assert i.bitwise_not_().tolist() == [-6, -7, -8]


def test_logical_refuses_python_numbers_and_bitwise_refuses_floats():
    """torch: logical_and(x, 2) is a TypeError (no Number overload); bitwise ops on floats
    raise NotImplementedError ("bitwise_and_cpu" not implemented for 'Float')."""
    x = st.tensor([1.0, 0.0])
    for f in (st.logical_and, st.logical_or, st.logical_xor):
        with pytest.raises(TypeError):
            f(x, 2)
    with pytest.raises(NotImplementedError):
        st.bitwise_and(x, x)
    with pytest.raises(NotImplementedError):
        st.bitwise_not(x)
    with pytest.raises(NotImplementedError):
        st.bitwise_left_shift(x, st.tensor([1, 1]))
    assert x.tolist() == [1.0, 0.0]
