"""A program's window of small per-shard chains run once over the shards stacked.

A worker that owns a node's cores holds several shards of a tensor, and an op on it comes as
one kernel per shard. For blocks of a few hundred elements a kernel costs its bookkeeping,
not its arithmetic (about 1.3 us of a NumPy call and a kernel wrapper for 0.5 us of ufunc),
so ``z + 1`` on four shards costs four times ``z + 1`` on their concatenation. A stored
``st.jit`` program knows its fusion windows at definition: when a window is its shards'
chains of the same kernels with the same parameters and constants (:func:`plan`), a call
whose window is too small to fuse block by block (:meth:`Compiled.run
<sharded.runtime.worker.program.Compiled.run>`) runs it as one chain over the chains'
operands concatenated along dim 0 (:func:`run`), then cuts each kept output back into its
shards' blocks. The kernels are elementwise (``fusable``: the fusion already evaluates them
block by block along dim 0), so every element is computed as in its own shard's kernel:
bit-identical. Outputs the window frees are never stored.

Anything unexpected at a call (an operand missing or poisoned, operands of a chain of
different shapes, chains of different dtypes or trailing dims, a kernel that raises) makes
:func:`run` return False before the store changes, and the window runs command by command,
recording its errors as ever.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..commands import Const, Free, Key
from .parallel import window_chains


class Stack(NamedTuple):
    """A window as one chain over stacked shards.

    ``steps``: per kernel of a chain ``(fn, params, operands)``, an operand ``(0, value)``
    (a scalar constant), ``(1, slot)`` (the chain's ``slot``-th outside operand) or
    ``(2, step)`` (that step's output). ``ins[c]``: chain ``c``'s outside operand symbols,
    by slot. ``keep``: ``(step, [chain c's output symbol, or None where the window frees
    it])`` of the steps whose output some chain keeps. ``after``: outside symbols the window
    frees. ``count``: its kernel commands."""

    steps: list
    ins: list
    keep: list
    after: list
    count: int


def plan(cmds, kernels) -> Stack | None:
    """``cmds`` (a fusion window's commands, keys as symbols) as a :class:`Stack`, or None
    when they are not two or more chains of one shape (same kernels, parameters and scalar
    constants; unsliced operands; each kernel one output).

    Examples
    --------
    >>> from sharded.runtime.commands import Kernel
    >>> from sharded.runtime.worker.core import KERNELS
    >>> add = lambda i, o: Kernel("add", (Key(i), Const(1.0)), (o,), {}, None, False)
    >>> s = plan([add(1, 10), add(2, 11), add(10, 12), add(11, 13), Free((10, 11))], KERNELS)
    >>> s.ins, s.keep, s.count
    ([[1], [2]], [(1, [12, 13])], 4)
    """
    got = window_chains(cmds)
    if got is None:
        return None
    chains, after = got
    runs = [[c for c in ch if type(c) is not Free] for ch in chains]
    first = runs[0]
    if any(len(r) != len(first) for r in runs):
        return None
    made = [{} for _ in runs]  # per chain: symbol -> step that made it
    ins: list = [[] for _ in runs]
    steps = []
    for t, cmd in enumerate(first):
        fn = kernels.get(cmd.kernel)
        if fn is None or len(cmd.outs) != 1:
            return None
        ops = []
        for j, a in enumerate(cmd.args):
            op = _operand([r[t] for r in runs], j, made, ins)
            if op is None:
                return None
            ops.append(op)
        if any(
            r[t].kernel != cmd.kernel or not _same(r[t].params, cmd.params) or len(r[t].outs) != 1
            for r in runs
        ):
            return None
        for c, r in enumerate(runs):
            made[c][r[t].outs[0]] = t
        steps.append((fn, cmd.params or {}, tuple(ops)))
    freed = {k for c in cmds if type(c) is Free for k in c.keys}
    keep = []
    for t in range(len(first)):
        outs = [None if r[t].outs[0] in freed else r[t].outs[0] for r in runs]
        if any(o is not None for o in outs):
            keep.append((t, outs))
    return Stack(steps, ins, keep, list(after), sum(map(len, runs)))


def _same(p, q) -> bool:
    """Whether parameter dicts ``p`` and ``q`` are equal (False where they cannot say)."""
    try:
        return bool(p == q)
    except (TypeError, ValueError):  # (an array among them)
        return False


def _operand(same, j, made, ins):
    """Operand ``j`` of one step of every chain (``same``) as a stacked operand, or None."""
    args = [c.args[j] for c in same]
    a0 = args[0]
    if type(a0) is Const:
        ok = not isinstance(a0.value, np.ndarray) and all(
            type(a) is Const and type(a.value) is type(a0.value) and a.value == a0.value
            for a in args
        )
        return (0, a0.value) if ok else None
    if any(type(a) is not Key or a.slices is not None for a in args):
        return None
    steps = {made[c].get(a.key) for c, a in enumerate(args)}
    if len(steps) != 1:
        return None
    t = steps.pop()
    if t is not None:
        return (2, t)
    if len({a.key for a in args}) != len(args):  # a block every chain reads (no stacking)
        return None
    slot = len(ins[0])
    for c, a in enumerate(args):
        ins[c].append(a.key)
    return (1, slot)


def run(w, stack: Stack, bind) -> bool:
    """Run ``stack`` on worker ``w`` (``bind(symbol)``: the key a symbol names at this call);
    False, the store untouched, when it cannot (the module docstring)."""
    store = w.store
    cols: list = []  # per slot: each chain's block
    for c, syms in enumerate(stack.ins):
        for slot, s in enumerate(syms):
            arr = store.get(bind(s))
            if type(arr) is not np.ndarray or arr.ndim == 0:
                return False
            if c == 0:
                cols.append([arr])
            else:
                cols[slot].append(arr)
    if not cols:
        return False
    lens, ndim = [b.shape[0] for b in cols[0]], cols[0][0].ndim
    for col in cols:  # (every operand of a chain has its rows: dim 0 is never broadcast)
        a0 = col[0]
        for c, b in enumerate(col):
            if b.dtype != a0.dtype or b.ndim != ndim or b.shape[1:] != a0.shape[1:]:
                return False
            if b.shape[0] != lens[c]:
                return False
    xp = w.xp
    vals: list = []
    stacked = [np.concatenate(col) for col in cols]
    try:
        for fn, params, ops in stack.steps:
            args = [v if k == 0 else stacked[v] if k == 1 else vals[v] for k, v in ops]
            r = fn(xp, *args, **params)
            if type(r) is not np.ndarray or r.shape[:1] != (sum(lens),):
                return False
            vals.append(r)
    except Exception:  # the command-by-command run records it
        return False
    cuts = np.cumsum(lens)[:-1]
    for t, outs in stack.keep:
        for k, block in zip(outs, np.split(vals[t], cuts)):
            if k is not None:  # (its own block: pooled and written in place alone)
                store[bind(k)] = block.copy()
    if stack.after:
        w._free([bind(s) for s in stack.after])
    w.commands_run += stack.count
    return True
