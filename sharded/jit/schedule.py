"""The order in which a replay re-issues a traced program that moves data between workers.

Every export (a piece of a shard handed to another worker) costs the driver one actor call
to its source worker, and every shipment one call per worker. The eager order is only one
valid order: a replay may issue the commands in any order that keeps every dependency, so
:func:`schedule` puts them in *waves*, each meant to cost at most two shipments (the executor
ships the queued work on its own before a command that takes refs, unless only refs of the
same export call precede it, and before a reduction tree across workers, unless only trees
precede it; an export call ships everything queued). Wave ``w`` holds first the commands
that take the refs of wave ``w - 1``'s exports, then the other work that needs nothing of
this wave's trees; then this wave's reduction trees across workers, together (the first one
ships the work before it); then the work that reads their results (it rides in the trees'
shipment: the parents wait for their children's partials only, which that work needs
anyway); then all the exports the wave feeds, issued as one call per worker. A tree that
reads the work after the trees waits for the next wave.

Dependencies are the keys a command reads, writes or frees (a later command that writes or
frees a key an earlier one reads or writes comes after it: the per-worker queues run in
order) and the export handles a command consumes. A kernel's result may be a view of its
inputs (NumPy's reshape, transpose, slicing), so an in-place write also orders itself after
and before every command touching a key that may share memory with its target: the keys
connected to it through any non-in-place command, a conservative closure (keys of tensors
made before the call, which may view one another, count as one).
"""

from __future__ import annotations

from ..runtime.commands import (
    Exported,
    Fresh,
    JitExport,
    JitFree,
    JitGroup,
    JitGroupFree,
    JitSubmit,
    JitTree,
    JitWave,
    Key,
    Keys,
    shift,
)

__all__ = ["schedule"]


# touches(command) -> (keys it reads, keys it writes, exports it consumes), by record type
def _touch_group(c):
    n = len(c.layout.workers)
    reads = [shift(a.start, s) for a in c.args if type(a) is Keys for s in range(n)]
    writes = [shift(c.out, s) for s in range(n)]
    return reads + (writes if c.inplace else []), writes, ()


def _touch_tree(c):
    """A reduction tree: every shard of its input, every group's result."""
    spec = c.spec
    reads = [shift(spec.start, s) for s in range(len(c.layout.workers))]
    return reads, [shift(o, g) for o in spec.outs for g in range(len(spec.groups))], ()


def _touch_submit(c):
    reads = [a.key for a in c.args if type(a) is Key]
    used = tuple(a.export for a in c.args if type(a) is Exported)
    return reads + (list(c.outs) if c.inplace else []), list(c.outs), used


def _touch_export(c):
    return [key for items in c.requests.values() for key, *_ in items], [], ()


_TOUCHES = {
    JitGroup: _touch_group,
    JitGroupFree: lambda c: ([], [Fresh(k) for k in c.keys], ()),
    JitTree: _touch_tree,
    JitSubmit: _touch_submit,
    JitFree: lambda c: ([], [Fresh(k) for k in c.keys], ()),
    JitExport: _touch_export,
}


def _tree(c) -> bool:
    """Whether ``c`` is a reduction tree across workers (partials move between them)."""
    return type(c) is JitTree and bool(c.edges)


def _inplace(c) -> bool:
    return type(c) in (JitGroup, JitSubmit) and bool(c.inplace)


def _alias_classes(cmds, touches):
    """``key -> class``: keys joined when a non-in-place command reads one and makes the
    other (its result may be a view of its input)."""
    parent: dict = {}

    def find(k):
        if type(k) is not Fresh:
            k = "old"  # tensors made before the call may view one another: one class
        root = k
        while parent.get(root, root) != root:
            root = parent[root]
        while k != root:  # path compression
            parent[k], k = root, parent.get(k, k)
        return root

    for c, (reads, writes, _) in zip(cmds, touches):
        if type(c) in (JitGroup, JitSubmit) and not _inplace(c):
            for o in writes:
                for k in reads:
                    a, b = find(o), find(k)
                    if a != b:
                        parent[a] = b
    return find


def schedule(cmds) -> list:
    """``cmds`` reordered in waves (see the module's docstring): commands taking refs, the
    other work, the trees across workers, the work reading them, and the exports as one
    ``JitWave`` item at the wave's end. Returns the items in issue order.

    Examples
    --------
    >>> def s(w, args, out):
    ...     return JitSubmit(w, "k", args, (Fresh(out),), {}, None, False)
    >>> cmds = [s(0, (Key(1),), 1), JitExport(0, {0: [(Fresh(1), None)]}),
    ...         s(0, (Key(2),), 2), JitExport(1, {0: [(Fresh(2), None)]}),
    ...         s(1, (Exported(0, 0, 0), Exported(1, 0, 0)), 3)]
    >>> [type(c).__name__ for c in schedule(cmds)]
    ['JitSubmit', 'JitSubmit', 'JitWave', 'JitSubmit']
    """
    touches = [_TOUCHES[type(c)](c) for c in cmds]
    cls = _alias_classes(cmds, touches)
    last_inplace: dict = {}  # alias class -> the last in-place command writing into it
    seen: dict = {}  # alias class -> indices of the commands that touched it
    last_write: dict = {}  # key -> index of the last command writing it
    reads_since: dict = {}  # key -> indices of commands reading it since that write
    export_at: dict = {}  # export number -> its command index
    # stage 2w: wave w's first part (commands taking the last wave's refs first, then work);
    # stage 2w + 1: its trees, then the work that reads them; then the wave's exports
    stage = [0] * len(cmds)
    for i, c in enumerate(cmds):
        reads, writes, used = touches[i]
        deps = set()
        classes = {cls(k) for k in reads} | {cls(k) for k in writes}
        for a in classes:
            j = last_inplace.get(a)
            if j is not None:
                deps.add(j)
        if _inplace(c):
            for a in {cls(k) for k in writes}:
                deps.update(seen.get(a, ()))
                last_inplace[a] = i
        for a in classes:
            seen.setdefault(a, []).append(i)
        for k in reads:
            j = last_write.get(k)
            if j is not None:
                deps.add(j)
        for k in writes:
            j = last_write.get(k)
            if j is not None:
                deps.add(j)
            deps.update(reads_since.get(k, ()))
        deps.update(export_at[n] for n in used)
        stage[i] = _stage(c, used, [(cmds[j], stage[j], bool(touches[j][2])) for j in deps])
        for k in reads:
            reads_since.setdefault(k, []).append(i)
        for k in writes:
            last_write[k] = i
            reads_since[k] = []
        if type(c) is JitExport:
            export_at[c.number] = i
    out = []
    for w in range(max(stage, default=-1) // 2 + 1):
        first = [(c, t) for c, t, s in zip(cmds, touches, stage) if s == 2 * w]
        out += [c for c, t in first if t[2]]  # refs first: work before them would ship apart
        out += [c for c, t in first if not t[2]]
        late = [c for c, s in zip(cmds, stage) if s == 2 * w + 1]
        out += [c for c in late if _tree(c)]
        out += [c for c in late if type(c) is not JitExport and not _tree(c)]
        exports = [c for c in late if type(c) is JitExport]
        if exports:
            out.append(JitWave(exports))
    return out


def _stage(c, used, deps) -> int:
    """The stage of command ``c`` (see :func:`schedule`) from ``(command, stage, takes refs)``
    of the commands it depends on. The executor ships the queued work on its own before a
    command taking refs (unless only refs of the same export call precede it) and before a
    tree across workers (unless only trees precede it); an export call ships everything."""
    tree = _tree(c)
    s = 0
    for d, sd, dref in deps:
        if type(d) is JitExport:  # its refs exist once the wave's export call has shipped
            s = max(s, sd + 1)
        elif used:  # a command taking refs: first in a wave, after the work it reads
            s = max(s, sd if dref else (sd | 1) + 1)
        elif tree:  # trees go together before the work reading them, after what they read
            s = max(s, sd if _tree(d) or not sd & 1 else sd + 2)
        else:
            s = max(s, sd)
    if type(c) is JitExport or tree:
        s |= 1  # a wave's second part
    elif used:
        s += s & 1
    return s
