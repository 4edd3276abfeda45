"""Worker-to-worker delivery of a reduction tree's partials, over plain TCP.

Through Ray, a tree child's partial reaches its parent in two hops: the child's batch returns
it to the driver (the owner of the result), and only then does Ray start the parent's batch,
which takes it as an argument. A read of ``x.sum()`` on two workers therefore costs two
sequential actor round trips. With a mailbox on every worker the driver starts the parent's
batch at once, the child sends its partial straight to the parent's mailbox, and the parent
takes it when its tree command runs: one round trip (measured on 2 workers: a read 2.3 ms ->
about 1.3 ms).

Frames are records of :mod:`sharded.runtime.commands`: a ``Deliver`` puts values in the box,
an ``Abort`` fails takes (below), and the driver's own batches (:mod:`.wire`) come as a
``Run``, run by the worker's ``runner`` and answered on the same connection.

Every message is tagged (a ``MailTag``: client, shipment, tree, group, child position) by the
driver's shipment, so the messages of different shipments never mix, and a message that arrives
before its parent asks waits in the box. Connections start with the session's token (random,
sent by the driver with the peers' addresses); a connection without it is closed unread, so
only the session's own processes can deliver.

Nothing here may wait forever: :meth:`Mailbox.take` waits at most its timeout, and the driver
:meth:`Mailbox.abort`\\ s every waiting take when a worker is lost (the partial it waits for may
never come): every take of a shipment up to the newest fails at once, also one that starts
after the abort; the aborted batch's results are then discarded and replayed by
:mod:`.recovery` through Ray, which keeps a copy of every partial in its log.

Examples
--------
>>> from sharded.runtime.commands import MailTag
>>> a, b = Mailbox("127.0.0.1"), Mailbox("127.0.0.1")
>>> peers, token = {0: a.address, 1: b.address}, b"t" * 16
>>> a.set_peers(peers, token); b.set_peers(peers, token)
>>> a.send(1, MailTag("c", 1, 0, 0, 1), [1.5])
>>> b.take(MailTag("c", 1, 0, 0, 1), 5.0)
[1.5]
>>> a.close(); b.close()
"""

from __future__ import annotations

import hmac
import pickle
import socket
import struct
import threading
import time

from ..commands import Abort, Deliver, Run

_LEN = struct.Struct("<Q")
TOKEN_BYTES = 16


class MailAborted(Exception):
    """A take that the driver aborted (a worker was lost) or that waited past its bound."""


def _recv_exact(conn, n: int) -> bytearray | None:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = conn.recv_into(view[got:])
        if not k:
            return None
        got += k
    return buf


_HEAD = struct.Struct("<QI")  # pickle length, number of out-of-band buffers


def pack(obj) -> list:
    """``obj`` as the parts of one frame: its pickle, then the raw bytes of its large buffers
    (NumPy arrays go out of band, protocol 5: no copy into the pickle). Small frames are one
    part (one send, one TCP segment)."""
    bufs: list = []
    body = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
    raws = [b.raw() for b in bufs]
    head = _HEAD.pack(len(body), len(raws)) + b"".join(_LEN.pack(r.nbytes) for r in raws)
    if sum(r.nbytes for r in raws) < 65536:
        return [b"".join([head, body, *raws])]
    return [head + body, *raws]


def send_obj(conn, obj) -> None:
    """Send ``obj`` as one frame (:func:`pack`)."""
    for part in pack(obj):
        conn.sendall(part)


def recv_obj(conn):
    """The next frame's object (see :func:`send_obj`), or :data:`EOF` when the peer closed
    the connection."""
    head = _recv_exact(conn, _HEAD.size)
    if head is None:
        return EOF
    k = _HEAD.unpack(head)[1]
    lens = _recv_exact(conn, 8 * k) if k else bytearray()
    if lens is None:
        return EOF
    try:
        return take_frame(head + lens, conn)
    except EOFError:
        return EOF


EOF = object()  # what recv_obj returns for a closed connection


def frame_size(buf) -> int | None:
    """How long the frame at the start of ``buf`` is (None: its head is not all there)."""
    if len(buf) < _HEAD.size:
        return None
    k = _HEAD.unpack_from(buf)[1]
    if len(buf) < _HEAD.size + 8 * k:
        return None
    at, segs = _segments(buf)
    return at + sum(segs)


def _segments(buf) -> tuple:
    n, k = _HEAD.unpack_from(buf)
    return _HEAD.size + 8 * k, (n, *struct.unpack_from(f"<{k}Q", buf, _HEAD.size))


def take_frame(buf: bytearray, conn=None):
    """The object of the frame at the start of ``buf`` (whose head is there), taken off
    ``buf``; what has not arrived yet is read from ``conn`` (blocking). Each out-of-band
    buffer gets its own writable, aligned bytes, as from :func:`recv_obj`."""
    at, segs = _segments(buf)
    parts = []
    for m in segs:
        part = bytearray(m)
        have = min(m, max(len(buf) - at, 0))
        part[:have] = memoryview(buf)[at : at + have]
        if have < m:
            view, got = memoryview(part), have
            while got < m:
                k = conn.recv_into(view[got:])
                if not k:
                    raise EOFError("the connection ended inside a frame")
                got += k
        parts.append(part)
        at += m
    del buf[:at]
    return pickle.loads(parts[0], buffers=parts[1:])


def _dial(addr, token: bytes, timeout: float = 10.0):
    s = socket.create_connection(tuple(addr), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(None)
    s.sendall(token)
    return s


class Mailbox:
    """A TCP server taking tagged values from the session's processes, and the sending side
    (one cached connection per peer).

    Parameters
    ----------
    host : str
        The address to listen on (the node's address, so peers on other nodes reach it).
    """

    def __init__(self, host: str):
        self._srv = socket.create_server((host, 0))
        self.address = self._srv.getsockname()[:2]
        self._token = None
        self._peers: dict = {}
        self._conns: dict = {}  # peer -> (address, socket)
        self._box: dict = {}
        self._cv = threading.Condition()
        self._dead: dict = {}  # client -> its last aborted shipment: takes for it fail
        self._closed = False
        # runs a batch the driver sent over its connection (.wire): set by the worker
        self.runner = None
        self.on_abort = None  # told of every abort (the worker's waiting wire batches give up)
        threading.Thread(target=self._accept, name="sharded-mailbox", daemon=True).start()

    # ------------------------------------------------------------------ sending
    def set_peers(self, peers: dict, token: bytes) -> None:
        """Where every peer listens (``{worker: (host, port)}``) and the session's token."""
        with self._cv:
            self._token = token
            self._peers = dict(peers)
        for w, (addr, s) in list(self._conns.items()):
            if tuple(self._peers.get(w, ())) != tuple(addr):  # replaced: dial it again
                self._drop(w)

    def send(self, peer, tag, value) -> None:
        """Deliver ``value`` under ``tag`` to ``peer``'s mailbox. A peer that is gone is not
        an error here: its loss is the driver's to handle (the partial is in its log)."""
        for _ in range(2):  # a cached connection may have died with an earlier peer
            try:
                got = self._conns.get(peer)
                if got is None:
                    addr = self._peers[peer]
                    got = self._conns[peer] = (addr, _dial(addr, self._token))
                send_obj(got[1], Deliver(tag, value))
                return
            except (OSError, KeyError):
                self._drop(peer)

    def _drop(self, peer) -> None:
        got = self._conns.pop(peer, None)
        if got is not None:
            try:
                got[1].close()
            except OSError:
                pass

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
        """Forget what came for ``client``'s shipments before ``ship``: an aborted
        shipment's partials that nobody will take."""
        with self._cv:
            old = [t for t in self._box if t.client == client and t.ship < ship]
            for t in old:
                del self._box[t]

    def abort(self, client, ship) -> None:
        """Fail (with :class:`MailAborted`) every take of ``client``'s shipments up to
        ``ship``: those waiting now and those that start later (an abort may overtake the
        batch it is meant for)."""
        with self._cv:
            self._dead[client] = max(ship, self._dead.get(client, -1))
            self._cv.notify_all()
        if self.on_abort is not None:
            self.on_abort()

    def pending(self) -> int:
        """How many delivered values nobody took yet."""
        with self._cv:
            return len(self._box)

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        try:
            self._srv.close()
        except OSError:
            pass
        for w in list(self._conns):
            self._drop(w)

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._srv.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        """Read one connection's frames: values into the box, aborts, and the driver's
        batches (run, and answered on this connection); a connection that does not start
        with the session's token is closed unread."""
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            head = _recv_exact(conn, TOKEN_BYTES)
            token = self._token
            if head is None or token is None or not hmac.compare_digest(bytes(head), token):
                return
            while True:
                got = recv_obj(conn)
                if got is EOF:
                    return
                kind = type(got)
                if kind is Deliver:
                    with self._cv:
                        self._box[got.tag] = (time.monotonic(), got.values)
                        self._cv.notify_all()
                elif kind is Abort:
                    self.abort(got.client, got.ship)
                elif kind is Run:  # the driver's batch (.wire): run it, answer on this line
                    # (the answer's frame, packed)
                    for part in self.runner(got.after, got.timeout, got.cmds):
                        conn.sendall(part)
                else:
                    return  # not a frame of ours: the connection ends
        except Exception:  # (also a runner that failed: the driver finds the line ended)
            return
        finally:
            conn.close()


def abort_all(addresses, token: bytes, client, ship) -> None:
    """The driver's side: at every mailbox at ``addresses``, fail the takes of ``client``'s
    shipments up to ``ship`` (unreachable mailboxes belong to lost workers)."""
    for addr in addresses:
        try:
            s = _dial(addr, token, 2.0)
            send_obj(s, Abort(client, ship))
            s.close()
        except OSError:
            pass
