"""nn.MultiheadAttention and the transformer layers against torch: each case of
tests/unit/data/transformer_torch.npz (written by scripts/torch_refs_attention.py) names a
module and a forward call as JSON; the torch module's state_dict loads into the sharded
one, whose output, attention weights and gradients (of the inputs and of a few
parameters) must match torch's in float64."""

import json
from pathlib import Path

import numpy as np
import pytest

import sharded as st
from sharded.nn import _attention

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

REF = np.load(Path(__file__).parent / "data" / "transformer_torch.npz")
CASES = sorted({k.split("/")[0] for k in REF.files} - {"inputs"})
TOL = dict(rtol=1e-9, atol=1e-11)


def build(spec):
    if isinstance(spec, dict) and "cls" in spec:
        return getattr(st.nn, spec["cls"])(
            *(build(a) for a in spec.get("args", [])),
            **{k: build(v) for k, v in spec.get("kwargs", {}).items()},
        )
    return spec


def _loaded(case):
    spec, fwd = json.loads(str(REF[f"{case}/spec"]))
    st.manual_seed(0)
    mod = build(spec).double().eval()
    prefix = f"{case}/state/"
    state = {k[len(prefix) :]: REF[k] for k in REF.files if k.startswith(prefix)}
    assert set(state) == set(mod.state_dict())  # torch's parameter names
    mod.load_state_dict({k: st.tensor(v) for k, v in state.items()})
    return mod, fwd


def _inputs(fwd, **placement):
    names = {a[1:] for a in fwd["args"]} | {
        v[1:] for v in fwd["kwargs"].values() if isinstance(v, str) and v[:1] == "@"
    }
    out = {}
    for n in names:
        a = REF[f"inputs/{n}"]
        grad = a.dtype != bool and f"@{n}" in fwd["args"]
        out[n] = st.tensor(a, requires_grad=grad, **(placement if grad else {}))
    return out


def _call(mod, fwd, ts):
    kw = {
        k: ts[v[1:]] if isinstance(v, str) and v[:1] == "@" else v for k, v in fwd["kwargs"].items()
    }
    return mod(*(ts[a[1:]] for a in fwd["args"]), **kw)


@pytest.mark.parametrize("case", CASES)
def test_matches_torch(case):
    mod, fwd = _loaded(case)
    ts = _inputs(fwd)
    res = _call(mod, fwd, ts)
    out, weights = res if isinstance(res, tuple) else (res, None)
    np.testing.assert_allclose(out.detach().numpy(), REF[f"{case}/out"], **TOL)
    if f"{case}/weights" in REF.files:
        np.testing.assert_allclose(weights.detach().numpy(), REF[f"{case}/weights"], **TOL)
    elif isinstance(res, tuple):
        assert weights is None
    (out * st.tensor(REF[f"{case}/g"])).sum().backward()
    params = dict(mod.named_parameters())
    grads = [k for k in REF.files if k.startswith(f"{case}/grad/")]
    assert grads
    for k in grads:
        name = k.split("/", 2)[2]
        np.testing.assert_allclose(params[name].grad.numpy(), REF[k], err_msg=name, **TOL)
    for k in (k for k in REF.files if k.startswith(f"{case}/dinput/")):
        np.testing.assert_allclose(ts[k.split("/", 2)[2]].grad.numpy(), REF[k], **TOL)


@pytest.mark.parametrize("case", ["mha_sdpa_causal", "enc_layer", "transformer"])
def test_batch_split_and_small_blocks(case, monkeypatch):
    """The batch (dim 0 of the batch_first inputs) split in 2, keys in blocks of 2."""
    monkeypatch.setattr(_attention, "BLOCK", 2)
    mod, fwd = _loaded(case)
    res = _call(mod, fwd, _inputs(fwd, shards=2))
    out = res[0] if isinstance(res, tuple) else res
    np.testing.assert_allclose(out.detach().numpy(), REF[f"{case}/out"], **TOL)


def test_parameter_names_and_shapes():
    mha = st.nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True)
    shapes = {k: tuple(v.shape) for k, v in mha.named_parameters()}
    assert shapes == {
        "q_proj_weight": (8, 8),
        "k_proj_weight": (8, 5),
        "v_proj_weight": (8, 3),
        "in_proj_bias": (24,),
        "bias_k": (1, 1, 8),
        "bias_v": (1, 1, 8),
        "out_proj.weight": (8, 8),
        "out_proj.bias": (8,),
    }
    assert mha.in_proj_weight is None
    layer = st.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, bias=False)
    assert sorted(layer.state_dict()) == [
        "linear1.weight",
        "linear2.weight",
        "norm1.weight",
        "norm2.weight",
        "self_attn.in_proj_weight",
        "self_attn.out_proj.weight",
    ]
    enc = st.nn.TransformerEncoder(layer, 2)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    with st.no_grad():
        a.add_(1.0)  # the layers are copies, not one layer twice
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


def test_bad_calls():
    with pytest.raises(
        st.errors.ArgumentError, match="embed_dim 6 must be divisible by num_heads 4"
    ):
        st.nn.MultiheadAttention(6, 4)
    mha = st.nn.MultiheadAttention(8, 2)
    x = st.ones(3, 2, 8)
    with pytest.raises(st.errors.ShapeError, match=r"2D attn_mask is \(3, 4\).*\(3, 3\)"):
        mha(x, x, x, attn_mask=st.zeros(3, 4))
    with pytest.raises(st.errors.ShapeError, match=r"key_padding_mask shape of \(2, 3\)"):
        mha(x, x, x, key_padding_mask=st.zeros(2, 4, dtype=st.bool))
    with pytest.raises(st.errors.ShapeError, match="expected `key` and `value` to be 3-D"):
        mha(x, st.ones(3, 8), x)
    with pytest.raises(st.errors.ArgumentError, match="Need attn_mask if specifying the is_causal"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(st.errors.ArgumentError, match="activation should be relu/gelu"):
        st.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    model = st.nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(st.errors.ShapeError, match="batch number of src and tgt must be equal"):
        model(st.ones(3, 2, 8), st.ones(3, 4, 8))
