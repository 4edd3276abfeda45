"""Write the torch reference values that tests/unit/test_nn_names.py compares against
(tests/unit/data/nn_names_torch.npz): the hinge and soft-margin losses, local response
norm, pdist, channel shuffle and constant_pad_nd, recorded as scripts/torch_refs_nn.py
records its calls (and replayed by tests/support/nn_cases.py). Needs torch (CPU), which the
tests themselves do not: run ``python scripts/torch_refs_nn_names.py`` where torch is
installed. Inputs come from NumPy generators with fixed seeds."""

from __future__ import annotations

import numpy as np
import torch
from torch_refs_nn import DATA, run_case


def _n(rng, *shape):
    return rng.standard_normal(shape)


def _sign(rng, *shape):
    return np.where(rng.random(shape) > 0.5, 1.0, -1.0)


def _labels(rng, n, c):
    """Multilabel targets: a random number of distinct classes per row, then -1 (and junk
    after it, which torch ignores)."""
    y = rng.integers(0, c, (n, c))
    for r in range(n):
        k = rng.integers(0, c)
        y[r, :k] = rng.permutation(c)[:k]
        if k < c:
            y[r, k] = -1
    return y


def cases(rng):
    return {
        "soft_margin": ("soft_margin_loss", {"x": _n(rng, 6, 3), "y": _sign(rng, 6, 3)},
                        ["@x", "@y"], {}, ["x"]),
        "soft_margin_none": ("soft_margin_loss", {"x": _n(rng, 6, 3), "y": _sign(rng, 6, 3)},
                             ["@x", "@y"], {"reduction": "none"}, ["x"]),
        "hinge": ("hinge_embedding_loss", {"x": _n(rng, 6, 3), "y": _sign(rng, 6, 3)},
                  ["@x", "@y"], {"margin": 0.7}, ["x"]),
        "hinge_sum": ("hinge_embedding_loss", {"x": _n(rng, 4), "y": _sign(rng, 4)},
                      ["@x", "@y"], {"reduction": "sum"}, ["x"]),
        "multi_margin": ("multi_margin_loss", {"x": _n(rng, 6, 4),
                                               "y": rng.integers(0, 4, 6)},
                         ["@x", "@y"], {}, ["x"]),
        "multi_margin_p2_w": ("multi_margin_loss",
                              {"x": _n(rng, 6, 4), "y": rng.integers(0, 4, 6),
                               "w": np.abs(_n(rng, 4))},
                              ["@x", "@y"], {"p": 2, "margin": 0.5, "weight": "@w",
                                             "reduction": "none"}, ["x"]),
        "multi_margin_1d": ("multi_margin_loss", {"x": _n(rng, 5), "y": np.array(2)},
                            ["@x", "@y"], {"reduction": "none"}, ["x"]),
        "multilabel_margin": ("multilabel_margin_loss",
                              {"x": _n(rng, 6, 5), "y": _labels(rng, 6, 5)},
                              ["@x", "@y"], {}, ["x"]),
        "multilabel_margin_none": ("multilabel_margin_loss",
                                   {"x": _n(rng, 4, 3), "y": np.array([[2, 2, -1], [0, 1, 2],
                                                                        [-1, 0, 1], [1, -1, 1]])},
                                   ["@x", "@y"], {"reduction": "none"}, ["x"]),
        "multilabel_margin_1d": ("multilabel_margin_loss",
                                 {"x": _n(rng, 4), "y": np.array([3, 0, -1, 2])},
                                 ["@x", "@y"], {"reduction": "sum"}, ["x"]),
        "triplet_distance": ("triplet_margin_with_distance_loss",
                             {"a": _n(rng, 6, 4), "p": _n(rng, 6, 4), "n": _n(rng, 6, 4)},
                             ["@a", "@p", "@n"], {"margin": 2.0}, ["a", "p", "n"]),
        "triplet_distance_swap": ("triplet_margin_with_distance_loss",
                                  {"a": _n(rng, 6, 4), "p": _n(rng, 6, 4),
                                   "n": _n(rng, 6, 4)},
                                  ["@a", "@p", "@n"], {"swap": True, "margin": 1.5,
                                                       "reduction": "none"}, ["a", "p", "n"]),
        "lrn_3d": ("local_response_norm", {"x": _n(rng, 4, 5, 3)}, ["@x", 3],
                   {"alpha": 0.5, "beta": 0.6, "k": 2.0}, ["x"]),
        "lrn_4d": ("local_response_norm", {"x": _n(rng, 4, 6, 2, 3)}, ["@x", 4], {}, ["x"]),
        "lrn_5d": ("local_response_norm", {"x": _n(rng, 2, 3, 2, 2, 2)}, ["@x", 2],
                   {"alpha": 0.1}, ["x"]),
        "pdist": ("torch.pdist", {"x": _n(rng, 6, 3)}, ["@x"], {}, ["x"]),
        "pdist_p1": ("pdist", {"x": _n(rng, 5, 4)}, ["@x", 1], {}, ["x"]),
        "pdist_p3": ("torch.pdist", {"x": _n(rng, 4, 2)}, ["@x", 3.0], {}, ["x"]),
        "channel_shuffle": ("torch.channel_shuffle", {"x": _n(rng, 4, 6, 2)}, ["@x", 3], {},
                            ["x"]),
        "channel_shuffle_4d": ("channel_shuffle", {"x": _n(rng, 2, 4, 2, 3)}, ["@x", 2], {},
                               ["x"]),
        "constant_pad_nd": ("torch.constant_pad_nd", {"x": _n(rng, 4, 3, 5)},
                            ["@x", [1, -2, 0, 2]], {"value": 1.5}, ["x"]),
    }  # fmt: skip


def main():
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(2027)
    out = {}
    for name, (fn, arrays, args, kwargs, grad) in cases(rng).items():
        run_case(name, fn, arrays, args, kwargs, grad, rng, out)
    np.savez_compressed(DATA / "nn_names_torch.npz", **out)


if __name__ == "__main__":
    main()
