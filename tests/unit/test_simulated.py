"""The simulated executor (many workers as threads of local host processes, over the real
wire, mailboxes and relays) and its wire relays (sharded.runtime.net.fanout)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import sharded as st
from sharded.errors import WorkerLost
from sharded.runtime.commands import Export, Fan, Group, LayoutSync, Mod, Run
from sharded.runtime.driver import simulated
from sharded.runtime.net import channel
from sharded.runtime.net.fanout import RELAY_BASE, FanOut
from sharded.runtime.net.mailbox import Mailbox
from sharded.runtime.net.wire import Wire
from sharded.runtime.worker.simhost import SimWorker
from sharded.runtime.worker.store import is_failed

KEY = b"k" * 32


def _gone(pid) -> bool:
    """Whether process ``pid`` ended (a zombie nobody reaped yet counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.fixture
def sim():
    """Starts a simulated session of ``n`` workers; the package's session comes back after."""
    st.shutdown()
    yield lambda n: st.init(executor="simulated", num_workers=n).executor
    st.shutdown()
    st.init(executor="local", num_workers=3, min_shard_bytes=0)


def _check_math(n):
    a = np.arange(n * 6, dtype=np.float64).reshape(n * 2, 3) / 7
    x = st.tensor(a, shards=n)
    y = (x * 2.0 + 1.0) / 3.0 - x
    np.testing.assert_allclose(y.numpy(), (a * 2 + 1) / 3 - a)
    assert x.sum().item() == pytest.approx(a.sum())
    assert y.sum().item() == pytest.approx(((a * 2 + 1) / 3 - a).sum())
    np.testing.assert_allclose(x.sum(0).numpy(), a.sum(0))
    np.testing.assert_allclose((x.T @ x).numpy(), a.T @ a)  # (exports inline by the wire)


def test_relayed_session_computes_like_numpy(sim):
    """40 workers: past 32 the driver talks to wire relays (one Fan per flush), which
    compose the workers' batches; trees combine worker to worker by mailbox."""
    ex = sim(40)
    assert ex.kind == "simulated" and ex.num_workers == 40
    assert ex._fan and sorted(ex._wire.addrs) == [RELAY_BASE, RELAY_BASE + 1]
    _check_math(40)
    assert ex.recovery_stats() == {"enabled": False, "reason": simulated.NO_RECOVERY}


def test_relays_of_relays_and_direct_sessions(sim, monkeypatch):
    """A second level of relays (one frame per flush for the driver) and a session small
    enough for the driver to reach every worker itself compute the same."""
    monkeypatch.setattr(simulated, "RELAY2_MIN", 1)
    ex = sim(70)  # 3 relays of workers under one relay of relays
    assert list(ex._wire.addrs) == [RELAY_BASE + 3]
    _check_math(70)
    st.shutdown()
    ex = sim(3)
    assert not ex._fan and sorted(ex._wire.addrs) == [0, 1, 2]
    _check_math(3)


def test_a_lost_host_raises_worker_lost_and_no_host_outlives_the_session(sim, monkeypatch):
    monkeypatch.setenv("SHARDED_SIM_HOSTS", "2")
    ex = sim(40)
    pids = ex.hosts()
    assert len(pids) == 2
    x = st.ones(40 * 4, shards=40)
    assert x.sum().item() == 160
    os.kill(pids[1], signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(WorkerLost, match="sharded-sim-worker-39"):
        (x + 1).sum().item()
    assert time.monotonic() - t0 < 10
    st.shutdown()
    assert all(_gone(p) for p in pids)


def test_hosts_end_with_a_driver_that_dies_without_closing():
    """A driver killed mid-session closes the hosts' stdin pipes: they exit at once."""
    code = (
        "import os, sharded as st\n"
        "ex = st.init(executor='simulated', num_workers=40).executor\n"
        "print(*ex.hosts(), flush=True)\n"
        "os._exit(0)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    pids = [int(v) for v in p.stdout.split()]
    assert p.returncode == 0 and pids
    assert _until(lambda: all(_gone(pid) for pid in pids))


def test_bad_arguments_are_refused():
    with pytest.raises(st.ShardingError, match="num_workers must be a positive int, got 0"):
        simulated.SimulatedExecutor.open(num_workers=0)
    with pytest.raises(st.ArgumentError, match="namespace needs executor='ray'"):
        simulated.SimulatedExecutor.open(num_workers=2, namespace="x")


@pytest.fixture
def relay():
    """Two workers behind one relay, all in this process (the real Mailbox and FanOut)."""
    boxes = []
    for w in (0, 1):
        box = Mailbox("127.0.0.1", w)
        box.runner = SimWorker(w).wire_run
        boxes.append(box)
    peers = {w: b.address for w, b in enumerate(boxes)}
    for b in boxes:
        b.set_peers(peers, KEY)
    rbox = Mailbox("127.0.0.1", RELAY_BASE)
    fan = FanOut(RELAY_BASE, KEY, peers)
    rbox.set_peers({}, KEY)
    rbox.runner = fan.run
    yield rbox
    for b in [*boxes, rbox]:
        b.close()
    fan.close()


def _fan(out):
    """A Fan filling key ``out + s`` of both workers' shards with 2.0 and returning worker
    1's."""
    params = {"shape": (2,), "value": 2.0, "dtype": "float64"}
    bc = [Group("full", Mod(2, 2), (), out, params, None, False)]
    return Fan(bc, (0, 1), {1: [LayoutSync(1), Export(out + 1, None)]}, None, {1: 1})


def _until(cond, s=5.0):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > s:
            return False
        time.sleep(0.01)
    return True


def test_a_relay_answers_once_and_refuses_strangers(relay):
    wire = Wire(KEY)
    wire.set_addrs({RELAY_BASE: relay.address})
    r, parts = wire.send(RELAY_BASE, 0, [_fan(10)], 1, 5.0)
    wire.wait([r], 5.0)
    assert wire.value(r) == []
    np.testing.assert_array_equal(wire.value(parts[0]), [2.0, 2.0])
    # a wrong key: the handshake fails, nothing runs
    with pytest.raises((channel.Refused, EOFError, OSError)):
        channel.dial(relay.address, b"x" * 32, b"D", RELAY_BASE)
    assert _until(lambda: relay.counts()["handshakes_refused"] == 1)
    # no handshake at all: a frame straight away is refused
    s = socket.create_connection(relay.address)
    s.sendall(b"\0" * 200)
    s.settimeout(5)
    with pytest.raises(ConnectionResetError):  # (closed with bytes unread: a reset)
        s.recv(1)
    s.close()
    assert _until(lambda: relay.counts()["handshakes_refused"] == 2)
    # authenticated, but the frame's MAC is altered: refused, the connection closed
    ch = channel.dial(relay.address, KEY, b"D", RELAY_BASE)
    frame = bytearray(b"".join(bytes(p) for p in ch.pack(Run(0, 5.0, [_fan(20)]))))
    frame[-1] ^= 1
    ch.sock.sendall(frame)
    ch.sock.settimeout(5)
    assert ch.sock.recv(1) == b""
    assert _until(lambda: relay.counts()["frames_refused"] == 1)
    # a peer worker's role may not send the relay a batch
    ch = channel.dial(relay.address, KEY, b"P", RELAY_BASE)
    ch.send(Run(0, 5.0, [_fan(30)]))
    ch.sock.settimeout(5)
    assert ch.sock.recv(1) == b""
    assert _until(lambda: relay.counts()["frames_refused"] == 2)
    # none of them ran (keys 21 and 31 were never made); the driver's line still works
    missing = Fan([], (1,), {1: [Export(21, None), Export(31, None)]}, None, {1: 2})
    r, parts = wire.send(RELAY_BASE, 0, [missing], 2, 5.0)
    wire.wait([r], 5.0)
    assert [is_failed(wire.value(p)) for p in parts] == [True, True]
    wire.close()


def test_a_relay_takes_only_fan_records(relay):
    wire = Wire(KEY)
    wire.set_addrs({RELAY_BASE: relay.address})
    r, _ = wire.send(RELAY_BASE, 0, [], 0, 5.0)
    wire.wait([r], 5.0)
    assert wire.value(r)[0]["cause"] == "a relay takes one Fan record per frame"
    wire.close()


def test_bench_scaling_simulated_prints_the_table(sim, capsys):
    from sharded.tools import bench_scaling

    with pytest.raises(SystemExit):
        bench_scaling.main(["--simulated", "0"])
    assert "--simulated needs a positive worker count, got 0" in capsys.readouterr().err
    assert (
        bench_scaling.main(["--simulated", "3", "--ops", "4", "--reads", "1", "--repeat", "1"]) == 0
    )
    out = capsys.readouterr().out
    assert "simulated executor: 2..3 workers" in out and "op cpu at 3 workers / at 2" in out
