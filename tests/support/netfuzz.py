"""A protocol fuzzer for a mailbox (sharded.runtime.net.mailbox): random, truncated,
bit-flipped and oversized handshakes and frames, without the session key (raw bytes, hellos,
near-miss proofs) and with it (authenticated connections carrying altered frames, wrong
sequence numbers, oversized or overlong heads, and frames whose MAC is right but whose body is
garbage, odd msgpack, unknown records, wrong types or a record the role may not send).

What it sends never changes a session's state: values go under another client's tags, aborts
name another client, and a driver's ``Run`` asks for a number of Ray batches no worker ran (a
negative one, or one of a type that cannot be compared), so it is answered with a failure and
never runs. Each candidate frame is decoded here first with the mailbox's own decoder and
left out if it could do more (:func:`harmless`); a decoder raising anything but its
``DecodeError`` is recorded in :attr:`Fuzzer.escapes`.

Examples
--------
>>> from sharded.runtime.net.mailbox import Mailbox
>>> box = Mailbox("127.0.0.1", 0)
>>> box.set_peers({}, b"k" * 32)
>>> box.runner = lambda after, timeout, cmds: [{"op": "batch", "cause": "0 Ray batches ran"}]
>>> f = Fuzzer(box.address, 0, b"k" * 32, client=0, seed=1)
>>> f.run(50) >= 50 and not f.escapes
True
>>> box.close()
"""

from __future__ import annotations

import collections
import random
import socket
import struct

import msgpack
import numpy as np

from sharded.runtime.commands import BY_TAG, Abort, Deliver, Key, MailTag, Run
from sharded.runtime.net import channel, codec

MiB = 1 << 20
FOREIGN = 987_654_321  # the client id the fuzzer's tags and aborts name (no session's)
DTYPES = [
    "<f8",
    "<f4",
    "<f2",
    ">f8",
    "<c16",
    "<c8",
    "<i8",
    "<i4",
    "<i2",
    "|i1",
    "<u8",
    "|u1",
    "|b1",
]
ODD_DTYPES = [
    "O",
    "V8",
    "<f8,<i4",
    "(2,)<i4",
    "M8[s]",
    "S3",
    "U2",
    "float1024",
    "",
    "<f8 ",
    "bfloat16",
]
FRAME_KINDS = ("Run", "Deliver", "Abort")


def _raw(parts) -> bytes:
    return b"".join(bytes(p) for p in parts)


def frame(ch, body: bytes, bufs=(), seq=None) -> bytes:
    """A frame of ``body`` and ``bufs`` with the right MAC for ``ch``'s next frame (or for
    sequence number ``seq``)."""
    seq = ch._sent if seq is None else seq
    head = channel._HEAD.pack(seq, len(body), len(bufs))
    head += struct.pack(f"<{len(bufs)}Q", *(len(b) for b in bufs))
    mac = ch._out.copy()  # (the keyed MAC its frames start from)
    for part in (head, body, *bufs):
        mac.update(part)
    ch._sent += 1
    return head + body + b"".join(bufs) + mac.digest()


def _eq(a, b) -> bool:
    """``a == b`` as a yes/no; anything odd counts as yes (the fuzzer then leaves it out)."""
    try:
        return bool(a == b)
    except Exception:
        return True


def harmless(obj, role: bytes, client) -> bool:
    """Whether a frame decoded to ``obj`` can change nothing of the session ``client`` owns:
    no abort or value of its own, no ``Run`` that could run."""
    t = type(obj)
    if t is Run and role == b"D":
        a = obj.after
        return (type(a) is int and a < 0) or type(a) in (type(None), str, bytes, list, dict)
    if t is Abort:
        return not _eq(obj.client, client)
    if t is Deliver:
        tag = obj.tag
        return type(tag) is not MailTag or not _eq(tag[0], client)
    return True


class Fuzzer:
    """Cases against one mailbox: worker ``w`` at ``addr``, of the session with ``key``
    whose driver is ``client``; ``seed`` makes a run reproducible (one thread per Fuzzer).

    After :meth:`run`: ``sent`` counts what went out by kind; ``raw`` the unauthenticated
    cases (each a refused handshake at the mailbox), ``refusals`` the frames the mailbox must
    have refused (and counted), ``escapes`` what the decoder raised besides DecodeError."""

    def __init__(self, addr, w: int, key: bytes, client, seed: int):
        self.addr, self.w, self.key, self.client = tuple(addr), w, key, client
        self.r = random.Random(seed)
        self.sent: collections.Counter = collections.Counter()
        self.raw = self.refusals = 0
        self.escapes: list = []

    def run(self, cases: int) -> int:
        """Send at least ``cases`` handshakes and frames; returns how many went."""
        n = 0
        while n < cases:
            n += self._raw_case() if self.r.random() < 0.35 else self._auth_case()
        return n

    # ------------------------------------------------------------------ random data
    def value(self, depth=0):
        """A random value of every kind the codec carries."""
        r = self.r
        k = r.randrange(16 if depth < 3 else 8)
        if k == 0:
            return r.choice([None, True, False, Ellipsis])
        if k == 1:
            return r.choice([0, -1, 2**63 - 1, -(2**63), 2**64 - 1, r.randrange(-1000, 1000)])
        if k == 2:
            return r.choice([0.0, -0.0, float("nan"), float("inf"), r.uniform(-1e300, 1e300)])
        if k == 3:
            return "".join(chr(r.randrange(1, 0x2FFF)) for _ in range(r.randrange(12)))
        if k == 4:
            return r.randbytes(r.randrange(40))
        if k == 5:
            return complex(r.random(), -r.random())
        if k == 6:
            return r.choice([slice(1, None, -2), range(0, 2**40, 7), np.dtype(r.choice(DTYPES))])
        if k == 7:
            dt = np.dtype(r.choice(DTYPES))
            n = r.choice([0, 1, 3, 17, 600])  # (600 of 8 bytes and more: a raw buffer)
            a = np.frombuffer(r.randbytes(n * dt.itemsize), dt)
            return a.reshape(r.choice([(n,), (1, n), (n, 1)])) if n else a
        if k == 8:
            return np.frombuffer(r.randbytes(8), np.dtype(r.choice(DTYPES[:4])))[0]
        if k in (9, 10):
            return [self.value(depth + 1) for _ in range(r.randrange(5))]
        if k == 11:
            return tuple(self.value(depth + 1) for _ in range(r.randrange(4)))
        if k == 12:
            return {str(i): self.value(depth + 1) for i in range(r.randrange(4))}
        if k == 13:
            return frozenset(r.randrange(100) for _ in range(r.randrange(4)))
        if k == 14:
            return Key(r.randrange(2**31), (slice(0, r.randrange(9)), Ellipsis))
        return MailTag(FOREIGN, r.randrange(-5, 2**40), 0, r.randrange(9), r.randrange(9))

    def odd(self, depth=0):
        """A msgpack value that is almost an encoding of ours: markers with wrong contents,
        unknown markers, records of any tag with any fields, odd arrays and dtypes."""
        r, X = self.r, codec.marker
        if depth >= 3:
            return self.plain()
        k = r.randrange(8)
        if k == 0:
            return self.r.choice([None, 1, -(2**63), "s", b"b", 2.5, []])
        if k == 1:  # a record: known code (or not) with fields of any arity and type
            mark = X(r.choice([*range(32, 32 + len(BY_TAG)), 20, 90, 127]))
            fields = [self.odd(depth + 1) for _ in range(r.randrange(9))]
            return [mark, *fields]
        if k == 2:  # an array with a dtype, shape or data that may not fit
            dt = r.choice(DTYPES + ODD_DTYPES + [None, 7])
            shape = r.choice([[], [2], [2, 3], [-1], [2**62, 2**62], [0, 2**64 - 1], "x", [1] * 40])
            data = r.choice([r.randbytes(r.randrange(50)), 0, 1, -1, 99, None, "d"])
            v = [dt, shape, data][: r.randrange(2, 5)] if r.random() < 0.3 else [dt, shape, data]
            return [X(3), *v]
        if k == 3:  # a scalar, dtype, slice, range, complex, set or tuple marker, any contents
            code = r.choice([1, 2, 4, 5, 6, 7, 8, 9])
            mark = X(code, r.randbytes(r.randrange(3)))
            items = [self.odd(depth + 1) for _ in range(r.randrange(4))]
            where = r.randrange(3)  # (heading its list, inside it, or alone)
            return [mark, *items] if where == 0 else [*items, mark] if where == 1 else mark
        if k == 4:  # an unknown marker, or a registered-class one with any name
            if r.random() < 0.5:
                return [X(r.choice([0, 12, 13, 100, 127]), r.randbytes(4)), 1]
            return [X(21, r.choice([b"failed", b"box", b"", b"\xff"])), self.odd(depth + 1)]
        if k == 5:
            return [self.odd(depth + 1) for _ in range(r.randrange(5))]
        if k == 6:  # maps with several keys, or odd keys
            return {self.r.choice([1, "k", 2.5, None, b"x"]): self.odd(depth + 1) for _ in range(2)}
        return self.plain()

    def plain(self):
        """A random msgpack value of its own types only."""
        r = self.r
        return r.choice(
            [
                None,
                r.random() < 0.5,
                r.randrange(-(2**63), 2**64),
                r.uniform(-1e9, 1e9),
                r.randbytes(r.randrange(9)),
                "".join(chr(r.randrange(32, 0x2FFF)) for _ in range(r.randrange(6))),
                [r.randrange(9) for _ in range(r.randrange(4))],
            ]
        )

    def ok_frame(self, role):
        """A frame the mailbox takes and that changes nothing of the session."""
        r = self.r
        k = r.randrange(3)
        if k == 0 or role == b"P":
            tag = MailTag(FOREIGN, r.randrange(2**40), r.randrange(9), r.randrange(9), 1)
            return Deliver(tag, [self.value() for _ in range(r.randrange(3))])
        if k == 1:
            return Abort(FOREIGN + r.randrange(1, 9), r.randrange(-2, 2**40))
        return Run(-r.randrange(1, 2**40), r.choice([0.0, 1.0, 1e300]), [self.value()])

    # ------------------------------------------------------------------ cases
    def _connect(self):
        return socket.create_connection(self.addr, timeout=10)

    @staticmethod
    def _finish(s):
        """Stop sending, then read until the mailbox closes (each case is done with before the
        next: at most one connection of the fuzzer's is authenticating at a time)."""
        try:
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass
        except OSError:
            pass
        s.close()

    def _hello(self, role=None, target=None):
        role = self.r.choice(channel.ROLES) if role is None else role
        target = self.w if target is None else target
        return role, channel._HELLO.pack(channel.MAGIC, role, target, self.r.randbytes(32))

    def _raw_case(self) -> int:
        """One handshake without the key: random bytes, a truncated, altered or misdirected
        hello, a hello and then a frame head, or a near miss of the right proof."""
        r = self.r
        role, hello = self._hello()
        k = r.randrange(7)
        s = self._connect()
        try:
            if k == 0:
                s.sendall(r.randbytes(r.randrange(120)))
            elif k == 1:
                s.sendall(hello[: r.randrange(len(hello))])
            elif k == 2:
                s.sendall(_flip(hello, r) + r.randbytes(r.randrange(40)))
            elif k == 3:
                bad = channel._HELLO.pack(
                    channel.MAGIC,
                    bytes([r.choice([0, 0x44 ^ 0x20, 0x50 ^ 1, 255])]),
                    r.choice([self.w + 1, 2**32 - 1, self.w]),
                    r.randbytes(32),
                )
                s.sendall(bad + r.randbytes(32))
            elif k == 4:  # the hello, then a frame head in place of the proof
                s.sendall(hello + _head(r) + r.randbytes(r.randrange(64)))
            elif k == 5:  # the old protocol: a token and a frame announcing 400 MiB
                s.sendall(r.randbytes(16) + struct.pack("<QI", 400 * MiB, 0))
            else:  # a near miss: the right proof with one bit flipped
                s.sendall(hello)
                got = _recv_n(s, 64)
                if len(got) == 64:
                    cn = hello[-32:]
                    proof = channel._proof(self.key, b"C", role, self.w, cn, got[:32])
                    s.sendall(_flip(proof, r) + r.randbytes(r.choice([0, 40])))
        except OSError:
            pass
        self._finish(s)
        self.raw += 1
        self.sent[f"raw{k}"] += 1
        return 1

    def _auth_case(self) -> int:
        """An authenticated connection: frames the mailbox takes, then one that ends it."""
        r = self.r
        role = r.choice(channel.ROLES)
        ch = channel.dial(self.addr, self.key, role, self.w, 10.0)
        ch.sock.settimeout(10)
        n = 0
        try:
            for _ in range(r.randrange(4)):
                obj = self.ok_frame(role)
                ch.sock.sendall(_raw(ch.pack(obj)))
                n += 1
                self.sent["ok"] += 1
                if type(obj) is Run:  # answered: a failure, it did not run
                    ans = ch.recv()
                    assert ans[0]["op"] == "batch" and "Ray batches" in ans[0]["cause"], ans
            ch.sock.sendall(self._last(ch, role))
            n += 1
        except OSError:
            pass
        self._finish(ch.sock)
        return n

    def _last(self, ch, role) -> bytes:
        """A frame that ends the connection (refused, cut short, or announcing much)."""
        r = self.r
        k = r.randrange(9)
        self.sent[f"last{k}"] += 1
        if k == 0:  # a valid frame with one bit flipped
            return _flip(_raw(ch.pack(self.ok_frame(role))), r)
        if k == 1:  # a valid frame cut short
            f = _raw(ch.pack(self.ok_frame(role)))
            return f[: r.randrange(len(f))]
        if k == 2:  # a frame with the right MAC and a wrong sequence number
            body = codec.encode(self.ok_frame(role))[0]
            seq = (ch._sent + r.choice([-1, 1, 2, 2**32, 2**63])) % 2**64
            self.refusals += 1
            return frame(ch, body, seq=seq)
        if k == 3:  # a head past the bounds
            self.refusals += 1
            return _oversized(ch._sent, r)
        if k == 4:  # a head announcing much (under the bound) and a little of it
            n = r.choice([16 * MiB, 400 * MiB, channel.MAX_FRAME])
            return channel._HEAD.pack(ch._sent, n, 0) + r.randbytes(r.randrange(4096))
        if k == 5:  # the role may not send it, or a tag the box cannot hold
            obj = r.choice(
                [Run(-1, 1.0, []), Deliver(r.choice([5, ("a", 1), [1]]), [1])]
                if role == b"P"
                else [Deliver(r.choice([5, ("a", 1), MailTag(FOREIGN, "x", 0, 0, 1)]), [1])]
            )
            self.refusals += 1
            return frame(ch, codec.encode(obj)[0])
        return self._garbage(ch, role, k)

    def _garbage(self, ch, role, k) -> bytes:
        """A frame with the right MAC around a body that is garbage (k 6), odd msgpack (7) or
        a valid body altered (8)."""
        r = self.r
        bufs = [r.randbytes(r.choice([0, 8, 4096])) for _ in range(r.choice([0, 0, 1, 2]))]
        if k == 6:
            body = r.randbytes(r.randrange(1, 200))
        elif k == 7:
            body = msgpack.packb(self.odd(), use_bin_type=True)
        else:
            body, *bufs = codec.encode(self.ok_frame(role))
            body, bufs = _mangle(body, r), [bytes(b) for b in bufs]
        try:
            obj = codec.decode(body, [bytearray(b) for b in bufs])
        except codec.DecodeError:
            obj = None  # (refused by the mailbox too)
        except Exception as e:  # the decoder must say DecodeError and nothing else
            self.escapes.append(f"{type(e).__name__}: {e} <- {body[:60]!r}")
            return frame(ch, b"\xc1", bufs)  # (never valid msgpack)
        if not harmless(obj, role, self.client):
            body, bufs = b"\xc1", []
        elif type(obj).__name__ in FRAME_KINDS and (role == b"D" or type(obj) is not Run):
            return frame(ch, body, bufs)  # (taken, perhaps: not a sure refusal)
        self.refusals += 1
        return frame(ch, body, bufs)


def _recv_n(s, n) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def _flip(data: bytes, r) -> bytes:
    b = bytearray(data)
    i = r.randrange(8 * len(b))
    b[i // 8] ^= 1 << (i % 8)
    return bytes(b)


def _mangle(body: bytes, r) -> bytes:
    b = bytearray(body)
    for _ in range(r.randrange(1, 4)):
        op = r.randrange(3)
        if op == 0 and b:
            i = r.randrange(8 * len(b))
            b[i // 8] ^= 1 << (i % 8)
        elif op == 1 and b:
            b[r.randrange(len(b))] = r.choice([0xC1, 0xDD, 0xDF, 0xC7, 0xFF, 0x00, 0x7F])
        else:
            b = b[: r.randrange(len(b) + 1)]
    return bytes(b)


def _head(r) -> bytes:
    return channel._HEAD.pack(r.randrange(2**64), r.choice([400 * MiB, 2**32 - 1]), 0)


def _oversized(seq, r) -> bytes:
    """A frame head whose sizes pass MAX_FRAME or MAX_BUFFERS (sequence number ``seq``)."""
    big, most = 2**64 - 1, channel.MAX_FRAME
    k = r.randrange(4)
    if k == 0:
        return channel._HEAD.pack(seq, most + 1, 0)
    if k == 1:
        return channel._HEAD.pack(seq, 0, channel.MAX_BUFFERS + r.randrange(1, 2**20))
    if k == 2:
        return channel._HEAD.pack(seq, 0, 2) + struct.pack("<2Q", big, 2)  # (a sum that wraps)
    return channel._HEAD.pack(seq, 1, 3) + struct.pack("<3Q", most // 2, most // 2, 1)
