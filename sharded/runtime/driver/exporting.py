"""How an executor hands pieces of shards to other workers (the :class:`Exporting` half of
:class:`~sharded.runtime.driver.executor.Executor`): through Ray's object store in batches
of at most ``transfer_bytes``, or, when small, by the driver's wire (the value then travels
inline in the taker's command) or straight to the taker's mailbox (:mod:`.posts`).
"""

from __future__ import annotations

from ..commands import Export
from . import posts

MAX_ASKS = 3  # exports asked again after a recovery during the call, at most


class Exporting:
    """Exports of an executor (a mixin of :class:`~sharded.runtime.driver.executor.Executor`,
    whose queues, flushes and transport it uses)."""

    def export(self, requests) -> dict:
        """Hand pieces of shards to other workers: ``{w: [(key, slices[, nbytes[, to]]),
        ...]}`` -> ``{w: [handle, ...]}``; a handle is passed to :meth:`submit` as
        ``Transfer(handle)``; ``to``: the worker that takes it, if one does (a small piece
        then goes worker to worker, :mod:`.posts`).

        Pieces whose sizes are given are shipped in batches of at most
        :data:`~.executor.TRANSFER_BYTES`, one call each, so a source worker holds at most
        one transfer buffer of copies at a time (the rest already sit in the object store).
        """
        self._check_open()
        out = {}
        with self._lock:
            self._depth += 1
            self._xgen += 1
            try:
                # A wait inside (the backpressure after a shipment) may find a lost worker
                # and rebuild every worker: handles made before that name batches of the
                # old workers (a value the wire never brought), so the export is asked again
                # (a loss at every ask: the last ask's handles, and its waits raise it)
                for _ in range(MAX_ASKS):
                    done = self._recoveries()
                    out = self._export_all(requests)
                    if self._recoveries() == done:
                        break
            finally:
                self._end()
        if self.recorder is not None:
            self.recorder.export({w: [it[:3] for it in its] for w, its in requests.items()}, out)
        return out

    def _recoveries(self) -> int:
        """Recoveries so far (0 with recovery off: a loss then raises)."""
        return 0 if self._rec is None else self._rec.count

    def _export_all(self, requests) -> dict:
        out = {}
        sized = [it for its in requests.values() for it in its if len(it) > 2]
        if (
            not self._reading
            and len(sized) == sum(map(len, requests.values()))
            and self._wire_xfer_ok(sum(it[2] for it in sized))
        ):  # small in all (the takers hold copies): by the wire, inline in the takers
            return {
                w: self._export_wired(w, [it[:2] + it[3:] for it in its])
                for w, its in requests.items()
            }
        for w, items in requests.items():
            handles, batch, size = [], [], 0
            for it in items:
                nb = it[2] if len(it) > 2 else 0
                if batch and size + nb > self.transfer_bytes:
                    handles += self._export_batch(w, batch)
                    batch, size = [], 0
                batch.append(it[:2])
                size += nb
            handles += self._export_batch(w, batch)
            out[w] = handles
        return out

    def _export_wired(self, w, items):
        """A small export by the driver's wire: a later command takes its value inline
        (:meth:`_inline`), so that command's batch needs no Ray reference and may go by the
        wire too; the round trip costs ~0.1 ms of driver CPU, an actor call ~0.5-0.8 ms.
        An item that names its taker (``(key, slices, to)``) is also posted to the taker's
        mailbox, which spares the round trip (:mod:`.posts`). A shipment with trees still
        goes through Ray (see :meth:`_ship`)."""
        if not items:
            return []
        ride = posts.defer(self, w, items)  # (in the batch that carries the takers' work)
        if ride is not None:
            return ride
        cmds, sent = posts.commands(self, w, items)
        if any(sent):
            self._mailq.add(w)
        with self._over_wire(waited=False):
            self._q(w).extend(cmds)
            handles = self._flush(w, nexp=len(cmds))
        went, self._posts_sent = self._posts_sent, set()  # (not by the wire: plain exports)
        return [
            h if p is None or p[1] not in went else posts.Posted(h, *p)
            for h, p in zip(handles, sent)
        ]

    def _export_batch(self, w, items):
        if not items:
            return []
        self._q(w).extend([Export.make((k, sl)) for k, sl in items])
        return self._flush(w, nexp=len(items))
