"""``ShardedTensor``'s metadata: ``size``/``stride`` of a dim, with torch's errors."""

import pytest

import sharded as st


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
