"""``out=`` on the top-level functions and torch's tensor-only arguments (expected values,
warnings and errors are torch 2.13's answers to the same calls)."""

import inspect
import warnings

import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

SHARDS = [None, 2]


@pytest.mark.parametrize("shards", SHARDS)
def test_out_receives_the_result_and_is_returned(shards):
    a = st.tensor([1.0, 2.0, 3.0, 4.0], shards=shards)
    o = st.empty(4, shards=shards)
    r = st.add(a, a, out=o)
    assert r is o
    assert o.tolist() == [2.0, 4.0, 6.0, 8.0]
    # an int result into a float64 out is cast (torch: tensor([4., 6.], dtype=torch.float64))
    o = st.zeros(2, dtype=st.float64)
    st.add(st.tensor([1, 2]), st.tensor([3, 4]), out=o)
    assert o.dtype == st.float64 and o.tolist() == [4.0, 6.0]


@pytest.mark.parametrize("shards", SHARDS)
def test_out_of_a_narrower_dtype_is_refused(shards):
    a = st.tensor([1.0, 2.0, 3.0, 4.0], shards=shards)
    # torch: RuntimeError result type Float can't be cast to the desired output type Long
    with pytest.raises(st.DTypeError, match="can't be cast to the desired output type"):
        st.add(a, a, out=st.zeros(4, dtype=st.int64))
    assert issubclass(st.DTypeError, RuntimeError)
    # torch: amax and gather want out of the input's dtype exactly
    with pytest.raises(RuntimeError, match="float64"):
        st.amax(a, 0, out=st.zeros((), dtype=st.float64))
    # sum computes in out's dtype (torch: tensor(10))
    o = st.empty(0, dtype=st.int64)
    st.sum(st.tensor([1.0, 2.0, 3.0, 4.0], shards=shards), 0, out=o)
    assert o.tolist() == 10


@pytest.mark.parametrize("shards", SHARDS)
def test_out_of_another_shape_is_resized_with_a_warning(shards):
    a = st.tensor([1.0, 2.0, 3.0, 4.0], shards=shards)
    o = st.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        st.mul(a, 2, out=o)
    assert o.shape == (4,) and o.tolist() == [2.0, 4.0, 6.0, 8.0]
    # no warning for an out without elements (torch resizes those silently)
    o = st.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st.cat([a, a], out=o)
    assert o.tolist() == [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("shards", SHARDS)
def test_out_for_tuple_results_matmul_gather_clamp(shards):
    x = st.tensor([3.0, 1.0, 2.0], shards=shards)
    v, i = st.empty(0), st.empty(0, dtype=st.int64)
    r = st.sort(x, out=(v, i))
    assert r[0] is v and r[1] is i
    assert v.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2, 0]
    v, i = st.empty(0), st.empty(0, dtype=st.int64)
    st.topk(x, 2, out=(v, i))
    assert v.tolist() == [3.0, 2.0] and i.tolist() == [0, 2]
    # torch: Expected out tensor to have dtype float, but got double instead
    with pytest.raises(RuntimeError):
        st.sort(x, out=(st.empty(0, dtype=st.float64), i))
    o = st.empty(0)
    st.matmul(st.ones(2, 3, shards=shards), st.ones(3, 2), out=o)
    assert o.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    o = st.empty(0)
    st.gather(x, 0, st.tensor([0, 2]), out=o)
    assert o.tolist() == [3.0, 2.0]
    o = st.empty(3)
    st.clamp(x, 1.5, 2.5, out=o)
    assert o.tolist() == [2.5, 1.5, 2.0]
    st.where(x > 1.5, x, st.zeros(3), out=o)
    assert o.tolist() == [3.0, 0.0, 2.0]


@pytest.mark.parametrize("shards", SHARDS)
def test_out_sharing_memory_with_an_input(shards):
    a = st.tensor([1.0, 2.0, 3.0, 4.0], shards=shards)
    # torch: RuntimeError unsupported operation: some elements of the input tensor and the
    # written-to tensor refer to a single memory location
    with pytest.raises(RuntimeError, match="single memory location"):
        st.cat([a, a], out=a)
    with pytest.raises(st.ArgumentError, match="single memory location"):
        st.take(a, st.tensor([0, 1]), out=a[2:])
    # an elementwise op may write into its own input (torch: tensor([2., 3., 4., 5.]))
    st.add(a, 1, out=a)
    assert a.tolist() == [2.0, 3.0, 4.0, 5.0]


def test_out_with_an_input_that_requires_grad():
    a = st.tensor([1.0, 2.0], requires_grad=True)
    # torch: add(): functions with out=... arguments don't support automatic differentiation
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        st.add(a, 1, out=st.empty(2))
    with st.no_grad():
        assert st.add(a, 1, out=st.empty(2)).tolist() == [2.0, 3.0]


def test_out_must_be_a_tensor_and_appears_in_the_signature():
    with pytest.raises(TypeError, match="ShardedTensor"):
        st.neg(st.ones(2), out=[0.0, 0.0])
    assert "out" in inspect.signature(st.add).parameters
    assert "out" in inspect.signature(st.cat).parameters
    assert "out" not in inspect.signature(st.reshape).parameters  # torch has none either


@pytest.mark.parametrize("shards", SHARDS)
def test_numbers_where_torch_requires_a_tensor(shards):
    t = st.tensor([1.0, 2.0, 3.0], shards=shards)
    # torch: TypeError eq() received an invalid combination of arguments - got (int, Tensor)
    with pytest.raises(st.DTypeError, match="'input' .* not int"):
        st.eq(3, t)
    # torch: TypeError isclose(): argument 'other' (position 2) must be Tensor, not int
    with pytest.raises(TypeError, match="'other'"):
        st.isclose(t, 2)
    # torch: TypeError pow() ... got (int, int); pow(2, t) is fine
    with pytest.raises(st.DTypeError):
        st.pow(2, 3)
    assert st.pow(2, t).tolist() == [2.0, 4.0, 8.0]
    # torch.add(2, t) and the number in second place are accepted; so are methods, operators
    assert st.add(2, t).tolist() == [3.0, 4.0, 5.0]
    assert st.eq(t, 2).tolist() == [False, True, False]
    assert (3 == t).tolist() == [False, False, True]
    assert (3 + t).tolist() == [4.0, 5.0, 6.0]
    assert t.maximum(st.tensor(2.0)).tolist() == [2.0, 2.0, 3.0]
    assert st.max(st.ones(2, 2), 1).values.tolist() == [1.0, 1.0]  # an int dim stays fine


def test_reflected_operator_called_unbound_with_a_number_self():
    t = st.tensor([1.0, 2.0])
    # torch: TypeError descriptor '__radd__' for 'torch._C.TensorBase' objects doesn't apply
    # to a 'int' object; the operator itself takes the number (3 + t: [4., 5.])
    with pytest.raises(st.DTypeError, match="__radd__.*int"):
        st.Tensor.__radd__(3, t)
    with pytest.raises(TypeError):
        st.Tensor.__rand__(3, st.tensor([1, 2]))
    assert (3 + t).tolist() == [4.0, 5.0] and t.__rmul__(3).tolist() == [3.0, 6.0]


def test_special_functions_want_one_tensor():
    # torch: TypeError for special.zeta(2.0, 3.0) and special.xlog1py(2.0, 3.0); a tensor in
    # either place is fine
    for f in (st.special.zeta, st.special.xlog1py):
        with pytest.raises(st.DTypeError, match="must be a tensor"):
            f(2.0, 3.0)
    assert st.special.xlog1py(2.0, st.tensor([0.0])).tolist() == [0.0]
