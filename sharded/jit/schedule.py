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

__all__ = ["schedule"]


def _plus(k, s):
    """Key symbol ``k`` of shard 0 moved to shard ``s`` (a layout's keys are consecutive)."""
    if type(k) is int:
        return k + s
    return ("f", k[1] + s) if k[0] == "f" else ("i", k[1], k[2] + s)


def _touches(c):
    """``(reads, writes, exports consumed)`` of one normalized command (see tracing)."""
    tag = c[0]
    if tag == "g":
        _, layout, _, args, o, _, _, inplace = c
        n = len(layout.workers)
        reads = [_plus(a[1], s) for a in args if a[0] == "K" for s in range(n)]
        writes = [_plus(o, s) for s in range(n)]
        return reads + (writes if inplace else []), writes, ()
    if tag == "gf":
        return [], [("f", c[2] + s) for s in range(c[3])], ()
    if tag == "t":  # a reduction tree: every shard of its input, every group's result
        _, layout, spec, _ = c
        reads = [_plus(spec[4], s) for s in range(len(layout.workers))]
        return reads, [_plus(o, g) for o in spec[5] for g in range(len(spec[9]))], ()
    if tag == "s":
        _, _, _, args, outs, _, _, inplace = c
        reads = [a[1] for a in args if a[0] == "k"]
        used = tuple(a[1] for a in args if a[0] == "xr")
        return reads + (list(outs) if inplace else []), list(outs), used
    if tag == "f":
        return [], [("f", k) for k in c[2]], ()
    return [it[0] for items in c[2].values() for it in items], [], ()  # an export


def _tree(c) -> bool:
    """Whether ``c`` is a reduction tree across workers (partials move between them)."""
    return c[0] == "t" and bool(c[3])


def _inplace(c) -> bool:
    return c[0] in ("g", "s") and bool(c[7])


def _alias_classes(cmds, touches):
    """``key -> class``: keys joined when a non-in-place command reads one and makes the
    other (its result may be a view of its input)."""
    parent: dict = {}

    def find(k):
        if type(k) is int or k[0] != "f":
            k = "old"  # tensors made before the call may view one another: one class
        root = k
        while parent.get(root, root) != root:
            root = parent[root]
        while k != root:  # path compression
            parent[k], k = root, parent.get(k, k)
        return root

    for c, (reads, writes, _) in zip(cmds, touches):
        if c[0] in ("g", "s") and not _inplace(c):
            for o in writes:
                for k in reads:
                    a, b = find(o), find(k)
                    if a != b:
                        parent[a] = b
    return find


def schedule(cmds) -> list:
    """``cmds`` reordered in waves (see the module's docstring): commands taking refs, the
    other work, the trees across workers, the work reading them, and the exports as one
    ``("E", [export, ...])`` item at the wave's end. Returns the items in issue order.

    Examples
    --------
    >>> cmds = [("s", 0, "k", (("k", 1, None),), (("f", 1),), {}, None, False),
    ...         ("e", 0, {0: [(("f", 1), None)]}),
    ...         ("s", 0, "k", (("k", 2, None),), (("f", 2),), {}, None, False),
    ...         ("e", 1, {0: [(("f", 2), None)]}),
    ...         ("s", 1, "k", (("xr", 0, 0, 0), ("xr", 1, 0, 0)), (("f", 3),), {}, None, False)]
    >>> [c[0] if c[0] != "E" else ("E", [e[1] for e in c[1]]) for c in schedule(cmds)]
    ['s', 's', ('E', [0, 1]), 's']
    """
    touches = [_touches(c) for c in cmds]
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
        if c[0] == "e":
            export_at[c[1]] = i
    out = []
    for w in range(max(stage, default=-1) // 2 + 1):
        first = [(c, t) for c, t, s in zip(cmds, touches, stage) if s == 2 * w]
        out += [c for c, t in first if t[2]]  # refs first: work before them would ship apart
        out += [c for c, t in first if not t[2]]
        late = [c for c, s in zip(cmds, stage) if s == 2 * w + 1]
        out += [c for c in late if _tree(c)]
        out += [c for c in late if c[0] != "e" and not _tree(c)]
        exports = [c for c in late if c[0] == "e"]
        if exports:
            out.append(("E", exports))
    return out


def _stage(c, used, deps) -> int:
    """The stage of command ``c`` (see :func:`schedule`) from ``(command, stage, takes refs)``
    of the commands it depends on. The executor ships the queued work on its own before a
    command taking refs (unless only refs of the same export call precede it) and before a
    tree across workers (unless only trees precede it); an export call ships everything."""
    tree = _tree(c)
    s = 0
    for d, sd, dref in deps:
        if d[0] == "e":  # its refs exist once the wave's export call has shipped
            s = max(s, sd + 1)
        elif used:  # a command taking refs: first in a wave, after the work it reads
            s = max(s, sd if dref else (sd | 1) + 1)
        elif tree:  # trees go together before the work reading them, after what they read
            s = max(s, sd if _tree(d) or not sd & 1 else sd + 2)
        else:
            s = max(s, sd)
    if c[0] == "e" or tree:
        s |= 1  # a wave's second part
    elif used:
        s += s & 1
    return s
