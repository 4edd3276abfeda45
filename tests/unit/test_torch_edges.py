"""Edge cases where torch 2.13 answers and sharded refused or differed (from the OpInfo
comparison's failing samples): empty batches of the norms, ``mode='area'`` of a 5-D input,
a 0-d ``x`` of ``linalg.vander``, ``unfold`` of bool and complex inputs. The expected values
were asked of torch and are written here as literals."""

import numpy as np
import pytest

import sharded as st

F = st.nn.functional


def test_norms_of_an_empty_batch_return_it():
    assert F.group_norm(st.ones(0, 4, 3), 2).shape == (0, 4, 3)
    out = F.group_norm(st.ones(0, 4), 2, st.ones(4), st.ones(4))
    assert out.shape == (0, 4) and out.dtype == st.float32
    assert F.batch_norm(st.ones(0), None, None, training=True).shape == (0,)
    rm, rv = st.zeros(3), st.ones(3)
    assert F.batch_norm(st.ones(0, 3), rm, rv, training=True).shape == (0, 3)
    assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3  # untouched, as torch
    with pytest.raises(st.ArgumentError, match="more than 1 value per channel"):
        F.batch_norm(st.ones(1, 3), None, None, training=True)


def test_area_interpolation_of_a_5d_input():
    x = st.arange(60.0, dtype=st.float64).reshape(1, 2, 3, 2, 5)
    out = F.interpolate(x, size=(2, 1, 3), mode="area")
    want = [8.0, 9.5, 11.0, 18.0, 19.5, 21.0, 38.0, 39.5, 41.0, 48.0, 49.5, 51.0]
    assert out.shape == (1, 2, 2, 1, 3) and out.reshape(-1).tolist() == want


def test_vander_of_a_0d_input_is_one_row():
    assert st.linalg.vander(st.tensor(2.0), N=3).tolist() == [[1.0, 2.0, 4.0]]
    assert st.linalg.vander(st.tensor(2), N=2).tolist() == [[1, 2]]
    for x, n in ((st.tensor(2.0), None), (st.tensor([2.0]), 1), (st.tensor([2.0, 3.0]), 0)):
        with pytest.raises(st.ArgumentError, match="N must be greater than 1"):
            st.linalg.vander(x, N=n)


def test_unfold_of_bool_and_complex_inputs():
    x = st.tensor([[[[True, False, True], [False, True, False]]]])
    out = F.unfold(x, (1, 2), padding=1)
    on0, on1 = {5, 7, 10}, {4, 6, 9}
    want = [[[i in on0 for i in range(16)], [i in on1 for i in range(16)]]]
    assert out.dtype == st.bool and out.tolist() == want
    z = st.tensor([[[1 + 2j, 3 - 1j], [0.5j, 2]]], dtype=st.complex64)
    got = F.unfold(z, 1)
    assert got.dtype == st.complex64
    np.testing.assert_array_equal(got.numpy(), [[1 + 2j, 3 - 1j, 0.5j, 2]])
    with pytest.raises(st.DTypeError, match="im2col"):
        F.unfold(st.ones(1, 1, 2, 2, dtype=st.int64), 1)
