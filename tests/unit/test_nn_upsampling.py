"""F.interpolate (nearest, nearest-exact, linear, bilinear, trilinear, bicubic, area),
nn.Upsample, F.pixel_shuffle / pixel_unshuffle and their modules against torch 2.13's values
and gradients (float64; tests/unit/data/nn_extra_torch.npz, written by scripts/torch_refs_nn.py)."""

import numpy as np
import pytest

import sharded as st
from tests.support.nn_cases import REF, cases, replay

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional


@pytest.mark.parametrize("name", cases(("interpolate", "pixel_shuffle", "pixel_unshuffle")))
def test_values_and_gradients_match_torch(name):
    replay(name, rtol=1e-6 if REF[f"{name}/in/x"].dtype == np.float32 else 1e-10)


@pytest.mark.parametrize(
    "name,split",
    [
        ("bilinear_scale", (2, 0)),  # batch split
        ("nearest_size", (2, 2)),  # split along H: the selected rows cross the shards
        ("trilinear", (2, 0)),
        ("bicubic", (2, 3)),  # split along W: the four taps cross the shards
        ("pixel_shuffle", (2, 0)),
        ("pixel_unshuffle", (2, 0)),
    ],
)
def test_on_split_inputs(name, split):
    replay(name, {"x": split})


def test_modules_match_the_functions():
    x = st.from_numpy(REF["bilinear_scale/in/x"], shards=2)
    up = st.nn.Upsample(scale_factor=(2.5, 1.5), mode="bilinear")
    np.testing.assert_allclose(up(x).numpy(), REF["bilinear_scale/out0"], rtol=1e-12)
    assert repr(st.nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    ac = F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True)
    assert np.allclose(st.nn.UpsamplingBilinear2d(size=(5, 7))(x).numpy(), ac.numpy())
    near = st.nn.UpsamplingNearest2d(scale_factor=3)(x)
    assert np.array_equal(near.numpy(), F.interpolate(x, scale_factor=3).numpy())
    y = st.from_numpy(REF["pixel_shuffle/in/x"])
    assert np.array_equal(st.nn.PixelShuffle(2)(y).numpy(), REF["pixel_shuffle/out0"])
    assert np.array_equal(st.nn.PixelUnshuffle(2)(st.nn.PixelShuffle(2)(y)).numpy(), y.numpy())
    assert repr(st.nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    # an int input: nearest keeps the dtype
    assert F.interpolate(st.tensor([[[1, 2]]]), size=3).tolist() == [[[1, 1, 2]]]


def test_bad_arguments_raise_typed_errors():
    x = st.zeros(1, 2, 4, 4)
    with pytest.raises(st.errors.ArgumentError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(st.errors.ArgumentError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(st.errors.ShapeError, match=r"output size of \[2, 2, 2\]"):
        F.interpolate(x, size=(2, 2, 2))
    with pytest.raises(st.errors.ArgumentError, match="align_corners option can only be set"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(st.errors.ShapeError, match="Got 4D input, but linear mode needs 3D"):
        F.interpolate(x, size=2, mode="linear")
    with pytest.raises(st.errors.ShapeError, match="got 2D"):
        F.interpolate(st.zeros(2, 2), size=2)
    with pytest.raises(st.errors.ArgumentError, match="unknown mode 'cubic'"):
        F.interpolate(x, size=2, mode="cubic")
    with pytest.raises(st.errors.ShapeError, match="bicubic mode needs 4D input"):
        F.interpolate(st.zeros(1, 2, 4), size=2, mode="bicubic")
    with pytest.raises(st.errors.UnsupportedArgument, match="antialias"):
        F.interpolate(x, size=2, mode="bilinear", antialias=True)
    with pytest.raises(st.errors.ArgumentError, match="not meaningful with an explicit size"):
        F.interpolate(x, size=2, recompute_scale_factor=True)
    with pytest.raises(st.errors.ArgumentError, match=r"output size \[0, 0\]"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(st.errors.DTypeError, match="upsample_bilinear"):
        F.interpolate(st.zeros(1, 1, 2, 2, dtype=st.int64), size=3, mode="bilinear")
    with pytest.raises(st.errors.ShapeError, match=r"input.size\(-3\)=2 is not divisible by 4"):
        F.pixel_shuffle(x, 2)
    with pytest.raises(st.errors.ArgumentError, match="greater than 0, but got: 0"):
        F.pixel_shuffle(x, 0)
    with pytest.raises(st.errors.ShapeError, match="at least 3 dimensions"):
        F.pixel_unshuffle(st.zeros(4, 4), 2)
    with pytest.raises(
        st.errors.ShapeError, match=r"width .* input.size\(-1\)=4 is not divisible by 3"
    ):
        F.pixel_unshuffle(st.zeros(1, 3, 4), 3)
