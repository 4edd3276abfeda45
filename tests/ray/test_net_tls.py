"""A session with ``st.init(tls=True)`` on the two-node Ray cluster: reads and reductions
(worker-to-worker trees, the driver's wire) match numpy over TLS 1.3, the bytes on the wire
carry no value in the clear, the workers' mailboxes refuse a dialler without TLS, and a
lost worker's replacement joins the session's TLS."""

import ssl

import numpy as np
import pytest

import sharded as st
from sharded.errors import ArgumentError
from sharded.runtime.driver import session
from sharded.runtime.net import channel
from tests.support.nettools import Tap, until
from tests.support.raynet import kill_during_a_read, own_session

MARK = np.frombuffer(b"sharded-tls-mark#er:0123456789ab", np.float64)


@pytest.fixture(scope="module")
def tls_session(ray_cluster):
    with own_session(ray_cluster, num_workers=4, tls=True) as ex:
        yield ex


def _wired(ex) -> int:
    return next(ex._wire._keys)


def test_tls_is_refused_to_a_live_session_in_the_clear():
    ex = session.current().executor  # (the package's session: no TLS)
    assert ex.plain_sockets
    with pytest.raises(ArgumentError, match="without TLS"):
        st.init(tls=True)
    assert session.current().executor is ex  # (left as it was)


def test_reads_and_reductions_match_numpy_over_tls(tls_session):
    ex = tls_session
    assert ex._wire_ok() and ex._tls is not None and not ex.plain_sockets
    rng = np.random.default_rng(7)
    xn = rng.standard_normal((1000, 6))
    x = st.from_numpy(xn, shards=4)
    before = _wired(ex)
    assert x.sum().item() == pytest.approx(xn.sum())
    assert _wired(ex) > before + 1  # by wire (and the tree's partials worker to worker)
    np.testing.assert_allclose(x.sum(dim=0).numpy(), xn.sum(axis=0))
    np.testing.assert_allclose(x.mean(dim=1).numpy(), xn.mean(axis=1))
    np.testing.assert_array_equal(x.amax(dim=0).numpy(), xn.max(axis=0))
    np.testing.assert_allclose((x.T @ x).numpy(), xn.T @ xn)
    np.testing.assert_array_equal(x.numpy(), xn)
    for s in ex._wire.conns.values():
        assert isinstance(s, ssl.SSLSocket) and s.version() == "TLSv1.3"
    net = st.stats()["net"]
    assert not any(net.values()), net  # (nothing refused anywhere)


def test_the_wire_carries_no_value_in_the_clear(tls_session):
    ex = tls_session
    x = st.from_numpy(np.tile(MARK, 64), shards=4)
    st.synchronize()
    taps = {w: Tap(a) for w, a in ex._mail_addrs.items()}
    ex._wire.set_addrs({w: t.address for w, t in taps.items()})
    try:
        np.testing.assert_array_equal(x.numpy(), np.tile(MARK, 64))
        seen = b"".join(bytes(t.seen) for t in taps.values())
        assert len(seen) > x.numel() * 8  # the answers went through the taps
        assert MARK.tobytes()[:24] not in seen
    finally:
        ex._wire.set_addrs(dict(ex._mail_addrs))
        for t in taps.values():
            t.close()
    assert x.sum().item() == pytest.approx(np.tile(MARK, 64).sum())


def test_a_mailbox_refuses_a_dialler_without_tls(tls_session):
    ex = tls_session
    before = st.stats()["net"].get("handshakes_refused", 0)
    with pytest.raises(OSError):  # (Refused, or the mailbox's reset)
        channel.dial(ex._mail_addrs[2], ex._mail_key, b"D", 2)  # the key, but no TLS
    # (the worker counts it on its mailbox's thread, maybe after the dialler gave up)
    assert until(lambda: st.stats()["net"]["handshakes_refused"] >= before + 1, every=0.02)


def test_a_lost_workers_replacement_joins_the_sessions_tls(tls_session):
    ex = tls_session
    kill_during_a_read(ex, (0, 1))
    assert ex._wire_ok()
    xn = np.arange(40.0)
    x = st.from_numpy(xn, shards=4)
    before = _wired(ex)
    assert x.sum().item() == xn.sum()
    assert _wired(ex) > before + 1
    assert all(s.version() == "TLSv1.3" for s in ex._wire.conns.values())
