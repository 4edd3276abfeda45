"""Recovery from lost workers: lineage at the level of the workers' command streams.

Every worker's state is a deterministic function of the ordered batches the driver sent it:
kernels are deterministic, random numbers are counter-based, data from the driver arrives as
constants in the batch or as ``put`` refs, and the only inputs from other workers are exports,
themselves made by earlier batches. So the executor keeps a **log** of every batch it sends,
in dispatch order (:meth:`Recovery.record`, called where batches leave:
``Executor._flush1``): the worker, the commands, the refs, and for each ref that is an export
only *where* it was made (log index, position), so an export's data is not kept alive by the
log. A **cut** (:meth:`Recovery.cut`) bounds the log: when it passes :data:`LOG_MAX_COMMANDS`
commands or :data:`PUT_MAX_BYTES` of retained ``put`` data (or the size of the last cut, if
larger), the next ``sync``/read that finds everything drained asks every worker for its whole
store as one object (:meth:`Worker.snapshot`, kept in the object store) and the log restarts
from "restore those snapshots".

When a wait finds a worker lost (:class:`Lost`), :meth:`Recovery.recover` collects the other
batches still in flight (their errors swallowed: they are part of the loss), starts a
replacement worker with the same actor name, resets **every** worker to the last cut and
replays the whole log in its original order, each replayed export standing in for the one it
replaces (batches of different workers run in parallel; Ray resolves the refs). Replaying the
surviving workers too is what makes it exact: a survivor whose batch failed on a lost export
went on with its later batches out of order. Handles the interrupted call waits for, the
batches in flight, and exports a planner holds but has not used yet are mapped to their
replayed versions, and the call finishes as if nothing happened.

An executor gives recovery these hooks besides ``_dispatch``/``_stats``: ``_get(handles,
timeout)`` (values, or :class:`Lost`), ``_hkey(h, track)`` (a key naming a handle without
keeping its data alive), ``_settle(handles)`` (wait, bounded, for batches a loss may have
failed, swallowing their errors), ``_dead_workers()``, ``_replace(w)`` (a fresh worker under
the same name) and ``_snapshot(w)`` (``(size, state)`` handles of the worker's store).

Recovery is off with ``st.init(recovery=False)`` / ``SHARDED_RECOVERY=0``, in shared
namespaces (one client's log cannot rebuild another client's shards) and behind relays; a
loss then raises :class:`~sharded.errors.WorkerLost` saying why.
"""

from __future__ import annotations

import collections
import os
import pickle
import time
import weakref

from ..errors import WorkerLost
from .worker import Worker

LOG_MAX_COMMANDS = int(os.environ.get("SHARDED_RECOVERY_LOG", "100000"))
PUT_MAX_BYTES = int(os.environ.get("SHARDED_RECOVERY_PUT_BYTES", str(1 << 30)))
MAX_ATTEMPTS = 3  # recoveries one wait tries before giving up (a worker dying again and again)
TIMEOUT_S = float(os.environ.get("SHARDED_RECOVERY_TIMEOUT", "600"))  # bound of every wait


class Lost(Exception):
    """Raised by an executor's ``_get`` when a handle's worker (or its data) is gone."""

    def __init__(self, cause):
        super().__init__(str(cause))
        self.cause = cause


class Stale(Exception):
    """A handle the interrupted wait held cannot be mapped to a replayed one (it was not
    made by a logged batch, e.g. a statistics call): the caller asks again."""


_Exp = collections.namedtuple("_Exp", "batch pos")  # an export of log entry ``batch``


def _dump(obj) -> bytes:
    # pickle, not marshal: marshal turns any buffer (a NumPy constant) into plain bytes
    return pickle.dumps(obj, 5)


def _thaw(frozen) -> list:
    """A logged batch (:meth:`Recovery._freeze`) as the command list it was."""
    shared, rest = frozen
    cmds = list(pickle.loads(rest)) if isinstance(rest, bytes) else list(rest)
    if shared is not None:
        cmds.insert(0, ("B", None, pickle.loads(shared)))
    return cmds


def _ring(w: int, n: int):
    return ((w + k) % n for k in range(1, n))


def enabled_by_env() -> bool:
    return os.environ.get("SHARDED_RECOVERY", "1") != "0"


class Recovery:
    """The batch log of one executor, its last cut, and the recovery procedure.

    Examples
    --------
    >>> from sharded.runtime.local_executor import LocalExecutor
    >>> ex = LocalExecutor(2)
    >>> ex.submit(0, "full", (), (1,), {"shape": (2,), "value": 1.0, "dtype": "float64"})
    >>> ex.lose(0)  # the in-process stand-in for a killed actor
    >>> ex.fetch([(0, 1, None)])[0]  # rebuilt by replaying the log on a new worker
    array([1., 1.])
    >>> ex.recovery_stats()["count"]
    1
    """

    def __init__(self, ex):
        self.ex = ex
        # (w, cmds, refs spec, nexp, errs handle, export keys, whether a read exports them)
        self.log: list = []
        self.exp_at: dict = {}  # export key -> _Exp
        self.remap: dict = {}  # old export key -> replayed handle (not yet used ones only)
        self._shared = (None, b"")  # the last layout commands pickled, and their bytes
        self.base = None  # per worker: the snapshot handle the log starts from
        self.base_bytes = 0
        self.commands = 0
        self.put_bytes = 0
        self.count = self.batches = self.shards = self.cuts = self.replaced = 0
        self.seconds = 0.0

    # ------------------------------------------------------------------ logging
    def record(self, w, cmds, refs, nexp, errs, exports) -> None:
        """Append a batch just dispatched (the whole cost of recovery when nothing fails)."""
        at = self.exp_at
        spec = tuple(at.get(self.ex._hkey(r), r) for r in refs) if refs else ()
        i = len(self.log)
        keys = ()
        if exports:
            keys = tuple(self.ex._hkey(h, True) for h in exports)
            for p, k in enumerate(keys):
                at[k] = _Exp(i, p)
        self.log.append((w, self._freeze(cmds), spec, nexp, errs, keys, self.ex._reading))
        self.commands += len(cmds)

    def _freeze(self, cmds):
        """The batch as pickled bytes: a copy of the constants it carries (the driver's arrays may
        change later), and no objects for Python's garbage collector to scan again and again
        (a log of live command tuples made every full collection slower). A flush's layout
        commands, shared by its batches, are pickled once."""
        head = cmds[0] if cmds else None
        shared = None
        try:
            if head is not None and head[0] == "B" and head[2] is not None:
                if self._shared[0] is not head[2]:
                    self._shared = (head[2], _dump(head[2]))
                    self.commands += len(head[2])
                shared, cmds = self._shared[1], cmds[1:]
            return shared, _dump(cmds)
        except Exception:  # not picklable without cloudpickle: keep the objects themselves
            return None, list(cmds) if shared is None else [head] + list(cmds)

    def translate(self, refs):
        """Refs of a batch about to leave, with exports made before a recovery replaced."""
        key, remap = self.ex._hkey, self.remap
        return [remap.get(key(r), r) for r in refs]

    def due(self) -> bool:
        return self.commands > LOG_MAX_COMMANDS or self.put_bytes > max(
            PUT_MAX_BYTES, self.base_bytes
        )

    def cut(self) -> None:
        """Snapshot every worker (everything drained first) and restart the log from it."""
        ex = self.ex
        ex.flush_all()
        ex._collect(ex._drain_inflight())
        pairs = [ex._snapshot(w) for w in range(ex.num_workers)]
        try:
            sizes = ex._get([p[0] for p in pairs], TIMEOUT_S)
        except Lost as e:  # a worker died meanwhile: recover from the old cut instead
            ex._settle([p[0] for p in pairs])
            self.recover([], e.cause)
            return
        self.base = [p[1] for p in pairs]
        self.base_bytes = int(sum(sizes))
        self._second_copies()
        self.log, self.exp_at, self.remap = [], {}, {}
        self.commands = self.put_bytes = 0
        self.cuts += 1

    def _second_copies(self) -> None:
        """Each snapshot also held by a worker on another node (the next one round the
        ring), so that removing a node does not take the only copy with it."""
        ex = self.ex
        nodes = [i.node for i in ex.workers]
        holds = []
        for w, snap in enumerate(self.base):
            h = next((v for v in _ring(w, len(nodes)) if nodes[v] != nodes[w]), None)
            if h is not None:
                holds.append(ex._dispatch(h, [("hold", w, 0)], [snap], 0)[0])
        try:
            ex._get(holds, TIMEOUT_S)
        except Lost:  # a holder died: those snapshots have one copy until the next cut
            ex._settle(holds)

    # ------------------------------------------------------------------ recovering
    def recover(self, handles, cause):
        """Rebuild every worker from the last cut and the log; return ``handles`` (what the
        interrupted wait was waiting for) mapped to their replayed versions."""
        ex = self.ex
        t0 = time.perf_counter()
        waiting = list(handles)
        if not self._known(waiting) and not ex._dead_workers():
            # handles made before an earlier recovery (a read under way then): every worker
            # is whole again, so the caller asks anew instead of replaying once more
            raise Stale()
        inflight = [list(d) for d in ex._inflight]
        pending = [h for d in inflight for h in d] + waiting
        replaced = set()
        for _ in range(MAX_ATTEMPTS):
            ex._settle(pending)  # the old batches: finished, their errors swallowed
            dead = ex._dead_workers()
            resets, new_errs, new_exps = [], [], []
            try:
                for w in dead:
                    ex._replace(w)
                    replaced.add(w)
                resets, new_errs, new_exps = self._replay()
                results = ex._get(resets + new_errs, TIMEOUT_S)[len(resets) :]
                break
            except Lost as e:  # another loss during the replay: settle it, start over
                cause, pending = e.cause, resets + new_errs
        else:
            why = (
                " (if a node was removed after the last cut, its workers' snapshots went with it)"
                if self.base is not None
                else ""
            )
            raise WorkerLost(
                f"recovery failed {MAX_ATTEMPTS} times (last: {cause}){why}: every tensor of "
                "this session is lost"
            )
        out = self._adopt(new_errs, new_exps, results, inflight, waiting)
        self.count += 1
        self.replaced += len(replaced)
        self.batches += len(self.log)
        try:
            got = ex._get([ex._stats(w) for w in sorted(replaced)], TIMEOUT_S)
            self.shards += sum(s["live_shards"] for s in got)
        except Lost:  # lost again already: the next wait recovers; the count is best effort
            pass
        self.seconds += time.perf_counter() - t0
        if any(h is None for h in out):
            raise Stale()
        return out

    def _known(self, handles) -> bool:
        """Whether every handle names a batch or an export of the current log."""
        errs = {id(e[4]) for e in self.log}
        key = self.ex._hkey
        return all(id(h) in errs or key(h) in self.exp_at for h in handles)

    def _replay(self):
        """Reset every worker to the cut, then send the whole log again, in order."""
        ex = self.ex
        resets = []
        for w in range(ex.num_workers):
            snap = self.base[w] if self.base is not None else None
            refs = [] if snap is None else [snap]
            resets.append(ex._dispatch(w, [("reset", None if snap is None else 0)], refs, 0)[0])
        errs, exps = [], []
        for i, (w, cmds, spec, nexp, *_) in enumerate(self.log):
            refs = [exps[s.batch][s.pos] if type(s) is _Exp else s for s in spec]
            e, x = ex._dispatch(w, _thaw(cmds), refs, nexp)
            errs.append(e)
            exps.append(list(x))
        return resets, errs, exps

    def _adopt(self, new_errs, new_exps, results, inflight, waiting):
        """Make the replayed batches the log's, and map every old handle still in use."""
        ex = self.ex
        key = ex._hkey
        by_errs = {}
        used = set()
        for i, entry in enumerate(self.log):
            by_errs[id(entry[4])] = i
            used.update(s for s in entry[2] if type(s) is _Exp)
            if entry[6]:  # a read's exports: read once, by the wait they were made for
                used.update(_Exp(i, p) for p in range(entry[3]))
        # batches in flight at the loss: their (replayed) errors surface as usual
        for d in inflight:
            for h in d:
                i = by_errs.get(id(h))
                if i is not None:
                    ex._record([results[i]])
        for d in ex._inflight:
            d.clear()
        # the interrupted wait's handles: batch error lists or exports (a read)
        mapped = []
        for h in waiting:
            i = by_errs.get(id(h))
            if i is not None:
                mapped.append(new_errs[i])
                continue
            at = self.exp_at.get(key(h))
            mapped.append(None if at is None else new_exps[at.batch][at.pos])
        # exports not used yet (a planner holds them; or queued refs): replayed stand-ins
        remap = {}
        for k, h in self.remap.items():
            at = self.exp_at.get(key(h))
            if at is not None:
                remap[k] = new_exps[at.batch][at.pos]
        for k, at in self.exp_at.items():
            if at not in used:
                remap[k] = new_exps[at.batch][at.pos]
        log, at_new = [], {}
        for i, (w, cmds, spec, nexp, _, _, read) in enumerate(self.log):
            keys = tuple(key(h, True) for h in new_exps[i])
            for p, k in enumerate(keys):
                at_new[k] = _Exp(i, p)
            log.append((w, cmds, spec, nexp, new_errs[i], keys, read))
        self.log, self.exp_at, self.remap = log, at_new, remap
        return mapped

    def stats(self) -> dict:
        return {
            "enabled": True,
            "count": self.count,
            "seconds": round(self.seconds, 6),
            "workers_replaced": self.replaced,
            "batches_replayed": self.batches,
            "shards_rebuilt": self.shards,
            "log_batches": len(self.log),
            "log_commands": self.commands,
            "cuts": self.cuts,
        }


def lost(ex, cause, reason):
    """Recovery is off (``reason``): collect what is in flight (so Ray reports no unhandled
    errors) and raise :class:`WorkerLost` naming the lost workers."""
    ex._settle([h for d in ex._inflight for h in d])
    for d in ex._inflight:
        d.clear()
    try:
        names = [ex.workers[w].name for w in ex._dead_workers()]
    except Exception:  # naming is best effort; the error below is what matters
        names = []
    who = ", ".join(names) or "a worker"
    raise WorkerLost(
        f"{who} died ({cause}); recovery is off ({reason}), so every tensor of this "
        "session is lost: start again from your data or a checkpoint"
    )


class LocalLoss:
    """What :class:`~sharded.runtime.local_executor.LocalExecutor` adds to recover: a way to lose a
    worker (tests), and the recovery hooks for in-process workers."""

    def lose(self, w: int, after: int = 0) -> None:
        """Make worker ``w`` die like a killed actor, now or after ``after`` more batches:
        its batches, and those that read its exports, fail with a loss (for tests).

        Examples
        --------
        >>> from sharded.runtime.local_executor import LocalExecutor
        >>> ex = LocalExecutor(2)
        >>> ex.lose(1)
        >>> ex.stats()[1]["worker"]  # rebuilt on first use
        1
        """
        if after:
            self._doom[w] = after
        else:
            self._workers[w] = None

    def _get(self, handles, timeout=None):
        for h in handles:
            if type(h) is LostMark:
                raise Lost(f"worker {h.w} was lost")
        return list(handles)

    def _settle(self, handles):
        """In process, every batch has finished already."""

    def _hkey(self, h, track=False):
        if track:  # the object's id names it only while it lives
            weakref.finalize(h, self._forget, id(h))
        return id(h)

    def _forget(self, k):
        # an id is reused once its object dies: forget it everywhere it names an export
        if self._rec is not None:
            self._rec.exp_at.pop(k, None)
            self._rec.remap.pop(k, None)

    def _dead_workers(self):
        return [w for w, x in enumerate(self._workers) if x is None]

    def _replace(self, w):
        self._workers[w] = Worker(w, self.workers[w].device, copy_exports=True)

    def _snapshot(self, w):
        worker = self._workers[w]
        return (LostMark(w), LostMark(w)) if worker is None else worker.snapshot()


class LostMark:
    """What a lost in-process worker returns instead of a result (like a dead actor's ref)."""

    __slots__ = ("w", "__weakref__")

    def __init__(self, w):
        self.w = w
