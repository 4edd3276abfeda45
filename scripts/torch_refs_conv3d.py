"""Write the torch reference values that tests/unit/test_conv3d.py compares against
(tests/unit/data/conv3d_torch.npz): 3-D convolutions and pooling, functional calls recorded
as scripts/torch_refs_nn.py records them (and replayed by tests/support/nn_cases.py), and
the 3-D layers, whose torch ``state_dict`` the tests load. Needs torch (CPU), which the
tests themselves do not: run ``python scripts/torch_refs_conv3d.py`` where torch is
installed. Inputs come from NumPy generators with fixed seeds."""

from __future__ import annotations

import json

import numpy as np
import torch
from torch_refs_nn import DATA, run_case


def _n(rng, *shape):
    return rng.standard_normal(shape)


def conv_cases(rng):
    c3, ct = "conv3d", "conv_transpose3d"
    return {
        "conv3d": (c3, {"x": _n(rng, 2, 3, 5, 4, 6), "w": _n(rng, 4, 3, 2, 3, 2),
                        "b": _n(rng, 4)}, ["@x", "@w", "@b"], {}, ["x", "w", "b"]),
        "conv3d_strided": (c3, {"x": _n(rng, 2, 4, 6, 5, 7), "w": _n(rng, 6, 2, 3, 2, 3)},
                           ["@x", "@w"], {"stride": (2, 1, 3), "padding": (1, 0, 2),
                                          "groups": 2}, ["x", "w"]),
        "conv3d_same": (c3, {"x": _n(rng, 2, 2, 6, 5, 4), "w": _n(rng, 3, 2, 3, 2, 3),
                             "b": _n(rng, 3)}, ["@x", "@w", "@b"],
                        {"padding": "same", "dilation": (2, 1, 1)}, ["x", "w", "b"]),
        "conv3d_valid": (c3, {"x": _n(rng, 2, 2, 4, 4, 4), "w": _n(rng, 2, 1, 2, 2, 2)},
                         ["@x", "@w"], {"padding": "valid", "groups": 2, "dilation": 2},
                         ["x", "w"]),
        "conv3d_unbatched": (c3, {"x": _n(rng, 2, 4, 3, 5), "w": _n(rng, 3, 2, 2, 2, 2)},
                             ["@x", "@w"], {"stride": 2, "padding": 1}, ["x", "w"]),
        "conv3d_top": ("torch.conv3d", {"x": _n(rng, 2, 1, 3, 3, 3), "w": _n(rng, 2, 1, 2, 2, 2)},
                       ["@x", "@w"], {}, ["x", "w"]),
        "ct3d": (ct, {"x": _n(rng, 2, 4, 3, 2, 3), "w": _n(rng, 4, 3, 2, 3, 2), "b": _n(rng, 3)},
                 ["@x", "@w", "@b"], {}, ["x", "w", "b"]),
        "ct3d_strided": (ct, {"x": _n(rng, 2, 4, 3, 3, 2), "w": _n(rng, 4, 1, 3, 2, 3)},
                         ["@x", "@w"], {"stride": (2, 1, 3), "padding": (1, 0, 1),
                                        "output_padding": (1, 0, 2), "groups": 2,
                                        "dilation": (1, 2, 1)}, ["x", "w"]),
        "ct3d_unbatched": (ct, {"x": _n(rng, 2, 2, 3, 2), "w": _n(rng, 2, 2, 2, 2, 2)},
                           ["@x", "@w"], {"stride": 2}, ["x", "w"]),
        "ct3d_top": ("torch.conv_transpose3d", {"x": _n(rng, 2, 2, 2, 2, 2),
                                                "w": _n(rng, 2, 1, 2, 2, 2)},
                     ["@x", "@w"], {"stride": 2}, ["x", "w"]),
    }  # fmt: skip


def pool_cases(rng):
    mp, ap = "max_pool3d", "avg_pool3d"
    ints = rng.integers(-20, 20, (2, 2, 5, 4, 6))
    return {
        "mp3d": (mp, {"x": _n(rng, 2, 3, 4, 6, 5)}, ["@x", 2], {}, ["x"]),
        "mp3d_all": (mp, {"x": _n(rng, 2, 2, 7, 6, 8)}, ["@x", (3, 2, 3)],
                     {"stride": (2, 1, 2), "padding": (1, 1, 0), "dilation": (1, 2, 1),
                      "ceil_mode": True, "return_indices": True}, ["x"]),
        "mp3d_unbatched": (mp, {"x": _n(rng, 2, 5, 4, 5)}, ["@x", (2, 2, 3)],
                           {"stride": 1, "return_indices": True}, ["x"]),
        "mp3d_int": (mp, {"x": ints}, ["@x", 2], {"padding": 1}, []),
        "mp3d_top": ("torch.max_pool3d", {"x": _n(rng, 1, 2, 4, 4, 4)}, ["@x", 3, 1, 1], {},
                     ["x"]),
        "ap3d": (ap, {"x": _n(rng, 2, 3, 4, 6, 5)}, ["@x", 2], {}, ["x"]),
        "ap3d_all": (ap, {"x": _n(rng, 2, 2, 7, 6, 8)}, ["@x", (3, 2, 3)],
                     {"stride": (2, 1, 2), "padding": (1, 1, 0), "ceil_mode": True,
                      "count_include_pad": False}, ["x"]),
        "ap3d_divisor": (ap, {"x": _n(rng, 2, 5, 4, 5)}, ["@x", 2],
                         {"stride": 1, "padding": 1, "divisor_override": 3}, ["x"]),
        "ap3d_int": (ap, {"x": ints}, ["@x", (2, 2, 3)], {"ceil_mode": True}, []),
        "aap3d": ("adaptive_avg_pool3d", {"x": _n(rng, 2, 3, 5, 7, 4)}, ["@x", (2, 3, None)],
                  {}, ["x"]),
        "aap3d_unbatched": ("adaptive_avg_pool3d", {"x": _n(rng, 2, 4, 5, 6)}, ["@x", 3], {},
                            ["x"]),
        "amp3d": ("adaptive_max_pool3d", {"x": _n(rng, 2, 3, 5, 7, 4)}, ["@x", (2, 3, 4)],
                  {"return_indices": True}, ["x"]),
        "amp3d_unbatched": ("adaptive_max_pool3d", {"x": _n(rng, 2, 4, 5, 6)}, ["@x", 3], {},
                            ["x"]),
    }  # fmt: skip


# the 3-D layers: class, constructor arguments, input shape, forward's keyword arguments
MODULES = {
    "Conv3d": ("Conv3d", {"in_channels": 4, "out_channels": 6, "kernel_size": (3, 2, 3),
                          "stride": (1, 2, 1), "padding": 1, "groups": 2}, (2, 4, 5, 6, 5), {}),
    "Conv3d_reflect": ("Conv3d", {"in_channels": 2, "out_channels": 3, "kernel_size": 3,
                                  "padding": "same", "padding_mode": "reflect"},
                       (2, 2, 4, 5, 4), {}),
    "Conv3d_circular": ("Conv3d", {"in_channels": 2, "out_channels": 2, "kernel_size": 2,
                                   "padding": (1, 0, 1), "padding_mode": "circular",
                                   "bias": False}, (2, 2, 3, 4, 3), {}),
    "ConvTranspose3d": ("ConvTranspose3d", {"in_channels": 4, "out_channels": 2,
                                            "kernel_size": 3, "stride": 2, "padding": 1,
                                            "groups": 2}, (2, 4, 2, 3, 2),
                        {"output_size": (4, 6, 4)}),
    "MaxPool3d": ("MaxPool3d", {"kernel_size": 2, "stride": 1, "padding": 1}, (2, 2, 3, 4, 3),
                  {}),
    "AvgPool3d": ("AvgPool3d", {"kernel_size": 3, "stride": 2, "padding": 1,
                                "count_include_pad": False}, (2, 2, 5, 4, 6), {}),
    "AdaptiveAvgPool3d": ("AdaptiveAvgPool3d", {"output_size": (2, None, 3)}, (2, 2, 5, 4, 7),
                          {}),
    "AdaptiveMaxPool3d": ("AdaptiveMaxPool3d", {"output_size": 2}, (2, 2, 5, 4, 7), {}),
}  # fmt: skip


def run_module(name, cls, kwargs, shape, fwd, rng, out):
    """``mod/<name>/``: the spec, the torch ``state_dict``, the input, the output, a random
    output gradient and the gradients of the input and the parameters."""
    torch.manual_seed(0)
    m = getattr(torch.nn, cls)(**kwargs).double()
    x = torch.tensor(rng.standard_normal(shape), requires_grad=True)
    y = m(x, **fwd)
    g = rng.standard_normal(tuple(y.shape))
    (y * torch.from_numpy(g)).sum().backward()
    p = f"mod/{name}"
    spec = {"cls": cls, "kwargs": kwargs, "forward": fwd, "repr": repr(m),
            "params": [k for k, _ in m.named_parameters()]}  # fmt: skip
    out[f"{p}/spec"] = np.array(json.dumps(spec))
    for k, v in m.state_dict().items():
        out[f"{p}/state/{k}"] = v.numpy()
    out[f"{p}/x"], out[f"{p}/y"], out[f"{p}/g"] = x.detach().numpy(), y.detach().numpy(), g
    out[f"{p}/dx"] = x.grad.numpy()
    for k, v in m.named_parameters():
        out[f"{p}/d/{k}"] = v.grad.numpy()


def main():
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(2033)
    out = {}
    for make in (conv_cases, pool_cases):
        for name, (fn, arrays, args, kwargs, grad) in make(rng).items():
            run_case(name, fn, arrays, args, kwargs, grad, rng, out)
    for name, (cls, kwargs, shape, fwd) in MODULES.items():
        run_module(name, cls, kwargs, shape, fwd, rng, out)
    np.savez_compressed(DATA / "conv3d_torch.npz", **out)


if __name__ == "__main__":
    main()
