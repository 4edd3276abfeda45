"""Step counts that ``st.jit`` can replay (torch's ``capturable=True``).

A replay of a jitted training step re-issues the recorded worker commands and runs no Python,
so an optimizer must not keep Python state that changes from step to step: Adam's bias
corrections ``1 - beta ** t`` would be new constants in every recording (the recordings never
agree, ``st.jit`` gives up with ``TraceError``), and a Python ``step`` that only counts would
stop counting during replays. A *capturable* optimizer keeps ``state["step"]`` as a 0-d
float64 tensor, made once when its state is made (a copy on each worker of the parameter,
so that combining it with the parameter's shards moves nothing) and advanced in place; the
bias corrections are tensor ops on it. Every step then queues the same commands on the same
keys, and the second and third traced calls agree.

When this applies (the choice): always with ``capturable=True``; and automatically the first
time ``step()`` runs while ``st.jit`` records, whatever the flag says (a traced call cannot
have been meant to bake its step count in, and a Python count would go stale in replays).
Once ``state["step"]`` holds a tensor it stays one, in eager steps too. The tensor route
equals the Python-float one to float rounding (as torch's capturable Adam equals its
default), not bit for bit; an optimizer never traced with ``capturable=False`` keeps its
Python ints and its exact former results. Hyper-parameters (``lr`` changed by a scheduler)
stay Python floats: a jitted step bakes in the values it was traced with (``f.reset()``
after changing them; see :mod:`sharded.jit.api`).
"""

from __future__ import annotations

import math

from .. import dtypes as D
from ..layout import Layout
from ..ops.creation.prims import full
from ..tensor import ShardedTensor

__all__: list = []


def tracing(p: ShardedTensor) -> bool:
    """Whether ``st.jit`` is recording the session ``p`` lives in."""
    return getattr(p._storage.session.executor, "recorder", None) is not None


def step_tensor(p: ShardedTensor, value=0) -> ShardedTensor:
    """A 0-d float64 tensor holding ``value``, one copy on each worker of ``p``: an operand
    that each of ``p``'s shards finds on its own worker, and whose placement depends on
    ``p`` only (a tensor placed round robin would sit elsewhere in each recording)."""
    workers = tuple(sorted(set(p._layout.workers)))
    lay = Layout.from_bounds((), (), workers, replicated=True)
    # the bound layout places it; a device is named only to pass the check (``p.device``
    # of a parameter with CPU and GPU shards is "mixed(...)")
    device = p._storage.session.executor.workers[workers[0]].device
    return full((), float(value), dtype=D.float64, layout=lay, device=device)


def advance(g: dict, p: ShardedTensor, state: dict):
    """Count one more step of ``p`` and return the count: a Python int, or the step tensor
    (advanced in place) when the group is capturable, a trace is recording, or the state
    already holds a tensor. A Python count becomes a tensor here, once."""
    t = state["step"]
    if isinstance(t, ShardedTensor):
        return t.add_(1)
    if g.get("capturable") or tracing(p):
        state["step"] = step_tensor(p, t + 1)
        return state["step"]
    state["step"] = t + 1
    return t + 1


def bias_corrections(b1: float, b2: float, t):
    """Adam's ``1 - b1**t`` and ``sqrt(1 - b2**t)``: Python floats for an int ``t``, 0-d
    tensors (on ``t``'s workers) for a step tensor."""
    if isinstance(t, ShardedTensor):
        return 1 - b1**t, (1 - b2**t).sqrt()
    return 1 - b1**t, math.sqrt(1 - b2**t)


def load_step(p: ShardedTensor, value, capturable: bool):
    """A saved ``step`` (an int or a tensor, as torch saves it) for parameter ``p``: a step
    tensor on ``p``'s workers for a capturable group, else a Python int (read once)."""
    if capturable:
        if isinstance(value, ShardedTensor):
            return step_tensor(p).copy_(value.detach())
        return step_tensor(p, value)
    if isinstance(value, ShardedTensor):
        return int(value.item())
    return int(value)
