"""Write the torch reference values that tests/unit/test_masked.py compares against
(tests/unit/data/masked_torch.npz): torch.masked's functions on a float64 ``x`` (3, 4), its
float32 copy ``x32`` and an int64 ``xi``, with the element mask ``m`` (row 1 fully masked),
the row mask ``r`` (4,) broadcast to every row, or no mask. Needs torch (CPU), which the
tests themselves do not: run ``python scripts/torch_refs_masked.py`` where torch is installed.

Keys: ``x``, ``xi``, ``m``, ``r`` (the inputs), ``<case>`` (the value of each case of
``CASES`` below, whose list the test reads back from the key ``cases``, as JSON) and ``<case>/grad`` (the float64 gradient
of ``(out * w).sum()``, ``w`` the key ``w/<case>``, with zeros where the output is not
finite) for the cases with a float64 input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

DATA = Path(__file__).resolve().parent.parent / "tests" / "unit" / "data"
INF = float("inf")

# (key, function, input, positional args, keyword args); input "x" float64, "x32" float32,
# "xi" int64; a mask kwarg names "m" or "r"; a dtype kwarg is a dtype name.
CASES = [
    ("sum_m1", "sum", "x", (1,), {"mask": "m"}),
    ("sum_all", "sum", "x", (), {"mask": "m"}),
    ("sum_r0k", "sum", "x", (0,), {"mask": "r", "keepdim": True}),
    ("sum_none", "sum", "x", ((0, 1),), {}),
    ("sum_i", "sum", "xi", (1,), {"mask": "m"}),
    ("sum_f64", "sum", "x32", (1,), {"mask": "m", "dtype": "float64"}),
    ("prod_m1", "prod", "x", (1,), {"mask": "m"}),
    ("prod_i", "prod", "xi", (-1,), {"mask": "r", "keepdim": True}),
    ("cumsum_m1", "cumsum", "x", (1,), {"mask": "m"}),
    ("cumsum_i", "cumsum", "xi", (1,), {"mask": "m"}),
    ("cumprod_m0", "cumprod", "x", (0,), {"mask": "m"}),
    ("amax_m1", "amax", "x", (1,), {"mask": "m"}),
    ("amax_i", "amax", "xi", (1,), {"mask": "m"}),
    ("amax_f32", "amax", "x32", (1,), {"mask": "m", "keepdim": True}),
    ("amin_m1", "amin", "x", (1,), {"mask": "m"}),
    ("amin_i", "amin", "xi", (1,), {"mask": "m"}),
    ("amin_all", "amin", "x", (), {"mask": "r"}),
    ("argmax_m1", "argmax", "x", (1,), {"mask": "m"}),
    ("argmax_flat", "argmax", "x", (), {"mask": "m"}),
    ("argmax_i", "argmax", "xi", (0,), {"mask": "r", "keepdim": True}),
    ("argmin_m1", "argmin", "x", (1,), {"mask": "m", "dtype": "int64"}),
    ("logsumexp_m1", "logsumexp", "x", (1,), {"mask": "m"}),
    ("logsumexp_r", "logsumexp", "x", ((0, 1),), {"mask": "r", "keepdim": True}),
    ("mean_m1", "mean", "x", (1,), {"mask": "m"}),
    ("mean_m0k", "mean", "x", (0,), {"mask": "m", "keepdim": True}),
    ("mean_i", "mean", "xi", (1,), {"mask": "m", "dtype": "float64"}),
    ("mean_none", "mean", "x", (), {}),
    ("median_m1", "median", "x", (1,), {"mask": "m"}),
    ("median_r", "median", "x", (), {"mask": "r", "keepdim": True}),
    ("median_i", "median", "xi", (1,), {"mask": "r"}),
    ("var_m1", "var", "x", (1,), {"mask": "m"}),
    ("var_c0", "var", "x", (1,), {"mask": "m", "correction": 0}),
    ("var_c3", "var", "x", (1,), {"mask": "m", "correction": 3}),
    ("var_all", "var", "x", (), {"mask": "m", "unbiased": False}),
    ("var_i", "var", "xi", (0,), {"mask": "r"}),
    ("std_m1", "std", "x", (1,), {"mask": "m"}),
    ("std_r0k", "std", "x", (0,), {"mask": "r", "keepdim": True}),
    ("norm_2", "norm", "x", (2.0, 1), {"mask": "m"}),
    ("norm_1", "norm", "x", (1.0, 1), {"mask": "m"}),
    ("norm_inf", "norm", "x", (INF, 1), {"mask": "m"}),
    ("norm_ninf", "norm", "x", (-INF, 1), {"mask": "m"}),
    ("norm_0", "norm", "x", (0.0, 1), {"mask": "m"}),
    ("norm_3all", "norm", "x", (3.0,), {"mask": "r"}),
    ("normalize_2", "normalize", "x", (2.0, 1), {"mask": "m"}),
    ("normalize_1", "normalize", "x", (1.0, 0), {"mask": "r"}),
    ("softmax_m1", "softmax", "x", (1,), {"mask": "m"}),
    ("softmax_f32", "softmax", "x32", (0,), {"mask": "r", "dtype": "float64"}),
    ("log_softmax_m1", "log_softmax", "x", (1,), {"mask": "m"}),
    ("softmin_m1", "softmin", "x", (1,), {"mask": "m"}),
    ("softmin_none", "softmin", "x", (0,), {}),
]


def _masks():
    m = np.array([[1, 0, 1, 1], [0, 0, 0, 0], [0, 1, 1, 0]], dtype=bool)
    r = np.array([True, False, True, True])
    return m, r


def _call(fn, inp, args, kw, env):
    kw = dict(kw)
    if "mask" in kw:
        kw["mask"] = torch.from_numpy(env[kw["mask"]])
    if "dtype" in kw:
        kw["dtype"] = getattr(torch, kw["dtype"])
    return getattr(torch.masked, fn)(inp, *args, **kw)


def main():
    rng = np.random.default_rng(2026)
    x = np.round(rng.normal(size=(3, 4)) * 2, 3)
    xi = rng.integers(-5, 9, size=(3, 4))
    m, r = _masks()
    env = {"m": m, "r": r}
    out = {"x": x, "xi": xi, "m": m, "r": r, "cases": np.array(json.dumps(CASES))}
    for key, fn, name, args, kw in CASES:
        base = {"x": torch.tensor(x), "x32": torch.tensor(x, dtype=torch.float32)}
        base["xi"] = torch.tensor(xi)
        inp = base[name]
        if name == "x":
            inp.requires_grad_(True)
        y = _call(fn, inp, args, kw, env)
        out[key] = y.detach().numpy()
        if name == "x" and y.requires_grad:
            w = rng.normal(size=tuple(y.shape))
            wt = torch.tensor(w) * torch.isfinite(y).detach()
            loss = (torch.where(torch.isfinite(y), y, 0.0) * wt).sum()
            (g,) = torch.autograd.grad(loss, inp, allow_unused=True)
            if g is None:  # an output that does not depend on the input's values
                g = torch.zeros_like(inp)
            out[f"w/{key}"] = w
            out[f"{key}/grad"] = g.numpy()
    # logaddexp: each operand's own mask
    a = torch.tensor(x, requires_grad=True)
    b = torch.tensor(x[::-1].copy(), requires_grad=True)
    y = torch.masked.logaddexp(a, b, input_mask=torch.from_numpy(m), other_mask=torch.from_numpy(r))
    out["logaddexp"] = y.detach().numpy()
    ga, gb = torch.autograd.grad((torch.where(torch.isfinite(y), y, 0.0)).sum(), (a, b))
    out["logaddexp/grad_a"], out["logaddexp/grad_b"] = ga.numpy(), gb.numpy()
    DATA.mkdir(parents=True, exist_ok=True)
    np.savez(DATA / "masked_torch.npz", **out)
    print("wrote", DATA / "masked_torch.npz", len(out), "arrays")


if __name__ == "__main__":
    main()
