"""Write the torch reference values that tests/unit/test_attention*.py and
test_transformer.py compare against (tests/unit/data/*.npz). Needs torch (CPU), which the
tests themselves do not: run ``python scripts/torch_refs_attention.py`` where torch is
installed. Inputs come from NumPy generators with fixed seeds and are stored too."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

DATA = Path(__file__).resolve().parent.parent / "tests" / "unit" / "data"


def _grads(out, inputs, rng):
    g = rng.standard_normal(tuple(out.shape))
    out.backward(torch.from_numpy(g))
    return g, [t.grad.numpy() for t in inputs]


def sdpa_refs():
    """Cases of F.scaled_dot_product_attention: inputs, kwargs, output and input gradients."""
    rng = np.random.default_rng(1234)
    cases = {
        "plain": dict(q=(2, 3, 7, 4), k=(2, 3, 9, 4), v=(2, 3, 9, 5)),
        "causal_tall": dict(q=(2, 3, 9, 4), k=(2, 3, 6, 4), v=(2, 3, 6, 5), is_causal=True),
        "causal_wide": dict(q=(2, 5, 4), k=(2, 8, 4), v=(2, 8, 3), is_causal=True),
        "bool_mask": dict(q=(2, 2, 6, 4), k=(2, 2, 7, 4), v=(2, 2, 7, 4), mask="bool"),
        "float_mask": dict(q=(2, 2, 6, 4), k=(2, 2, 7, 4), v=(2, 2, 7, 4), mask="float"),
        "gqa": dict(q=(2, 4, 5, 4), k=(2, 2, 7, 4), v=(2, 2, 7, 3), enable_gqa=True),
        "broadcast": dict(q=(3, 5, 4), k=(2, 3, 6, 4), v=(1, 3, 6, 2), scale=0.3),
        "unbatched": dict(q=(5, 4), k=(6, 4), v=(6, 3)),
    }
    out = {}
    for name, c in cases.items():
        arrays = {n: rng.standard_normal(c[n]) for n in "qkv"}
        ts = [torch.tensor(arrays[n], requires_grad=True) for n in "qkv"]
        kw = {key: c[key] for key in ("is_causal", "enable_gqa", "scale") if key in c}
        L, S = c["q"][-2], c["k"][-2]
        if c.get("mask") == "bool":
            m = rng.random((2, 1, L, S)) > 0.4
            m[0, 0, 1] = False  # a query that sees no key: zeros, as torch's safe softmax
            arrays["mask"] = m
            kw["attn_mask"] = torch.from_numpy(m)
        elif c.get("mask") == "float":
            m = rng.standard_normal((L, S))
            m[2, :3] = -np.inf
            arrays["mask"] = m
            kw["attn_mask"] = torch.tensor(m, requires_grad=True)
        o = F.scaled_dot_product_attention(*ts, **kw)
        g, grads = _grads(o, ts, rng)
        for n in "qkv":
            out[f"{name}/{n}"] = arrays[n]
        if "mask" in arrays:
            out[f"{name}/mask"] = arrays["mask"]
            if arrays["mask"].dtype != bool:
                out[f"{name}/dmask"] = kw["attn_mask"].grad.numpy()
        out[f"{name}/out"], out[f"{name}/g"] = o.detach().numpy(), g
        for n, d in zip("qkv", grads):
            out[f"{name}/d{n}"] = d
    np.savez_compressed(DATA / "sdpa_torch.npz", **out)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    for fn in sys.argv[1:] or ["sdpa_refs"]:
        globals()[fn]()
