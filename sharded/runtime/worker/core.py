"""The worker: a key -> array store (:mod:`.store`) that runs batches of commands.

A plain class with no Ray import, so the in-process executor uses it directly and the Ray
executor wraps it in an actor. A batch is a list of the records of
:mod:`sharded.runtime.commands`, run in order, each by the handler of its type
(:data:`HANDLERS`):

* :class:`~sharded.runtime.commands.Kernel` runs ``KERNELS[kernel](xp, *args, **params)``
  and stores the result(s) under its ``outs``; operands are ``Key`` (a stored shard,
  optionally sliced), ``Const`` (a constant shipped in the batch) or ``Ref`` (the batch's
  i-th extra argument: data exported by another worker or put by the driver);
* the batch's *layout commands* (``LayoutCmds``: one command per op for all workers) are
  expanded here for this worker's shards (:meth:`Worker.mine`): a ``Group`` becomes a
  ``Kernel`` per shard, a ``GroupFree`` one ``Free``, a ``Tree`` the chunk and combine steps
  of this worker's place in the reduction (:meth:`Worker._tree`). ``LayoutSync`` runs those
  queued before the next command; the rest run at the end of the batch;
* a ``Tree``'s children's partials come as refs (``TreeRefs``) or from this worker's mailbox
  (``TreeMail``, :mod:`..net.mailbox`); its own go to its parent the same way;
* stored ``st.jit`` programs (``ProgDef``/``Prog``/``ProgDel``) are compiled when defined
  (:mod:`.program`), so a call is a tight loop;
* ``Alias`` publishes a read-only view of a shard (copy on write, :mod:`.store`), ``Reset``
  and ``Hold`` serve recovery (:mod:`..driver.recovery`); the others set the worker up.

Runs of elementwise kernels whose intermediates the batch frees are evaluated block by block
(:mod:`.fusion`). A worker whose CPU share is more than one core runs its shards' commands on
that many threads where they are independent (:mod:`.parallel`). A failing command poisons its
outputs; the batch goes on, and the errors are returned for the driver to raise at its next
read.
"""

from __future__ import annotations

import gc
import os

import numpy as np

from ..commands import (
    Alias,
    DropRange,
    Export,
    Free,
    Fusion,
    Hold,
    Kernel,
    Key,
    LayoutCmds,
    LayoutSync,
    MailTag,
    Mod,
    Pool,
    Post,
    Prog,
    ProgDef,
    ProgDel,
    Ref,
    Reset,
    Threads,
    Trace,
    TreeMail,
    TreeRefs,
)
from ..net import mailbox
from ..packing import load_batch, shared_layout
from . import fusion, parallel, program, rowchain, rowpass, threads
from .expand import EXPAND
from .memtrace import MemoryTrace, rss_peak_bytes, trace
from .store import Failed, Poisoned, Store, readonly_view

# name -> kernel ``f(xp, *arrays, **params)``: the one kernel table. The op families fill it
# when they define their primitives (``sharded.core.registry``); a Ray worker process imports
# the ``sharded`` package before it unpickles its actor, so the table is full there too.
KERNELS: dict = {}


class Worker(MemoryTrace, Store):
    """Holds shards by key and runs kernels on them.

    Examples
    --------
    >>> from sharded.runtime.commands import Kernel
    >>> w = Worker(0)
    >>> params = {"shape": (2,), "value": 3.0, "dtype": "float64"}
    >>> w.run([Kernel("full", (), (1,), params, None, False)])
    []
    >>> w.fetch([(1, None)])[0]
    array([3., 3.])
    """

    kernels = KERNELS  # the table fusion reads (it cannot import this module)

    def __init__(self, index: int, device: str = "cpu", copy_exports: bool = False):
        super().__init__(index, device, copy_exports)
        self.commands_run = 0
        self.fusion = os.environ.get("SHARDED_FUSION", "1") != "0"
        self.fusion_block, self.fusion_min = fusion.BLOCK_ELEMS, fusion.MIN_ELEMS
        self.fused_runs = self.fused_commands = 0
        self._mine: dict = {}  # layout description -> the shards this worker holds
        self.programs: dict = {}  # st.jit programs: id -> per-shard commands, compiled
        self._texp: list = []  # partials this batch's trees hand to their parents
        self._tcur = 0  # index in the batch's refs of the next child partial a tree takes
        self.mailbox = None  # a .mailbox.Mailbox: tree partials straight from worker to worker
        self._tmail = None  # this batch's _Mail (TreeMail), None: partials come as refs
        self.held: dict = {}  # worker -> its last snapshot, kept here as a second copy
        # shards on threads (.parallel): the pool's size (the CPU share of the last Threads
        # command; 1: the sequential path), the least work worth it, and whether the pool
        # runs a section now (its lanes do not start sections of their own)
        self.kernel_threads, self.par_min, self._busy = 1, parallel.PAR_MIN_ELEMS, False
        # whether the shards may run on threads: not in the driver's own process (the local
        # executor), where the garbage collector may run a driver object's finalizer (a
        # tensor's free, under the executor's lock) on a kernel thread while the driver's
        # thread, holding that lock, waits for the kernel thread: a deadlock
        self.threads_ok = True
        self._kpool = None
        self._malloc_tuned = False  # (threads.tune_malloc: once, when the pool grows)
        # the traced peak of the batches before the last reset of tracemalloc's own, each
        # with the received blocks it held (:meth:`run_mapped`)
        self.traced_peak = 0
        self.trace_received = False  # whether the traced peak counts mapped received blocks

    def set_threads(self, n: int) -> None:
        """Take a CPU share of ``n`` cores: BLAS/OpenMP threads and the kernel pool."""
        threads.set_threads(n)
        self.pool_threads = max(1, int(n))
        parallel.rescan()
        # (a device's kernels queue on its own streams: shards on threads only on the CPU)
        pool = self.threads_ok and self.xp is np
        parallel.resize(self, parallel.pool_size(n) if pool else 1)
        if self.kernel_threads > 1 and not self._malloc_tuned:  # (never the driver's)
            self._malloc_tuned = threads.tune_malloc()

    # ------------------------------------------------------------------ running
    def run(self, cmds, *refs):
        """Run a batch; returns the error records, followed by one value per export."""
        errors, exports = [], []
        # The batch's layout commands (one per op for all workers, expanded here for this
        # worker's shards) are the loop's own state: they run at each LayoutSync (those
        # queued before the next command) and at the end. Every other command goes to the
        # handler of its type; runs of elementwise commands whose intermediates the batch
        # frees are evaluated block by block (sharded.runtime.worker.fusion).
        if type(cmds) is bytes:  # a batch through Ray (commands.dump_batch)
            cmds = load_batch(cmds)
        layout, done = (), 0
        windows = fusion.windows(cmds, KERNELS) if self.fusion and self.xp is np else None
        with np.errstate(all="ignore"):  # torch does not warn on inf/nan results either
            i, n = 0, len(cmds)
            index = fusion.References(cmds) if windows else None
            while i < n:
                end = windows.get(i) if windows else None
                if end is not None and self.fusion:  # the batch may turn fusion off
                    # (a window of independent per-shard chains: each fused, on the pool)
                    if not (self.kernel_threads > 1 and not self._busy) or not (
                        parallel.run_window(self, cmds[i:end], refs, errors)
                    ):
                        fusion.run_window(self, cmds, i, end, refs, errors, index)
                    i = end
                    continue
                cmd = cmds[i]
                i += 1
                kind = type(cmd)
                if kind is LayoutCmds:
                    layout = cmd.cmds if cmd.ref is None else refs[cmd.ref]
                    if type(layout) is not list:  # (packed once for all of a flush's batches)
                        layout = shared_layout(layout)
                elif kind is LayoutSync:
                    errors += self._expand(layout[done : cmd.upto], refs)
                    done = cmd.upto
                else:
                    # X.T @ f(X @ w): one pass over X's row blocks (.rowpass); fusion's
                    # rules (on, host arrays, a batch without DropRange: windows not None)
                    if kind is Kernel and cmd.kernel == "matmul" and windows is not None:
                        got = rowpass.run(self, cmds, i - 1, layout, done, refs, errors)
                        if got is not None:
                            i, done = got
                            continue
                    # a stencil's sums of halo-banded views: one pass (.rowchain)
                    if kind is Kernel and cmd.kernel == "banded" and windows is not None:
                        got = rowchain.run(self, cmds, i - 1, layout, done, refs, errors)
                        if got is not None:
                            i, done = got
                            continue
                    if kind is Kernel and self.kernel_threads > 1 and not self._busy:
                        # the driver's per-shard commands of one op (a matmul's panels, a
                        # sort's local sorts): independent ones run on the kernel pool
                        end = parallel.kernel_run(self, cmds, i - 1, windows, refs)
                        if end is not None:
                            kernels, frees = parallel.split_run(cmds[i - 1 : end])
                            errors += parallel.run_kernels(self, kernels, refs)
                            for c in frees:
                                self._free(c.keys)
                            i = end
                            continue
                    handler = HANDLERS.get(kind)
                    if handler is None:
                        raise TypeError(f"not a worker command: {cmd!r}")
                    handler(self, cmd, refs, errors, exports)
        if done < len(layout):
            errors += self._expand(layout[done:], refs)
        if self._texp:  # after the batch's own exports, in the order the trees ran
            exports += self._texp
            self._texp = []
        return errors if not exports else (errors, *exports)

    def _kernel(self, cmd, refs, errors):
        """Run one kernel command; a failure poisons its outputs and is recorded."""
        store, fail = self.store, None
        if cmd.inplace and self.published_seen:  # (before its operands are read: the copy)
            self._detach(cmd.outs)
        try:
            vals = []
            for a in cmd.args:
                if type(a) is Key and a.slices is None:  # (the usual operand: inline)
                    arr = store.get(a.key)
                    if arr is not None:
                        vals.append(arr)
                        continue
                vals.append(self._arg(a, refs))
            fn = KERNELS[cmd.kernel]
        except Poisoned as p:
            for k in cmd.outs:
                self.poisoned[k] = p.record
            errors.append(dict(p.record, cascade=True))
            self.commands_run += 1
            return
        except Exception as e:  # (a bad slice, an unknown kernel): recorded by call
            vals, fn, fail = None, None, e
        label = cmd.label or (cmd.kernel, None)
        self.call(fn, vals, cmd.outs, cmd.params, label, cmd.inplace, errors, True, fail)

    def call(self, fn, vals, outs, params, label, inplace, errors, pool=True, fail=None):
        """``fn(xp, *vals, **params)`` stored under ``outs`` (written into them when
        ``inplace``), offered the worker's pool (``alloc=``) when ``pool`` and ``fn`` is a
        pooled kernel; a failure (or ``fail``, an exception already raised while reading the
        operands) poisons the outputs and is recorded under ``label`` = ``(op, shard)``. The
        caller has detached in-place outputs from published views (:meth:`_detach`) before
        it read the operands."""
        store = self.store
        self.commands_run += 1
        try:
            if fail is not None:
                raise fail
            if pool and not inplace and getattr(fn, "pooled", False):
                res = fn(self.xp, *vals, alloc=self._take, **(params or {}))
            else:
                res = fn(self.xp, *vals, **(params or {}))
            if len(outs) == 1:
                res = (res,)
            elif not outs:  # a kernel run for its effect (or its error) only
                res = ()
            for k, r in zip(outs, res):
                if inplace:
                    if r is not store[k]:  # kernels may write in place themselves
                        store[k][...] = r
                else:
                    store[k] = self.xp.asarray(r)
            vals = res = r = None  # no stale references: freed blocks can be pooled
        except Exception as e:  # reported to the driver, which raises it typed
            program.failed(e, label, self.index, outs, inplace, store, self.poisoned, errors)

    # ------------------------------------------------------------------ layout commands
    def mine(self, desc) -> list:
        """The shards this worker holds in a layout described by ``desc``: a ``Mod``
        (shard ``s`` of ``n`` on worker ``s % m``) or ``OnWorkers`` (every shard's worker)."""
        got = self._mine.get(desc)
        if got is None:
            if type(desc) is Mod:
                me = self.index
                got = list(range(me, desc.n, desc.m)) if me < desc.m else []
            else:
                got = [s for s, w in enumerate(desc.workers) if w == self.index]
            if len(self._mine) > 1024:
                self._mine.clear()
            self._mine[desc] = got
        return got

    def _expand(self, layout_cmds, refs) -> list:
        """Run layout commands as the per-shard commands they stand for (this worker's
        shards only); returns the error records.

        The garbage collector waits meanwhile: the per-shard commands (two records per op
        and shard, alive until the run ends) would start a collection every few hundred
        of them and reach the oldest generation, whose collection scans the whole process
        (64 in-process workers spent more time collecting than running their commands);
        they hold no cycles, and are freed when the run ends."""
        was = gc.isenabled()
        gc.disable()
        try:
            # per shard too, for the kernel pool, where the shards may gain from it
            chains = {} if self.kernel_threads > 1 and parallel.wanted(self, layout_cmds) else None
            out, errors = [], []
            for c in layout_cmds:
                EXPAND[type(c)](self, c, out, refs, errors, chains)
            return errors + self._run_nested(out, refs, chains)
        finally:
            if was:
                gc.enable()

    def _run_nested(self, cmds, refs, chains=None) -> list:
        """Run expanded per-shard commands (no exports); returns their error records.
        ``chains`` (shard -> its commands, :func:`.parallel.expand`): the same commands
        per shard, run on the kernel pool when they are independent."""
        if not cmds:
            return []
        held, self._texp = self._texp, []  # the tree partials belong to the outer batch
        mail = self._tmail
        try:
            if chains is not None:
                got = parallel.run_chains(self, chains, refs)
                if got is not None:
                    return got
            return self.run_commands(cmds, *refs)
        finally:
            self._texp, self._tmail = held, mail

    def run_commands(self, cmds, *refs) -> list:
        """:meth:`run` of this class, never a subclass's (expanded commands and a kernel
        lane's chain are not batches: a Ray worker counts those)."""
        return Worker.run(self, cmds, *refs)

    def _tree(self, spec, mine, refs, errors, mail=None) -> None:
        """Expand a reduction for this worker (``spec``: a
        :class:`~sharded.runtime.commands.TreeSpec`): per group it takes part in, reduce the
        live shards it holds (chunk), combine them with the partials of its children in the
        group's fan-in tree (``parts``: the group's workers, root first; the children of
        position ``p`` are ``p * fan + 1 ... p * fan + fan``), then hand the result to its
        parent (an extra return value of the batch) or, at the root, store it under the
        output keys."""
        outs, fan, label, start = spec.outs, spec.fan, spec.label, spec.start
        me, tmp = self.index, -1  # negative keys: never a driver key
        steps, chunks = [], []  # (group, its index, my position, combine's operands)
        for g, group in enumerate(spec.groups):
            parts = group.parts
            if me not in parts:
                continue
            args = []
            for s in group.live:
                if s not in mine:
                    continue
                p = spec.cparams
                if "gshape" in p:  # (value, index) chunks need the shard's offsets
                    p = dict(p, offsets=_offsets(spec.bounds, s, spec.repl))
                ks = (tmp,) if len(outs) == 1 else (tmp, tmp - 1)
                tmp -= len(outs)
                arg = Key.make((start + s, None))  # (the records of every read: by make)
                chunks.append(Kernel.make((spec.chunk, (arg,), ks, p, (label, s), False)))
                args += [Key.make((k, None)) for k in ks]
            steps.append((g, group, parts.index(me), args))
        # every group's chunks first, on the kernel pool (each whole: the same rounding;
        # a reduction along a dim that is not split is a group per shard), their partials
        # combined below in shard order
        if self.kernel_threads > 1 and parallel.worth(self, chunks):
            errors += parallel.reduce_chunks(self, chunks, refs)
        else:
            for cmd in chunks:
                self._kernel(cmd, refs, errors)
        alone = []  # combines of the groups this worker holds alone (no partials to take)
        for g, group, pos, args in steps:
            parts = group.parts
            if len(parts) == 1:
                params = {"fn": spec.fn, "squeeze": spec.squeeze}
                ks = tuple(o + g for o in outs)
                alone.append(
                    Kernel.make((spec.combine, tuple(args), ks, params, (label, None), False))
                )
                continue
            kids = range(pos * fan + 1, min(pos * fan + fan + 1, len(parts)))
            crefs = refs
            if mail is not None:
                tags = [MailTag(mail.client, mail.ship, mail.trees, g, c) for c in kids]
                got = [v for t in tags for v in self._take_partials(t, mail.timeout, errors)]
                crefs = (*refs, *got)
                args += [Ref.make((len(refs) + i,)) for i in range(len(got))]
            else:
                nkids = len(kids) * len(outs)
                args += [Ref.make((self._tcur + i,)) for i in range(nkids)]
                self._tcur += nkids
            root = pos == 0
            ks = tuple(o + g for o in outs) if root else (tmp, tmp - 1)[: len(outs)]
            params = {"fn": spec.fn, "squeeze": spec.squeeze} if root else {"fn": spec.fn}
            cmd = Kernel.make((spec.combine, tuple(args), ks, params, (label, None), False))
            self._kernel(cmd, crefs, errors)
            self._free([a.key for a in args if type(a) is Key])
            if not root:
                vals = [self._export(k, None) for k in ks]
                self._texp += vals
                if mail is not None:
                    tag = MailTag(mail.client, mail.ship, mail.trees, g, pos)
                    self.mailbox.send(parts[(pos - 1) // fan], tag, vals)
                self._free(ks)
        if alone and self.kernel_threads > 1 and parallel.worth(self, alone):
            errors += parallel.run_kernels(self, alone, refs, blas=False)
        else:
            for cmd in alone:
                self._kernel(cmd, refs, errors)
        self._free([a.key for c in alone for a in c.args])

    def _mailed(self, tag, timeout):
        """A :class:`Mail` operand: the value another worker posted (a failure record when
        the take was aborted or ran past its bound: the command then fails as a cascade)."""
        try:
            got = self.mailbox.take(tag, timeout)
        except mailbox.MailAborted as e:
            raise Poisoned(
                {"op": "transfer", "shard": None, "worker": self.index, "cause": str(e)}
            ) from None
        if type(got) is not list or len(got) != 1:  # (a Deliver's values: one per post)
            raise Poisoned(
                {"op": "transfer", "shard": None, "worker": self.index, "cause": "bad post"}
            )
        return got[0]

    def _take_partials(self, tag, timeout, errors) -> list:
        """A child's partials from the mailbox; a take that fails (aborted or past its bound)
        is an error of this batch and a failure record in place of the partials, so the
        combine poisons its outputs like any failed input."""
        try:
            return self.mailbox.take(tag, timeout)
        except mailbox.MailAborted as e:
            rec = {"op": "reduce", "shard": None, "worker": self.index, "cause": str(e)}
            errors.append(dict(rec, cascade=False))
            return [Failed(rec)]

    # ------------------------------------------------------------------ statistics
    def stats(self) -> dict:
        """Live shards, their bytes, and this process's resident memory (now and peak)."""
        rss = self.rss_bytes()
        return {
            "worker": self.index,
            "device": self.device,
            "pid": os.getpid(),
            "live_shards": len(self.store),
            "live_bytes": int(sum(a.nbytes for a in self.store.values())),
            "pool_bytes": self.pool_bytes,
            "pool_max_bytes": self._pool_cap(),
            "rss_bytes": rss,
            # (the kernel updates its high-water mark lazily: it may trail the current rss)
            "rss_peak_bytes": max(rss, rss_peak_bytes()),
            "commands_run": self.commands_run,
            "sent_bytes": self.sent_bytes,
            "received_bytes": self.received_bytes,
            "fused_runs": self.fused_runs,
            "fused_commands": self.fused_commands,
            "blas_threads": threads.blas_threads(),
            "kernel_threads": self.kernel_threads,
            "parallel_sections": self._kpool.sections if self._kpool is not None else 0,
            "net": self.mailbox.counts() if self.mailbox is not None else {},
            "traced_peak_bytes": self.traced_peak_bytes(),
        }

    def run_mapped(self, cmds, refs):
        """:meth:`run` a batch whose ``refs`` came through Ray (counted while tracing,
        :meth:`~.memtrace.MemoryTrace._batch_traced`)."""
        return self._batch_traced(lambda: Worker.run(self, cmds, *refs), refs)

    def ping(self):
        return self.index

    def pid(self) -> int:
        """This worker's process id (tests kill it to simulate a crash)."""
        return os.getpid()

    # ------------------------------------------------------------------ recovery
    def snapshot(self):
        """``(bytes, state)``: this worker's whole store, for a recovery cut. In process
        (``copy_exports``) the arrays are copied, since later in-place ops would change
        them; an actor's return value is serialized, which copies already."""
        store = {k: self.backend.to_host(a) for k, a in self.store.items()}
        if self.copy_exports:
            store = {k: np.array(a, copy=True) for k, a in store.items()}
        state = {
            "store": store,
            "poisoned": dict(self.poisoned),
            "cow": set(self.cow),
            "published_seen": self.published_seen,
            "fusion": (self.fusion, self.fusion_block, self.fusion_min),
            "threads": threads.blas_threads(),
            "kernel_threads": self.kernel_threads,
            "programs": dict(self.programs),  # st.jit programs defined before the cut
        }
        return int(sum(a.nbytes for a in store.values())), state

    def _reset(self, state) -> None:
        """Back to an empty store, or to ``state`` (a :meth:`snapshot`); arrays are copied,
        as the snapshot's are read-only (object store) and may be restored again."""
        self.store, self.poisoned, self.cow = {}, {}, set()
        self.pool, self.pool_bytes, self.published_seen = {}, 0, False
        self.programs, self._texp, self._tcur = {}, [], 0
        if state is None:
            return
        for k, a in state["store"].items():
            arr = self.backend.to_device(np.array(a, copy=True))
            self.store[k] = readonly_view(arr) if k in state["cow"] else arr
        self.poisoned = dict(state["poisoned"])
        self.cow = set(state["cow"])
        self.published_seen = state["published_seen"]
        self.fusion, self.fusion_block, self.fusion_min = state["fusion"]
        self.programs = dict(state["programs"])
        if state["threads"]:
            threads.set_threads(state["threads"])
        parallel.resize(self, state.get("kernel_threads", 1))


class _Mail:
    """The mailbox a batch's trees use (its ``TreeMail``), and how many trees ran so far:
    every worker counts the same trees, which tags their partials alike."""

    __slots__ = ("client", "ship", "timeout", "trees")

    def __init__(self, cmd):
        self.client, self.ship, self.timeout, self.trees = cmd.client, cmd.ship, cmd.timeout, 0


# ------------------------------------------------------------------ command handlers
# handler(worker, command, the batch's refs, its error records, its exports), by record type
# (LayoutCmds and LayoutSync are the run loop's own state: Worker.run reads them itself)


def _kernel(w, cmd, refs, errors, exports):
    w._kernel(cmd, refs, errors)


def _free(w, cmd, refs, errors, exports):
    w._free(cmd.keys)


def _export(w, cmd, refs, errors, exports):
    exports.append(w._export(cmd.key, cmd.slices))


def _post(w, cmd, refs, errors, exports):
    v = w._export(cmd.key, cmd.slices)
    exports.append(v)  # (the driver's log keeps it: a replay takes it as a Ref)
    for t in cmd.to:
        w.mailbox.send(t, cmd.tag, [v])


def _tree_refs(w, cmd, refs, errors, exports):
    w._tcur = cmd.start


def _tree_mail(w, cmd, refs, errors, exports):
    w._tmail = _Mail(cmd)
    w.mailbox.expire(cmd.client, cmd.ship)


def _trace_cmd(w, cmd, refs, errors, exports):
    if cmd.on:  # (a kernel taking a block pooled before the trace would allocate nothing)
        w.empty_pool()
    trace(cmd.on)
    w.traced_peak, w.trace_received = 0, bool(cmd.on and cmd.received)


def _threads(w, cmd, refs, errors, exports):
    w.set_threads(cmd.n)


def _pool(w, cmd, refs, errors, exports):
    w.pool_max = max(0, int(cmd.nbytes))
    w._recycle(None)  # down to the new cap


def _fusion(w, cmd, refs, errors, exports):
    w.fusion = bool(cmd.on)
    w.fusion_block = cmd.block_elems or fusion.BLOCK_ELEMS
    w.fusion_min = cmd.min_elems or fusion.MIN_ELEMS


def _alias(w, cmd, refs, errors, exports):
    w._alias(cmd.src, cmd.dst, errors)


def _drop_range(w, cmd, refs, errors, exports):
    w._drop_range(cmd.lo, cmd.hi, cmd.keep)


def _prog(w, cmd, refs, errors, exports):
    """Run stored program ``pid`` with its keys bound: a tight loop over the steps
    :class:`.program.Compiled` prepared when it was defined."""
    errors += w.programs[cmd.pid].run(w, cmd.base, cmd.inkeys)


def _define(w, cmd, refs, errors, exports):
    w.programs[cmd.pid] = program.Compiled(cmd.cmds, KERNELS)


def _drop_program(w, cmd, refs, errors, exports):
    w.programs.pop(cmd.pid, None)


def _reset(w, cmd, refs, errors, exports):
    w._reset(None if cmd.ref is None else refs[cmd.ref])


def _hold(w, cmd, refs, errors, exports):
    w.held[cmd.src] = refs[cmd.ref]


HANDLERS = {
    Kernel: _kernel,
    Free: _free,
    Export: _export,
    Post: _post,
    TreeRefs: _tree_refs,
    TreeMail: _tree_mail,
    Trace: _trace_cmd,
    Threads: _threads,
    Pool: _pool,
    Fusion: _fusion,
    Alias: _alias,
    DropRange: _drop_range,
    Prog: _prog,
    ProgDef: _define,
    ProgDel: _drop_program,
    Reset: _reset,
    Hold: _hold,
}


def _offsets(bounds, s, repl) -> tuple:
    """Offsets of shard ``s`` (C order over the grid that ``bounds`` cut)."""
    if repl:
        return (0,) * len(bounds)
    out = []
    for b in reversed(bounds):
        s, c = divmod(s, len(b) - 1)
        out.append(b[c])
    return tuple(reversed(out))
