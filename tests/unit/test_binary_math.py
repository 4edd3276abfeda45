"""Binary math primitives against NumPy and torch's answers, dtype rules and gradients."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = (np.arange(42.0).reshape(7, 6) - 20.5) / 4
B = np.where(np.arange(42.0).reshape(7, 6) % 5 == 0, 1.5, -2.25)
IA = np.arange(42).reshape(7, 6) - 20
JA = np.arange(42).reshape(7, 6) % 7 + 1
SOME = [PLACEMENTS[1], PLACEMENTS[4], PLACEMENTS[5]]
IDS = [PLACEMENT_IDS[1], PLACEMENT_IDS[4], PLACEMENT_IDS[5]]


@pytest.mark.parametrize("place", SOME, ids=IDS)
def test_layouts(place):
    x, y = st.from_numpy(A, **place), st.from_numpy(B)
    assert_matches_numpy(st.fmod(x, y), np.fmod(A, B))
    assert_matches_numpy(x.fmod(1.5), np.fmod(A, 1.5))
    assert_matches_numpy(st.fmax(x, y), np.fmax(A, B))
    assert_matches_numpy(x.fmin(y), np.fmin(A, B))
    assert_matches_numpy(st.xlogy(x, np.abs(B)), A * np.log(np.abs(B)))
    assert_matches_numpy(st.sinc(x), np.sinc(A))
    assert_matches_numpy(x.heaviside(st.tensor([0.5], dtype=st.float64)), np.heaviside(A, 0.5))
    i, j = st.from_numpy(IA, **place), st.from_numpy(JA)
    assert_matches_numpy(st.gcd(i, j), np.gcd(IA, JA))
    assert_matches_numpy(i.lcm(j), np.lcm(IA, JA))
    assert_matches_numpy(st.bitwise_left_shift(i, j), np.left_shift(IA, JA))
    assert_matches_numpy(i.bitwise_right_shift(j), np.right_shift(IA, JA))
    n = A.copy()
    n[0, 0], n[1, 1], n[2, 2] = np.nan, np.inf, -np.inf
    assert_matches_numpy(st.from_numpy(n, **place).nan_to_num(1.0), np.nan_to_num(n, nan=1.0))


def test_torch_values():
    assert st.fmod(st.tensor([3, -7]), 2).tolist() == [1, -1]
    assert st.xlogy(st.tensor([0.0, 0.0, 1.0]), st.tensor([0.0, float("nan"), 2.0])).tolist()[
        ::2
    ] == [0.0, pytest.approx(0.6931471824645996)]
    assert st.nan_to_num(st.tensor([float("inf")], dtype=st.float64)).tolist() == [
        1.7976931348623157e308
    ]
    assert st.nan_to_num(st.tensor([-float("inf")])).tolist() == [-3.4028234663852886e38]
    assert st.sinc(st.tensor([0.0, 0.5])).tolist() == pytest.approx([1.0, 0.6366197466850281])
    # torch: out-of-range shift amounts give 0 (left) or the sign fill (right)
    s = st.tensor([10])
    assert st.bitwise_left_shift(st.tensor([1], dtype=st.int8), s).tolist() == [1024]
    assert st.bitwise_left_shift(st.tensor([1]), st.tensor([70])).tolist() == [0]
    assert st.bitwise_right_shift(st.tensor([-8]), st.tensor([70])).tolist() == [-1]
    assert st.bitwise_right_shift(st.tensor([-8]), st.tensor([-1])).tolist() == [-1]
    u = st.tensor([3, 5], dtype=st.uint8)
    assert st.bitwise_left_shift(u, u).tolist() == [24, 160]


def test_dtypes():
    i, f, b = st.tensor([3, -7]), st.tensor([1.5, -2.0]), st.tensor([True, False])
    u = st.tensor([3, 5], dtype=st.uint8)
    assert st.fmod(i, i).dtype == st.int64 and st.fmod(i, 2.5).dtype == st.float32
    assert st.fmax(i, f).dtype == st.float32 and st.fmin(b, b).dtype == st.bool
    assert st.xlogy(i, i).dtype == st.float32 and st.xlogy(b, b).dtype == st.float32
    assert st.heaviside(u, u).dtype == st.uint8 and st.heaviside(b, b).tolist() == [True, False]
    assert st.nan_to_num(i).dtype == st.int64 and st.nan_to_num(b).dtype == st.bool
    assert st.sinc(i).dtype == st.float32 and st.sinc(b).dtype == st.float32
    assert st.gcd(u, u).dtype == st.uint8 and st.lcm(i, i).tolist() == [3, 7]
    with pytest.raises(st.DTypeError, match="fmod"):
        st.fmod(b, b)
    with pytest.raises(st.DTypeError, match="float32"):
        st.heaviside(i, f)
    for name in ("gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift"):
        with pytest.raises(st.DTypeError, match="float32"):
            getattr(st, name)(f, f)
        with pytest.raises(st.DTypeError, match="bool"):
            getattr(st, name)(b, b)
    with pytest.raises(st.ArgumentError, match="'x'"):
        st.nan_to_num(f, posinf="x")


def test_inplace():
    x = st.tensor([5.0, -5.0], shards=2)
    assert x.fmod_(3) is x and x.tolist() == [2.0, -2.0]
    assert x.xlogy_(1.0).tolist() == [0.0, 0.0]
    y = st.tensor([float("nan"), 1.0])
    assert y.nan_to_num_(nan=4.0) is y and y.tolist() == [4.0, 1.0]
    z = st.tensor([0.0, -1.0])
    assert z.sinc_().tolist()[0] == 1.0
    w = st.tensor([12, 18])
    assert w.gcd_(st.tensor(8)).tolist() == [4, 2] and w.lcm_(st.tensor([6])).tolist() == [12, 6]
    assert w.bitwise_left_shift_(1).tolist() == [24, 12]
    assert w.bitwise_right_shift_(2).tolist() == [6, 3]
    assert st.tensor([0.0]).heaviside_(st.tensor([0.5])).tolist() == [0.5]
    k = st.tensor([3, 4])
    with pytest.raises(st.DTypeError):
        k.xlogy_(2)  # float result into an int tensor
    assert k.tolist() == [3, 4]


def test_gradients():
    kw = dict(dtype=st.float64, shards=2, requires_grad=True)
    x = st.tensor([1.2, -2.3, 0.7], **kw)
    y = st.tensor([0.5, 1.7, -3.1], **kw)
    for fn in (st.fmod, st.fmax, st.fmin):
        assert st.autograd.gradcheck(fn, (x, y))
    assert st.autograd.gradcheck(st.xlogy, (x, y.abs().detach().requires_grad_()))
    assert st.autograd.gradcheck(st.sinc, (x,))
    assert st.autograd.gradcheck(lambda t: st.nan_to_num(t * 2), (x,))
    # torch's values at the special points
    a = st.tensor([0.0, 0.0, 2.0], requires_grad=True)
    b = st.tensor([0.0, -1.0, 3.0], requires_grad=True)
    st.xlogy(a, b).sum().backward()
    assert a.grad.tolist() == pytest.approx([0.0, 0.0, 1.0986122886681098])
    s = st.tensor([0.0, 1.0], requires_grad=True)
    st.sinc(s).sum().backward()
    assert s.grad.tolist() == pytest.approx([0.0, -1.0])
    n = st.tensor([float("nan"), float("inf"), 1.0], requires_grad=True)
    st.nan_to_num(n).sum().backward()
    assert n.grad.tolist() == [0.0, 0.0, 1.0]
    p = st.tensor([1.0, float("nan")], requires_grad=True)
    q = st.tensor([1.0, 2.0], requires_grad=True)
    st.fmax(p, q).sum().backward()
    assert p.grad.tolist() == [1.0, 0.0] and q.grad.tolist() == [0.0, 1.0]


def test_shift_operators_as_torch():
    # torch: `<<`/`>>` are bitwise_left/right_shift, reflected for `1 << x`, in place for `<<=`
    x = st.tensor([1, -8, 3], dtype=st.int32, shards=2)
    assert (x << 1).tolist() == [2, -16, 6] and (x << 1).dtype == st.int32
    assert (x >> 1).tolist() == [0, -4, 1]
    assert (1 << x).tolist() == [2, 0, 8] and (1 << x).dtype == st.int32
    assert (2 >> x).tolist() == [1, 0, 0]
    assert (x << 40).tolist() == [0, 0, 0] and (x >> 40).tolist() == [0, -1, 0]
    assert (x << 2**40).tolist() == [1, -8, 3]  # the Python int wraps into int32 (to 0)
    assert (x >> x).tolist() == [0, -1, 0] and (x << True).tolist() == [2, -16, 6]
    assert (x << st.tensor([1, 2, 3])).tolist() == [2, -32, 24]
    assert (x << st.tensor([1, 2, 3])).dtype == st.int64
    u = st.tensor([1, 200, 3], dtype=st.uint8)
    assert (u << 1).tolist() == [2, 144, 6] and (u >> 1).tolist() == [0, 100, 1]
    w = u << st.tensor([1, 2, 3], dtype=st.int8)
    assert w.tolist() == [2, 800, 24] and w.dtype == st.int16
    b = st.tensor([True, False]) << 1
    assert b.tolist() == [2, 0] and b.dtype == st.int64
    y = x.clone()
    z = y
    y <<= 1
    assert y is z and y.tolist() == [2, -16, 6] and y.dtype == st.int32
    y >>= st.tensor([1, 2, 3])  # torch: an int64 amount shifts an int32 tensor in place
    assert y is z and y.tolist() == [1, -4, 0] and y.dtype == st.int32
    # torch refuses floats and bools ("lshift_cpu" not implemented for 'Float'/'Bool')
    f, bb = st.tensor([1.0, 2.0]), st.tensor([True, False])
    for bad in (lambda: f << 1, lambda: x << 1.0, lambda: 1.0 << x, lambda: f >> 1):
        with pytest.raises(st.DTypeError, match="float32"):
            bad()
    with pytest.raises(st.DTypeError, match="bool"):
        bb << bb
    y = x.clone()
    with pytest.raises(st.DTypeError, match="float32"):
        y <<= 1.0
    assert y.tolist() == [1, -8, 3]
    with pytest.raises(st.DTypeError, match="float32"):
        f <<= 1
    with pytest.raises(TypeError):
        x << "a"


def test_tensor_only_operands_as_torch():
    # torch has no Number overload of these: fmax(t, 2.0) is "argument 'other' (position 2)
    # must be Tensor, not float" (a TypeError); fmod and xlogy do take numbers
    f, i = st.tensor([1.0, float("nan")]), st.tensor([12, -18])
    calls = [
        (lambda: st.fmax(f, 2.0), "fmax.*'other'.*float"),
        (lambda: st.fmin(2.0, f), "fmin.*'input'.*float"),
        (lambda: f.fmax(2.0), "fmax.*'other'"),
        (lambda: st.heaviside(f, 0.5), "heaviside.*'values'.*float"),
        (lambda: f.heaviside_(0.5), "heaviside_.*'values'"),
        (lambda: st.gcd(i, 8), "gcd.*'other'.*int"),
        (lambda: st.lcm(8, i), "lcm.*'input'.*int"),
        (lambda: i.gcd_(8), "gcd_.*'other'"),
        (lambda: i.lcm(np.int64(8)), "lcm.*'other'.*int64"),
        (lambda: st.fmax(f, True), "fmax.*'other'.*bool"),
    ]
    for call, msg in calls:
        with pytest.raises(st.DTypeError, match=msg):
            call()
    assert f.tolist()[0] == 1.0 and i.tolist() == [12, -18]
    # 0-d tensors are tensors: torch.fmax(t, tensor(2.0)) and gcd(t, tensor(8)) work
    assert st.fmax(f, st.tensor(2.0)).tolist() == [2.0, 2.0]
    assert st.gcd(i, st.tensor(8)).tolist() == [4, 2]
    assert st.gcd(i.int(), st.tensor(8)).dtype == st.int32
    assert st.heaviside(f, st.tensor(2.0)).tolist()[0] == 1.0
    with pytest.raises(st.DTypeError, match="float32.*float64|float64.*float32"):
        st.heaviside(f, st.tensor(2.0, dtype=st.float64))
    assert st.fmod(f, 2.0).tolist()[0] == 1.0 and st.xlogy(f, 2.0).dtype == st.float32


def test_nan_to_num_nan_replacements_as_torch():
    x = st.tensor([float("inf"), -float("inf"), float("nan"), 1.0], shards=2)
    big = 3.4028234663852886e38
    r = st.nan_to_num(x, posinf=float("nan")).tolist()
    assert np.isnan(r[0]) and r[1:] == [-big, 0.0, 1.0]
    r = st.nan_to_num(x, neginf=float("nan")).tolist()
    assert np.isnan(r[1]) and r[0] == big
    r = st.nan_to_num(x.double(), nan=float("nan"), posinf=float("nan"), neginf=float("nan"))
    assert np.isnan(r.numpy()[:3]).all() and r.dtype == st.float64
    # replacements beyond the dtype's range overflow to inf, as torch
    assert st.nan_to_num(x, posinf=1e300).tolist()[0] == float("inf")
    assert st.nan_to_num(x.half(), posinf=1e10).tolist()[:2] == [float("inf"), -65504.0]
    y = x.clone()
    assert y.nan_to_num_(posinf=float("nan")) is y and np.isnan(y.tolist()[0])
    assert st.nan_to_num(st.tensor([1, 2]), posinf=float("nan")).tolist() == [1, 2]


def test_fmod_integer_zero_divisor_raises_like_torch():
    x = st.tensor([1, 2, 3], shards=2)
    with pytest.raises(ZeroDivisionError):  # before anything is queued
        st.fmod(x, 0)
    with pytest.raises(RuntimeError):  # a zero in a tensor divisor surfaces at the read
        st.fmod(x, st.tensor([1, 0, 2], shards=2)).tolist()
    assert np.isnan(st.fmod(x, 0.0).numpy()).all()  # float division by zero is NaN
    assert x.tolist() == [1, 2, 3]


def test_float_power_and_rsub_like_torch():
    x = st.tensor([[1, -2, 3], [4, 5, -6]], dim=1, shards=2)
    r = st.float_power(x, 2)
    assert r.dtype == st.float64 and r.tolist() == [[1.0, 4.0, 9.0], [16.0, 25.0, 36.0]]
    assert x.float_power(st.tensor([0.5])).dtype == st.float64
    assert st.float_power(2, x).tolist()[0] == [2.0, 0.25, 8.0]
    assert st.float_power(x, 1j).dtype == st.complex128
    with pytest.raises(TypeError):  # in place needs a float64 tensor already
        x.float().float_power_(2)
    y = st.tensor([2.0, 3.0], dtype=st.float64)
    assert y.float_power_(2) is y and y.tolist() == [4.0, 9.0]
    assert st.rsub(x, 3).tolist() == [[2, 5, 0], [-1, -2, 9]]
    assert st.rsub(x.float(), 3, alpha=2).tolist() == [[1.0, 7.0, -3.0], [-5.0, -7.0, 15.0]]
    a = st.tensor([1.0, 2.0], requires_grad=True)
    st.float_power(a, 3).sum().backward()
    assert a.grad.dtype == st.float32 and a.grad.tolist() == [3.0, 12.0]
