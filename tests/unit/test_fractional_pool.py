"""F.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d: with given _random_samples the
values, indices and gradients are torch 2.13's (literals below), whole and with the batch
split; drawn samples give valid windows; torch's errors."""

import numpy as np
import pytest

import sharded as st

F = st.nn.functional

X = [
    [
        [0.0, 0.992, -0.256, -0.926, 0.494],
        [0.798, -0.7, -0.618, 0.859, 0.397],
        [-0.961, -0.149, 1.0, -0.109, -0.972],
        [0.359, 0.879, -0.586, -0.728, 0.773],
        [0.529, -0.91, -0.295, 0.986, 0.041],
    ],
    [
        [-0.996, 0.216, 0.94, -0.458, -0.822],
        [0.67, 0.65, -0.838, -0.434, 0.949],
        [0.189, -0.998, 0.068, 0.981, -0.321],
        [-0.898, 0.552, 0.756, -0.747, -0.563],
        [0.892, 0.333, -0.978, -0.081, 0.999],
    ],
]
S = [[[0.3, 0.8], [0.6, 0.1]]]
# F.fractional_max_pool2d(X[None], 2, output_size=(3, 3), return_indices=True, _random_samples=S)
OUT = [
    [[0.992, 0.992, 0.859], [0.798, 1.0, 0.859], [0.879, 0.879, 0.986]],
    [[0.67, 0.94, 0.949], [0.67, 0.981, 0.981], [0.892, 0.756, 0.999]],
]
IDX = [[[1, 1, 8], [5, 12, 8], [16, 16, 23]], [[5, 2, 9], [5, 13, 13], [20, 17, 24]]]
# the gradient of (out * (arange(18).reshape(1, 2, 3, 3) - 8)).sum()
GRAD = np.zeros((2, 25))
GRAD[0, [1, 5, 8, 12, 16]] = [-15, -5, -9, -4, -3]
GRAD[1, [2, 5, 9, 13, 17, 20, 24]] = [2, 5, 3, 11, 8, 7, 9]
# fractional_max_pool3d(cos(0.9 * arange(64)).round(3) as (1, 1, 4, 4, 4), 2,
# output_ratio=0.5, return_indices=True, _random_samples=[[[0.2, 0.7, 0.45]]]) (float32)
OUT3 = [[[1.0, 1.0], [0.998, 0.999]], [[0.993, 0.996], [0.991, 0.995]]]
IDX3 = [[[0, 7], [28, 14]], [[49, 35], [56, 42]]]


def test_fractional_max_pool2d_matches_torch_with_gradient():
    w = st.tensor(np.arange(18.0).reshape(1, 2, 3, 3) - 8)
    for shards in (1, 2):
        x = st.tensor(np.stack([X, X]), dtype=st.float64, shards=shards, requires_grad=True)
        u = st.tensor(S * 2, dtype=st.float64)
        out, idx = F.fractional_max_pool2d(x, 2, (3, 3), return_indices=True, _random_samples=u)
        if shards == 2:
            assert out.layout.grid[0] == 2  # a batch split stays where it is
        np.testing.assert_allclose(out.detach().numpy()[1], OUT)
        assert idx.dtype == st.int64 and idx.tolist()[1] == IDX
        (out * w).sum().backward()
        np.testing.assert_allclose(x.grad.numpy()[0].reshape(2, 25), GRAD)
    # unbatched input, a module with a fixed sample buffer
    pool = st.nn.FractionalMaxPool2d(
        2, output_size=3, _random_samples=st.tensor(S, dtype=st.float64)
    )
    assert pool(st.tensor(X, dtype=st.float64)).tolist() == OUT


def test_fractional_max_pool3d_matches_torch():
    y = st.tensor(
        np.cos(np.arange(64, dtype=np.float32) * np.float32(0.9)).round(3).reshape(1, 1, 4, 4, 4)
    )
    u = st.tensor([[[0.2, 0.7, 0.45]]])
    out, idx = F.fractional_max_pool3d(
        y, 2, output_ratio=0.5, return_indices=True, _random_samples=u
    )
    np.testing.assert_allclose(out.numpy()[0, 0], OUT3, rtol=1e-6)
    assert idx.tolist()[0][0] == IDX3
    pool = st.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0.5), return_indices=True)
    assert pool(y)[0].shape == (1, 1, 2, 2, 2)


def test_drawn_samples_give_window_maxima_and_gradcheck():
    st.manual_seed(0)
    a = np.random.default_rng(0).standard_normal((4, 3, 9, 8))
    x = st.tensor(a, shards=2, requires_grad=True)
    out, idx = F.fractional_max_pool2d(x, (2, 3), output_ratio=(0.5, 0.6), return_indices=True)
    assert out.shape == (4, 3, 4, 4)
    flat = a.reshape(4, 3, -1)
    got = np.take_along_axis(flat, idx.numpy().reshape(4, 3, -1), 2).reshape(out.shape)
    np.testing.assert_array_equal(out.detach().numpy(), got)  # each value sits at its index
    small = st.tensor(a[:2, :1, :3, :3], shards=2, requires_grad=True)
    u = st.rand(2, 1, 2, dtype=st.float64)
    fn = lambda t: F.fractional_max_pool2d(t, 2, 2, _random_samples=u)  # noqa: E731
    assert st.autograd.gradcheck(fn, (small,))


def test_fractional_max_pool_errors():
    x = st.ones(2, 3, 7, 6)
    with pytest.raises(st.ArgumentError, match="requires specifying either an output_size or"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(st.ArgumentError, match="output_ratio to either be a single Int or tuple"):
        F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7, 0.1))
    with pytest.raises(st.ArgumentError, match="kernel_size must either be a single Int or tuple"):
        F.fractional_max_pool2d(x, (2, 2, 2), 3)
    with pytest.raises(st.ArgumentError, match="tuple of three Ints"):
        F.fractional_max_pool3d(st.ones(1, 1, 4, 4, 4), (2, 2), 3)
    with pytest.raises(
        st.ArgumentError, match=r"pool height 2 too large relative to input height 7"
    ):
        F.fractional_max_pool2d(x, 2, output_size=7)
    with pytest.raises(st.ArgumentError, match="pool time 6 too large relative to input time 5"):
        F.fractional_max_pool3d(st.ones(1, 1, 5, 7, 7), 6, output_size=1)
    with pytest.raises(st.DimError):
        F.fractional_max_pool2d(x[0, 0], 2, 3)
    with pytest.raises(
        st.ShapeError, match=r"non-zero size for non-batch dimensions, but got\[2, 3, 0, 6\]"
    ):
        F.fractional_max_pool2d(st.ones(2, 3, 0, 6), 2, 3)
    with pytest.raises(st.DTypeError, match="not implemented for 'int64'"):
        F.fractional_max_pool2d(x.long(), 2, 3)
    u = st.rand(2, 3, 2)
    with pytest.raises(st.DTypeError, match="same dtype as input"):
        F.fractional_max_pool2d(x.double(), 2, 3, _random_samples=u)
    with pytest.raises(st.ShapeError, match=r"size\(0\) no less then input batch size"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=u[:1])
    with pytest.raises(st.ShapeError, match=r"size\(1\) equals to input channel size"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=u[:, :2])
    with pytest.raises(st.ShapeError, match=r"size\(2\) equals to 2; got 1"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=u[:, :, :1])
    with pytest.raises(st.ShapeError, match="to have 3 dimensions, got 2"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=u[0])
    with pytest.raises(st.ArgumentError, match="either an output size, or a pooling ratio"):
        st.nn.FractionalMaxPool2d(2)
    with pytest.raises(st.ArgumentError, match="only one of output_size and output_ratio"):
        st.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(st.ArgumentError, match=r"output_ratio must be between 0 and 1 \(got 1.0\)"):
        st.nn.FractionalMaxPool3d(2, output_ratio=1.0)
