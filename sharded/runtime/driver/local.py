"""The in-process executor: every worker a :class:`~sharded.runtime.worker.core.Worker` object in
this process, for tests and for machines without Ray (the protocol is :class:`.executor.Executor`).
"""

from __future__ import annotations

import os

from ...errors import ArgumentError, ShardingError
from ..commands import Threads
from ..worker.core import Worker
from ..worker.threads import share
from .executor import Executor, WorkerInfo
from .local_loss import LocalLoss, LostMark, Slow


class LocalExecutor(LocalLoss, Executor):
    """Runs every worker in this process, one :class:`Worker` object each.

    Batches execute when flushed, exactly as they would on actors, so behaviour (ordering,
    deferred errors, exports) matches the Ray executor; only parallelism is missing.

    Examples
    --------
    >>> ex = LocalExecutor(2)
    >>> ex.num_workers
    2
    """

    kind = "local"

    def __init__(self, num_workers: int = 2, devices=None, threads: int = 1):
        devices = list(devices) if devices is not None else ["cpu"] * num_workers
        self._workers = [Worker(i, d, copy_exports=True) for i, d in enumerate(devices)]
        for w in self._workers:  # (BLAS takes the share; the kernels stay on this thread)
            w.threads_ok = False
        self._doom: dict = {}  # worker -> batches it still runs before it dies (lose)
        self._slow: dict = {}  # worker -> seconds each of its batches takes (stall)
        super().__init__(
            [
                WorkerInfo(i, f"sharded-worker-{i}", "local", d, threads)
                for i, d in enumerate(devices)
            ]
        )
        self.memory_bytes = host_memory_bytes()  # every worker lives in this process
        if threads > 1:  # (a CPU share of 1 is every worker's own default)
            self.send({w: [Threads(threads)] for w in range(len(devices))})

    @classmethod
    def open(cls, num_workers=None, devices=None, namespace=None, workers_per_node=None, **_):
        """``st.init(executor="local")``'s workers: ``(executor, owns_ray, address)``
        (``num_workers`` defaults to the ``devices`` given, else ``workers_per_node``, else
        2; this process is the one node, whose cores ``workers_per_node`` workers share;
        the Ray-only arguments are ignored).

        Examples
        --------
        >>> ex, owns_ray, address = LocalExecutor.open(num_workers=3)
        >>> ex.num_workers, owns_ray, address
        (3, False, None)
        """
        if namespace is not None:
            raise ArgumentError(
                f"namespace={namespace!r} needs executor='ray': in-process workers "
                "cannot be shared with other clients"
            )
        n = num_workers if num_workers is not None else (len(devices) if devices else None)
        n = n if n is not None else (workers_per_node or 2)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ShardingError(f"num_workers must be a positive int, got {n!r}")
        if devices is not None and len(devices) != n:
            raise ShardingError(f"{len(devices)} devices given for {n} workers")
        cores = share(os.cpu_count() or 1, n) if workers_per_node is not None else 1
        return cls(n, devices, cores), False, None

    def _dispatch(self, w, cmds, refs, nexp):
        if self._doom and w in self._doom:
            self._doom[w] -= 1
            if self._doom[w] < 0:
                del self._doom[w]
                self._workers[w] = None
        worker = self._workers[w]
        if worker is None or any(type(r) is LostMark for r in refs):
            # a dead actor, or a batch waiting on data a dead actor was to make: Ray fails
            # it without running it (the worker's later batches still run)
            return LostMark(w), [LostMark(w) for _ in range(nexp)]
        res = worker.run(cmds, *refs)
        errs, exps = (res[0], list(res[1:])) if nexp else (res, [])
        if self._slow and w in self._slow:  # (tests) its batch "finishes" later
            errs = Slow(w, errs, self._slow[w])
        return errs, exps

    def _stats(self, w):
        worker = self._workers[w]
        return LostMark(w) if worker is None else worker.stats()


# The container's memory limit, cgroup v2 then v1 (v1 says "no limit" with a huge number).
_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def host_memory_bytes() -> int | None:
    """This machine's physical memory (``SC_PHYS_PAGES * SC_PAGE_SIZE``), or the container's
    memory limit when that is smaller; None where neither can be read.

    The total, not the memory free now (``MemAvailable``): the bound then does not move with
    what other processes hold, and a tensor larger than the whole machine can never be made
    (one below it may still fail later, as it would in torch or NumPy).

    Examples
    --------
    >>> host_memory_bytes() > 0
    True
    """
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # (no sysconf, or not these names)
        total = None
    for path in _CGROUP_LIMITS:
        try:
            with open(path) as f:
                limit = f.read().strip()
        except OSError:
            continue
        if limit.isdigit() and (total is None or int(limit) < total):
            total = int(limit)
        break
    return total if total and total > 0 else None
