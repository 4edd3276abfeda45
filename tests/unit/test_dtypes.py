import numpy as np
import pytest

import sharded as st
from sharded import dtypes as D
from sharded.dtypes import as_dtype, result_type


@pytest.mark.parametrize(
    "a, b, out",
    [
        ("uint8", "int8", "int16"),
        ("int32", "int64", "int64"),
        ("bool", "int8", "int8"),
        ("int64", "float16", "float16"),
        ("float16", "float32", "float32"),
        ("int32", "float32", "float32"),
        ("bool", "float64", "float64"),
    ],
)
def test_promote_types_like_torch(a, b, out):
    assert st.promote_types(as_dtype(a), as_dtype(b)) == as_dtype(out)


def test_scalars_only_raise_category():
    assert result_type([st.int32], scalars=[5]) == st.int32
    assert result_type([st.int64], scalars=[2.5]) == st.float32
    assert result_type([st.float16], scalars=[2.5]) == st.float16
    assert result_type([st.bool], scalars=[1]) == st.int64
    assert result_type([st.int8], zero_dim=[st.int64]) == st.int8
    assert result_type([st.int8], zero_dim=[st.float64]) == st.float64


def test_as_dtype_accepts_many_spellings():
    assert as_dtype("float32") == as_dtype(np.float32) == st.float32
    assert as_dtype(float) == st.float32 and as_dtype(int) == st.int64
    assert st.half == st.float16 and st.long == st.int64 and st.double == st.float64
    with pytest.raises(st.DTypeError, match="uint16"):
        as_dtype("uint16")
    with pytest.raises(TypeError):
        as_dtype(np.uint64)


def test_default_dtype_roundtrip():
    assert st.get_default_dtype() == st.float32
    st.set_default_dtype(st.float64)
    try:
        assert st.tensor([1.5]).dtype == st.float64
    finally:
        st.set_default_dtype(st.float32)
    with pytest.raises(st.DTypeError):
        st.set_default_dtype(st.int32)


def test_wrap_and_check_int_follow_torch():
    assert D.wrap_int(-1, st.uint8) == 255 and D.wrap_int(300, st.int8) == 44
    assert D.wrap_int(2**63, st.int64) == -(2**63) and D.wrap_int(True, st.uint8) is True
    assert D.wrap_int(-1, st.float16) == -1 and D.wrap_int(2.5, st.uint8) == 2.5
    with pytest.raises(st.ValueOverflow):
        D.wrap_int(2**64, st.uint8)
    assert D.check_int(-255, st.uint8) == 1 and D.check_int(-128, st.int8) == -128
    for v, dt in [(-256, st.uint8), (256, st.uint8), (128, st.int8), (-129, st.int8)]:
        with pytest.raises(st.ValueOverflow):
            D.check_int(v, dt)
    assert D.int_array([[-1], [2]], st.uint8).tolist() == [[255], [2]]


def test_finfo_iinfo_and_aliases_like_torch():
    f = st.finfo(st.float16)
    assert (f.bits, f.eps, f.max, f.min) == (16, 0.0009765625, 65504.0, -65504.0)
    assert f.tiny == f.smallest_normal == 6.103515625e-05 and f.resolution == 0.001
    assert f.dtype == "float16" and st.finfo().dtype == "float32"
    assert st.finfo(st.float64).eps == np.finfo(np.float64).eps
    i = st.iinfo(st.uint8)
    assert (i.bits, i.min, i.max, i.dtype) == (8, 0, 255, "uint8")
    assert st.iinfo(st.int64).min == -(2**63)
    with pytest.raises(st.DTypeError, match="floating point input type, got int32"):
        st.finfo(st.int32)
    with pytest.raises(st.DTypeError, match="integer input type, got float32"):
        st.iinfo(st.float32)
    with pytest.raises(st.DTypeError, match="got bool"):
        st.iinfo(st.bool)
    assert st.float is st.float32 and st.int is st.int32
    assert st.zeros(2, dtype=st.float).dtype == st.float32


def test_complex_promotion_follows_torch():
    # torch: complex keeps the float's width; a Python complex takes the float's counterpart
    assert st.promote_types(st.complex64, st.float64) == st.complex128
    assert st.promote_types(st.complex64, st.int64) == st.complex64
    assert result_type([st.float64], scalars=[1j]) == st.complex128
    assert result_type([st.float32], [st.complex128]) == st.complex64
    assert result_type([st.complex64], [st.float64]) == st.complex64
    assert result_type([st.int32], scalars=[1j]) == st.complex64
    assert (st.cfloat, st.cdouble) == (st.complex64, st.complex128)
    assert as_dtype(complex) == st.complex64
    assert st.finfo(st.complex128).bits == 64


def test_dtype_class_as_torch():
    assert isinstance(st.ones(2).dtype, st.dtype) and isinstance(st.int64, st.dtype)
