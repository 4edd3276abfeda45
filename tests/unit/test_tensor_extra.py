"""st.gradient, st.split_with_sizes / x.split_with_sizes and st.fill against torch 2.13's
values and gradients (float64; tests/unit/data/nn_extra_torch.npz, written by
scripts/torch_refs_nn.py)."""

import numpy as np
import pytest

import sharded as st
from tests.support.nn_cases import cases, replay

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


@pytest.mark.parametrize("name", cases(("torch.gradient", "torch.split_with_sizes", "torch.fill")))
def test_values_and_gradients_match_torch(name):
    # the reference ran under torch's float64 default; an int input's gradient takes the
    # default dtype: float32 here as in torch by default
    replay(name, dtype=np.float32 if name == "gradient_int" else None)


@pytest.mark.parametrize("name", ["gradient_all", "gradient_spacings"])
def test_gradient_along_a_split_dim(name):
    # dim 0 split in 3: the differences cross the shard boundaries
    replay(name, {"x": (3, 0)})


@pytest.mark.parametrize("place", [dict(), dict(dim=0, shards=2)])
def test_gradient_spacing_none_is_unit_steps(place):
    # torch's signature default (spacing=None) passed explicitly: unit steps (torch 2.13)
    (g,) = st.gradient(st.tensor([1.0, 4.0, 9.0, 16.0], **place), spacing=None)
    assert g.tolist() == [3.0, 4.0, 6.0, 7.0]
    x = st.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], **place)
    g0, g1 = st.gradient(x, spacing=None, dim=None, edge_order=1)
    assert g0.tolist() == [[2.0, 3.0, 5.0]] * 2
    assert g1.tolist() == [[1.0, 1.5, 2.0], [2.0, 3.0, 4.0]]


def test_split_with_sizes_method_on_a_split_tensor_and_fill_keeps_the_input():
    x = st.arange(12.0, shards=3).reshape(6, 2)
    parts = x.split_with_sizes([4, 0, 2])
    assert [p.shape for p in parts] == [(4, 2), (0, 2), (2, 2)]
    assert parts[2].tolist() == [[8.0, 9.0], [10.0, 11.0]]
    y = st.fill(x, 7)
    assert y.dtype == x.dtype and y.tolist() == [[7.0] * 2] * 6
    assert x.sum().item() == 66.0
    assert st.fill(st.tensor([1, 2]), 2.7).tolist() == [2, 2]  # cast to the input's dtype
    assert not hasattr(st.ShardedTensor, "fill")  # torch has no Tensor.fill either


def test_bad_arguments_raise_typed_errors():
    x = st.zeros(4, 3)
    with pytest.raises(st.errors.ArgumentError, match=r"sum exactly to 4 .*\[2, 1\]"):
        st.split_with_sizes(x, [2, 1])
    with pytest.raises(st.errors.ArgumentError, match="non-negative entries"):
        x.split_with_sizes([5, -1])
    with pytest.raises(st.errors.ArgumentError, match="0-dimension"):
        st.fill(x, st.ones(2))
    with pytest.raises(st.errors.ShapeError, match="at least edge_order\\+1"):
        st.gradient(st.zeros(2, 5), edge_order=2)
    with pytest.raises(st.errors.ArgumentError, match="edge_order=1 and edge_order=2"):
        st.gradient(x, edge_order=3)
    with pytest.raises(st.errors.ArgumentError, match="list of length 3"):
        st.gradient(x, spacing=[1.0, 2.0, 3.0])
    with pytest.raises(st.errors.ArgumentError, match="length 2 and a dim argument of length 1"):
        st.gradient(x, spacing=[1.0, 2.0], dim=[0])
    with pytest.raises(st.errors.ShapeError, match="one dimension"):
        st.gradient(x, spacing=[st.zeros(4, 1)], dim=0)
    with pytest.raises(st.errors.DTypeError, match="uint8"):
        st.gradient(st.zeros(4, dtype=st.uint8))
    np.testing.assert_allclose(st.gradient(x, dim=-1)[0].numpy(), np.zeros((4, 3)))
