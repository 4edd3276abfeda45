"""Write the torch reference values that tests/unit/test_attention.py, test_transformer.py
and test_norms.py compare against (tests/unit/data/*.npz). Needs torch (CPU), which the
tests themselves do not: run ``python scripts/torch_refs_attention.py [function ...]`` where
torch is installed. Inputs come from NumPy generators with fixed seeds and are stored too."""

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


# --------------------------------------------------------------- modules from JSON specs
# A spec names a class of ``nn`` and its arguments ({"cls": ..., "args": [...], "kwargs":
# {...}}, nested for a layer inside a container); a forward spec names inputs as "@name".
# tests/unit/test_transformer.py builds the same spec with sharded.nn from the .npz.
D, H = 16, 2
ENC = {
    "cls": "TransformerEncoderLayer",
    "args": [D, H],
    "kwargs": {"dim_feedforward": 32, "dropout": 0.0},
}
DEC = {
    "cls": "TransformerDecoderLayer",
    "args": [D, H],
    "kwargs": {"dim_feedforward": 32, "dropout": 0.0},
}
NORM = {"cls": "LayerNorm", "args": [D]}


def _with(spec, **kw):
    return {**spec, "kwargs": {**spec["kwargs"], **kw}}


MODULES = {
    "mha_weights": (
        {"cls": "MultiheadAttention", "args": [8, 2]},
        {"args": ["@x", "@x", "@x"], "kwargs": {"key_padding_mask": "@kpm", "attn_mask": "@fmask"}},
    ),
    "mha_sdpa_causal": (
        {"cls": "MultiheadAttention", "args": [8, 2], "kwargs": {"batch_first": True}},
        {
            "args": ["@y", "@y", "@y"],
            "kwargs": {"attn_mask": "@causal", "need_weights": False, "is_causal": True},
        },
    ),
    "mha_kvdim": (
        {
            "cls": "MultiheadAttention",
            "args": [8, 2],
            "kwargs": {
                "kdim": 5,
                "vdim": 3,
                "add_bias_kv": True,
                "add_zero_attn": True,
                "batch_first": True,
            },
        },
        {
            "args": ["@y", "@k5", "@v3"],
            "kwargs": {"key_padding_mask": "@kpm_b", "average_attn_weights": False},
        },
    ),
    "mha_mask3d_nobias": (
        {"cls": "MultiheadAttention", "args": [8, 2], "kwargs": {"bias": False}},
        {"args": ["@x", "@x", "@x"], "kwargs": {"attn_mask": "@bmask3", "need_weights": False}},
    ),
    "mha_unbatched": (
        {"cls": "MultiheadAttention", "args": [8, 2]},
        {"args": ["@u", "@u", "@u"], "kwargs": {}},
    ),
    "enc_layer": (
        _with(ENC, batch_first=True),
        {"args": ["@src"], "kwargs": {"src_key_padding_mask": "@src_kpm"}},
    ),
    "enc_layer_prenorm_gelu": (
        _with(ENC, norm_first=True, activation="gelu", bias=False),
        {"args": ["@src_s"], "kwargs": {"src_mask": "@src_causal", "is_causal": True}},
    ),
    "dec_layer": (
        _with(DEC, batch_first=True, norm_first=True),
        {
            "args": ["@tgt", "@src"],
            "kwargs": {"tgt_mask": "@tgt_causal", "memory_key_padding_mask": "@src_kpm"},
        },
    ),
    "encoder": (
        {
            "cls": "TransformerEncoder",
            "args": [_with(ENC, batch_first=True), 2],
            "kwargs": {"norm": NORM},
        },
        {"args": ["@src"], "kwargs": {"mask": "@src_causal"}},
    ),
    "decoder": (
        {"cls": "TransformerDecoder", "args": [DEC, 2], "kwargs": {}},
        {
            "args": ["@tgt_s", "@src_s"],
            "kwargs": {"tgt_mask": "@tgt_causal", "tgt_is_causal": True},
        },
    ),
    "transformer": (
        {
            "cls": "Transformer",
            "args": [],
            "kwargs": {
                "d_model": D,
                "nhead": H,
                "num_encoder_layers": 2,
                "num_decoder_layers": 1,
                "dim_feedforward": 32,
                "dropout": 0.0,
                "batch_first": True,
            },
        },
        {
            "args": ["@src", "@tgt"],
            "kwargs": {
                "tgt_mask": "@tgt_causal",
                "src_key_padding_mask": "@src_kpm",
                "memory_key_padding_mask": "@src_kpm",
            },
        },
    ),
}


GRAD_OF = ("in_proj_bias", "out_proj.weight", "linear1.bias", "linear2.weight", "norm2.weight")


def module_inputs(rng):
    """The inputs the forward specs name (N=2, L=4 targets, S=5 sources)."""
    kpm = np.zeros((2, 5), bool)
    kpm[0, 3:] = True
    causal = np.triu(np.ones((4, 4), bool), 1)
    return {
        "x": rng.standard_normal((5, 2, 8)),
        "y": rng.standard_normal((2, 4, 8)),
        "k5": rng.standard_normal((2, 5, 5)),
        "v3": rng.standard_normal((2, 5, 3)),
        "u": rng.standard_normal((4, 8)),
        "kpm": kpm,
        "kpm_b": kpm,
        "fmask": np.where(rng.random((5, 5)) > 0.8, -np.inf, rng.standard_normal((5, 5))),
        "bmask3": np.triu(np.ones((4, 5, 5), bool), 1),
        "causal": causal,
        "src": rng.standard_normal((2, 5, D)),
        "src_s": rng.standard_normal((5, 2, D)),
        "tgt": rng.standard_normal((2, 4, D)),
        "tgt_s": rng.standard_normal((4, 2, D)),
        "src_kpm": kpm,
        "src_causal": np.triu(np.full((5, 5), -np.inf), 1),
        "tgt_causal": np.triu(np.full((4, 4), -np.inf), 1),
    }


def build(spec, nn):
    if isinstance(spec, dict) and "cls" in spec:
        return getattr(nn, spec["cls"])(
            *(build(a, nn) for a in spec.get("args", [])),
            **{k: build(v, nn) for k, v in spec.get("kwargs", {}).items()},
        )
    return spec


def module_refs():
    import json

    rng = np.random.default_rng(99)
    arrays = module_inputs(rng)
    out = {f"inputs/{k}": v for k, v in arrays.items()}
    for i, (name, (spec, fwd)) in enumerate(MODULES.items()):
        torch.manual_seed(i)
        mod = build(spec, torch.nn).eval()
        ts = {}
        for k, a in arrays.items():
            ts[k] = torch.tensor(a, requires_grad=a.dtype != bool)
        res = mod(
            *(ts[a[1:]] for a in fwd["args"]),
            **{
                k: ts[v[1:]] if isinstance(v, str) and v[:1] == "@" else v
                for k, v in fwd["kwargs"].items()
            },
        )
        o, w = res if isinstance(res, tuple) else (res, None)
        g = rng.standard_normal(tuple(o.shape))
        (o * torch.from_numpy(g)).sum().backward()
        out[f"{name}/spec"] = np.array(json.dumps([spec, fwd]))
        out[f"{name}/out"], out[f"{name}/g"] = o.detach().numpy(), g
        if w is not None:
            out[f"{name}/weights"] = w.detach().numpy()
        for k, v in mod.state_dict().items():
            out[f"{name}/state/{k}"] = v.numpy()
        for k, p in mod.named_parameters():  # a few (of every kind) keep the file small
            if name.startswith("mha") or k.endswith(GRAD_OF):
                out[f"{name}/grad/{k}"] = p.grad.numpy()
        for a in sorted(set(fwd["args"])):
            out[f"{name}/dinput/{a[1:]}"] = ts[a[1:]].grad.numpy()
            ts[a[1:]].grad = None
    np.savez_compressed(DATA / "transformer_torch.npz", **out)


def norm_refs():
    """F.rms_norm, F.group_norm and F.instance_norm: outputs, gradients, running stats."""
    rng = np.random.default_rng(7)
    cases = {
        "rms": (F.rms_norm, (3, 4, 5), {"normalized_shape": (4, 5)}, {"weight": (4, 5)}),
        "rms_eps": (F.rms_norm, (3, 4, 5), {"normalized_shape": (5,), "eps": 1e-3}, {}),
        "group": (F.group_norm, (2, 6, 3, 2), {"num_groups": 3}, {"weight": (6,), "bias": (6,)}),
        "group_1": (F.group_norm, (2, 6, 4), {"num_groups": 1, "eps": 1e-3}, {}),
        "instance": (
            F.instance_norm,
            (2, 3, 5),
            {"momentum": 0.2},
            {"weight": (3,), "bias": (3,), "running_mean": (3,), "running_var": (3,)},
        ),
        "instance_eval": (
            F.instance_norm,
            (2, 3, 4, 4),
            {"use_input_stats": False},
            {"running_mean": (3,), "running_var": (3,)},
        ),
    }
    out = {}
    for name, (fn, shape, kw, extra) in cases.items():
        x = torch.tensor(rng.standard_normal(shape), requires_grad=True)
        ts = {}
        for k, sh in extra.items():
            a = rng.standard_normal(sh)
            a = np.abs(a) + 0.5 if k == "running_var" else a
            out[f"{name}/{k}"] = a
            ts[k] = torch.tensor(a, requires_grad=not k.startswith("running"))
        y = fn(x, **kw, **ts)
        g, grads = _grads(y, [x], rng)
        out[f"{name}/x"], out[f"{name}/out"], out[f"{name}/g"] = (
            x.detach().numpy(),
            y.detach().numpy(),
            g,
        )
        out[f"{name}/dx"] = grads[0]
        for k, t in ts.items():
            if k.startswith("running"):
                out[f"{name}/{k}_after"] = t.numpy()
            else:
                out[f"{name}/d{k}"] = t.grad.numpy()
    np.savez_compressed(DATA / "norms_torch.npz", **out)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    for fn in sys.argv[1:] or ["sdpa_refs", "module_refs", "norm_refs"]:
        globals()[fn]()
