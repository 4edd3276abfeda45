"""The figures behind sharded's Ray metrics (sharded.runtime.metrics), in process: what a
worker counts (bytes sent and received) and what its metrics thread would set. The export to
Prometheus is tests/ray/test_metrics.py's."""

import numpy as np

import sharded as st  # (its op families fill the kernel table)
from sharded.runtime import metrics
from sharded.runtime.commands import Export, Kernel, Key, Ref
from sharded.runtime.worker.core import Worker

FULL = {"shape": (1000,), "value": 2.0, "dtype": "float64"}


def test_a_worker_counts_what_it_sends_and_receives():
    w = Worker(0)
    m = metrics.WorkerMetrics(w, "sharded-test", start=False)
    first = m.update()
    assert first.pop("rss_bytes") > 0 and set(first.values()) == {0}
    w.run([Kernel("full", (), (1,), FULL, None, False)])
    errors, out = w.run([Export(1, None)])  # a read of it: 8,000 bytes sent
    assert errors == [] and out.nbytes == 8000 and w.sent_bytes == 8000
    w.fetch([(1, (slice(0, 10),))])  # (the driver's bulk read: 80 more)
    assert w.sent_bytes == 8080
    other = np.ones(500)  # another worker's export, taken by a command: received
    w.run([Kernel("add", (Key(1, (slice(0, 500),)), Ref(0)), (2,), {}, None, False)], other)
    assert w.received_bytes == 4000
    got = m.update()
    stats = w.stats()
    assert got["live_bytes"] == stats["live_bytes"] == 12000
    assert got["live_shards"] == 2 and got["commands_run"] == stats["commands_run"] == 2
    assert (got["sent_bytes"], got["received_bytes"]) == (8080, 4000)
    assert (stats["sent_bytes"], stats["received_bytes"]) == (8080, 4000)
    w.run([Kernel("full", (), (3,), FULL, None, False)])  # moved: summed anew
    assert m.update()["live_bytes"] == 20000


def test_the_switch(monkeypatch):
    monkeypatch.setenv("SHARDED_METRICS", "0")
    assert not metrics.enabled()
    monkeypatch.setenv("SHARDED_METRICS", "1")
    assert metrics.enabled()
    monkeypatch.delenv("SHARDED_METRICS")
    assert metrics.enabled()  # on by default
    assert st.info()["namespace"] is None  # in process: no Ray metrics, no tag


def test_worker_stats_report_the_peak_resident_memory():
    s = Worker(0).stats()
    assert s["rss_peak_bytes"] >= s["rss_bytes"] > 0
