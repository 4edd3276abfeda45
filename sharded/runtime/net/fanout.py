"""Wire relays: one frame per flush from the driver, composed into each worker's batch here.

Sending a batch over the driver's wire (:mod:`.wire`) and taking its answer cost the driver
~16-35 us of CPU per worker, so a flush that reaches 1,024 workers would cost it tens of
milliseconds. A relay takes that work off the driver: the driver sends each relay ONE
:class:`~sharded.runtime.commands.Fan` per flush (the flush's layout commands, encoded
once, the sorted workers they reach, the commands of the workers that have their own, the
shipment's :class:`~sharded.runtime.commands.TreeMail` and the exports each worker returns);
the relay composes every worker's batch (:func:`compose`, the same batch the driver would
have sent it), sends them over its own wire, waits for every answer and answers the driver
once: ``(errors, *values)``, every batch's error records and the wanted exports in the
order of the workers. A relay of relays (a second level, fan-out :data:`FANOUT`) splits
the ``Fan`` by the ranges of workers its relays serve and merges their answers the same way.

A relay is a :class:`~.mailbox.Mailbox` (the number :data:`RELAY_BASE` + its index) whose
runner is :meth:`FanOut.run`: its connections authenticate both ends with the session key
and MAC every frame (:mod:`.channel`), frames are bounded before anything is allocated and
carry data only (:mod:`.codec`), and only the driver's role (``D``) may send it a ``Run``.

**Order.** A relay runs its ``Fan`` frames one at a time, in the order they came: a worker
is reached through one path only (its relay), so its batches run in the order the driver
sent them. Reductions link workers of different relays through the workers' mailboxes:
every relay sends all of a flush's batches before it waits for any answer, so a parent
waiting for a partial never waits for a batch its relay has not sent.

**Order with Ray.** A Ray session's workers also run batches that came through Ray: a
``Fan`` carries, per worker, how many the driver had sent it before (``after``), and each
worker's batch goes on with that count, as the driver's own wire batch would.

**Loss.** A worker or relay whose connection ends makes this relay's wait raise
(:class:`~.wire.WireLost`); the mailbox then closes the connection to the driver (or to
the relay above), whose wait sees the loss at once.

**Where.** The simulated executor's hosts run relays as threads
(:mod:`sharded.runtime.worker.simhost`); a Ray session's relay actors each run one
(:class:`Listener`, :mod:`sharded.runtime.driver.wire_relays`), told the session key and
their workers' mailboxes through Ray, and told again when a worker is replaced.

Examples
--------
>>> from sharded.runtime.commands import Free, TreeMail
>>> compose([Free((1,))], TreeMail(0, 3, 5.0), [Free((2,))])  # doctest: +NORMALIZE_WHITESPACE
[LayoutCmds(ref=None, cmds=[Free(keys=(1,))]), TreeMail(client=0, ship=3, timeout=5.0),
 Free(keys=(2,))]
"""

from __future__ import annotations

import threading

from ..commands import Fan, LayoutCmds
from ..driver import recovery
from .mailbox import Mailbox
from .wire import Wire

RELAY_BASE = 1 << 24  # a relay's mailbox number: RELAY_BASE + its index (workers: 0, 1, ...)
FANOUT = 32  # workers per relay, and relays per relay of relays


def compose(bc, mail, cmds) -> list:
    """Worker batch of one shipment: the shipment's layout commands ``bc`` (a list, or
    codec data encoded once), its ``mail`` (a ``TreeMail``: the trees' partials go worker
    to worker) and the worker's own commands ``cmds`` (whose ``LayoutSync`` marks count in
    ``bc``); the batch the driver's executor composes for a worker without relays."""
    batch = [LayoutCmds(None, bc)] if bc else []
    if mail is not None:
        batch.append(mail)
    batch += cmds
    return batch


def failed(ident, cause) -> list:
    """A relay's answer when its batches could not all answer: one error record."""
    return [{"op": "relay", "shard": None, "worker": ident, "cause": cause, "cascade": False}]


class FanOut:
    """The runner of one relay's mailbox: forwards each :class:`Fan` to its children.

    Parameters
    ----------
    key : bytes
        The session key (the children's mailboxes check it).
    children : dict
        ``{number: (host, port)}`` of the mailboxes it forwards to: workers (their index),
        or relays (``RELAY_BASE + index``).
    first, span : int
        For a relay of relays: the first worker its relays serve and how many each serves
        (child ``i`` serves ``first + i * span ...``); ``span`` None: the children are
        workers.
    tls : Tls, optional
        The session's :class:`~.tls.Tls`, when its sockets run TLS.
    """

    def __init__(self, ident, key, children: dict, first: int = 0, span=None, tls=None):
        self.ident, self.first, self.span = ident, first, span
        self.kids = sorted(children)
        self.wire = Wire(key, tls)
        self.wire.set_addrs(dict(children))
        self._lock = threading.Lock()
        self._moved: dict = {}  # children's new addresses, taken by the next run
        self._moved_lock = threading.Lock()

    def set_children(self, children: dict) -> None:
        """Where the children listen now (a replaced worker listens elsewhere; one whose
        connection failed is dialled again), from the next frame on: never waits for a
        frame under way (its batches may wait for a worker being replaced)."""
        with self._moved_lock:
            self._moved.update(children)

    def run(self, after, timeout, cmds):
        """A frame from the driver (or the relay above): ``[Fan]``; see the module."""
        if type(cmds) is not list or len(cmds) != 1 or type(cmds[0]) is not Fan:
            return failed(self.ident, "a relay takes one Fan record per frame")
        with self._lock:
            with self._moved_lock:
                moved, self._moved = self._moved, {}
            if moved:
                self.kids = sorted(set(self.kids).union(moved))
                self.wire.set_addrs(moved)
            return self._run(cmds[0], timeout)

    def _run(self, fan, timeout):
        sent = []  # (reply, parts) of each child, in the order of the workers
        wire = self.wire
        if self.span is None:
            own, want, bc, mail, after = fan.own, fan.want, fan.bc, fan.mail, fan.after or {}
            for w in fan.order:
                batch = compose(bc, mail, own.get(w, []))
                got = wire.send(w, after.get(w, 0), batch, want.get(w, 0), timeout)
                if got is None:
                    return failed(self.ident, f"worker {w}'s batch is not data")
                sent.append(got)
        else:
            for kid, order in self._split(fan.order):
                sub = Fan(
                    fan.bc,
                    order,
                    {w: c for w, c in fan.own.items() if w in order},
                    fan.mail,
                    {w: n for w, n in fan.want.items() if w in order},
                    {w: n for w, n in (fan.after or {}).items() if w in order} or None,
                )
                got = wire.send(kid, 0, [sub], sum(sub.want.values()), timeout)
                if got is None:
                    return failed(self.ident, "a Fan is not data")
                sent.append(got)
        try:
            wire.wait([r for r, _ in sent], timeout)
        except recovery.Late as e:
            return failed(self.ident, f"{e.workers} did not answer within {timeout:g}s")
        errors, values = [], []
        for r, parts in sent:
            errors += wire.value(r)
            values += [wire.value(p) for p in parts]
        return (errors, *values) if values else errors

    def _split(self, order):
        """``order`` (sorted workers) cut by the relay that serves each: ``[(number,
        tuple)]``."""
        out = []
        for w in order:
            kid = self.kids[(w - self.first) // self.span]
            if not out or out[-1][0] != kid:
                out.append((kid, []))
            out[-1][1].append(w)
        return [(k, tuple(ws)) for k, ws in out]

    def close(self) -> None:
        self.wire.close()


class Listener:
    """A relay's mailbox that listens at once (number ``ident``, on ``host``) and relays
    once :meth:`set` gave it the session key and its children: how a Ray relay actor serves
    a wire relay from a thread of its process.

    Examples
    --------
    >>> box = Mailbox("127.0.0.1", 0)
    >>> box.set_peers({}, b"k" * 32)
    >>> box.runner = lambda after, timeout, cmds: [["ran", after]]
    >>> relay = Listener(RELAY_BASE, "127.0.0.1")
    >>> relay.set({0: box.address}, b"k" * 32)
    >>> wire = Wire(b"k" * 32)
    >>> wire.set_addrs({RELAY_BASE: relay.address})
    >>> errs, _ = wire.send(RELAY_BASE, 0, [Fan([], (0,), {}, None, {}, {0: 2})], 0, 5.0)
    >>> wire.wait([errs], 5.0); wire.value(errs)
    [['ran', 2]]
    >>> wire.close(); relay.close(); box.close()
    """

    def __init__(self, ident: int, host: str):
        self.ident, self.fan = ident, None
        self.box = Mailbox(host, ident)
        self.address = self.box.address

    def set(self, children: dict, key: bytes, tls=None) -> None:
        """The workers' mailboxes ``{worker: (host, port)}`` and the session's key (and
        :class:`~.tls.Tls`); later calls update the workers' addresses."""
        if self.fan is None:
            self.fan = FanOut(self.ident, key, children, tls=tls)
            self.box.set_peers({}, key, tls)
            self.box.runner = self.fan.run
        else:
            self.fan.set_children(children)

    def close(self) -> None:
        self.box.close()
        if self.fan is not None:
            self.fan.close()
