"""Arithmetic primitives: division rules, in-place methods, dtype conversions, errors."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


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


@pytest.mark.parametrize(
    "call, err, text",
    [
        (lambda x: x + st.ones(5), st.ShapeError, r"\(7, 6\) and \(5,\)"),
        (lambda x: x.reshape_nonexistent, AttributeError, "reshape_nonexistent"),
        (lambda x: x & 1, st.DTypeError, "bitwise"),
        (lambda x: -(x > 0), st.DTypeError, "bool"),
        (lambda x: st.where(x, x, x), st.DTypeError, "bool condition"),
        (lambda x: st.arange(3) ** -1, st.ArgumentError, "negative integer powers"),
        (lambda x: st.clamp(x), st.ArgumentError, "min"),
        (lambda x: x + "a", TypeError, "str"),
    ],
)
def test_bad_elementwise_input(call, err, text):
    x = st.from_numpy(A, shards=3)
    with pytest.raises(err, match=text):
        call(x)
    assert_matches_numpy(x, A)
    assert_matches_numpy(x + 1, A + 1)  # cluster still usable


# ---------------------------------------------------- issue 12: torch parity (torch 2.13's answers)
def _grad(f, data, **kw):
    x = st.tensor(data, requires_grad=True, **kw)
    f(x).sum().backward()
    return x.grad.tolist()


def test_pow_gradient_at_singular_points_matches_torch():
    assert _grad(lambda x: x**0, [0.0, 1.0]) == [0.0, 0.0]
    assert _grad(lambda x: x ** st.tensor([0.0, -1.0, 0.0]), [0.0, 0.0, 2.0]) == [
        0.0,
        -np.inf,
        0.0,
    ]
    assert _grad(lambda x: x**0.5, [0.0, 2.0])[0] == np.inf
    b = st.tensor([2.0, 0.0, -1.0, 0.5], requires_grad=True)
    (st.tensor([-2.0, 0.0, 0.0, 0.0]) ** b).sum().backward()
    g = b.grad.tolist()  # torch: [nan, 0, -inf, 0] (log of a negative base is nan)
    assert np.isnan(g[0]) and g[1:] == [0.0, -np.inf, 0.0]
    assert _grad(lambda b: 0.0**b, [2.0, 0.0, -1.0]) == [0.0, 0.0, -np.inf]


def test_minimum_maximum_gradient_with_nan_and_ties_matches_torch():
    assert _grad(lambda x: st.minimum(x, st.tensor(float("nan"))), [1.0]) == [1.0]
    assert _grad(lambda x: st.maximum(x, st.tensor(float("nan"))), [1.0]) == [1.0]
    a = st.tensor([1.0], requires_grad=True)
    n = st.tensor([float("nan")], requires_grad=True)
    st.minimum(a, n).sum().backward()
    assert a.grad.tolist() == [1.0] and n.grad.tolist() == [1.0]
    y = st.tensor([1.0, 2.0], requires_grad=True)
    z = st.tensor([1.0, 1.0], requires_grad=True)
    st.maximum(y, z).sum().backward()
    assert y.grad.tolist() == [0.5, 1.0] and z.grad.tolist() == [0.5, 0.0]


def test_inplace_write_after_pow_still_backprops():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = x**1.5
    y[0] = 1
    y.sum().backward()  # torch saves x, not y
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 2.1213203], rtol=1e-6)


@pytest.mark.parametrize("shards", [1, 2])
def test_python_ints_wrap_into_the_tensor_dtype(shards):
    u = st.tensor([0, 7], dtype=st.uint8, shards=shards)
    assert (u > -1).tolist() == [False, False]  # -1 is 255
    r = u * -3
    assert r.dtype == st.uint8 and r.tolist() == [0, 235]
    assert (u == 263).tolist() == [False, True]
    assert (u + 256).tolist() == [0, 7] and (u // -3).tolist() == [0, 0]
    assert (u & -1).tolist() == [0, 7]
    assert (st.tensor([0, 7], dtype=st.int8) + 300).tolist() == [44, 51]
    assert (st.tensor([0, 7], dtype=st.int8) * 1000).tolist() == [0, 88]
    assert (st.tensor([0, 7]) + 2**63).tolist() == [-(2**63), -(2**63) + 7]
    with pytest.raises(st.ValueOverflow, match="2361183241434822606848"):
        u + 2**71
    with pytest.raises(OverflowError):
        st.tensor([True]) + 2**70


def test_float16_divided_by_a_python_float_is_not_rounded_first():
    r = st.tensor([2.0, 0.1, 3.3], dtype=st.float16) / 1e-3
    assert r.dtype == st.float16 and r.tolist() == [2000.0, 100.0, 3300.0]
    h = st.tensor([2.0], dtype=st.float16)
    h /= 1e-3
    assert h.tolist() == [2000.0]


def test_add_alpha_keeps_torch_result_dtype():
    u = st.tensor([1, 2], dtype=st.uint8)
    r = st.add(u, st.tensor([True, False]), alpha=2)
    assert r.dtype == st.uint8 and r.tolist() == [3, 2]
    assert st.add(u, 3, alpha=100).tolist() == [45, 46]
    assert st.add(st.tensor([1, 2], dtype=st.int8), st.tensor(3), alpha=100).tolist() == [45, 46]
    assert st.add(st.tensor([True]), st.tensor([True]), alpha=2).tolist() == [True]
    assert st.add(st.tensor([1.0, 2]), st.tensor([True, False]), alpha=2.5).tolist() == [3.5, 2.0]
    with pytest.raises(st.DTypeError, match="alpha must not be a floating"):
        st.add(u, st.tensor([True, False]), alpha=2.5)
    with pytest.raises(st.DTypeError, match="Boolean alpha"):
        st.add(st.tensor([1, 2]), st.tensor([1, 1]), alpha=True)


@pytest.mark.parametrize("shards", [1, 2])
def test_complex_add_sub_take_a_float_alpha_like_torch(shards):
    # torch: a float alpha scales a complex result; a complex alpha needs a complex result
    z = st.tensor([1 + 2j, 3 - 1j], shards=shards)
    w = st.tensor([0.5 + 1j, -1 + 0j], shards=shards)
    assert st.add(z, w, alpha=0.5).tolist() == [(1.25 + 2.5j), (2.5 - 1j)]
    assert st.sub(z, w, alpha=2.5).tolist() == [(-0.25 - 0.5j), (5.5 - 1j)]
    assert st.add(z, w, alpha=1j).tolist() == [2.5j, (3 - 2j)]
    assert st.add(z, 2.0, alpha=1.5).tolist() == [(4 + 2j), (6 - 1j)]
    y = z.clone()
    assert y.add_(w, alpha=0.5).tolist() == [(1.25 + 2.5j), (2.5 - 1j)]
    with pytest.raises(st.DTypeError, match="must not be a complex number"):
        st.add(st.tensor([1.0, 2.0], shards=shards), st.tensor([1.0, 2.0]), alpha=1j)


def test_integer_power_with_negative_tensor_exponents_matches_torch():
    assert (2 ** st.tensor([-1, 2])).tolist() == [0, 4]
    b = st.tensor([2, -1, -1, 1, 0, 3], shards=2)
    e = st.tensor([-1, -1, -2, -5, -1, 0], shards=3)
    assert (b**e).tolist() == [0, -1, 1, 1, 0, 1]
    assert ((-1) ** st.tensor([-1, -2, 3])).tolist() == [-1, 1, -1]
    assert (0 ** st.tensor([-1, 0])).tolist() == [0, 1]
    with pytest.raises(st.ArgumentError, match="negative integer powers"):
        st.tensor([2, 3]) ** -1


@pytest.mark.parametrize("op", ["floordiv", "mod"])
def test_integer_division_by_zero_raises_like_torch(op):
    x = st.tensor([5, 3], shards=2)
    f = (lambda a, b: a // b) if op == "floordiv" else (lambda a, b: a % b)
    for zero in (0, False):
        with pytest.raises(st.DivisionByZero, match="ZeroDivisionError") as e:
            f(x, zero)  # raised at once: nothing is queued
        assert isinstance(e.value, ZeroDivisionError) and isinstance(e.value, RuntimeError)
    with pytest.raises(ZeroDivisionError):
        f(st.tensor([5], dtype=st.uint8), 256)  # 256 wraps to 0
    with pytest.raises(ZeroDivisionError):
        f(st.tensor([True]), 0)
    # floats divide by zero as IEEE says
    assert f(st.tensor([5.0, 3.0]), 0).tolist()[0] in (np.inf,) or op == "mod"
    # a tensor divisor holding 0: torch raises too; here the worker raises and the read says so
    bad = f(x, st.tensor([0, 1], shards=2))
    with pytest.raises(st.OpFailed, match="ZeroDivisionError"):
        bad.tolist()
    assert x.tolist() == [5, 3]  # operands intact


@pytest.mark.parametrize(
    "expr",
    [
        lambda: st.tensor([True]) - st.tensor([False]),
        lambda: st.tensor([True]) - True,
        lambda: st.tensor([1]) - True,
        lambda: st.tensor([1.0]) - st.tensor(True),
        lambda: True - st.tensor([1.0]),
        lambda: 1 - st.tensor([True]),
        lambda: st.sub(st.tensor([True]), st.tensor([False]), alpha=2),
        lambda: st.tensor([1.0]).sub(True, alpha=2),
    ],
)
def test_bool_subtraction_raises_before_queuing(expr):
    with pytest.raises(st.DTypeError, match="Subtraction, the `-` operator, with"):
        expr()
    st.synchronize()  # nothing failed in a worker


def test_inplace_bool_subtraction_raises_and_leaves_the_tensor():
    x = st.tensor([1, 2])
    with pytest.raises(st.DTypeError, match="with a bool tensor"):
        x -= True
    b = st.tensor([True, False])
    with pytest.raises(st.DTypeError, match="two bool tensors"):
        b -= True
    assert x.tolist() == [1, 2] and b.tolist() == [True, False]


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_refuse_numbers_as_torch(name):
    # torch: "maximum(): argument 'other' (position 2) must be Tensor, not float"
    x = st.tensor([1.0, 3.0])
    f = getattr(st, name)
    with pytest.raises(st.DTypeError, match=r"argument 'other' \(position 2\).*float 2\.5"):
        f(x, 2.5)
    with pytest.raises(st.DTypeError, match=r"argument 'input' \(position 1\).*int 2"):
        f(2, x)
    with pytest.raises(TypeError, match="not int 2"):  # the method too; a TypeError, as torch
        getattr(x, name)(2)
    assert x.tolist() == [1.0, 3.0]
    assert f(x, st.tensor(2.0)).tolist() == ([2.0, 3.0] if name == "maximum" else [1.0, 2.0])


def test_div_trunc_and_aliases_like_torch():
    a = st.tensor([7, -7, 7, -7], shards=2)
    b = st.tensor([2, 2, -2, -2], shards=3)
    r = st.div(a, b, rounding_mode="trunc")
    assert r.dtype == st.int64 and r.tolist() == [3, -3, -3, 3]
    assert st.divide(a, 2, rounding_mode="trunc").tolist() == [3, -3, 3, -3]
    assert st.div(7, b, rounding_mode="trunc").tolist() == [3, 3, -3, -3]
    assert a.divide(2, rounding_mode="floor").tolist() == [3, -4, 3, -4]
    f = st.div(st.tensor([7.5, -7.5], shards=2), 2, rounding_mode="trunc")
    assert f.dtype == st.float32 and f.tolist() == [3.0, -3.0]
    assert st.div(a, 2.5, rounding_mode="trunc").tolist() == [2.0, -2.0, 2.0, -2.0]
    assert st.true_divide(st.tensor([1, 3]), 2).tolist() == [0.5, 1.5]
    assert st.subtract(st.tensor([3]), 1).tolist() == [2] and st.multiply(
        st.tensor([3]), 2
    ).tolist() == [6]
    with pytest.raises(ZeroDivisionError):
        st.div(a, 0, rounding_mode="trunc")
    for bad in (st.tensor([True]), st.tensor([1 + 1j])):  # torch: div_trunc not implemented
        with pytest.raises(TypeError):
            st.div(bad, bad, rounding_mode="trunc")
    with pytest.raises(ValueError):
        st.div(a, 2, rounding_mode="round")


def test_inplace_div_rounding_modes_and_aliases_like_torch():
    x = st.tensor([-7, 7], shards=2)
    assert x.div_(2, rounding_mode="trunc") is x and x.tolist() == [-3, 3]
    assert x.divide_(2, rounding_mode="floor").tolist() == [-2, 1]
    with pytest.raises(TypeError):  # Float can't be cast to Long
        x.div_(2)
    with pytest.raises(TypeError):
        x.div_(2.5, rounding_mode="trunc")
    assert x.tolist() == [-2, 1]
    y = st.tensor([5.0, -5.0])
    assert y.true_divide_(2).tolist() == [2.5, -2.5]
    assert y.subtract_(1).multiply_(2).tolist() == [3.0, -7.0]
    with pytest.raises(TypeError):  # an unknown keyword is refused, not ignored
        y.add_(1, rounding_mode="floor")


def test_bool_floor_divide_remainder_pow_raise_like_torch():
    b = st.tensor([True, False], shards=2)
    for f in (lambda: b // b, lambda: b % True, lambda: b**b, lambda: True**b):
        with pytest.raises(TypeError):  # torch: "..._cpu" not implemented for 'Bool'
            f()
    assert (b // 2).dtype == st.int64 and (b % 2.0).dtype == st.float32
    assert (b**2).dtype == st.int64 and (b**2).tolist() == [1, 0]
    assert (b**True).tolist() == [True, False] and (b**False).tolist() == [True, True]
    assert (b**False).dtype == st.bool


def test_floor_division_gradient_is_zero_like_torch_div_floor():
    a = st.tensor([1.5, -2.5, 3.0], shards=2, requires_grad=True)
    st.div(a, 2, rounding_mode="floor").sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]
