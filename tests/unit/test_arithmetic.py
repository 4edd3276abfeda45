"""Arithmetic primitives: division rules, in-place methods, dtype conversions, errors."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


def test_division_and_float_ops_promote_ints():
    i = st.arange(1, 5, shards=2)
    assert (i / 2).dtype == st.float32 and (i / 2).tolist() == [0.5, 1.0, 1.5, 2.0]
    assert (i // 2).dtype == st.int64 and (i // 2).tolist() == [0, 1, 1, 2]
    assert st.exp(i).dtype == st.float32 and st.sqrt(i).dtype == st.float32
    assert st.div(i, 2, rounding_mode="floor").tolist() == [0, 1, 1, 2]
    assert (st.arange(-3, 3) % 2).tolist() == [1, 0, 1, 0, 1, 0]


def test_inplace_keeps_identity_and_layout():
    x = st.from_numpy(A.copy(), shards=3)
    ident, lay = id(x), x.layout
    x += 1
    x -= st.from_numpy(B, shards=2)
    x *= 2
    x /= 4
    x.add_(1, alpha=2).sub_(0.5).mul_(3).div_(2)
    ref = (((A + 1 - B) * 2 / 4) + 2 - 0.5) * 3 / 2
    assert id(x) == ident and x.layout == lay
    assert_matches_numpy(x, ref)
    x.clamp_(min=-1, max=1)
    assert_matches_numpy(x, np.clip(ref, -1, 1))
    x.fill_(3)
    assert_matches_numpy(x, np.full(A.shape, 3.0))
    x.zero_()
    assert_matches_numpy(x, np.zeros(A.shape))
    x.copy_(st.from_numpy(B, layout=st.Layout.block((2, 2))))
    assert_matches_numpy(x, B)
    x.fill_(st.tensor(5.0))
    assert x.sum().item() == 5 * 42


def test_inplace_dtype_rules():
    i = st.arange(4, shards=2)
    with pytest.raises(st.DTypeError, match="float32.*int64"):
        i /= 2
    assert i.tolist() == [0, 1, 2, 3]  # untouched
    i.mul_(3)
    assert i.tolist() == [0, 3, 6, 9]
    f = st.zeros(3, dtype=st.float16)
    f.add_(st.ones(3, dtype=st.float64))
    assert f.dtype == st.float16 and f.tolist() == [1.0, 1.0, 1.0]
    i.copy_(st.tensor([1.7, 2.2, 3.9, -1.5]))
    assert i.tolist() == [1, 2, 3, -1]


def test_dtype_conversions():
    x = st.tensor([1.7, -2.2, 0.0], shards=2)
    assert x.to(st.float64).dtype == st.float64
    assert x.to(dtype=st.float16).dtype == st.float16
    assert x.int().tolist() == [1, -2, 0] and x.int().dtype == st.int32
    assert x.long().dtype == st.int64 and x.double().dtype == st.float64
    assert x.half().dtype == st.float16 and x.float().dtype == st.float32
    assert x.bool().tolist() == [True, True, False]
    assert x.type() == "sharded.FloatTensor" and x.type(st.int16).dtype == st.int16
    assert x.to("cpu") is x and x.to(x) is x
    assert x.short().dtype == st.int16 and x.byte().dtype == st.uint8


@pytest.mark.parametrize(
    "call, err, text",
    [
        (lambda x: x + st.ones(5), st.ShapeError, r"\(7, 6\) and \(5,\)"),
        (lambda x: x.reshape_nonexistent, AttributeError, "reshape_nonexistent"),
        (lambda x: x & 1, st.DTypeError, "bitwise"),
        (lambda x: -(x > 0), st.DTypeError, "bool"),
        (lambda x: st.where(x, x, x), st.DTypeError, "bool condition"),
        (lambda x: st.arange(3) ** -1, st.ArgumentError, "negative integer powers"),
        (lambda x: st.clamp(x), st.ArgumentError, "min"),
        (lambda x: x + "a", TypeError, "str"),
    ],
)
def test_bad_elementwise_input(call, err, text):
    x = st.from_numpy(A, shards=3)
    with pytest.raises(err, match=text):
        call(x)
    assert_matches_numpy(x, A)
    assert_matches_numpy(x + 1, A + 1)  # cluster still usable
