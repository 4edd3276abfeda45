"""index_put / index_put_ against NumPy, with torch's answers (taken from a CPU torch) encoded
where they differ."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, assert_matches_numpy
from tests.unit.test_index_ops import SMALL

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


@pytest.mark.parametrize("place", SMALL, ids=PLACEMENT_IDS)
def test_index_put(place):
    a = np.arange(12.0).reshape(3, 4)
    x = st.from_numpy(a, **place)
    exp = a.copy()
    exp[[0, -1]] = [1.0, 2.0, 3.0, 4.0]
    assert_matches_numpy(
        x.index_put((st.tensor([0, -1]),), st.tensor([1.0, 2, 3, 4], dtype=st.float64)), exp
    )
    got = x.index_put(
        (st.tensor([[0], [2]]), st.tensor([1, 3])),
        st.tensor(9.0, dtype=st.float64),
        accumulate=True,
    )
    assert got.tolist() == [[0.0, 10.0, 2.0, 12.0], [4.0, 5.0, 6.0, 7.0], [8.0, 18.0, 10.0, 20.0]]
    rows = np.array([0, 0, 2, 1, 0])
    cols = np.array([1, 1, 3, 0, 1])
    exp = a.copy()
    np.add.at(exp, (rows, cols), 1.0)
    y = x.clone()
    y.index_put_(
        (st.from_numpy(rows, shards=2), st.from_numpy(cols, shards=3)),
        st.tensor(1.0, dtype=st.float64),
        accumulate=True,
    )
    assert_matches_numpy(y, exp)
    y = x.clone()
    y.index_put_((st.tensor([True, False, True]),), st.tensor(0.0))  # a mask: indexing path
    assert y.tolist()[1] == [4.0, 5.0, 6.0, 7.0] and y.sum().item() == 22.0
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x.index_put_((st.tensor([3]),), st.tensor(1.0, dtype=st.float64))
    assert_matches_numpy(x, a)


@pytest.mark.parametrize("place", SMALL, ids=PLACEMENT_IDS)
def test_index_put_accumulate_with_a_bool_mask_like_torch(place):
    # torch reads a mask as its nonzero positions when accumulating
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x = st.from_numpy(a, **place)
    one = st.tensor(1.0, dtype=st.float64)
    got = x.index_put((st.tensor([True, False, True]),), one, accumulate=True)
    assert got.tolist() == [[2.0, 3.0], [3.0, 4.0], [6.0, 7.0]]
    m2 = st.tensor([[True, False], [False, False], [True, True]])
    assert x.index_put((m2,), one, accumulate=True).tolist() == [[2, 2], [3, 4], [6, 7]]
    y = x.clone()
    y.index_put_((st.tensor([0, 0]), st.tensor([True, True])), one, accumulate=True)
    assert y.tolist() == [[2.0, 3.0], [3.0, 4.0], [5.0, 6.0]]
    v = st.tensor([[1.0, 2.0]], dtype=st.float64)
    got = x.index_put((st.tensor([True, False, True]),), v, accumulate=True)
    assert got.tolist() == [[2.0, 4.0], [3.0, 4.0], [6.0, 8.0]]
    none = st.tensor([False, False, False])
    assert x.index_put((none,), one, accumulate=True).tolist() == a.tolist()
    with pytest.raises(st.IndexOutOfRange, match=r"shape of the mask \[2\] at index 0 does not"):
        x.index_put_((st.tensor([True, False]),), one, accumulate=True)
    assert x.tolist() == a.tolist()


@pytest.mark.parametrize("place", SMALL, ids=PLACEMENT_IDS)
def test_index_put_wants_a_tensor_of_values_like_torch(place):
    # torch: "index_put_(): argument 'values' (position 2) must be Tensor, not float"
    a = np.arange(6.0).reshape(3, 2)
    x = st.from_numpy(a, **place)
    i = st.tensor([1])
    with pytest.raises(
        TypeError, match=r"index_put_\(\): argument 'values' must be Tensor, not fl"
    ):
        x.index_put_((i,), 1.0)
    with pytest.raises(st.DTypeError, match=r"index_put\(\): .* not int \(got 7\)"):
        x.index_put((i,), 7, accumulate=True)
    with pytest.raises(st.DTypeError, match="must be Tensor, not list"):
        st.index_put(x, (i,), [1.0, 2.0])
    with pytest.raises(st.DTypeError, match="must be Tensor, not float"):
        x.index_put_((st.tensor([True, False, False]),), 0.0)  # a mask as well, as torch
    assert x.tolist() == a.tolist()  # operands intact, the session usable
    x[i] = 1.0  # setitem keeps taking scalars
    x[st.tensor([True, False, True])] = 2
    assert x.tolist() == [[2.0, 2.0], [1.0, 1.0], [2.0, 2.0]]


@pytest.mark.parametrize("place", [dict(shards=1), dict(shards=3)])
def test_index_put_dtype_rules_with_a_mask_like_torch(place):
    # torch: a mask without accumulate casts the values (as x[mask] = v); with accumulate, or
    # with integer indices, the dtypes must match
    x = st.zeros(3, **place)
    mask, long1 = st.tensor([True, False, True]), st.tensor(1)
    assert x.index_put((mask,), long1).tolist() == [1.0, 0.0, 1.0]
    match = "got float32 for the destination and int64 for the source"
    with pytest.raises(st.DTypeError, match=match):
        x.index_put_((mask,), long1, accumulate=True)
    with pytest.raises(st.DTypeError, match=match):
        x.index_put_((st.tensor([0, 2]),), long1)
    assert x.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("shards", [1, 2])
def test_values_get_a_gradient_through_a_mask_like_torch(shards):
    # torch: x.index_put((mask,), v) (accumulate=False) gives v.grad the sum of the grads
    # of the rows it wrote
    x = st.zeros(4, 3, shards=shards).requires_grad_()
    v = st.tensor([1.0, 2.0, 3.0]).requires_grad_()
    m = st.tensor([True, False, True, False])
    w = np.arange(12.0).reshape(4, 3)
    y = x.index_put((m,), v)
    (y * st.from_numpy(w, shards=2)).sum().backward()
    assert v.grad.tolist() == [6.0, 8.0, 10.0]
    assert x.grad.tolist() == np.where([[0], [1], [0], [1]], w, 0.0).tolist()


def test_empty_index_put_gives_values_zeros_like_torch():
    x = st.zeros(3, shards=2).requires_grad_()
    v = st.zeros(0).requires_grad_()
    x.index_put((st.zeros(0, dtype=st.int64),), v, accumulate=True).sum().backward()
    assert v.grad is not None and tuple(v.grad.shape) == (0,)
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
