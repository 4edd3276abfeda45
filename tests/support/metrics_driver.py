"""A driver of its own for tests/ray/test_metrics.py: ``python -m tests.support.metrics_driver
ADDRESS`` connects to the test cluster once (Ray 2.60 exports a process's driver-side metrics
once more for each earlier ``ray.init`` of that process, so the test's own driver, which
connects again for every session, cannot count reads exactly).

It runs a session with ``SHARDED_METRICS=0``, then one with metrics, and prints one JSON line
after each step of the second, waiting for a line on stdin before the next: the figures the
workers hold after a few reads, then (after killing worker 1 and reading again) the recovery.
"""

import json
import os
import sys
import time

import ray

import sharded as st
from sharded.runtime.driver import session

READS = 5
N = 200_000


def _say(**kw) -> None:
    print(json.dumps(kw), flush=True)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


def main(address: str) -> None:
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    os.environ["SHARDED_METRICS"] = "0"  # a session that exports nothing
    st.init(address=address, num_workers=2, min_shard_bytes=0)
    off = st.info()["namespace"]
    assert session.current().executor.metrics is None
    assert st.ones(1000).sum().item() == 1000
    st.shutdown()
    del os.environ["SHARDED_METRICS"]

    st.init(address=address, num_workers=2, min_shard_bytes=0)
    ex = session.current().executor
    x = st.arange(N, dtype=st.float64)  # N / 2 a worker
    y = x * 2.0 + 1.0
    for _ in range(READS):
        assert y.sum().item() == float(N) ** 2
    workers = st.stats()["workers"]
    _say(
        off=off,
        session=st.info()["namespace"],
        tags=ex.metrics.tags,
        reads=READS,
        workers={str(w["worker"]): w for w in workers},
    )
    sys.stdin.readline()

    pid = workers[1]["pid"]  # a lost worker: the recovery is counted, and the worker replaced
    ray.kill(ex._actors[1])
    end = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.02)
    assert y.sum().item() == float(N) ** 2
    _say(recoveries=ex.recovery_stats()["count"], reads=READS + 1)
    sys.stdin.readline()
    st.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
