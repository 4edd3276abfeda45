"""F.rms_norm, F.group_norm, F.instance_norm and their modules (RMSNorm, GroupNorm,
InstanceNorm1d/2d) against torch's values (tests/unit/data/norms_torch.npz, written by
scripts/torch_refs_attention.py): outputs, gradients and updated running statistics."""

from pathlib import Path

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
REF = np.load(Path(__file__).parent / "data" / "norms_torch.npz")
TOL = dict(rtol=1e-9, atol=1e-12)
CALLS = {
    "rms": lambda x, t: F.rms_norm(x, (4, 5), t["weight"]),
    "rms_eps": lambda x, t: F.rms_norm(x, (5,), eps=1e-3),
    "group": lambda x, t: F.group_norm(x, 3, t["weight"], t["bias"]),
    "group_1": lambda x, t: F.group_norm(x, 1, eps=1e-3),
    "instance": lambda x, t: F.instance_norm(
        x, t["running_mean"], t["running_var"], t["weight"], t["bias"], momentum=0.2
    ),
    "instance_eval": lambda x, t: F.instance_norm(
        x, t["running_mean"], t["running_var"], use_input_stats=False
    ),
}


def _check(case, fn, own=True, **placement):
    """``own``: ``fn`` uses the weights made here (else a module's, checked by the caller)."""
    x = st.tensor(REF[f"{case}/x"], requires_grad=True, **placement)
    ts = {}
    for k in ("weight", "bias", "running_mean", "running_var"):
        if f"{case}/{k}" in REF.files and own:
            ts[k] = st.tensor(REF[f"{case}/{k}"], requires_grad=not k.startswith("running"))
    y = fn(x, ts)
    np.testing.assert_allclose(y.detach().numpy(), REF[f"{case}/out"], **TOL)
    y.backward(st.tensor(REF[f"{case}/g"]))
    np.testing.assert_allclose(x.grad.numpy(), REF[f"{case}/dx"], **TOL)
    for k, t in ts.items():
        want = REF[f"{case}/{k}_after" if k.startswith("running") else f"{case}/d{k}"]
        np.testing.assert_allclose((t if k.startswith("running") else t.grad).numpy(), want, **TOL)


@pytest.mark.parametrize("case", sorted(CALLS))
@pytest.mark.parametrize("placement", [{}, {"shards": 2}], ids=["one", "batch_split"])
def test_functional_matches_torch(case, placement):
    _check(case, CALLS[case], **placement)


def _load(module, case):
    state = {k: st.tensor(REF[f"{case}/{k}"]) for k in ("weight", "bias") if f"{case}/{k}" in REF}
    module.double().load_state_dict(state, strict=False)
    return module


MODULES = {
    "rms": lambda: st.nn.RMSNorm((4, 5)),
    "group": lambda: st.nn.GroupNorm(3, 6),
    "group_1": lambda: st.nn.GroupNorm(1, 6, eps=1e-3, affine=False),
}


@pytest.mark.parametrize("case", sorted(MODULES))
def test_modules_match_torch(case):
    mod = _load(MODULES[case](), case)
    params = dict(mod.named_parameters())
    _check(case, lambda x, t: mod(x), own=False)
    for k, p in params.items():
        np.testing.assert_allclose(p.grad.numpy(), REF[f"{case}/d{k}"], **TOL)


def test_instance_norm_modules():
    norm = _load(
        st.nn.InstanceNorm1d(3, momentum=0.2, affine=True, track_running_stats=True), "instance"
    )
    with st.no_grad():
        norm.running_mean.copy_(st.tensor(REF["instance/running_mean"]))
        norm.running_var.copy_(st.tensor(REF["instance/running_var"]))
    x = st.tensor(REF["instance/x"], requires_grad=True)
    y = norm(x)
    np.testing.assert_allclose(y.detach().numpy(), REF["instance/out"], **TOL)
    np.testing.assert_allclose(norm.running_var.numpy(), REF["instance/running_var_after"], **TOL)
    y.backward(st.tensor(REF["instance/g"]))
    np.testing.assert_allclose(norm.weight.grad.numpy(), REF["instance/dweight"], **TOL)
    # unbatched (C, L): the batched result of its one sample
    one = norm(st.tensor(REF["instance/x"][0])).detach().numpy()
    np.testing.assert_allclose(one, REF["instance/out"][0], **TOL)
    # eval with running statistics, 2-D
    norm2 = st.nn.InstanceNorm2d(3, track_running_stats=True).double().eval()
    with st.no_grad():
        norm2.running_mean.copy_(st.tensor(REF["instance_eval/running_mean"]))
        norm2.running_var.copy_(st.tensor(REF["instance_eval/running_var"]))
    out = norm2(st.tensor(REF["instance_eval/x"]))
    np.testing.assert_allclose(out.numpy(), REF["instance_eval/out"], **TOL)
    assert "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False" in repr(norm2)


def test_bad_calls():
    with pytest.raises(st.errors.ShapeError, match=r"normalized_shape=\[4\].*size \[2, 4, 3\]"):
        F.rms_norm(st.ones(2, 4, 3), (4,))
    with pytest.raises(st.errors.ShapeError, match=r"shape \[2, 4, 3\] and num_groups=3"):
        F.group_norm(st.ones(2, 4, 3), 3)
    with pytest.raises(st.errors.ArgumentError, match=r"num_channels \(4\) must be divisible"):
        st.nn.GroupNorm(3, 4)
    with pytest.raises(st.errors.ArgumentError, match="more than 1 spatial element"):
        F.instance_norm(st.ones(2, 3, 1))
    with pytest.raises(st.errors.ArgumentError, match=r"dim=1 to match num_features \(3\).*4"):
        st.nn.InstanceNorm1d(3, affine=True)(st.ones(2, 4, 5))
    with pytest.raises(st.errors.ArgumentError, match=r"expected 2D or 3D input \(got 1D"):
        st.nn.InstanceNorm1d(3)(st.ones(5))
