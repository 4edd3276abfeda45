"""Fused elementwise runs: a worker evaluates a chain of elementwise commands block by block.

``2*x + 3*y - 1`` reaches a worker as four commands, each writing a full-size block, plus the
frees of the three temporaries (their driver tensors die as the expression is evaluated, so
their finalizers queue the frees right behind the commands, usually in the same batch). Run one
at a time, the four commands make four passes over memory. Here the worker looks ahead in the
batch: a *group* of consecutive commands (frees may sit between them) whose kernels declare
themselves fusable (``kernel(..., fusable=True)``: the ufunc kernels of
:mod:`sharded.ops.elementwise.plan`), that all produce the same shape, is evaluated in blocks of
about :data:`BLOCK_ELEMS` elements along dim 0. An output that the batch frees before anything
outside the group reads it (an *internal* key) lives only in a block-sized scratch buffer that
stays in cache; the others are written into full-size blocks as usual. The result is one pass
over memory.

Bit-identical to the unfused run: each block goes through the same kernel with the same
parameters (same casts, same ufunc loop, NumPy computes elementwise), operands broadcast along
dim 0 are passed whole, as before. In-place commands, sliced reads of a group's own outputs,
and anything that is not a fusable kernel or a free end a group. Whenever something goes wrong
(a poisoned operand, a kernel error, an unexpected dtype), the fused attempt is dropped before
the store changes and the group's commands run one at a time in their original order, so
errors are recorded exactly as without fusion. Groups smaller than :data:`MIN_ELEMS` elements
run unfused (blocking only pays for data larger than the caches). A worker with a kernel pool
(:mod:`.parallel`) evaluates the blocks after the first on its threads when it is not
already running shards there: each block as sequentially, so still bit-identical.
``SHARDED_FUSION=0`` in a worker's environment, or the ``Fusion(False, ...)`` command
(``st.init(fusion=False)``), turns it off.
"""

from __future__ import annotations

import math

import numpy as np

from ..commands import Alias, Const, DropRange, Export, Free, Fusion, Kernel, Key, Post
from . import parallel

BLOCK_ELEMS = 1 << 17  # elements per block (1 MB of float64): measured best of 16K..256K
MIN_ELEMS = 1 << 17  # smaller outputs run unfused (they fit in cache anyway)
_SCALARS = (bool, int, float, complex, np.generic)


def configure(ex, on=True, block_elems=None, min_elems=None) -> None:
    """Turn fusion on or off on every worker of executor ``ex`` (queued like any command:
    it applies to the commands queued after it); ``block_elems``/``min_elems`` override
    :data:`BLOCK_ELEMS`/:data:`MIN_ELEMS` (tests use tiny ones).

    Examples
    --------
    >>> from sharded.runtime.driver.local import LocalExecutor
    >>> ex = LocalExecutor(1)
    >>> configure(ex, False)
    >>> ex.sync(); ex._workers[0].fusion
    False
    """
    cmd = Fusion(bool(on), block_elems, min_elems)
    ex.send({w: [cmd] for w in range(ex.num_workers)})


def windows(cmds, kernels):
    """``{start: end}`` of the batch's candidate windows: maximal runs of non-in-place,
    single-output fusable kernel commands and frees holding at least two such commands.

    Examples
    --------
    >>> from sharded.runtime.worker.core import KERNELS
    >>> add = Kernel("add", (Key(1), Const(1.0)), (2,), {}, None, False)
    >>> windows([add, Free((1,)), add._replace(outs=(3,))], KERNELS)
    {0: 3}
    """
    out, start, count = {}, None, 0
    for i, cmd in enumerate(cmds):
        kind = type(cmd)
        if kind is Free:
            continue
        if kind is DropRange:  # frees keys by range: the reference index cannot see it
            return None
        fn = kernels.get(cmd.kernel) if kind is Kernel else None
        # (a fusable kernel writing one new output)
        if (
            fn is not None
            and getattr(fn, "fusable", False)
            and not cmd.inplace
            and len(cmd.outs) == 1
        ):
            if start is None:
                start, count = i, 0
            count += 1
            continue
        if start is not None and count >= 2:
            out[start] = i
        start = None
    if start is not None and count >= 2:
        out[start] = len(cmds)
    return out


class References:
    """Where each key is referenced in a batch, built on first use: ``key -> [(index,
    kind)]`` with kind ``"arg"`` (an unsliced operand), ``"free"`` or ``"other"`` (a sliced
    operand, an output, an export, a publish)."""

    def __init__(self, cmds):
        self.cmds, self._index = cmds, None

    def _build(self):
        idx: dict = {}
        for j, cmd in enumerate(self.cmds):
            refer = _REFERS.get(type(cmd))
            if refer is not None:
                for k, kind in refer(cmd):
                    idx.setdefault(k, []).append((j, kind))
        self._index = idx

    def internal(self, key, made_at: int, members) -> bool:
        """True when, after command ``made_at`` produced ``key``, only commands in
        ``members`` read it (unsliced) before the batch frees it."""
        if self._index is None:
            self._build()
        for j, kind in self._index.get(key, ()):
            if j <= made_at:
                continue
            if kind == "free":
                return True
            if kind != "arg" or j not in members:
                return False
        return False


def _kernel_refers(cmd):
    for a in cmd.args:
        if type(a) is Key:
            yield a.key, "arg" if a.slices is None else "other"
    for k in cmd.outs:
        yield k, "other"


# the keys a command refers to and how, by its record type (others refer to none)
_REFERS = {
    Free: lambda cmd: ((k, "free") for k in cmd.keys),
    Export: lambda cmd: ((cmd.key, "other"),),
    Post: lambda cmd: ((cmd.key, "other"),),
    Alias: lambda cmd: ((cmd.src, "other"), (cmd.dst, "other")),
    Kernel: _kernel_refers,
}


class _Group:
    """An open group: its commands (indices, frees included), output keys and shape."""

    def __init__(self, shape):
        self.shape = shape
        self.idxs: list = []  # every command index, in batch order (frees too)
        self.kernels: list = []  # indices of its kernel commands
        self.made: dict = {}  # output key -> index of the command producing it
        self.freed: set = set()  # keys freed by the frees inside the group


def run_window(worker, cmds, start, end, refs, errors, index) -> None:
    """Run ``cmds[start:end]`` (a window of :func:`windows`) on ``worker``: groups fused where
    worthwhile, every other command as usual, in batch order."""
    group = None
    for i in range(start, end):
        cmd = cmds[i]
        if type(cmd) is Free:
            if group is None:
                worker._free(cmd.keys)
            else:
                group.idxs.append(i)
                group.freed.update(cmd.keys)
            continue
        args = cmd.args
        if group is not None and not _joins(args, group):
            _close(worker, cmds, group, refs, errors, index)
            group = None
        # (a command whose output is surely small runs unfused without its shape worked out)
        shape = None if _small(worker, args) else _out_shape(worker, args, refs, group)
        if shape is not None and (
            len(shape) == 0 or shape[0] < 2 or math.prod(shape) < worker.fusion_min
        ):
            shape = None
        if group is not None and shape != group.shape:
            _close(worker, cmds, group, refs, errors, index)
            group = None
        if shape is None:
            worker._kernel(cmd, refs, errors)
            continue
        if group is None:
            group = _Group(shape)
        group.idxs.append(i)
        group.kernels.append(i)
        group.made[cmd.outs[0]] = i
    if group is not None:
        _close(worker, cmds, group, refs, errors, index)


def _small(worker, args) -> bool:
    """Whether a command's output surely holds fewer than ``fusion_min`` elements (so it never
    joins a group): the product of its operands' sizes bounds their broadcast's. A cheap test
    (no shapes) that settles the many commands of small tensors; False where it cannot tell
    (a sliced, missing or referenced operand)."""
    n = 1
    for a in args:
        kind = type(a)
        if kind is Key:
            arr = worker.store.get(a.key)
            if arr is None or a.slices is not None:
                return False
            n *= arr.size
        elif kind is Const:
            if isinstance(a.value, np.ndarray):
                n *= a.value.size
        else:
            return False
    return n < worker.fusion_min


def _joins(args, group) -> bool:
    """Whether a command with ``args`` may join ``group``: it reads no key the group freed
    (it would fail unfused) and no output of the group through a slice."""
    for a in args:
        if type(a) is Key and (
            a.key in group.freed or (a.slices is not None and a.key in group.made)
        ):
            return False
    return True


def _out_shape(worker, args, refs, group):
    """The broadcast shape of a command's operands, or None where it is not known cheaply
    (missing or poisoned shards, unusual operands: the command then runs unfused)."""
    try:
        return _shape_of(worker, args, refs, group)
    except Exception:  # a bad slice or operand: the kernel reports it, unfused
        return None


def _shape_of(worker, args, refs, group):
    shapes = []
    for a in args:
        kind = type(a)
        if kind is Key:
            if group is not None and a.key in group.made:
                shapes.append(group.shape)
                continue
            arr = worker.store.get(a.key)
            if arr is None:
                return None
            shapes.append(arr.shape if a.slices is None else arr[a.slices].shape)
        elif kind is Const:
            v = a.value
            if isinstance(v, np.ndarray):
                shapes.append(v.shape)
            elif not isinstance(v, _SCALARS):
                return None
        else:
            v = refs[a.index]
            if not isinstance(v, np.ndarray):
                return None
            shapes.append(v.shape)
    if not shapes:
        return None
    first = shapes[0]
    if shapes.count(first) == len(shapes):  # (the usual case: all alike)
        return tuple(first)
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:  # the kernel raises it, unfused
        return None


def _close(worker, cmds, group, refs, errors, index) -> None:
    """Run a closed group: fused when it has an internal key, else (or when the fused
    attempt fails) command by command in batch order."""
    if len(group.kernels) >= 2:
        members = set(group.kernels)
        internal = {k for k, i in group.made.items() if index.internal(k, i, members)}
        if internal and _fused(worker, [cmds[i] for i in group.kernels], group, internal, refs):
            for i in group.idxs:
                if type(cmds[i]) is Free:
                    worker._free(cmds[i].keys)
            return
    for i in group.idxs:
        cmd = cmds[i]
        if type(cmd) is Free:
            worker._free(cmd.keys)
        else:
            worker._kernel(cmd, refs, errors)


class _Mismatch(Exception):
    """A block came back in another dtype or shape than the first block."""


def _fused(worker, gcmds, group, internal, refs) -> bool:
    """Evaluate ``gcmds`` block by block; store their non-internal outputs. False (and the
    store untouched) when anything fails: the caller then runs them one by one."""
    kernels = worker.kernels
    xp, shape = worker.xp, group.shape
    n0, inner = shape[0], math.prod(shape[1:])
    rows = min(n0, max(1, worker.fusion_block // max(1, inner)))
    steps, pos = [], {}
    try:
        for j, cmd in enumerate(gcmds):
            specs = []
            for a in cmd.args:
                if type(a) is Key and a.key in pos:
                    specs.append((1, pos[a.key]))  # this block's value of a group output
                    continue
                v = worker._arg(a, refs)
                split = isinstance(v, np.ndarray) and v.ndim == len(shape) and v.shape[0] == n0
                specs.append((2 if split else 0, v))
            out = cmd.outs[0]
            pos[out] = j
            steps.append((kernels[cmd.kernel], cmd.params or {}, specs, out in internal))
    except Exception:  # a poisoned or missing operand: unfused, the error is recorded there
        return False
    bufs = [None] * len(steps)
    try:
        # the first block tells the outputs' dtypes (and takes their buffers)
        hi = min(n0, rows)
        vals = [None] * len(steps)
        for j, (fn, params, specs, scratch) in enumerate(steps):
            a = [v if t == 0 else (v[0:hi] if t == 2 else vals[v]) for t, v in specs]
            r = fn(xp, *a, **params)
            dims = (rows if scratch else n0,) + shape[1:]
            buf = None if scratch else worker._take(dims, r.dtype)
            bufs[j] = buf = xp.empty(dims, r.dtype) if buf is None else buf
            dst = buf[:hi]
            _put(r, dst)
            vals[j] = dst
        los = range(rows, n0, rows)
        if worker.kernel_threads > 1 and not worker._busy and len(los) >= 2:
            _split(worker, steps, bufs, los, rows, n0)  # fewer shards than threads
        else:
            _blocks(xp, steps, bufs, los, rows, n0)
    except Exception:  # unfused, command by command, records the error as usual
        for buf, (_, _, _, scratch) in zip(bufs, steps):
            if buf is not None and not scratch:
                worker._recycle(buf)
        return False
    for cmd, buf, (_, _, _, scratch) in zip(gcmds, bufs, steps):
        if not scratch:
            worker.store[cmd.outs[0]] = buf
    with worker._count_lock:  # (chains on threads fuse at once)
        worker.commands_run += len(gcmds)
        worker.fused_runs += 1
        worker.fused_commands += len(gcmds)
    return True


def _put(r, dst) -> None:
    """A block's result ``r`` into its place ``dst`` (unless the kernel wrote it there)."""
    if r is not dst:
        if r.dtype != dst.dtype or r.shape != dst.shape:
            raise _Mismatch(f"{r.dtype}{r.shape} != {dst.dtype}{dst.shape}")
        dst[...] = r


def _blocks(xp, steps, bufs, los, rows, n0) -> None:
    """Evaluate the blocks starting at rows ``los`` into ``bufs`` (full-size outputs, or
    block-sized scratch buffers for the internal keys)."""
    for lo in los:
        hi = min(n0, lo + rows)
        vals = [None] * len(steps)
        for j, (fn, params, specs, scratch) in enumerate(steps):
            a = [v if t == 0 else (v[lo:hi] if t == 2 else vals[v]) for t, v in specs]
            dst = bufs[j][: hi - lo] if scratch else bufs[j][lo:hi]
            _put(fn(xp, *a, alloc=offer(dst), **params), dst)
            vals[j] = dst


def _split(worker, steps, bufs, los, rows, n0) -> None:
    """:func:`_blocks` on the worker's kernel pool: contiguous runs of blocks per lane, each
    lane with scratch buffers of its own (every block computes as sequentially)."""
    pool = parallel.pool_of(worker)
    k = min(pool.n, len(los))
    cut = [len(los) * i // k for i in range(k + 1)]
    parts = [los[cut[i] : cut[i + 1]] for i in range(k)]

    def lane(i):
        if i == 0:
            own = bufs
        else:  # (a step's last field: whether its output is a block-sized scratch buffer)
            own = [worker.xp.empty_like(b) if st[3] else b for b, st in zip(bufs, steps)]
        _blocks(worker.xp, steps, own, parts[i], rows, n0)

    worker._busy = True
    try:
        pool.map(lane, range(k))
    finally:
        worker._busy = False


def offer(dst):
    """The ``alloc`` a pooled kernel receives: ``dst`` when it fits the request."""

    def alloc(shape, dtype):
        return dst if tuple(shape) == dst.shape and np.dtype(dtype) == dst.dtype else None

    return alloc
