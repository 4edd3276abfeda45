"""bfloat16 as a sharded dtype; expected values are torch 2.13 CPU's, as literals (bit
patterns from ``t.view(torch.int16)`` or float values)."""

import math

import ml_dtypes
import numpy as np
import pytest

import sharded as st
from sharded.errors import DTypeError, UnsupportedDType

pytestmark = pytest.mark.ray_mirror

local = pytest.mark.ray_mirror(False)
DATA = [1.0, 2.5, -3.25, 7.0, 0.1234, -0.777]


def bits(t):
    """The int16 bit patterns of a bfloat16 tensor, as torch's ``view(torch.int16)``."""
    assert t.dtype == st.bfloat16
    return t.numpy().view(np.int16).reshape(-1).tolist()


@pytest.fixture(params=[None, 2], ids=["whole", "split"])
def x(request):
    return st.tensor(DATA, dtype=st.bfloat16, shards=request.param)


# ------------------------------------------------------------------ dtype object
@local
def test_dtype_object():
    b = st.bfloat16
    assert b.name == "bfloat16" and repr(b) == "sharded.bfloat16"
    assert b.is_floating_point and not b.is_complex and b.is_signed and b.itemsize == 2
    assert b.np == np.dtype(ml_dtypes.bfloat16)
    assert st.dtypes.as_dtype("bfloat16") is not None and st.dtypes.as_dtype("bfloat16") == b
    f = st.finfo(st.bfloat16)
    assert (f.bits, f.eps, f.resolution, f.dtype) == (16, 0.0078125, 0.01, "bfloat16")
    assert math.isclose(f.max, 3.3895313892515355e38)
    assert math.isclose(f.tiny, 1.1754943508222875e-38)


@local
@pytest.mark.parametrize(
    "other, out",
    [
        ("float16", "float32"),
        ("float32", "float32"),
        ("float64", "float64"),
        ("int8", "bfloat16"),
        ("int64", "bfloat16"),
        ("uint8", "bfloat16"),
        ("bool", "bfloat16"),
        ("complex64", "complex64"),
        ("complex128", "complex128"),
        ("bfloat16", "bfloat16"),
    ],
)
def test_promote_types_like_torch(other, out):
    o = st.dtypes.as_dtype(other)
    assert st.promote_types(st.bfloat16, o) == st.dtypes.as_dtype(out)
    assert st.promote_types(o, st.bfloat16) == st.dtypes.as_dtype(out)


@local
def test_result_type_and_mixed_ops(x):
    assert st.result_type(x, 2.5) == st.bfloat16
    assert st.result_type(x, 2) == st.bfloat16
    assert st.result_type(st.tensor([1, 2]), st.tensor(1.0, dtype=st.bfloat16)) == st.bfloat16
    assert (x + x.half()).dtype == st.float32
    assert (x + x.float()).dtype == st.float32
    assert (x + st.arange(6)).dtype == st.bfloat16
    assert (x > 0).dtype == st.bool
    assert not st.can_cast(st.bfloat16, st.int8) and st.can_cast(st.int8, st.bfloat16)


# ------------------------------------------------------------------ creation, conversion
@local
def test_creation():
    assert bits(st.zeros(3, dtype=st.bfloat16)) == [0, 0, 0]
    assert bits(st.ones(2, dtype=st.bfloat16, shards=2)) == [16256, 16256]
    assert st.full((2,), 1.1, dtype=st.bfloat16).tolist() == [1.1015625, 1.1015625]
    assert st.arange(0, 1, 0.25, dtype=st.bfloat16).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert bits(st.tensor([1, 2, 300], dtype=st.bfloat16)) == [16256, 16384, 17302]
    for r in (st.rand(4, dtype=st.bfloat16), st.randn(4, dtype=st.bfloat16)):
        assert r.dtype == st.bfloat16 and r.shape == (4,)
    # [0, 1) with bfloat16's 8 bits: 1/256 of 8192 draws would round up to 1.0 with more
    u = st.rand(8192, dtype=st.bfloat16, shards=2)
    assert ((u >= 0) & (u < 1)).all() and u.max().item() == 255 / 256


@local
def test_numpy_round_trip(x):
    a = x.numpy()
    assert a.dtype == np.dtype(ml_dtypes.bfloat16)
    assert a.view(np.int16).tolist() == [16256, 16416, -16304, 16608, 15869, -16569]
    for y in (st.tensor(a, shards=2), st.from_numpy(a)):
        assert y.dtype == st.bfloat16 and bits(y) == bits(x)
    assert x.tolist()[:4] == [1.0, 2.5, -3.25, 7.0]
    assert st.tensor(a[1]).dtype == st.bfloat16  # an ml_dtypes scalar


@local
def test_conversions(x):
    assert st.arange(3).bfloat16().tolist() == [0.0, 1.0, 2.0]
    assert x.to(st.float32).tolist()[4] == 0.12353515625
    assert x.float().bfloat16().tolist() == x.tolist()
    assert x.to("bfloat16").dtype == st.bfloat16
    assert st.tensor([1.1]).to(st.bfloat16).tolist() == [1.1015625]
    assert x.type() == "sharded.BFloat16Tensor"
    assert x.type("torch.BFloat16Tensor").dtype == st.bfloat16
    assert x.type(st.int32).tolist() == [1, 2, -3, 7, 0, 0]
    assert "dtype=sharded.bfloat16" in repr(x)


# ------------------------------------------------------------------ compute vs torch
TORCH = {  # torch.tensor(DATA, dtype=torch.bfloat16) -> op -> .view(torch.int16)
    "sub": (lambda t: t - 1.003, [0, 16320, -16248, 16576, -16544, -16412]),
    "mul": (lambda t: t * 1.01, [16257, 16418, -16302, 16610, 15872, -16567]),
    "div": (lambda t: t / 0.3, [16469, 16645, -16083, 16827, 16083, -16346]),
    "rdiv": (lambda t: 1.01 / t, [16257, 16079, -16736, 15891, 16643, -16473]),
    "add_int": (lambda t: t + 3, [16512, 16560, -16768, 16672, 16456, 16398]),
    "exp": (lambda t: t.exp(), [16430, 16707, 15647, 17545, 16273, 16107]),
    "log": (lambda t: t.abs().log(), [0, 16235, 16279, 16377, -16378, -16767]),
    "sin": (lambda t: t.sin(), [16215, 16153, 15838, 16168, 15868, -16588]),
    "tanh": (lambda t: t.tanh(), [16195, 16253, -16513, 16256, 15868, -16601]),
    "sigmoid": (lambda t: t.sigmoid(), [16187, 16237, 15641, 16256, 16136, 16033]),
    "rsqrt": (lambda t: t.abs().rsqrt(), [16256, 16162, 16142, 16066, 16438, 16273]),
    "mul_t": (lambda t: t * t.flip(0), [-16569, 16030, -15946, -15946, 16030, -16569]),
    "div_t": (lambda t: t / t.flip(0), [-16475, 16802, -16658, -16374, 15690, -16569]),
    "clamp": (lambda t: t.clamp(-1.1, 1.3), [16256, 16294, -16499, 16294, 15869, -16569]),
    "gelu": (lambda t: st.nn.functional.gelu(t), [16215, 16415, -17674, 16608, 15755, -16850]),
    "silu": (lambda t: st.nn.functional.silu(t), [16187, 16404, -16904, 16608, 15750, -16773]),
    "cumsum": (lambda t: t.cumsum(0), [16256, 16480, 16000, 16616, 16620, 16595]),
    "softmax": (lambda t: t.softmax(0), [15136, 15411, 14354, 16252, 14981, 14808]),
    "sum": (lambda t: t.sum(), [16595]),
    "mean": (lambda t: t.mean(), [16269]),
    "prod": (lambda t: t.prod(), [16559]),
    "var": (lambda t: t.var(), [16705]),
    "std": (lambda t: t.std(), [16478]),
    "logsumexp": (lambda t: t.logsumexp(0), [16608]),
    "norm": (lambda t: t.norm(), [16643]),
    "max": (lambda t: t.max(), [16608]),
    "dot": (lambda t: t @ t, [17031]),
    "mm": (lambda t: t.reshape(2, 3) @ t.reshape(3, 2), [-16143, 16820, 16592, 16792]),
}


@local
@pytest.mark.parametrize("op", sorted(TORCH))
def test_results_bit_for_bit_as_torch(x, op):
    f, want = TORCH[op]
    assert bits(f(x)) == want


@local
def test_reductions_accumulate_in_float32():
    # 1 + 1/256 * 256 times: a bfloat16 accumulator would stall at 1 (1 + 1/256 rounds back)
    t = st.cat([st.ones(1), st.full((256,), 1 / 256)]).bfloat16()
    assert t.sum().item() == 2.0 and t.sum().dtype == st.bfloat16
    v = st.tensor([1.0, 2.5, -3.25, 1e-3], dtype=st.bfloat16)
    assert v.dot(v).item() == 17.875  # torch's: the 1e-6 term tips a tie bfloat16 would lose
    assert v.sum(dtype=st.float32).dtype == st.float32 and v.mean().dtype == st.bfloat16


@local
def test_log_softmax_close_to_torch(x):
    want = [-6.0, -4.5, -10.25, -0.0155029296875, -6.90625, -7.78125]
    assert np.allclose(x.log_softmax(0).float().numpy(), want, rtol=2e-3, atol=1e-3)


NAN = float("nan")
ORDER = {  # torch.tensor([1, nan, -3.25, 7, 2, 0.5], dtype=torch.bfloat16) -> op -> values
    "max": (lambda t: t.max(), NAN),
    "argmax": (lambda t: t.argmax(), 1),
    "max_dim": (lambda t: t.max(0), [NAN, 1]),
    "topk": (lambda t: t.topk(2), [[NAN, 7.0], [1, 3]]),
    "cummax": (lambda t: t.cummax(0), [[1.0] + [NAN] * 5, [0, 1, 1, 1, 1, 1]]),
    "median": (lambda t: t.median(), NAN),
    "kthvalue": (lambda t: t.kthvalue(2), [0.5, 5]),
    "mode": (lambda t: t.mode(), [-3.25, 2]),
    "unique": (lambda t: st.unique(t), [-3.25, 0.5, 1.0, 2.0, 7.0, NAN]),
    "sort": (
        lambda t: t.sort(descending=True),
        [[NAN, 7.0, 2.0, 1.0, 0.5, -3.25], [1, 3, 4, 0, 5, 2]],
    ),
    "max_pool": (lambda t: st.nn.functional.max_pool1d(t.reshape(1, 1, 6), 2), [[[NAN, 7.0, 2.0]]]),
    "nan_to_num": (lambda t: t.nan_to_num(), [1.0, 0.0, -3.25, 7.0, 2.0, 0.5]),
    "sign": (lambda t: t.sign(), [1.0, 0.0, -1.0, 1.0, 1.0, 1.0]),
    "searchsorted": (
        lambda t: st.searchsorted(st.tensor([1.0, 2.0, 3.0], dtype=st.bfloat16), t.nan_to_num()),
        [0, 0, 0, 3, 1, 0],
    ),
}


@local
@pytest.mark.parametrize("op", sorted(ORDER))
def test_orders_and_nans_as_torch(op):
    """Sorting and NaN-aware kernels see bfloat16 as the float it is (NumPy does not)."""
    f, want = ORDER[op]
    r = f(st.tensor([1.0, NAN, -3.25, 7.0, 2.0, 0.5], dtype=st.bfloat16, shards=3))
    parts = r if isinstance(r, tuple) else (r,)
    assert all(p.dtype in (st.bfloat16, st.int64) for p in parts)
    got = [p.float().tolist() if p.dtype == st.bfloat16 else p.tolist() for p in parts]
    got = got if isinstance(r, tuple) else got[0]
    assert np.array_equal(np.array(got, dtype=float), np.array(want, dtype=float), equal_nan=True)


# ------------------------------------------------------------------ autograd
@local
def test_gradients_are_bfloat16():
    x = st.tensor([1.0, 2.5, -3.25, 7.0], dtype=st.bfloat16, shards=2, requires_grad=True)
    (x.exp() * x).sum().backward()
    assert x.grad.dtype == st.bfloat16
    assert x.grad.tolist() == [5.4375, 42.75, -0.0869140625, 8768.0]
    x.grad = None
    (x.reshape(2, 2) @ x.reshape(2, 2)).mean().backward()
    assert x.grad.dtype == st.bfloat16 and x.grad.tolist() == [0.3125, 0.375, 3.25, 3.3125]
    x.grad = None
    x.var().backward()
    assert np.allclose(x.grad.float().numpy(), [-0.54296875, 0.458984375, -3.375, 3.46875], 1e-2)


# ------------------------------------------------------------------ refused ops
@local
@pytest.mark.parametrize("op", ["inv", "det", "cholesky", "qr", "svd", "eigh"])
def test_linalg_decompositions_refuse_bfloat16(op):
    with pytest.raises(UnsupportedDType, match=f"linalg.{op}.*bfloat16"):
        getattr(st.linalg, op)(st.eye(2, dtype=st.bfloat16))


@local
def test_other_refusals_like_torch(x):
    with pytest.raises(UnsupportedDType, match="quantile.*bfloat16"):
        st.quantile(x, 0.5)
    with pytest.raises(DTypeError, match="bfloat16"):
        st.fft.fft(x)
    with pytest.raises(DTypeError, match="view_as_complex.*bfloat16"):
        st.view_as_complex(x.reshape(3, 2))
    with pytest.raises(DTypeError, match="complex.*bfloat16"):
        st.complex(x, x)


# ------------------------------------------------------------------ save / load, Ray
@local
def test_save_load_round_trip(tmp_path, x):
    st.save({"w": x, "g": x.float()}, tmp_path / "ck.st")
    back = st.load(tmp_path / "ck.st")
    assert back["w"].dtype == st.bfloat16 and bits(back["w"]) == bits(x)
    assert back["g"].dtype == st.float32


def test_shards_move_between_workers():
    """On the Ray mirror the shards travel between worker processes (re-sharding, a
    cross-shard sum and matmul, a gather to the driver)."""
    x = st.tensor(DATA * 4, dtype=st.bfloat16, shards=2)
    y = x.reshape(4, 6).t().contiguous()  # moves blocks between shards
    assert y.dtype == st.bfloat16
    assert bits(y.t().reshape(-1)) == bits(x)
    assert bits(x.sum()) == [16851]
    assert bits(x.reshape(4, 6) @ y) == [17031] * 16
    assert bits(st.tensor(x.numpy(), shards=2)) == bits(x)
