"""Write the torch reference values that tests/unit/test_losses_extra.py,
test_nn_upsampling.py and test_nn_layers_extra.py compare against
(tests/unit/data/nn_extra_torch.npz). Needs torch (CPU), which the tests themselves do not:
run ``python scripts/torch_refs_nn.py`` where torch is installed.

Each case is a call ``fn(*args, **kwargs)`` of ``torch.nn.functional`` (or ``torch`` for a
name starting with ``torch.``) whose array arguments are named ``"@name"``; the file keeps,
per case, the JSON spec, the inputs, the output(s), a random output gradient ``g`` and the
gradients of the inputs named in ``grad``. The tests rebuild the same call with sharded.
Inputs come from NumPy generators with fixed seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

DATA = Path(__file__).resolve().parent.parent / "tests" / "unit" / "data"


def _n(rng, *shape):
    return rng.standard_normal(shape)


def loss_cases(rng):
    sign = np.where(rng.random(5) > 0.5, 1.0, -1.0)
    return {
        "margin_ranking": ("margin_ranking_loss", {"a": _n(rng, 5), "b": _n(rng, 5), "y": sign},
                           ["@a", "@b", "@y"], {"margin": 0.3}, ["a", "b"]),
        "margin_ranking_none": ("margin_ranking_loss",
                                {"a": _n(rng, 5), "b": _n(rng, 5), "y": sign},
                                ["@a", "@b", "@y"], {"reduction": "none"}, ["a", "b"]),
        "triplet": ("triplet_margin_loss",
                    {"a": _n(rng, 6, 4), "p": _n(rng, 6, 4), "n": _n(rng, 6, 4)},
                    ["@a", "@p", "@n"], {"margin": 2.0}, ["a", "p", "n"]),
        "triplet_swap_p1": ("triplet_margin_loss",
                            {"a": _n(rng, 6, 4), "p": _n(rng, 6, 4), "n": _n(rng, 6, 4)},
                            ["@a", "@p", "@n"], {"p": 1, "swap": True, "margin": 2.5,
                                                 "reduction": "sum"}, ["a", "p", "n"]),
        "cosine_embedding": ("cosine_embedding_loss",
                             {"a": _n(rng, 6, 3), "b": _n(rng, 6, 3),
                              "y": np.array([1, -1, 1, -1, -1, 1])},
                             ["@a", "@b", "@y"], {"margin": 0.1}, ["a", "b"]),
        "cosine_embedding_1d": ("cosine_embedding_loss",
                                {"a": _n(rng, 4), "b": _n(rng, 4), "y": np.array(-1)},
                                ["@a", "@b", "@y"], {"margin": -0.5}, ["a", "b"]),
        "poisson": ("poisson_nll_loss", {"x": _n(rng, 4, 3),
                                         "t": rng.poisson(2.0, (4, 3)).astype(float)},
                    ["@x", "@t"], {}, ["x"]),
        "poisson_full": ("poisson_nll_loss", {"x": np.abs(_n(rng, 4, 3)) + 0.1,
                                              "t": rng.poisson(2.0, (4, 3)).astype(float)},
                         ["@x", "@t"], {"log_input": False, "full": True,
                                        "reduction": "none"}, ["x"]),
        "gaussian": ("gaussian_nll_loss", {"x": _n(rng, 4, 3), "t": _n(rng, 4, 3),
                                           "v": np.abs(_n(rng, 4, 3))},
                     ["@x", "@t", "@v"], {}, ["x", "t", "v"]),
        "gaussian_homo_full": ("gaussian_nll_loss",
                               {"x": _n(rng, 4, 3), "t": _n(rng, 4, 3),
                                "v": np.array([0.5, 1e-9, 2.0, 1.0])},  # one clamped at eps
                               ["@x", "@t", "@v"], {"full": True, "reduction": "sum"},
                               ["x", "v"]),
        "gaussian_shared": ("gaussian_nll_loss",
                            {"x": _n(rng, 2, 3, 4), "t": _n(rng, 2, 3, 4),
                             "v": np.abs(_n(rng, 2, 1, 4))},
                            ["@x", "@t", "@v"], {"reduction": "none"}, ["x", "v"]),
        "multilabel": ("multilabel_soft_margin_loss",
                       {"x": _n(rng, 5, 3), "t": (rng.random((5, 3)) > 0.5).astype(float)},
                       ["@x", "@t"], {}, ["x"]),
        "multilabel_weight": ("multilabel_soft_margin_loss",
                              {"x": _n(rng, 5, 3), "t": (rng.random((5, 3)) > 0.5) * 1.0,
                               "w": np.abs(_n(rng, 3))},
                              ["@x", "@t"], {"weight": "@w", "reduction": "none"}, ["x", "w"]),
    }  # fmt: skip


def tensor_cases(rng):
    coords = np.cumsum(np.abs(_n(rng, 5)) + 0.2)
    return {
        "gradient_all": ("torch.gradient", {"x": _n(rng, 4, 5)}, ["@x"], {}, ["x"]),
        "gradient_dim_order2": ("torch.gradient", {"x": _n(rng, 3, 6)}, ["@x"],
                                {"spacing": 0.5, "dim": 1, "edge_order": 2}, ["x"]),
        "gradient_spacings": ("torch.gradient", {"x": _n(rng, 6, 4)}, ["@x"],
                              {"spacing": [2.0, 0.25], "edge_order": 2}, ["x"]),
        "gradient_coords": ("torch.gradient", {"x": _n(rng, 4, 5), "c": coords}, ["@x"],
                            {"spacing": ["@c"], "dim": [1]}, ["x"]),
        "gradient_coords_order2": ("torch.gradient", {"x": _n(rng, 5, 3), "c": coords},
                                   ["@x"], {"spacing": ["@c"], "dim": 0, "edge_order": 2},
                                   ["x", "c"]),
        "gradient_int": ("torch.gradient", {"x": rng.integers(-9, 9, (7,))}, ["@x"],
                         {"spacing": 2}, []),
        "split_with_sizes": ("torch.split_with_sizes", {"x": _n(rng, 4, 6)}, ["@x", [1, 0, 5]],
                             {"dim": 1}, ["x"]),
        "fill_tensor": ("torch.fill", {"x": _n(rng, 3, 2), "v": np.array(1.5)}, ["@x", "@v"],
                        {}, ["x", "v"]),
    }  # fmt: skip


def upsampling_cases(rng):
    x3, x4, x5 = _n(rng, 2, 3, 5), _n(rng, 2, 2, 4, 5), _n(rng, 2, 1, 3, 2, 4)
    cases = {
        "nearest_size": ({"x": x4}, {"size": (7, 3)}),
        "nearest_scale": ({"x": x4}, {"scale_factor": (1.7, 0.6)}),
        "nearest_x2": ({"x": x3}, {"scale_factor": 2}),
        "nearest_recompute": ({"x": x3}, {"scale_factor": 1.3, "recompute_scale_factor": True}),
        "nearest_5d": ({"x": x5}, {"size": (4, 3, 3)}),
        "nearest_exact": ({"x": x4}, {"size": (6, 8), "mode": "nearest-exact"}),
        "linear": ({"x": x3}, {"size": 9, "mode": "linear"}),
        "linear_down_ac": ({"x": x3}, {"size": 3, "mode": "linear", "align_corners": True}),
        "bilinear_scale": ({"x": x4}, {"scale_factor": (2.5, 1.5), "mode": "bilinear"}),
        "bilinear_ac": ({"x": x4}, {"size": (7, 2), "mode": "bilinear", "align_corners": True}),
        "bilinear_down": ({"x": x4}, {"size": (3, 3), "mode": "bilinear"}),
        "bilinear_one": ({"x": x4}, {"size": (1, 1), "mode": "bilinear", "align_corners": True}),
        "trilinear": ({"x": x5}, {"size": (5, 3, 6), "mode": "trilinear"}),
        "area": ({"x": x4}, {"size": (3, 2), "mode": "area"}),
        "bicubic": ({"x": x4}, {"size": (7, 3), "mode": "bicubic"}),
        "bicubic_ac_scale": (
            {"x": x4},
            {"scale_factor": (1.0, 2.3), "mode": "bicubic", "align_corners": True},
        ),
        "bicubic_scale_same": ({"x": x4}, {"scale_factor": 1.1, "mode": "bicubic"}),
        # index rounding: a float32 floor of torch's float64 (or fused float32) arithmetic
        "nearest_rounding": ({"x": np.arange(30.0).reshape(1, 1, 30)}, {"scale_factor": 2.45}),
        "nearest_exact_f32": (
            {"x": np.arange(2, dtype=np.float32).reshape(1, 1, 2)},
            {"size": 41, "mode": "nearest-exact"},
        ),
    }
    # values only where torch's backward disagrees with its own forward (gradcheck fails):
    # float32 nearest-exact picks its rows without the forward's fused arithmetic, and
    # bicubic of an unchanged size copies the gradient though the forward blends rows
    values_only = ("nearest_exact_f32", "bicubic_scale_same")
    out = {
        k: ("interpolate", a, ["@x"], kw, [] if k in values_only else ["x"])
        for k, (a, kw) in cases.items()
    }
    out["pixel_shuffle"] = ("pixel_shuffle", {"x": _n(rng, 2, 8, 3, 2)}, ["@x", 2], {}, ["x"])
    out["pixel_shuffle_5d"] = ("pixel_shuffle", {"x": _n(rng, 2, 1, 9, 2, 2)}, ["@x", 3], {}, ["x"])
    out["pixel_unshuffle"] = ("pixel_unshuffle", {"x": _n(rng, 2, 3, 4, 6)}, ["@x", 2], {}, ["x"])
    return out


def conv_cases(rng):
    ct = "conv_transpose2d"
    return {
        "ct2d": (ct, {"x": _n(rng, 2, 4, 5, 4), "w": _n(rng, 4, 3, 3, 2), "b": _n(rng, 3)},
                 ["@x", "@w", "@b"], {}, ["x", "w", "b"]),
        "ct2d_strided": (ct, {"x": _n(rng, 2, 4, 4, 5), "w": _n(rng, 4, 1, 3, 3)},
                         ["@x", "@w"], {"stride": (2, 3), "padding": (1, 2),
                                        "output_padding": (1, 2), "groups": 2}, ["x", "w"]),
        "ct2d_dilated": (ct, {"x": _n(rng, 2, 2, 4, 3), "w": _n(rng, 2, 3, 2, 3)},
                         ["@x", "@w"], {"dilation": (2, 1), "padding": 3, "stride": 2,
                                        "output_padding": (1, 0)}, ["x", "w"]),
        "ct2d_unbatched": (ct, {"x": _n(rng, 3, 3, 3), "w": _n(rng, 3, 2, 2, 2)},
                           ["@x", "@w"], {"stride": 2}, ["x", "w"]),
        "ct1d": ("conv_transpose1d", {"x": _n(rng, 2, 3, 6), "w": _n(rng, 3, 4, 3),
                                      "b": _n(rng, 4)},
                 ["@x", "@w", "@b"], {"stride": 2, "padding": 1, "output_padding": 1},
                 ["x", "w", "b"]),
        "ct1d_groups": ("conv_transpose1d", {"x": _n(rng, 2, 4, 5), "w": _n(rng, 4, 2, 2)},
                        ["@x", "@w"], {"groups": 2, "dilation": 3}, ["x", "w"]),
        "unfold": ("unfold", {"x": _n(rng, 2, 3, 5, 4)}, ["@x", (2, 3)], {}, ["x"]),
        "unfold_all": ("unfold", {"x": _n(rng, 2, 2, 6, 7)}, ["@x", 3],
                       {"dilation": (1, 2), "padding": 1, "stride": (2, 1)}, ["x"]),
        "fold": ("fold", {"x": _n(rng, 2, 12, 9)}, ["@x", (4, 5), (2, 3)], {}, ["x"]),
        "fold_all": ("fold", {"x": _n(rng, 2, 18, 9)}, ["@x", (7, 6), 3],
                     {"dilation": (2, 1), "padding": 1, "stride": 2}, ["x"]),
        "fold_unbatched": ("fold", {"x": _n(rng, 4, 6)}, ["@x", (3, 4), 2], {}, ["x"]),
        "bilinear": ("bilinear", {"a": _n(rng, 5, 3), "b": _n(rng, 5, 4), "w": _n(rng, 2, 3, 4),
                                  "c": _n(rng, 2)},
                     ["@a", "@b", "@w", "@c"], {}, ["a", "b", "w", "c"]),
        "bilinear_nd": ("bilinear", {"a": _n(rng, 2, 3, 3), "b": _n(rng, 2, 3, 2),
                                     "w": _n(rng, 4, 3, 2)},
                        ["@a", "@b", "@w"], {}, ["a", "b", "w"]),
    }  # fmt: skip


def bag_cases(rng):
    w = _n(rng, 10, 3)
    flat = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])
    offsets = np.array([0, 3, 3, 7])  # bag 1 is empty
    psw = _n(rng, 10)
    eb = "embedding_bag"
    return {
        "bag_sum_2d": (eb, {"i": np.array([[1, 2, 4], [4, 3, 9]]), "w": w}, ["@i", "@w"],
                       {"mode": "sum"}, ["w"]),
        "bag_mean_offsets": (eb, {"i": flat, "o": offsets, "w": w}, ["@i", "@w", "@o"], {},
                             ["w"]),
        "bag_max_offsets": (eb, {"i": flat, "o": offsets, "w": w}, ["@i", "@w", "@o"],
                            {"mode": "max"}, ["w"]),
        "bag_sum_weights": (eb, {"i": flat, "o": offsets, "w": w, "p": psw},
                            ["@i", "@w", "@o"], {"mode": "sum", "per_sample_weights": "@p"},
                            ["w", "p"]),
        "bag_last_offset_pad": (eb, {"i": flat, "o": np.array([0, 2, 6, 10]), "w": w},
                                ["@i", "@w", "@o"], {"include_last_offset": True,
                                                     "padding_idx": 4}, ["w"]),
        "bag_max_2d_pad": (eb, {"i": np.array([[1, 2, 2], [2, 2, 2], [0, 7, 2]]), "w": w},
                           ["@i", "@w"], {"mode": "max", "padding_idx": 2}, ["w"]),
    }  # fmt: skip


def ctc_cases(rng):
    # torch's CTC gradient with respect to log_probs is offset by exp(log_probs) (it is
    # meant to be taken through a log_softmax): the cases differentiate the logits
    # ("prep": the call gets log_softmax(x, -1))
    t, n, c = 7, 3, 5
    tg = np.array([[1, 2, 2, 4], [3, 3, 0, 0], [4, 1, 3, 0]])
    flat = np.array([1, 2, 2, 4, 3, 3, 4, 1, 3])
    return {
        "ctc": ("ctc_loss", {"x": _n(rng, t, n, c), "y": tg}, ["@x", "@y", [7, 6, 5], [4, 2, 3]],
                {}, ["x"]),
        "ctc_flat_sum": ("ctc_loss", {"x": _n(rng, t, n, c), "y": flat},
                         ["@x", "@y", [7, 7, 4], [4, 2, 3]], {"reduction": "sum", "blank": 0},
                         ["x"]),
        "ctc_blank_none": ("ctc_loss", {"x": _n(rng, t, n, c), "y": tg - (tg > 0)},
                           ["@x", "@y", [7, 3, 6], [4, 2, 0]],
                           {"blank": 4, "reduction": "none"}, ["x"]),
        # the second target cannot fit 2 steps (it needs 3): inf, or 0 with zero_infinity
        "ctc_impossible": ("ctc_loss", {"x": _n(rng, t, n, c), "y": tg},
                           ["@x", "@y", [7, 2, 0], [4, 2, 0]],
                           {"reduction": "none", "zero_infinity": True}, ["x"]),
        "ctc_impossible_inf": ("ctc_loss", {"x": _n(rng, t, n, c), "y": tg},
                               ["@x", "@y", [7, 2, 5], [4, 2, 3]], {"reduction": "none"}, []),
        "ctc_unbatched": ("ctc_loss", {"x": _n(rng, 6, 4), "y": np.array([1, 3, 3])},
                          ["@x", "@y", [6], [3]], {}, ["x"]),
    }  # fmt: skip


CASES = [loss_cases, tensor_cases, upsampling_cases, conv_cases, bag_cases, ctc_cases]
PREP = {"ctc_loss": "log_softmax"}


def _fn(name):
    if name.startswith("torch."):
        return getattr(torch, name[6:])
    return getattr(F, name)


def run_case(name, fn, arrays, args, kwargs, grad, rng, out):
    ts = {k: torch.tensor(a, requires_grad=k in grad) for k, a in arrays.items()}

    prep = PREP.get(fn)

    def val(v):
        if isinstance(v, str) and v.startswith("@"):
            if prep and v == "@x":
                return getattr(F, prep)(ts["x"], -1)
            return ts[v[1:]]
        if isinstance(v, list):
            return [val(i) for i in v]
        return v

    res = _fn(fn)(*(val(a) for a in args), **{k: val(v) for k, v in kwargs.items()})
    outs = list(res) if isinstance(res, (tuple, list)) else [res]
    total = 0
    for i, o in enumerate(outs):
        g = rng.standard_normal(tuple(o.shape))
        out[f"{name}/out{i}"], out[f"{name}/g{i}"] = o.detach().numpy(), g
        if o.requires_grad:
            total = total + (o * torch.from_numpy(g)).sum()
    if grad:
        total.backward()
    spec = {"fn": fn, "args": args, "kwargs": kwargs, "grad": grad, "nout": len(outs)}
    if prep:
        spec["prep"] = prep
    out[f"{name}/spec"] = np.array(json.dumps(spec))
    for k, a in arrays.items():
        out[f"{name}/in/{k}"] = a
    for k in grad:
        out[f"{name}/d/{k}"] = ts[k].grad.numpy()


def main():
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(2026)
    out = {}
    for make in CASES:
        for name, (fn, arrays, args, kwargs, grad) in make(rng).items():
            run_case(name, fn, arrays, args, kwargs, grad, rng, out)
    np.savez_compressed(DATA / "nn_extra_torch.npz", **out)


if __name__ == "__main__":
    main()
