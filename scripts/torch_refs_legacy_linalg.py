"""Write the torch reference values that tests/unit/test_legacy_linalg.py compares against
(tests/unit/data/legacy_linalg_torch.npz): torch's older ``lu``, ``lu_solve`` and
``triangular_solve`` on a float64 batch of two 3x3 systems, their outputs and the inputs'
gradients for a random output gradient ``g`` (``+ sum(cloned_coefficient)`` for
triangular_solve). Needs torch (CPU), which the tests do not: run
``python scripts/torch_refs_legacy_linalg.py`` where torch is installed."""

from __future__ import annotations

import warnings

import numpy as np
import torch
from torch_refs_nn import DATA

CASES = {
    "tri_u": {},
    "tri_lt": {"upper": False, "transpose": True},
    "tri_unit": {"unitriangular": True},
}


def main():
    warnings.simplefilter("ignore")  # torch's deprecation notes for these names
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(7)
    a, b, g = (rng.standard_normal(s) for s in ((2, 3, 3), (2, 3, 2), (2, 3, 2)))
    out = {"a": a, "b": b, "g": g}
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    lu, piv = torch.lu(at)
    out["lu"], out["piv"] = lu.detach().numpy(), piv.numpy()
    x = torch.lu_solve(bt, lu, piv)
    (x * torch.tensor(g)).sum().backward()
    out["lu_solve"], out["lu_solve/da"], out["lu_solve/db"] = (
        x.detach().numpy(), at.grad.numpy(), bt.grad.numpy())  # fmt: skip
    for name, kw in CASES.items():
        at.grad = bt.grad = None
        s, c = torch.triangular_solve(bt, at, **kw)
        ((s * torch.tensor(g)).sum() + c.sum()).backward()
        out[name], out[f"{name}/da"], out[f"{name}/db"] = (
            s.detach().numpy(), at.grad.numpy(), bt.grad.numpy())  # fmt: skip
    z = torch.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    out["sing/a"] = z.numpy()
    for k, t in zip(("lu", "piv", "info"), torch.lu(z, get_infos=True)):
        out[f"sing/{k}"] = t.numpy()
    np.savez_compressed(DATA / "legacy_linalg_torch.npz", **out)


if __name__ == "__main__":
    main()
