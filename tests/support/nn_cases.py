"""Replays the torch calls that scripts/torch_refs_nn.py recorded
(tests/unit/data/nn_extra_torch.npz; scripts/torch_refs_conv3d.py records more in
conv3d_torch.npz, the same way) with sharded, and checks the outputs and gradients."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import sharded as st

DATA = Path(__file__).parent.parent / "unit" / "data"


def load(file):
    """A reference file of ``tests/unit/data`` and its cases' specs by name."""
    ref = np.load(DATA / file)
    specs = {k[: -len("/spec")]: json.loads(str(ref[k])) for k in ref.files if k.endswith("/spec")}
    return ref, specs


REF, SPECS = load("nn_extra_torch.npz")


def cases(fn_names, specs=None):
    """The recorded case names calling any of ``fn_names`` (in ``specs``, default
    nn_extra_torch.npz's)."""
    specs = SPECS if specs is None else specs
    return sorted(n for n, s in specs.items() if s.get("fn") in fn_names)


def replay(name, split=None, rtol=1e-10, atol=1e-12, dtype=None, ref=None):
    """Run case ``name`` with sharded, inputs split as ``split`` ({input: (shards, dim)})
    says, and compare its outputs (dtype: torch's, or ``dtype``) and input gradients with
    torch's (the references: ``ref``, default nn_extra_torch.npz)."""
    data = REF if ref is None else ref
    spec = json.loads(str(data[f"{name}/spec"]))
    split = split or {}
    ts = {}
    for key in data.files:
        if key.startswith(f"{name}/in/"):
            k = key.rsplit("/", 1)[1]
            a = data[key]
            shards, dim = split.get(k, (1, 0))
            t = st.from_numpy(a, shards=shards, dim=dim) if shards > 1 else st.from_numpy(a)
            ts[k] = t.requires_grad_() if k in spec["grad"] else t

    def val(v):
        if isinstance(v, str) and v.startswith("@"):
            if "prep" in spec and v == "@x":  # the call gets log_softmax(x, -1) (say)
                return getattr(st.nn.functional, spec["prep"])(ts["x"], -1)
            return ts[v[1:]]
        if isinstance(v, list):
            return [val(i) for i in v]
        return v

    fn = (
        getattr(st, spec["fn"][6:])
        if spec["fn"].startswith("torch.")
        else getattr(st.nn.functional, spec["fn"])
    )
    res = fn(*(val(a) for a in spec["args"]), **{k: val(v) for k, v in spec["kwargs"].items()})
    outs = list(res) if isinstance(res, (tuple, list)) else [res]
    assert len(outs) == spec["nout"]
    total = None
    for i, o in enumerate(outs):
        want = data[f"{name}/out{i}"]
        assert tuple(o.shape) == want.shape, (name, i, tuple(o.shape), want.shape)
        assert o.dtype.np == (want.dtype if dtype is None else dtype), (name, i, o.dtype)
        np.testing.assert_allclose(o.detach().numpy(), want, rtol=rtol, atol=atol)
        if o.requires_grad:
            part = (o * st.from_numpy(data[f"{name}/g{i}"])).sum()
            total = part if total is None else total + part
    if spec["grad"]:
        total.backward()
        for k in spec["grad"]:
            np.testing.assert_allclose(
                ts[k].grad.numpy(), data[f"{name}/d/{k}"], rtol=rtol, atol=atol, err_msg=k
            )
    return outs
