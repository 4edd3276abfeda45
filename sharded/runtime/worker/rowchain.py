"""Row chains: a stencil's sum of shifted views in one pass over each block's rows.

``u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])`` on a grid
split by rows reaches a worker as views of its shards (``index_basic``), one sum per term
whose shifted operand comes as row bands (its own rows and a neighbour's halo rows, the
``banded`` kernel of :mod:`sharded.ops.elementwise.plan.halo`), the scaling, and the
assignment. Each term reads its halo before the next one runs, so the batch's layout
commands sync between them and :mod:`.fusion` (which fuses runs of consecutive elementwise
commands) sees one sum at a time: four passes over the block, each writing a block-sized
temporary.

Here a worker follows one shard's chain of elementwise commands (fusable kernels, and
``banded`` ones over a fusable op) across the batch's views, frees and layout syncs, up to
the first command that is none of these (the assignment, in place), and runs the chain a
block of rows at a time: every value the batch frees before anything else reads it (the
partial sums) lives only a block at a time, the others are written whole. Blocks are cut at
every band's first row, so each block reads one band of each operand, and each step runs
its op's own kernel on the block's rows: the values are those of the unfused commands, bit
for bit. Chains of different shards run on the worker's kernel pool.

Anything unexpected (an operand missing or of another shape, a kernel that raises) leaves
the batch to the usual path with the store untouched; nothing runs for chains under
``Worker.fusion_min`` elements or without a value to keep out of memory, nor with fusion
off.

Examples
--------
>>> import numpy as np, sharded as st
>>> _ = st.init(executor="local", num_workers=1)
>>> u = st.from_numpy(np.arange(16.0).reshape(4, 4), shards=2)
>>> (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]).tolist()
[[20.0, 24.0], [36.0, 40.0]]
>>> st.shutdown()
"""

from __future__ import annotations

import math

import numpy as np

from ..commands import Free, Kernel, Key, LayoutSync
from . import parallel
from .rowpass import expand, finish, freed_later

BLOCK_BYTES = 1 << 20  # bytes of one operand's rows per block
MAX_SCAN = 256  # commands looked at before the chain ends


class _Found:
    """The chains (first step's output key -> the chain's kernel commands), the lazy
    views (key -> ``index_basic`` command), the frees met, where the batch goes on
    (``end``, layout commands ``done``) and the kernel commands run."""

    def __init__(self):
        self.chains, self.owner, self.views, self.frees = {}, {}, {}, []
        self.end = self.done = self.count = 0


def run(w, cmds, i, layout, done, refs, errors):
    """Run the chains starting at ``cmds[i]`` (an elementwise command at the top of ``w``'s
    batch), or return None (nothing ran, the store untouched); else ``(next command index,
    layout commands done)``."""
    if not w.fusion:
        return None
    found = _find(w, cmds, i, layout, done)
    if found is None:
        return None
    freed = {k for keys in found.frees for k in keys}
    freed |= freed_later(w, cmds, found.end, found.done, layout, set(found.owner) - freed)
    if not freed & set(found.owner):  # (nothing to keep out of memory: fusion's business)
        return None
    chains = list(found.chains.values())
    before = w.commands_run
    try:
        views = {k: _view(w, c) for k, c in found.views.items()}
        if len(chains) >= 2 and w.kernel_threads > 1 and not w._busy:
            got = parallel.run_lanes(
                w, lambda ch: _pass(w, ch, views, freed, refs), chains, 0, False
            )
        else:
            got = [_pass(w, ch, views, freed, refs) for ch in chains]
    except Exception:  # the usual path runs the commands again and records the error
        w.commands_run = before
        return None
    store = w.store
    for made in got:
        store.update(made)
    for k, v in views.items():
        if k not in freed:
            store[k] = v
    finish(w, found.frees, before + found.count, found.count)
    return found.end, found.done


def _find(w, cmds, i, layout, done):
    """The chains from ``cmds[i]`` on, up to the first command that is not an elementwise
    step, a basic-index view, a free or a layout sync (None: nothing to chain)."""
    store, n = w.store, len(cmds)
    found = _Found()
    freed: set = set()
    pending: list = []  # (layout index, command) of the sync being expanded, not yet taken
    sync = None  # that sync's index in the batch
    j, end = i, (i, done)  # ``end``: where the batch goes on if the chains end here
    while found.count < MAX_SCAN:
        if pending:
            li, c = pending[0]
            if c is None or not _take(w, store, c, found, freed):
                break
            pending.pop(0)
            if not pending or pending[0][0] != li:  # (a layout command wholly taken)
                done = li + 1
                end = (sync + 1, done) if not pending else (sync, done)
            continue
        if j >= n:
            break
        c = cmds[j]
        if type(c) is LayoutSync:
            if c.upto > len(layout):
                break
            for li in range(done, c.upto):
                got = expand(w, layout[li])
                if got is None:  # (a reduction: it ends the chains)
                    pending.append((li, None))
                    break
                pending += [(li, x) for x in got] or [(li, Free(()))]
            if not pending:
                done = c.upto
            sync, j = j, j + 1
            if not pending:
                end = (j, done)
            continue
        if not _take(w, store, c, found, freed):
            break
        j += 1
        end = (j, done)
    found.end, found.done = end
    return found if found.chains else None


def _take(w, store, c, found, freed) -> bool:
    """Take command ``c`` into the chains (True), or say it ends them (False)."""
    owner, views, kind = found.owner, found.views, type(c)
    if kind is Free:
        found.frees.append(c.keys)
        freed.update(c.keys)
        return True
    if kind is not Kernel or c.inplace or len(c.outs) != 1 or c.outs[0] in owner:
        return False
    for a in c.args:
        if type(a) is Key and (a.key in freed or (a.slices is not None and a.key in owner)):
            return False
    params = c.params or {}
    if c.kernel == "index_basic":
        src = c.args[0] if len(c.args) == 1 else None
        if type(src) is not Key or src.slices is not None or src.key not in store:
            return False
        views[c.outs[0]] = c
        found.count += 1
        return True
    if c.kernel == "banded":
        fn = w.kernels.get(params.get("op"))
        if params.get("into") or not getattr(fn, "fusable", False):
            return False
    elif not getattr(w.kernels.get(c.kernel), "fusable", False):
        return False
    chains = {owner[a.key] for a in c.args if type(a) is Key and a.key in owner}
    if len(chains) > 1:  # (a step on two shards' values)
        return False
    if not chains and not _big(w, store, views, c):  # (a small op: no chain of rows)
        return False
    head = chains.pop() if chains else c.outs[0]
    found.chains.setdefault(head, []).append(c)
    owner[c.outs[0]] = head
    found.count += 1
    return True


def _big(w, store, views, c) -> bool:
    """Whether a stored operand of ``c`` (a view's: its source) holds ``fusion_min``
    elements or more."""
    for a in c.args:
        if type(a) is Key:
            src = views[a.key].args[0].key if a.key in views else a.key
            if getattr(store.get(src), "size", 0) >= w.fusion_min:
                return True
    return False


def _view(w, c):
    return w.kernels[c.kernel](w.xp, w.store[c.args[0].key], **(c.params or {}))


def _operand(w, a, views, refs):
    """An external operand's value: a view of the chain, a stored block, a constant, sliced
    as the command reads it."""
    if type(a) is Key:
        v = views[a.key] if a.key in views else w.store[a.key]
        return v if a.slices is None else v[a.slices]
    return w._arg(a, refs)


def _plan(w, chain, views, refs):
    """Each step as ``(fn, params, specs)`` (a spec: ``(0, value)`` whole or cut by
    :func:`band_rows`, ``(1, key)`` a value of the chain, ``(2, [(first row, array), ...])``
    bands), with the chain's rows, ndim and band cuts."""
    made, steps, cuts, rows, ndim = set(), [], set(), None, None
    for c in chain:
        params = c.params or {}
        if c.kernel == "banded":
            fn, kp = w.kernels[params["op"]], params.get("params") or {}
            specs, args = [], iter(c.args)
            for b in params["bands"]:
                if b is None:
                    specs.append(_spec(w, next(args), made, views, refs))
                else:
                    bands = [(s, _operand(w, next(args), views, refs)) for s in b]
                    specs.append((2, bands))
                    cuts.update(b)
            r, nd = params["rows"], params["ndim"]
        else:
            fn, kp = w.kernels[c.kernel], params
            specs = [_spec(w, a, made, views, refs) for a in c.args]
            shapes = [np.shape(v) for t, v in specs if t == 0]
            shape = np.broadcast_shapes(*shapes) if rows is None else None
            r, nd = (shape[0], len(shape)) if shape else (rows, ndim)
        if rows is None:
            rows, ndim = r, nd
        if (r, nd) != (rows, ndim):
            raise ValueError(f"a step of {r} rows in a chain of {rows}")
        for t, v in specs:  # (what a block cannot broadcast as the whole would, unfused)
            a = getattr(v, "shape", ()) if t == 0 else ()
            if len(a) > ndim or (len(a) == ndim and a[0] not in (rows, 1)):
                raise ValueError(f"an operand of shape {a} against {rows} rows")
        steps.append((c.outs[0], fn, kp, specs))
        made.add(c.outs[0])
    return steps, rows, ndim, cuts


def _spec(w, a, made, views, refs):
    if type(a) is Key and a.key in made:
        return (1, a.key)
    return (0, _operand(w, a, views, refs))


def _pass(w, chain, views, freed, refs) -> dict:
    """One chain over its row blocks: ``{key: value}`` of the values to store."""
    steps, rows, ndim, cuts = _plan(w, chain, views, refs)
    if ndim < 1 or rows < 2:
        raise ValueError("not a chain of rows")
    per = max(8, BLOCK_BYTES // (8 * _row_elems(steps)))
    cuts.update(range(0, rows, per))
    cuts = sorted(c for c in cuts | {rows} if 0 <= c <= rows)
    vals, made = {}, {}
    for r0, r1 in zip(cuts, cuts[1:]):
        for out, fn, params, specs in steps:
            a = [vals[v] if t == 1 else band_rows(v, r0, r1, rows, ndim) for t, v in specs]
            r = fn(w.xp, *a, **params)
            if getattr(r, "ndim", 0) != ndim or r.shape[0] != r1 - r0:
                raise ValueError(f"rows {r0}:{r1} made {np.shape(r)}")
            vals[out] = r
            if out not in freed:
                if out not in made:
                    shape = (rows,) + r.shape[1:]
                    buf = w._take(shape, r.dtype)
                    made[out] = np.empty(shape, r.dtype) if buf is None else buf
                made[out][r0:r1] = r
    return made


def _row_elems(steps) -> int:
    """Elements of a row of the chain's widest operand."""
    n = 1
    for _, _, _, specs in steps:
        for t, v in specs:
            arrs = [a for _, a in v] if t == 2 else [v] if t == 0 else []
            for a in arrs:
                if getattr(a, "ndim", 0) >= 1:
                    n = max(n, math.prod(a.shape[1:]))
    return n


def band_rows(o, r0, r1, rows, ndim):
    """Operand ``o`` over output rows ``r0:r1`` of a block of ``rows`` rows and ``ndim``
    dims: the band holding them (``o`` a list of ``(first row, array)`` in row order), a cut
    of a whole block, or ``o`` itself where it broadcasts along the rows (a scalar, fewer
    dims, one row). The ``banded`` kernel reads its operands so, and a chain's blocks too.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(8.0).reshape(4, 2)
    >>> band_rows([(0, a[:1]), (1, a[1:])], 2, 4, 4, 2).tolist()
    [[4.0, 5.0], [6.0, 7.0]]
    >>> band_rows(a, 1, 2, 4, 2).tolist(), band_rows(a[:1], 1, 2, 4, 2).shape
    ([[2.0, 3.0]], (1, 2))
    """
    if type(o) is list:
        start, arr = next((s, a) for s, a in reversed(o) if s <= r0)
        return arr[r0 - start : r1 - start]
    if getattr(o, "ndim", 0) == ndim and o.shape[0] == rows and rows > 1:
        return o[r0:r1]
    return o
