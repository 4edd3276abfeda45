"""Layout commands as the per-shard commands they stand for, on the worker that runs them.

A layout command (``Group``, ``GroupFree``, ``Tree``: one op over every shard of a layout)
names the layout and its keys' starts; the worker appends the commands of the shards it holds
(``Worker.mine``) to the run's list ``out``, in the sequential order. ``chains`` (a dict, or
None) also collects them per shard, for the kernel pool (:mod:`.parallel`: independent
chains run on threads); a reduction first runs what came before it (which may make its
input), then itself.

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

from ..commands import Free, Group, GroupFree, Kernel, Key, Keys, Tree

# expand(worker, layout command, per-shard commands so far, refs, errors, chains), by type


def _expand_group(w, c, out, refs, errors, chains) -> None:
    """A kernel per shard of the layout this worker holds (``Keys`` read key start + s)."""
    kernel, args, base, params, label, inplace = (
        c.kernel, c.args, c.out, c.params, c.label, c.inplace
    )  # fmt: skip
    for s in w.mine(c.desc):  # (a Key and a Kernel per shard of every op: built by make)
        a = tuple([Key.make((x.start + s, None)) if type(x) is Keys else x for x in args])
        cmd = Kernel.make((kernel, a, (base + s,), params, (label, s), inplace))
        out.append(cmd)
        if chains is not None:
            chains.setdefault(s, []).append(cmd)


def _expand_free(w, c, out, refs, errors, chains) -> None:
    shards = w.mine(c.desc)
    if shards:
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


EXPAND = {Group: _expand_group, GroupFree: _expand_free, Tree: _expand_tree}
