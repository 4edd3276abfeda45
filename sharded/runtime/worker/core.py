"""The worker: a key -> array store that runs batches of kernel commands.

A plain class with no Ray import, so the in-process executor uses it directly and the Ray
executor wraps it in an actor. A batch is a list of commands run in order:

``("free", keys)``
    drop shards whose last driver reference died.
``("export", key, slices)``
    hand a (slice of a) shard to another worker; the batch returns it as an extra value.
``("trace", on)``
    start or stop tracing allocations (memory statistics of an operation).
``("threads", n)``
    limit this process's BLAS/OpenMP pools to ``n`` threads (its share of the node's cores).
``("pool", nbytes)``
    keep at most ``nbytes`` of freed blocks for reuse (at most :data:`POOL_MAX_BYTES`).
``("fusion", on, block_elems, min_elems)``
    evaluate runs of fusable elementwise commands block by block (:mod:`.fusion`), or not.
``("alias", src, dst)``
    publish: store a read-only view of shard ``src`` under ``dst`` (no copy). Until either is
    freed, an in-place write into memory the snapshot shares first gives the snapshot its own
    copy (copy on write), so the published version never changes.
``("drop_range", lo, hi, keep)``
    drop every key in ``[lo, hi)`` but ``keep``: what a departed client left behind.
``("progdef", pid, cmds)`` / ``("prog", pid, base, inkeys)`` / ``("progdel", pid)``
    store a replayable program (``st.jit``: this worker's per-shard commands, keys written
    ``("f", offset)``, ``("i", input, shard)`` or as themselves), run it with the fresh keys
    from ``base`` and the inputs' keys ``inkeys`` (one command per call), or drop it. A
    program is compiled when defined (:mod:`.program`), so a call is a tight loop.
``("reset", i)``
    recovery (:mod:`.recovery`): forget every shard, then (``i`` not None) restore the state
    :meth:`Worker.snapshot` returned, passed as the batch's i-th extra argument.
``("hold", src, i)``
    keep the batch's i-th extra argument (worker ``src``'s snapshot) alive: on an actor it is
    a second copy of that snapshot on this worker's node, which survives the loss of ``src``'s.
``("B", i, cmds)``
    the batch's *layout commands* (``cmds``, or the batch's i-th extra argument): commands
    that name a whole layout, shipped once to every worker involved. ``("bsync", n)`` runs
    the first ``n`` of them (those queued before the next command); the rest run at the end.
    ``("group", kernel, desc, args, out, params, label, inplace)`` is a kernel command for
    every shard this worker holds (``desc``: which shards, see :meth:`Worker.mine`; args
    ``("K", start)`` read key ``start + s``, output key ``out + s``); ``("gfree", desc,
    start)`` drops them.
``("tref", i)`` / ``("tmail", tag, timeout)``
    the batch's reduction trees take their children's partials as refs from the i-th on, or
    from this worker's mailbox under the shipment's ``tag`` (:mod:`.mailbox`; at most
    ``timeout`` s each), and send their own to their parents' mailboxes too.
``(kernel, args, outs, params, label, inplace)``
    run ``KERNELS[kernel](xp, *args, **params)`` and store the result(s) under ``outs``;
    ``inplace`` writes into the existing array instead (views of it see the change).

Arguments are ``("k", key, slices)`` (a stored shard, optionally sliced), ``("c", value)`` (a
constant shipped in the batch) or ``("r", i)`` (the batch's i-th extra argument: data exported
by another worker or put by the driver). A failing command poisons its outputs; the batch goes
on, and the errors are returned for the driver to raise at its next read.
"""

from __future__ import annotations

import os
import sys
import tracemalloc

import numpy as np

from ...backend import get_backend
from ..net import mailbox
from . import fusion, program, threads

# name -> kernel ``f(xp, *arrays, **params)``: the one kernel table. The op families fill it
# when they define their primitives (``sharded.core.registry``); a Ray worker process imports
# the ``sharded`` package before it unpickles its actor, so the table is full there too.
KERNELS: dict = {}
POOL_MIN_BYTES = 1 << 20
POOL_MAX_BYTES = 1 << 30
POOL_MEMORY_SHARE = 8  # a worker pools at most 1/8 of its share of its node's memory


def pool_share(node_memory, workers_on_node: int) -> int:
    """The bytes of freed blocks one worker may keep: an eighth of its share of its node's
    memory (Ray's ``memory`` resource), at most :data:`POOL_MAX_BYTES`, so that many workers
    on one node do not hold its memory idle.

    Examples
    --------
    >>> pool_share(64 << 30, 2) == POOL_MAX_BYTES, pool_share(64 << 30, 64) >> 20
    (True, 128)
    """
    per_worker = int(node_memory) // max(1, int(workers_on_node))
    return min(POOL_MAX_BYTES, per_worker // POOL_MEMORY_SHARE)


class Worker:
    """Holds shards by key and runs kernels on them.

    Examples
    --------
    >>> w = Worker(0)
    >>> w.run([("full", (), (1,), {"shape": (2,), "value": 3.0, "dtype": "float64"}, None, 0)])
    []
    >>> w.fetch([(1, None)])[0]
    array([3., 3.])
    """

    kernels = KERNELS  # the table fusion reads (it cannot import this module)

    def __init__(self, index: int, device: str = "cpu", copy_exports: bool = False):
        self.index, self.device = index, device
        self.backend = get_backend(device)
        self.xp = self.backend.xp
        self.store: dict = {}
        self.poisoned: dict = {}
        self.copy_exports = copy_exports
        self.commands_run = 0
        self.pool: dict = {}
        self.pool_bytes = 0
        self.pool_max = None  # this worker's cap (None: POOL_MAX_BYTES), set after placement
        self.cow: set = set()  # published keys that may still share memory with a writable shard
        self.published_seen = False  # no copy-on-write checks until something is published
        self.fusion = os.environ.get("SHARDED_FUSION", "1") != "0"
        self.fusion_block, self.fusion_min = fusion.BLOCK_ELEMS, fusion.MIN_ELEMS
        self.fused_runs = self.fused_commands = 0
        self._mine: dict = {}  # layout description -> the shards this worker holds
        self.programs: dict = {}  # st.jit programs: id -> per-shard commands, compiled
        self._texp: list = []  # partials this batch's "tree" commands hand to their parents
        self._tcur = 0  # index in the batch's refs of the next child partial a tree takes
        self.mailbox = None  # a .mailbox.Mailbox: tree partials straight from worker to worker
        self._tmail = None  # this batch's [shipment tag, trees so far, take timeout] ("tmail")
        self.held: dict = {}  # worker -> its last snapshot, kept here as a second copy

    # ------------------------------------------------------------------ running
    def run(self, cmds, *refs):
        """Run a batch; returns the error records, followed by one value per export."""
        errors, exports = [], []
        # Layout commands ("B": one command per op for all workers, expanded here for this
        # worker's shards) run at each "bsync" and at the end of the batch. Runs of
        # elementwise commands whose intermediates the batch frees are evaluated block by
        # block (sharded.runtime.worker.fusion); everything else runs one command at a time.
        layout, done = (), 0
        windows = fusion.windows(cmds, KERNELS) if self.fusion and self.xp is np else None
        with np.errstate(all="ignore"):  # torch does not warn on inf/nan results either
            i, n = 0, len(cmds)
            index = fusion.References(cmds) if windows else None
            while i < n:
                end = windows.get(i) if windows else None
                if end is not None and self.fusion:  # the batch may turn fusion off
                    fusion.run_window(self, cmds, i, end, refs, errors, index)
                    i = end
                    continue
                cmd = cmds[i]
                i += 1
                if cmd[0] == "B":
                    layout = cmd[2] if cmd[1] is None else refs[cmd[1]]
                elif cmd[0] == "bsync":
                    errors += self._expand(layout[done : cmd[1]], refs)
                    done = cmd[1]
                elif cmd[0] == "tref":
                    self._tcur = cmd[1]
                elif cmd[0] == "tmail":
                    self._tmail = [cmd[1], 0, cmd[2]]
                    self.mailbox.expire(cmd[1])
                else:
                    self._step(cmd, refs, errors, exports)
        if done < len(layout):
            errors += self._expand(layout[done:], refs)
        if self._texp:  # after the batch's own exports, in the order the trees ran
            exports += self._texp
            self._texp = []
        return errors if not exports else (errors, *exports)

    def _step(self, cmd, refs, errors, exports):
        """Run one command of a batch."""
        head = cmd[0]
        if head == "free":
            self._free(cmd[1])
        elif head == "export":
            exports.append(self._export(cmd[1], cmd[2]))
        elif head == "trace":
            _trace(cmd[1])
        elif head == "threads":
            threads.set_threads(cmd[1])
        elif head == "pool":
            self.pool_max = max(0, int(cmd[1]))
            self._recycle(None)  # down to the new cap
        elif head == "fusion":
            self.fusion = bool(cmd[1])
            self.fusion_block = cmd[2] or fusion.BLOCK_ELEMS
            self.fusion_min = cmd[3] or fusion.MIN_ELEMS
        elif head == "alias":
            self._alias(cmd[1], cmd[2], errors)
        elif head == "drop_range":
            self._drop_range(*cmd[1:])
        elif head == "prog":
            errors += self._program(*cmd[1:])
        elif head == "progdef":
            self.programs[cmd[1]] = program.Compiled(cmd[2], KERNELS)
        elif head == "progdel":
            self.programs.pop(cmd[1], None)
        elif head == "reset":
            self._reset(None if cmd[1] is None else refs[cmd[1]])
        elif head == "hold":
            self.held[cmd[1]] = refs[cmd[2]]
        else:
            self._kernel(cmd, refs, errors)

    def _free(self, keys):
        store, poisoned = self.store, self.poisoned
        for k in keys:
            self._recycle(store.pop(k, None))
            poisoned.pop(k, None)
        if self.cow:
            self.cow.difference_update(keys)

    def _kernel(self, cmd, refs, errors):
        """Run one kernel command; a failure poisons its outputs and is recorded."""
        store, poisoned = self.store, self.poisoned
        self.commands_run += 1
        head, args, outs, params, label, inplace = cmd
        if inplace and self.published_seen:
            self._detach(outs)
        try:
            vals = [self._arg(a, refs) for a in args]
            fn = KERNELS[head]
            if getattr(fn, "pooled", False) and not inplace:
                res = fn(self.xp, *vals, alloc=self._take, **params)
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
        except _Poisoned as p:
            for k in outs:
                poisoned[k] = p.record
            errors.append(dict(p.record, cascade=True))
        except Exception as e:  # reported to the driver, which raises it typed
            program.failed(
                e, label or (head, None), self.index, outs, inplace, store, poisoned, errors
            )

    # ------------------------------------------------------------------ layout commands
    def mine(self, desc) -> list:
        """The shards this worker holds in a layout described by ``desc``: ``("mod", m, n)``
        (shard ``s`` of ``n`` on worker ``s % m``) or the tuple of every shard's worker."""
        got = self._mine.get(desc)
        if got is None:
            if desc[0] == "mod":
                got = list(range(self.index, desc[2], desc[1])) if self.index < desc[1] else []
            else:
                got = [s for s, w in enumerate(desc) if w == self.index]
            if len(self._mine) > 1024:
                self._mine.clear()
            self._mine[desc] = got
        return got

    def _expand(self, layout_cmds, refs) -> list:
        """Run layout commands as the per-shard commands they stand for (this worker's
        shards only); returns the error records."""
        out, errors = [], []
        for c in layout_cmds:
            if c[0] == "tree":  # after the commands before it, which may make its input
                errors += self._run_nested(out, refs)
                out = []
                mail = self._tmail
                if mail is not None:  # the tree's tag: every worker counts the same trees
                    mail[1] += 1
                self._tree(c[2], set(self.mine(c[1])), refs, errors, mail)
                continue
            shards = self.mine(c[1] if c[0] == "gfree" else c[2])
            if not shards:
                continue
            if c[0] == "gfree":
                out.append(("free", [c[2] + s for s in shards]))
                continue
            _, kernel, _, args, base, params, label, inplace = c
            for s in shards:
                a = tuple(("k", x[1] + s, None) if x[0] == "K" else x for x in args)
                out.append((kernel, a, (base + s,), params, (label, s), inplace))
        return errors + self._run_nested(out, refs)

    def _run_nested(self, cmds, refs) -> list:
        """Run expanded per-shard commands (no exports); returns their error records."""
        if not cmds:
            return []
        held, self._texp = self._texp, []  # the tree partials belong to the outer batch
        mail = self._tmail
        try:
            return Worker.run(self, cmds, *refs)  # (not a batch: a Ray worker counts those)
        finally:
            self._texp, self._tmail = held, mail

    def _tree(self, spec, mine, refs, errors, mail=None) -> None:
        """Expand a reduction for this worker (``spec``: see :func:`sharded.core.tree`'s
        ``plan_reduce``): per group it takes part in, reduce the live shards it holds
        (chunk), combine them with the partials of its children in the group's fan-in tree
        (``parts``: the group's workers, root first; the children of position ``p`` are
        ``p * fan + 1 ... p * fan + fan``), then hand the result to its parent (an extra
        return value of the batch) or, at the root, store it under the output keys."""
        chunk, cparams, combine, fn, start, outs, bounds, repl, squeeze, groups, label, fan = spec
        me, tmp = self.index, -1  # negative keys: never a driver key
        for g, (parts, live) in enumerate(groups):
            if me not in parts:
                continue
            pos = parts.index(me)
            args = []
            for s in live:
                if s not in mine:
                    continue
                p = cparams
                if "gshape" in cparams:  # (value, index) chunks need the shard's offsets
                    p = dict(cparams, offsets=_offsets(bounds, s, repl))
                ks = (tmp,) if len(outs) == 1 else (tmp, tmp - 1)
                tmp -= len(outs)
                cmd = (chunk, (("k", start + s, None),), ks, p, (label, s), False)
                self._kernel(cmd, refs, errors)
                args += [("k", k, None) for k in ks]
            kids = range(pos * fan + 1, min(pos * fan + fan + 1, len(parts)))
            crefs = refs
            if mail is not None:
                tags = [(*mail[0], mail[1], g, c) for c in kids]
                got = [v for t in tags for v in self._take_partials(t, mail[2], errors)]
                crefs = (*refs, *got)
                args += [("r", len(refs) + i) for i in range(len(got))]
            else:
                nkids = len(kids) * len(outs)
                args += [("r", self._tcur + i) for i in range(nkids)]
                self._tcur += nkids
            root = pos == 0
            ks = tuple(o + g for o in outs) if root else (tmp, tmp - 1)[: len(outs)]
            params = {"fn": fn, "squeeze": squeeze} if root else {"fn": fn}
            self._kernel((combine, tuple(args), ks, params, (label, None), False), crefs, errors)
            self._free([a[1] for a in args if a[0] == "k"])
            if not root:
                vals = [self._export(k, None) for k in ks]
                self._texp += vals
                if mail is not None:
                    self.mailbox.send(parts[(pos - 1) // fan], (*mail[0], mail[1], g, pos), vals)
                self._free(ks)

    def _take_partials(self, tag, timeout, errors) -> list:
        """A child's partials from the mailbox; a take that fails (aborted or past its bound)
        is an error of this batch and a failure record in place of the partials, so the
        combine poisons its outputs like any failed input."""
        try:
            return self.mailbox.take(tag, timeout)
        except mailbox.MailAborted as e:
            rec = {"op": "reduce", "shard": None, "worker": self.index, "cause": str(e)}
            errors.append(dict(rec, cascade=False))
            return [_Failed(rec)]

    def _program(self, pid, base, inkeys) -> list:
        """Run stored program ``pid`` with its keys bound (see the module docstring): a tight
        loop over the steps :class:`.program.Compiled` prepared when it was defined."""
        return self.programs[pid].run(self, base, inkeys)

    # ------------------------------------------------------------------ publishing
    def _alias(self, src, dst, errors):
        arr = self.store.get(src)
        if arr is None:
            rec = self.poisoned.get(src) or {
                "op": "publish",
                "shard": None,
                "worker": self.index,
                "cause": f"KeyError: shard {src} is not on worker {self.index}",
            }
            self.poisoned[dst] = rec
            errors.append(dict(rec, cascade=False))
            return
        self.store[dst] = _readonly_view(arr)
        self.cow.add(dst)
        self.published_seen = True

    def _detach(self, outs):
        """Copy on write: before writing into ``outs``, give every published snapshot that
        shares their memory a copy of its own (the writer keeps its views intact); a target
        that is itself read-only (a reader's reshape that kept the snapshot's memory) gets
        its own writable copy."""
        store = self.store
        for k in outs:
            tgt = store.get(k)
            if tgt is None:
                continue
            if isinstance(tgt, np.ndarray) and not tgt.flags.writeable:
                store[k] = tgt = tgt.copy()
            for p in [p for p in self.cow if p in store]:
                if self.xp.may_share_memory(store[p], tgt):
                    store[p] = _readonly_view(store[p].copy())
                    self.cow.discard(p)

    def _drop_range(self, lo, hi, keep):
        keep = set(keep)
        for k in [k for k in self.store if lo <= k < hi and k not in keep]:
            self._recycle(self.store.pop(k, None))
        for k in [k for k in self.poisoned if lo <= k < hi and k not in keep]:
            del self.poisoned[k]
        self.cow = {k for k in self.cow if k in self.store}

    def _arg(self, a, refs):
        tag = a[0]
        if tag == "k":
            key, sl = a[1], a[2]
            arr = self.store.get(key)
            if arr is None:
                raise _Poisoned(
                    self.poisoned.get(key)
                    or {
                        "op": "read",
                        "shard": None,
                        "worker": self.index,
                        "cause": f"KeyError: shard {key} is not on worker {self.index}",
                    }
                )
            return arr if sl is None else arr[sl]
        if tag == "c":
            v = a[1]
            return self.backend.to_device(v) if isinstance(v, np.ndarray) else v
        v = refs[a[1]]
        if isinstance(v, _Failed):
            raise _Poisoned(v.record)
        return self.backend.to_device(v)

    def _export(self, key, sl):
        arr = self.store.get(key)
        if arr is None:
            return _Failed(
                self.poisoned.get(key)
                or {
                    "op": "export",
                    "shard": None,
                    "worker": self.index,
                    "cause": f"KeyError: shard {key} is not on worker {self.index}",
                }
            )
        part = arr if sl is None else arr[sl]
        part = self.backend.to_host(part)
        return np.array(part, copy=True) if self.copy_exports else np.asarray(part, order="C")

    # ------------------------------------------------------------------ buffer pool
    def _recycle(self, arr):
        """Keep a freed block for reuse: a fresh allocation of a big block costs page faults
        (the kernel zeroes every page), a reused one is already mapped. Past the cap (this
        worker's share, :data:`POOL_MAX_BYTES` at most) the blocks pooled longest ago go
        first: one-off shapes must not fill the pool for good. ``arr=None`` only trims the
        pool to the cap."""
        cap = self._pool_cap()
        keep = (
            arr is not None
            and POOL_MIN_BYTES <= arr.nbytes <= cap
            and arr.flags.owndata
            and arr.flags.c_contiguous
            and sys.getrefcount(arr) <= 2  # else a view elsewhere still uses its memory
        )
        pool = self.pool
        while pool and self.pool_bytes + (arr.nbytes if keep else 0) > cap:
            old = next(iter(pool))  # dicts keep insertion order: the oldest shape first
            self.pool_bytes -= pool[old].pop(0).nbytes
            if not pool[old]:
                del pool[old]
        if not keep:
            return
        key = (arr.shape, arr.dtype.str)
        blocks = pool.pop(key, [])  # re-inserted last: the most recently pooled shape
        blocks.append(arr)
        pool[key] = blocks
        self.pool_bytes += arr.nbytes

    def _pool_cap(self) -> int:
        """This worker's pool cap: its share (the ``pool`` command), at most
        :data:`POOL_MAX_BYTES` (read at each call: tests lower it)."""
        return POOL_MAX_BYTES if self.pool_max is None else min(self.pool_max, POOL_MAX_BYTES)

    def _take(self, shape, dtype):
        """A pooled block of ``shape``/``dtype`` (contents undefined), or None."""
        key = (tuple(shape), np.dtype(dtype).str)
        free = self.pool.get(key)
        if not free:
            return None
        arr = free.pop()
        if not free:
            del self.pool[key]
        self.pool_bytes -= arr.nbytes
        return arr

    # ------------------------------------------------------------------ reading
    def fetch(self, items):
        """Host copies of ``(key, slices)`` items; a failed shard comes back as its error."""
        out = []
        for key, sl in items:
            arr = self.store.get(key)
            if arr is None:
                out.append(
                    _Failed(
                        self.poisoned.get(key)
                        or {
                            "op": "read",
                            "shard": None,
                            "worker": self.index,
                            "cause": f"KeyError: shard {key} is not on worker {self.index}",
                        }
                    )
                )
                continue
            part = self.backend.to_host(arr if sl is None else arr[sl])
            out.append(np.array(part, copy=True) if self.copy_exports else part)
        return out

    def stats(self) -> dict:
        """Live shards, their bytes, and this process's resident memory."""
        return {
            "worker": self.index,
            "device": self.device,
            "pid": os.getpid(),
            "live_shards": len(self.store),
            "live_bytes": int(sum(a.nbytes for a in self.store.values())),
            "pool_bytes": self.pool_bytes,
            "pool_max_bytes": self._pool_cap(),
            "rss_bytes": _rss_bytes(),
            "commands_run": self.commands_run,
            "fused_runs": self.fused_runs,
            "fused_commands": self.fused_commands,
            "blas_threads": threads.blas_threads(),
            "traced_peak_bytes": tracemalloc.get_traced_memory()[1]
            if tracemalloc.is_tracing()
            else None,
        }

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
            self.store[k] = _readonly_view(arr) if k in state["cow"] else arr
        self.poisoned = dict(state["poisoned"])
        self.cow = set(state["cow"])
        self.published_seen = state["published_seen"]
        self.fusion, self.fusion_block, self.fusion_min = state["fusion"]
        self.programs = dict(state["programs"])
        if state["threads"]:
            threads.set_threads(state["threads"])


class _Failed:
    """Stands in for data that could not be produced (its error record travels instead)."""

    def __init__(self, record):
        self.record = record


class _Poisoned(Exception):
    def __init__(self, record):
        super().__init__(record["cause"])
        self.record = record


def _offsets(bounds, s, repl) -> tuple:
    """Offsets of shard ``s`` (C order over the grid that ``bounds`` cut)."""
    if repl:
        return (0,) * len(bounds)
    out = []
    for b in reversed(bounds):
        s, c = divmod(s, len(b) - 1)
        out.append(b[c])
    return tuple(reversed(out))


def _readonly_view(arr):
    """A view that refuses writes (NumPy; CuPy has no such flag), so a kernel that writes
    into a published snapshot by mistake fails instead of changing it."""
    v = arr.view()
    if isinstance(v, np.ndarray):
        v.flags.writeable = False
    return v


def is_failed(v) -> bool:
    return isinstance(v, _Failed)


def _trace(on: bool) -> None:
    """Trace allocations (NumPy reports its data buffers too) from now on, or stop.

    Only blocks allocated while tracing count, so the peak is the extra memory an operation
    needed; data mapped from the object store is not an allocation and does not count."""
    if on:
        if not tracemalloc.is_tracing():
            tracemalloc.start()
        tracemalloc.reset_peak()
        tracemalloc.clear_traces()
    elif tracemalloc.is_tracing():
        tracemalloc.stop()


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: report peak instead of current
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
