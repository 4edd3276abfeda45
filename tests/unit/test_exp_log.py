"""Exponential, logarithm and power primitives against NumPy, with gradients."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

P = np.linspace(0.1, 4, 42).reshape(7, 6)
REFS = {
    "expm1": np.expm1,
    "exp2": np.exp2,
    "log2": np.log2,
    "log10": np.log10,
    "square": np.square,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "reciprocal": lambda a: 1 / a,
}


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_exp_log_layouts(place):
    x = st.from_numpy(P, **place)
    for name, ref in REFS.items():
        assert_matches_numpy(getattr(st, name)(x), ref(P), rtol=1e-12)
        assert_matches_numpy(getattr(x, name)(), ref(P), rtol=1e-12)
    assert_matches_numpy(st.logaddexp(x, -x), np.logaddexp(P, -P), rtol=1e-12)
    assert_matches_numpy(st.logaddexp2(x, P[:1]), np.logaddexp2(P, P[:1]), rtol=1e-12)


def test_dtypes_and_values():
    i = st.tensor([-3, 2], shards=2)
    assert st.square(i).tolist() == [9, 4] and st.square(i).dtype == st.int64
    assert st.square(st.tensor([True, False])).dtype == st.int64
    for name in ("expm1", "exp2", "log2", "log10", "rsqrt", "reciprocal"):
        assert getattr(st, name)(i).dtype == st.float32
    with pytest.raises(st.DTypeError, match="logaddexp"):
        st.logaddexp(i, i)
    big = st.tensor([1000.0, -1000.0])
    assert st.logaddexp(big, big).tolist() == pytest.approx([1000 + np.log(2), -1000 + np.log(2)])
    assert st.reciprocal(st.tensor([0.0])).tolist() == [float("inf")]
    x = st.tensor([4.0, 16.0])
    assert x.rsqrt_() is x and x.tolist() == [0.5, 0.25]


def test_gradients():
    x = st.tensor([0.3, 1.5, 0.7], dtype=st.float64, shards=2, requires_grad=True)
    for name in REFS:
        assert st.autograd.gradcheck(getattr(st, name), (x,)), name
    y = st.tensor([1.3, 2.5], dtype=st.float64, requires_grad=True)
    z = st.tensor([0.4, -1.5], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(st.logaddexp, (y, z))
    assert st.autograd.gradcheck(st.logaddexp2, (y, z))


def test_logaddexp_refuses_python_numbers_as_torch():
    # torch: "logaddexp2(): argument 'other' (position 2) must be Tensor, not float"
    t = st.tensor([1.0])
    for name in ("logaddexp", "logaddexp2"):
        with pytest.raises(st.DTypeError, match=f"{name}.*'other'.*float"):
            getattr(st, name)(t, 1.0)
        with pytest.raises(st.DTypeError, match=f"{name}.*'input'.*int"):
            getattr(st, name)(1, t)
    assert st.logaddexp2(t, st.tensor(1.0)).tolist() == [2.0]
