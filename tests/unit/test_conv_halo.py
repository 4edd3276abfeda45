"""Convolution and max/average pooling of inputs split along H or W (and along N and H/W at
once): the output keeps the input's cuts, each worker reads only the halo rows its windows
need from its neighbours, and values and gradients match numpy references (torch's
cross-correlation) for strides, dilations, paddings, groups, odd and uneven shards."""

import numpy as np
import pytest

import sharded as st
from tests.unit.test_conv import ref_avg_pool2d, ref_conv2d, ref_max_pool2d

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
RNG = np.random.default_rng(11)


def ref_conv2d_grads(x, w, g, stride=(1, 1), pads=((0, 0), (0, 0)), dil=(1, 1), groups=1):
    """The input's and the weight's gradient of ``sum(conv2d(x, w) * g)``, window by window."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(pads))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for i in range(g.shape[2]):
        for j in range(g.shape[3]):
            r, q = i * stride[0], j * stride[1]
            rows = slice(r, r + dil[0] * (kh - 1) + 1, dil[0])
            cols = slice(q, q + dil[1] * (kw - 1) + 1, dil[1])
            for a in range(groups):
                cs, os_ = slice(a * cg, (a + 1) * cg), slice(a * og, (a + 1) * og)
                dxp[:, cs, rows, cols] += np.einsum("no,ocuv->ncuv", g[:, os_, i, j], w[os_])
                dw[os_] += np.einsum("no,ncuv->ocuv", g[:, os_, i, j], xp[:, cs, rows, cols])
    (t, _), (left, _) = pads
    return dxp[:, :, t : t + h, left : left + wd], dw


def moved():
    return st.stats()["bytes_moved"]


LAYOUTS = {  # split along H, W, both, N and H; uneven, with an empty shard
    "H2": st.Layout(dim=2, shards=2),
    "H3": st.Layout(dim=2, shards=3),
    "W2": st.Layout(dim=3, shards=2),
    "HW": st.Layout.block((1, 1, 2, 2)),
    "NH": st.Layout.block((2, 1, 2, 1)),
    "Hx": st.Layout(chunks={2: (0, 6, 7)}),
}
CONV = [  # w shape, stride, padding (torch's argument), pads, dilation, groups
    ((3, 2, 3, 3), (1, 1), 1, ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 2, 5, 5), (1, 1), 2, ((2, 2), (2, 2)), (1, 1), 1),
    ((4, 2, 3, 2), (2, 2), 1, ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 2, 3, 3), (1, 1), 2, ((2, 2), (2, 2)), (2, 2), 1),
    ((2, 2, 2, 4), (1, 1), "same", ((0, 1), (1, 2)), (1, 1), 1),
    ((3, 2, 3, 3), (2, 1), 0, ((0, 0), (0, 0)), (1, 2), 1),
    ((2, 2, 3, 3), (3, 2), 3, ((3, 3), (3, 3)), (1, 1), 1),
    ((4, 1, 3, 3), (1, 2), 1, ((1, 1), (1, 1)), (2, 1), 2),
]


@pytest.mark.parametrize("lay", list(LAYOUTS))
@pytest.mark.parametrize("case", range(len(CONV)))
def test_conv2d_spatial_split_values_gradients_and_cuts(case, lay):
    ws, stride, padding, pads, dil, groups = CONV[case]
    x = RNG.standard_normal((2, 2, 13, 11))
    w, b = RNG.standard_normal(ws), RNG.standard_normal(ws[0])
    t = st.tensor(x).reshard(layout=LAYOUTS[lay]).requires_grad_(True)
    wt, bt = st.tensor(w).requires_grad_(True), st.tensor(b).requires_grad_(True)
    out = F.conv2d(t, wt, bt, stride, padding, dil, groups)
    want = ref_conv2d(x, w, b, stride, pads, dil, groups)
    np.testing.assert_allclose(out.detach().numpy(), want, atol=1e-12)
    assert out.layout.grid == t.layout.grid  # the H/W (and N) cuts are kept
    g = RNG.standard_normal(want.shape)
    (out * st.tensor(g)).sum().backward()
    gx, gw = ref_conv2d_grads(x, w, g, stride, pads, dil, groups)
    np.testing.assert_allclose(t.grad.numpy(), gx, atol=1e-12)
    np.testing.assert_allclose(wt.grad.numpy(), gw, atol=1e-12)
    np.testing.assert_allclose(bt.grad.numpy(), g.sum((0, 2, 3)), atol=1e-12)
    assert t.grad.layout == t.layout


def test_row_split_image_moves_only_halo_rows():
    """A row-split (1, 1, H, W) image, as Richardson-Lucy's: the output has the input's rows
    on the same workers and only the 2-row halos (and the weight) travel."""
    a, w = RNG.standard_normal((1, 1, 60, 50)), RNG.standard_normal((1, 1, 5, 5))
    x = st.tensor(a).reshard(dim=2, shards=3)
    wt = st.tensor(w).replicate()
    before = moved()
    out = F.conv2d(x, wt, padding=2)
    assert moved() - before == 4 * 2 * 50 * 8  # two halos of 2 rows for each inner cut
    assert out.layout == x.layout
    np.testing.assert_allclose(out.numpy(), ref_conv2d(a, w, pads=((2, 2), (2, 2))), atol=1e-12)
    # torch's 'same' even kernel, a column split: one halo column one way, two the other
    x, w4 = st.tensor(a).reshard(dim=3, shards=2), st.tensor(np.ones((1, 1, 1, 4))).replicate()
    before = moved()
    out = F.conv2d(x, w4, padding="same")
    assert moved() - before == (1 + 2) * 60 * 8 and out.layout == x.layout


def test_strided_cuts_follow_the_window_centres():
    # stride 2 over 12 rows cut at 6: output row 3 is the first window centred at row >= 6
    x = st.tensor(RNG.standard_normal((1, 1, 12, 4))).reshard(dim=2, shards=2)
    assert F.conv2d(x, st.ones(1, 1, 3, 3, dtype=st.float64), stride=2, padding=1).layout.bounds[
        2
    ] == (0, 3, 6)
    # 'valid' 3x3: output row i is centred on input row i + 1
    assert F.conv2d(x, st.ones(1, 1, 3, 3, dtype=st.float64)).layout.bounds[2] == (0, 5, 10)


def test_large_images_cross_several_gemm_blocks():
    """Enough rows that the kernels multiply several im2col blocks (forward, stride-1 and
    strided input gradients, weight gradient) and a float32 split along W."""
    a = RNG.standard_normal((1, 2, 96, 700))
    w = RNG.standard_normal((2, 2, 3, 3))
    for stride in [(1, 1), (2, 2)]:
        t = st.tensor(a).reshard(dim=3, shards=2).requires_grad_(True)
        wt = st.tensor(w).requires_grad_(True)
        out = F.conv2d(t, wt, stride=stride, padding=1)
        assert out.layout.split_dims == (3,)
        want = ref_conv2d(a[:, :, :12], w, stride=stride, pads=((1, 1), (1, 1)))
        got = out.detach().numpy()[:, :, : want.shape[2] - 1]
        np.testing.assert_allclose(got, want[:, :, :-1], 1e-9)
        g = RNG.standard_normal(out.shape)
        (out * st.tensor(g)).sum().backward()
        g_top = g[:, :, : 12 // stride[0]]
        gx, _ = ref_conv2d_grads(a[:, :, :12], w, g_top, stride, ((1, 1), (1, 1)))
        np.testing.assert_allclose(t.grad.numpy()[:, :, :10], gx[:, :, :10], atol=1e-9)
        # the weight's gradient, tap by tap: g times the input rows the tap read
        xp = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
        (oh, ow), (s0, s1) = out.shape[2:], stride
        for u, v in np.ndindex(3, 3):
            tap = xp[:, :, u : u + s0 * (oh - 1) + 1 : s0, v : v + s1 * (ow - 1) + 1 : s1]
            dw = np.einsum("nohw,nchw->oc", g, tap)
            np.testing.assert_allclose(wt.grad.numpy()[:, :, u, v], dw, rtol=1e-9)
    x32 = a[:1, :1].astype(np.float32)
    out = F.conv2d(st.tensor(x32).reshard(dim=3, shards=3), st.tensor(w[:1, :1].astype(np.float32)))
    assert out.dtype == st.float32
    want = ref_conv2d(x32[:, :, :6], w[:1, :1])
    np.testing.assert_allclose(out.numpy()[:, :, :4], want, rtol=1e-5, atol=1e-5)


def test_gradcheck_on_a_row_split():
    x = st.tensor(RNG.standard_normal((1, 2, 9, 5))).reshard(dim=2, shards=2).requires_grad_(True)
    w = st.tensor(RNG.standard_normal((2, 2, 3, 2))).requires_grad_(True)
    fn = lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(2, 1), dilation=(2, 1))  # noqa: E731
    assert fn(x, w).layout.bounds[2] == (0, 3, 5)
    assert st.autograd.gradcheck(fn, (x, w))


def test_when_a_batch_split_is_taken_instead():
    w = st.tensor(RNG.standard_normal((2, 2, 5, 5)))
    # channels split: resharded to a batch split, as before
    a = RNG.standard_normal((4, 2, 8, 8))
    out = F.conv2d(st.tensor(a).reshard(dim=1, shards=2), w, padding=2)
    assert out.layout.split_dims == (0,)
    np.testing.assert_allclose(out.numpy(), ref_conv2d(a, w.numpy(), pads=((2, 2),) * 2), 1e-12)
    # 4-row shards under a 5-row window and an image per shard: a batch split, no halos
    out = F.conv2d(st.tensor(a).reshard(dim=2, shards=2), w, padding=2)
    assert out.layout.split_dims == (0,) and out.layout.num_shards == 2
    # one image: the rows stay split, each shard reading halos from two neighbours
    a = RNG.standard_normal((1, 2, 8, 8))
    x = st.tensor(a).reshard(layout=st.Layout(chunks={2: (3, 2, 3)}))
    out = F.conv2d(x, w, padding=2)
    assert out.layout.bounds[2] == (0, 3, 5, 8)
    np.testing.assert_allclose(out.numpy(), ref_conv2d(a, w.numpy(), pads=((2, 2),) * 2), 1e-12)


def test_conv1d_split_along_its_length():
    a, w = RNG.standard_normal((2, 3, 40)), RNG.standard_normal((4, 3, 3))
    x = st.tensor(a).reshard(dim=2, shards=3).requires_grad_(True)
    out = F.conv1d(x, st.tensor(w), padding=1, stride=2)
    assert out.layout.split_dims == (2,)
    want = ref_conv2d(a[:, :, None], w[:, :, None], stride=(1, 2), pads=((0, 0), (1, 1)))
    np.testing.assert_allclose(out.detach().numpy(), want[:, :, 0], atol=1e-12)
    out.sum().backward()
    gx, _ = ref_conv2d_grads(
        a[:, :, None], w[:, :, None], np.ones(want.shape), (1, 2), ((0, 0), (1, 1))
    )
    np.testing.assert_allclose(x.grad.numpy(), gx[:, :, 0], atol=1e-12)


POOLS = [  # kernel, stride, padding, dilation, ceil_mode
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 2), (2, 1), (1, 1), (2, 2), True),
    ((3, 3), (1, 1), (1, 1), (1, 1), False),
    ((2, 3), (3, 2), (1, 1), (1, 1), True),
]


def _max_grad(xs, idx, g):
    gx = np.zeros(xs)
    for a in np.ndindex(*idx.shape[:2]):  # torch: each gradient onto its max's position
        np.add.at(gx[a].reshape(-1), idx[a].ravel(), g[a].ravel())
    return gx


@pytest.mark.parametrize("lay", ["H2", "H3", "W2", "HW", "NH"])
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_pools_of_spatial_splits(case, lay):
    k, s, p, d, ceil = POOLS[case]
    x = RNG.standard_normal((2, 2, 13, 11))
    x[0, 0, 6, :3] = np.nan  # NaN propagates; torch's index is the last NaN of a window
    x[1, 1, 6, 6] = x[1, 1, 6, 5]  # a tie: the first maximum wins
    t = st.tensor(x).reshard(layout=LAYOUTS[lay]).requires_grad_(True)
    out, idx = F.max_pool2d(t, k, s, p, d, ceil_mode=ceil, return_indices=True)
    val, want = ref_max_pool2d(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(out.detach().numpy(), val)
    assert idx.numpy().tolist() == want.tolist()
    assert out.layout.grid == t.layout.grid and idx.layout == out.layout
    g = RNG.standard_normal(val.shape)
    (out * st.tensor(g)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), _max_grad(x.shape, want, g), atol=1e-12)
    if d != (1, 1):
        return
    y = np.nan_to_num(x)
    for cip, div in [(True, None), (False, None), (True, 5)]:
        t = st.tensor(y).reshard(layout=LAYOUTS[lay]).requires_grad_(True)
        out = F.avg_pool2d(t, k, s, p, ceil, cip, div)
        np.testing.assert_allclose(out.detach().numpy(), ref_avg_pool2d(y, k, s, p, ceil, cip, div),
                                   atol=1e-12)  # fmt: skip
        assert out.layout.grid == t.layout.grid
        out.backward(st.tensor(g))
        whole = st.tensor(y).requires_grad_(True)  # the same on one worker (checked above)
        F.avg_pool2d(whole, k, s, p, ceil, cip, div).backward(st.tensor(g))
        np.testing.assert_allclose(t.grad.numpy(), whole.grad.numpy(), atol=1e-12)


def test_pool_row_split_moves_only_halo_rows_and_integers():
    a = RNG.integers(-50, 50, (1, 2, 40, 30))
    x = st.tensor(a).reshard(dim=2, shards=2)
    before = moved()
    out = F.max_pool2d(x, 3, 1, 1)
    assert moved() - before == 2 * 2 * 30 * 8 and out.layout == x.layout  # one row each way
    np.testing.assert_array_equal(out.numpy(), ref_max_pool2d(a, (3, 3), (1, 1), (1, 1))[0])
    got = F.avg_pool2d(x, 3, 2, 1, count_include_pad=False).numpy()
    full = F.avg_pool2d(st.tensor(a), 3, 2, 1, count_include_pad=False).numpy()
    assert got.dtype == np.int64 and (got == full).all()
    # 2x2 windows, stride 2, cut at an even row: no halo at all
    before = moved()
    assert F.max_pool2d(x, 2).layout.bounds[2] == (0, 10, 20) and moved() == before
