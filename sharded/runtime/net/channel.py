"""An authenticated connection: a mutual challenge-response handshake, then frames that
carry a sequence number and a MAC.

**Handshake** (the session key never travels). The dialling side sends ``MAGIC``, its role
(``D`` the driver, ``P`` a peer worker), the worker it wants (``target``) and a fresh random
nonce ``cn``. The listening worker answers with its own nonce ``sn`` and a proof,
``HMAC(key, "S" role target cn sn)``; the dialler checks it, then proves itself with
``HMAC(key, "C" role target cn sn)``. Either side closes on a wrong proof. A process that
listens at a dead worker's address learns a nonce and a worker number: it cannot answer the
proof, and nothing it saw authenticates anywhere (the next handshake has other nonces). The
proofs name the target, so a connection relayed to another worker fails too.

**Frames.** Each direction keys its MACs with its own key, derived from the session key and
both nonces (``HMAC(key, "c2s"/"s2c" cn sn)``), and numbers its frames from 0. A frame is::

    seq (u64) | body bytes (u32) | buffers (u32) | buffer bytes (u64 each)
    | body (msgpack, .codec) | buffers | MAC (16 bytes, keyed BLAKE2b of all before it)

The receiver checks the sizes against :data:`MAX_FRAME` before it allocates anything, grows
each buffer as its bytes arrive, and refuses (:class:`Refused`, the connection then closes) a
frame whose sequence number is not the next one (a replay, a reordering) or whose MAC does not
match (an alteration). A frame from another connection fails the MAC: its keys differ.

**TLS** (``st.init(tls=True)``; :mod:`.tls`). Given a ``tls`` context, both sides first run
a TLS 1.3 handshake in which each presents the session's certificate and trusts no other;
the handshake and frames above then run inside it, unchanged. A peer without the session's
certificate, or one that speaks no TLS, is :class:`Refused` as a wrong proof is.

Examples
--------
>>> import socket
>>> a, b = socket.socketpair()
>>> import threading
>>> key, got = b"k" * 32, {}
>>> t = threading.Thread(target=lambda: got.update(ch=accept(b, key, 7)))
>>> t.start(); c = dial_socket(a, key, b"D", 7); t.join()
>>> c.send({"x": 1}); got["ch"][0].recv()
{'x': 1}
>>> c.close(); got["ch"][0].close()
"""

from __future__ import annotations

import hashlib
import hmac
import os
import socket
import ssl
import struct
import time

from . import codec

MAGIC = b"sharded1"
NONCE = 32
ROLES = (b"D", b"P")  # the driver, a peer worker
HANDSHAKE_S = float(os.environ.get("SHARDED_NET_HANDSHAKE_S", "5"))
# the most bytes one frame may carry (body and buffers); configurable for larger partials
MAX_FRAME = int(os.environ.get("SHARDED_NET_MAX_FRAME", str(1 << 30)))
MAX_BUFFERS = 4096
MAC_BYTES = 16
GROW = 1 << 20  # a buffer starts at most this large and doubles as its bytes arrive

_HELLO = struct.Struct(f"<{len(MAGIC)}scI{NONCE}s")
_HEAD = struct.Struct("<QII")  # sequence number, body bytes, number of buffers


class Refused(ConnectionError):
    """A handshake or frame that failed its checks; ``kind`` says which check:
    ``handshake``, ``sequence``, ``mac``, ``size`` or ``decode``."""

    def __init__(self, kind: str, why: str):
        super().__init__(f"{kind}: {why}")
        self.kind = kind


def _proof(key, side, role, target, cn, sn) -> bytes:
    return hmac.digest(key, side + role + target.to_bytes(4, "little") + cn + sn, "sha256")


def _keys(key, cn, sn):
    """The MAC keys of the dialler's frames and of the listener's."""
    return tuple(hmac.digest(key, d + cn + sn, "sha256") for d in (b"c2s", b"s2c"))


def _recv_exact(sock, n: int, deadline: float | None = None) -> bytes:
    """``n`` bytes from ``sock``; with a ``deadline`` (``time.monotonic()``), all of them by
    then (``TimeoutError`` past it): a peer that trickles bytes cannot stretch a handshake."""
    buf, got = bytearray(n), 0
    view = memoryview(buf)
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the handshake took too long")
            sock.settimeout(left)
        k = sock.recv_into(view[got:])
        if not k:
            raise EOFError("the connection ended")
        got += k
    return bytes(buf)


def dial(
    addr, key: bytes, role: bytes, target: int, timeout: float | None = None, tls=None
) -> Channel:
    """Connect to worker ``target``'s mailbox at ``addr`` and authenticate both ways, within
    ``timeout`` s (default :data:`HANDSHAKE_S`), inside TLS with ``tls`` (a
    :class:`~.tls.Tls`). Raises OSError (``Refused`` among them) when it cannot."""
    timeout = HANDSHAKE_S if timeout is None else timeout
    s = socket.create_connection(tuple(addr), timeout=timeout)
    try:
        return dial_socket(s, key, role, target, timeout, tls)
    except BaseException:
        s.close()
        raise


def dial_socket(s, key, role, target, timeout=None, tls=None) -> Channel:
    """The dialling side's handshake on a connected socket ``s`` (see the module), all of it
    within ``timeout`` s (default :data:`HANDSHAKE_S`); with ``tls`` (a :class:`~.tls.Tls`),
    a TLS handshake first and the rest inside it (``s`` is then closed if it fails)."""
    timeout = HANDSHAKE_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    s.settimeout(timeout)
    if s.family != socket.AF_UNIX:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls is None:
        return _dial(s, key, role, target, deadline)
    s = tls.client.wrap_socket(s, do_handshake_on_connect=False)
    with _tls_failures(s, f"worker {target}"):
        s.do_handshake()  # (bounded by the timeout as a whole)
        return _dial(s, key, role, target, deadline)


def _dial(s, key, role, target, deadline) -> Channel:
    cn = os.urandom(NONCE)
    s.sendall(_HELLO.pack(MAGIC, role, target, cn))
    try:
        got = _recv_exact(s, 2 * NONCE, deadline)
    except EOFError:
        raise Refused("handshake", f"worker {target} closed the connection") from None
    sn, proof = got[:NONCE], got[NONCE:]
    if not hmac.compare_digest(proof, _proof(key, b"S", role, target, cn, sn)):
        raise Refused("handshake", f"the listener is not worker {target} of this session")
    s.sendall(_proof(key, b"C", role, target, cn, sn))
    s.settimeout(None)
    out, into = _keys(key, cn, sn)
    return Channel(s, out, into)


def accept(s, key: bytes, ident: int, timeout: float | None = None, tls=None):
    """The listening side's handshake on an accepted socket: ``(Channel, role)``; with
    ``tls`` (a :class:`~.tls.Tls`), a TLS handshake first and the rest inside it (``s`` is
    then closed if it fails). Raises :class:`Refused` (wrong magic, role, target or proof;
    a failed TLS handshake) or OSError (not done within ``timeout`` s, default
    :data:`HANDSHAKE_S`, or gone)."""
    timeout = HANDSHAKE_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    s.settimeout(timeout)
    if s.family != socket.AF_UNIX:
        # (both ends: a worker answering two batches in a row would otherwise hold the
        # second answer until the driver acknowledged the first, ~40 ms of delayed ACK)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls is None:
        return _accept(s, key, ident, deadline)
    s = tls.server.wrap_socket(s, server_side=True, do_handshake_on_connect=False)
    with _tls_failures(s, "the dialler"):
        s.do_handshake()
        return _accept(s, key, ident, deadline)


def _accept(s, key, ident, deadline):
    try:
        magic, role, target, cn = _HELLO.unpack(_recv_exact(s, _HELLO.size, deadline))
        if magic != MAGIC or role not in ROLES or target != ident:
            raise Refused("handshake", "not a hello of this protocol for this worker")
        sn = os.urandom(NONCE)
        s.sendall(sn + _proof(key, b"S", role, target, cn, sn))
        proof = _recv_exact(s, 32, deadline)
    except EOFError:
        raise Refused("handshake", "the connection ended during the handshake") from None
    if not hmac.compare_digest(proof, _proof(key, b"C", role, target, cn, sn)):
        raise Refused("handshake", "wrong proof")
    s.settimeout(None)
    into, out = _keys(key, cn, sn)
    return Channel(s, out, into), role


class _tls_failures:
    """Close the TLS socket ``s`` when its handshakes fail; a TLS error (the peer has no
    certificate of this session, speaks no TLS, or sent an alert) is a :class:`Refused`.
    (The TLS socket took over the plain one's descriptor: only it can close it.)"""

    def __init__(self, s, who):
        self.s, self.who = s, who

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if kind is None:
            return False
        self.s.close()
        if issubclass(kind, ssl.SSLError):
            raise Refused("handshake", f"TLS with {self.who} failed: {e}") from None
        return False


def _mac(key):
    return hashlib.blake2b(key=key, digest_size=MAC_BYTES)


def _unframe(ch, seq, parts):
    """The object of a frame's ``parts`` (body, buffers) whose MAC matched."""
    ch._got += 1
    try:
        return codec.decode(parts[0], parts[1:])
    except codec.DecodeError as e:
        raise Refused("decode", f"frame {seq}: {e}") from None


class Channel:
    """Frames over an authenticated socket (made by :func:`dial` or :func:`accept`)."""

    __slots__ = ("sock", "_out", "_into", "_sent", "_got")

    def __init__(self, sock, out_key: bytes, into_key: bytes):
        # each frame's MAC starts from a copy of these (cheaper than keying one anew)
        self.sock, self._out, self._into = sock, _mac(out_key), _mac(into_key)
        self._sent = self._got = 0  # frames sent, frames taken

    # ------------------------------------------------------------------ sending
    def pack(self, obj) -> list:
        """``obj`` as the parts of the next frame (for sends this side makes itself, in
        order). Raises TypeError, sending nothing, when ``obj`` is not data
        (:func:`.codec.encode`) or ValueError when the frame would pass :data:`MAX_FRAME`."""
        body, *bufs = codec.encode(obj)
        lens = [b.nbytes for b in bufs]
        if len(body) + sum(lens) > MAX_FRAME or len(bufs) > MAX_BUFFERS:
            raise ValueError(f"a frame of {len(body) + sum(lens)} bytes passes MAX_FRAME")
        head = _HEAD.pack(self._sent, len(body), len(bufs)) + struct.pack(f"<{len(bufs)}Q", *lens)
        mac = self._out.copy()
        mac.update(head)
        mac.update(body)
        for b in bufs:
            mac.update(b)
        self._sent += 1
        if sum(lens) < 65536:
            return [b"".join([head, body, *bufs, mac.digest()])]
        return [head + body, *bufs, mac.digest()]

    def send(self, obj) -> None:
        """Send ``obj`` as one frame (blocking)."""
        for part in self.pack(obj):
            self.sock.sendall(part)

    # ------------------------------------------------------------------ receiving
    def need(self, buf) -> int | None:
        """The whole size of the frame at the start of ``buf`` (None: its head has not all
        come). Raises :class:`Refused` for a size past the bounds or an unexpected
        sequence number (before anything is allocated)."""
        if len(buf) < _HEAD.size:
            return None
        seq, n, k = _HEAD.unpack_from(buf)
        if seq != self._got:
            raise Refused("sequence", f"frame {seq} where frame {self._got} was due")
        if k > MAX_BUFFERS or n > MAX_FRAME:
            raise Refused("size", f"a frame of {n} bytes and {k} buffers")
        at = _HEAD.size + 8 * k
        if len(buf) < at:
            return None
        total = n + sum(struct.unpack_from(f"<{k}Q", buf, _HEAD.size))
        if total > MAX_FRAME:
            raise Refused("size", f"a frame of {total} bytes (the most is {MAX_FRAME})")
        return at + total + MAC_BYTES

    def take(self, buf: bytearray, sock=None):
        """The object of the frame at the start of ``buf`` (``need(buf)`` was not None),
        taken off ``buf``; what has not come yet is read from ``sock`` (blocking). Raises
        :class:`Refused` (MAC, decode) or EOFError (the connection ended inside it)."""
        seq, n, k = _HEAD.unpack_from(buf)
        at = _HEAD.size + 8 * k
        lens = struct.unpack_from(f"<{k}Q", buf, _HEAD.size)
        mac = self._into.copy()
        end = at + n + sum(lens)
        if len(buf) >= end + MAC_BYTES:  # all here (a small frame): one MAC update, no copies
            view = memoryview(buf)
            mac.update(view[:end])
            ok = hmac.compare_digest(view[end : end + MAC_BYTES], mac.digest())
            parts, at = [bytes(view[at : at + n])], at + n
            for m in lens:  # (an array's memory: writable, its own)
                parts.append(bytearray(view[at : at + m]))
                at += m
            view.release()
            del buf[: end + MAC_BYTES]
        else:
            mac.update(memoryview(buf)[:at])
            parts = []
            for m in (n, *lens, MAC_BYTES):
                have = min(m, max(len(buf) - at, 0))
                part = bytearray(memoryview(buf)[at : at + have])
                at += have
                if have < m:
                    _fill(sock, part, m)
                parts.append(part)
            del buf[:at]
            got = bytes(parts.pop())
            for p in parts:
                mac.update(p)
            ok = hmac.compare_digest(got, mac.digest())
        if not ok:
            raise Refused("mac", f"frame {seq} does not carry its MAC")
        return _unframe(self, seq, parts)

    def recv(self):
        """The next frame's object (blocking); EOFError when the connection ended."""
        buf = bytearray(_recv_exact(self.sock, _HEAD.size))
        k = _HEAD.unpack_from(buf)[2]
        if self.need(buf) is None:  # (checks the bounds before the lengths are read)
            buf += _recv_exact(self.sock, 8 * k)
            self.need(buf)
        return self.take(buf, self.sock)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _fill(sock, part: bytearray, m: int) -> None:
    """Read ``part`` up to ``m`` bytes from ``sock``, growing it as bytes arrive (a peer that
    announces much and sends little makes the reader allocate little)."""
    if sock is None:
        raise EOFError("the frame is not all there")
    got = len(part)
    while got < m:
        if got == len(part):
            part += bytes(min(max(len(part), GROW), m - len(part)))
        view = memoryview(part)
        k = sock.recv_into(view[got:])
        view.release()
        if not k:
            raise EOFError("the connection ended inside a frame")
        got += k
