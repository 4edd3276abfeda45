"""Timing helpers shared by the benchmarks: one median timer, the dask loader, the table."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeat: int, slow_s: float = float("inf")) -> float:
    """Median of ``repeat`` timed runs after a warm-up; a warm-up slower than ``slow_s`` is
    the answer itself (a run that long is not repeated).

    Examples
    --------
    >>> from sharded.tools.timing import median_time
    >>> median_time(lambda: None, 3) < 1.0
    True
    """
    t = time.perf_counter()
    fn()  # warm-up: first-touch page faults, imports, actor code paths
    first = time.perf_counter() - t
    if first > slow_s:
        return first
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def dask_array():
    """``dask.array`` with the threaded scheduler, or ``None`` when dask is not installed
    (it is an optional benchmark dependency, so it is imported only here)."""
    try:
        import dask
        import dask.array as da
    except ImportError:
        return None
    dask.config.set(scheduler="threads")
    return da


def shard_slots(executor) -> int:
    """The shards a default placement makes of a big tensor: one per worker thread (a
    worker owning a node's cores has one per core); dask's chunks match it.

    Examples
    --------
    >>> from sharded.runtime.driver.local import LocalExecutor
    >>> ex = LocalExecutor(2); shard_slots(ex); ex.close()
    2
    """
    return sum(w.threads for w in executor.workers)


def workers_label(executor) -> str:
    """The session's layout in a report's title: ``"2 workers"``, or ``"1 worker x 2
    threads"`` where workers run their shards on threads (``workers_per_node``).

    Examples
    --------
    >>> from sharded.runtime.driver.local import LocalExecutor
    >>> ex = LocalExecutor(2); workers_label(ex); ex.close()
    '2 workers'
    """
    n = executor.num_workers
    threads = {w.threads for w in executor.workers}
    label = f"{n} worker{'s' if n != 1 else ''}"
    if threads != {1}:
        label += " x " + "/".join(str(t) for t in sorted(threads)) + " threads"
    return label


def title(workers) -> str:
    """A report's layout words: :func:`workers_label`'s string as it is, a count as
    ``"N workers"``.

    Examples
    --------
    >>> title(2), title("1 worker x 2 threads")
    ('2 workers', '1 worker x 2 threads')
    """
    return workers if isinstance(workers, str) else f"{workers} workers"


def report(rows, num_workers, out=print) -> None:
    """Print rows ``(name, sharded_s, numpy_s, dask_s, target)`` as a table with ratios.

    Examples
    --------
    >>> from sharded.tools.timing import report
    >>> report([("add", 1.0, 2.0, 4.0, "")], 2)  # doctest: +NORMALIZE_WHITESPACE
    sharded benchmark: 2 workers; median of repeated runs; seconds
    case ... sharded numpy dask /numpy /dask target
    ---...
    add ... 1.0000 2.0000 4.0000 0.50 0.25
    """
    out(f"sharded benchmark: {title(num_workers)}; median of repeated runs; seconds")
    head = f"{'case':50} {'sharded':>9} {'numpy':>9} {'dask':>9} {'/numpy':>7} {'/dask':>7}  target"
    out(head)
    out("-" * len(head))
    for name, ts, tn, td, target in rows:
        out(f"{name:50} {ts:9.4f} {tn:9.4f} {td:9.4f} {ts / tn:7.2f} {ts / td:7.2f}  {target}")
