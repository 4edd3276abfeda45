"""conv1d/conv2d, pooling and the conv/pool/BatchNorm2d modules against torch: values from
direct-loop numpy references (checked against torch) and torch literals; replicated,
batch-split (2 and 3 shards, uneven), channel-split and row-split inputs; gradients."""

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
RNG = np.random.default_rng(7)


def ref_conv2d(x, w, b=None, stride=(1, 1), pads=((0, 0), (0, 0)), dil=(1, 1), groups=1):
    """Direct-loop cross-correlation (torch's conv2d) of an (N, C, H, W) array."""
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(pads))
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), x.dtype)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                r, q = i * stride[0], j * stride[1]
                patch = xp[:, g * cg : (g + 1) * cg, r : r + dil[0] * (kh - 1) + 1 : dil[0],
                           q : q + dil[1] * (kw - 1) + 1 : dil[1]]  # fmt: skip
                out[:, oc, i, j] = (patch * w[oc]).sum((1, 2, 3))
    return out if b is None else out + b[:, None, None]


def _pool_out(n, k, s, p, d, ceil):
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    return out - 1 if ceil and (out - 1) * s >= n + p else out


def ref_max_pool2d(x, k, s, p=(0, 0), d=(1, 1), ceil=False):
    """(values, flat indices) with torch's choice: first maximum, last NaN."""
    n, c, h, w = x.shape
    oh, ow = _pool_out(h, k[0], s[0], p[0], d[0], ceil), _pool_out(w, k[1], s[1], p[1], d[1], ceil)
    val = np.zeros((n, c, oh, ow), x.dtype)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for a in range(n):
        for b in range(c):
            for i in range(oh):
                for j in range(ow):
                    best, bi = None, -1
                    for u in range(k[0]):
                        for v in range(k[1]):
                            r, q = i * s[0] - p[0] + u * d[0], j * s[1] - p[1] + v * d[1]
                            if 0 <= r < h and 0 <= q < w:
                                t = x[a, b, r, q]
                                if best is None or t > best or np.isnan(t):
                                    best, bi = t, r * w + q
                    val[a, b, i, j], idx[a, b, i, j] = best, bi
    return val, idx


def ref_avg_pool2d(x, k, s, p=(0, 0), ceil=False, cip=True, div=None):
    n, c, h, w = x.shape
    oh, ow = _pool_out(h, k[0], s[0], p[0], 1, ceil), _pool_out(w, k[1], s[1], p[1], 1, ceil)
    out = np.zeros((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, q0 = i * s[0] - p[0], j * s[1] - p[1]
            r1, q1 = min(r0 + k[0], h + p[0]), min(q0 + k[1], w + p[1])
            size = (r1 - r0) * (q1 - q0)
            r0c, q0c, r1c, q1c = max(r0, 0), max(q0, 0), min(r1, h), min(q1, w)
            if not cip:
                size = (r1c - r0c) * (q1c - q0c)
            tot = x[:, :, r0c:r1c, q0c:q1c].sum((2, 3))
            out[:, :, i, j] = tot / (div or size)
    return out


def ref_adaptive2d(x, oh, ow, red):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, r1 = i * h // oh, -(-(i + 1) * h // oh)
            q0, q1 = j * w // ow, -(-(j + 1) * w // ow)
            out[:, :, i, j] = red(x[:, :, r0:r1, q0:q1], axis=(2, 3))
    return out


def _make(a, how):
    """``a`` laid out as ``how``: replicated, split along dim ``d`` in ``k`` shards."""
    if how == "rep":
        return st.tensor(a).replicate()
    d, k = how
    return st.tensor(a).reshard(dim=d, shards=k)


LAYOUTS = ["rep", (0, 2), (0, 3), (1, 2), (2, 2)]


# ------------------------------------------------------------------------------ conv
CONV2D = [  # x shape, w shape, stride, padding (torch's argument), pads, dilation, groups
    ((5, 4, 7, 6), (6, 2, 3, 2), (2, 1), 1, ((1, 1), (1, 1)), (1, 2), 2),
    ((5, 3, 8, 8), (4, 3, 3, 3), (1, 1), "same", ((1, 1), (1, 1)), (1, 1), 1),
    ((4, 3, 8, 7), (4, 3, 2, 4), (1, 1), "same", ((1, 1), (3, 3)), (2, 2), 1),
    ((4, 3, 8, 7), (4, 3, 2, 4), (1, 1), "same", ((0, 1), (1, 2)), (1, 1), 1),
    ((3, 2, 6, 5), (4, 2, 3, 3), (2, 2), "valid", ((0, 0), (0, 0)), (1, 1), 1),
    ((2, 6, 5, 5), (6, 1, 3, 3), (1, 1), (1, 0), ((1, 1), (0, 0)), (1, 1), 6),
]


@pytest.mark.parametrize("how", LAYOUTS)
@pytest.mark.parametrize("case", range(len(CONV2D)))
def test_conv2d_matches_reference_on_every_layout(case, how):
    xs, ws, stride, padding, pads, dil, groups = CONV2D[case]
    x, w, b = RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[0])
    out = F.conv2d(_make(x, how), st.tensor(w), st.tensor(b), stride, padding, dil, groups)
    want = ref_conv2d(x, w, b, stride, pads, dil, groups)
    assert out.shape == want.shape and out.dtype == st.float64
    np.testing.assert_allclose(out.detach().numpy(), want, atol=1e-12)
    if how != "rep" and how[0] == 0:  # a batch split stays local: same cuts along N
        assert out.layout.bounds[0] == st.tensor(x).reshard(dim=0, shards=how[1]).layout.bounds[0]


def test_conv2d_unbatched_float32_and_empty_batch():
    x, w = RNG.standard_normal((3, 6, 6)).astype(np.float32), np.ones((5, 3, 5, 5), np.float32)
    out = F.conv2d(st.tensor(x), st.tensor(w), padding=1)
    assert out.shape == (5, 4, 4) and out.dtype == st.float32
    np.testing.assert_allclose(
        out.detach().numpy(), ref_conv2d(x[None], w, pads=((1, 1),) * 2)[0], 1e-5
    )
    e = F.conv2d(st.zeros(0, 2, 5, 5), st.ones(3, 2, 3, 3), st.ones(3))
    assert e.shape == (0, 3, 3, 3)


@pytest.mark.parametrize("how", ["rep", (0, 2), (1, 2)])
def test_conv1d_matches_reference(how):
    x, w, b = RNG.standard_normal((5, 4, 9)), RNG.standard_normal((6, 2, 3)), np.arange(6.0)
    out = F.conv1d(_make(x, how), st.tensor(w), st.tensor(b), 2, 2, 2, 2)
    want = ref_conv2d(x[:, :, None], w[:, :, None], b, (1, 2), ((0, 0), (2, 2)), (1, 2), 2)
    np.testing.assert_allclose(out.detach().numpy(), want[:, :, 0], atol=1e-12)
    # unbatched, 'same' with an even kernel: the odd padding goes after, as torch
    x1, w1 = RNG.standard_normal((4, 9)), RNG.standard_normal((6, 4, 4))
    got = F.conv1d(st.tensor(x1), st.tensor(w1), padding="same").detach().numpy()
    want = ref_conv2d(x1[None, :, None], w1[:, :, None], pads=((0, 0), (1, 2)))[0, :, 0]
    np.testing.assert_allclose(got, want, atol=1e-12)
    t = st.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    assert F.conv1d(t, st.tensor([[[1.0, -1.0]]]), padding="same").tolist() == [
        [[-1.0, -1.0, -1.0, 4.0]]
    ]


def test_conv2d_gradients_match_torch_literals():
    # torch: x, w, b below, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2
    for how in ["rep", (0, 2), (1, 2)]:
        x = _make((np.arange(200) % 7 - 3.0).reshape(2, 4, 5, 5) / 4, how).requires_grad_(True)
        w = st.tensor((np.arange(72) % 5 - 2.0).reshape(6, 2, 2, 3) / 3).requires_grad_(True)
        b = st.tensor([0.5, -1.0, 0.25, 0.0, 1.0, 2.0], dtype=st.float64).requires_grad_(True)
        out = F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
        assert out.shape == (2, 6, 3, 5)
        assert out.sum().item() == pytest.approx(82.25)
        np.testing.assert_allclose(
            out[1, 3, 1].detach().numpy(), [-2 / 3, 0.5, 7 / 12, -5 / 6, -0.5], atol=1e-12
        )
        g = st.tensor((np.arange(180) % 4 - 1.0).reshape(2, 6, 3, 5))
        (out * g).sum().backward()
        np.testing.assert_allclose(
            x.grad[1, 2, :2].detach().numpy() * 3,
            [[-1, 5, 6, -3, -9], [4, -5, -3, 4, 4]],
            atol=1e-12,
        )
        np.testing.assert_allclose(
            w.grad[4].detach().numpy(),
            [[[3.0, -1.25, -1.25], [-2.25, 4.0, 0.75]], [[-3.25, 0.0, -2.25], [4.0, -6.5, 1.75]]],
            atol=1e-12,
        )
        assert b.grad.tolist() == [14.0, 16.0, 14.0, 16.0, 14.0, 16.0]


@pytest.mark.parametrize("how", ["rep", (0, 2), (0, 3)])
def test_conv_gradcheck(how):
    x = _make(RNG.standard_normal((3, 4, 5, 4)), how).requires_grad_(True)
    w = st.tensor(RNG.standard_normal((4, 2, 2, 3))).requires_grad_(True)
    b = st.tensor(RNG.standard_normal(4)).requires_grad_(True)
    fn = lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1), groups=2)  # noqa: E731
    assert st.autograd.gradcheck(fn, (x, w, b))
    x1 = st.tensor(RNG.standard_normal((3, 2, 7)), shards=2).requires_grad_(True)
    w1 = st.tensor(RNG.standard_normal((3, 2, 3))).requires_grad_(True)
    assert st.autograd.gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=1), (x1, w1))


def test_conv_errors_as_torch():
    x = st.ones(2, 3, 8, 8)
    cases = [  # (weight shape, kwargs, torch's message)
        ((6, 1, 5, 5), {}, r"Given groups=1, weight of size \[6, 1, 5, 5\], expected "
         r"input\[2, 3, 8, 8\] to have 1 channels, but got 3 channels instead"),
        ((6, 2, 3, 3), {"groups": 4}, "expected weight to be divisible by 4 at dimension 0"),
        ((6, 3, 3, 3), {"stride": 2, "padding": "same"}, "not supported for strided"),
        ((6, 3, 3, 3), {"padding": "foo"}, "Invalid padding string: 'foo'"),
        ((6, 3, 3, 3), {"padding": -1}, "negative padding is not supported"),
        ((6, 3, 3, 3), {"stride": 0}, "non-positive stride is not supported"),
        ((6, 3, 9, 9), {}, r"Calculated padded input size per channel: \(8 x 8\). Kernel "
         r"size: \(9 x 9\). Kernel size can't be greater than actual input size"),
    ]  # fmt: skip
    for ws, kw, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            F.conv2d(x, st.ones(*ws), **kw)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 6"):
        F.conv2d(x, st.ones(6, 3, 3, 3), st.ones(5))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\)"):
        F.conv2d(st.ones(1, 1, 3, 8, 8), st.ones(6, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"input size per channel: \(2\). Kernel size: \(3\)"):
        F.conv1d(st.ones(3, 2, 2), st.ones(3, 2, 3))
    with pytest.raises(TypeError):  # torch: RuntimeError "expected scalar type Double..."
        F.conv2d(x.double(), st.ones(6, 3, 3, 3))
    assert x.shape == (2, 3, 8, 8) and x.sum().item() == 384.0  # operands intact


# ------------------------------------------------------------------------------ pooling
POOLS = [  # x shape, kernel, stride, padding, dilation, ceil_mode
    ((5, 3, 7, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((5, 3, 7, 6), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 2, 9, 8), (3, 2), (2, 1), (1, 1), (2, 2), True),
    ((2, 2, 5, 5), (2, 2), (2, 2), (0, 0), (1, 1), True),
]


@pytest.mark.parametrize("how", LAYOUTS)
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_max_pool2d_values_indices_and_grad(case, how):
    xs, k, s, p, d, ceil = POOLS[case]
    x = RNG.standard_normal(xs)
    x[0, 0, 0, :2] = np.nan  # NaN propagates; torch's index is the last NaN of a window
    t = _make(x, how).requires_grad_(True)
    out, idx = F.max_pool2d(t, k, s, p, d, ceil_mode=ceil, return_indices=True)
    val, want = ref_max_pool2d(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(out.detach().numpy(), val)
    assert idx.dtype == st.int64 and idx.detach().numpy().tolist() == want.tolist()
    g = RNG.standard_normal(val.shape)
    (out * st.tensor(g)).sum().backward()
    gx = np.zeros(x.size)
    for a in np.ndindex(*val.shape[:2]):  # torch: each gradient onto its max's position
        flat = np.zeros(xs[2] * xs[3])
        np.add.at(flat, want[a].ravel(), g[a].ravel())
        gx[np.ravel_multi_index(a + (0,), xs[:2] + (xs[2] * xs[3],)) :][: flat.size] = flat
    np.testing.assert_allclose(t.grad.detach().numpy().ravel(), gx, atol=1e-12)


@pytest.mark.parametrize("how", LAYOUTS)
@pytest.mark.parametrize(
    "kw",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
        {"kernel_size": (3, 2), "padding": (1, 0), "divisor_override": 4},
    ],
)
def test_avg_pool2d_values_and_gradcheck(kw, how):
    x = RNG.standard_normal((3, 2, 9, 8))
    t = _make(x, how)
    k = kw["kernel_size"] if isinstance(kw["kernel_size"], tuple) else (kw["kernel_size"],) * 2
    s = (kw.get("stride", 0),) * 2 if "stride" in kw else k
    p = kw.get("padding", 0)
    p = p if isinstance(p, tuple) else (p, p)
    want = ref_avg_pool2d(x, k, s, p, kw.get("ceil_mode", False), kw.get("count_include_pad", True),
                          kw.get("divisor_override"))  # fmt: skip
    np.testing.assert_allclose(F.avg_pool2d(t, **kw).detach().numpy(), want, atol=1e-12)
    if how in ("rep", (0, 2)):
        t.requires_grad_(True)
        assert st.autograd.gradcheck(lambda a: F.avg_pool2d(a, **kw), (t,))


def test_pool1d_forms_unbatched_and_float32():
    x = RNG.standard_normal((4, 3, 9)).astype(np.float32)
    got, idx = F.max_pool1d(st.tensor(x, shards=2), 3, 2, 1, 2, return_indices=True)
    val, want = ref_max_pool2d(x[:, :, None], (1, 3), (1, 2), (0, 1), (1, 2))
    assert got.dtype == st.float32 and got.shape == (4, 3, 4)
    np.testing.assert_array_equal(got.detach().numpy(), val[:, :, 0])
    assert idx.detach().numpy().tolist() == want[:, :, 0].tolist()
    a = F.avg_pool1d(st.tensor(x[0]), 3, 2, 1, ceil_mode=True, count_include_pad=False)
    want = ref_avg_pool2d(x[:1, :, None], (1, 3), (1, 2), (0, 1), True, False)[0, :, 0]
    np.testing.assert_allclose(a.detach().numpy(), want, rtol=1e-6)
    assert F.max_pool1d(st.tensor([[1.0, 3.0, 2.0, 5.0, 4.0]]), 2, ceil_mode=True).tolist() == [
        [3.0, 5.0, 4.0]
    ]
    assert F.max_pool2d(st.tensor([[[1, 5], [7, 2]]]), 2).tolist() == [[[7]]]  # int64 as torch


def test_pool_errors_as_torch():
    x = st.ones(2, 2, 4, 4)
    for fn in (F.max_pool2d, F.avg_pool2d):
        with pytest.raises(RuntimeError, match=r"Given input size: \(2x4x4\). Calculated "
                           r"output size: \(2x0x0\). Output size is too small"):  # fmt: skip
            fn(x, 5)
        with pytest.raises(RuntimeError, match="pad should be at most half of effective "
                           "kernel size, but got pad=2, kernel_size=2 and dilation=1"):  # fmt: skip
            fn(x, 2, padding=2)
        with pytest.raises(RuntimeError, match="stride should not be zero"):
            fn(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="pad should be smaller than or equal to half"):
        F.max_pool2d(x, 3, padding=2, dilation=2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="3D or 4D"):
        F.max_pool2d(st.ones(4), 2)


@pytest.mark.parametrize("shards", [1, 2])
def test_integer_avg_pool_truncates_toward_zero_like_torch(shards):
    # torch's integer division: -1 / -2 and 17 / -2 truncate (0, -8), never round down
    x = st.tensor([[[[1, -2, 3], [4, 5, -7], [8, 9, 10]]]], shards=shards, dim=2)
    assert F.avg_pool2d(x, 2, 1, divisor_override=-2).tolist() == [[[[-4, 0], [-13, -8]]]]
    assert F.avg_pool2d(x, 2, 1, divisor_override=-3).tolist() == [[[[-2, 0], [-8, -5]]]]
    assert F.avg_pool2d(x, 2, 1, divisor_override=3).tolist() == [[[[2, 0], [8, 5]]]]
    assert F.avg_pool2d(x, 2, 1).tolist() == [[[[2, 0], [6, 4]]]]


@pytest.mark.parametrize("how", LAYOUTS)
def test_adaptive_pools(how):
    x = RNG.standard_normal((3, 2, 7, 9))
    t = _make(x, how).requires_grad_(True)
    np.testing.assert_allclose(
        F.adaptive_avg_pool2d(t, (3, 4)).detach().numpy(),
        ref_adaptive2d(x, 3, 4, np.mean),
        atol=1e-12,
    )
    np.testing.assert_allclose(  # more bins than rows: windows overlap, as torch
        F.adaptive_avg_pool2d(t, (None, 11)).detach().numpy(),
        ref_adaptive2d(x, 7, 11, np.mean),
        atol=1e-12,
    )
    m, idx = F.adaptive_max_pool2d(t, (3, 4), return_indices=True)
    np.testing.assert_array_equal(m.detach().numpy(), ref_adaptive2d(x, 3, 4, np.max))
    assert idx.dtype == st.int64
    picked = np.take_along_axis(x.reshape(3, 2, -1), idx.detach().numpy().reshape(3, 2, -1), 2)
    np.testing.assert_array_equal(picked, m.detach().numpy().reshape(3, 2, -1))
    if how in ("rep", (0, 3)):
        assert st.autograd.gradcheck(lambda a: F.adaptive_avg_pool2d(a, (3, 4)), (t,))
        assert st.autograd.gradcheck(lambda a: F.adaptive_max_pool2d(a, (3, 4)), (t,))
    y = RNG.standard_normal((2, 10))
    np.testing.assert_allclose(
        F.adaptive_avg_pool1d(st.tensor(y), 4).detach().numpy(),
        ref_adaptive2d(y[None, :, None], 1, 4, np.mean)[0, :, 0],
    )
    assert F.adaptive_max_pool1d(st.tensor([[1.0, 5.0, 2.0]]), 2).tolist() == [[5.0, 5.0]]


# ------------------------------------------------------------------------------ modules
def test_module_reprs_and_init_match_torch():
    reprs = {
        st.nn.Conv2d(1, 6, 5): "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))",
        st.nn.Conv2d(1, 6, 5, stride=2, padding=1, dilation=2, bias=False):
            "Conv2d(1, 6, kernel_size=(5, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
            "bias=False)",
        st.nn.Conv1d(4, 6, 3, padding="same", groups=2, padding_mode="circular"):
            "Conv1d(4, 6, kernel_size=(3,), stride=(1,), padding=same, groups=2, "
            "padding_mode=circular)",
        st.nn.MaxPool2d(2, 2):
            "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)",
        st.nn.MaxPool1d(3): "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, "
                            "ceil_mode=False)",
        st.nn.AvgPool2d(2): "AvgPool2d(kernel_size=2, stride=2, padding=0)",
        st.nn.AvgPool1d(2): "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))",
        st.nn.AdaptiveAvgPool2d((5, 7)): "AdaptiveAvgPool2d(output_size=(5, 7))",
        st.nn.AdaptiveMaxPool1d(3): "AdaptiveMaxPool1d(output_size=3)",
        st.nn.BatchNorm2d(3): "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, "
                              "bias=True, track_running_stats=True)",
        st.nn.Dropout2d(0.2): "Dropout2d(p=0.2, inplace=False)",
    }  # fmt: skip
    for m, r in reprs.items():
        assert repr(m) == r
    c = st.nn.Conv2d(4, 6, (3, 2), groups=2)
    assert c.weight.shape == (6, 2, 3, 2) and c.bias.shape == (6,)
    bound = 1 / np.sqrt(2 * 3 * 2)  # kaiming_uniform_(a=sqrt(5)): +-1/sqrt(fan_in)
    assert (
        np.abs(c.weight.detach().numpy()).max() <= bound
        and np.abs(c.bias.detach().numpy()).max() <= bound
    )
    assert c.weight.layout.is_replicated
    for kw, msg in [({"groups": 4}, "out_channels must be divisible by groups"),
                    ({"groups": 3}, "in_channels must be divisible by groups"),
                    ({"padding": "same", "stride": 2}, "not supported for strided"),
                    ({"padding_mode": "foo"}, "padding_mode must be one of")]:  # fmt: skip
        with pytest.raises(ValueError, match=msg):
            st.nn.Conv2d(4, 6, 3, **kw)
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        st.nn.BatchNorm2d(3)(st.ones(2, 3, 4))


def test_reflect_padding_mode_and_batchnorm2d_and_dropout2d():
    c = st.nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect").double()
    x = RNG.standard_normal((2, 2, 6))
    xr = np.pad(x, ((0, 0), (0, 0), (2, 2)), mode="reflect")
    want = ref_conv2d(
        xr[:, :, None], c.weight.detach().numpy()[:, :, None], c.bias.detach().numpy()
    )[:, :, 0]
    np.testing.assert_allclose(c(st.tensor(x)).detach().numpy(), want, atol=1e-12)
    bn = st.nn.BatchNorm2d(3).double()
    x = RNG.standard_normal((4, 3, 5, 5))
    y = bn(st.tensor(x, shards=2)).detach().numpy()
    mu, var = x.mean((0, 2, 3), keepdims=True), x.var((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5), atol=1e-10)
    np.testing.assert_allclose(bn.running_mean.detach().numpy(), 0.1 * mu.ravel(), atol=1e-12)
    np.testing.assert_allclose(
        bn.running_var.detach().numpy(), 0.9 + 0.1 * x.var((0, 2, 3), ddof=1)
    )
    st.manual_seed(0)
    out = st.nn.Dropout2d()(st.ones(2, 40, 3, 3, shards=2)).detach().numpy()
    per = out.reshape(2, 40, 9)
    assert set(np.unique(out)) <= {0.0, 2.0} and (per.min(-1) == per.max(-1)).all()
    assert 0 < (per[:, :, 0] == 0).sum() < 80


def test_lenet_training_steps_match_torch():
    """Conv2d -> relu -> max_pool2d -> flatten -> Linear -> cross_entropy -> SGD, twice;
    the losses and parameters are torch's (same initial values)."""

    class Net(st.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = st.nn.Conv2d(1, 2, 3)
            self.fc = st.nn.Linear(2 * 3 * 3, 3)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            return self.fc(st.flatten(x, 1))

    net = Net().double()
    with st.no_grad():
        net.conv1.weight.copy_(st.tensor(np.sin(np.arange(18.0)).reshape(2, 1, 3, 3) * 0.5))
        net.conv1.bias.copy_(st.tensor([0.1, -0.2]))
        net.fc.weight.copy_(st.tensor(np.cos(np.arange(54.0)).reshape(3, 18) * 0.3))
        net.fc.bias.copy_(st.tensor([0.0, 0.1, -0.1]))
    x = st.tensor(np.cos(np.arange(5 * 64.0) * 0.7).reshape(5, 1, 8, 8), shards=3)
    y = st.tensor([0, 1, 2, 1, 0], shards=3)
    opt = st.optim.SGD(net.parameters(), lr=0.5)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(losses, [1.0533366468257235, 1.004163448281257], rtol=1e-12)
    np.testing.assert_allclose(
        net.conv1.weight[1, 0, 0].detach().numpy(),
        [0.2043461552881653, -0.26355001720476046, -0.4853400627965844],
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        net.conv1.bias.detach().numpy(), [0.22324873034226483, -0.24302879449077744]
    )
    np.testing.assert_allclose(
        net.fc.bias.detach().numpy(),
        [0.07355546800326346, 0.11162724544822641, -0.18518271345148996],
    )


def test_empty_shards_and_uneven_chunks():
    x = RNG.standard_normal((3, 2, 6, 5))
    t = st.tensor(x).reshard(layout=st.Layout(chunks=(0, 2, 1))).requires_grad_(True)
    w = st.tensor(RNG.standard_normal((4, 2, 3, 3))).requires_grad_(True)
    out = F.conv2d(t, w, padding=1)
    np.testing.assert_allclose(
        out.detach().numpy(), ref_conv2d(x, w.detach().numpy(), pads=((1, 1),) * 2), 1e-12
    )
    m, _ = F.adaptive_max_pool2d(out, 2, return_indices=True)
    a = F.avg_pool2d(F.max_pool2d(out, 2), 1) + F.adaptive_avg_pool2d(out, 3).sum()
    (m.sum() + a.sum()).backward()
    assert t.grad.shape == (3, 2, 6, 5) and w.grad.shape == (4, 2, 3, 3)
    assert np.isfinite(w.grad.detach().numpy()).all()


def test_torch_top_level_names():
    # torch.conv1d/conv2d/max_pool1d/max_pool2d/avg_pool1d/adaptive_avg_pool1d exist too
    assert st.conv2d is F.conv2d and st.conv1d is F.conv1d and st.max_pool2d is F.max_pool2d
    assert st.avg_pool1d(st.tensor([[1.0, 3.0]]), 2).tolist() == [[2.0]]
    assert st.max_pool1d is F.max_pool1d and st.adaptive_avg_pool1d is F.adaptive_avg_pool1d


def test_top_level_adaptive_max_pool1d_returns_values_and_indices():
    # torch 2.13: torch.adaptive_max_pool1d(x, 2) is always a pair; a third argument is refused
    x = st.tensor([[1.0, 5.0, 2.0, 0.0, 7.0]])
    values, indices = st.adaptive_max_pool1d(x, 2)
    assert values.tolist() == [[5.0, 7.0]] and indices.tolist() == [[1, 4]]
    assert F.adaptive_max_pool1d(x, 2).tolist() == [[5.0, 7.0]]  # functional: values only
    with pytest.raises(TypeError):
        st.adaptive_max_pool1d(x, 2, True)


def test_argument_forms_and_edge_errors_as_torch():
    x = st.ones(2, 4, 8, 8)
    w = st.ones(6, 4, 3, 3)
    assert F.conv2d(x, w, stride=(2,)).shape == (2, 6, 3, 3)  # one-element lists expand
    assert F.conv2d(x, w, padding=[1]).shape == (2, 6, 8, 8)
    assert F.max_pool2d(x, (2,)).shape == (2, 4, 4, 4)
    assert F.adaptive_max_pool2d(x, 0).shape == (2, 4, 0, 0)
    assert F.max_pool2d(st.ones(0, 4, 8, 8), 2).shape == (0, 4, 4, 4)
    with pytest.raises(RuntimeError, match="non-positive dilation is not supported"):
        F.conv2d(x, w, dilation=0)
    with pytest.raises(RuntimeError, match="non-positive groups is not supported"):
        F.conv2d(x, w, groups=0)
    with pytest.raises(RuntimeError, match="expected weight to be at least 1 at dimension 0"):
        F.conv2d(x, st.ones(0, 4, 3, 3))
    with pytest.raises(RuntimeError, match="kernel_size must either be a single int"):
        F.max_pool2d(x, (2, 3, 4))
    with pytest.raises(NotImplementedError, match="adaptive_avg_pool2d"):
        F.adaptive_avg_pool2d(st.ones(2, 4, 8, 8, dtype=st.int64), 2)
    with pytest.raises(RuntimeError, match="3D or 4D"):
        F.avg_pool2d(st.ones(2, 0, 8, 8), 2)
