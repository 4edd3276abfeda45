"""``ShardedTensor``'s metadata: ``size``/``stride`` of a dim, with torch's errors."""

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def test_size_and_stride_of_a_dim_out_of_range_raise_dim_error():
    x = st.zeros(2, 3, shards=2)
    assert x.size(-1) == 3 and x.stride(0) == 3
    for d in (2, -3):
        for f in (x.size, x.stride):
            with pytest.raises(st.DimError, match=rf"dim {d} .*range of \[-2, 1\]"):
                f(d)
    s = st.tensor(1.0)
    assert s.size() == () and s.stride() == ()
    for d in (0, -1, 1):  # torch: "Dimension specified as 0 but tensor has no dimensions"
        for f in (s.size, s.stride):
            with pytest.raises(st.DimError, match=f"specified as {d} but tensor has no dim"):
                f(d)
    assert issubclass(st.DimError, IndexError)


DTS = [st.bool, st.uint8, st.int8, st.int16, st.int32, st.int64, st.float16, st.float32,
       st.float64, st.complex64, st.complex128]  # fmt: skip


def test_metadata_methods_as_torch():
    x = st.zeros(2, 3, shards=2)
    assert x.ndimension() == 2 and x.nelement() == 6 and st.numel(x) == 6
    sizes = [1, 1, 1, 2, 4, 8, 2, 4, 8, 8, 16]
    ts = [st.tensor([1, 2], dtype=d, shards=2) for d in DTS]
    assert [t.itemsize for t in ts] == sizes and [t.element_size() for t in ts] == sizes
    assert [t.nbytes for t in ts] == [2 * s for s in sizes]
    assert [t.is_signed() for t in ts] == [False, False] + [True] * 9
    assert st.is_tensor(x) and not st.is_tensor([1.0]) and not st.is_tensor(np.zeros(2))


def test_contains_and_scalar_conversions():
    m = st.tensor([[1, 2], [3, 4]], shards=2)
    assert 2 in m and 2.0 in m and 5 not in m and np.int64(4) in m and True in m
    assert st.tensor([3, 4]) in m and st.tensor([1, 2]) in m  # (m == t).any(), as torch
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        m.__contains__("a")
    with pytest.raises(RuntimeError):  # torch: "value cannot be converted to type double"
        float(st.tensor([1j]))
    assert complex(st.tensor([1 + 2j])) == 1 + 2j and float(st.tensor(3)) == 3.0


def test_conversion_methods_and_type_names():
    x = st.tensor([1.7, 0.0], shards=2)
    assert x.char().dtype == st.int8 and x.char().tolist() == [1, 0]
    assert x.cfloat().dtype == st.complex64 and x.cdouble().dtype == st.complex128
    assert x.cfloat().tolist() == [pytest.approx(1.7 + 0j), 0j]
    assert x.cfloat().type() == "sharded.ComplexFloatTensor"
    assert x.cdouble().type() == "sharded.ComplexDoubleTensor"


def test_new_creation_methods_take_self_dtype():
    f = st.tensor([1.0, 2.0], dtype=st.float64, shards=2)
    i = st.tensor([1, 2])
    assert f.new_zeros(2, 3).dtype == st.float64 and f.new_zeros((2, 3)).shape == (2, 3)
    assert i.new_ones([3]).tolist() == [1, 1, 1]
    assert i.new_ones(3, dtype=st.float32).dtype == st.float32
    assert f.new_full((2,), 7).tolist() == [7.0, 7.0] and f.new_full((2,), 7).dtype == st.float64
    assert i.new_full((2,), 7.5).tolist() == [7, 7]  # self's dtype, not the value's
    e = f.new_empty((2, 2))
    assert e.shape == (2, 2) and e.dtype == st.float64
    assert f.new_tensor([1, 2]).dtype == st.float64 and i.new_tensor([1.5, 2]).tolist() == [1, 2]
    assert i.new_tensor([1.5, 2], dtype=st.float32).tolist() == [1.5, 2.0]
    assert f.new_zeros(2, requires_grad=True).requires_grad and f.new_zeros(()).shape == ()


def test_result_type_and_can_cast():
    t = st.tensor
    assert st.result_type(t([1, 2]), 1.0) == st.float32
    assert st.result_type(t([1, 2], dtype=st.int32), t([1])) == st.int64
    assert st.result_type(t([1.0], dtype=st.float16), t(1.0, dtype=st.float64)) == st.float16
    assert st.result_type(2, 3.0) == st.float32
    assert st.result_type(t([1, 2], dtype=st.uint8), -1) == st.uint8
    assert st.result_type(t([True]), 2) == st.int64
    assert st.result_type(t([1, 2]), 1j) == st.complex64
    assert not st.can_cast(st.float64, st.int32) and st.can_cast(st.int32, st.float64)
    assert st.can_cast(st.int64, st.int8) and st.can_cast(st.bool, st.int8)
    assert not st.can_cast(st.complex64, st.float64) and st.can_cast(st.int8, st.uint8)
    assert not st.can_cast(st.int8, st.bool) and st.can_cast(st.float16, st.float64)
