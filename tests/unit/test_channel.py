"""Authenticated connections (sharded.runtime.net.channel) and the mailbox behind them, under
attack: a handshake needs the key on both sides and the right worker; a frame that was altered,
reordered, replayed or moved to another connection is refused; what a dialler tells a stranger
authenticates nowhere; idle, trickling and oversized peers cost a bounded thread, a bounded
time and bounded memory; the accept loop outlives running out of file descriptors. Real
sockets on loopback (and one real subprocess); no Ray."""

import os
import socket
import struct
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

from sharded.runtime.commands import Deliver, MailTag, Run
from sharded.runtime.net import channel, mailbox
from sharded.runtime.net.channel import MAGIC, Refused
from sharded.runtime.net.mailbox import Mailbox, abort_all
from sharded.runtime.net.wire import Wire
from tests.support.nettools import HELLO, Impostor, Relay, drain, until

KEY = bytes(range(32))
MiB = 1 << 20


def _raw(parts) -> bytes:
    return b"".join(bytes(p) for p in parts)


def _pair(dkey=KEY, lkey=KEY, target=3, ident=3):
    """A dialler and a listener over a socket pair: each side's Channel, or what it raised."""
    a, b = socket.socketpair()
    got = {}

    def listen():
        try:
            got["l"] = channel.accept(b, lkey, ident, 5.0)[0]
        except Exception as e:
            got["l"] = e
            b.close()

    t = threading.Thread(target=listen)
    t.start()
    try:
        d = channel.dial_socket(a, dkey, b"D", target, 5.0)
    except Exception as e:
        d = e
        a.close()
    t.join(10)
    return d, got["l"]


def _outcome(rx, data: bytes) -> str:
    """What receiver ``rx`` makes of ``data`` as the next frame: ``taken``, the kind of its
    refusal, or ``short`` (it would wait for bytes that never come)."""
    buf = bytearray(data)
    try:
        n = rx.need(buf)
        if n is None or n > len(buf):
            return "short"
        rx.take(buf)
    except Refused as e:
        return e.kind
    return "taken"


@pytest.fixture()
def box():
    b = Mailbox("127.0.0.1", 3)
    b.set_peers({}, KEY)
    b.ran = []
    b.runner = lambda after, timeout, cmds: (b.ran.append(after), [["ran", after]])[1]
    yield b
    b.close()


# ------------------------------------------------------------------ the handshake
def test_a_handshake_authenticates_both_ways_and_frames_flow_both_ways():
    srv = socket.create_server(("127.0.0.1", 0))
    got = {}
    t = threading.Thread(target=lambda: got.update(l=channel.accept(srv.accept()[0], KEY, 3)))
    t.start()
    d = channel.dial(srv.getsockname(), KEY, b"P", 3)
    t.join(5)
    lc, role = got["l"]
    big = np.arange(20_000.0)  # out of band
    d.send({"x": [1, 2.5, "s"]})
    d.send(big)
    assert role == b"P" and lc.recv() == {"x": [1, 2.5, "s"]}
    np.testing.assert_array_equal(lc.recv(), big)
    lc.send(("answer", big[:3]))
    got_back = d.recv()
    assert got_back[0] == "answer" and list(got_back[1]) == [0.0, 1.0, 2.0]
    d.close(), lc.close(), srv.close()


@pytest.mark.parametrize("wrong", ["dialler", "listener"])
def test_a_wrong_key_on_either_side_is_refused_by_both(wrong):
    other = b"\xee" * 32
    d, lst = _pair(
        dkey=other if wrong == "dialler" else KEY, lkey=other if wrong == "listener" else KEY
    )
    assert isinstance(d, Refused) and d.kind == "handshake"
    assert isinstance(lst, Refused) and lst.kind == "handshake"


def test_the_wrong_target_is_refused_before_the_listener_says_anything():
    d, lst = _pair(target=2, ident=3)
    assert isinstance(d, Refused) and isinstance(lst, Refused)
    a, b = socket.socketpair()
    got = []

    def listen():
        try:
            channel.accept(b, KEY, 3)
        except Refused as e:
            got.append(e)
        b.close()  # (as the mailbox does)

    t = threading.Thread(target=listen)
    t.start()
    a.sendall(channel._HELLO.pack(MAGIC, b"D", 2, os.urandom(32)))
    assert drain(a) == b""  # no nonce, no proof: nothing for a prober to work on
    t.join(5)
    assert got
    a.close()


@pytest.mark.parametrize("retarget", [None, 2])
def test_a_connection_relayed_to_another_worker_is_refused(retarget):
    """A dialler for worker 3 relayed to worker 2's listener: as it is, worker 2 refuses the
    hello (not for it); with the target rewritten, the dialler refuses worker 2's proof."""
    srv = socket.create_server(("127.0.0.1", 0))
    got = {}

    def listen():
        conn = srv.accept()[0]
        try:
            got["l"] = channel.accept(conn, KEY, 2, 5.0)
        except Refused as e:
            got["l"] = e
            conn.close()

    t = threading.Thread(target=listen)
    t.start()
    relay = Relay(srv.getsockname()[:2], retarget)
    with pytest.raises(Refused, match="handshake"):
        channel.dial(relay.address, KEY, b"D", 3)
    t.join(5)
    assert isinstance(got["l"], Refused)
    relay.close(), srv.close()


# ------------------------------------------------------------------ frames
def test_every_altered_bit_is_refused():
    tx, rx = _pair()
    frame = _raw(tx.pack({"op": "add", "args": [1, 2.5, None], "v": np.arange(3)}))
    kinds = set()
    for bit in range(8 * len(frame)):
        bad = bytearray(frame)
        bad[bit // 8] ^= 1 << (bit % 8)
        kind = _outcome(rx, bad)
        assert kind != "taken", f"bit {bit} flipped went through"
        kinds.add(kind)
    assert {"mac", "sequence"} <= kinds
    big = _raw(tx.pack(np.arange(5000.0)))  # a frame with a raw buffer: flips at random
    rng = np.random.default_rng(0)
    for bit in rng.integers(0, 8 * len(big), 300):
        bad = bytearray(big)
        bad[bit // 8] ^= 1 << (bit % 8)
        assert _outcome(rx, bad) != "taken"
    assert _outcome(rx, frame) == "taken" and _outcome(rx, big) == "taken"  # untouched


def test_reordered_and_replayed_frames_are_refused():
    tx, rx = _pair()
    f0, f1 = _raw(tx.pack("first")), _raw(tx.pack("second"))
    assert _outcome(rx, f1) == "sequence"  # reordered
    assert _outcome(rx, f0) == "taken" and _outcome(rx, f0) == "sequence"  # replayed
    assert _outcome(rx, f1) == "taken"
    tx.sock.sendall(f1)  # over the socket too: a replay ends the stream's reading
    with pytest.raises(Refused, match="sequence"):
        rx.recv()


def test_a_frame_from_another_connection_or_direction_fails_its_mac():
    tx1, rx1 = _pair()
    tx2, rx2 = _pair()  # same key, same worker, other nonces
    f = _raw(tx1.pack(Run(0, 1.0, [])))
    assert _outcome(rx2, f) == "mac"
    back = _raw(rx1.pack("an answer"))  # the listener's own frame reflected back to it
    assert _outcome(rx1, back) == "mac"
    assert _outcome(rx1, f) == "taken"


def test_a_frame_past_the_bounds_is_refused_before_allocation():
    tracemalloc.start()
    try:
        for head in (
            channel._HEAD.pack(0, channel.MAX_FRAME + 1, 0),
            channel._HEAD.pack(0, 0, channel.MAX_BUFFERS + 1),
            channel._HEAD.pack(0, 8, 2) + struct.pack("<2Q", 2**63, 2**63),
            channel._HEAD.pack(0, 0, 2) + struct.pack("<2Q", channel.MAX_FRAME, 1),
        ):
            tx, rx = _pair()
            tx.sock.sendall(head)
            tracemalloc.reset_peak()
            with pytest.raises(Refused, match="size"):
                rx.recv()
            assert tracemalloc.get_traced_memory()[1] < 256 << 10
            tx.close(), rx.close()
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("where", ["body", "buffer"])
def test_a_frame_that_announces_400_mib_and_sends_little_allocates_little(where):
    tx, rx = _pair()
    n, k, lens = (400 * MiB, 0, []) if where == "body" else (8, 1, [400 * MiB])
    tx.sock.sendall(channel._HEAD.pack(0, n, k) + struct.pack(f"<{k}Q", *lens) + b"x" * 10_000)
    tx.sock.shutdown(socket.SHUT_WR)
    tracemalloc.start()
    try:
        with pytest.raises(EOFError):
            rx.recv()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * channel.GROW + (256 << 10), peak  # not 400 MiB


# ------------------------------------------------------------------ the mailbox under attack
def test_a_dialler_tells_a_stranger_a_hello_and_nothing_that_authenticates(box):
    """Every way the session dials a mailbox (an abort, the driver's wire, a peer's partial),
    pointed at a stranger: it gets the protocol's magic, the role, the worker number and a
    fresh nonce, never the key; each hello replayed to the real worker 3 is refused there."""
    imp = Impostor()
    abort_all({3: imp.address}, KEY, 0, 5)
    wire = Wire(KEY)
    wire.set_addrs({3: imp.address})
    assert wire.send(3, 0, [], 0, 5.0) is None  # refused: the batch goes through Ray
    peer = Mailbox("127.0.0.1", 0)
    peer.set_peers({3: imp.address}, KEY)
    peer.send(3, MailTag(0, 1, 0, 0, 1), [np.arange(3.0)])
    assert until(lambda: len(imp.got) == 3)
    assert wire.counts["handshakes_refused"] == 1 and peer.counts()["handshakes_refused"] == 1
    roles = []
    for got in imp.got:
        assert len(got) == HELLO and KEY not in got  # nothing after the stranger's answer
        magic, role, target, nonce = channel._HELLO.unpack(got)
        assert magic == MAGIC and target == 3
        roles.append(role)
        s = socket.create_connection(box.address)
        s.sendall(got)  # replayed to the real worker 3 ...
        assert len(_recv_n(s, 64)) == 64
        s.sendall(nonce)  # ... which wants a proof over its own fresh nonce
        assert drain(s) == b""
        s.close()
    assert sorted(roles) == [b"D", b"D", b"P"]
    assert len({g[-32:] for g in imp.got}) == 3  # fresh nonces
    assert until(lambda: box.counts()["handshakes_refused"] == 3)
    assert box.ran == [] and box.pending() == 0
    wire.close(), peer.close(), imp.srv.close()


def _recv_n(s, n):
    s.settimeout(5)
    return channel._recv_exact(s, n)


def test_a_captured_session_replays_nowhere(box):
    """A batch the driver's wire sent through an eavesdropper runs once: its bytes replayed on
    a new connection fail the handshake, its frame injected again into the same stream
    fails the sequence number, and sent on a new authenticated connection fails the MAC."""
    relay = Relay(box.address)
    wire = Wire(KEY)
    wire.set_addrs({3: relay.address})
    r, _ = wire.send(3, 7, [], 0, 5.0)
    wire.wait([r], 5.0)
    assert wire.value(r) == [["ran", 7]] and box.ran == [7]
    captured = bytes(relay.sent)
    frame = captured[HELLO + 32 :]  # after the hello and the proof
    s = socket.create_connection(box.address)
    s.sendall(captured)
    drain(s)
    s.close()
    assert until(lambda: box.counts()["handshakes_refused"] == 1)
    relay.inject(frame)  # the same frame again, in the same stream
    assert until(lambda: box.counts()["frames_refused"] == 1)
    ch = channel.dial(box.address, KEY, b"D", 3)
    ch.sock.sendall(frame)
    assert ch.sock.recv(1) == b""  # refused: closed
    assert until(lambda: box.counts()["frames_refused"] == 2)
    assert box.ran == [7]
    wire.close(), ch.close(), relay.close()


def test_idle_connections_are_capped_then_dropped(monkeypatch):
    monkeypatch.setattr(channel, "HANDSHAKE_S", 1.5)
    base = threading.active_count()
    b = Mailbox("127.0.0.1", 0)
    b.set_peers({}, KEY)
    try:
        t0, peak, socks = time.monotonic(), 0, []
        for _ in range(300):
            socks.append(socket.create_connection(b.address))
            peak = max(peak, threading.active_count())
        assert until(lambda: sum(b.counts().values()) >= 300 - mailbox.MAX_PENDING, 3.0)
        early = b.counts()
        peak = max(peak, threading.active_count())
        assert peak <= base + 1 + mailbox.MAX_PENDING  # the accept loop, the held ones
        if time.monotonic() - t0 < channel.HANDSHAKE_S:  # (none timed out yet)
            assert early["busy_refused"] == 300 - mailbox.MAX_PENDING
        assert until(lambda: sum(b.counts().values()) == 300, channel.HANDSHAKE_S + 5)
        assert b.counts()["handshakes_refused"] >= mailbox.MAX_PENDING - 1
        for s in socks:  # every one was closed by the mailbox
            assert drain(s, 1.0) == b""
            s.close()
        assert until(lambda: threading.active_count() <= base + 1)
        ch = channel.dial(b.address, KEY, b"P", 0)  # still serving
        ch.send(Deliver(MailTag(0, 1, 0, 0, 1), ["ok"]))
        assert b.take(MailTag(0, 1, 0, 0, 1), 5.0) == ["ok"]
        ch.close()
    finally:
        b.close()


def test_a_trickling_handshake_is_dropped_at_its_deadline(monkeypatch, box):
    """A byte now and then keeps no handshake alive past HANDSHAKE_S (the bound is on the
    whole handshake, not on each read)."""
    monkeypatch.setattr(channel, "HANDSHAKE_S", 0.6)
    s = socket.create_connection(box.address)
    t0 = time.monotonic()
    with pytest.raises(OSError):
        for byte in channel._HELLO.pack(MAGIC, b"D", 3, os.urandom(32)):
            s.send(bytes([byte]))
            time.sleep(0.1)  # 45 bytes: 4.5 s if each read had its own bound
    assert time.monotonic() - t0 < 3
    assert box.counts()["handshakes_refused"] == 1
    s.close()


_EMFILE_CHILD = """
import os, resource, sys, time
from sharded.runtime.net.mailbox import Mailbox
box = Mailbox("127.0.0.1", 0)
box.set_peers({}, bytes(range(32)))
box.runner = lambda after, timeout, cmds: [["served", after]]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
top = max(int(f) for f in os.listdir("/proc/self/fd"))
resource.setrlimit(resource.RLIMIT_NOFILE, (top + 1, hard))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
print(box.address[1], flush=True)
sys.stdin.readline()  # the parent dialled: once accept() failed for it, let descriptors go
deadline = time.monotonic() + 10
while box.counts()["accept_errors"] < 1 and time.monotonic() < deadline:
    time.sleep(0.01)
for fd in held:
    os.close(fd)
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
sys.stdin.readline()
print(box.counts()["accept_errors"], flush=True)
"""


def test_the_accept_loop_outlives_running_out_of_descriptors():
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.Popen(
        [sys.executable, "-c", _EMFILE_CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        port = int(p.stdout.readline())
        got = {}

        def dial():
            try:
                ch = channel.dial(("127.0.0.1", port), KEY, b"D", 0, 10.0)
                ch.send(Run(5, 1.0, []))
                got["answer"] = ch.recv()
                ch.close()
            except Exception as e:
                got["answer"] = e

        t = threading.Thread(target=dial)
        t.start()
        p.stdin.write("free\n")  # (the child frees descriptors once accept() failed)
        p.stdin.flush()
        t.join(15)
        p.stdin.write("done\n")
        p.stdin.flush()
        errors = int(p.stdout.readline())
    finally:
        p.kill()
        p.wait()
    assert got["answer"] == [["served", 5]]
    assert errors >= 1


def test_a_large_announcement_costs_a_mailbox_little(box):
    """Unauthenticated, a 400 MiB frame head is not even read; authenticated, past MAX_FRAME
    it is refused at once, and under it with no body it costs about GROW, not 400 MiB."""
    tracemalloc.start()
    try:
        s = socket.create_connection(box.address)  # the old protocol's token and head
        s.sendall(os.urandom(16) + struct.pack("<QI", 400 * MiB, 0))
        s.shutdown(socket.SHUT_WR)
        drain(s)
        s.close()
        assert until(lambda: box.counts()["handshakes_refused"] == 1)
        s = socket.create_connection(box.address)  # a hello not of this protocol, and a head
        bad = channel._HELLO.pack(b"sharded0", b"D", 3, os.urandom(32))
        s.sendall(bad + channel._HEAD.pack(0, 400 * MiB, 0) + b"x" * 4096)
        s.settimeout(5)
        with pytest.raises(ConnectionResetError):  # closed with the head unread: a reset
            s.recv(1)
        s.close()
        assert until(lambda: box.counts()["handshakes_refused"] == 2)
        ch = channel.dial(box.address, KEY, b"P", 3)
        ch.sock.sendall(channel._HEAD.pack(0, channel.MAX_FRAME + 1, 0))
        assert drain(ch.sock) == b""
        assert until(lambda: box.counts()["frames_refused"] == 1)
        ch.close()
        ch = channel.dial(box.address, KEY, b"P", 3)
        before = tracemalloc.get_traced_memory()[0]
        ch.sock.sendall(channel._HEAD.pack(0, 400 * MiB, 0) + b"x" * 1000)
        time.sleep(0.3)
        assert tracemalloc.get_traced_memory()[0] - before < 2 * channel.GROW + (256 << 10)
        ch.close()
        assert tracemalloc.get_traced_memory()[1] < 8 * MiB
    finally:
        tracemalloc.stop()


def test_a_deliver_under_a_tag_that_is_not_a_mailtag_is_refused(box):
    """A value under anything but a MailTag would break every later expire of the box."""
    for tag in (5, ("c", 1, 0, 0, 1), MailTag(0, "x", 0, 0, 1)):
        ch = channel.dial(box.address, KEY, b"P", 3)
        ch.send(Deliver(tag, [1]))
        assert drain(ch.sock) == b""
        ch.close()
    assert until(lambda: box.counts()["frames_refused"] == 3)
    assert box.pending() == 0
    box.expire(0, 10)
    ch = channel.dial(box.address, KEY, b"P", 3)
    ch.send(Deliver(MailTag(0, 11, 0, 0, 1), [2]))
    assert box.take(MailTag(0, 11, 0, 0, 1), 5.0) == [2]
    ch.close()
