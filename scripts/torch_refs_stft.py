"""Write the torch reference values that tests/unit/test_stft.py and tests/unit/test_windows.py
compare against (tests/unit/data/stft_torch.npz, tests/unit/data/windows_torch.npz). Needs
torch (CPU), which the tests themselves do not: run ``python scripts/torch_refs_stft.py`` where
torch is installed. Inputs come from a NumPy generator with a fixed seed and are stored too.

stft: each case is JSON kwargs (``window`` stored as an array, ``x`` the signal); stored are
the result (``out``, complex or the real pairs), a gradient seed ``g`` of the same real shape
and the gradients of ``sum(view_as_real(out) * g)`` for the signal and the window (float64
cases). istft: the spectrum ``s`` of a case, the result and the gradients of ``sum(out * g)``
for the spectrum (torch's complex convention, dL/dRe + i dL/dIm) and the window.

windows: ``<name>/<args as JSON>`` -> the window torch makes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

DATA = Path(__file__).resolve().parent.parent / "tests" / "unit" / "data"
rng = np.random.default_rng(7)

REAL = rng.standard_normal((3, 40))
CPLX = rng.standard_normal((3, 40)) + 1j * rng.standard_normal((3, 40))


def _win(kind, n, dtype=torch.float64):
    return getattr(torch, f"{kind}_window")(n, dtype=dtype).numpy()


# name -> (signal, kwargs of stft; "window" an array)
STFT = {
    "hann_reflect": (REAL, dict(n_fft=16, hop_length=4, window=_win("hann", 16))),
    "hamming_short_constant_norm": (
        REAL,
        dict(n_fft=16, hop_length=5, win_length=10, window=_win("hamming", 10),
             pad_mode="constant", normalized=True),
    ),  # fmt: skip
    "rect_nocenter_pairs": (REAL, dict(n_fft=8, center=False, return_complex=False)),
    "blackman_aligned": (
        REAL,
        dict(n_fft=12, hop_length=3, win_length=8, window=_win("blackman", 8), center=False,
             align_to_window=True),
    ),  # fmt: skip
    "complex_replicate": (CPLX, dict(n_fft=10, hop_length=4, window=_win("hann", 10),
                                     pad_mode="replicate")),  # fmt: skip
    "twosided_circular": (REAL, dict(n_fft=10, hop_length=3, onesided=False,
                                     pad_mode="circular")),  # fmt: skip
    "one_dim": (REAL[0], dict(n_fft=16, hop_length=4, window=_win("hann", 16))),
    "float32": (REAL.astype(np.float32), dict(n_fft=16, hop_length=4,
                                              window=_win("hann", 16, torch.float32))),  # fmt: skip
}

# name -> (stft case whose result is inverted, kwargs of istft)
ISTFT = {
    "hann_reflect": ("hann_reflect", dict(n_fft=16, hop_length=4)),
    "hann_length_long": ("hann_reflect", dict(n_fft=16, hop_length=4, length=50)),
    "hann_length_short": ("hann_reflect", dict(n_fft=16, hop_length=4, length=30)),
    "hamming_short_norm": (
        "hamming_short_constant_norm",
        dict(n_fft=16, hop_length=5, win_length=10, normalized=True, length=40),
    ),
    "complex": ("complex_replicate", dict(n_fft=10, hop_length=4, return_complex=True)),
    "one_dim": ("one_dim", dict(n_fft=16, hop_length=4)),
    "float32": ("float32", dict(n_fft=16, hop_length=4)),
}


def _stft(x, kw, grad):
    kw = dict(kw)
    w = kw.pop("window", None)
    xt = torch.tensor(x, requires_grad=grad)
    wt = None if w is None else torch.tensor(w, requires_grad=grad)
    kw.setdefault("return_complex", True)
    out = torch.stft(xt, window=wt, **kw)
    return xt, wt, out


def main():
    refs = {}
    specs = {}
    for name, (x, kw) in STFT.items():
        grad = x.dtype in (np.float64, np.complex128)
        xt, wt, out = _stft(x, kw, grad)
        pairs = out if not out.is_complex() else torch.view_as_real(out)
        refs[f"stft/{name}/x"] = x
        if wt is not None:
            refs[f"stft/{name}/window"] = kw["window"]
        refs[f"stft/{name}/kwargs"] = json.dumps({k: v for k, v in kw.items() if k != "window"})
        refs[f"stft/{name}/out"] = out.detach().numpy()
        specs[name] = (out.detach(), kw.get("window"))
        if grad:
            g = rng.standard_normal(tuple(pairs.shape))
            (pairs * torch.tensor(g)).sum().backward()
            refs[f"stft/{name}/g"] = g
            refs[f"stft/{name}/grad_x"] = xt.grad.numpy()
            if wt is not None:
                refs[f"stft/{name}/grad_window"] = wt.grad.numpy()
    for name, (case, kw) in ISTFT.items():
        s, w = specs[case]
        grad = s.dtype == torch.complex128
        st_ = s.clone().requires_grad_(grad)
        wt = None if w is None else torch.tensor(w, requires_grad=grad)
        out = torch.istft(st_, window=wt, **kw)
        refs[f"istft/{name}/case"] = case
        refs[f"istft/{name}/kwargs"] = json.dumps(kw)
        refs[f"istft/{name}/out"] = out.detach().numpy()
        if grad:
            g = rng.standard_normal(tuple(torch.view_as_real(out).shape) if out.is_complex()
                                    else tuple(out.shape))  # fmt: skip
            seen = torch.view_as_real(out) if out.is_complex() else out
            (seen * torch.tensor(g)).sum().backward()
            refs[f"istft/{name}/g"] = g
            refs[f"istft/{name}/grad_s"] = st_.grad.numpy()
            if wt is not None:
                refs[f"istft/{name}/grad_window"] = wt.grad.numpy()
    np.savez_compressed(DATA / "stft_torch.npz", **refs)

    wins = {}
    for dt in (torch.float32, torch.float64):
        d = str(dt).removeprefix("torch.")
        for n in (0, 1, 2, 5, 8):
            for periodic in (True, False):
                for kind in ("hann", "hamming", "blackman", "bartlett", "kaiser"):
                    f = getattr(torch, f"{kind}_window")
                    wins[f"{kind}_window/{json.dumps([n, periodic, d])}"] = f(n, periodic, dtype=dt)
                wins[f"hamming_window/{json.dumps([n, periodic, 0.6, 0.3, d])}"] = (
                    torch.hamming_window(n, periodic, 0.6, 0.3, dtype=dt)
                )
                wins[f"kaiser_window/{json.dumps([n, periodic, 5.0, d])}"] = torch.kaiser_window(
                    n, periodic, 5.0, dtype=dt
                )
            for sym in (True, False):
                extra = {
                    "bartlett": {}, "blackman": {}, "cosine": {}, "hamming": {}, "hann": {},
                    "nuttall": {}, "exponential": {"tau": 2.5}, "gaussian": {"std": 1.7},
                    "general_cosine": {"a": [0.4, 0.3, 0.2, 0.1]},
                    "general_hamming": {"alpha": 0.6}, "kaiser": {"beta": 4.0},
                }  # fmt: skip
                for kind, kw in extra.items():
                    f = getattr(torch.signal.windows, kind)
                    key = json.dumps([n, {**kw, "sym": sym, "dtype": d}])
                    wins[f"signal.{kind}/{key}"] = f(n, **kw, sym=sym, dtype=dt)
            if n > 1:
                key = json.dumps([n, {"center": 1.5, "sym": False, "dtype": d}])
                wins[f"signal.exponential/{key}"] = torch.signal.windows.exponential(
                    n, center=1.5, sym=False, dtype=dt
                )
    np.savez_compressed(DATA / "windows_torch.npz", **{k: v.numpy() for k, v in wins.items()})


if __name__ == "__main__":
    main()
