"""Trigonometric and hyperbolic primitives against NumPy, with gradients."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

U = np.linspace(-0.9, 0.9, 42).reshape(7, 6)  # inside (-1, 1): every inverse is defined
REFS = {
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "atanh": np.arctanh,
}


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_trig_layouts(place):
    x = st.from_numpy(U, **place)
    for name, ref in REFS.items():
        assert_matches_numpy(getattr(st, name)(x), ref(U), rtol=1e-12)
        assert_matches_numpy(getattr(x, name)(), ref(U), rtol=1e-12)
    assert_matches_numpy(st.acosh(x + 2), np.arccosh(U + 2), rtol=1e-12)
    assert_matches_numpy(st.atan2(x, U[:1] + 0.5), np.arctan2(U, U[:1] + 0.5), rtol=1e-12)
    assert_matches_numpy(st.hypot(x, x * 2), np.hypot(U, 2 * U), rtol=1e-12)


def test_aliases_dtypes_inplace():
    x = st.tensor([0.5, -0.25], shards=2)
    for a in ("arcsin", "arccos", "arctan", "arcsinh", "arctanh"):
        assert getattr(st, a)(x).tolist() == getattr(st, "a" + a[3:])(x).tolist()
        assert getattr(x, a)().tolist() == getattr(st, a)(x).tolist()
    assert st.arctan2 is st.atan2
    assert st.tan(st.tensor([1, 2])).dtype == st.float32
    assert st.atan2(st.tensor([1]), st.tensor([1])).dtype == st.float32
    with pytest.raises(st.DTypeError, match="hypot"):
        st.hypot(st.tensor([3]), st.tensor([4]))
    y = st.tensor([0.5])
    assert y.asin_() is y and y.tolist() == pytest.approx([np.arcsin(0.5)])
    i = st.tensor([1, 2])
    with pytest.raises(st.DTypeError):
        i.tan_()
    assert i.tolist() == [1, 2]


def test_gradients():
    x = st.tensor([0.3, -0.5, 0.7], dtype=st.float64, shards=2, requires_grad=True)
    for name in REFS:
        assert st.autograd.gradcheck(getattr(st, name), (x,)), name
    y = st.tensor([1.3, 2.5], dtype=st.float64, requires_grad=True)
    z = st.tensor([0.4, -1.5], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(st.acosh, (y,))
    assert st.autograd.gradcheck(st.atan2, (y, z))
    assert st.autograd.gradcheck(st.hypot, (y, z))


def test_python_numbers_refused_as_torch():
    # torch: "atan2(): argument 'other' (position 2) must be Tensor, not float"
    t = st.tensor([1.0, 3.0])
    for call, msg in [
        (lambda: st.atan2(t, 1.0), "atan2.*'other'.*float"),
        (lambda: st.arctan2(1.0, t), "atan2.*'input'.*float"),
        (lambda: t.arctan2_(1.0), "atan2_.*'other'"),
        (lambda: st.hypot(t, 1), "hypot.*'other'.*int"),
        (lambda: t.hypot_(1.0), "hypot_.*'other'"),
    ]:
        with pytest.raises(st.DTypeError, match=msg):
            call()
    assert t.tolist() == [1.0, 3.0]
    one = st.tensor(1.0)  # a 0-d tensor is a tensor
    assert st.atan2(t, one).tolist() == pytest.approx([0.7853981633974483, 1.2490457723982544])
    assert st.hypot(t, one).tolist() == pytest.approx([1.4142135623730951, 3.1622776601683795])


def test_deg2rad_rad2deg_as_torch():
    """Integers give the default float dtype; complex and in-place on integers raise."""
    r = st.deg2rad(st.tensor([180, -90], shards=2))
    assert r.dtype == st.float32 and r.tolist() == [3.1415927410125732, -1.5707963705062866]
    x = st.tensor([np.pi, -0.0], dtype=st.float64)
    assert st.rad2deg(x).tolist() == [180.0, -0.0] and np.signbit(st.rad2deg(x).numpy()[1])
    assert x.deg2rad().tolist() == [np.pi / 180 * np.pi, -0.0]
    assert x.rad2deg_() is x and x.tolist() == [180.0, -0.0]
    with pytest.raises(RuntimeError):
        st.tensor([1]).deg2rad_()
    with pytest.raises(RuntimeError):
        st.deg2rad(st.tensor([1j]))
