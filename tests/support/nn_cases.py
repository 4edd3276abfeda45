"""Replays the torch calls that scripts/torch_refs_nn.py recorded
(tests/unit/data/nn_extra_torch.npz) with sharded, and checks the outputs and gradients."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import sharded as st

REF = np.load(Path(__file__).parent.parent / "unit" / "data" / "nn_extra_torch.npz")
SPECS = {k[: -len("/spec")]: json.loads(str(REF[k])) for k in REF.files if k.endswith("/spec")}


def cases(fn_names):
    """The recorded case names calling any of ``fn_names``."""
    return sorted(n for n, s in SPECS.items() if s["fn"] in fn_names)


def replay(name, split=None, rtol=1e-10, atol=1e-12, dtype=None):
    """Run case ``name`` with sharded, inputs split as ``split`` ({input: (shards, dim)})
    says, and compare its outputs (dtype: torch's, or ``dtype``) and input gradients with
    torch's."""
    spec = SPECS[name]
    split = split or {}
    ts = {}
    for key in REF.files:
        if key.startswith(f"{name}/in/"):
            k = key.rsplit("/", 1)[1]
            a = REF[key]
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
        want = REF[f"{name}/out{i}"]
        assert tuple(o.shape) == want.shape, (name, i, tuple(o.shape), want.shape)
        assert o.dtype.np == (want.dtype if dtype is None else dtype), (name, i, o.dtype)
        np.testing.assert_allclose(o.detach().numpy(), want, rtol=rtol, atol=atol)
        if o.requires_grad:
            part = (o * st.from_numpy(REF[f"{name}/g{i}"])).sum()
            total = part if total is None else total + part
    if spec["grad"]:
        total.backward()
        for k in spec["grad"]:
            np.testing.assert_allclose(
                ts[k].grad.numpy(), REF[f"{name}/d/{k}"], rtol=rtol, atol=atol, err_msg=k
            )
    return outs
