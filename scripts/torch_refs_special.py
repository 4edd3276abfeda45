"""Write the torch reference values that tests/unit/test_special_more.py compares against
(tests/unit/data/special_more_torch.npz): torch.special's Bessel functions, airy_ai, erfcx,
the orthogonal polynomials and igamma/igammac. Needs torch (CPU), which the tests themselves
do not: run ``python scripts/torch_refs_special.py`` where torch is installed.

Keys: ``x`` (the unary functions' float64 inputs: special values, both tails, random
points), ``xs`` (a moderate float32 range), ``<fn>/f64``, ``<fn>/f32``, ``<fn>/int`` (the
function of ``x``, ``xs`` as float32 and ``arange(-3, 6)`` as int64, which torch promotes to
float32); for the polynomials ``px`` and ``pn`` (outer grid: ``fn(px[:, None], pn[None])``)
with ``<fn>/f64``, ``<fn>/f32`` and ``<fn>/int`` (int64 ``x`` and ``n``); ``ga``, ``gx`` and
``igamma/f64``, ``igammac/f64``... (the grid of ``a`` and ``x``), and the float64 gradients
``<fn>/grad`` of ``erfcx`` at ``x`` and of ``igamma``/``igammac`` in ``x`` at ``ga``, ``gx``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

DATA = Path(__file__).resolve().parent.parent / "tests" / "unit" / "data"
S = torch.special

UNARY = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
    "erfcx",
]
POLYS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


def _t(a, dtype=torch.float64):
    return torch.tensor(a, dtype=dtype)


def main():
    rng = np.random.default_rng(2026)
    out = {}
    edge = [-np.inf, -1e8, -1e3, -104.0, -30.0, -10.5, -3.0, -1.0, -0.5, -1e-300, -0.0, 0.0,
            1e-300, 1e-8, 0.3, 1.0, 2.5, 7.0, 25.0, 103.0, 104.0, 700.0, 800.0, 1e3, np.inf,
            np.nan]  # fmt: skip
    x = np.concatenate([edge, rng.uniform(-30, 30, 40), rng.uniform(0, 5, 20)])
    xs = np.concatenate([[0.0, 1.0, -1.0, 0.5], rng.uniform(-20, 20, 30)]).astype(np.float32)
    out["x"], out["xs"] = x, xs
    for name in UNARY:
        f = getattr(S, name)
        out[f"{name}/f64"] = f(_t(x)).numpy()
        out[f"{name}/f32"] = f(_t(xs, torch.float32)).numpy()
        ints = f(torch.arange(-3, 6))
        assert ints.dtype == torch.float32
        out[f"{name}/int"] = ints.numpy()
    xg = _t(x, torch.float64).requires_grad_()
    S.erfcx(xg).backward(torch.ones_like(xg))
    out["erfcx/grad"] = xg.grad.numpy()

    px = np.concatenate(
        [[-np.inf, -3.0, -1.0, -0.999, -0.5, 0.0, 1e-20, 0.25, 0.3, 0.5, 0.75, 1.0, 1.5, 3.0,
          np.inf, np.nan], rng.uniform(-1.2, 1.2, 6)]  # fmt: skip
    )
    pn = np.array([-3.0, -0.5, 0.0, 1.0, 2.0, 2.7, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 12.0,
                   30.0, 100.0, 129.0, 300.0, 513.0, 1000.0, np.nan, np.inf, -np.inf, 1e30])  # fmt: skip
    out["px"], out["pn"] = px, pn
    for name in POLYS:
        f = getattr(S, name)
        out[f"{name}/f64"] = f(_t(px)[:, None], _t(pn)[None]).numpy()
        out[f"{name}/f32"] = f(_t(px, torch.float32)[:, None], _t(pn, torch.float32)[None]).numpy()
        ints = f(torch.arange(-2, 4)[:, None], torch.arange(-1, 5)[None])
        assert ints.dtype == torch.float32
        out[f"{name}/int"] = ints.numpy()

    ga = np.array([0.0, 0.5, 1.0, 2.0, 3.5, 10.0, 100.0, -1.0, np.inf, np.nan, 1e-3, 30.0])
    gx = np.array([0.0, 0.1, 1.0, 2.5, 5.0, 50.0, 1e-300, -1.0, np.inf, np.nan, 120.0])
    out["ga"], out["gx"] = ga, gx
    for name in ("igamma", "igammac"):
        f = getattr(torch, name)
        out[f"{name}/f64"] = f(_t(ga)[:, None], _t(gx)[None]).numpy()
        out[f"{name}/f32"] = f(_t(ga, torch.float32)[:, None], _t(gx, torch.float32)[None]).numpy()
        a = _t(rng.uniform(0.5, 5, 8))
        xg = _t(rng.uniform(0.1, 6, 8)).requires_grad_()
        f(a, xg).backward(torch.ones_like(xg))
        out[f"{name}/grad_a"], out[f"{name}/grad_x"] = a.numpy(), xg.detach().numpy()
        out[f"{name}/grad"] = xg.grad.numpy()
    np.savez_compressed(DATA / "special_more_torch.npz", **out)


if __name__ == "__main__":
    main()
