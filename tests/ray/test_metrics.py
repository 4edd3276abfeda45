"""sharded's Ray metrics (sharded.runtime.metrics) as Prometheus scrapes them: the metrics
export port of every node of the two-node cluster, read over HTTP on loopback. Ray exports
every few seconds, so each check polls, within a bound, until the figures are there."""

import json
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request

import sharded as st
from tests.ray.conftest import CPUS_PER_NODE, NODES

WAIT_S = 40  # bound of each wait for an export (Ray's agents report every ~10 s)
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _scrape(cluster, session: str) -> dict:
    """``{(name, worker or None, le or None): value}`` of the ``ray_sharded_*`` series that the
    metrics ports of ``cluster``'s nodes show for ``session`` (summed over the nodes)."""
    out = {}
    for node in cluster.list_all_nodes():
        url = f"http://127.0.0.1:{node.metrics_export_port}/metrics"
        try:
            text = urllib.request.urlopen(url, timeout=5).read().decode()
        except OSError:  # (an agent still starting: the next poll asks again)
            continue
        for line in text.splitlines():
            if not line.startswith("ray_sharded_"):
                continue
            head, value = line.rsplit(" ", 1)
            name, _, labels = head.partition("{")
            tags = dict(LABEL.findall(labels))
            if tags.get("session") == session:
                key = (name, tags.get("worker"), tags.get("le"))
                out[key] = out.get(key, 0.0) + float(value)
    return out


def _until(cluster, session: str, ok, what: str) -> dict:
    """The scrape of ``session`` once ``ok(scrape)`` holds, within :data:`WAIT_S`."""
    end = time.monotonic() + WAIT_S
    while True:
        got = _scrape(cluster, session)
        if ok(got):
            return got
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not exported within {WAIT_S} s; scraped {got}")
        time.sleep(0.5)


def _lines(proc) -> queue.Queue:
    """The driver's JSON lines, as they come (None when it ends), read by a thread."""
    q = queue.Queue()

    def read():
        for line in proc.stdout:
            if line.startswith("{"):
                q.put(json.loads(line))
        q.put(None)

    threading.Thread(target=read, daemon=True).start()
    return q


def _next(q, what: str) -> dict:
    """The driver's next JSON line, within :data:`WAIT_S`."""
    try:
        said = q.get(timeout=WAIT_S)
    except queue.Empty:
        raise AssertionError(f"the driver said nothing of {what} within {WAIT_S} s") from None
    assert said is not None, f"the driver ended before {what}"
    return said


def test_metrics_reach_prometheus(ray_cluster):
    # a driver of its own (tests.support.metrics_driver): it connects once, so its reads
    # and recoveries are counted once; the package's session makes room for its workers
    st.shutdown()
    cmd = [sys.executable, "-m", "tests.support.metrics_driver", ray_cluster.address]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines = _lines(proc)
    try:
        said = _next(lines, "its reads")
        session, reads, workers = said["session"], said["reads"], said["workers"]
        assert session.startswith("sharded-") and said["tags"] == {"session": session}
        held = {w: float(s["live_bytes"]) for w, s in workers.items()}
        ran = {w: float(s["commands_run"]) for w, s in workers.items()}
        assert sorted(held) == ["0", "1"] and all(v >= 1_600_000 for v in held.values()), held

        def settled(m):
            return (
                all(
                    m.get(("ray_sharded_held_bytes", w, None)) == held[w]
                    and m.get(("ray_sharded_commands_total", w, None)) == ran[w]
                    for w in held
                )
                and m.get(("ray_sharded_read_seconds_count", None, None)) == reads
            )

        got = _until(ray_cluster, session, settled, "the workers' figures after the reads")
        for w, s in workers.items():
            assert got[("ray_sharded_live_shards", w, None)] == s["live_shards"]
            assert got[("ray_sharded_pooled_bytes", w, None)] == s["pool_bytes"]
            assert got[("ray_sharded_rss_bytes", w, None)] > 0
            # every read: each worker sent its part (a tree partial, or the total)
            assert got[("ray_sharded_sent_bytes_total", w, None)] == s["sent_bytes"] >= 8 * reads
            received = got.get(("ray_sharded_received_bytes_total", w, None), 0.0)
            assert received == s["received_bytes"]
        assert sum(s["received_bytes"] for s in workers.values()) >= 8 * reads  # the root's
        assert got[("ray_sharded_read_seconds_bucket", None, "+Inf")] == reads
        assert 0 < got[("ray_sharded_read_seconds_sum", None, None)] < 60
        assert not _scrape(ray_cluster, said["off"]), (
            "a session with SHARDED_METRICS=0 exported metrics"
        )

        proc.stdin.write("go on\n")
        proc.stdin.flush()
        said = _next(lines, "the recovery")
        assert said["recoveries"] == 1

        def recovered(m):
            return (
                m.get(("ray_sharded_recoveries_total", None, None)) == 1
                and m.get(("ray_sharded_workers_replaced_total", "1", None)) == 1
                and m.get(("ray_sharded_read_seconds_count", None, None)) == said["reads"]
            )

        got = _until(ray_cluster, session, recovered, "the recovery")
        assert got[("ray_sharded_recovery_seconds_total", None, None)] > 0
        proc.stdin.write("end\n")
        proc.stdin.flush()
        assert proc.wait(WAIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        st.init(address=ray_cluster.address, num_workers=NODES * CPUS_PER_NODE, min_shard_bytes=0)
