"""How an executor reads and waits (the :class:`Reading` half of
:class:`~sharded.runtime.driver.executor.Executor`).

A read rides in the next batch of each worker it reads from and waits only for those
workers' batches; op errors travel back as records and are raised, typed, at the next read or
:meth:`Reading.sync`. Every wait goes through :meth:`Reading._wait`: bounded by the
executor's ``timeout`` (:class:`~sharded.errors.WaitTimeout`), and a lost worker is rebuilt
by :mod:`.recovery` before the wait goes on. The queueing half (``_q``, ``_ship``,
``flush_all``...; exports in :mod:`.exporting`) and the state both halves share are
:class:`~sharded.runtime.driver.executor.Executor`'s; the hooks a wait relies on (``_get``,
``_ready``, ``_abandon``...) are the executor's :class:`~.transport.Transport`.
"""

from __future__ import annotations

import collections

from ...errors import OpFailed, WaitTimeout
from ..commands import Export
from ..worker.store import is_failed
from . import recovery
from .links import feeding


class Reading:
    """Reads, syncs and waits of an executor (a mixin of
    :class:`~sharded.runtime.driver.executor.Executor`, whose state it uses)."""

    def fetch(self, items, nbytes: int = 0):
        """Read ``[(w, key, slices)]`` as host arrays; raises the pending op errors known.

        A read rides in the next batch of each worker it reads from (no call of its own),
        and the driver waits only for those workers' batches (no barrier across every
        worker): errors of other workers' batches that already finished are raised too;
        those still running surface at a later read or :meth:`sync`. ``nbytes``: how much
        the values hold, where the caller knows (a tensor's gather): a large read takes the
        executor's bulk path (Ray's object store) rather than its low-latency one.
        """
        self._check_open()
        if self.recorder is not None:
            self.recorder.read(items)  # a traced function may not read values (st.jit)
        # (a read has no effects: if workers were rebuilt meanwhile, it is asked again)
        return recovery.retried(self, lambda: self._fetch(items, nbytes), "a read")

    def _fetch(self, items, nbytes=0):
        with self._lock:
            by_w = collections.defaultdict(list)
            for i, (w, key, sl) in enumerate(items):
                by_w[w].append((i, key, sl))
            self._depth += 1
            try:
                shipped = bool(self._bcast)
                self._reading = True  # these exports are read here, never passed on
                self._wired = self._wire_ok(nbytes)
                try:
                    if shipped:  # the reads ride in the shipment of the layout commands
                        for w, its in by_w.items():
                            self._q(w).extend([Export.make((k, sl)) for _, k, sl in its])
                        handles = self._ship(reads={w: len(its) for w, its in by_w.items()})
                    else:
                        want = {w: [it[1:] for it in its] for w, its in by_w.items()}
                        handles = self._export_all(want)
                finally:
                    self._reading = self._wired = False
                self.flush_all()  # start everything else queued, too
            finally:
                self._end(True)
            pending = []
            kids = self._kids if shipped else {}
            # a tree child's batch ends about when its root's does (it sent its partial): the
            # same wait, and its errors surface with the read's; after posts (.posts), every
            # batch in flight: a lost worker's post poisons what its takers made, and only a
            # wait for the lost worker's own batch sees the loss (and replays them all)
            posted, self._posts_out = self._posts_out, False
            for w in range(self.num_workers) if posted else feeding(by_w, kids):
                pending.extend(self._inflight[w])
                self._inflight[w].clear()
            flat = [h for w in by_w for h in handles[w]]
            try:
                values = self._wait(pending + flat, "a read")
            except WaitTimeout:
                self._late += pending  # still running: a later wait collects them
                self._posts_out = self._posts_out or posted
                raise
            self._record(values[: len(pending)])
            self._record(self._finished())
            self._raise_errors()
            if self._rec is not None and self._rec.due():
                self._rec.cut()
        out = [None] * len(items)
        got = iter(values[len(pending) :])
        for its in by_w.values():
            for (i, _, _), arr in zip(its, got):
                if is_failed(arr):
                    r = arr.record
                    raise OpFailed(r["op"], r["shard"], r["worker"], r["cause"])
                out[i] = arr
        return out

    def _finished(self) -> list:
        """The error lists of batches that already ran (leading ones on each worker),
        taken off the in-flight queues without waiting for the others."""
        flat = [h for d in self._inflight for h in d]
        late = []
        if self._late:  # batches an earlier wait gave up on that finished since
            ok = self._ready(self._late)
            late = [h for h, f in zip(self._late, ok) if f]
            self._late = [h for h, f in zip(self._late, ok) if not f]
        if not flat:
            return self._wait(late)
        ok = iter(self._ready(flat))
        done = []
        for d in self._inflight:
            flags = [next(ok) for _ in range(len(d))]
            n = flags.index(False) if False in flags else len(flags)
            done += [d.popleft() for _ in range(n)]
        return self._wait(late + done)

    def sync(self) -> None:
        """Wait until every queued command has run; raise the first op error, if any."""
        self._check_open()
        with self._lock:
            # Over the driver's wire, like a read's batches: a sync waits for their answers
            # anyway, and an actor call and its wait cost ~0.8 ms of driver CPU each.
            with self._over_wire(waited=True):
                self.flush_all()
            self._collect(self._drain_inflight(), "st.synchronize()")
            self._raise_errors()
            if self._rec is not None and self._rec.due():
                self._rec.cut()

    def stats(self) -> list:
        """Per-worker statistics (live shards and bytes, resident memory), after a sync."""
        with self._lock:
            self.sync()
            return recovery.retried(
                self,
                lambda: self._wait([self._stats(w) for w in range(self.num_workers)]),
                "st.stats()",
            )

    def _drain_inflight(self):
        out, self._late = self._late, []
        self._posts_out = False
        for d in self._inflight:
            out.extend(d)
            d.clear()
        return out

    def _collect(self, handles, what="earlier ops"):
        try:
            self._record(self._wait(handles, what))
        except WaitTimeout:
            self._late += handles  # still running: a later wait collects them
            raise

    def _record(self, results):
        for errs in results:
            self._errors.extend(e for e in errs if not e["cascade"])

    def _raise_errors(self):
        if self._errors:
            r, self._errors = self._errors[0], []
            raise OpFailed(r["op"], r["shard"], r["worker"], r["cause"])

    def _wait(self, handles, what="earlier ops") -> list:
        """The values of ``handles``; a lost worker is rebuilt (:mod:`.recovery`) and the
        wait goes on with the replayed handles, or raises :class:`WorkerLost`. A wait longer
        than :attr:`timeout` raises :class:`WaitTimeout` naming ``what`` it waited for."""
        if not handles:
            return []
        for _ in range(recovery.MAX_ATTEMPTS):
            try:
                return self._get(handles, self.timeout)
            except recovery.Late as e:
                names = [self.workers[w].name for w in e.workers]
                raise WaitTimeout(what, names, e.seconds, self.timeout) from None
            except recovery.Lost as e:
                self._abandon()
                if self._rec is None:
                    recovery.lost(self, e.cause, self._rec_off)
                handles = self._rec.recover(handles, e.cause)
        raise recovery.unrecoverable(
            self, f"workers kept dying: {recovery.MAX_ATTEMPTS} recoveries in one wait"
        )
