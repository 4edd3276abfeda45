"""F.max_unpool1d/2d/3d, nn.MaxUnpool1d/2d/3d, F.grid_sample and F.affine_grid (and torch's
top-level grid_sampler forms) against torch 2.13's values (literals below), whole and split
along the batch, with their gradients and torch's errors."""

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


# ------------------------------------------------------------------- grid_sample, affine_grid
GX = [
    [[[1.0, 2.0, 0.0], [3.0, -1.0, 4.0], [2.0, 5.0, 1.0]]],
    [[[0.0, 1.0, 2.0], [-2.0, 3.0, 1.0], [4.0, 0.0, -3.0]]],
]
GRID = [
    [[[-0.9, -0.6], [0.3, 0.1]], [[1.2, -1.1], [0.55, 0.8]]],
    [[[0.0, 0.0], [-1.4, 0.7]], [[0.7, 0.35], [-0.2, 1.05]]],
]
W = [[[[1.0, -2.0], [3.0, 0.5]]]]
# torch: y = F.grid_sample(x, grid, mode, padding_mode, align_corners); (y * W).sum().backward()
# -> (y, x.grad, grid.grad), rounded to 10 digits
SAMPLES = {
    ("bilinear", "zeros", False): (
        [[[[0.78, 1.5425], [0.0, 1.36]]], [[[3.0, 0.0], [-1.045, 0.51]]]],
        [
            [[[0.585, 0.0, 0.21], [0.065, -0.935, -0.765], [0.0, -0.095, 0.195]]],
            [[[0.0, 0.0, 0.0], [0.0, 1.0, 1.35375], [0.06375, 0.14875, 1.49625]]],
        ],
        [
            [[[1.8, 1.95], [-10.95, -5.85]], [[0.0, 0.0], [-2.4, -1.275]]],
            [[[-3.0, -4.5], [0.0, 0.0]], [[4.95, -17.1], [-1.275, -0.9]]],
        ],
    ),
    ("bilinear", "border", True): (
        [[[[1.7, 0.83], [0.0, 2.59]]], [[[3.0, 2.2], [0.305, 0.8]]]],
        [
            [[[0.54, 0.06, 3.0], [0.36, -1.175, -0.485], [0.0, 0.04, 0.16]]],
            [[[0.0, 0.0, 0.0], [-0.6, 1.585, 1.365], [-1.3, 0.715, 0.735]]],
        ],
        [
            [[[-1.0, 1.5], [-8.2, -6.6]], [[0.0, 0.0], [-1.1, 0.525]]],
            [[[-2.0, -3.0], [0.0, -12.0]], [[-7.05, -11.1], [-2.0, -0.0]]],
        ],
    ),
    ("bilinear", "reflection", False): (
        [[[[1.2, 1.5425], [0.0, 1.7]]], [[[3.0, 3.6], [-1.1, 1.2]]]],
        [
            [[[0.9, 0.0, 3.0], [0.1, -0.935, -0.765], [0.0, -0.0775, 0.2775]]],
            [[[0.0, 0.0, 0.0], [0.0, 1.0, 1.425], [-1.65, 0.15, 1.575]]],
        ],
        [
            [[[0.0, 3.0], [-10.95, -5.85]], [[0.0, 0.0], [-3.0, -0.0]]],
            [[[-3.0, -4.5], [-12.0, 0.0]], [[0.0, -18.0], [-3.0, -0.0]]],
        ],
    ),
    ("nearest", "reflection", True): (
        [[[[1.0, -1.0], [0.0, 1.0]]], [[[3.0, 4.0], [1.0, 0.0]]]],
        [
            [[[1.0, 0.0, 3.0], [0.0, -2.0, 0.0], [0.0, 0.0, 0.5]]],
            [[[0.0, 0.0, 0.0], [0.0, 1.0, 3.0], [-2.0, 0.5, 0.0]]],
        ],
        [
            [[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]],
            [[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]],
        ],
    ),
    ("bicubic", "zeros", True): (
        [
            [[[1.957526, 0.4239145625], [-0.417312, 3.22543225]]],
            [[[3.0, 1.823598], [0.207678125, 1.00542775]]],
        ],
        [
            [
                [
                    [0.692307, -0.12331125, 2.72823],
                    [0.65768625, -1.5161165, -0.74358125],
                    [-0.089325, 0.08864125, 0.245386],
                ]
            ],
            [
                [
                    [0.0837609609, -0.1187554922, -0.2765724609],
                    [-0.5834614453, 1.8163387891, 1.9416840703],
                    [-1.1532058984, 1.0213466797, 0.9314490234],
                ]
            ],
        ],
        [
            [
                [[-0.40452, 1.845495], [-11.51869125, -7.04569875]],
                [[-0.90639, 5.11488], [-1.5637575, 0.1618354687]],
            ],
            [
                [[2.25, -0.75], [-6.24633, -10.40904]],
                [[-10.6309125, -17.01838125], [-2.8276542187, -0.8028675]],
            ],
        ],
    ),
    ("bicubic", "reflection", False): (
        [
            [[[1.0781432813, 1.1252215479], [-1.065825, 1.4825834375]]],
            [[[3.0, 3.8799492187], [-1.3008675269, 1.3773322266]]],
        ],
        [
            [
                [
                    [1.0580371348, -0.4710469043, 4.0054472695],
                    [0.2997418457, -1.2194130371, -1.4706413086],
                    [0.0075589102, -0.071483418, 0.3617995078],
                ]
            ],
            [
                [
                    [0.0, 0.0094947583, -0.2760142896],
                    [0.0398397656, 0.8702199341, 1.751717644],
                    [-1.7363397656, 0.2515353076, 1.5895466455],
                ]
            ],
        ],
        [
            [
                [[0.183178125, 4.2071976563], [-16.3884313477, -7.2568432617]],
                [[6.468609375, -4.9005], [-4.240153125, -0.5074325684]],
            ],
            [
                [[3.375, -1.125], [-10.3101328125, -10.66921875]],
                [[-8.4887090332, -19.3930123535], [-4.6379047852, 0.0319570313]],
            ],
        ],
    ),
}


@pytest.mark.parametrize("case", list(SAMPLES), ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("shards", [1, 2])
def test_grid_sample_matches_torch(case, shards):
    mode, padding_mode, align = case
    x = st.tensor(GX, dtype=st.float64, shards=shards, requires_grad=True)
    grid = st.tensor(GRID, dtype=st.float64, shards=shards, requires_grad=True)
    y = F.grid_sample(x, grid, mode, padding_mode, align)
    (y * st.tensor(W, dtype=st.float64)).sum().backward()
    want_y, want_gx, want_gg = SAMPLES[case]
    np.testing.assert_allclose(y.detach().numpy(), want_y, atol=1e-9)
    np.testing.assert_allclose(x.grad.numpy(), want_gx, atol=1e-9)
    np.testing.assert_allclose(grid.grad.numpy(), want_gg, atol=1e-9)


def test_grid_sample_5d_and_gradcheck():
    x = st.tensor(np.arange(16.0).reshape(2, 1, 2, 2, 2) % 5, shards=2)
    grid = st.tensor(
        [[[[[-0.5, 0.25, 0.1], [0.8, -0.9, 0.6]]]], [[[[0.3, 0.3, -0.7], [1.1, 0.0, 0.2]]]]],
        dtype=st.float64,
        shards=2,
    )
    got = F.grid_sample(x, grid, "bilinear", "border", False)
    np.testing.assert_allclose(got.numpy(), [[[[[1.65, 0.0]]]], [[[[1.4, 1.8]]]]], atol=1e-12)
    assert F.grid_sample(x, grid, "nearest", "border", False).tolist() == [
        [[[[1.0, 0.0]]]],
        [[[[1.0, 3.0]]]],
    ]
    xg = st.tensor(np.arange(16.0).reshape(2, 1, 2, 2, 2) / 7, shards=2, requires_grad=True)
    gg = (grid * 0.9).detach().requires_grad_(True)
    assert st.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, align_corners=True), (xg, gg))
    x4 = st.tensor(GX, dtype=st.float64, shards=2, requires_grad=True)
    g4 = st.tensor(GRID, dtype=st.float64, shards=2, requires_grad=True)
    assert st.autograd.gradcheck(
        lambda a, b: F.grid_sample(a, b, "bicubic", "border", False), (x4, g4)
    )
    # torch's integer-mode forms
    assert st.grid_sampler(x, grid, 1, 1, False).tolist() == [[[[[1.0, 0.0]]]], [[[[1.0, 3.0]]]]]
    assert st.grid_sampler_3d(x, grid, 1, 1, False).tolist() == [[[[[1.0, 0.0]]]], [[[[1.0, 3.0]]]]]


def test_affine_grid_matches_torch():
    theta = st.tensor(
        [[[0.8, -0.3, 0.1], [0.2, 1.1, -0.4]], [[1.0, 0.5, 0.0], [0.0, 1.0, 0.25]]],
        dtype=st.float64,
        shards=2,
        requires_grad=True,
    )
    grid = F.affine_grid(theta, [2, 1, 2, 3], align_corners=False)
    np.testing.assert_allclose(
        grid.detach().numpy(),
        [
            [
                [[-0.2833333333, -1.0833333333], [0.25, -0.95], [0.7833333333, -0.8166666667]],
                [[-0.5833333333, 0.0166666667], [-0.05, 0.15], [0.4833333333, 0.2833333333]],
            ],
            [
                [[-0.9166666667, -0.25], [-0.25, -0.25], [0.4166666667, -0.25]],
                [[-0.4166666667, 0.75], [0.25, 0.75], [0.9166666667, 0.75]],
            ],
        ],
        atol=1e-9,
    )
    (grid**2).sum().backward()
    np.testing.assert_allclose(
        theta.grad.numpy(),
        [
            [[2.8444444444, -0.9, 1.2], [0.7111111111, 3.3, -4.8]],
            [[3.5555555556, 1.5, 0.0], [0.0, 3.0, 3.0]],
        ],
        atol=1e-9,
    )
    theta3 = st.tensor([[[1.0, 0.0, 0.0, 0.1], [0.0, 2.0, 0.0, 0.0], [0.5, 0.0, 1.0, 0.0]]])
    with pytest.warns(UserWarning, match="unit-size grids"):
        grid3 = F.affine_grid(theta3, (1, 1, 1, 2, 2), align_corners=True)
    np.testing.assert_allclose(
        grid3.numpy(),
        [[[[[-0.9, -2.0, -0.5], [1.1, -2.0, 0.5]], [[-0.9, 2.0, -0.5], [1.1, 2.0, 0.5]]]]],
        atol=1e-6,
    )
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(theta3, (1, 1, 2, 2, 2))
    assert st.affine_grid_generator(theta3, (1, 1, 2, 2, 2), False).shape == (1, 2, 2, 2, 3)


def test_grid_sample_and_affine_grid_errors():
    x = st.ones(2, 3, 4, 5)
    grid = st.zeros(2, 3, 2, 2)
    with pytest.raises(st.ArgumentError, match="expected mode to be .* but got: 'foo'"):
        F.grid_sample(x, grid, mode="foo")
    with pytest.raises(st.ArgumentError, match="padding_mode .* but got: 'wrap'"):
        F.grid_sample(x, grid, padding_mode="wrap")
    with pytest.raises(st.ShapeError, match=r"same batch size, .*grid with sizes \[1, 3, 2, 2\]"):
        F.grid_sample(x, grid[:1], align_corners=False)
    with pytest.raises(st.ShapeError, match=r"size 2 in last dimension, .*\[2, 3, 2, 3\]"):
        F.grid_sample(x, st.zeros(2, 3, 2, 3), align_corners=False)
    with pytest.raises(st.ShapeError, match="dimension 2 being empty"):
        F.grid_sample(x[:, :, :0], grid, align_corners=False)
    with pytest.raises(st.UnsupportedArgument, match="bicubic interpolation only supports 4D"):
        F.grid_sample(
            st.ones(1, 1, 2, 2, 2), st.zeros(1, 1, 1, 1, 3), "bicubic", align_corners=True
        )
    with pytest.raises(st.ShapeError, match="expected 4D input and grid"):
        st.grid_sampler_2d(st.ones(1, 1, 2, 2, 2), st.zeros(1, 1, 1, 1, 3), 0, 0, False)
    with pytest.raises(st.UnsupportedDType, match="not implemented for 'int64'"):
        F.grid_sample(x.long(), grid.long(), align_corners=False)
    with pytest.raises(st.DTypeError, match="input has float32 and grid has float64"):
        F.grid_sample(x, grid.double(), align_corners=False)
    with pytest.raises(
        st.ArgumentError, match="interpolation_mode must be an int in \\[0, 2\\], got 3"
    ):
        st.grid_sampler(x, grid, 3, 0, False)
    theta = st.zeros(2, 2, 3)
    with pytest.raises(st.DTypeError, match="floating point type, but got int64"):
        F.affine_grid(theta.long(), [2, 3, 4, 5], False)
    with pytest.raises(st.UnsupportedArgument, match=r"Got size \[2, 3, 4\]"):
        F.affine_grid(theta, [2, 3, 4], False)
    with pytest.raises(
        st.ShapeError, match=r"shape Nx3x4 for size \[2, 3, 4, 5, 6\]. Got \[2, 2, 3\]"
    ):
        F.affine_grid(theta, [2, 3, 4, 5, 6], False)
    with pytest.raises(st.ArgumentError, match=r"positive output size. Got \[2, 3, 0, 5\]"):
        F.affine_grid(theta, [2, 3, 0, 5], False)
    with pytest.raises(st.ShapeError, match="2 matrices for a batch of 3"):
        F.affine_grid(theta, [3, 3, 4, 5], False)
    assert F.grid_sample(x[:0], grid[:0], align_corners=False).shape == (0, 3, 3, 2)
