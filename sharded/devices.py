"""Devices of shards: which workers hold ``cpu``/``cuda``/``cuda:N`` data, and moving there.

A worker has one device. ``device="cpu"`` picks the CPU workers, ``"cuda"`` every GPU worker
(shards spread over all GPUs), ``"cuda:N"`` the GPU worker labelled N. A tensor may hold CPU
and GPU shards at once (give ``layout=st.Layout(workers=...)`` explicitly, or move part of
it); elementwise ops and reductions then run where each shard lives. Moving between devices
goes worker to worker through host memory (a GPU worker copies its block to the host, the
receiver copies it onto its own device).
"""

from __future__ import annotations

from .backend import parse_device
from .errors import BackendUnavailable


def matches(worker_device: str, device: str) -> bool:
    """Whether a worker on ``worker_device`` serves a request for ``device``."""
    if device == "cuda":
        return worker_device.startswith("cuda")
    return worker_device == device


def normalize(device) -> str:
    """``"cpu"``, ``"cuda"`` (any GPU) or ``"cuda:N"``."""
    d = str(device)
    return "cuda" if d == "cuda" else parse_device(d)


def workers_for(ex, device) -> list:
    """Indices of the workers serving ``device``; :class:`BackendUnavailable` if none."""
    dev = normalize(device)
    ids = [w.index for w in ex.workers if matches(w.device, dev)]
    if not ids:
        have = sorted({w.device for w in ex.workers})
        why = (
            "no GPU worker exists in this session (start one on a node with a GPU, or "
            "st.init(executor='local', devices=[...]) where CuPy sees a GPU)"
            if dev.startswith("cuda")
            else "every worker is a GPU worker"
        )
        raise BackendUnavailable(
            f"device {dev!r} is not available: {why}; this session's "
            f"workers are on {', '.join(have)}"
        )
    return ids
