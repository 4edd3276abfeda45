"""The driver's wire (sharded.runtime.net.wire): batches to a mailbox's runner and their answers,
in order, large arrays out of band, and every way a wait ends (answer, loss, bound, a wrong
key). Real sockets on loopback; no Ray."""

import socket
import threading
import time

import numpy as np
import pytest

from sharded.runtime.driver import recovery
from sharded.runtime.net import channel
from sharded.runtime.net.mailbox import Mailbox
from sharded.runtime.net.wire import Wire, WireLost
from tests.support.nettools import check_answers_in_order, echo, send_cut_answers, until

KEY = b"0123456789abcdef" * 2


@pytest.fixture()
def box():
    b = Mailbox("127.0.0.1", 0)
    b.set_peers({}, KEY)
    yield b
    b.close()


def _wire(box, key=KEY):
    w = Wire(key)
    w.set_addrs({0: box.address})
    return w


def test_answers_come_in_order_with_their_exports(box):
    box.runner = echo
    wire = _wire(box)
    big = np.arange(300_000.0)  # 2.4 MB: out of band
    check_answers_in_order(wire, big, 5, 5.0)
    wire.close()


def test_ready_does_not_wait(box):
    go = threading.Event()
    box.runner = lambda after, timeout, cmds: (go.wait(5), [])[1]
    wire = _wire(box)
    r, _ = wire.send(0, 0, [], 0, 5.0)
    assert wire.ready([r]) == [False] and wire.busy(0)
    go.set()
    wire.wait([r], 5.0)
    assert wire.ready([r]) == [True] and wire.value(r) == []
    wire.close()


def test_a_connection_that_ends_is_a_loss(box):
    def crash(after, timeout, cmds):
        raise RuntimeError("the worker died")  # the mailbox closes the connection

    box.runner = crash
    wire = _wire(box)
    r, (p,) = wire.send(0, 0, [], 1, 5.0)
    t0 = time.monotonic()
    with pytest.raises(WireLost, match="worker 0"):
        wire.wait([p], 30.0)
    assert time.monotonic() - t0 < 5
    with pytest.raises(recovery.Lost):
        wire.value(r)
    assert not wire.busy()


def test_a_loss_elsewhere_ends_a_wait_or_is_told(box):
    """A wait for worker 1 hears of worker 0's loss (it may owe worker 1 a partial); with
    ``on_loss`` the wait is told and goes on."""
    other = Mailbox("127.0.0.1", 1)
    other.set_peers({}, KEY)
    go = threading.Event()
    other.runner = lambda after, timeout, cmds: (go.wait(5), [])[1]
    box.runner = lambda after, timeout, cmds: 1 / 0
    wire = Wire(KEY)
    wire.set_addrs({0: box.address, 1: other.address})
    wire.send(0, 0, [], 0, 5.0)
    r1, _ = wire.send(1, 0, [], 0, 5.0)
    t0 = time.monotonic()
    with pytest.raises(WireLost, match="worker 0"):
        wire.wait([r1], 5.0)
    assert time.monotonic() - t0 < 0.5  # the hang-up wakes the wait (not its 1 s slice)
    r2, _ = wire.send(0, 0, [], 0, 5.0)  # (lost again: its connection fails too)
    told = []
    threading.Timer(0.3, go.set).start()
    wire.wait([r1], 5.0, on_loss=lambda: told.append(1))
    assert told and wire.value(r1) == []
    wire.close()
    other.close()


def test_check_raises_a_loss_without_waiting(box):
    """``check`` (called between the slices of a wait on Ray's results) takes what came and
    raises the end of a connection that owes an answer; it waits for nothing."""
    go = threading.Event()
    box.runner = lambda after, timeout, cmds: (go.wait(5), [])[1]
    wire = _wire(box)
    r, _ = wire.send(0, 0, [], 0, 5.0)
    t0 = time.monotonic()
    wire.check()  # still running: nothing to raise, and no wait
    assert time.monotonic() - t0 < 0.5
    go.set()
    assert until(lambda: (wire.check(), wire.ready([r]))[1] == [True], 5.0)
    box.runner = lambda after, timeout, cmds: 1 / 0  # the mailbox closes the connection
    wire.send(0, 0, [], 0, 5.0)
    with pytest.raises(WireLost, match="worker 0"):
        until(lambda: wire.check(), 5.0)
    wire.check()  # told once
    wire.close()


def test_a_silent_worker_makes_the_wait_late(box):
    box.runner = lambda after, timeout, cmds: (time.sleep(3), [])[1]
    wire = _wire(box)
    r, _ = wire.send(0, 0, [], 0, 5.0)
    checks = []
    with pytest.raises(recovery.Late) as e:
        wire.wait([r], 1.5, check=lambda: checks.append(1))
    assert e.value.workers == [0] and checks  # the check ran while nothing came
    wire.wait([r], 5.0)  # it answers later
    wire.close()


def test_a_wrong_key_is_refused_and_nothing_runs(box):
    ran = []
    box.runner = lambda after, timeout, cmds: (ran.append(1), [])[1]
    wire = _wire(box, key=b"x" * 32)
    assert wire.send(0, 0, [], 0, 5.0) is None  # (the caller sends it through Ray)
    assert not ran and not wire.busy()
    assert wire.counts["handshakes_refused"] == 1
    until(lambda: box.counts()["handshakes_refused"] >= 1, 5.0)  # (counted on its own thread)
    assert box.counts()["handshakes_refused"] == 1


def test_commands_that_are_not_data_are_left_to_ray(box):
    wire = _wire(box)
    assert wire.send(0, 0, [lambda: 1], 0, 5.0) is None
    assert not wire.busy()


def test_answers_cut_and_joined_in_any_way_arrive_whole():
    """Answers that share one segment, a large one that trickles in, one cut inside its
    head: the wire takes each whole, in order (a real socket whose peer sends the bytes so)."""
    big = np.arange(100_000.0)  # 800 KB: out of band, read straight into place
    answers = [([["e", i]], big * i if i == 3 else np.full(2, i)) for i in range(5)]
    srv = socket.create_server(("127.0.0.1", 0))

    def peer():
        conn, _ = srv.accept()
        ch, _ = channel.accept(conn, KEY, 0)
        send_cut_answers(ch, answers)  # (answers 0 to 2 in one segment)
        time.sleep(1)
        conn.close()

    threading.Thread(target=peer, daemon=True).start()
    wire = Wire(KEY)
    wire.set_addrs({0: srv.getsockname()[:2]})
    sent = [wire.send(0, i, [], 1, 5.0) for i in range(5)]
    wire.wait([p for _, (p,) in sent], 5.0)
    for i, (r, (p,)) in enumerate(sent):
        assert wire.value(r) == [["e", i]]
        np.testing.assert_array_equal(wire.value(p), answers[i][1])
    assert wire.value(sent[3][1][0]).flags.writeable  # (a user may write into a read)
    wire.close()
    srv.close()
