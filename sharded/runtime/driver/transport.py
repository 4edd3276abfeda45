"""The transport: every hook an executor implements to reach its workers, in one place.

:class:`~.executor.Executor` (queueing, shipments, the batch log) and
:class:`~.reading.Reading` (reads, syncs, bounded waits) are the protocol every executor
shares; how the workers are opened (``open``: ``st.init(executor=name)`` finds the class in
the session's table of executors), how a batch reaches a worker, how a wait gets its results
and how a lost worker is found and rebuilt differ per executor. Those are the methods of
:class:`Transport`: the abstract ones each executor must define, the others have a default
that fits an executor without relays or a wire. An executor declares it by deriving from
:class:`~.executor.Executor` (a :class:`Transport`); instantiating one that misses a hook
raises a ``TypeError`` naming it.

Handles are whatever the transport returns for a batch's error list, its exports and a
worker's statistics (Ray's ``ObjectRef``\\ s, a relay's ``Handle``, a wire ``Reply``, the
values themselves in process); the protocol only passes them back to the same transport.

Examples
--------
>>> from sharded.runtime.driver.local import LocalExecutor
>>> isinstance(LocalExecutor(1), Transport), sorted(Transport.__abstractmethods__)[:3]
(True, ['_dead_workers', '_dispatch', '_get'])
"""

from __future__ import annotations

import abc


class Transport(abc.ABC):
    """How workers open, how batches ship, how reads wait, how a loss is seen and recovered."""

    @classmethod
    @abc.abstractmethod
    def open(cls, **options):
        """``st.init(executor=...)``'s workers (the session's table of executors names this
        class): ``(executor, owns_ray, address)`` from the keywords ``address``,
        ``num_workers``, ``devices``, ``gpu_workers``, ``gpu_fraction``, ``namespace`` and
        ``tls`` (each executor ignores those that are not its own)."""

    # ------------------------------------------------------------------ how batches ship
    @abc.abstractmethod
    def _dispatch(self, w, cmds, refs, nexp):
        """Send worker ``w`` the batch ``cmds`` (a list of
        :mod:`~sharded.runtime.commands` records) with its extra arguments ``refs`` (handles
        of exports, ``put`` data); return ``(errors handle, [nexp export handles])``. The
        batches sent to one worker run in the order sent. An errors handle of None says a
        relay tracks the batch (its errors come with the relay's next answer)."""

    def _dispatch_direct(self, w, cmds, refs, nexp):
        """:meth:`_dispatch` to the worker itself, never through a relay (a recovery's
        replay, a snapshot's second copy)."""
        return self._dispatch(w, cmds, refs, nexp)

    def _post(self, whole: bool) -> None:
        """The outermost flush ended (``whole``: a flush of every queue): a transport that
        gathers a flush's batches into fewer messages (relays) sends them now."""
        return None  # (no relays: every batch went out when it was dispatched)

    def put(self, value):
        """Make driver-side data (e.g. a NumPy block) available to a later command: the
        handle a command's ``Transfer`` names (in process: the value itself)."""
        return value

    @abc.abstractmethod
    def _stats(self, w):
        """A handle of worker ``w``'s statistics (``Worker.stats``), after its batches."""

    # ------------------------------------------------------------------ how reads wait
    @abc.abstractmethod
    def _get(self, handles, timeout=None) -> list:
        """The values of ``handles``, waiting at most ``timeout`` s (else
        :class:`~.recovery.Late` naming the silent workers); raises
        :class:`~.recovery.Lost` when a worker or its data is gone."""

    def _ready(self, handles) -> list:
        """Whether each handle's value is there, without waiting (in process: all)."""
        return [True] * len(handles)

    def _wire_ok(self, nbytes: int = 0) -> bool:
        """Whether a read of ``nbytes`` may go over the driver's wire (:mod:`..net.wire`)
        rather than through Ray."""
        return False

    def _wire_xfer_ok(self, nbytes: int) -> bool:
        """Whether an export of ``nbytes`` that a later command takes may go over the driver's
        wire, its value then travelling inline in that command (:meth:`_inline`)."""
        return False

    def _inline(self, args) -> tuple:
        """A command's operands with the ``Transfer`` of every export that came by the wire
        replaced by its value (a ``Const``); waits for those exports."""
        return args

    def _abandon(self) -> None:
        """A worker was lost: stop every batch waiting for data it may never send (the
        mailboxes' takes, :mod:`..net.mailbox`), so that the batches in flight finish."""
        return None  # (no mailboxes: no batch waits for another worker's data)

    def _drain_relayed(self, what) -> None:
        """Wait for the batches relays started, their errors recorded (a sync, a cut's
        snapshot must follow them); ``what`` names the wait in a timeout."""
        return None  # (no relays)

    # ------------------------------------------------------------------ losing a worker
    @abc.abstractmethod
    def _hkey(self, h, track: bool = False):
        """A key naming handle ``h`` without keeping its data alive (the batch log's name
        of an export; ``track``: the key is kept while ``h`` lives)."""

    @abc.abstractmethod
    def _settle(self, handles) -> None:
        """Wait (bounded) for batches a loss may have failed, swallowing their errors: they
        are part of the loss being recovered."""

    @abc.abstractmethod
    def _dead_workers(self) -> list:
        """Indices of the workers that are lost (dead or silent)."""

    @abc.abstractmethod
    def _replace(self, w) -> None:
        """Start a fresh, empty worker ``w`` under the same name."""

    @abc.abstractmethod
    def _snapshot(self, w):
        """``(size handle, state handle)`` of worker ``w``'s whole store (a recovery cut;
        ``Worker.snapshot``)."""

    def _resolve(self, ref):
        """A logged ref that is no export of the log, as a worker can receive it (a relay's
        export made before the cut)."""
        return ref

    def _rebuilt(self, replaced) -> None:
        """After a replay: the workers ``replaced`` (indices) are whole again."""
        return None  # (no mailboxes to open again)

    def _adopted(self, replayed) -> None:
        """After a replay: ``replayed`` (export key -> replayed handle) of every logged
        export, to take the place of the handles that still name the old ones."""
        return None  # (no relay holds exports)
