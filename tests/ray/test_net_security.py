"""sharded's own sockets on the two-node Ray cluster, under attack: a process listening at a
lost worker's address learns no key and nothing that authenticates; a captured wire frame
sent again does not run again; the mailboxes listen on loopback when every worker is on the
driver's node; and a protocol fuzzer (tests/support/netfuzz.py) throwing over 10,000 random,
truncated, bit-flipped and oversized handshakes and frames at the live workers' mailboxes,
with and without the key, leaves every worker alive, small and holding exactly its data."""

import concurrent.futures
import os
import signal
import socket
import time

import numpy as np
import pytest
import ray

import sharded as st
from sharded.runtime.commands import Run
from sharded.runtime.driver import ray_executor, session
from sharded.runtime.net import channel, codec
from tests.support.netfuzz import Fuzzer
from tests.support.nettools import HELLO, Impostor, drain, until
from tests.support.raynet import own_session

SEED = 20261128
CASES = 20_000


def _ex():
    return session.current().executor


def _net():
    return st.stats()["net"]


def _dead(pid) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] in "ZX"
    except FileNotFoundError:
        return True


def test_a_lost_workers_address_learns_no_key():
    """Worker 0 is killed and a stranger listens at its mailbox's address while a read runs:
    the read is right (recovered), the driver dials nothing there, and whatever the stranger
    got (the hellos of the peers with a partial for worker 0) holds no key and is refused by
    worker 0's replacement."""
    ex = _ex()
    xn = np.arange(64.0) - 3.5
    x = st.from_numpy(xn, shards=4)
    assert x.sum().item() == xn.sum()  # (every connection is open)
    before = ex.recovery_stats()["count"]
    addr, pid = ex._mail_addrs[0], st.stats()["workers"][0]["pid"]
    # the peers forget their connections to worker 0 (a partial due there dials it anew)
    peers, key = dict(ex._mail_addrs), ex._mail_key
    for moved in ({**peers, 0: ("127.0.0.1", 9)}, peers):
        ray.get([a.mail_peers.remote(moved, key) for a in ex._actors])
    os.kill(pid, signal.SIGKILL)
    assert until(lambda: _dead(pid), every=0.02)
    imp = Impostor(addr, limit=10.0, wait=10.0)
    try:
        assert x.sum().item() == xn.sum()
        assert ex.recovery_stats()["count"] >= before + 1
        assert ex._mail_addrs[0] != tuple(addr) and ex._wire_ok()
        net0 = _net()["handshakes_refused"]
        assert imp.got  # (the children of worker 0 in the read's tree dialled it)
        for got in imp.got:
            assert ex._mail_key not in got and len(got) <= HELLO
            if len(got) < HELLO:
                continue
            magic, role, target, nonce = channel._HELLO.unpack(got)
            assert magic == channel.MAGIC and target == 0
            assert role == b"P"  # the driver never dials a lost worker's address
            s = socket.create_connection(ex._mail_addrs[0])  # worker 0's replacement
            s.sendall(got)
            s.recv(64)
            s.sendall(nonce)  # (no proof: the replayed hello was the stranger's)
            assert drain(s, 10.0) == b""
            s.close()
        n = sum(len(g) == HELLO for g in imp.got)
        assert until(lambda: _net()["handshakes_refused"] >= net0 + n, every=0.02)
    finally:
        imp.close()
    assert (x * 2).sum().item() == 2 * xn.sum()


def test_a_captured_wire_frame_sent_again_does_not_run_again(monkeypatch):
    """``z.add_(1); z.numpy()`` on worker 2, its wire frame captured as it leaves: sent on a
    new connection it fails the handshake, on a new authenticated connection the MAC, in the
    driver's own stream the sequence number; z is incremented once."""
    ex = _ex()
    z = st.from_numpy(np.zeros(8), layout=st.Layout(dim=0, shards=1, workers=(2,)))
    np.testing.assert_array_equal(z.numpy(), 0.0)
    ex._wire.drop(2, "a fresh connection for the test", lost=False)  # (frames from 0 again)
    sent, send = [], ex._wire._send
    monkeypatch.setattr(
        ex._wire, "_send", lambda w, s, f: (sent.append(b"".join(map(bytes, f))), send(w, s, f))
    )
    with ex._lock:  # (the flush timer waits: the add goes with the read, by wire)
        z.add_(1)
        np.testing.assert_array_equal(z.numpy(), 1.0)
    monkeypatch.undo()
    assert len(sent) == 1
    frame = sent[0]
    body = frame[channel._HEAD.size : channel._HEAD.size + channel._HEAD.unpack_from(frame)[1]]
    run = codec.decode(body)
    assert type(run) is Run and len(run.cmds) > 1  # the add and the gather
    net0, rec0 = _net(), ex.recovery_stats()["count"]
    addr = ex._mail_addrs[2]
    s = socket.create_connection(addr)  # no key: the handshake
    s.sendall(frame)
    assert drain(s, 10.0) == b""
    s.close()
    ch = channel.dial(addr, ex._mail_key, b"D", 2)  # the key, but another connection: the MAC
    ch.sock.sendall(frame)
    assert drain(ch.sock, 10.0) == b""
    ch.close()
    ex._wire.conns[2].sendall(frame)  # the driver's own stream: the sequence number
    assert until(lambda: _net()["frames_refused"] >= net0["frames_refused"] + 2, every=0.02)
    net1 = _net()
    assert net1["handshakes_refused"] >= net0["handshakes_refused"] + 1
    np.testing.assert_array_equal(z.numpy(), 1.0)  # once (the stream's end cost a recovery)
    assert ex.recovery_stats()["count"] <= rec0 + 1
    assert (z + 1).sum().item() == 16.0


def _snapshot():
    ws = st.stats()["workers"]
    return [w["pid"] for w in ws], [w["rss_bytes"] for w in ws]


def test_a_protocol_fuzzer_leaves_the_session_intact():
    ex = _ex()
    rng = np.random.default_rng(SEED)
    made = {
        "f64": rng.standard_normal((40, 6)),
        "f32": rng.standard_normal(77).astype(np.float32),
        "i64": rng.integers(-(2**62), 2**62, (9, 8)),
        "i8": rng.integers(-128, 127, 300).astype(np.int8),
        "bool": rng.random((5, 5)) < 0.5,
        "c128": rng.standard_normal(12) + 1j * rng.standard_normal(12),
    }
    tensors = {k: st.from_numpy(v.copy(), shards=4) for k, v in made.items()}
    tensors["cols"] = st.from_numpy(made["f64"].copy(), layout=st.Layout(dim=1, shards=3))
    made["cols"] = made["f64"]
    st.synchronize()
    pids, rss = _snapshot()
    net0 = _net()
    addrs, key = dict(ex._mail_addrs), ex._mail_key
    fuzzers = [Fuzzer(addrs[w], w, key, ex.client, SEED + w) for w in sorted(addrs)]
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(len(fuzzers)) as pool:
        done = list(pool.map(lambda f: f.run(CASES // len(fuzzers) + 1), fuzzers))
    took = time.monotonic() - t0
    assert sum(done) >= CASES
    assert not [e for f in fuzzers for e in f.escapes]  # the decoder said DecodeError, always
    raw, refusals = sum(f.raw for f in fuzzers), sum(f.refusals for f in fuzzers)
    net = _net()
    assert net["handshakes_refused"] - net0["handshakes_refused"] >= raw
    assert net["frames_refused"] - net0["frames_refused"] >= refusals
    pids1, rss1 = _snapshot()
    assert pids1 == pids  # every worker alive: none was replaced
    grew = [b - a for a, b in zip(rss, rss1)]
    assert max(grew) < 64 << 20, grew
    for k, t in tensors.items():  # bit-identical
        got = t.numpy()
        assert got.dtype == made[k].dtype and got.tobytes() == made[k].tobytes(), k
    assert tensors["f64"].sum().item() == pytest.approx(made["f64"].sum())
    print(f"fuzz: {sum(done)} cases, {took:.1f}s, {raw} raw, {refusals} refused, rss +{grew}")


def test_the_package_sessions_mailboxes_listen_on_their_nodes():
    ex = _ex()
    here = ray.get_runtime_context().get_node_id()
    ips = {n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}
    assert any(w.node != here for w in ex.workers)  # (interleaved on both nodes)
    assert ex._mail_host is None
    for w, (host, _) in ex._mail_addrs.items():
        assert host == ips[ex.workers[w].node]


@pytest.fixture
def one_node(ray_cluster, monkeypatch):
    """A session of 2 workers, both on the driver's node."""
    here = ray.get_runtime_context().get_node_id()
    slots = ray_executor._slots
    monkeypatch.setattr(
        ray_executor,
        "_slots",
        lambda nodes, n, per_node=None: slots(
            [m for m in nodes if m["NodeID"] == here], n, per_node
        ),
    )
    with own_session(ray_cluster, monkeypatch, num_workers=2) as ex:
        yield ex


def test_mailboxes_listen_on_loopback_when_every_worker_is_on_the_drivers_node(one_node):
    ex = one_node
    here = ray.get_runtime_context().get_node_id()
    assert all(w.node == here for w in ex.workers)
    assert ex._mail_host == "127.0.0.1"
    assert all(host == "127.0.0.1" for host, _ in ex._mail_addrs.values())
    node_ip = ray.util.get_node_ip_address()
    if node_ip != "127.0.0.1":  # nothing listens at the node's address
        for _, port in ex._mail_addrs.values():
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((node_ip, port), timeout=5).close()
    xn = np.arange(100.0)
    x = st.from_numpy(xn, shards=2)
    before = next(ex._wire._keys)
    assert x.sum().item() == xn.sum()
    assert next(ex._wire._keys) > before + 1  # by wire, over loopback


class _Plant:
    """Unpickling this writes a file: what a pickle off a socket could do."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_wire_batch_of_pickled_bytes_is_refused_unread(tmp_path):
    """A driver-role frame whose layout commands are pickled bytes (the form only Ray's
    channels carry) is answered with an error record; the pickle is never loaded."""
    import pickle

    from sharded.runtime.commands import LayoutCmds

    ex = _ex()
    plant = tmp_path / "planted"
    ch = channel.dial(ex._mail_addrs[1], ex._mail_key, b"D", 1)
    try:
        payload = pickle.dumps([_Plant(str(plant))])
        ch.sock.sendall(b"".join(map(bytes, ch.pack(Run(0, 5.0, [LayoutCmds(None, payload)])))))
        answer = ch.recv()
    finally:
        ch.close()
    assert "must be records, not pickled bytes" in str(answer)
    assert not plant.exists()
    assert (st.ones(8, shards=4) + 1).sum().item() == 16.0  # the session goes on
