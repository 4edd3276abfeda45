"""Worker-to-worker delivery of a reduction tree's partials and of small exports, over
authenticated TCP.

Through Ray, a tree child's partial reaches its parent in two hops: the child's batch returns
it to the driver (the owner of the result), and only then does Ray start the parent's batch,
which takes it as an argument. A read of ``x.sum()`` on two workers therefore costs two
sequential actor round trips. With a mailbox on every worker the driver starts the parent's
batch at once, the child sends its partial straight to the parent's mailbox, and the parent
takes it when its tree command runs: one round trip (measured on 2 workers: a read 2.3 ms ->
about 1.3 ms). A small export that another worker's command takes (a matrix-vector
product's vector halves) goes the same way, as a ``Post``: the driver ships the exporting
batch and the taking one without waiting for the value in between.

Frames are records of :mod:`sharded.runtime.commands`: a ``Deliver`` puts values in the box,
an ``Abort`` fails takes (below), and the driver's own batches (:mod:`.wire`) come as a
``Run``, run by the worker's ``runner`` and answered on the same connection. They travel as
data (:mod:`.codec`: msgpack and raw buffers, never a pickle) on connections that
authenticate both ends with the session's key and number and MAC every frame
(:mod:`.channel`), inside TLS in a session that asks for it (:mod:`.tls`); a connection
that fails a check is closed and counted (:meth:`counts`).

Every message is tagged (a ``MailTag``: client, shipment, tree, group, child position) by the
driver's shipment, so the messages of different shipments never mix, and a message that
arrives before its parent asks waits in the box.

**Bounds.** A connection has :data:`~.channel.HANDSHAKE_S` to authenticate, at most
:data:`MAX_PENDING` connections may be authenticating at once (more are closed at once), a
frame is checked against :data:`~.channel.MAX_FRAME` before anything is allocated, and the
accept loop goes on after running out of file descriptors or threads. Nothing here waits
forever: :meth:`Mailbox.take` waits at most its timeout, and the driver
:meth:`Mailbox.abort`\\ s every waiting take when a worker is lost (the partial it waits for
may never come): every take of a shipment up to the newest fails at once, also one that
starts after the abort; the aborted batch's results are then discarded and replayed by
:mod:`.recovery` through Ray, which keeps a copy of every partial in its log.

Examples
--------
>>> from sharded.runtime.commands import MailTag
>>> a, b = Mailbox("127.0.0.1", 0), Mailbox("127.0.0.1", 1)
>>> peers, key = {0: a.address, 1: b.address}, b"k" * 32
>>> a.set_peers(peers, key); b.set_peers(peers, key)
>>> a.send(1, MailTag("c", 1, 0, 0, 1), [1.5])
>>> b.take(MailTag("c", 1, 0, 0, 1), 5.0)
[1.5]
>>> a.close(); b.close()
"""

from __future__ import annotations

import errno
import logging
import numbers
import socket
import threading
import time

from ..commands import Abort, Deliver, MailTag, Run
from . import channel
from .channel import Refused

MAX_PENDING = 32  # connections authenticating at once; more are closed unread
KEY_BYTES = 32
_log = logging.getLogger("sharded.net")
_FD_ERRORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED)


class MailAborted(Exception):
    """A take that the driver aborted (a worker was lost) or that waited past its bound."""


def new_counts() -> dict:
    """The refusal counters a mailbox or the driver's wire keeps (``st.stats()["net"]``)."""
    return dict.fromkeys(
        ("handshakes_refused", "frames_refused", "busy_refused", "accept_errors"), 0
    )


class Mailbox:
    """A TCP server taking tagged values from the session's processes, and the sending side
    (one cached authenticated connection per peer).

    Parameters
    ----------
    host : str
        The address to listen on: 127.0.0.1 when every worker is on the driver's node,
        otherwise the node's address (so peers on other nodes reach it).
    ident : int
        This worker's number: a connection must ask for it in its handshake.
    """

    def __init__(self, host: str, ident: int):
        self._srv = socket.create_server((host, 0))
        self.address = self._srv.getsockname()[:2]
        self.ident = ident
        self._key = None
        self._tls = None  # a .tls.Tls: every connection runs TLS (set with the key)
        self._peers: dict = {}
        self._conns: dict = {}  # peer -> (address, Channel)
        self._send_lock = threading.Lock()
        self._box: dict = {}
        self._cv = threading.Condition()
        self._dead: dict = {}  # client -> its last aborted shipment: takes for it fail
        self._closed = False
        self._pending = 0  # connections not authenticated yet
        self._counts = new_counts()
        # runs a batch the driver sent over its connection (.wire): set by the worker
        self.runner = None
        self.on_abort = None  # told of every abort (the worker's waiting wire batches give up)
        threading.Thread(target=self._accept, name="sharded-mailbox", daemon=True).start()

    # ------------------------------------------------------------------ sending
    def set_peers(self, peers: dict, key: bytes, tls=None) -> None:
        """Where every peer listens (``{worker: (host, port)}``), the session's key and, for
        a session whose sockets run TLS, its :class:`~.tls.Tls`."""
        with self._cv:
            changed = self._tls is not tls
            self._key, self._tls = key, tls
            self._peers = dict(peers)
        with self._send_lock:
            for w, (addr, _) in list(self._conns.items()):
                if changed or tuple(self._peers.get(w, ())) != tuple(addr):  # dial it again
                    self._drop(w)

    def send(self, peer, tag, value) -> None:
        """Deliver ``value`` under ``tag`` to ``peer``'s mailbox. A peer that is gone is not
        an error here: its loss is the driver's to handle (the partial is in its log); its
        address is forgotten until the driver names it again. A value that is not data
        (:mod:`.codec`) raises TypeError."""
        with self._send_lock:
            for _ in range(2):  # a cached connection may have died with an earlier peer
                got = self._conns.get(peer)
                try:
                    if got is None:
                        addr = self._peers[peer]
                        ch = channel.dial(addr, self._key, b"P", peer, tls=self._tls)
                        got = self._conns[peer] = (addr, ch)
                    got[1].send(Deliver(tag, value))
                    return
                except KeyError:
                    return
                except Refused:
                    self._count("handshakes_refused")
                    self._forget(peer)
                    return
                except OSError:
                    self._drop(peer)
            self._forget(peer)

    def _forget(self, peer) -> None:
        self._drop(peer)
        with self._cv:
            self._peers.pop(peer, None)

    def _drop(self, peer) -> None:
        got = self._conns.pop(peer, None)
        if got is not None:
            got[1].close()

    # ------------------------------------------------------------------ receiving
    def take(self, tag, timeout: float):
        """The value sent under ``tag`` (a ``MailTag``), waiting at most ``timeout`` s;
        raises :class:`MailAborted` when the wait was aborted or ran out."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while tag not in self._box:
                left = deadline - time.monotonic()
                dead = tag.ship <= self._dead.get(tag.client, -1)
                if dead or left <= 0 or self._closed:
                    why = "was aborted (a worker was lost)" if dead else "timed out"
                    raise MailAborted(
                        f"the partial {(tag.tree, tag.group, tag.child)} of shipment "
                        f"{tag.ship} {why} after {timeout - max(left, 0):.1f}s"
                    )
                self._cv.wait(left)
            return self._box.pop(tag)[1]

    def expire(self, client, ship) -> None:
        """Forget the tree partials that came for ``client``'s shipments before ``ship``: an
        aborted shipment's, that nobody will take. (Not a post's value: its taker's batch
        may run after a later shipment's trees began, see :class:`~..commands.Post`.)"""
        with self._cv:
            old = [t for t in self._box if t.client == client and 0 <= t.tree and t.ship < ship]
            for t in old:
                del self._box[t]

    def abort(self, client, ship) -> None:
        """Fail (with :class:`MailAborted`) every take of ``client``'s shipments up to
        ``ship``: those waiting now and those that start later (an abort may overtake the
        batch it is meant for); the posts that came for them are dropped (their takers'
        batches are replayed from the log, which keeps the posts' exports)."""
        with self._cv:
            self._dead[client] = max(ship, self._dead.get(client, -1))
            old = [t for t in self._box if t.client == client and t.tree < 0 and t.ship <= ship]
            for t in old:
                del self._box[t]
            self._cv.notify_all()
        if self.on_abort is not None:
            self.on_abort()

    def pending(self) -> int:
        """How many delivered values nobody took yet."""
        with self._cv:
            return len(self._box)

    def counts(self) -> dict:
        """Connections and frames refused so far (see :func:`new_counts`)."""
        with self._cv:
            return dict(self._counts)

    def _count(self, what) -> None:
        with self._cv:
            self._counts[what] += 1

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        try:
            self._srv.close()
        except OSError:
            pass
        with self._send_lock:
            for w in list(self._conns):
                self._drop(w)

    def _accept(self) -> None:
        """Hand every connection to a thread of its own; out of descriptors, memory or
        threads, log it, close what cannot be served and go on."""
        while not self._closed:
            try:
                conn, _ = self._srv.accept()
            except OSError as e:
                if self._closed or e.errno not in _FD_ERRORS:
                    return  # (closed)
                self._count("accept_errors")
                _log.warning("mailbox %s: accept failed (%s); retrying", self.ident, e)
                time.sleep(0.05)
                continue
            with self._cv:
                busy = self._pending >= MAX_PENDING
                self._pending += not busy
            if busy:
                self._count("busy_refused")
                conn.close()
                continue
            try:
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()
            except RuntimeError as e:  # (no thread could start)
                self._count("accept_errors")
                _log.warning("mailbox %s: cannot serve a connection (%s)", self.ident, e)
                with self._cv:
                    self._pending -= 1
                conn.close()

    def _serve(self, conn) -> None:
        """Authenticate one connection, then read its frames: values into the box, aborts,
        and the driver's batches (run, and answered on this connection). A connection that
        fails the handshake, or sends a frame that fails its checks, is closed and counted."""
        ch = None
        try:
            try:
                with self._cv:
                    key, tls = self._key, self._tls
                if key is None:
                    raise Refused("handshake", "no session key yet")
                ch, role = channel.accept(conn, key, self.ident, tls=tls)
            except (Refused, OSError, EOFError):
                self._count("handshakes_refused")
                return
            finally:
                with self._cv:
                    self._pending -= 1
            while True:
                try:
                    got = ch.recv()
                except EOFError:
                    return
                except Refused:
                    self._count("frames_refused")
                    return
                kind = type(got)
                if kind is Deliver and _is_tag(got.tag):
                    with self._cv:
                        self._box[got.tag] = (time.monotonic(), got.values)
                        self._cv.notify_all()
                elif kind is Abort:
                    self.abort(got.client, got.ship)
                elif kind is Run and role == b"D":  # the driver's batch (.wire): answer it
                    self._answer(ch, self.runner(got.after, got.timeout, got.cmds))
                else:  # not a frame this side may send: the connection ends
                    self._count("frames_refused")
                    return
        except Exception:  # (also a runner that failed: the driver finds the line ended)
            return
        finally:
            (ch or conn).close()

    def _answer(self, ch, answer) -> None:
        try:
            parts = ch.pack(answer)
        except (TypeError, ValueError) as e:  # (nothing was sent: the batch fails instead)
            rec = {"op": "batch", "shard": None, "worker": self.ident, "cascade": False}
            parts = ch.pack([dict(rec, cause=f"its answer cannot travel: {e}")])
        for part in parts:
            ch.sock.sendall(part)


def _is_tag(tag) -> bool:
    """Whether a ``Deliver``'s ``tag`` is a MailTag the box can hold: hashable, with numbered
    shipment, tree, group and child (anything else would break every later :meth:`expire`)."""
    if type(tag) is not MailTag or not all(isinstance(v, numbers.Integral) for v in tag[1:]):
        return False
    try:
        hash(tag)
    except TypeError:
        return False
    return True


def abort_all(addresses: dict, key: bytes, client, ship, tls=None) -> None:
    """The driver's side: at every mailbox ``{worker: address}``, fail the takes of
    ``client``'s shipments up to ``ship`` (unreachable mailboxes belong to lost workers;
    the caller leaves out the workers it knows are lost); ``tls``: the session's
    :class:`~.tls.Tls`, if its sockets run TLS."""
    for w, addr in addresses.items():
        try:
            ch = channel.dial(addr, key, b"D", w, 2.0, tls)
            ch.send(Abort(client, ship))
            ch.close()
        except (OSError, EOFError):
            pass
