"""sharded's figures as Ray metrics (:mod:`ray.util.metrics`), which Ray exports to Prometheus
and its dashboard's Grafana panels.

Every series is tagged with its ``session`` (the Ray namespace of the session's workers);
per-worker ones with the ``worker`` index as well. Ray prefixes ``ray_`` on export, and a
counter's name gains ``_total``:

* ``ray_sharded_held_bytes`` (gauge): bytes of the live shards a worker holds;
* ``ray_sharded_live_shards`` (gauge): live shards a worker holds;
* ``ray_sharded_pooled_bytes`` (gauge): bytes in a worker's pool of freed blocks;
* ``ray_sharded_rss_bytes`` (gauge): a worker process's resident memory;
* ``ray_sharded_commands_total`` (counter): commands (kernels) a worker ran;
* ``ray_sharded_sent_bytes_total`` (counter): bytes a worker exported (reads, transfers,
  tree partials);
* ``ray_sharded_received_bytes_total`` (counter): bytes a worker's commands took from other
  workers or the driver;
* ``ray_sharded_recoveries_total``, ``ray_sharded_recovery_seconds_total`` (counters, driver):
  recoveries from lost workers and the time they took;
* ``ray_sharded_workers_replaced_total`` (counter, driver): replacements, per worker index;
* ``ray_sharded_read_seconds`` (histogram, driver: ``_bucket``, ``_sum``, ``_count``): how long
  a read (``fetch``, ``.item()``, ``.numpy()``) took.

Off the hot path: a worker's thread (:class:`WorkerMetrics`) sets its series once per
:data:`PERIOD_S` (the live bytes summed anew only when its counters moved); the driver
observes one histogram value per read (about 2 µs) and counts recoveries as they end.
``SHARDED_METRICS=0`` in the driver's environment turns all of it off (:func:`enabled`; the
driver tells its workers).

A caveat of Ray 2.60: a process that connects to Ray ``k > 1`` times (``ray.init`` again after
``ray.shutdown``, for instance ``st.shutdown()`` then ``st.init(address=...)``) has what it
records as a driver (reads, recoveries) exported ``k - 1`` times over; the workers' series,
recorded in their own processes, are exact.
"""

from __future__ import annotations

import os
import threading
import time

from ray.util import metrics as _ray

PERIOD_S = 1.0  # a worker sets its series at most this often
# Bounds of the read-latency histogram, in seconds: a small read over the wire takes ~0.3 ms,
# a large gather or a read that waits for long ops seconds
READ_BOUNDS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 30.0]
WORKER_TAGS = ("session", "worker")

_made: dict = {}  # name -> metric: one object per name and process (sessions come and go)
_made_lock = threading.Lock()


def enabled() -> bool:
    """Whether sharded exports Ray metrics: yes unless ``SHARDED_METRICS=0``.

    Examples
    --------
    >>> import os
    >>> enabled() == (os.environ.get("SHARDED_METRICS", "1") != "0")
    True
    """
    return os.environ.get("SHARDED_METRICS", "1") != "0"


def _metric(cls, name: str, description: str, tags, **kw):
    with _made_lock:
        m = _made.get(name)
        if m is None:
            m = _made[name] = cls(name, description, tag_keys=tuple(tags), **kw)
        return m


# (metric name, description) of a worker's gauges and counters, and the worker's stat each reads
_GAUGES = (
    ("sharded_held_bytes", "Bytes of the live shards a sharded worker holds", "live_bytes"),
    ("sharded_live_shards", "Live shards a sharded worker holds", "live_shards"),
    ("sharded_pooled_bytes", "Bytes in a sharded worker's pool of freed blocks", "pool_bytes"),
    ("sharded_rss_bytes", "Resident memory of a sharded worker's process", "rss_bytes"),
)
_COUNTERS = (
    ("sharded_commands", "Commands a sharded worker ran", "commands_run"),
    ("sharded_sent_bytes", "Bytes a sharded worker exported (reads, transfers)", "sent_bytes"),
    (
        "sharded_received_bytes",
        "Bytes a sharded worker's commands took from other workers or the driver",
        "received_bytes",
    ),
)


class WorkerMetrics:
    """A worker's series, set by a daemon thread of its own every :data:`PERIOD_S` (a batch
    costs nothing; the live bytes are summed anew only when the worker's counters moved). The
    thread reads the worker's plain attributes without its lock: a figure may
    be one batch old, never torn (``list(store.values())`` is one step under the GIL).

    Examples
    --------
    >>> from sharded.runtime.worker.core import Worker
    >>> m = WorkerMetrics(Worker(0), "sharded-doc", start=False)
    >>> m.update()["live_shards"]
    0
    """

    def __init__(self, worker, session: str, start: bool = True):
        self.worker = worker
        self.tags = {"session": str(session), "worker": str(worker.index)}
        self._gauges = [(_metric(_ray.Gauge, n, d, WORKER_TAGS), k) for n, d, k in _GAUGES]
        self._counters = [(_metric(_ray.Counter, n, d, WORKER_TAGS), k) for n, d, k in _COUNTERS]
        self._told = {k: 0 for _, _, k in _COUNTERS}  # each counter's total already exported
        self._seen, self._held = None, 0
        self._stop = threading.Event()
        if start:
            t = threading.Thread(target=self._loop, name="sharded-metrics", daemon=True)
            t.start()

    def _loop(self) -> None:
        while not self._stop.wait(PERIOD_S):
            try:
                self.update()
            except Exception:  # a figure is not worth a worker: try again next period
                pass

    def update(self) -> dict:
        """Set the series from the worker's figures now; returns them."""
        w = self.worker
        store = w.store
        seen = (w.commands_run, w.sent_bytes, w.received_bytes, w.pool_bytes, len(store), id(store))
        figures = {
            "commands_run": w.commands_run,
            "sent_bytes": w.sent_bytes,
            "received_bytes": w.received_bytes,
            "pool_bytes": w.pool_bytes,
            "live_shards": len(store),
        }
        if seen != self._seen:  # (the live bytes: a sum over every shard)
            self._seen = seen
            self._held = int(sum(a.nbytes for a in list(store.values())))
        figures["live_bytes"], figures["rss_bytes"] = self._held, w.rss_bytes()
        # every period, changed or not: Ray's agents drop a gauge not set for two of their
        # export intervals (a dead worker's figures go away so)
        for g, k in self._gauges:
            g.set(figures[k], tags=self.tags)
        for c, k in self._counters:
            d = figures[k] - self._told[k]
            if d > 0:  # (a counter only grows)
                c.inc(d, tags=self.tags)
                self._told[k] = figures[k]
        return figures

    def stop(self) -> None:
        self._stop.set()


class DriverMetrics:
    """The driver's series of a session: the read-latency histogram and recoveries.

    Examples
    --------
    >>> m = DriverMetrics("sharded-doc")
    >>> m.read(0.0012); m.recovered([1], 0.5)
    """

    def __init__(self, session: str):
        self.tags = {"session": str(session)}
        self._read = _metric(
            _ray.Histogram,
            "sharded_read_seconds",
            "Seconds the sharded driver waited for a read (fetch, .item(), .numpy())",
            ("session",),
            boundaries=READ_BOUNDS,
        )
        self._recoveries = _metric(
            _ray.Counter, "sharded_recoveries", "Recoveries from lost sharded workers", ("session",)
        )
        self._recovery_s = _metric(
            _ray.Counter,
            "sharded_recovery_seconds",
            "Seconds the sharded driver spent recovering lost workers",
            ("session",),
        )
        self._replaced = _metric(
            _ray.Counter,
            "sharded_workers_replaced",
            "sharded workers replaced after a loss",
            WORKER_TAGS,
        )

    def read(self, seconds: float) -> None:
        """One read took ``seconds``."""
        self._read.observe(seconds, tags=self.tags)

    def recovered(self, workers, seconds: float) -> None:
        """A recovery that replaced ``workers`` (indices) ended after ``seconds``."""
        self._recoveries.inc(1, tags=self.tags)
        if seconds > 0:
            self._recovery_s.inc(seconds, tags=self.tags)
        for w in workers:
            self._replaced.inc(1, tags={**self.tags, "worker": str(w)})


class TimedReads:
    """A mixin of an executor whose ``metrics`` (a :class:`DriverMetrics`, or None) time every
    read: the whole of ``fetch``, the path through relays included, its recoveries too.

    Examples
    --------
    >>> from sharded.runtime.driver.local import LocalExecutor
    >>> class Timed(TimedReads, LocalExecutor):
    ...     pass
    >>> ex = Timed(1)
    >>> ex.metrics = DriverMetrics("sharded-doc")
    >>> ex.submit(0, "full", (), (1,), {"shape": (2,), "value": 1.0, "dtype": "float64"})
    >>> ex.fetch([(0, 1, None)])[0]
    array([1., 1.])
    """

    def fetch(self, items, nbytes: int = 0):
        m = self.metrics
        if m is None:
            return super().fetch(items, nbytes)
        t0 = time.perf_counter()
        out = super().fetch(items, nbytes)
        m.read(time.perf_counter() - t0)
        return out
