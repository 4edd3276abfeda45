"""Write the torch reference values that tests/unit/test_rnn.py compares against
(tests/unit/data/rnn_torch.npz). Needs torch (CPU), which the tests themselves do not: run
``python scripts/torch_refs_rnn.py`` where torch is installed. Inputs come from NumPy
generators with fixed seeds and are stored too.

Each case names a layer of ``nn`` as JSON ({"cls", "args", "kwargs"}) and a call: ``x`` the
(padded) input, ``lengths`` when it is packed (``enforce_sorted=False``), ``h0`` / ``c0`` when
given, ``steps`` for a cell (called on ``x[t]`` in turn, its state fed back). Stored: the
state_dict, the outputs, the gradient seeds ``g/<k>`` and the gradients of the input, the
initial state and every parameter of ``sum(out_k * g_k)``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

DATA = Path(__file__).resolve().parent.parent / "tests" / "unit" / "data"

T, B, IN, H = 5, 4, 3, 4
LENGTHS = [3, 5, 1, 4]  # not sorted: the layer sorts and unsorts
TWO_BI = {"num_layers": 2, "bidirectional": True}
CASES = {
    "rnn_tanh": ({"cls": "RNN", "args": [IN, H], "kwargs": TWO_BI}, {"h0": True}),
    "rnn_relu_bf": (
        {
            "cls": "RNN",
            "args": [IN, H],
            "kwargs": {**TWO_BI, "nonlinearity": "relu", "batch_first": True},
        },
        {},
    ),
    "lstm": ({"cls": "LSTM", "args": [IN, H], "kwargs": TWO_BI}, {"h0": True}),
    "lstm_bf_proj": (
        {"cls": "LSTM", "args": [IN, H], "kwargs": {**TWO_BI, "batch_first": True, "proj_size": 2}},
        {"h0": True},
    ),
    "gru": ({"cls": "GRU", "args": [IN, H], "kwargs": TWO_BI}, {"h0": True}),
    "gru_nobias_bf": (
        {"cls": "GRU", "args": [IN, H], "kwargs": {**TWO_BI, "bias": False, "batch_first": True}},
        {},
    ),
    "rnn_packed": (
        {"cls": "RNN", "args": [IN, H], "kwargs": TWO_BI},
        {"lengths": True, "h0": True},
    ),
    "lstm_packed_bf": (
        {"cls": "LSTM", "args": [IN, H], "kwargs": {**TWO_BI, "batch_first": True}},
        {"lengths": True, "h0": True},
    ),
    "gru_packed": ({"cls": "GRU", "args": [IN, H], "kwargs": TWO_BI}, {"lengths": True}),
    "gru_unbatched": (
        {"cls": "GRU", "args": [IN, H], "kwargs": TWO_BI},
        {"unbatched": True, "h0": True},
    ),
    "rnncell_relu": (
        {"cls": "RNNCell", "args": [IN, H], "kwargs": {"nonlinearity": "relu"}},
        {"steps": 3, "h0": True},
    ),
    "lstmcell": ({"cls": "LSTMCell", "args": [IN, H], "kwargs": {}}, {"steps": 3, "h0": True}),
    "grucell": ({"cls": "GRUCell", "args": [IN, H], "kwargs": {"bias": False}}, {"steps": 3}),
}


def state_shape(mod, batch):
    """The shape of h_0 (and c_0) for ``mod``; ``batch`` None: unbatched."""
    if isinstance(mod, torch.nn.RNNCellBase):
        return [(batch, mod.hidden_size)] * 2
    n = mod.num_layers * (2 if mod.bidirectional else 1)
    shapes = [(n, batch, mod.proj_size or mod.hidden_size), (n, batch, mod.hidden_size)]
    return [s if batch else s[:1] + s[2:] for s in shapes]


def run(mod, call, arrays):
    """The case's outputs (a list of tensors) and the leaves to differentiate."""
    x = torch.tensor(arrays["x"], requires_grad=True)
    leaves = {"x": x}
    lstm = isinstance(mod, (torch.nn.LSTM, torch.nn.LSTMCell))
    for k in ("h0", "c0"):
        if k in arrays:
            leaves[k] = torch.tensor(arrays[k], requires_grad=True)
    hx = None
    if "h0" in leaves:
        hx = (leaves["h0"], leaves["c0"]) if lstm else leaves["h0"]
    if "steps" in call:
        outs = []
        for t in range(call["steps"]):
            hx = mod(x[t], hx)
            outs.append(hx[0] if lstm else hx)
        return [torch.stack(outs), *(hx if lstm else [hx])[1:]], leaves
    inp = x
    if "lengths" in arrays:
        bf = mod.batch_first
        inp = pack_padded_sequence(x, torch.tensor(arrays["lengths"]), bf, enforce_sorted=False)
    out, state = mod(inp, hx)
    if "lengths" in arrays:
        padded, _ = pad_packed_sequence(out, mod.batch_first)
        outs = [out.data, padded]
    else:
        outs = [out]
    return outs + (list(state) if lstm else [state]), leaves


def main():
    rng = np.random.default_rng(2024)
    out = {}
    for i, (name, (spec, call)) in enumerate(CASES.items()):
        torch.manual_seed(i)
        mod = getattr(torch.nn, spec["cls"])(*spec["args"], **spec["kwargs"])
        bf = spec["kwargs"].get("batch_first", False)
        if "steps" in call:
            shape, batch = (call["steps"], B, IN), B
        elif call.get("unbatched"):
            shape, batch = (T, IN), None
        else:
            shape, batch = ((B, T, IN) if bf else (T, B, IN)), B
        arrays = {"x": rng.standard_normal(shape)}
        if call.get("lengths"):
            arrays["lengths"] = np.array(LENGTHS)
        if call.get("h0"):
            hs = state_shape(mod, batch)
            arrays["h0"] = rng.standard_normal(hs[0])
            if spec["cls"].startswith("LSTM"):
                arrays["c0"] = rng.standard_normal(hs[1])
        outs, leaves = run(mod, call, arrays)
        seeds = [rng.standard_normal(tuple(o.shape)) for o in outs]
        sum((o * torch.from_numpy(g)).sum() for o, g in zip(outs, seeds)).backward()
        out[f"{name}/spec"] = np.array(json.dumps([spec, call]))
        for k, a in arrays.items():
            out[f"{name}/in/{k}"] = a
        for j, (o, g) in enumerate(zip(outs, seeds)):
            out[f"{name}/out/{j}"], out[f"{name}/g/{j}"] = o.detach().numpy(), g
        for k, t in leaves.items():
            out[f"{name}/grad_in/{k}"] = t.grad.numpy()
        for k, v in mod.state_dict().items():
            out[f"{name}/state/{k}"] = v.numpy()
        for k, p in mod.named_parameters():
            out[f"{name}/grad/{k}"] = p.grad.numpy()
    np.savez_compressed(DATA / "rnn_torch.npz", **out)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    main()
