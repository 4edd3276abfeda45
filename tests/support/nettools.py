"""Socket helpers for the tests of sharded's own sockets (sharded.runtime.net): waiting for a
condition, reading a socket to its end, and listeners on loopback that stand in the way of a
connection: a tap that keeps what passes, a relay that can rewrite a hello and add bytes of its
own, and an impostor listening where a worker was. Real sockets and threads; no Ray.

Examples
--------
>>> import socket
>>> srv = socket.create_server(("127.0.0.1", 0))
>>> tap = Tap(srv.getsockname()[:2])
>>> s = socket.create_connection(tap.address)
>>> s.sendall(b"hi"), s.shutdown(socket.SHUT_WR)
(None, None)
>>> conn = srv.accept()[0]
>>> drain(conn), until(lambda: bytes(tap.seen) == b"hi", 5.0)
(b'hi', True)
>>> s.close(), conn.close(), tap.close(), srv.close()
(None, None, None, None)
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

import numpy as np

from sharded.runtime.net import channel

HELLO = channel._HELLO.size  # magic, role, target, nonce


def until(cond, limit=10.0, every=0.01) -> bool:
    """Polls ``cond()`` every ``every`` seconds until it is true or ``limit`` seconds passed;
    returns its last value."""
    deadline = time.monotonic() + limit
    while not cond() and time.monotonic() < deadline:
        time.sleep(every)
    return cond()


def drain(s, limit=5.0) -> bytes:
    """Everything ``s`` receives until its peer closes (a reset counts as closed), each read
    bounded by ``limit`` seconds."""
    s.settimeout(limit)
    out = bytearray()
    try:
        while chunk := s.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return bytes(out)


def recv_upto(s, n) -> bytearray:
    """The first ``n`` bytes ``s`` receives, or fewer if its peer closes before."""
    data = bytearray()
    while len(data) < n and (chunk := s.recv(n - len(data))):
        data += chunk
    return data


def pipe(src, dst, keep=None):
    """Passes what ``src`` receives to ``dst`` (adding it to ``keep`` too, if given) until
    either side ends, then shuts both down."""
    try:
        while chunk := src.recv(65536):
            if keep is not None:
                keep += chunk
            dst.sendall(chunk)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Listener:
    """Listens at ``addr`` and serves each connection it accepts on a thread of its own
    (:meth:`serve`, for a subclass to say) until :meth:`close`. A busy ``addr`` is tried again
    for up to ``wait`` seconds (a killed process's socket may take a moment to go)."""

    def __init__(self, addr=("127.0.0.1", 0), wait=0.0):
        deadline = time.monotonic() + wait
        while True:
            try:
                self.srv = socket.create_server(tuple(addr))
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        self.address = self.srv.getsockname()[:2]
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        raise NotImplementedError

    def close(self):
        try:  # (a close alone would not wake the accept)
            self.srv.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.srv.close()


class Tap(Listener):
    """Passes the bytes of the connections it accepts to ``dest`` and back, keeping both
    directions' in :attr:`seen`."""

    def __init__(self, dest):
        self.dest, self.seen = tuple(dest), bytearray()
        super().__init__()

    def serve(self, down):
        up = socket.create_connection(self.dest)
        threading.Thread(target=pipe, args=(up, down, self.seen), daemon=True).start()
        pipe(down, up, self.seen)


class Relay(Listener):
    """A man in the middle on loopback: passes a dialler's bytes to ``dest`` (with the hello's
    target changed to ``retarget``, if given) and back, keeps what the dialler sent in
    :attr:`sent`, and can add bytes of its own to the dialler's stream (:meth:`inject`)."""

    def __init__(self, dest, retarget=None):
        self.dest, self.retarget, self.sent, self.up = tuple(dest), retarget, bytearray(), None
        super().__init__()

    def serve(self, down):
        self.up = up = socket.create_connection(self.dest)
        hello = recv_upto(down, HELLO)
        self.sent += hello
        if self.retarget is not None:
            struct.pack_into("<I", hello, len(channel.MAGIC) + 1, self.retarget)
        up.sendall(hello)
        threading.Thread(target=pipe, args=(up, down, None), daemon=True).start()
        pipe(down, up, self.sent)

    def inject(self, data):
        self.up.sendall(data)


class Impostor(Listener):
    """Listens at ``addr`` (where a lost worker was): keeps every dialler's bytes in
    :attr:`got`, answers a hello with random bytes (it cannot prove anything) and reads until
    the dialler hangs up, each read bounded by ``limit`` seconds."""

    def __init__(self, addr=("127.0.0.1", 0), limit=5.0, wait=0.0):
        self.limit, self.got = limit, []
        super().__init__(addr, wait)

    def serve(self, conn):
        conn.settimeout(self.limit)
        data = bytearray()
        try:
            data += recv_upto(conn, HELLO)
            if len(data) == HELLO:
                conn.sendall(os.urandom(64))
                data += drain(conn, self.limit)
        except OSError:
            pass
        self.got.append(bytes(data))
        conn.close()


def echo(after, timeout, cmds):
    """A mailbox runner that answers batch ``after`` with ``[["e", after]]`` and exports the
    values it was sent."""
    return ([["e", after]], *cmds)


def check_answers_in_order(wire, big, count, limit):
    """Sends ``count`` batches to worker 0 of ``wire`` (whose mailbox runs :func:`echo`),
    batch ``i`` with ``np.full(3, i)`` and ``big * i``, waits for all of them (``limit``
    seconds) and checks each one's answer and exports, and that the wire is idle after."""
    sent = [wire.send(0, i, [np.full(3, i), big * i], 2, 5.0) for i in range(count)]
    wire.wait([r for r, _ in sent], limit)
    for i, (r, parts) in enumerate(sent):
        assert wire.value(r) == [["e", i]]
        np.testing.assert_array_equal(wire.value(parts[0]), np.full(3, i))
        np.testing.assert_array_equal(wire.value(parts[1]), big * i)
    assert not wire.busy()


def send_cut_answers(ch, answers) -> list[bytes]:
    """Packs ``answers`` on ``ch`` (a wire's peer) and sends the first five on its socket cut
    and joined: 0 to 2 in one piece, 3 (a large one) in 1000-byte pieces and then its rest
    with 4's first bytes, then 4's rest. Returns every answer's frame bytes."""
    s = ch.sock
    raw = [b"".join(bytes(p) for p in ch.pack(a)) for a in answers]
    s.sendall(raw[0] + raw[1] + raw[2])  # three answers at once
    time.sleep(0.05)
    for i in range(0, 5000, 1000):  # the large one: its start, slowly, then the rest
        s.sendall(raw[3][i : i + 1000])
        time.sleep(0.01)
    s.sendall(raw[3][5000:] + raw[4][:5])  # ... and the next one's first bytes
    time.sleep(0.05)
    s.sendall(raw[4][5:])
    return raw
