"""3-D convolutions and pooling (F.conv3d, conv_transpose3d, max/avg/adaptive pool3d, their
layers and top-level names) against torch 2.13's values and gradients (float64;
tests/unit/data/conv3d_torch.npz, written by scripts/torch_refs_conv3d.py), on whole and
split inputs, and their argument errors."""

import json

import numpy as np
import pytest

import sharded as st
from tests.support.nn_cases import cases, load, replay

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
REF, SPECS = load("conv3d_torch.npz")
FUNCS = [s["fn"] for s in SPECS.values() if "fn" in s]
BATCHED = [n for n in cases(FUNCS, SPECS) if REF[f"{n}/in/x"].ndim == 5]
MODULES = sorted(k.split("/")[1] for k in REF.files if k.startswith("mod/") and k.endswith("/spec"))


@pytest.mark.parametrize("name", cases(FUNCS, SPECS))
def test_values_and_gradients_match_torch(name):
    replay(name, ref=REF)


@pytest.mark.parametrize("name", BATCHED)
def test_batch_split_inputs(name):
    replay(name, {"x": (2, 0)}, ref=REF)


@pytest.mark.parametrize(
    "name,dim",
    [
        ("conv3d_strided", 2),  # halos along D, with a stride and padding
        ("conv3d_same", 3),
        ("ct3d_strided", 4),
        ("mp3d_all", 2),  # ceil_mode's overhang and dilation across the cut
        ("mp3d_all", 4),
        ("ap3d_all", 3),
        ("aap3d", 2),  # adaptive pools: resharded along the batch first
        ("amp3d", 4),
    ],
)
def test_spatially_split_inputs(name, dim):
    replay(name, {"x": (2, dim)}, ref=REF)


def _tuples(v):
    """JSON's lists back to the tuples torch was given (its reprs show them)."""
    if isinstance(v, dict):
        return {k: _tuples(i) for k, i in v.items()}
    return tuple(v) if isinstance(v, list) else v


@pytest.mark.parametrize("name", MODULES)
def test_modules_load_torch_state_and_match(name):
    p = f"mod/{name}"
    spec = json.loads(str(REF[f"{p}/spec"]))
    m = getattr(st.nn, spec["cls"])(**_tuples(spec["kwargs"])).double()
    assert repr(m) == spec["repr"]
    state = {k[len(f"{p}/state/") :]: st.from_numpy(REF[k]) for k in REF.files
             if k.startswith(f"{p}/state/")}  # fmt: skip
    assert sorted(state) == sorted(m.state_dict())  # torch's parameter names
    m.load_state_dict(state)
    x = st.from_numpy(REF[f"{p}/x"], shards=2).requires_grad_()
    y = m(x, **_tuples(spec["forward"]))
    np.testing.assert_allclose(y.detach().numpy(), REF[f"{p}/y"], rtol=1e-10, atol=1e-12)
    (y * st.from_numpy(REF[f"{p}/g"])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), REF[f"{p}/dx"], rtol=1e-10, atol=1e-12)
    params = dict(m.named_parameters())
    assert sorted(params) == sorted(spec["params"])
    for k, v in params.items():
        np.testing.assert_allclose(v.grad.numpy(), REF[f"{p}/d/{k}"], rtol=1e-10, atol=1e-12)


def test_layers_default_init_and_shapes():
    conv = st.nn.Conv3d(4, 6, (3, 2, 1), groups=2)
    assert conv.weight.shape == (6, 2, 3, 2, 1) and conv.bias.shape == (6,)
    assert float(conv.weight.abs().max().item()) <= 1 / np.sqrt(2 * 3 * 2)  # fan_in
    up = st.nn.ConvTranspose3d(4, 2, 3, stride=2)
    assert up.weight.shape == (4, 2, 3, 3, 3)
    assert up(st.ones(4, 2, 2, 2)).shape == (2, 5, 5, 5)  # unbatched
    assert up(st.ones(1, 4, 2, 2, 2), output_size=(6, 5, 6)).shape == (1, 2, 6, 5, 6)
    out, idx = st.nn.MaxPool3d(2, return_indices=True)(st.ones(1, 1, 2, 2, 2))
    assert out.tolist() == [[[[[1.0]]]]] and idx.dtype == st.int64
    assert st.nn.AdaptiveMaxPool3d(1, return_indices=True)(st.ones(2, 2, 2, 2))[1].shape == (
        2, 1, 1, 1,
    )  # fmt: skip


def test_top_level_names_mirror_torch():
    # torch has conv3d, conv_transpose3d and max_pool3d at the top level, not avg_pool3d
    x = st.arange(8.0).reshape(1, 1, 2, 2, 2)
    assert st.conv3d(x, st.ones(1, 1, 2, 2, 2)).tolist() == [[[[[28.0]]]]]
    assert st.max_pool3d(x, 2).tolist() == [[[[[7.0]]]]]
    assert st.conv_transpose3d(x, st.ones(1, 1, 1, 1, 1), stride=2).shape == (1, 1, 3, 3, 3)
    assert st.conv_transpose1d is F.conv_transpose1d and st.conv_transpose2d is F.conv_transpose2d
    assert not hasattr(st, "avg_pool3d") and not hasattr(st, "adaptive_avg_pool3d")


def test_errors():
    x, w = st.ones(2, 4, 3, 3, 3), st.ones(6, 2, 2, 2, 2)
    with pytest.raises(st.ShapeError, match=r"Expected 4D \(unbatched\) or 5D \(batched\) input"):
        F.conv3d(st.ones(4, 3, 3), w)
    with pytest.raises(st.ShapeError, match="expected weight to be 5-dimensional"):
        F.conv3d(x, st.ones(6, 2, 2, 2))
    with pytest.raises(st.ShapeError, match="expected weight to be divisible by 4 at dimension 0"):
        F.conv3d(x, st.ones(6, 1, 2, 2, 2), groups=4)
    with pytest.raises(st.ShapeError, match="to have 6 channels, but got 4 channels"):
        F.conv3d(x, w, groups=3)
    with pytest.raises(st.ArgumentError, match="non-positive groups"):
        F.conv3d(x, w, groups=0)
    with pytest.raises(st.ArgumentError, match="not supported for strided convolutions"):
        F.conv3d(x, w, stride=2, padding="same", groups=2)
    with pytest.raises(st.ArgumentError, match="a list of 3 values"):
        F.conv3d(x, w, stride=(1, 1), groups=2)
    with pytest.raises(st.ShapeError, match=r"Kernel size: \(2 x 4 x 2\)"):
        F.conv3d(x, w, dilation=(1, 3, 1), groups=2)
    with pytest.raises(st.DTypeError, match="same dtype"):
        F.conv3d(x.double(), w, groups=2)
    with pytest.raises(st.ShapeError, match="expected input .* to have 6 channels"):
        F.conv_transpose3d(x, st.ones(6, 1, 2, 2, 2), groups=2)
    with pytest.raises(st.ShapeError, match="expected weight to be divisible by 3"):
        F.conv_transpose3d(x, st.ones(4, 1, 2, 2, 2), groups=3)
    with pytest.raises(st.ArgumentError, match="in_channels must be divisible by groups"):
        st.nn.Conv3d(3, 4, 2, groups=2)
    with pytest.raises(st.ShapeError, match="non-empty 4D or 5D"):
        F.max_pool3d(st.ones(2, 3, 3), 2)
    with pytest.raises(st.ArgumentError, match="tuple of 3 ints"):
        F.avg_pool3d(x, (2, 2))
    with pytest.raises(st.ShapeError, match=r"Given input size: \(4x3x3x3\). Calculated output "
                       r"size: \(4x0x0x0\)"):  # fmt: skip
        F.max_pool3d(x, 5, padding=0)
    with pytest.raises(st.ArgumentError, match="pad should be at most half"):
        F.max_pool3d(x, 2, padding=2)
    with pytest.raises(st.ArgumentError, match="divisor must be not zero"):
        F.avg_pool3d(x, 2, divisor_override=0)
    with pytest.raises(st.ArgumentError, match="output_size must be 3 ints"):
        F.adaptive_max_pool3d(x, (2, 2))
    with pytest.raises(st.UnsupportedDType, match="adaptive_avg_pool3d"):
        F.adaptive_avg_pool3d(st.ones(2, 2, 2, 2, dtype=st.int64), 1)
