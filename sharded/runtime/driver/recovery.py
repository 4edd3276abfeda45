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

An executor gives recovery the hooks of its :class:`~.transport.Transport` besides
``_dispatch``/``_stats``: ``_get(handles, timeout)`` (values, or :class:`Lost`),
``_hkey(h, track)`` (a key naming a handle without keeping its data alive),
``_settle(handles)`` (wait, bounded, for batches a loss may have failed, swallowing their
errors), ``_dead_workers()``, ``_replace(w)`` (a fresh worker under the same name) and
``_snapshot(w)`` (``(size, state)`` handles of the worker's store).

Behind relays (:mod:`.relay`, more than ``SHARDED_RELAY_MIN`` workers) a flush's batches are
composed by the relays: the log keeps one entry per relay shipment (:meth:`Recovery.record_ship`)
and a replay writes it out as the batches the relay made (:meth:`Recovery._expand`). A replay
goes to the workers directly (``_dispatch_direct``), after every batch a relay started has
finished (``_settle``); the relays then get the replacement workers and, for the exports they
held, the replayed stand-ins (``_adopted``; ``_resolve`` names an export made before the cut).

Recovery is off with ``st.init(recovery=False)`` / ``SHARDED_RECOVERY=0`` and in shared
namespaces (one client's log cannot rebuild another client's shards); a loss then raises
:class:`~sharded.errors.WorkerLost` saying why and naming the tensors lost (the executor's
``live`` table: layout and dtype of every live tensor, kept by ``tensor.py``).

Every wait is bounded: an executor's ``_get`` raises :class:`Late` past its ``timeout``
(``st.init(timeout=...)``, ``SHARDED_TIMEOUT``; 30 minutes by default), which an ordinary wait
turns into :class:`~sharded.errors.WaitTimeout` and recovery's own waits treat as a loss.
"""

from __future__ import annotations

import collections
import datetime
import functools
import math
import os
import pickle
import time
from typing import Any, NamedTuple

from ...errors import ArgumentError, WaitTimeout, WorkerLost
from ..commands import Hold, LayoutCmds, Reset, Tree, TreeRefs
from ..packing import dump_batch, load_batch
from .links import _wire

LOG_MAX_COMMANDS = int(os.environ.get("SHARDED_RECOVERY_LOG", "100000"))
PUT_MAX_BYTES = int(os.environ.get("SHARDED_RECOVERY_PUT_BYTES", str(1 << 30)))
MAX_ATTEMPTS = 3  # recoveries one wait tries before giving up (a worker dying again and again)
TIMEOUT_S = float(os.environ.get("SHARDED_RECOVERY_TIMEOUT", "600"))  # bound of its waits
PING_S = 30  # a worker (or relay) that does not answer a ping in this time counts as lost
DEFAULT_TIMEOUT_S = 1800.0  # an ordinary wait's bound: torch's init_process_group default
MAX_NAMED = 5  # tensors a WorkerLost describes (it counts them all)


class Lost(Exception):
    """Raised by an executor's ``_get`` when a handle's worker (or its data) is gone."""

    def __init__(self, cause):
        super().__init__(str(cause))
        self.cause = cause


class Late(Lost):
    """Raised by an executor's ``_get`` when ``timeout`` passed before every handle was
    ready: ``workers`` (indices) had not answered after ``seconds``. Recovery's waits count
    it as a loss (a worker silent that long is replaced); ordinary ones raise WaitTimeout."""

    def __init__(self, workers, seconds):
        super().__init__(f"no answer within {seconds:g}s")
        self.workers, self.seconds = sorted(set(workers)), seconds


class Stale(Exception):
    """A handle the interrupted wait held cannot be mapped to a replayed one (it was not
    made by a logged batch, e.g. a statistics call): the caller asks again."""


_Exp = collections.namedtuple("_Exp", "batch pos")  # an export of log entry ``batch``


class _Entry(NamedTuple):
    """One batch of the log (``w`` None: a relay's whole shipment, :meth:`Recovery.record_ship`)."""

    w: Any
    frozen: Any  # the commands as bytes (:meth:`Recovery._freeze`), run as they are
    refs: Any  # per ref, the _Exp of an export of the log, else the ref itself
    nexp: int
    errs: Any  # the handle of the batch's error list (None: relayed)
    keys: tuple  # _hkey of each of its exports
    read: bool  # whether its exports are a read's (read once, by the wait they were made for)


_new_entry = functools.partial(tuple.__new__, _Entry)  # (as the command records' make)


def _dump(obj) -> bytes:
    # pickle, not marshal: marshal turns any buffer (a NumPy constant) into plain bytes
    return pickle.dumps(obj, 5)


def _ring(w: int, n: int):
    return ((w + k) % n for k in range(1, n))


def enabled_by_env() -> bool:
    return os.environ.get("SHARDED_RECOVERY", "1") != "0"


def as_seconds(value, name="timeout") -> float:
    """A wait bound given as seconds (int or float) or a ``datetime.timedelta``, as a
    positive float; anything else raises :class:`ArgumentError` naming the value.

    Examples
    --------
    >>> import datetime
    >>> as_seconds(datetime.timedelta(minutes=2)), as_seconds(5)
    (120.0, 5.0)
    """
    if isinstance(value, datetime.timedelta):
        secs = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        secs = float(value)
    else:
        raise ArgumentError(f"{name} must be seconds or a datetime.timedelta, got {value!r}")
    if not secs > 0 or math.isnan(secs):
        raise ArgumentError(f"{name} must be positive, got {value!r}")
    return secs


def timeout_from_env() -> float:
    """The default bound of every wait: ``SHARDED_TIMEOUT`` seconds, else 30 minutes."""
    env = os.environ.get("SHARDED_TIMEOUT")
    if env is None:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(env)
    except ValueError:
        raise ArgumentError(f"SHARDED_TIMEOUT must be seconds, got {env!r}") from None
    return as_seconds(value, "SHARDED_TIMEOUT")


def _describe(layout, dtype, label=None) -> str:
    n = layout.num_shards
    kind = dtype.name if dtype is not None else "tensor"
    what = f" {label}" if label else ""  # e.g. the name and version of a published snapshot
    return f"{kind}{list(layout.shape)}{what} ({n} shard{'s' if n != 1 else ''})"


def unrecoverable(ex, why: str, dead=None, advice: str = "") -> WorkerLost:
    """:class:`WorkerLost` saying ``why`` and naming the tensors lost: those with a shard on
    a worker of ``dead`` (indices), or every live tensor of the session (``dead`` None).
    Up to :data:`MAX_NAMED` are described (largest first), and all are counted.

    Examples
    --------
    >>> import sharded as st
    >>> from sharded.runtime.driver import session
    >>> _ = st.init(executor="local", num_workers=2)
    >>> x = st.zeros(4, 3, shards=2)
    >>> print(unrecoverable(session.current().executor, "for example", {1}))
    for example: 1 tensor with shards on sharded-worker-1 is lost: float32[4, 3] (2 shards)
    """
    live = list(ex.live.copy().values())  # (a finalizer may change it meanwhile)
    if dead is None:
        gone, where = live, "of this session"
    else:
        gone = [t for t in live if not dead.isdisjoint(t[0].workers)]
        where = "with shards on " + ", ".join(ex.workers[w].name for w in sorted(dead))
    gone.sort(key=lambda t: -math.prod(t[0].shape))
    descs = [_describe(*t) for t in gone]
    n = len(descs)
    if n:
        more = f", and {n - MAX_NAMED} more" if n > MAX_NAMED else ""
        what = (
            f"{n} tensor{'s' if n != 1 else ''} {where} "
            f"{'are' if n != 1 else 'is'} lost: {', '.join(descs[:MAX_NAMED])}{more}"
        )
    else:
        what = f"no live tensor {where} was lost"
    k = len(live) - n
    if k:  # on survivors, but a batch of theirs may have failed on the lost worker's data
        what += f"; the other {k} tensor{'s' if k != 1 else ''} may miss work that needed it"
    names = [ex.workers[w].name for w in sorted(dead or ())]
    return WorkerLost(f"{why}: {what}{advice}", names, descs)


class Recovery:
    """The batch log of one executor, its last cut, and the recovery procedure.

    Examples
    --------
    >>> from sharded.runtime.driver.local import LocalExecutor
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
        self.base = None  # per worker: the snapshot handle the log starts from
        self.base_bytes = 0
        self.commands = 0
        self.put_bytes = 0
        self.count = self.batches = self.shards = self.cuts = self.replaced = 0
        self.reported = 0  # the relayed batches before this log entry had their errors read
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
        entry = (w, self._freeze(cmds), spec, nexp, errs, keys, self.ex._reading)
        self.log.append(_new_entry(entry))  # (one per batch sent: built by make)
        self.commands += len(cmds)

    def record_ship(self, bc, order, own, nbc) -> None:
        """Append one relay's shipment (:func:`~sharded.runtime.driver.relay.ship`) as one entry:
        the layout commands ``bc`` (``nbc`` of them, packed as the relays got them) every
        worker of ``order`` runs and ``own[v] = (cmds, refs, exports)`` of the workers with
        their own. The relay composes the per-worker batches
        (and links the trees' partials); so does :meth:`_expand`, only when a replay needs
        them, which keeps the driver's cost per shipment free of a per-worker term."""
        at, key = self.exp_at, self.ex._hkey
        spec, cmds, keys = {}, {}, []
        for v, (c, refs, exports) in own.items():
            spec[v] = (tuple(at.get(key(r), r) for r in self.translate(refs)), len(exports))
            cmds[v] = c
            keys += [key(h, True) for h in exports]
            self.commands += len(c)
        i = len(self.log)
        for p, k in enumerate(keys):
            at[k] = _Exp(i, p)
        try:
            frozen = _dump((bc, tuple(order), cmds))
        except Exception:  # not picklable without cloudpickle: keep the objects themselves
            frozen = (bc, tuple(order), cmds)
        self.log.append(_Entry(None, frozen, spec, len(keys), None, tuple(keys), self.ex._reading))
        self.commands += nbc

    def _expand(self) -> None:
        """Write every shipment of the log out as the batches its relay composed (see
        :meth:`record_ship`): per worker of its order, the layout commands, its own commands
        and the partials of its tree children as refs to their batches' extra exports.
        Positions of exports (``_Exp``) are renumbered to the expanded log's."""
        if all(e.w is not None for e in self.log):
            return
        log, where = [], []  # where[i][p]: old export (i, p) in the expanded log
        start = []  # start[i]: where old entry i begins in the expanded log

        def fix(s):
            return where[s.batch][s.pos] if type(s) is _Exp else s

        for e in self.log:
            start.append(len(log))
            if e.w is not None:
                where.append([_Exp(len(log), p) for p in range(e.nexp)])
                log.append(e._replace(refs=tuple(map(fix, e.refs))))
                continue
            frozen = e.frozen
            bc, order, cmds = pickle.loads(frozen) if isinstance(frozen, bytes) else frozen
            if type(bc) is bytes:  # (as the relays got them: packed once)
                bc = load_batch(bc)
            kids, nout = {}, {}
            if any(type(c) is Tree for c in bc):
                order, kids, nout = _wire(bc, order)
            at = {}
            for v in order:
                refs, nown = e.refs.get(v, ((), 0))
                refs = list(map(fix, refs))
                batch = [LayoutCmds(None, bc)] if bc else []
                if v in kids:  # its children's partials: their batches come first
                    batch.append(TreeRefs(len(refs)))
                    refs += [_Exp(at[c], e.refs.get(c, ((), 0))[1] + j) for c, j in kids[v]]
                batch += cmds.get(v, ())
                at[v] = len(log)
                nexp = nown + nout.get(v, 0)
                frozen = dump_batch(batch)
                log.append(_Entry(v, frozen, tuple(refs), nexp, None, (), e.read))
            where.append([_Exp(at[v], p) for v, (_, n) in e.refs.items() for p in range(n)])
        self.exp_at = {k: where[a.batch][a.pos] for k, a in self.exp_at.items()}
        self.reported = (start + [len(log)])[self.reported]
        self.log = log

    def _freeze(self, cmds):
        """The batch as bytes (:func:`~sharded.runtime.commands.dump_batch`: those the
        executor just sent through Ray, else packed now): a copy of the constants it
        carries (the driver's arrays may change later), and no objects for Python's garbage
        collector to scan again and again (a log of live command tuples made every full
        collection slower). A flush's layout commands, shared by its batches, are packed
        once. A batch only cloudpickle can carry is kept as its objects."""
        try:
            return self.ex._packer.packed(cmds)
        except Exception:  # not picklable without cloudpickle: keep the objects themselves
            return list(cmds)

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
        try:
            ex._collect(ex._drain_inflight(), "the batches before a recovery cut")
            ex._drain_relayed("the batches before a recovery cut")
        except WaitTimeout:  # a worker is slow: the read that asked succeeded; cut later
            return
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
        self.commands = self.put_bytes = self.reported = 0
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
                holds.append(ex._dispatch_direct(h, [Hold(w, 0)], [snap], 0)[0])
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
        inflight = [list(d) for d in ex._inflight] + [ex._late]
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
                ex._rebuilt(replaced)
                break
            except Lost as e:  # another loss during the replay: settle it, start over
                cause, pending = e.cause, resets + new_errs
        else:
            why = (
                " (if a node was removed after the last cut, its workers' snapshots went with it)"
                if self.base is not None
                else ""
            )
            raise unrecoverable(ex, f"recovery failed {MAX_ATTEMPTS} times (last: {cause}){why}")
        out = self._adopt(new_errs, new_exps, results, inflight, waiting)
        self.count += 1
        self.replaced += len(replaced)
        self.batches += len(self.log)
        try:
            got = ex._get([ex._stats(w) for w in sorted(replaced)], TIMEOUT_S)
            self.shards += sum(s["live_shards"] for s in got)
        except Lost:  # lost again already: the next wait recovers; the count is best effort
            pass
        took = time.perf_counter() - t0
        self.seconds += took
        if ex.metrics is not None:
            ex.metrics.recovered(sorted(replaced), took)
        if any(h is None for h in out):
            raise Stale()
        return out

    def _known(self, handles) -> bool:
        """Whether every handle names a batch or an export of the current log."""
        errs = {id(e.errs) for e in self.log if e.errs is not None}
        key = self.ex._hkey
        return all(id(h) in errs or key(h) in self.exp_at for h in handles)

    def _replay(self):
        """Reset every worker to the cut, then send the whole log again, in order, to the
        workers directly (not through relays: the log holds each worker's batches)."""
        ex = self.ex
        self._expand()
        resets = []
        for w in range(ex.num_workers):
            snap = self.base[w] if self.base is not None else None
            refs = [] if snap is None else [snap]
            reset = [Reset(None if snap is None else 0)]
            resets.append(ex._dispatch_direct(w, reset, refs, 0)[0])
        errs, exps = [], []
        for entry in self.log:
            refs = [exps[s.batch][s.pos] if type(s) is _Exp else ex._resolve(s) for s in entry.refs]
            e, x = ex._dispatch_direct(entry.w, entry.frozen, refs, entry.nexp)
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
            if entry.errs is not None:
                by_errs[id(entry.errs)] = i
            used.update(s for s in entry.refs if type(s) is _Exp)
            if entry.read:  # a read's exports: read once, by the wait they were made for
                used.update(_Exp(i, p) for p in range(entry.nexp))
        # batches in flight at the loss: their (replayed) errors surface as usual
        for d in inflight:
            for h in d:
                i = by_errs.get(id(h))
                if i is not None:
                    ex._record([results[i]])
        # relayed batches whose errors no read or sync had collected (a relay drops them at
        # a loss): the replay's surface instead
        for i in range(self.reported, len(self.log)):
            if self.log[i].errs is None:
                ex._record([results[i]])
        for d in ex._inflight:
            d.clear()
        ex._late = []
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
        replayed = {k: new_exps[at.batch][at.pos] for k, at in self.exp_at.items()}
        for k, at in self.exp_at.items():
            if at not in used:
                remap[k] = replayed[k]
        log, at_new = [], {}
        for i, entry in enumerate(self.log):
            keys = tuple(key(h, True) for h in new_exps[i])
            for p, k in enumerate(keys):
                at_new[k] = _Exp(i, p)
            log.append(entry._replace(errs=new_errs[i], keys=keys))
        self.log, self.exp_at, self.remap = log, at_new, remap
        self.reported = len(log)
        ex._adopted(replayed)
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


def retried(ex, fn, what):
    """``fn()``, asked again while it raises :class:`Stale` (workers were rebuilt while it
    was under way: its exports are gone, the shards are back); :class:`WorkerLost` when
    workers die through every try.

    Examples
    --------
    >>> from sharded.runtime.driver.local import LocalExecutor
    >>> retried(LocalExecutor(1), lambda: 42, "a read")
    42
    """
    for _ in range(MAX_ATTEMPTS + 1):
        try:
            return fn()
        except Stale:
            continue
    raise unrecoverable(ex, f"workers kept dying during {what}: {MAX_ATTEMPTS + 1} tries")


def lost(ex, cause, reason):
    """Recovery is off (``reason``): collect what is in flight (so Ray reports no unhandled
    errors) and raise :class:`WorkerLost` naming the lost workers and tensors."""
    ex._settle([h for d in ex._inflight for h in d] + ex._late)
    for d in ex._inflight:
        d.clear()
    ex._late = []
    try:
        dead = set(ex._dead_workers())
    except Exception:  # naming is best effort; the error below is what matters
        dead = set()
    who = ", ".join(ex.workers[w].name for w in sorted(dead)) or "a worker"
    why = f"{who} died ({cause}); recovery is off ({reason})"
    # (no dead worker found: which one is not known, so any tensor may have had a shard there)
    raise unrecoverable(ex, why, dead or None, ": start again from your data or a checkpoint")
