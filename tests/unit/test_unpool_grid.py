"""F.max_unpool1d/2d/3d and nn.MaxUnpool1d/2d/3d against torch 2.13's values (literals
below), whole and split along the batch, with their gradients and torch's errors."""

import numpy as np
import pytest

import sharded as st

F = st.nn.functional

X = [
    [[[3, 1, 4, 1, 5], [9, 2, 6, 5, 3], [5, 8, 9, 7, 9], [3, 2, 3, 8, 4]]],
    [[[6, 2, 6, 4, 3], [3, 8, 3, 2, 7], [9, 5, 0, 2, 8], [8, 4, 1, 9, 7]]],
]
# torch: F.max_pool2d(x, 2, stride=1, return_indices=True) and F.max_unpool2d(o, i, 2, stride=1)
UNPOOL_S1 = [
    [[[0, 0, 0, 0, 5], [9, 0, 6, 0, 0], [0, 8, 9, 0, 9], [0, 0, 0, 0, 0]]],
    [[[0, 0, 6, 0, 0], [0, 8, 3, 0, 7], [9, 5, 0, 0, 8], [0, 0, 0, 9, 0]]],
]
# torch: F.max_pool2d(x, 2, return_indices=True), F.max_unpool2d(o, i, 2, output_size=(5, 5))
IDX_S2 = [[[[5, 7], [11, 12]]], [[[6, 2], [10, 18]]]]
UNPOOL_5x5 = [
    [[[0, 0, 0, 0, 0], [9, 0, 6, 0, 0], [0, 8, 9, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]],
    [[[0, 0, 6, 0, 0], [0, 8, 0, 0, 0], [9, 0, 0, 0, 0], [0, 0, 0, 9, 0], [0, 0, 0, 0, 0]]],
]


@pytest.mark.parametrize("shards", [1, 2])
def test_max_unpool2d_inverts_max_pool2d(shards):
    x = st.tensor(np.array(X, dtype=np.float32), shards=shards)
    out, idx = F.max_pool2d(x, 2, stride=1, return_indices=True)
    got = F.max_unpool2d(out, idx, 2, stride=1)
    assert got.layout.grid[0] == x.layout.grid[0]  # a batch split stays where it is
    np.testing.assert_array_equal(got.numpy(), UNPOOL_S1)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert idx.tolist() == IDX_S2
    np.testing.assert_array_equal(
        F.max_unpool2d(out, idx, 2, output_size=(5, 5)).numpy(), UNPOOL_5x5
    )
    full = F.max_unpool2d(out, idx, (2, 2), output_size=[2, 1, 5, 5])  # N and C are dropped
    np.testing.assert_array_equal(full.numpy(), UNPOOL_5x5)
    unbatched = st.nn.MaxUnpool2d(2)(out[1], idx[1], output_size=(5, 5))
    np.testing.assert_array_equal(unbatched.numpy(), UNPOOL_5x5[1])


def test_max_unpool1d_and_3d():
    a = st.tensor([[[1.0, 7.0, 2.0, 5.0, 4.0, 6.0]], [[3.0, 0.0, 8.0, 1.0, 2.0, 9.0]]], shards=2)
    out, idx = F.max_pool1d(a, 2, return_indices=True)
    assert st.nn.MaxUnpool1d(2)(out, idx).tolist() == [
        [[0.0, 7.0, 0.0, 5.0, 0.0, 6.0]],
        [[3.0, 0.0, 8.0, 0.0, 0.0, 9.0]],
    ]
    assert F.max_unpool1d(out, idx, 2, output_size=[7]).shape == (2, 1, 7)
    v = st.arange(16.0, dtype=st.float64).reshape(2, 1, 2, 2, 2)
    out, idx = F.max_pool3d(st.tensor(v.numpy(), shards=2), 2, return_indices=True)
    got = st.nn.MaxUnpool3d(2)(out, idx).reshape(2, 8)
    assert got.tolist() == [[0.0] * 7 + [7.0], [0.0] * 7 + [15.0]]
    assert (
        repr(st.nn.MaxUnpool1d(2, 1, 1))
        == "MaxUnpool1d(kernel_size=(2,), stride=(1,), padding=(1,))"
    )


@pytest.mark.parametrize("shards", [1, 2])
def test_max_unpool_gradient_gathers_at_the_indices(shards):
    x = st.tensor(np.array(X, dtype=np.float64), shards=shards)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    v = out.detach().requires_grad_(True)
    assert st.autograd.gradcheck(lambda t: F.max_unpool2d(t, idx, 2, output_size=(5, 5)), (v,))
    w = st.tensor(np.arange(50.0).reshape(2, 1, 5, 5), shards=shards)
    (F.max_unpool2d(v, idx, 2, output_size=(5, 5)) * w).sum().backward()
    assert v.grad.tolist() == [[[[5.0, 7.0], [11.0, 12.0]]], [[[31.0, 27.0], [35.0, 43.0]]]]


def test_max_unpool_errors():
    out, idx = F.max_pool2d(st.tensor(np.array(X, dtype=np.float32)), 2, return_indices=True)
    with pytest.raises(st.DTypeError, match="indices should be type int64 but got: float32"):
        F.max_unpool2d(out, idx.float(), 2)
    with pytest.raises(st.ShapeError, match=r"indices tensor with shape: \[2, 1, 2, 1\]"):
        F.max_unpool2d(out, idx[..., :1], 2)
    with pytest.raises(st.IndexOutOfRange, match="invalid max index: 118 .*size 4x4"):
        F.max_unpool2d(out, idx + 100, 2)
    with pytest.raises(st.IndexOutOfRange, match="invalid max index: -98"):
        F.max_unpool2d(out, idx - 100, 2)
    with pytest.raises(
        st.ArgumentError, match=r'output_size "\(9, 9\)" \(dim 0 must be between 2 and 6\)'
    ):
        F.max_unpool2d(out, idx, 2, output_size=(9, 9))
    with pytest.raises(st.ArgumentError, match="2 or 4 elements, but it has a length of '3'"):
        F.max_unpool2d(out, idx, 2, output_size=(1, 5, 5))
    with pytest.raises(st.UnsupportedDType, match="\"max_unpool2d\" not implemented for 'int32'"):
        F.max_unpool2d(out.int(), idx, 2)
    with pytest.raises(st.ShapeError, match="3d or 4d Tensor, but got a tensor with 2 dimensions"):
        F.max_unpool2d(out[0, 0], idx[0, 0], 2)
    with pytest.raises(st.ShapeError, match="4d or 5d Tensor, but got a tensor with 3 dimensions"):
        F.max_unpool3d(out[0], idx[0], 2)
    with pytest.raises(st.ArgumentError, match=r"stride: \[0, 0, 0\]"):
        F.max_unpool3d(out, idx, 2, stride=0)
