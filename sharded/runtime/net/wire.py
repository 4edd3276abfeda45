"""The driver's own line to each worker: a read's batches over plain TCP instead of Ray.

An actor call through Ray costs a read about 1 ms on this class of machine (the task spec,
gRPC both ways, the reply's object), twice over when the read's reduction combines partials
across workers; a TCP round trip on an open connection costs ~0.05 ms. So the batches that
carry a read (and the commands queued before it) go to each worker's mailbox
(:mod:`.mailbox`) on a connection the driver keeps open, the worker runs the batch at once
and answers on the same line: ``x.sum().item()`` costs one send per worker and one answer.

**Order.** A worker runs the driver's batches in the order they were sent, whichever way
they went. A wire batch carries how many Ray batches the driver had sent that worker before
it (``after``); the worker runs it once it has run that many (``Worker.run`` counts them),
and the driver sends a worker no Ray batch while one of its wire batches is unanswered
(:meth:`Wire.drain`). A batch that takes refs (data another worker exported) always goes
through Ray, which resolves them; a shipment goes by wire whole or not at all.

**Loss.** A worker that dies closes its connection: the driver's wait sees the end of the
stream at once (it sleeps on the connection whose answer comes last and on every
connection's hang-up, then sweeps them all) and raises :class:`WireLost` (a
:class:`~.recovery.Lost`), and recovery replays the log through Ray as for any loss (the log
keeps every wire batch, as it keeps the Ray ones). Every wait has its bound
(:class:`~.recovery.Late`).

**Trust.** Each connection authenticates both ends with the session's key (the driver
proves itself and checks the worker's proof; the key never travels), and every frame both
ways carries its sequence number and a MAC (:mod:`.channel`): a frame that fails them ends
the connection (counted in ``st.stats()["net"]``), which recovery treats as a lost worker.
Batches travel as data (:mod:`.codec`); one that is not (a command with a Python function
in it) goes through Ray.

**Size.** Small answers are cut from a per-connection buffer (one ``recv`` per wake-up);
a tensor's gather of more than :data:`READ_MAX` bytes is left to Ray's object store.

**TLS** (``st.init(tls=True)``, :mod:`.tls`). The connections' TLS handshake is done
blocking, within the channel's handshake bound, before the socket turns non-blocking. A TLS
socket hands out one record (16 KiB at most) per ``recv`` and may hold decrypted bytes that
the socket no longer shows readable (``pending()``): a wake-up reads until nothing is left
(or :data:`CHUNK` came), and no wait sleeps while one of its connections holds such bytes.

Examples
--------
>>> from sharded.runtime.net.mailbox import Mailbox
>>> box = Mailbox("127.0.0.1", 0)
>>> box.set_peers({}, b"k" * 32)
>>> box.runner = lambda after, timeout, cmds: [["ran", after, len(cmds)]]
>>> wire = Wire(b"k" * 32)
>>> wire.set_addrs({0: box.address})
>>> from sharded.runtime.commands import Free
>>> errs, _ = wire.send(0, 3, [Free(())], 0, 5.0)
>>> wire.wait([errs], 5.0); wire.value(errs)
[['ran', 3, 1]]
>>> wire.close(); box.close()
"""

from __future__ import annotations

import collections
import itertools
import os
import select
import selectors
import ssl
import time

from ...errors import OpFailed
from ..commands import LayoutCmds, Run
from ..driver import recovery
from ..packing import BatchPacker
from . import channel
from .mailbox import new_counts

READ_S = 60.0  # the most one answer may take to arrive once its first bytes came
CHUNK = 1 << 18  # bytes taken per wake-up: many small answers, or a large one's start
BIG = 1 << 16  # the rest of an answer this much larger is read at once (blocking)
# A read of more bytes (a tensor's gather) goes through Ray: its object store hands a large
# array to the driver in shared memory, the wire copies it through a socket and into fresh
# memory. Measured on 2 workers, x.numpy() of float64, median ms by wire / through Ray:
# 1 MB 0.95 / 2.9, 8 MB 6.1 / 7.9, 32 MB 37 / 21, 128 MB 221 / 33, 381 MB 713 / 70.
READ_MAX = int(os.environ.get("SHARDED_WIRE_READ_MAX", str(8 << 20)))
# An export a later command takes (a vector a matrix-vector product gathers, a stencil's
# halo) of at most this many bytes comes to the driver by wire and goes on inline in the
# command that takes it: two socket hops instead of two actor calls (~0.5-0.8 ms of driver
# CPU each), and the taker's batch holds no Ray reference, so it may go by wire too. Larger
# pieces (a reshard's, a transpose's) stay in Ray's object store, which shares memory: by
# wire the taker would hold a copy of each in its frame.
XFER_MAX = int(os.environ.get("SHARDED_WIRE_XFER_MAX", str(128 << 10)))
RECORD = 1 << 14  # the most plaintext one TLS record carries: one TLS recv's most
# a non-blocking TLS socket's "not now" (it reads or writes whole records; a write that must
# wait is retried with the same bytes)
_TLS_WAIT = (ssl.SSLWantReadError, ssl.SSLWantWriteError)


class WireLost(recovery.Lost):
    """A worker's connection ended (the worker died) before it answered."""


class Reply:
    """The answer to one wire batch (its error list; :class:`Part` names an export)."""

    __slots__ = ("w", "key", "value", "done", "__weakref__")

    def __init__(self, w, key):
        self.w, self.key, self.value, self.done = w, key, None, False


class Part:
    """Export ``i`` of a wire batch."""

    __slots__ = ("reply", "i", "key", "__weakref__")

    def __init__(self, reply, i):
        self.reply, self.i, self.key = reply, i, (reply.key, i)


TYPES = (Reply, Part)


class _Gone:
    def __init__(self, cause):
        self.cause = cause


class Wire:
    """Connections from the driver to the workers' mailboxes, and the batches awaiting an
    answer on each (in the order they were sent).

    Parameters
    ----------
    key : bytes
        The session's key, which both ends of a connection prove they hold.
    tls : Tls, optional
        The session's :class:`~.tls.Tls`: every connection runs TLS (default: none).
    packer : BatchPacker, optional
        The executor's, whose encoding of a flush's shared layout commands the wire's
        frames, the Ray batches and the recovery log all take.
    """

    def __init__(self, key: bytes, tls=None, packer=None):
        self.key, self.tls = key, tls
        self._rec = memoryview(bytearray(RECORD)) if tls is not None else None
        self.addrs: dict = {}
        self.conns: dict = {}  # worker -> socket (non-blocking)
        self.chans: dict = {}  # worker -> its Channel (frame numbers and MAC keys)
        self.counts = new_counts()
        self.packer = packer or BatchPacker()  # encodes a flush's shared layout commands once
        self._buf: dict = {}  # worker -> bytes that came and are no whole answer yet
        self._sel = selectors.DefaultSelector()  # every connection, registered once
        self._polls: dict = {}  # worker -> a poll object of its connection and of _hup
        # every connection for its peer's hang-up alone (Linux): a wait that sleeps on one
        # connection still wakes at once when another one ends (a lost worker)
        self._hup = select.epoll() if hasattr(select, "epoll") else None
        self.waiting: dict = {}  # worker -> deque of its unanswered Replies
        self._keys = itertools.count()
        self.on = True  # off after a loss that recovery could not replay
        self.lost = None  # a loss no wait has raised yet

    def set_addrs(self, addrs: dict) -> None:
        """Where the workers' mailboxes listen; a worker that moved is dialled anew."""
        for w, a in addrs.items():
            if self.addrs.get(w) != a:
                self.drop(w, "the worker was replaced", lost=False)
            self.addrs[w] = a

    def send(self, w, after, cmds, nexp, timeout, reply=None):
        """Send worker ``w`` a batch (to run after its ``after``-th Ray batch): returns
        ``(reply, [parts])`` like an actor call's refs (a worker that cannot be reached is
        found lost by the wait), or None when the commands are not data (:mod:`.codec`)
        or a new connection's handshake timed out or failed: the caller sends them
        through Ray. ``reply``: the :class:`Reply` to answer (made by :meth:`reply`
        before the batch was whole: its parts are handed out already)."""
        r = reply if reply is not None else Reply(w, ("wire", next(self._keys)))
        q = self.waiting.setdefault(w, collections.deque())
        try:
            ch = self.chans.get(w)
            if ch is None:
                ch = channel.dial(self.addrs[w], self.key, b"D", w, tls=self.tls)
                s = ch.sock
                s.setblocking(False)  # (for good: reads take what came, sends what fits)
                self.conns[w], self.chans[w], self._buf[w] = s, ch, bytearray()
                self._sel.register(s, selectors.EVENT_READ, w)
                if self._hup is not None:
                    self._hup.register(s.fileno(), select.EPOLLRDHUP)
        except (TimeoutError, channel.Refused) as e:
            # Silent (stopped?), or not the worker (a stranger at its address; a mailbox
            # full of idle connections): through Ray, which tells a loss and whose wait has
            # the read's bound. The wire is the fast way, Ray the authority on failures.
            if isinstance(e, channel.Refused):
                self.counts["handshakes_refused"] += 1
            return None
        except (OSError, KeyError, EOFError) as e:  # the worker is gone: the wait finds it lost
            q.append(r)
            self.drop(w, f"its connection failed ({type(e).__name__}: {e})")
            return r, [Part(r, i) for i in range(nexp)]
        head = cmds[0] if cmds else None
        if type(head) is LayoutCmds and type(head.cmds) is list:  # a flush's, for every worker
            shared = self.packer.shared_data(head.cmds)
            if shared is not None:
                cmds = [LayoutCmds.make((None, shared)), *cmds[1:]]
        try:
            frame = ch.pack(Run(after, timeout, cmds))
        except (TypeError, ValueError):  # not data, or too large (nothing was sent)
            return None
        q.append(r)
        try:
            self._send(w, ch.sock, frame)
        except OSError as e:  # the worker is gone: the wait finds it lost
            self.drop(w, f"its connection failed ({type(e).__name__}: {e})")
        return r, [Part(r, i) for i in range(nexp)]

    def reply(self, w) -> Reply:
        """A :class:`Reply` for a batch to ``w`` sent later (:meth:`send`'s ``reply``)."""
        return Reply(w, ("wire", next(self._keys)))

    def fail(self, r, why, lost=True) -> None:
        """Answer ``r`` (a :class:`Reply` that was never sent) with a loss; ``lost``: the
        next wait raises it (:class:`WireLost`), as for a connection that ended."""
        r.value, r.done = _Gone(why), True
        if lost:
            self.lost = why

    def _send(self, w, s, frame) -> None:
        """Send a frame, reading ``w``'s answers meanwhile: a worker blocked sending a large
        answer reads no more, and a large batch would then never go out."""
        for part in frame:
            view = memoryview(part).cast("B")
            while view:
                try:
                    view = view[s.send(view) :]  # (TLS: all of it, or SSLWantWriteError)
                    continue
                except (BlockingIOError, ssl.SSLWantWriteError):
                    want = select.POLLOUT
                except ssl.SSLWantReadError:  # (TLS: a record must come first)
                    want = select.POLLIN
                poll = select.poll()  # (not select.select: fds past 1024 are common here)
                poll.register(s, want | (select.POLLIN if self.waiting.get(w) else 0))
                ev = sum(e for _, e in poll.poll(READ_S * 1000))
                if not ev:
                    raise OSError(f"worker {w} took nothing for {READ_S:g}s")
                if ev & (select.POLLIN | select.POLLHUP | select.POLLERR) and not self._pull(w, s):
                    raise OSError("its connection ended")

    def busy(self, w=None) -> bool:
        """Whether worker ``w`` (any worker: None) has a batch not answered yet."""
        if w is None:
            return any(self.waiting.values())
        return bool(self.waiting.get(w))

    def drain(self, w, timeout, on_loss, check=None) -> None:
        """Wait (at most ``timeout`` s) for every answer of worker ``w`` (every worker: None),
        keeping them for whoever waits for them (a lost worker's record the loss, and
        ``on_loss()`` is called: the others' batches may wait for its partials); ``check``
        as :meth:`wait`'s (a loss it raises ends the drain)."""
        ws = [v for v, q in self.waiting.items() if q] if w is None else [w]
        last = [q[-1] for v in ws for q in [self.waiting.get(v)] if q]
        try:
            self.wait(last, timeout, check, on_loss)
        except recovery.Lost:  # (past the bound, or lost: whoever waits on them sees it)
            pass

    def value(self, h):
        """The value of a :class:`Reply` (error list) or :class:`Part` (an export) that came."""
        r = h if type(h) is Reply else h.reply
        v = r.value
        if type(v) is _Gone:
            raise WireLost(v.cause)
        if type(h) is Reply:
            return v[0] if type(v) is tuple else v
        if type(v) is not tuple or len(v) <= 1 + h.i:  # the batch failed as a whole
            e = (v[0] if type(v) is tuple else v)[0]
            raise OpFailed(e["op"], e["shard"], e["worker"], e["cause"])
        return v[1 + h.i]

    def wait(self, handles, limit, check=None, on_loss=None) -> None:
        """Until every handle's answer came: :class:`WireLost` when a connection with a batch
        unanswered ended first (any: the lost worker may owe a partial to a batch waited
        for), :class:`~.recovery.Late` (naming the silent workers) after ``limit`` s. With
        ``on_loss``, a loss calls it instead and the wait goes on. ``check()`` runs after
        every second without an answer (it raises a loss found elsewhere: a batch may wait
        on its worker for a Ray batch that a loss stopped)."""
        t0 = time.monotonic()
        need = [h if type(h) is Reply else h.reply for h in handles]
        need = [r for r in need if not r.done]
        while True:
            if self.lost is not None:
                cause, self.lost = self.lost, None
                if on_loss is None:
                    raise WireLost(cause)
                on_loss()
            need = [r for r in need if not r.done]
            if not need:
                break
            left = limit - (time.monotonic() - t0)
            if left <= 0:
                raise recovery.Late(sorted({r.w for r in need}), round(time.monotonic() - t0, 3))
            # Sleep on the connection whose answer comes last (a read's value, listed last:
            # its tree's root, which answers after its children) and on every connection's
            # hang-up, then take what every connection brought meanwhile: one wake-up per
            # read, not one per worker, and a lost worker wakes the wait at once.
            came = self._poll(need[-1].w, min(left, 1.0))
            if not self._sweep({r.w for r in need}) and not came and check is not None:
                check()
        if on_loss is None:
            for h in handles:
                self.value(h)  # raises the loss, if one came instead of an answer

    def check(self) -> None:
        """Raise :class:`WireLost` if a connection with a batch unanswered has ended (what
        came is taken, nothing waited for): a wait on Ray's results alone calls it between
        its slices, since the batch it waits for may wait in its mailbox for a partial that
        a lost worker's batch, sent by the wire, owed it."""
        if self.lost is None and self.busy():
            self._sweep(())
        if self.lost is not None:
            cause, self.lost = self.lost, None
            raise WireLost(cause)

    def ready(self, handles) -> list:
        """Whether each handle's answer came (reading what already arrived; no wait)."""
        need = {h.w if type(h) is Reply else h.reply.w for h in handles}
        pending = [w for w in need if self.waiting.get(w)]
        if pending:
            self._sweep(pending)
        return [(h if type(h) is Reply else h.reply).done for h in handles]

    def settle(self, handles, limit, check=None) -> None:
        """Wait for ``handles`` like :meth:`wait`, swallowing a loss or the bound (a
        recovery's wait for the batches a loss may have cut short); ``check()`` runs after
        every second without an answer."""
        try:
            self.wait(handles, limit, check, on_loss=lambda: None)
        except recovery.Lost:
            pass

    def _sweep(self, ws) -> bool:
        """Take the answers that already came (from any worker: a connection that ended is a
        loss whoever waits); returns whether any connection had something to read. ``ws``:
        the workers waited for (one without a connection never answers)."""
        for w in ws:
            if w not in self.conns:  # dropped: its answers never come
                self._fail(w, "its connection was closed")
        if not self.conns:
            return True
        ready = self._sel.select(0)
        for key, _ in ready:
            w = key.data
            self._pull(w, key.fileobj)
        return bool(ready)

    def _poll(self, w, timeout) -> bool:
        """Wait at most ``timeout`` s for something from worker ``w`` (True: it came, or
        ``w`` has no connection)."""
        s = self.conns.get(w)
        if s is None:
            return True
        if self.tls is not None and s.pending():  # (_pull leaves none: a safeguard)
            self._pull(w, s)
            return True
        poll = self._polls.get(w)
        if poll is None:
            poll = self._polls[w] = select.poll()
            poll.register(s, select.POLLIN)
            if self._hup is not None:  # (readable while any connection has hung up)
                poll.register(self._hup.fileno(), select.POLLIN)
        return bool(poll.poll(timeout * 1000))

    def _pull(self, w, s) -> bool:
        """Take what arrived on ``w``'s connection and hand out every whole answer in it;
        False when the connection ended (or broke: the worker counts as lost). One
        ``recv`` per wake-up: many small answers cost one system call, not four each. A TLS
        connection holds no decrypted bytes when this returns (a large answer's rest, read
        straight into place, may have brought the next answer's start with it)."""
        buf, ch = self._buf[w], self.chans[w]
        while True:
            try:
                came = self._recv(s, buf)
            except OSError as e:
                self.drop(w, f"{type(e).__name__}: {e}")
                return False
            if came is None:  # (nothing after all)
                return True
            if not came:
                self.drop(w, "its connection ended")
                return False
            try:
                while True:
                    n = ch.need(buf)
                    if n is None or len(buf) + BIG < n:
                        break
                    if n <= len(buf):
                        value = ch.take(buf)
                    else:  # a large answer: the rest straight into place
                        s.settimeout(READ_S)
                        try:
                            value = ch.take(buf, s)
                        finally:
                            s.setblocking(False)
                    r = self.waiting[w].popleft()
                    r.value, r.done = value, True
            except (OSError, EOFError, IndexError) as e:  # cut short, refused, or unasked
                if isinstance(e, channel.Refused):
                    self.counts["frames_refused"] += 1
                self.drop(w, f"{type(e).__name__}: {e}")
                return False
            if self.tls is None or not s.pending():
                return True

    def _recv(self, s, buf):
        """Append what came on ``s`` to ``buf``: how many bytes (0: the stream ended), or
        None when nothing was there. A TLS socket is read record by record until nothing
        is left or :data:`CHUNK` came (an end that follows bytes is seen at the next
        wake-up: the socket stays readable)."""
        if self.tls is None:
            try:
                got = s.recv(CHUNK)
            except BlockingIOError:
                return None
            buf += got
            return len(got)
        rec, n = self._rec, 0
        while n < CHUNK:
            try:
                k = s.recv_into(rec)
            except _TLS_WAIT:
                return n or None
            if not k:
                return n
            buf += rec[:k]
            n += k
        return n

    def _fail(self, w, why) -> None:
        q = self.waiting.pop(w, ())
        for r in q:
            r.value, r.done = _Gone(f"worker {w}: {why}"), True
        if q:  # the next wait raises it (or tells its on_loss)
            self.lost = f"worker {w}: {why}"

    def drop(self, w, why="dropped", lost=True) -> None:
        """Close the connection to worker ``w``; its unanswered batches count as lost. A
        ``lost`` worker's address is forgotten until :meth:`set_addrs` names it again: no
        retry dials what may now be somebody else's port."""
        if lost:
            self.addrs.pop(w, None)
        s = self.conns.pop(w, None)
        self.chans.pop(w, None)
        self._buf.pop(w, None)
        self._polls.pop(w, None)
        if s is not None:
            try:
                self._sel.unregister(s)
            except (KeyError, ValueError):
                pass
            try:
                if self._hup is not None:
                    self._hup.unregister(s.fileno())
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        self._fail(w, why)

    def close(self) -> None:
        for w in list(self.conns):
            self.drop(w, "the session closed", lost=False)
        self._sel.close()
        if self._hup is not None:
            self._hup.close()
