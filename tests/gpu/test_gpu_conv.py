"""Convolution and pooling of inputs split along H or W on GPU shards (and on a tensor whose
shards sit on the GPU and the CPU, so halos cross devices), compared with numpy references."""

import numpy as np

import sharded as st
from tests.unit.test_conv import ref_avg_pool2d, ref_conv2d, ref_max_pool2d
from tests.unit.test_conv_halo import _max_grad, ref_conv2d_grads

F = st.nn.functional
RNG = np.random.default_rng(5)
MIXED = st.Layout(dim=2, shards=3, workers=(0, 2, 1))  # rows on cuda:0, the CPU, cuda:0
PLACES = [(st.Layout(dim=2, shards=2), "cuda"), (MIXED, "cpu")]  # "cpu": the weight's


def test_conv2d_row_split_on_gpu_and_mixed_devices():
    x, w, b = RNG.standard_normal((2, 4, 13, 11)), RNG.standard_normal((4, 2, 3, 3)), np.ones(4)
    for lay, dev in PLACES:
        t = st.from_numpy(x, layout=lay, device=dev, requires_grad=True)
        wt = st.from_numpy(w, device=dev, requires_grad=True)
        out = F.conv2d(t, wt, st.from_numpy(b, device=dev), (2, 1), 1, (1, 2), 2)
        want = ref_conv2d(x, w, b, (2, 1), ((1, 1), (1, 1)), (1, 2), 2)
        np.testing.assert_allclose(out.detach().numpy(), want, atol=1e-12)
        assert out.layout.grid == t.layout.grid
        g = RNG.standard_normal(want.shape)
        (out * st.from_numpy(g, device=dev)).sum().backward()
        gx, gw = ref_conv2d_grads(x, w, g, (2, 1), ((1, 1), (1, 1)), (1, 2), 2)
        np.testing.assert_allclose(t.grad.numpy(), gx, atol=1e-12)
        np.testing.assert_allclose(wt.grad.numpy(), gw, atol=1e-12)
    a = RNG.standard_normal((1, 1, 200, 700)).astype(np.float32)  # several GEMM blocks
    k = RNG.standard_normal((1, 1, 5, 5)).astype(np.float32)
    out = F.conv2d(st.from_numpy(a, device="cuda", dim=3, shards=2), st.from_numpy(k), padding=2)
    want = ref_conv2d(a[:, :, :8], k, pads=((2, 2), (2, 2)))[:, :, :6]
    np.testing.assert_allclose(out.numpy()[:, :, :6], want, rtol=1e-4, atol=1e-4)


def test_pools_of_row_splits_on_gpu_and_mixed_devices():
    x = RNG.standard_normal((2, 3, 13, 11))
    x[0, 1, 5, :2] = np.nan
    for lay, dev in PLACES:
        t = st.from_numpy(x, layout=lay, device=dev, requires_grad=True)
        out, idx = F.max_pool2d(t, 3, 2, 1, ceil_mode=True, return_indices=True)
        val, want = ref_max_pool2d(x, (3, 3), (2, 2), (1, 1), ceil=True)
        np.testing.assert_array_equal(out.detach().numpy(), val)
        assert idx.numpy().tolist() == want.tolist()
        g = RNG.standard_normal(val.shape)
        (out * st.from_numpy(g, device=dev)).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), _max_grad(x.shape, want, g), atol=1e-12)
        y = st.from_numpy(np.nan_to_num(x), layout=lay, device=dev)
        got = F.avg_pool2d(y, 3, 2, 1, count_include_pad=False).numpy()
        ref = ref_avg_pool2d(np.nan_to_num(x), (3, 3), (2, 2), (1, 1), cip=False)
        np.testing.assert_allclose(got, ref, atol=1e-12)
