"""``sharded bench --scaling``: how the driver's cost grows with the worker count.

For 1, 2, 4, ... N shards (one per worker, 4,096 float64 elements each) it times a chain of
small elementwise ops and a full-reduction read ``x.sum().item()``, and prints per op and per
read the driver's CPU time (``time.process_time``: every thread of the driver process,
Ray's included, so the figure does not depend on how busy the workers are) and the wall
time, then the slope per added worker (least squares over 2..N). ``--cluster`` runs the same
table on a simulated cluster of 4 nodes x 8 workers (``ray.cluster_utils.Cluster``).
``--simulated N`` runs it on the simulated executor instead (no Ray: workers as threads of
a few local processes, over real loopback sockets; 2, 8, 64, 256, 1,024 workers up to N,
one session each, one shard of 64 float64 per worker).

Next to each read it prints Ray's own floor, measured in the same run: the driver CPU of ONE
plain actor call whose reply comes after the read's median wall time (an actor that only
sleeps; :func:`sharded.runtime.driver.probe.call_floor`). Ray's threads spend CPU while the driver
waits, so a read that is one actor call cannot cost the driver less than that. The
in-process executor (``--executor local``) has no Ray: the column shows ``-``.

Wall times on a small shared machine are indicative only: the workers' side of every op runs
on the same few cores. Driver CPU is the figure the scale-out targets are stated in.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import sharded as st

from ..runtime import current
from ..runtime.driver.probe import call_floor
from .timing import workers_label

ELEMS = 4096  # per shard: small, so the figures are the cost of orchestration, not of math


def _per_op(x, ops: int, repeat: int):
    """Best-of-``repeat`` (wall s, driver cpu s) per elementwise op of a chain."""
    walls, cpus = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        y = x
        for _ in range(ops // 2):
            y = y * 1.0001 + 0.5
        st.synchronize()
        walls.append((time.perf_counter() - t) / ops)
        cpus.append((time.process_time() - c) / ops)
    return min(walls), min(cpus)


def _per_read(x, reads: int):
    """(median wall s, min driver cpu s) of ``x.sum().item()``."""
    walls, cpus = [], []
    for _ in range(reads):
        t, c = time.perf_counter(), time.process_time()
        x.sum().item()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), min(cpus)


def measure(
    max_shards: int, ops: int = 200, reads: int = 10, repeat: int = 3, counts=None, elems=ELEMS
) -> list:
    """Rows ``(shards, op_wall_us, op_cpu_us, read_wall_ms, read_cpu_ms, floor_ms)`` on the
    current session, for shard counts 1, 2, 4, ... up to ``max_shards`` (and
    ``max_shards``), or for the shard counts ``counts``, each shard of ``elems`` float64.
    ``floor_ms`` is the driver CPU of one plain Ray actor call whose reply comes after
    ``read_wall_ms`` (min over ``reads`` calls); None without Ray.

    Examples
    --------
    >>> import sharded as st
    >>> _ = st.init(executor="local", num_workers=2)
    >>> [(r[0], r[5]) for r in measure(2, ops=4, reads=1, repeat=1)]
    [(1, None), (2, None)]
    >>> st.shutdown()
    """
    on_ray = current().executor.kind == "ray"
    if counts is None:
        counts, s = [], 1
        while s < max_shards:
            counts.append(s)
            s *= 2
        counts.append(max_shards)
    rows = []
    for shards in counts:
        x = st.rand(elems * shards, shards=shards, dtype=st.float64)
        _per_op(x, 20, 1)  # warm-up: code paths, layout caches, actor connections
        x.sum().item()
        ow, oc = _per_op(x, ops, repeat)
        rw, rc = _per_read(x, reads)
        # measured right after the read, so both see the same load on the machine
        floor = 1e3 * call_floor(rw, reads) if on_ray else None
        rows.append((shards, 1e6 * ow, 1e6 * oc, 1e3 * rw, 1e3 * rc, floor))
        del x
    return rows


def slope(xs, ys) -> float:
    """Least-squares slope of ``ys`` over ``xs`` (0 for fewer than two points).

    Examples
    --------
    >>> round(slope([2, 4, 8], [10, 12, 16]), 9)
    1.0
    """
    if len(xs) < 2:
        return 0.0
    return float(np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)[0])


def table(rows, title: str) -> str:
    """The printed table: one line per shard count, then slopes and the targets' ratios.

    The last column ("ray floor ms") is the driver CPU of one plain Ray actor call of the
    read's wall time (``-`` without Ray).

    Examples
    --------
    >>> print(table([(1, 30.0, 31.0, 2.5, 0.9, 0.6)], "t").splitlines()[2])
          1 |       31.0       30.0 |       0.90       2.50       0.60
    """
    out = [
        title,
        "workers | per elementwise op: driver cpu us, wall us | per x.sum().item(): "
        "driver cpu ms, wall ms, ray floor ms (driver cpu of one actor call of that wall)",
    ]
    for s, ow, oc, rw, rc, fl in rows:
        floor = "-" if fl is None else f"{fl:.2f}"
        out.append(f"{s:7d} | {oc:10.1f} {ow:10.1f} | {rc:10.2f} {rw:10.2f} {floor:>10}")
    multi = [r for r in rows if r[0] >= 2]
    xs = [r[0] for r in multi]
    sl = [slope(xs, [r[i] for r in multi]) for i in (2, 1, 4, 3)]
    out.append(
        f"slope per added worker (2..{rows[-1][0]}): op cpu {sl[0]:+.2f} us, op wall "
        f"{sl[1]:+.2f} us, read cpu {sl[2]:+.3f} ms, read wall {sl[3]:+.3f} ms"
    )
    two = next((r for r in rows if r[0] == 2), None)
    if two is not None:
        last = rows[-1]
        out.append(
            f"op cpu at {last[0]} workers / at 2: {last[2] / two[2]:.2f}x; "
            f"read cpu at {last[0]}: {last[4]:.2f} ms"
        )
    return "\n".join(out)


def _run(address, workers, a, title, per_node=None):
    """One table: ``workers`` workers (or ``per_node`` on each node, their shards on
    threads), 1 .. ``workers`` shards."""
    st.shutdown()
    if per_node is None:
        st.init(address=address, num_workers=workers, executor=a.executor)
    else:
        st.init(address=address, workers_per_node=per_node, executor=a.executor)
        title = title.split(":")[0] + ": " + workers_label(current().executor)
        title += f" ({workers} shards at most)"
    try:
        rows = measure(workers, a.ops, a.reads, a.repeat)
    finally:
        st.shutdown()
    print(table(rows, title), flush=True)
    return rows


SIM_COUNTS = (2, 8, 64, 256, 1024)
SIM_ELEMS = 64  # per shard: the simulated workers share this machine's cores


def simulated(n: int, a) -> list:
    """Rows of :func:`measure` on the simulated executor (workers as threads of local
    processes over real sockets, :mod:`sharded.runtime.driver.simulated`): one session of
    ``c`` workers, one shard each, for every ``c`` of :data:`SIM_COUNTS` up to ``n`` (and
    ``n``).

    Examples
    --------
    >>> import argparse
    >>> a = argparse.Namespace(ops=4, reads=1, repeat=1)
    >>> [r[0] for r in simulated(2, a)]
    [2]
    """
    rows = []
    for c in sorted({c for c in SIM_COUNTS if c < n} | {n}):
        st.shutdown()
        st.init(executor="simulated", num_workers=c)
        try:
            rows += measure(c, a.ops, a.reads, a.repeat, counts=[c], elems=SIM_ELEMS)
        finally:
            st.shutdown()
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="sharded bench --scaling", description=__doc__)
    p.add_argument("--workers", type=int, default=16, help="largest worker count (default 16)")
    p.add_argument("--address", default=None, help="Ray cluster address (default: embedded)")
    p.add_argument(
        "--executor",
        choices=("ray", "local"),
        default="ray",
        help="ray (default) or local (in-process workers: no Ray, no floor column)",
    )
    p.add_argument("--ops", type=int, default=200, help="elementwise ops per timed chain")
    p.add_argument("--reads", type=int, default=10, help="timed reads per worker count")
    p.add_argument("--repeat", type=int, default=3, help="timed chains per worker count (best)")
    p.add_argument(
        "--cluster",
        action="store_true",
        help="also run on a simulated cluster of 4 nodes x 8 workers (32 workers)",
    )
    p.add_argument("--cluster-only", action="store_true", help="only the simulated-cluster table")
    p.add_argument(
        "--workers-per-node",
        type=int,
        default=None,
        metavar="K",
        help="after each table, the same shard counts on K workers per node "
        "(st.init(workers_per_node=K): their shards run on the node's cores in threads)",
    )
    p.add_argument(
        "--simulated",
        type=int,
        default=None,
        metavar="N",
        help="only the simulated executor's table: 2, 8, 64, 256, 1024 workers up to N "
        "(threads of local processes over real sockets, no Ray)",
    )
    a = p.parse_args(argv)
    if a.simulated is not None:
        if a.simulated < 1:
            p.error(f"--simulated needs a positive worker count, got {a.simulated}")
        title = (
            f"simulated executor: 2..{a.simulated} workers, one shard of {SIM_ELEMS} float64 "
            "each, over loopback sockets"
        )
        print(table(simulated(a.simulated, a), title), flush=True)
        return 0
    if a.executor == "local" and (a.cluster or a.cluster_only or a.address):
        p.error("--cluster, --cluster-only and --address need --executor ray")
    if a.workers_per_node is not None and a.workers_per_node < 1:
        p.error(f"--workers-per-node needs a positive count, got {a.workers_per_node}")
    k = a.workers_per_node
    if not a.cluster_only:
        _run(a.address, a.workers, a, f"session: {a.workers} workers (one shard each)")
        if k is not None:
            _run(a.address, a.workers, a, "session", per_node=k)
    if a.cluster or a.cluster_only:
        from ..runtime.driver.simcluster import simulated_cluster

        with simulated_cluster(4, 8) as address:
            _run(address, 32, a, "simulated cluster: 4 nodes x 8 workers")
            if k is not None:
                _run(address, 32, a, "simulated cluster: 4 nodes", per_node=k)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
