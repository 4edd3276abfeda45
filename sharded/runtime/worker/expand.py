"""Layout commands as the per-shard commands they stand for, on the worker that runs them.

A layout command (``Group``, ``GroupFree``, ``Tree``: one op over every shard of a layout)
names the layout and its keys' starts; the worker appends the commands of the shards it holds
(``Worker.mine``) to the run's list ``out``, in the sequential order. ``chains`` (a dict, or
None) also collects them per shard, for the kernel pool (:mod:`.parallel`: independent
chains run on threads); a reduction first runs what came before it (which may make its
input), then itself.

Tiny shards skip the per-shard records: an op whose stored operands hold fewer than
:data:`TINY_ELEMS` elements together (their product bounds an elementwise output) runs its
kernel on each shard straight from the layout command, after what came before it, as a
reduction does, and its frees run at once. Its kernels are the same, with the same operands,
in the same order; what it skips (a ``Key`` and a ``Kernel`` per shard, the fusion windows'
look at each, the run loop) cost three times the kernel of a 1,000-element block, so a worker
holding 4 such shards of every op ran them at half the speed of two workers holding 2 each.
Such outputs are below the worker's smallest pooled block, so they are not offered the pool.

Examples
--------
>>> from sharded.runtime.worker.core import Worker
>>> from sharded.runtime.commands import Group, Keys, Mod
>>> w, out, chains = Worker(0), [], {}
>>> cmd = Group("neg", Mod(1, 2), (Keys(10),), 20, None, None, False)
>>> EXPAND[Group](w, cmd, out, (), [], chains)
>>> [c.outs for c in out], sorted(chains)
([(20,), (21,)], [0, 1])
"""

from __future__ import annotations

import numpy as np

from ..commands import Const, Free, Group, GroupFree, Kernel, Key, Keys, Tree
from .program import failed

# operands of fewer elements (the product of their sizes) run straight from their layout
# command: their kernels take about a microsecond, the records around them three
TINY_ELEMS = 1 << 12
_SCALARS = (int, float, bool, complex)

# expand(worker, layout command, per-shard commands so far, refs, errors, chains), by type


def _expand_group(w, c, out, refs, errors, chains) -> None:
    """A kernel per shard of the layout this worker holds (``Keys`` read key start + s)."""
    kernel, args, base, params, label, inplace = (
        c.kernel, c.args, c.out, c.params, c.label, c.inplace
    )  # fmt: skip
    shards = w.mine(c.desc)
    if chains is None and shards and _tiny(w, args, shards[0]):
        if out:  # (what came before runs first: its outputs may be this op's operands)
            errors += w._run_nested(out, refs)
            out.clear()
        _run_tiny(w, c, shards, refs, errors)
        return
    for s in shards:  # (a Key and a Kernel per shard of every op: built by make)
        a = tuple([Key.make((x.start + s, None)) if type(x) is Keys else x for x in args])
        cmd = Kernel.make((kernel, a, (base + s,), params, (label, s), inplace))
        out.append(cmd)
        if chains is not None:
            chains.setdefault(s, []).append(cmd)


def _expand_free(w, c, out, refs, errors, chains) -> None:
    shards = w.mine(c.desc)
    if shards and not out and chains is None:  # (nothing waits to run: free them now)
        w._free([c.start + s for s in shards])
    elif shards:
        out.append(Free.make(([c.start + s for s in shards],)))
        if chains is not None:
            for s in shards:
                chains.setdefault(s, []).append(Free.make(([c.start + s],)))


def _expand_tree(w, c, out, refs, errors, chains) -> None:
    """This worker's part of a reduction, after the commands before it (which may make its
    input)."""
    if out:
        errors += w._run_nested(out, refs, chains)
        out.clear()
        if chains is not None:
            chains.clear()
    mail = w._tmail
    if mail is not None:  # the tree's tag: every worker counts the same trees
        mail.trees += 1
    w._tree(c.spec, set(w.mine(c.desc)), refs, errors, mail)


def _tiny(w, args, s) -> bool:
    """Whether shard ``s``'s operands are stored, plain (whole keys, scalar or array
    constants) and hold fewer than :data:`TINY_ELEMS` elements together, below the sizes
    where the worker fuses or runs shards on threads (one shard tells: a layout's shards
    differ by a row or so)."""
    store, n, keys = w.store, 1, False
    for x in args:
        kind = type(x)
        if kind is Keys:
            arr = store.get(x.start + s)
            if arr is None:
                return False
            n *= arr.size
            keys = True
        elif kind is Const:
            v = x.value
            if isinstance(v, np.ndarray):
                n *= v.size
            elif not isinstance(v, _SCALARS):
                return False
        else:  # (a fixed key, a ref, mail: the general path)
            return False
    # (below the worker's fusion and kernel-pool minimums too: nothing else would apply)
    return keys and n < TINY_ELEMS and n < w.fusion_min and n < w.par_min


def _run_tiny(w, c, shards, refs, errors) -> None:
    """Kernel ``c.kernel`` on each of ``shards``, in order: a new output stored as the general
    path stores it, an in-place one through :meth:`Worker.call`; a shard whose operand is
    missing (poisoned) goes the general way, which reports it."""
    store, xp, to_device = w.store, w.xp, w.backend.to_device
    fn, params, label, inplace = w.kernels.get(c.kernel), c.params or {}, c.label, c.inplace
    for s in shards:
        out = c.out + s
        if inplace and w.published_seen:
            w._detach((out,))
        vals = []
        for x in c.args:
            v = store.get(x.start + s) if type(x) is Keys else x.value
            if v is None:
                break
            vals.append(to_device(v) if type(v) is np.ndarray and type(x) is Const else v)
        else:
            if fn is not None and not inplace:  # (Worker.call's work, inline: the usual case)
                w.commands_run += 1
                try:
                    store[out] = xp.asarray(fn(xp, *vals, **params))
                except Exception as e:  # reported to the driver, which raises it typed
                    failed(e, (label, s), w.index, (out,), False, store, w.poisoned, errors)
                continue
            if fn is not None:
                w.call(fn, vals, (out,), params, (label, s), inplace, errors, False)
                continue
        a = tuple([Key.make((x.start + s, None)) if type(x) is Keys else x for x in c.args])
        w._kernel(Kernel.make((c.kernel, a, (out,), params, (label, s), inplace)), refs, errors)


EXPAND = {Group: _expand_group, GroupFree: _expand_free, Tree: _expand_tree}
