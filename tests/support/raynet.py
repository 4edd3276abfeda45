"""Helpers for the tests of sharded's sockets on the Ray cluster (tests/ray): a session of a
test's own, and a worker killed while a read waits for it."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import numpy as np

import sharded as st
from sharded.runtime.driver import session
from tests.ray.conftest import CPUS_PER_NODE, NODES


@contextlib.contextmanager
def own_session(ray_cluster, monkeypatch=None, **init):
    """A session of ``st.init(**init)`` on ``ray_cluster`` (``min_shard_bytes=0``), yielding
    its executor; after it, ``monkeypatch`` (if given) is undone and the package's session of
    4 workers comes back."""
    st.shutdown()
    st.init(address=ray_cluster.address, min_shard_bytes=0, **init)
    try:
        yield session.current().executor
    finally:
        st.shutdown()
        if monkeypatch is not None:
            monkeypatch.undo()
        st.init(address=ray_cluster.address, num_workers=NODES * CPUS_PER_NODE, min_shard_bytes=0)


def kill_during_a_read(ex, readers, n=None):
    """Worker 1 is busy with a matmul (a Ray batch); a read of a sum of ``n`` numbers (4 a
    reader by default) over ``readers`` (worker 1 among them: its batch waits for the matmul,
    its parent's for its partial) runs while worker 1 is SIGKILLed. The driver sees it gone and
    recovers: the read is right, in seconds (not the wait's bound), and so is the matmul."""
    rows = st.Layout(dim=0, shards=1, workers=(1,))
    a = st.rand(2500, 2500, layout=rows, dtype=st.float64)
    st.synchronize()
    xn = np.arange(float(4 * len(readers) if n is None else n))
    x = st.from_numpy(xn, layout=st.Layout(dim=0, shards=len(readers), workers=readers))
    before = ex.recovery_stats()["count"]
    pid = st.stats()["workers"][1]["pid"]
    b = a @ a  # queued on worker 1, before its part of the read
    # early: the matmul (~0.5 s) outlasts it on any machine (at 0.4 s the read could end
    # first); a kill before the read was sent is found by the read as well
    t = threading.Timer(0.15, os.kill, (pid, signal.SIGKILL))
    t0 = time.monotonic()
    t.start()
    try:
        got = x.sum().item()
    finally:
        t.join()
    assert got == xn.sum()
    assert time.monotonic() - t0 < 60
    assert ex.recovery_stats()["count"] >= before + 1
    assert x.sum().item() == xn.sum()
    np.testing.assert_allclose(b.numpy(), a.numpy() @ a.numpy())
