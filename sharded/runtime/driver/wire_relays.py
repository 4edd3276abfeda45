"""The Ray executor's mailboxes and wire, and reads past ``SHARDED_WIRE_MAX`` workers through
wire relays (:mod:`sharded.runtime.net.fanout`).

By the driver's own wire (:mod:`..net.wire`) a read sends and takes one batch per worker,
~35 us of driver CPU each; through the Ray relays (:mod:`.relay`) it costs one actor call
per relay, ~1 ms each. Past :data:`.relay.WIRE_MAX` workers behind relays, every relay actor
also runs a wire relay (:class:`~..net.fanout.Listener`, a mailbox served by a thread of
its process) and the batches that would go by the driver's wire go as one
:class:`~..commands.Fan` frame per relay instead: :meth:`WireRelays._fan_add` takes each
worker's batch apart (the flush's layout commands, shared by every batch of the frame, its
``TreeMail``, its own commands) and the frame leaves when the flush ends or before anything
waits (:meth:`WireRelays._fan_send`). The relay composes the same batches, forwards them to
its workers' mailboxes and answers once: the driver takes one answer per relay.

**Order.** Each worker's batch carries how many Ray batches the driver had sent it before
(``Fan.after``) and runs once it ran them; before a Ray batch to a worker the driver waits
for its relay's wire answers (:meth:`WireRelays._wire_drain`), as for its own wire.

**Errors and recovery.** A frame's answer holds the error records of all its batches: the
first worker's batch carries it (its handle waits in that worker's in-flight queue), the
others are tracked by the relay (an errors handle of None, as behind the Ray relays).
The log keeps every worker's batch as the driver's wire would. A lost worker closes its
connection to the relay, whose wait raises; the relay's mailbox then closes the driver's
connection, whose wait sees the loss at once (:class:`~..net.wire.WireLost`): recovery
aborts every mailbox's waits (again while a batch stays silent:
:meth:`WireRelays._abort_mail`), replays the log through Ray and tells every relay where
its workers listen again (:meth:`WireRelays._rebuilt`). A relay that dies takes its workers with it
(:meth:`.relay.Relayed._dead_relays`); its replacement opens a wire relay of its own.

Examples
--------
>>> from sharded.runtime.commands import Free, LayoutCmds, TreeMail
>>> _split([LayoutCmds(None, [Free((1,))]), TreeMail(0, 2, 5.0), Free((3,))])
([Free(keys=(1,))], TreeMail(client=0, ship=2, timeout=5.0), [Free(keys=(3,))])
"""

from __future__ import annotations

import ray

from ..commands import Fan, LayoutCmds, TreeMail
from ..net import codec
from ..net.fanout import RELAY_BASE
from ..net.mailbox import abort_all
from ..net.wire import Part
from . import recovery, relay
from .ray_loss import READY_TIMEOUT_S


class _Frame:
    """A relay's frame being filled: the batches of one flush (one per worker)."""

    __slots__ = ("bc", "data", "mail", "order", "seen", "own", "want", "after", "reply", "n")

    def __init__(self, bc, data, mail, reply):
        self.bc, self.data, self.mail, self.reply = bc, data, mail, reply
        self.order, self.seen, self.own, self.want, self.after = [], set(), {}, {}, {}
        self.n = 0  # the exports wanted so far (the next one's place in the answer)


def _split(cmds):
    """A wire batch as ``(layout commands or None, TreeMail or None, the rest)``: the
    parts :func:`~..net.fanout.compose` puts together again."""
    i, bc, mail = 0, None, None
    if cmds and type(cmds[0]) is LayoutCmds and type(cmds[0].cmds) is list:
        bc, i = cmds[0].cmds, 1
    if i < len(cmds) and type(cmds[i]) is TreeMail:
        mail, i = cmds[i], i + 1
    return bc, mail, cmds[i:]


def _data(cmds):
    """``cmds`` encoded once (:class:`~..net.codec.Encoded`), or as they are when they hold
    a large array (its buffer travels with the frame); None when they are not data."""
    try:
        body, *bufs = codec.encode(cmds)
    except TypeError:
        return None
    return cmds if bufs else codec.Encoded(body)


class WireRelays:
    """The mailbox and wire hooks of :class:`~.ray_executor.RayExecutor` (a mixin that uses
    its actors, relays, wire and waits), and its reads through wire relays (see the
    module)."""

    _fan_pend: dict = {}  # top relay number -> its _Frame being filled
    fan_frames = 0  # Fan frames sent so far

    # ------------------------------------------------------------------ mailboxes
    def _open_mail(self, ws) -> None:
        """Start the mailboxes of workers ``ws`` and tell every worker where all of them
        are; trees use them from the next shipment on (or never, if one cannot listen).
        Workers shared by several clients never do: two clients' trees could each hold a
        worker the other's waits for."""
        host = self._mail_host
        addrs = self._get([self._actors[w].mail_open.remote(host) for w in ws], READY_TIMEOUT_S)
        self._mail_addrs.update(zip(ws, addrs))
        if any(a is None for a in self._mail_addrs.values()):
            self._mail = False
            return
        peers, key = dict(self._mail_addrs), self._mail_key
        calls = [a.mail_peers.remote(peers, key, self._tls_pem) for a in self._actors]
        self._get(calls, READY_TIMEOUT_S)
        self._wire.set_addrs(peers)
        self._mail = True

    def _local_host(self):
        """127.0.0.1 when every worker runs on the driver's node (the mailboxes then listen
        on loopback only), else None (each on its node's address)."""
        here = ray.get_runtime_context().get_node_id()
        return "127.0.0.1" if all(i.node == here for i in self.workers) else None

    def _rebuilt(self, replaced):
        if not self._mail_addrs:
            return
        if replaced and self._mail_host and self._local_host() is None:
            # a replacement landed on another node: loopback mailboxes cannot reach it
            self._mail = self._wire.on = False
        elif replaced:  # (with every worker alive again)
            self._open_mail(sorted(replaced))
        else:  # the lost connections' workers are alive: their addresses hold again
            self._wire.set_addrs(dict(self._mail_addrs))
        if self._fan_on and self._wire.on:  # the relays' workers (and new relays) again
            self._fan_on = self._fan_open()
        # every batch of the replay ran: the count each wire batch waits for starts again
        self._nray = self._get([a.ran.remote() for a in self._actors], READY_TIMEOUT_S)

    def _abandon(self):
        for f in self._fan_pend.values():  # (never sent: the log's replay makes them)
            self._wire.fail(f.reply, "a worker was lost before it was sent", lost=False)
        self._fan_pend = {}
        if self._mail_addrs:
            self._abort_mail()
            if self._rec is None:  # no replay will count the batches again: Ray alone now
                self._wire.on = False

    def _abort_mail(self):
        """Abort, at every worker's mailbox, the takes of this client's shipments so far
        and the wire batches waiting there (for a partial, or for a Ray batch that a loss
        stopped). An abort comes by a connection of its own and may overtake a batch sent
        before it (through a wire relay the batch takes one more hop): that batch would wait
        for its bound, so a recovery's wait repeats the abort after every second without an
        answer (:meth:`_settle`)."""
        # (not the workers whose connection was lost: their address may be anyone's now)
        known = {w: a for w, a in self._mail_addrs.items() if w in self._wire.addrs}
        abort_all(known, self._mail_key, self.client, self._shipno, self._tls)
        self._aborted_ship = self._shipno  # (queued takes of those posts: see .posts)

    def _wire_drain(self, w, limit=None):
        """Before a Ray batch to ``w`` (None: to any worker): the answers of the wire
        batches sent before it (the worker runs them first), its relay's frames included."""
        if self._fan_pend:
            self._fan_send()
        if self._wire is None:
            return
        limit = self.timeout if limit is None else limit
        t = self._fan_of[w] if self._fan_on and w is not None else None
        busy = self._wire.busy(w) or (t is not None and self._wire.busy(t))
        if busy and self._relays and any(self._outbox):
            # the Ray batches those wait for (held for a whole flush) go first
            self._post(True)
        # (a batch may wait for a Ray batch that a lost relay or worker never runs: the
        # relays' forwards are looked at every second, a loss among them ends the drain)
        check = (lambda: self._probe([])) if self._relays else None
        if t is not None and self._wire.busy(t):
            self._wire.drain(t, limit, self._abandon, check)
        if self._wire.busy(w):
            self._wire.drain(w, limit, self._abandon, check)

    def _post(self, whole=True, fetch=None):
        if self._fan_pend:  # the frames of this flush (before the Ray batches after them)
            self._fan_send()
        return super()._post(whole, fetch)

    # ------------------------------------------------------------------ wire relays
    def _fan_start(self) -> None:
        """Past :data:`.relay.WIRE_MAX` workers: wire relays in the relay actors, if every
        one can listen where the driver and its workers reach it (unless
        ``SHARDED_WIRE_RELAYS=0``)."""
        n = len(self._actors)
        if not (self._relays and self._mail and n > relay.WIRE_MAX and relay.WIRE_RELAYS):
            return
        self._fan_pend = {}
        self._fan_of = [RELAY_BASE + r for r in self._relay_of]
        self._fan_serves: dict = {}
        for w, t in enumerate(self._fan_of):
            self._fan_serves.setdefault(t, []).append(w)
        self._fan_on = self._fan_open()

    def _fan_open(self) -> bool:
        """Open (or find open) every relay's wire relay and tell it the session key and
        where its workers listen; whether all of them serve."""
        host = self._mail_host
        calls = [r.fan_open.remote(RELAY_BASE + i, host) for i, r in enumerate(self._relays)]
        got = self._get(calls, READY_TIMEOUT_S)
        here = ray.get_runtime_context().get_node_id()
        if any(g is None or (host and g[1] != here) for g in got):
            return False  # (a relay on another node cannot reach loopback mailboxes)
        key, pem = self._mail_key, self._tls_pem
        calls = []
        for i, r in enumerate(self._relays):
            ws = self._fan_serves[RELAY_BASE + i]
            calls.append(r.fan_peers.remote({w: self._mail_addrs[w] for w in ws}, key, pem))
        self._get(calls, READY_TIMEOUT_S)
        self._wire.set_addrs({RELAY_BASE + i: tuple(g[0]) for i, g in enumerate(got)})
        return True

    def _fan_add(self, w, cmds, nexp):
        """Worker ``w``'s wire batch into its relay's frame (sent by :meth:`_fan_send`):
        ``(errors handle or None, [export handles])`` as :meth:`_dispatch` returns, or None
        when the batch is not data (the caller sends it through Ray)."""
        bc, mail, own = _split(cmds)
        t = self._fan_of[w]
        f = self._fan_pend.get(t)
        if f is not None and f.bc is bc:
            data = f.data
        elif bc is None:
            data = None
        else:  # (encoded once per flush for every frame: the packer's)
            data = self._packer.shared_data(bc) or (bc if _data(bc) is not None else None)
            if data is None:
                return None
        if own:
            own = _data(own)
            if own is None:
                return None
        if f is not None and (f.bc is not bc or f.mail != mail or w in f.seen):
            del self._fan_pend[t]  # (a second batch of w, or another flush's: after this)
            self._fan_send1(t, f)
            f = None
        if f is None:
            f = self._fan_pend[t] = _Frame(bc, data, mail, self._wire.reply(t))
        errs = None if f.order else f.reply  # (the first batch carries the frame's errors)
        f.order.append(w)
        f.seen.add(w)
        if own:
            f.own[w] = own
        if nexp:
            f.want[w] = nexp
        if self._nray[w]:
            f.after[w] = self._nray[w]
        parts = [Part(f.reply, f.n + i) for i in range(nexp)]
        f.n += nexp
        return errs, parts

    def _fan_send(self) -> None:
        """Send every relay its frame (one ``Fan`` each)."""
        pend, self._fan_pend = self._fan_pend, {}
        for t, f in pend.items():
            self._fan_send1(t, f)

    def _fan_send1(self, t, f) -> None:
        fan = Fan(f.data or [], tuple(f.order), f.own, f.mail, f.want, f.after or None)
        self.fan_frames += 1
        if self._wire.send(t, 0, [fan], 0, self.timeout, reply=f.reply) is None:
            # silent or not the relay: a loss (the relay is pinged, its workers rebuilt)
            self._wire.fail(f.reply, f"wire relay {t - RELAY_BASE} could not be reached")

    def _fan_late(self, e):
        """:class:`~.recovery.Late` naming the workers behind the relays it names."""
        ws = {v for t in e.workers for v in self._fan_serves.get(t, (t,))}
        return recovery.Late(sorted(ws), e.seconds)
