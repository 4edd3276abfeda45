"""F.conv_transpose1d/2d, F.unfold/fold, F.embedding_bag and F.bilinear and their modules
(ConvTranspose1d/2d, Unfold, Fold, EmbeddingBag, Bilinear) against torch 2.13's values and
gradients (float64; tests/unit/data/nn_extra_torch.npz, written by scripts/torch_refs_nn.py)."""

import numpy as np
import pytest

import sharded as st
from tests.support.nn_cases import REF, cases, replay

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
FUNCS = ("conv_transpose1d", "conv_transpose2d", "unfold", "fold", "embedding_bag", "bilinear")


@pytest.mark.parametrize("name", cases(FUNCS))
def test_values_and_gradients_match_torch(name):
    replay(name)


@pytest.mark.parametrize(
    "name,split",
    [
        ("ct2d_strided", {"x": (2, 0)}),  # batch split
        ("ct2d", {"x": (2, 2)}),  # split along H
        ("ct1d", {"x": (2, 0)}),
        ("unfold_all", {"x": (2, 0)}),
        ("fold_all", {"x": (2, 0)}),
        ("bilinear", {"a": (2, 0), "b": (2, 0)}),
        ("bag_sum_2d", {"i": (2, 0)}),
        ("bag_sum_weights", {"i": (2, 0), "p": (2, 0)}),
        ("bag_max_offsets", {"i": (3, 0), "o": (2, 0)}),
        ("bag_last_offset_pad", {"i": (2, 0)}),
        ("ct1d_groups", {"x": (2, 0)}),
        ("fold", {"x": (2, 0)}),
        ("unfold", {"x": (2, 2)}),  # split along H
    ],
)
def test_on_split_inputs(name, split):
    replay(name, split)


def _ref(key):
    return st.from_numpy(REF[key])


def _set(param, key):
    with st.no_grad():
        param.copy_(_ref(key))


def test_modules_match_torch():
    ct = st.nn.ConvTranspose2d(4, 3, (3, 2))
    assert ct.weight.shape == (4, 3, 3, 2) and ct.bias.shape == (3,)
    assert float(ct.weight.abs().max().item()) <= 1 / np.sqrt(3 * 3 * 2)  # fan_in: out * k
    ct = ct.double()
    _set(ct.weight, "ct2d/in/w")
    _set(ct.bias, "ct2d/in/b")
    np.testing.assert_allclose(ct(_ref("ct2d/in/x")).detach().numpy(), REF["ct2d/out0"], 1e-10)

    up = st.nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, dtype=st.float64)
    _set(up.weight, "ct1d/in/w")
    _set(up.bias, "ct1d/in/b")
    # output_size picks the output padding: 12 is the ct1d case's (output_padding=1)
    out = up(_ref("ct1d/in/x"), output_size=[12])
    np.testing.assert_allclose(out.detach().numpy(), REF["ct1d/out0"], 1e-10)
    assert up(_ref("ct1d/in/x")).shape == (2, 4, 11)
    with pytest.raises(st.errors.ArgumentError, match=r"valid sizes range from \[11\] to \[12\]"):
        up(_ref("ct1d/in/x"), output_size=[13])

    bil = st.nn.Bilinear(3, 4, 2, dtype=st.float64)
    _set(bil.weight, "bilinear/in/w")
    _set(bil.bias, "bilinear/in/c")
    got = bil(_ref("bilinear/in/a"), _ref("bilinear/in/b"))
    np.testing.assert_allclose(got.detach().numpy(), REF["bilinear/out0"], 1e-10)
    assert repr(st.nn.Bilinear(3, 4, 2, bias=False)).endswith("bias=False)")

    bag = st.nn.EmbeddingBag.from_pretrained(_ref("bag_max_offsets/in/w"), mode="max")
    assert not bag.weight.requires_grad
    got = bag(_ref("bag_max_offsets/in/i"), _ref("bag_max_offsets/in/o"))
    np.testing.assert_allclose(got.numpy(), REF["bag_max_offsets/out0"], 1e-12)
    fresh = st.nn.EmbeddingBag(10, 3, padding_idx=-1)
    assert fresh.weight[9].tolist() == [0.0, 0.0, 0.0] and fresh.padding_idx == 9

    fold = st.nn.Fold((7, 6), 3, dilation=(2, 1), padding=1, stride=2)
    np.testing.assert_allclose(fold(_ref("fold_all/in/x")).numpy(), REF["fold_all/out0"], 1e-12)
    unfold = st.nn.Unfold(3, dilation=(1, 2), padding=1, stride=(2, 1))
    got = unfold(_ref("unfold_all/in/x"))
    np.testing.assert_allclose(got.numpy(), REF["unfold_all/out0"], 1e-12)
    assert "kernel_size=3" in repr(unfold)


def test_fold_is_the_adjoint_of_unfold():
    # <unfold(x), y> == <x, fold(y)> for any x, y
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3 * 4, 12))
    kw = {"kernel_size": 2, "dilation": (2, 1), "padding": (1, 0), "stride": (2, 1)}
    u = F.unfold(st.from_numpy(x, shards=2), **kw).numpy()
    f = F.fold(st.from_numpy(y), (6, 5), **kw).numpy()
    assert np.isclose((u * y).sum(), (x * f).sum(), rtol=1e-12)


def test_bad_arguments_raise_typed_errors():
    x, w = st.zeros(1, 4, 3, 3), st.zeros(4, 2, 2, 2)
    with pytest.raises(st.errors.ShapeError, match="to have 4 channels, but got 3"):
        F.conv_transpose2d(st.zeros(1, 3, 3, 3), w)
    with pytest.raises(st.errors.ArgumentError, match="output padding must be smaller"):
        F.conv_transpose2d(x, w, output_padding=1)
    with pytest.raises(st.errors.ShapeError, match="Expected 3D .* or 4D"):
        F.conv_transpose2d(st.zeros(4, 3), w)
    with pytest.raises(st.errors.ShapeError, match="bias to be 1-dimensional with 4"):
        F.conv_transpose2d(x, w, st.zeros(3), groups=2)
    with pytest.raises(st.errors.DTypeError, match="same dtype"):
        F.conv_transpose1d(st.zeros(1, 4, 3), st.zeros(4, 2, 2, dtype=st.float64))
    with pytest.raises(st.errors.ArgumentError, match='Only "zeros" padding mode'):
        st.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(
        st.errors.ShapeError, match="sliding blocks 3 \\* 3 = 9, but got input.size\\(2\\)=8"
    ):
        F.fold(st.zeros(1, 4, 8), (4, 4), 2)
    with pytest.raises(st.errors.ShapeError, match="divisible by the product of kernel_size"):
        F.fold(st.zeros(1, 5, 9), (4, 4), 2)
    with pytest.raises(st.errors.ShapeError, match="Only 3D or 4D"):
        F.unfold(st.zeros(3, 3), 2)
    with pytest.raises(st.errors.ShapeError, match="must be at least one"):
        F.unfold(x, 5)
    with pytest.raises(st.errors.ArgumentError, match="greater than zero"):
        F.unfold(x, 2, stride=0)
    wt = st.zeros(10, 3)
    with pytest.raises(st.errors.ArgumentError, match="offsets has to be None"):
        F.embedding_bag(st.tensor([[1, 2]]), wt, st.tensor([0]))
    with pytest.raises(st.errors.ArgumentError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(st.tensor([1, 2]), wt)
    with pytest.raises(st.errors.ArgumentError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(st.tensor([1, 2]), wt, st.tensor([1]))
    with pytest.raises(st.errors.ArgumentError, match="non-decreasing"):
        F.embedding_bag(st.tensor([1, 2]), wt, st.tensor([0, 2, 1]))
    with pytest.raises(st.errors.ArgumentError, match="mode has to be one of"):
        F.embedding_bag(st.tensor([[1, 2]]), wt, mode="min")
    with pytest.raises(st.errors.UnsupportedArgument, match="only supported for mode='sum'"):
        F.embedding_bag(st.tensor([[1, 2]]), wt, per_sample_weights=st.ones(1, 2))
    with pytest.raises(st.errors.ShapeError, match="same shape as the input"):
        F.embedding_bag(st.tensor([[1, 2]]), wt, mode="sum", per_sample_weights=st.ones(2))
    with pytest.raises(st.errors.IndexDTypeError, match="Long, Int"):
        F.embedding_bag(st.tensor([[1.0, 2.0]]), wt)
    with pytest.raises(st.errors.ArgumentError, match="max mode does not support scaling"):
        st.nn.EmbeddingBag(10, 3, scale_grad_by_freq=True, mode="max")
    a, b = st.zeros(2, 3), st.zeros(2, 4)
    with pytest.raises(st.errors.ShapeError, match="input1 size does not match weight size"):
        F.bilinear(a, b, st.zeros(5, 2, 4))
    with pytest.raises(st.errors.ShapeError, match="input batch dimensions do not match"):
        F.bilinear(a, st.zeros(3, 4), st.zeros(5, 3, 4))
    with pytest.raises(st.errors.ShapeError, match="bias size does not match"):
        F.bilinear(a, b, st.zeros(5, 3, 4), st.zeros(4))


def test_empty_bags_and_2d_bags_of_nothing_are_zeros():
    w = st.arange(6.0).reshape(3, 2)
    out = F.embedding_bag(st.tensor([2, 1]), w, st.tensor([0, 0, 2]), mode="mean")
    assert out.tolist() == [[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]]
    assert F.embedding_bag(st.zeros(2, 0, dtype=st.int64), w).tolist() == [[0.0, 0.0]] * 2
