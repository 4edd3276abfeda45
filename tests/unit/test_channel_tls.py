"""TLS on sharded's sockets (sharded.runtime.net.tls): channels, mailboxes and the driver's
wire inside TLS 1.3 with a certificate made for the session. What travels is not readable on
the way, a peer without the session's certificate (or without TLS) is refused both ways, and
the non-blocking wire takes answers cut in TLS records of any size whole and in order, also
when decrypted bytes wait in the TLS socket while the socket itself shows nothing. Real
sockets on loopback, real certificates (the ``cryptography`` package and the ``openssl``
command); no Ray."""

import os
import shutil
import socket
import ssl
import stat
import sys
import threading
import time

import numpy as np
import pytest

import sharded as st
from sharded.errors import ArgumentError, BackendUnavailable
from sharded.runtime.commands import MailTag
from sharded.runtime.net import channel, tls
from sharded.runtime.net.channel import Refused
from sharded.runtime.net.mailbox import Mailbox, abort_all
from sharded.runtime.net.wire import Wire
from tests.support.nettools import Tap, check_answers_in_order, echo, send_cut_answers, until

KEY = bytes(range(32))
MARK = b"\x8f\x13sharded-marker\x13\x8f" * 4


@pytest.fixture(scope="module")
def session():
    return tls.Tls.from_pem(*tls.session_cert())


@pytest.fixture(scope="module")
def other():
    """Another session's certificate (the same channel key: only TLS tells them apart)."""
    return tls.Tls.from_pem(*tls.session_cert())


def _box(ident, t, peers=None):
    b = Mailbox("127.0.0.1", ident)
    b.set_peers(peers or {}, KEY, t)
    return b


# ------------------------------------------------------------------ channels and mailboxes
def test_a_channel_round_trip_runs_tls13_both_ways(session):
    srv = socket.create_server(("127.0.0.1", 0))
    got = {}

    def listen():
        got["l"] = channel.accept(srv.accept()[0], KEY, 3, tls=session)

    t = threading.Thread(target=listen)
    t.start()
    d = channel.dial(srv.getsockname()[:2], KEY, b"P", 3, tls=session)
    t.join(10)
    listener, role = got["l"]
    assert role == b"P"
    for ch in (d, listener):
        assert isinstance(ch.sock, ssl.SSLSocket) and ch.sock.version() == "TLSv1.3"
        assert ch.sock.getpeercert(binary_form=True) == ssl.PEM_cert_to_DER_cert(
            session.cert.decode()
        )
    big = np.arange(1 << 18, dtype=np.float64)  # 2 MiB: many records
    d.send({"x": 1, "v": big})
    out = listener.recv()
    assert out["x"] == 1 and np.array_equal(out["v"], big)
    listener.send([2.5, "back"])
    assert d.recv() == [2.5, "back"]
    d.close(), listener.close(), srv.close()


@pytest.mark.parametrize("plain", [False, True])
def test_nothing_readable_travels(session, plain):
    """A tap between two mailboxes sees the marker in the clear without TLS, never with it."""
    a, b = _box(0, None if plain else session), _box(1, None if plain else session)
    tap = Tap(b.address)
    a.set_peers({1: tap.address}, KEY, None if plain else session)
    a.send(1, MailTag("c", 1, 0, 0, 1), [MARK, np.frombuffer(MARK, np.uint8)])
    assert b.take(MailTag("c", 1, 0, 0, 1), 5.0)[0] == MARK
    assert len(tap.seen) > 2 * len(MARK)
    assert (MARK in tap.seen) == plain
    if not plain:
        assert tap.seen[0] == 0x16  # (a TLS handshake record comes first)
    a.close(), b.close(), tap.close()


def test_mailboxes_deliver_worker_to_worker_over_tls(session):
    a, b = _box(0, session), _box(1, session)
    peers = {0: a.address, 1: b.address}
    a.set_peers(peers, KEY, session), b.set_peers(peers, KEY, session)
    vals = [np.arange(300_000.0), 1.5]
    a.send(1, MailTag("c", 1, 0, 0, 1), vals)
    got = b.take(MailTag("c", 1, 0, 0, 1), 5.0)
    assert np.array_equal(got[0], vals[0]) and got[1] == 1.5
    abort_all({1: b.address}, KEY, "c", 1, session)  # (the driver's side, over TLS too)
    with pytest.raises(Exception, match="aborted"):
        b.take(MailTag("c", 1, 0, 0, 2), 5.0)
    assert a.counts()["handshakes_refused"] == b.counts()["handshakes_refused"] == 0
    a.close(), b.close()


def test_a_dialler_with_another_sessions_certificate_is_refused(session, other):
    ran = []
    box = _box(3, session)
    box.runner = lambda after, timeout, cmds: (ran.append(1), [])[1]
    with pytest.raises(Refused, match="TLS"):
        channel.dial(box.address, KEY, b"D", 3, tls=other)
    assert until(lambda: box.counts()["handshakes_refused"] == 1, 5.0)
    wire = Wire(KEY, other)  # the driver's wire: through Ray, not a lost worker
    wire.set_addrs({3: box.address})
    assert wire.send(3, 0, [], 0, 5.0) is None
    assert wire.counts["handshakes_refused"] == 1 and not wire.busy()
    assert until(lambda: box.counts()["handshakes_refused"] == 2, 5.0) and not ran
    wire.close(), box.close()


def test_a_listener_with_another_sessions_certificate_is_refused(session, other):
    box = _box(3, other)
    with pytest.raises(Refused, match="certificate verify failed"):
        channel.dial(box.address, KEY, b"D", 3, tls=session)
    box.close()


def test_plaintext_and_tls_do_not_meet(session):
    """A dialler without TLS at a TLS mailbox, and one with TLS at a plaintext mailbox: both
    refused, nothing runs, each mailbox counts it."""
    ran = []
    for box_tls, dial_tls in ((session, None), (None, session)):
        box = _box(3, box_tls)
        box.runner = lambda after, timeout, cmds: (ran.append(1), [])[1]
        with pytest.raises(OSError):  # (Refused, or the mailbox's reset)
            channel.dial(box.address, KEY, b"D", 3, tls=dial_tls)
        assert until(lambda b=box: b.counts()["handshakes_refused"] == 1, 5.0)
        box.close()
    assert not ran


def test_a_silent_peer_bounds_the_tls_handshake(session):
    srv = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel does), never answers
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        channel.dial(srv.getsockname()[:2], KEY, b"D", 0, 0.5, tls=session)
    assert time.monotonic() - t0 < 2
    srv.close()


# ------------------------------------------------------------------ the driver's wire
def test_wire_answers_come_in_order_over_tls(session):
    box = _box(0, session)
    box.runner = echo
    wire = Wire(KEY, session)
    wire.set_addrs({0: box.address})
    big = np.arange(1_000_000.0)  # 8 MB both ways: the sends wait for room, answers meanwhile
    check_answers_in_order(wire, big, 6, 10.0)
    assert isinstance(wire.conns[0], ssl.SSLSocket)
    wire.close(), box.close()


def test_wire_takes_answers_cut_in_records_of_any_size(session):
    """Answers sharing one record, a large one in 1000-byte records and then at once, and a
    record holding a large answer's last bytes with the whole next answer: the wire reads
    the large one's rest straight into place, the next answer stays decrypted in the TLS
    socket (which shows nothing readable), and the wait takes it at once."""
    big = np.arange(100_000.0)  # 800 KB: its rest read straight into place
    answers = [([["e", i]], big * i if i in (3, 5) else np.full(2, i)) for i in range(7)]
    srv = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def peer():
        conn, _ = srv.accept()
        ch, _ = channel.accept(conn, KEY, 0, tls=session)
        s = ch.sock
        raw = send_cut_answers(ch, answers)  # (answers 0 to 2 in one record)
        time.sleep(0.05)
        s.sendall(raw[5][:-1000])  # all but the end: the wire waits for it blocking
        time.sleep(0.3)
        s.sendall(raw[5][-1000:] + raw[6])  # one record: the end, and all of answer 6
        done.wait(10)
        s.close()

    threading.Thread(target=peer, daemon=True).start()
    wire = Wire(KEY, session)
    wire.set_addrs({0: srv.getsockname()[:2]})
    sent = [wire.send(0, i, [], 1, 5.0) for i in range(7)]
    wire.wait([p for _, (p,) in sent[:6]], 5.0)
    t0 = time.monotonic()
    wire.wait([sent[6][1][0]], 3.0)  # (answer 6 sits in the TLS socket's buffer)
    assert time.monotonic() - t0 < 0.5
    done.set()
    for i, (r, (p,)) in enumerate(sent):
        assert wire.value(r) == [["e", i]]
        np.testing.assert_array_equal(wire.value(p), answers[i][1])
    wire.close(), srv.close()


# ------------------------------------------------------------------ the certificate
def test_the_openssl_command_makes_a_working_certificate(session):
    exe = shutil.which("openssl")
    if exe is None:
        pytest.skip("no openssl command here")
    made = tls.Tls.from_pem(*tls._with_openssl(exe))
    box = _box(0, made)
    ch = channel.dial(box.address, KEY, b"P", 0, tls=made)
    assert ch.sock.version() == "TLSv1.3"
    ch.close()
    with pytest.raises(Refused):  # (and it is not the other session's)
        channel.dial(box.address, KEY, b"P", 0, tls=session)
    box.close()


def test_without_cryptography_nor_openssl_tls_is_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "cryptography", None)  # (import fails)
    if shutil.which("openssl"):
        assert tls.session_cert()[0].startswith(b"-----BEGIN CERTIFICATE-----")
    monkeypatch.setenv("PATH", "")
    with pytest.raises(BackendUnavailable, match="cryptography.*openssl"):
        tls.session_cert()


def test_the_key_pair_touches_disk_only_privately_and_briefly():
    cert, key = tls.session_cert()
    with tls._private_files(cert, key) as (c, k):
        d = os.path.dirname(c)
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
        assert {stat.S_IMODE(os.stat(p).st_mode) for p in (c, k)} == {0o600}
        with open(k, "rb") as f:
            assert f.read() == key
    assert not os.path.exists(d)


def test_init_takes_a_bool_or_the_environment(monkeypatch):
    st.shutdown()
    try:
        with pytest.raises(ArgumentError, match="tls must be a bool, got 'yes'"):
            st.init(executor="local", num_workers=1, tls="yes")
        monkeypatch.setenv("SHARDED_NET_TLS", "on")
        with pytest.raises(ArgumentError, match="SHARDED_NET_TLS must be 0 or 1, got 'on'"):
            st.init(executor="local", num_workers=1)
        monkeypatch.setenv("SHARDED_NET_TLS", "1")
        st.init(executor="local", num_workers=1)  # (no sockets: nothing to protect)
        assert st.tensor([1.0, 2.0]).sum().item() == 3.0
        st.init(tls=True)  # the live session has no sockets in the clear
    finally:  # the package's session again
        st.shutdown()
        monkeypatch.delenv("SHARDED_NET_TLS", raising=False)
        st.init(executor="local", num_workers=3, min_shard_bytes=0)
