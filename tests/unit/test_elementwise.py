import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_binary_ops_on_every_layout(place):
    x, y = st.from_numpy(A, **place), st.from_numpy(B, **place)
    assert_matches_numpy(x + y, A + B)
    assert_matches_numpy(x - y, A - B)
    assert_matches_numpy(x * y, A * B)
    assert_matches_numpy(x / y, A / B)
    assert_matches_numpy(x // y, A // B)
    assert_matches_numpy(x % y, A % B)
    assert_matches_numpy(y ** x, B ** A)
    assert_matches_numpy(st.maximum(x, y), np.maximum(A, B))
    assert_matches_numpy(st.minimum(x, y), np.minimum(A, B))


@pytest.mark.parametrize("px, py", [
    (dict(shards=2), dict(shards=3)),
    (dict(shards=3), dict(shards=3, dim=1)),
    (dict(layout=st.Layout.block((2, 2))), dict(shards=2)),
    (dict(shards=2), dict(layout=st.Layout.replicated())),
    (dict(layout=st.Layout(chunks=(4, 0, 3))), dict(layout=st.Layout(chunks=(1, 6)))),
])
def test_mismatched_layouts_are_aligned(px, py):
    x, y = st.from_numpy(A, **px), st.from_numpy(B, **py)
    z = x * y + x
    assert_matches_numpy(z, A * B + A)
    assert z.layout == x.layout  # the output follows the first sharded full-shape operand
    assert_matches_numpy(x, A) and assert_matches_numpy(y, B)  # operands untouched


def test_rank_mismatch_broadcast_sums_to_12():
    a, b = st.tensor([[1], [2]]), st.tensor([1, 2])
    assert (a + b).sum().item() == 12
    assert_matches_numpy(a + b, np.array([[2, 3], [3, 4]]))


@pytest.mark.parametrize("sa, sb", [((7, 6), (6,)), ((7, 1), (1, 6)), ((7, 6), (7, 1)),
                                    ((1, 6), (7, 6)), ((7, 6), ()), ((2, 1, 6), (7, 1))])
@pytest.mark.parametrize("shards", [1, 3])
def test_broadcasting_shapes(sa, sb, shards):
    a = np.arange(np.prod(sa), dtype=np.float64).reshape(sa) + 1
    b = np.arange(np.prod(sb), dtype=np.float64).reshape(sb) * 0.5 - 1
    x, y = st.from_numpy(a, shards=shards), st.from_numpy(b, shards=2)
    assert_matches_numpy(x * y - y, a * b - b)
    assert_matches_numpy(y / x, b / a)


def test_scalars_and_numpy_operands_reflected():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(2 * x + 3, 2 * A + 3)
    assert_matches_numpy(1 - x, 1 - A)
    assert_matches_numpy(2 / (x + 10), 2 / (A + 10))
    assert_matches_numpy(2 ** x, 2 ** A)
    assert_matches_numpy(A[0] + x, A[0] + A)
    assert_matches_numpy(x - B, A - B)
    assert_matches_numpy(B - x, B - A)
    assert_matches_numpy(np.float64(2.0) * x, 2 * A)
    assert_matches_numpy(-x, -A)
    assert_matches_numpy(abs(x), np.abs(A))
    assert_matches_numpy(+x, A)


def test_comparisons_and_logic():
    x, y = st.from_numpy(A, shards=3), st.from_numpy(B - 2, shards=2)
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        assert_matches_numpy(getattr(x, op)(y), getattr(A, op)(B - 2), dtype=st.bool)
    m, n = x > 0, y > 0
    assert_matches_numpy(m & n, (A > 0) & (B > 2))
    assert_matches_numpy(m | n, (A > 0) | (B > 2))
    assert_matches_numpy(m ^ n, (A > 0) ^ (B > 2))
    assert_matches_numpy(~m, ~(A > 0))
    assert_matches_numpy(st.logical_and(x, y), np.logical_and(A, B - 2))
    assert_matches_numpy(st.logical_or(m, 0), np.logical_or(A > 0, 0))
    assert_matches_numpy(st.logical_xor(x, n), np.logical_xor(A, B > 2))
    assert_matches_numpy(st.logical_not(x), np.logical_not(A))
    i = st.arange(12, shards=3)
    assert_matches_numpy(i & 5, np.arange(12) & 5)
    assert_matches_numpy(3 | i, 3 | np.arange(12))
    assert_matches_numpy(~i, ~np.arange(12))
    assert (x == x).all().item() and x.eq(A).all().item()


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "sqrt", "abs", "sin", "cos", "tanh",
                                  "neg"])
def test_unary_math(name):
    x = st.from_numpy(B, shards=3)
    ref = {"neg": np.negative, "abs": np.abs}.get(name, getattr(np, name, None))
    assert_matches_numpy(getattr(st, name)(x), ref(B), rtol=1e-12)
    assert_matches_numpy(getattr(x, name)(), ref(B), rtol=1e-12)


def test_activation_and_selection():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(st.sigmoid(x), 1 / (1 + np.exp(-A)), rtol=1e-12)
    assert_matches_numpy(st.relu(x), np.maximum(A, 0))
    assert_matches_numpy(st.clamp(x, min=-1, max=1), np.clip(A, -1, 1))
    assert_matches_numpy(x.clamp(min=0.5), np.maximum(A, 0.5))
    assert_matches_numpy(st.clamp(x, max=st.from_numpy(B - 3, shards=2)), np.minimum(A, B - 3))
    assert_matches_numpy(st.where(x > 0, x, -x), np.abs(A))
    assert_matches_numpy(st.where(x > 0, 1.0, 0.0), (A > 0).astype(np.float32), dtype="float32")
    assert_matches_numpy(x.where(x > 0, 7), np.where(A > 0, A, 7))
    z = st.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert z.isnan().tolist() == [False, True, False, False]
    assert st.isfinite(z).tolist() == [True, False, False, False]
    assert_matches_numpy(st.sigmoid(st.tensor([-1000.0, 1000.0])), np.array([0.0, 1.0]))


@pytest.mark.parametrize("a, b, out", [
    ("int32", 5, "int32"), ("int64", 2.5, "float32"), ("int8", "int16", "int16"),
    ("uint8", "int8", "int16"), ("float16", 3.0, "float16"), ("bool", 1, "int64"),
    ("int32", "float64", "float64"), ("float32", "float64", "float64"),
])
def test_result_dtypes_follow_torch(a, b, out):
    x = st.ones(4, dtype=a, shards=2)
    other = b if not isinstance(b, str) else st.ones(4, dtype=b, shards=3)
    r = x + other
    assert r.dtype == st.dtypes.as_dtype(out)
    assert r.numpy().dtype == np.dtype(out)


def test_division_and_float_ops_promote_ints():
    i = st.arange(1, 5, shards=2)
    assert (i / 2).dtype == st.float32 and (i / 2).tolist() == [0.5, 1.0, 1.5, 2.0]
    assert (i // 2).dtype == st.int64 and (i // 2).tolist() == [0, 1, 1, 2]
    assert st.exp(i).dtype == st.float32 and st.sqrt(i).dtype == st.float32
    assert st.div(i, 2, rounding_mode="floor").tolist() == [0, 1, 1, 2]
    assert (st.arange(-3, 3) % 2).tolist() == [1, 0, 1, 0, 1, 0]


def test_inplace_keeps_identity_and_layout():
    x = st.from_numpy(A.copy(), shards=3)
    ident, lay = id(x), x.layout
    x += 1
    x -= st.from_numpy(B, shards=2)
    x *= 2
    x /= 4
    x.add_(1, alpha=2).sub_(0.5).mul_(3).div_(2)
    ref = (((A + 1 - B) * 2 / 4) + 2 - 0.5) * 3 / 2
    assert id(x) == ident and x.layout == lay
    assert_matches_numpy(x, ref)
    x.clamp_(min=-1, max=1)
    assert_matches_numpy(x, np.clip(ref, -1, 1))
    x.fill_(3)
    assert_matches_numpy(x, np.full(A.shape, 3.0))
    x.zero_()
    assert_matches_numpy(x, np.zeros(A.shape))
    x.copy_(st.from_numpy(B, layout=st.Layout.block((2, 2))))
    assert_matches_numpy(x, B)
    x.fill_(st.tensor(5.0))
    assert x.sum().item() == 5 * 42


def test_inplace_dtype_rules():
    i = st.arange(4, shards=2)
    with pytest.raises(st.DTypeError, match="float32.*int64"):
        i /= 2
    assert i.tolist() == [0, 1, 2, 3]  # untouched
    i.mul_(3)
    assert i.tolist() == [0, 3, 6, 9]
    f = st.zeros(3, dtype=st.float16)
    f.add_(st.ones(3, dtype=st.float64))
    assert f.dtype == st.float16 and f.tolist() == [1.0, 1.0, 1.0]
    i.copy_(st.tensor([1.7, 2.2, 3.9, -1.5]))
    assert i.tolist() == [1, 2, 3, -1]


def test_dtype_conversions():
    x = st.tensor([1.7, -2.2, 0.0], shards=2)
    assert x.to(st.float64).dtype == st.float64
    assert x.to(dtype=st.float16).dtype == st.float16
    assert x.int().tolist() == [1, -2, 0] and x.int().dtype == st.int32
    assert x.long().dtype == st.int64 and x.double().dtype == st.float64
    assert x.half().dtype == st.float16 and x.float().dtype == st.float32
    assert x.bool().tolist() == [True, True, False]
    assert x.type() == "sharded.FloatTensor" and x.type(st.int16).dtype == st.int16
    assert x.to("cpu") is x and x.to(x) is x
    assert x.short().dtype == st.int16 and x.byte().dtype == st.uint8


@pytest.mark.parametrize("call, err, text", [
    (lambda x: x + st.ones(5), st.ShapeError, r"\(7, 6\) and \(5,\)"),
    (lambda x: x.reshape_nonexistent, AttributeError, "reshape_nonexistent"),
    (lambda x: x & 1, st.DTypeError, "bitwise"),
    (lambda x: -(x > 0), st.DTypeError, "bool"),
    (lambda x: st.where(x, x, x), st.DTypeError, "bool condition"),
    (lambda x: st.arange(3) ** -1, st.ArgumentError, "negative integer powers"),
    (lambda x: st.clamp(x), st.ArgumentError, "min"),
    (lambda x: x + "a", TypeError, "str"),
])
def test_bad_elementwise_input(call, err, text):
    x = st.from_numpy(A, shards=3)
    with pytest.raises(err, match=text):
        call(x)
    assert_matches_numpy(x, A)
    assert_matches_numpy(x + 1, A + 1)  # cluster still usable
