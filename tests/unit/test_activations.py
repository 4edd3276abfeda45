"""Activations of ``st.nn.functional`` / ``st.nn`` / top-level ``st``, against torch's values
and gradients at their kinks (torch's answers encoded as literals: float64 inputs, the
gradient of ``y.sum()``), on layouts split unevenly along the dim they work on."""

import numpy as np
import pytest

import sharded as st
import sharded.nn.functional as F

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

X = [-25.0, -4.0, -3.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 25.0]
TORCH = {
    "threshold": (
        [-7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, 1.0, 3.0, 6.0, 25.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "selu": (
        [
            -1.758099,
            -1.725899,
            -1.670569,
            -1.111331,
            -0.691758,
            0.0,
            0.262675,
            0.52535,
            1.050701,
            3.152103,
            6.304206,
            26.267525,
        ],
        [
            0.0,
            0.032201,
            0.087531,
            0.646769,
            1.066341,
            1.758099,
            1.050701,
            1.050701,
            1.050701,
            1.050701,
            1.050701,
            1.050701,
        ],
    ),
    "celu": (
        [-0.5, -0.499832, -0.498761, -0.432332, -0.31606, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 25.0],
        [0.0, 0.000335, 0.002479, 0.135335, 0.367879, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "elu": (
        [-1.5, -1.472527, -1.425319, -0.948181, -0.590204, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 25.0],
        [0.0, 0.027473, 0.074681, 0.551819, 0.909796, 1.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "hardshrink": (
        [-25.0, -4.0, -3.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 3.0, 6.0, 25.0],
        [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "softshrink": (
        [-24.0, -3.0, -2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 5.0, 24.0],
        [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
    ),
    "mish": (
        [
            -0.0,
            -0.072592,
            -0.145647,
            -0.303401,
            -0.220744,
            0.0,
            0.169572,
            0.375245,
            0.865098,
            2.986535,
            5.999927,
            25.0,
        ],
        [
            -0.0,
            -0.053773,
            -0.093393,
            0.059217,
            0.289511,
            0.6,
            0.754173,
            0.886424,
            1.049036,
            1.021107,
            1.000134,
            1.0,
        ],
    ),
    "hardswish": (
        [-0.0, -0.0, -0.0, -0.333333, -0.208333, 0.0, 0.135417, 0.291667, 0.666667, 3.0, 6.0, 25.0],
        [0.0, 0.0, 0.0, 0.166667, 0.333333, 0.5, 0.583333, 0.666667, 0.833333, 1.0, 1.0, 1.0],
    ),
    "hardsigmoid": (
        [0.0, 0.0, 0.0, 0.333333, 0.416667, 0.5, 0.541667, 0.583333, 0.666667, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 0.166667, 0.166667, 0.166667, 0.166667, 0.166667, 0.166667, 0.0, 0.0, 0.0],
    ),
    "softsign": (
        [
            -0.961538,
            -0.8,
            -0.75,
            -0.5,
            -0.333333,
            0.0,
            0.2,
            0.333333,
            0.5,
            0.75,
            0.857143,
            0.961538,
        ],
        [
            0.001479,
            0.04,
            0.0625,
            0.25,
            0.444444,
            1.0,
            0.64,
            0.444444,
            0.25,
            0.0625,
            0.020408,
            0.001479,
        ],
    ),
    "tanhshrink": (
        [
            -24.0,
            -3.000671,
            -2.004945,
            -0.238406,
            -0.037883,
            0.0,
            0.005081,
            0.037883,
            0.238406,
            2.004945,
            5.000012,
            24.0,
        ],
        [
            1.0,
            0.998659,
            0.990134,
            0.580026,
            0.213552,
            0.0,
            0.059985,
            0.213552,
            0.580026,
            0.990134,
            0.999975,
            1.0,
        ],
    ),
    "rrelu": (
        [-5.0, -0.8, -0.6, -0.2, -0.1, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 25.0],
        [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "leaky_relu": (
        [-5.0, -0.8, -0.6, -0.2, -0.1, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 25.0],
        [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "relu6": (
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 6.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0],
    ),
    "hardtanh": (
        [-1.0, -1.0, -1.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    ),
    "logsigmoid": (
        [
            -25.0,
            -4.01815,
            -3.048587,
            -1.313262,
            -0.974077,
            -0.693147,
            -0.575939,
            -0.474077,
            -0.313262,
            -0.048587,
            -0.002476,
            -0.0,
        ],
        [
            1.0,
            0.982014,
            0.952574,
            0.731059,
            0.622459,
            0.5,
            0.437823,
            0.377541,
            0.268941,
            0.047426,
            0.002473,
            0.0,
        ],
    ),
    "softplus": (
        [
            0.0,
            0.000168,
            0.001238,
            0.063464,
            0.156631,
            0.346574,
            0.487038,
            0.656631,
            1.063464,
            3.0,
            6.0,
            25.0,
        ],
        [
            0.0,
            0.000335,
            0.002473,
            0.119203,
            0.268941,
            0.5,
            0.622459,
            0.731059,
            0.880797,
            1.0,
            1.0,
            1.0,
        ],
    ),
    "relu": (
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 25.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "prelu": (
        [-7.5, -1.2, -0.9, -0.3, -0.15, 0.0, 0.25, 0.5, 1.0, 3.0, 6.0, 25.0],
        [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ),
}
CALLS = {
    "threshold": lambda x: F.threshold(x, 0.5, -7.0),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, 0.5),
    "elu": lambda x: F.elu(x, 1.5),
    "hardshrink": F.hardshrink,
    "softshrink": lambda x: F.softshrink(x, 1.0),
    "mish": F.mish,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "softsign": F.softsign,
    "tanhshrink": F.tanhshrink,
    "rrelu": lambda x: F.rrelu(x, 0.1, 0.3),  # eval: the mean slope
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "relu6": F.relu6,
    "hardtanh": lambda x: F.hardtanh(x, -1.0, 1.0),
    "logsigmoid": F.logsigmoid,
    "softplus": lambda x: F.softplus(x, 2.0, 5.0),
    "relu": F.relu,
    "prelu": lambda x: F.prelu(x, st.tensor([0.3], dtype=x.dtype)),
}
PLACES = [dict(), dict(shards=5), dict(layout=st.Layout(chunks={0: (2, 0, 7, 3)}))]


@pytest.mark.parametrize("name", sorted(TORCH))
@pytest.mark.parametrize("place", PLACES, ids=["1", "5", "uneven"])
def test_values_and_kink_gradients_as_torch(name, place):
    want, grad = TORCH[name]
    x = st.tensor(X, dtype=st.float64, **place).requires_grad_(True)
    y = CALLS[name](x)
    assert y.dtype == st.float64 and y.shape == (12,)
    np.testing.assert_allclose(y.detach().numpy(), want, atol=2e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), grad, atol=2e-6)


@pytest.mark.parametrize("name", sorted(TORCH))
def test_float32_2d_split_columns(name):
    want, _ = TORCH[name]
    x = st.tensor(np.array(X, np.float32).reshape(3, 4), dim=1, shards=3)
    y = CALLS[name](x)
    assert y.dtype == st.float32 and y.shape == (3, 4)
    np.testing.assert_allclose(y.detach().numpy().ravel(), want, rtol=1e-5, atol=1e-5)


A = np.array([[-1.0, 2.0, 0.5], [3.0, -0.5, 0.0]])


@pytest.mark.parametrize("place", [dict(), dict(shards=2, dim=0), dict(shards=3, dim=1)])
def test_glu_softmin_as_torch(place):
    cases = [
        (
            lambda x: F.glu(x, 0),
            [[-0.952574, 0.755081, 0.25]],
            [[0.952574, 0.755081, 1.5], [-0.045177, 0.940015, 0.375]],
        ),
        (
            lambda x: F.softmin(x, 1),
            [[0.785597, 0.039113, 0.17529], [0.01845, 0.610975, 0.370575]],
            [[0.306142, -0.023871, -0.282271], [0.024947, 0.21514, -0.240086]],
        ),
        (
            lambda x: F.softmin(x, dim=0),
            [[0.982014, 0.075858, 0.377541], [0.017986, 0.924142, 0.622459]],
            [[0.052988, 0.210311, 0.705011], [-0.052988, -0.210311, -0.705011]],
        ),
    ]
    for f, want, grad in cases:
        x = st.tensor(A, **place).requires_grad_(True)
        y = f(x)
        np.testing.assert_allclose(y.detach().numpy(), want, atol=2e-6)
        w = np.arange(1.0, 1 + y.numel()).reshape(tuple(y.shape))
        (y * st.tensor(w)).sum().backward()
        np.testing.assert_allclose(x.grad.detach().numpy(), grad, atol=2e-6)


def test_prelu_per_channel_gradient_and_method_forms():
    x = st.tensor([[-1.0, 2.0, 0.5], [3.0, -0.5, -2.0]], shards=2, dim=1).requires_grad_(True)
    w = st.tensor([0.1, -0.7, 0.5]).requires_grad_(True)
    y = st.prelu(x, w)
    np.testing.assert_allclose(y.detach().numpy(), [[-0.1, 2.0, 0.5], [3.0, 0.35, -1.0]], rtol=1e-6)
    (y * st.arange(1.0, 7).reshape(2, 3)).sum().backward()
    np.testing.assert_allclose(
        x.grad.detach().numpy(), [[0.1, 2.0, 3.0], [4.0, -3.5, 3.0]], rtol=1e-6
    )
    np.testing.assert_allclose(w.grad.detach().numpy(), [-1.0, -2.5, -12.0], rtol=1e-6)
    assert x.prelu(w).tolist() == y.tolist()
    assert x.hardshrink(1.0).tolist() == [[-0.0, 2.0, 0.0], [3.0, 0.0, -2.0]]
    assert st.prelu(st.tensor(-1.0), st.tensor([2.0])).shape == ()
    with pytest.raises(RuntimeError):  # a 1-d input has one channel
        F.prelu(st.ones(3), st.ones(3))
    with pytest.raises(RuntimeError):  # weight must be a scalar or 1-d
        F.prelu(x, st.ones(1, 3))
    with pytest.raises(RuntimeError):  # no type promotion
        F.prelu(x, st.ones(3, dtype=st.float64))
    with pytest.raises(RuntimeError):
        F.prelu(x, st.ones(2))


def test_top_level_names_as_torch():
    x = st.tensor([-2.0, -0.25, 0.25, 2.0], shards=3)
    assert st.threshold(x, 0.0, 9.0).tolist() == [9.0, 9.0, 0.25, 2.0]
    assert st.hardshrink(x, 0.5).tolist() == [-2.0, 0.0, 0.0, 2.0]
    assert st.rrelu(x, 0.5, 0.5).tolist() == [-1.0, -0.125, 0.25, 2.0]
    assert st.celu(x).tolist() == F.celu(x).tolist()
    assert st.selu(x).tolist() == F.selu(x).tolist()
    assert st.dropout(x, 0.5, False).tolist() == x.tolist()
    assert st.dropout(x, 1.0, True).tolist() == [0.0] * 4
    with pytest.raises(RuntimeError):
        st.dropout(x, 1.5, True)
    for f in (st.selu_, st.celu_, st.rrelu_):
        y = x.clone()
        assert f(y) is y
    y = x.clone()
    st.threshold_(y, 0.0, 1.0)
    assert y.tolist() == [1.0, 1.0, 0.25, 2.0]


INPLACE = [
    (lambda y: F.threshold_(y, 0.5, 3.0), lambda y: F.threshold(y, 0.5, 3.0)),
    (F.selu_, F.selu),
    (lambda y: F.celu_(y, 2.0), lambda y: F.celu(y, 2.0)),
    (F.rrelu_, F.rrelu),
    (F.elu_, F.elu),
    (lambda y: F.leaky_relu_(y, 0.2), lambda y: F.leaky_relu(y, 0.2)),
    (F.hardtanh_, F.hardtanh),
    (F.relu_, F.relu),
    (lambda y: F.mish(y, inplace=True), F.mish),
    (lambda y: F.hardswish(y, True), F.hardswish),
    (lambda y: F.hardsigmoid(y, True), F.hardsigmoid),
    (lambda y: F.silu(y, True), F.silu),
    (lambda y: st.nn.Threshold(0.0, 1.0, True)(y), lambda y: F.threshold(y, 0.0, 1.0)),
]


@pytest.mark.parametrize("k", range(len(INPLACE)))
def test_inplace_forms_keep_gradients_of_non_leaves(k):
    inplace, outplace = INPLACE[k]
    a = np.array([-4.0, -1.0, -0.5, 0.5, 1.0, 4.0], np.float32)
    x = st.tensor(a, shards=4).requires_grad_(True)
    y = x * 1.0
    inplace(y)
    y.sum().backward()  # torch: in-place activations on a non-leaf keep their gradient
    x2 = st.tensor(a).requires_grad_(True)
    ref = outplace(x2)
    ref.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.detach().numpy(), x2.grad.detach().numpy(), rtol=1e-6)


def test_errors_as_torch():
    x = st.tensor([[1.0, 2.0]])
    for call, err in [
        (lambda: F.celu(x, 0.0), RuntimeError),  # alpha cannot be 0
        (lambda: F.softshrink(x, -1.0), RuntimeError),
        (lambda: F.rrelu(x, 0.5, 0.1), RuntimeError),  # lower > upper
        (lambda: F.glu(st.ones(2, 3)), RuntimeError),  # halving dimension must be even
        (lambda: F.glu(st.tensor(1.0)), RuntimeError),
        (lambda: F.hardshrink(st.arange(4)), NotImplementedError),
        (lambda: F.selu(st.arange(4)), NotImplementedError),
        (lambda: F.hardswish(st.arange(4)), NotImplementedError),
        (lambda: F.mish(st.arange(4)), NotImplementedError),
        (lambda: F.softmin(st.arange(4), 0), NotImplementedError),
        (lambda: F.threshold(st.tensor([True]), 0, 1), NotImplementedError),
        (lambda: st.nn.Softmax2d()(x), ValueError),
    ]:
        with pytest.raises(err):
            call()
    assert F.hardshrink(x, -1.0).tolist() == [[1.0, 2.0]]  # torch allows a negative lambd
    # integer inputs: threshold keeps the dtype, softsign/tanhshrink promote to float
    t = F.threshold(st.arange(4), 1.5, 7.5)
    assert t.dtype == st.int64 and t.tolist() == [7, 7, 2, 3]
    assert F.softsign(st.arange(2)).tolist() == [0.0, 0.5]
    assert F.softmin(st.arange(2), 0, dtype=st.float64).dtype == st.float64
    assert F.softmin(st.ones(2, 3)).shape == (2, 3)  # implicit dim 1 for 2-d


def test_module_reprs_as_torch():
    nn = st.nn
    cases = [
        (nn.ELU(), "ELU(alpha=1.0)"),
        (nn.ELU(inplace=True), "ELU(alpha=1.0, inplace=True)"),
        (nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
        (nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
        (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
        (nn.ReLU6(), "ReLU6()"),
        (nn.ReLU6(True), "ReLU6(inplace=True)"),
        (nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
        (nn.Hardtanh(-2, 2), "Hardtanh(min_val=-2, max_val=2)"),
        (nn.LogSigmoid(), "LogSigmoid()"),
        (nn.SELU(), "SELU()"),
        (nn.SELU(True), "SELU(inplace=True)"),
        (nn.CELU(), "CELU(alpha=1.0)"),
        (nn.CELU(0.5, True), "CELU(alpha=0.5, inplace=True)"),
        (nn.Threshold(0.1, 20.0), "Threshold(threshold=0.1, value=20.0)"),
        (nn.Threshold(1, 2, True), "Threshold(threshold=1, value=2, inplace=True)"),
        (nn.Hardshrink(), "Hardshrink(0.5)"),
        (nn.Softshrink(1), "Softshrink(1)"),
        (nn.Mish(), "Mish()"),
        (nn.Mish(True), "Mish(inplace=True)"),
        (nn.Hardswish(True), "Hardswish()"),
        (nn.Hardsigmoid(), "Hardsigmoid()"),
        (nn.Softsign(), "Softsign()"),
        (nn.Tanhshrink(), "Tanhshrink()"),
        (nn.GLU(), "GLU(dim=-1)"),
        (nn.Softmin(1), "Softmin(dim=1)"),
        (nn.Softmin(), "Softmin(dim=None)"),
        (nn.PReLU(), "PReLU(num_parameters=1)"),
        (nn.PReLU(3), "PReLU(num_parameters=3)"),
        (nn.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)"),
        (nn.RReLU(0.1, 0.3, True), "RReLU(lower=0.1, upper=0.3, inplace=True)"),
        (nn.Softmax2d(), "Softmax2d()"),
        (nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
        (nn.CosineSimilarity(), "CosineSimilarity()"),
        (nn.PairwiseDistance(), "PairwiseDistance()"),
    ]
    for m, want in cases:
        assert repr(m) == want


def test_modules_forward():
    nn = st.nn
    x = st.tensor(np.array(X, np.float32).reshape(3, 4), dim=0, shards=2)
    for m, f in [
        (nn.ELU(0.5), lambda t: F.elu(t, 0.5)),
        (nn.SELU(), F.selu),
        (nn.Mish(), F.mish),
        (nn.Hardswish(), F.hardswish),
        (nn.Softsign(), F.softsign),
        (nn.GLU(1), lambda t: F.glu(t, 1)),
        (nn.Softmin(dim=1), lambda t: F.softmin(t, 1)),
        (nn.Hardshrink(0.75), lambda t: F.hardshrink(t, 0.75)),
        (nn.RReLU(0.1, 0.3).eval(), lambda t: F.rrelu(t, 0.1, 0.3)),
        (nn.ReLU6(), F.relu6),
        (nn.LogSigmoid(), F.logsigmoid),
        (nn.Tanhshrink(), F.tanhshrink),
        (nn.Softplus(2.0), lambda t: F.softplus(t, 2.0)),
    ]:
        np.testing.assert_allclose(m(x).detach().numpy(), f(x).detach().numpy(), rtol=1e-6)
    p = nn.PReLU(4, 0.1)
    assert p.weight.tolist() == pytest.approx([0.1] * 4) and [
        n for n, _ in p.named_parameters()
    ] == ["weight"]
    p(x).sum().backward()
    assert p.weight.grad.tolist() == [-25.5, -4.0, -3.0, -1.0]  # x <= 0 per channel
    st.manual_seed(0)
    r = nn.RReLU(0.1, 0.3)(st.full((3000,), -1.0, shards=3))  # training: slopes in [l, u]
    assert -0.3 <= r.min().item() and r.max().item() <= -0.1 and abs(r.mean().item() + 0.2) < 0.01
    s = nn.Softmax2d()(st.tensor(np.arange(24.0).reshape(2, 3, 2, 2), dim=1, shards=2))
    np.testing.assert_allclose(s.sum(1).detach().numpy(), np.ones((2, 2, 2)), rtol=1e-12)
    assert nn.Unflatten(-1, (2, -1))(st.ones(2, 12, dim=1, shards=3)).shape == (2, 2, 6)
    a, b = st.tensor([[3.0, 4.0], [1.0, 0.0]]), st.tensor([[3.0, 4.0], [0.0, 1.0]])
    assert nn.CosineSimilarity()(a, b).tolist() == pytest.approx([1.0, 0.0])
    assert nn.PairwiseDistance(1.0, 0.0, True)(a, b).tolist() == [[0.0], [2.0]]


def test_parameter_list_and_dict():
    ps = st.nn.ParameterList([st.ones(2), st.nn.Parameter(st.zeros(2, 3, dtype=st.float64))])
    assert isinstance(ps[0], st.nn.Parameter) and ps[0].requires_grad and len(ps) == 2
    assert [n for n, _ in ps.named_parameters()] == ["0", "1"]
    assert repr(ps) == (
        "ParameterList(\n    (0): Parameter containing: [sharded.float32 of size 2]\n"
        "    (1): Parameter containing: [sharded.float64 of size 2x3]\n)"
    )
    ps.append(st.ones(1))
    assert len(ps) == 3 and len(list(ps)) == 3 and repr(st.nn.ParameterList()) == "ParameterList()"

    class Net(st.nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = st.nn.ParameterList([st.ones(2)])
            self.pd = st.nn.ParameterDict({"a": st.ones(3)})

    assert [n for n, _ in Net().named_parameters()] == ["ps.0", "pd.a"]
    pd = st.nn.ParameterDict({"w": st.ones(2)})
    pd["b"] = st.zeros(1)
    assert list(pd.keys()) == ["w", "b"] and "b" in pd and isinstance(pd["b"], st.nn.Parameter)
    assert pd.pop("w").shape == (2,) and len(pd) == 1


@pytest.mark.parametrize("shards", [1, 2])
def test_hardtanh_of_integers_keeps_the_dtype_like_torch(shards):
    # torch reads the bounds in the input's dtype (truncated): int64 in, int64 out
    x = st.tensor([-3, 0, 2, 8], shards=shards)
    for got, want in [
        (F.hardtanh(x), [-1, 0, 1, 1]),
        (F.relu6(x), [0, 0, 2, 6]),
        (F.hardtanh(x, -2.5, 2.5), [-2, 0, 2, 2]),
        (F.hardtanh(x, 2.5, 2.7), [2, 2, 2, 2]),
        (F.relu6(x.to(st.int8)), [0, 0, 2, 6]),
    ]:
        assert got.dtype == x.dtype or got.dtype == st.int8
        assert got.tolist() == want
    assert F.hardtanh(x.to(st.uint8), 0, 3).dtype == st.uint8
    y = x.clone()
    F.relu6(y, inplace=True)
    assert y.dtype == st.int64 and y.tolist() == [0, 0, 2, 6]
    with pytest.raises(st.UnsupportedDType, match="hardtanh of bool"):
        F.hardtanh(x > 0)  # torch: "Bool inputs not supported for hardtanh"
    with pytest.raises(st.UnsupportedDType, match=r"uint8 with limits \(-1.0, 1.0\)"):
        F.hardtanh(x.to(st.uint8))  # torch: "cannot do hardtanh on an unsigned type with ..."
    with pytest.raises(st.ValueOverflow, match="-1000"):
        F.hardtanh(x.to(st.int8), -1000, 1000)


@pytest.mark.parametrize("shards", [1, 2])
def test_hardtanh_refuses_min_above_max_like_torch(shards):
    # torch's F.hardtanh: ValueError "min_val cannot be greater than max_val"; its
    # hardtanh_ does not check and clamps to max_val
    x = st.tensor([-3.0, 0.0, 2.0, 8.0], shards=shards)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(st.ArgumentError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x.long(), 2.7, 2.5)
    assert F.hardtanh(x, 1.0, 1.0).tolist() == [1.0] * 4
    assert F.hardtanh_(x, 2.0, 1.0).tolist() == [1.0] * 4
