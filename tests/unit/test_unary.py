"""Unary math primitives and activations."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


@pytest.mark.parametrize(
    "name", ["exp", "log", "log1p", "sqrt", "abs", "sin", "cos", "tanh", "neg"]
)
def test_unary_math(name):
    x = st.from_numpy(B, shards=3)
    ref = {"neg": np.negative, "abs": np.abs}.get(name, getattr(np, name, None))
    assert_matches_numpy(getattr(st, name)(x), ref(B), rtol=1e-12)
    assert_matches_numpy(getattr(x, name)(), ref(B), rtol=1e-12)


def test_activations():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(st.sigmoid(x), 1 / (1 + np.exp(-A)), rtol=1e-12)
    assert_matches_numpy(st.relu(x), np.maximum(A, 0))
    z = st.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert z.isnan().tolist() == [False, True, False, False]
    assert st.isfinite(z).tolist() == [True, False, False, False]
    assert_matches_numpy(st.sigmoid(st.tensor([-1000.0, 1000.0])), np.array([0.0, 1.0]))


def test_absolute_negative_aliases_and_bool_refusals():
    """torch's aliases absolute/absolute_/negative_; abs of bool is NotImplementedError
    ("abs_cpu" not implemented for 'Bool') and relu of bool a RuntimeError."""
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(st.absolute(x), np.abs(A))
    assert_matches_numpy(x.absolute(), np.abs(A))
    y = x.clone()
    assert y.absolute_() is y
    assert_matches_numpy(y, np.abs(A))
    y = x.clone()
    assert y.negative_() is y
    assert_matches_numpy(y, -A)
    b = st.tensor([True, False])
    with pytest.raises(NotImplementedError):
        st.abs(b)
    with pytest.raises(RuntimeError):
        st.relu(b)
    assert st.abs(st.tensor([-2, 3])).tolist() == [2, 3]


def test_relu_keeps_negative_zero_and_nan_as_torch():
    r = st.relu(st.tensor([-0.0, float("nan"), -1.0, 2.0], shards=2)).numpy()
    assert np.signbit(r[0]) and np.isnan(r[1]) and r[2:].tolist() == [0.0, 2.0]
