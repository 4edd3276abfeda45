"""Train a small byte-level GPT on sharded and, with ``--torch``, the same model in torch from
the same initial weights and batches, printing the loss of every step and the largest
relative difference between the two.

The model (:func:`make_gpt`) is written once against torch's API and built with either
library's ``nn`` and ``functional``: token and position embeddings, ``n_layer`` pre-norm
blocks of causal self-attention (``F.scaled_dot_product_attention``) and a GELU MLP, a final
LayerNorm and a separate output head over the 256 byte values. Training is AdamW on random
windows of a byte corpus (the repository's README and sources by default).

sharded runs once per ``--split``: ``batch`` splits every batch across the workers along
the batch dim, ``seq`` along the sequence dim (attention then copies each key/value block
to the query shards). torch runs in a subprocess (``--torch-python``, default this
interpreter), so the two may live in separate environments; they exchange ``.npz`` files.
Afterwards each library's final ``state_dict`` is loaded into the other's model and the loss
of a held-out batch compared. ``--check`` exits 1 when a difference exceeds the tolerance
of the dtype (1e-9 relative in float64, 1e-4 in float32).

Examples::

    python scripts/gpt_train.py --steps 50 --torch                 # 2 layers, 4 heads, d=128
    python scripts/gpt_train.py --dtype float32 --torch --check
    python scripts/gpt_train.py --write-test-refs   # where torch is: tests/unit/data/gpt_torch.npz

The last form (torch only) writes the tiny run that tests/unit/test_gpt_train.py replays.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TOL = {"float64": 1e-9, "float32": 1e-4}
# The run tests/unit/test_gpt_train.py replays (small enough for a unit test).
TINY = dict(n_layer=1, n_head=2, d=16, ctx=16, batch=4, steps=5, lr=1e-2, seed=0)


def make_gpt(nn, F, n_layer, n_head, d, ctx, vocab=256):
    """A GPT built from ``nn`` and ``F`` (torch's or sharded's): ``model(idx)`` gives the
    logits ``(B, T, vocab)`` of byte sequences ``idx`` ``(B, T)``, ``T <= ctx``."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.fc_out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, _ = x.shape
            q, k, v = self.qkv(self.ln_1(x)).split(d, dim=-1)

            def heads(t):  # (B, T, d) -> (B, n_head, T, d / n_head)
                return t.reshape(B, T, n_head, d // n_head).transpose(1, 2)

            a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
            return x + self.fc_out(F.gelu(self.fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos.weight[: idx.shape[1]]
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return GPT()


def init_state(shapes: dict, seed: int) -> dict:
    """Initial weights for the parameters ``shapes`` (name -> shape), as GPT-2 draws them:
    N(0, 0.02) weights and embeddings, zero biases, unit LayerNorm scales; float64."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in sorted(shapes):
        shape = shapes[name]
        if ".ln_" in f".{name}" and name.endswith(".weight"):  # LayerNorm scales
            out[name] = np.ones(shape)
        elif name.endswith("bias"):
            out[name] = np.zeros(shape)
        else:
            out[name] = rng.normal(0.0, 0.02, shape)
    return out


def corpus(path=None) -> np.ndarray:
    """The training bytes: ``path``'s, or the repository's README and Python sources."""
    files = (
        [Path(path)] if path else [ROOT / "README.md", *sorted((ROOT / "sharded").rglob("*.py"))]
    )
    return np.frombuffer(b"".join(f.read_bytes() for f in files), np.uint8)


def batches(data: np.ndarray, steps: int, batch: int, ctx: int, seed: int) -> np.ndarray:
    """``steps + 1`` batches (the last one held out) of ``ctx + 1`` consecutive bytes."""
    rng = np.random.default_rng(seed + 1)
    starts = rng.integers(0, len(data) - ctx - 1, size=(steps + 1, batch))
    return np.stack([data[s : s + ctx + 1] for s in starts.ravel()]).reshape(steps + 1, batch, -1)


# ------------------------------------------------------------------------------------ torch
def torch_train(cfg: dict, init: dict, tokens: np.ndarray, dtype: str):
    """Train in torch: ``(losses, seconds per step, final state, held-out loss)``."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = make_gpt(torch.nn, F, cfg["n_layer"], cfg["n_head"], cfg["d"], cfg["ctx"])
    model = model.to(getattr(torch, dtype))
    model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    losses, times = [], []
    for step in range(len(tokens) - 1):
        t0 = time.perf_counter()
        loss = _torch_loss(model, tokens[step])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append(time.perf_counter() - t0)
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    return np.array(losses), np.array(times), state, _torch_eval(cfg, state, tokens[-1], dtype)


def _torch_loss(model, tokens):
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(tokens.astype(np.int64))
    logits = model(t[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), t[:, 1:].reshape(-1))


def _torch_eval(cfg, state, tokens, dtype):
    import torch
    import torch.nn.functional as F

    model = make_gpt(torch.nn, F, cfg["n_layer"], cfg["n_head"], cfg["d"], cfg["ctx"])
    model = model.to(getattr(torch, dtype))
    model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    with torch.no_grad():
        return _torch_loss(model, tokens).item()


def _torch_worker(inp: str, out: str) -> None:
    """The subprocess side of ``--torch``: train or evaluate as ``inp`` says."""
    import torch

    torch.set_num_threads(int(json.loads(str(np.load(inp)["cfg"])).get("threads", 1)))
    z = np.load(inp)
    cfg, dtype = json.loads(str(z["cfg"])), str(z["dtype"])
    init = {k[5:]: z[k] for k in z.files if k.startswith("init/")}
    if "mode" in z.files and str(z["mode"]) == "eval":
        np.savez(out, eval_loss=_torch_eval(cfg, init, z["tokens"][-1], dtype))
        return
    losses, times, state, ev = torch_train(cfg, init, z["tokens"], dtype)
    np.savez(
        out, losses=losses, times=times, eval_loss=ev, **{f"state/{k}": v for k, v in state.items()}
    )


def run_torch(python: str, cfg: dict, init: dict, tokens, dtype, mode="train") -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
        np.savez(
            inp,
            cfg=json.dumps(cfg),
            dtype=dtype,
            mode=mode,
            tokens=tokens,
            **{f"init/{k}": v for k, v in init.items()},
        )
        subprocess.run([python, __file__, "--torch-worker", str(inp), str(out)], check=True)
        z = np.load(out)
        return {k: z[k] for k in z.files}


# ---------------------------------------------------------------------------------- sharded
def sharded_model(cfg: dict, state: dict, dtype: str):
    """The GPT on sharded with ``state`` (NumPy arrays) loaded, in ``dtype``."""
    import sharded as st

    model = make_gpt(st.nn, st.nn.functional, cfg["n_layer"], cfg["n_head"], cfg["d"], cfg["ctx"])
    model = model.to(getattr(st, dtype))
    model.load_state_dict({k: st.tensor(np.asarray(v, dtype)) for k, v in state.items()})
    return model


def sharded_loss(model, tokens: np.ndarray, split: str | None, shards: int = 2):
    """The mean next-byte cross-entropy of ``tokens`` ``(B, ctx + 1)``, the batch placed
    split in ``shards`` along the batch (``"batch"``) or the sequence (``"seq"``) dim."""
    import sharded as st

    place = {} if split is None else dict(shards=shards, dim=0 if split == "batch" else 1)
    x = st.tensor(tokens[:, :-1].astype(np.int64), **place)
    y = st.tensor(tokens[:, 1:].astype(np.int64), **place)
    logits = model(x)
    return st.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def sharded_train(cfg: dict, init: dict, tokens: np.ndarray, dtype: str, split: str):
    """Train on sharded (a live session): ``(losses, seconds per step, final state)``."""
    import sharded as st

    model = sharded_model(cfg, init, dtype)
    opt = st.optim.AdamW(model.parameters(), lr=cfg["lr"])
    losses, times = [], []
    for step in range(len(tokens) - 1):
        t0 = time.perf_counter()
        loss = sharded_loss(model, tokens[step], split)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())  # the read waits for the step: timings are whole steps
        times.append(time.perf_counter() - t0)
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    return np.array(losses), np.array(times), state


def _rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.abs(np.asarray(b))))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--ctx", type=int, default=256)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=sorted(TOL), default="float64")
    p.add_argument("--split", nargs="+", choices=["batch", "seq"], default=["batch", "seq"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--executor", choices=["local", "ray"], default="local")
    p.add_argument("--corpus", help="a file to train on (default: the repository's text)")
    p.add_argument("--torch", action="store_true", help="train the same model in torch too")
    p.add_argument("--torch-python", default=sys.executable, help="the interpreter with torch")
    p.add_argument("--torch-threads", type=int, default=1)
    p.add_argument("--check", action="store_true", help="exit 1 when a difference is too big")
    p.add_argument("--write-test-refs", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--torch-worker", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.torch_worker:
        _torch_worker(*a.torch_worker)
        return 0
    if a.write_test_refs:
        write_test_refs()
        return 0
    import sharded as st

    cfg = dict(
        n_layer=a.n_layer, n_head=a.n_head, d=a.d, ctx=a.ctx, lr=a.lr, threads=a.torch_threads
    )
    tokens = batches(corpus(a.corpus), a.steps, a.batch, a.ctx, a.seed)
    st.init(executor=a.executor, num_workers=a.workers)
    model = make_gpt(st.nn, st.nn.functional, a.n_layer, a.n_head, a.d, a.ctx)
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    init = init_state(shapes, a.seed)
    print(f"GPT: {a.n_layer} layers, {a.n_head} heads, d={a.d}, context {a.ctx}, batch {a.batch}, "
          f"{sum(int(np.prod(s)) for s in shapes.values())} parameters, {a.dtype}, "
          f"{a.workers} workers ({a.executor})")  # fmt: skip
    ref = run_torch(a.torch_python, cfg, init, tokens, a.dtype) if a.torch else None
    runs = {}
    for split in a.split:
        runs[split] = sharded_train(cfg, init, tokens, a.dtype, split)
    cols = [f"sharded/{s}" for s in runs] + (["torch", "max rel diff"] if ref else [])
    print("step " + " ".join(f"{c:>18}" for c in cols))
    for i in range(a.steps):
        row = [runs[s][0][i] for s in runs] + ([ref["losses"][i]] if ref else [])
        rel = [_rel(runs[s][0][i], ref["losses"][i]) for s in runs] if ref else []
        print(
            f"{i:4d} "
            + " ".join(f"{v:18.12f}" for v in row)
            + (f" {max(rel):18.3e}" if rel else "")
        )
    for s, (_, times, _) in runs.items():
        ms = np.median(times) * 1e3
        print(f"sharded/{s}: {ms:.1f} ms per step (median; the first {times[0]:.2f} s)")
    if not ref:
        return 0
    ms = np.median(ref["times"]) * 1e3
    print(f"torch: {ms:.1f} ms per step (median, {a.torch_threads} threads)")
    worst = {s: _rel(runs[s][0], ref["losses"]) for s in runs}
    # each library's final state_dict loaded into the other's model: the held-out loss agrees
    torch_state = {k[6:]: ref[k] for k in ref if k.startswith("state/")}
    back = sharded_loss(sharded_model(cfg, torch_state, a.dtype), tokens[-1], None).item()
    worst["torch state in sharded"] = _rel(back, ref["eval_loss"])
    for s, (_, _, state) in runs.items():
        ours = sharded_loss(sharded_model(cfg, state, a.dtype), tokens[-1], None).item()
        theirs = float(run_torch(a.torch_python, cfg, state, tokens, a.dtype, "eval")["eval_loss"])
        worst[f"sharded/{s} state in torch"] = _rel(theirs, ours)
    ok = all(v <= TOL[a.dtype] for v in worst.values())
    for k, v in worst.items():
        print(f"max rel diff, {k}: {v:.3e}")
    print(f"{'PASS' if ok else 'FAIL'}: tolerance {TOL[a.dtype]:g} ({a.dtype})")
    return 0 if ok or not a.check else 1


def write_test_refs(path=ROOT / "tests" / "unit" / "data" / "gpt_torch.npz") -> None:
    """Record the ``TINY`` run in torch (float64 and float32) for tests/unit/test_gpt_train.py."""
    import torch

    torch.set_num_threads(1)
    cfg = {k: TINY[k] for k in ("n_layer", "n_head", "d", "ctx", "lr")}
    text = (ROOT / "README.md").read_bytes()[:4096]
    tokens = batches(np.frombuffer(text, np.uint8), TINY["steps"], TINY["batch"], TINY["ctx"], 0)
    model = make_gpt(
        torch.nn, torch.nn.functional, *(cfg[k] for k in ("n_layer", "n_head", "d", "ctx"))
    )
    init = init_state({k: tuple(v.shape) for k, v in model.state_dict().items()}, TINY["seed"])
    out = {"cfg": json.dumps(cfg), "tokens": tokens, **{f"init/{k}": v for k, v in init.items()}}
    for dtype in TOL:
        losses, _, _, ev = torch_train(cfg, init, tokens, dtype)
        out[f"{dtype}/losses"], out[f"{dtype}/eval_loss"] = losses, ev
    np.savez_compressed(path, **out)


if __name__ == "__main__":
    sys.exit(main())
