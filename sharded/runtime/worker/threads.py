"""BLAS/OpenMP threads of a worker process: its share of the node's cores.

Ray starts every actor with ``OMP_NUM_THREADS`` set to the actor's CPU reservation (1), and
OpenBLAS reads that variable when NumPy loads it: each worker multiplies matrices on one
thread, so two workers on a 4-core node leave half the cores idle. ``threadpoolctl`` changes
the count of the already loaded libraries (OpenBLAS, MKL, OpenMP runtimes), so a worker sets
its own at start and again once the executor knows how many workers share its node
(``share = node CPUs // workers on the node``, at least 1: no oversubscription). The same
share sizes the worker's kernel pool, which runs its shards' commands on threads
(:mod:`.parallel`).
"""

from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits

_SHARE: list = [None]  # the count set_threads set last (None: never called here)


def share(node_cpus, workers_on_node: int) -> int:
    """One worker's share of its node's cores.

    Examples
    --------
    >>> share(16, 2), share(2, 4), share(0, 1)
    (8, 1, 1)
    """
    return max(1, int(node_cpus) // max(1, int(workers_on_node)))


def set_threads(n: int) -> None:
    """Limit every BLAS and OpenMP pool loaded in this process to ``n`` threads (the limit
    stays in force: the returned context is not exited)."""
    threadpool_limits(limits=max(1, int(n)))
    _SHARE[0] = max(1, int(n))


def cpu_share() -> int:
    """The threads this process's own parallel kernels may use (:mod:`scipy.fft`'s
    ``workers``): the count :func:`set_threads` set last, else its BLAS's thread count
    (``OMP_NUM_THREADS`` or the cores), else 1.

    Examples
    --------
    >>> cpu_share() >= 1
    True
    """
    if _SHARE[0] is None:
        _SHARE[0] = blas_threads() or 1
    return _SHARE[0]


def blas_threads():
    """The thread count of this process's BLAS (the largest over the loaded BLAS
    libraries), or None when none is loaded.

    Examples
    --------
    >>> blas_threads() >= 1
    True
    """
    counts = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
    return max(counts) if counts else None
