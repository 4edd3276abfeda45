"""The elementwise plan cache (``plan_rule`` remembers what a pure dtype rule decided, by
the operands' dtypes, 0-d-ness and scalar types, the default dtype and an in-place target's
dtype) and the other shortcuts on the per-op path: a hit gives what a miss gives, a change of
any of those misses, in-place ops and autograd behave as before. Expected values are NumPy's
(the same ufuncs, element for element: results are compared bit for bit) or torch 2.13's
answers as literals."""

import threading

import numpy as np
import pytest

import sharded as st
from sharded.core.dispatch import via_float32
from sharded.grad_mode import is_grad_enabled
from sharded.ops.elementwise import plan as E
from sharded.ops.elementwise.prims import arithmetic as A

pytestmark = pytest.mark.ray_mirror


def _key(rule, *operands, target=None):
    return E._signature(rule, operands, target)


def test_a_hit_gives_the_result_of_a_miss_bit_for_bit():
    a = np.random.default_rng(0).random(64)
    x = st.tensor(a, shards=2)
    E._PLANS.clear()
    y, want = x, a
    for _ in range(50):
        y = y * 1.0001 + 0.5
        want = want * 1.0001 + 0.5
    assert np.array_equal(y.numpy(), want)
    # one entry for mul, one for add: the 49 later rounds were hits
    assert set(E._PLANS) == {_key(A._mul_rule, x, 1.0), _key(E.promote, x, 1.0)}
    hit = E._PLANS[_key(A._mul_rule, x, 1.0)]
    x * 3.0
    assert E._PLANS[_key(A._mul_rule, x, 1.0)] is hit


def test_a_change_of_dtype_scalar_type_or_0d_misses():
    f64 = st.tensor([1.0, 2.0, 3.0, 4.0], dtype=st.float64, shards=2)
    f32 = st.tensor([1.0, 2.0, 3.0, 4.0], shards=2)
    i32 = st.tensor([1, 2, 3, 4], dtype=st.int32, shards=2)
    keys = {
        _key(A._mul_rule, f64, 2.0),
        _key(A._mul_rule, f32, 2.0),
        _key(A._mul_rule, i32, 2.0),
        _key(A._mul_rule, i32, 2),
        _key(A._mul_rule, i32, True),
        _key(A._mul_rule, i32, st.tensor(2.0)),
        _key(A._mul_rule, i32, st.tensor([2.0])),
        _key(E.promote, i32, 2),
    }
    assert len(keys) == 8
    # (torch: float64, float32, float32, int32, int32, float32, float32)
    for _ in range(2):  # the second round hits
        assert (f64 * 2.0).dtype == st.float64
        assert (f32 * 2.0).dtype == st.float32
        r = i32 * 2.5
        assert r.dtype == st.float32 and r.tolist() == [2.5, 5.0, 7.5, 10.0]
        r = i32 * 2
        assert r.dtype == st.int32 and r.tolist() == [2, 4, 6, 8]
        assert (i32 * True).dtype == st.int32
        assert (i32 * st.tensor(2.0)).dtype == st.float32
        assert (i32 * st.tensor(2)).dtype == st.int32  # a 0-d int64 tensor keeps int32


def test_a_layout_change_gives_its_own_layout():
    a = np.arange(12.0).reshape(4, 3)
    rows = st.tensor(a, shards=2)
    cols = st.tensor(a, shards=3, dim=1)
    for _ in range(2):
        for t in (rows, cols):
            r = t * 2.0 + 1.0
            assert r.layout == t.layout
            assert np.array_equal(r.numpy(), a * 2.0 + 1.0)
    r = rows * cols  # different layouts: the first operand's, the other moved to it
    assert r.layout == rows.layout and np.array_equal(r.numpy(), a * a)


def test_the_default_dtype_is_part_of_the_key():
    i = st.tensor([1, 2], shards=2)
    assert (i * 0.5).dtype == st.float32
    st.set_default_dtype(st.float64)
    try:
        assert (i * 0.5).dtype == st.float64
    finally:
        st.set_default_dtype(st.float32)
    assert (i * 0.5).dtype == st.float32


def test_in_place_targets_and_int_wrapping_on_hits():
    for _ in range(2):
        x = st.tensor([1.0, 2.0], dtype=st.float32, shards=2)
        x.mul_(st.tensor([2.0, 2.0], dtype=st.float64, shards=2))  # kept float32 (torch)
        assert x.dtype == st.float32 and x.tolist() == [2.0, 4.0]
        i = st.tensor([1, 2], dtype=st.int32, shards=2)
        # torch: result type Float can't be cast to the desired output type Int
        with pytest.raises(st.DTypeError, match="can't be cast"):
            i.mul_(2.5)
        assert i.tolist() == [1, 2]
        u = st.tensor([0, 7], dtype=st.uint8, shards=2)
        r = u + -1  # torch: tensor([255, 6], dtype=torch.uint8)
        assert r.dtype == st.uint8 and r.tolist() == [255, 6]
        u.add_(-1)
        assert u.tolist() == [255, 6]
        f = st.tensor([0.0, 7.0], shards=2)
        assert (f + -1).tolist() == [-1.0, 6.0]  # the same ints, no wrap into a float


def test_bool_subtraction_still_refused_on_every_call():
    b = st.tensor([True, False], shards=2)
    for _ in range(2):
        with pytest.raises(st.DTypeError, match="Subtraction"):
            b - b
        with pytest.raises(st.DTypeError, match="Subtraction"):
            st.tensor([1, 2]) - True


def test_autograd_through_cached_plans():
    for _ in range(2):
        x = st.tensor([1.0, 2.0, 3.0], shards=2, requires_grad=True)
        w = st.tensor([0.5, -1.0, 2.0], shards=2, requires_grad=True)
        y = (x * w + 0.5) * 3.0 - x / 2.0
        y.sum().backward()
        # torch: x.grad = 3 * w - 0.5, w.grad = 3 * x
        assert x.grad.tolist() == [1.0, -3.5, 5.5]
        assert w.grad.tolist() == [3.0, 6.0, 9.0]
    with st.no_grad():
        assert not (x * 2.0).requires_grad
    assert (x * 2.0).requires_grad


def test_grad_mode_defaults_in_a_new_thread():
    seen = []
    with st.no_grad():
        t = threading.Thread(target=lambda: seen.append(is_grad_enabled()))
        t.start()
        t.join()
        assert not is_grad_enabled()
    assert seen == [True] and is_grad_enabled()
    assert not st.is_inference_mode_enabled()


def test_via_float32_calls_through_without_bfloat16():
    got = []

    @via_float32
    def f(*args, **kwargs):
        got.append(tuple(a.dtype for a in args if isinstance(a, st.ShardedTensor)))
        return args[0]

    x = st.tensor([1.0, 2.0], shards=2)
    assert f(x, x) is x and got[-1] == (st.float32, st.float32)
    b = st.tensor([1.0, 2.0], dtype=st.bfloat16)
    r = f(b, 3)
    assert got[-1] == (st.float32,) and r.dtype == st.bfloat16
    assert f(b, x).dtype == st.bfloat16 and got[-1] == (st.bfloat16, st.float32)


def test_take_storage_is_what_data_assignment_and_out_resize_do():
    x = st.zeros(2)
    y = st.tensor([[1, 2, 3]], dtype=st.int64, shards=2)
    x._take_storage(y)
    assert x.dtype == st.int64 and x.shape == (1, 3) and x.tolist() == [[1, 2, 3]]
    assert x._storage is y._storage and x._version == 0
    o = st.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        st.mul(st.tensor([1, 2, 3], shards=2), 2, out=o)
    assert o.dtype == st.float32 and o.tolist() == [2.0, 4.0, 6.0] and o._version == 1


def test_tensor_only_arguments_still_refused():
    t = st.tensor([1.0, 2.0])
    for v in (3, 2.5, True, 1j, np.float64(2.0), np.int32(1)):
        # torch: eq(): argument 'input' (position 1) must be Tensor, not int
        with pytest.raises(st.DTypeError, match="must be a tensor"):
            st.eq(v, t)
    assert st.eq(t, 2.0).tolist() == [False, True]
