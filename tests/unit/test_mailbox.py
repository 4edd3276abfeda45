"""The mailbox trees' partials travel by (sharded.runtime.net.mailbox): delivery by tag, the
session key, aborts and bounds. Real sockets on loopback; no Ray."""

import socket
import threading
import time

import numpy as np
import pytest

from sharded.runtime.commands import TRANSFER
from sharded.runtime.commands import MailTag as T
from sharded.runtime.net.mailbox import MailAborted, Mailbox, abort_all

KEY = b"0123456789abcdef" * 2


@pytest.fixture()
def pair():
    a, b = Mailbox("127.0.0.1", 0), Mailbox("127.0.0.1", 1)
    peers = {0: a.address, 1: b.address}
    a.set_peers(peers, KEY)
    b.set_peers(peers, KEY)
    yield a, b
    a.close()
    b.close()


def test_values_arrive_by_tag_in_any_order(pair):
    a, b = pair
    x = np.arange(5.0)
    a.send(1, T(0, 1, 1, 0, 2), [x * 2])
    a.send(1, T(0, 1, 1, 0, 1), [x])
    got1 = b.take(T(0, 1, 1, 0, 1), 5.0)
    got2 = b.take(T(0, 1, 1, 0, 2), 5.0)
    np.testing.assert_array_equal(got1[0], x)
    np.testing.assert_array_equal(got2[0], x * 2)
    assert b.pending() == 0


def test_a_take_waits_for_a_late_value(pair):
    a, b = pair
    threading.Timer(0.2, a.send, args=(1, T(0, 3, 1, 0, 1), ["late"])).start()
    t0 = time.monotonic()
    assert b.take(T(0, 3, 1, 0, 1), 5.0) == ["late"]
    assert time.monotonic() - t0 >= 0.15


def test_a_take_is_bounded(pair):
    _, b = pair
    with pytest.raises(MailAborted, match="timed out"):
        b.take(T(0, 9, 1, 0, 1), 0.2)


def test_abort_ends_waiting_and_later_takes_of_old_shipments(pair):
    a, b = pair
    out = []

    def wait():
        try:
            b.take(T(0, 4, 1, 0, 1), 30.0)
        except MailAborted as e:
            out.append(str(e))

    t = threading.Thread(target=wait)
    t.start()
    time.sleep(0.1)
    abort_all({0: a.address, 1: b.address}, KEY, 0, 5)
    t.join(5)
    assert out and "aborted" in out[0]
    with pytest.raises(MailAborted, match="aborted"):  # an abort may overtake the batch
        b.take(T(0, 5, 1, 0, 1), 30.0)
    a.send(1, T(0, 6, 1, 0, 1), [1])  # newer shipments are untouched
    assert b.take(T(0, 6, 1, 0, 1), 5.0) == [1]
    a.send(1, T(7, 2, 1, 0, 1), [2])  # and so are other clients'
    assert b.take(T(7, 2, 1, 0, 1), 5.0) == [2]


def test_expire_forgets_older_shipments_only(pair):
    a, b = pair
    for ship in (1, 2, 3):
        a.send(1, T(0, ship, 1, 0, 1), [ship])
    a.send(1, T(1, 1, 1, 0, 1), ["other client"])
    deadline = time.monotonic() + 5
    while b.pending() < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    b.expire(0, 3)
    assert b.pending() == 2
    assert b.take(T(0, 3, 1, 0, 1), 5.0) == [3]


def _arrived(box, n):
    deadline = time.monotonic() + 5
    while box.pending() < n and time.monotonic() < deadline:
        time.sleep(0.01)
    assert box.pending() == n


def test_a_post_outlives_a_later_shipments_expiry_but_not_an_abort(pair):
    a, b = pair
    post = T(0, 2, TRANSFER, 0, 0)  # (its taker's batch may run after shipment 3's trees)
    a.send(1, post, ["posted"])
    _arrived(b, 1)
    b.expire(0, 3)
    assert b.take(post, 5.0) == ["posted"]
    a.send(1, T(0, 4, TRANSFER, 1, 0), ["dropped"])
    a.send(1, T(0, 6, TRANSFER, 0, 0), ["kept"])  # (a later shipment's)
    _arrived(b, 2)
    b.abort(0, 5)  # a lost worker: the taker's batch is replayed, its post is not taken
    assert b.pending() == 1
    assert b.take(T(0, 6, TRANSFER, 0, 0), 5.0) == ["kept"]


def test_a_connection_without_the_handshake_is_closed_unread(pair):
    _, b = pair
    s = socket.create_connection(tuple(b.address))
    s.sendall(b"x" * 64)  # (a whole hello's worth, not of this protocol)
    s.settimeout(5)
    try:  # closed by the mailbox (with the bytes unread: a reset)
        assert s.recv(1) == b""
    except ConnectionResetError:
        pass
    s.close()
    assert b.pending() == 0


def test_a_replaced_peer_is_dialled_again(pair):
    a, b = pair
    a.send(1, T(0, 1, 1, 0, 1), [1])
    assert b.take(T(0, 1, 1, 0, 1), 5.0) == [1]
    c = Mailbox("127.0.0.1", 1)
    try:
        c.set_peers({0: a.address, 1: c.address}, KEY)
        a.set_peers({0: a.address, 1: c.address}, KEY)  # worker 1 was replaced by c
        a.send(1, T(0, 2, 1, 0, 1), [2])
        assert c.take(T(0, 2, 1, 0, 1), 5.0) == [2]
    finally:
        c.close()


def test_sending_to_a_gone_peer_is_not_an_error(pair):
    a, b = pair
    b.close()
    a.send(1, T(0, 1, 1, 0, 1), [1])  # the driver's recovery handles the loss


def test_both_ends_of_a_connection_send_at_once():
    """TCP_NODELAY on the accepted side too: a worker that answers two of the driver's batches
    in a row must not hold the second answer until the first is acknowledged (Nagle's rule
    against the peer's delayed ACK: ~40 ms per answer)."""
    from sharded.runtime.net import channel

    srv = socket.create_server(("127.0.0.1", 0))
    got = {}

    def serve():
        conn, _ = srv.accept()
        got["ch"], _ = channel.accept(conn, KEY, 5)

    t = threading.Thread(target=serve)
    t.start()
    dialled = channel.dial(srv.getsockname(), KEY, b"D", 5)
    t.join(10)
    try:
        for ch in (dialled, got["ch"]):
            assert ch.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        dialled.sock.close()
        got["ch"].sock.close()
        srv.close()
