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

import contextlib
import ctypes
import ctypes.util
import os

from threadpoolctl import ThreadpoolController, threadpool_info

_SHARE: list = [None]  # the count set_threads set last (None: never called here)

# OpenBLAS's idle threads spin for 2**28 cycles (~0.1 s) after each call before they sleep. A
# worker that owns several cores loads two OpenBLAS builds, NumPy's (matmul) and SciPy's
# (LAPACK, host_blas's gemm with beta = 1): alternating them, the spinning threads of one took
# the cores the other's needed. On 2 cores, 1 worker x 2 threads: a 64-column weight gradient
# 0.16-0.18 s -> 0.06-0.09 s, the bench's MLP training step 0.64 s -> 0.35 s (2 workers x 1
# thread: 0.34 s). 2**20 cycles (~0.3 ms) keeps LAPACK's short calls fast, which a shorter
# spin does not (tall QR 2M x 64: 4.9 s at 2**16, 11.8 s at 2**12). OpenBLAS reads the
# variable when it loads, so it goes into the environment workers start with.
BLAS_ENV = {"OPENBLAS_THREAD_TIMEOUT": "20"}


@contextlib.contextmanager
def blas_env():
    """:data:`BLAS_ENV` in this process's environment (where not set already) while the block
    runs: the embedded Ray started inside it, and the workers it starts, inherit it; this
    process keeps its own BLAS as it is (loaded already) and its environment after.

    Examples
    --------
    >>> with blas_env():
    ...     "OPENBLAS_THREAD_TIMEOUT" in os.environ
    True
    """
    added = {k: v for k, v in BLAS_ENV.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


# glibc's allocator in a worker whose kernels run on several threads: blocks under 32 MiB come
# from its heaps and go back to them (M_MMAP_THRESHOLD: its most), free memory is kept up to
# 512 MiB (M_TRIM_THRESHOLD) and each growth asks 64 MiB more (M_TOP_PAD). By default a block
# of a few MB is mapped fresh and unmapped when freed: its pages fault in on first touch, and
# an unmap stops the threads running on other cores to flush their address translations.
# Threads of one process pay that where processes do not: argmin along a dim of a (1M, 10, 2)
# float64 tensor, 2 shards, 73 ms on 1 worker x 2 threads against 46 ms on 2 workers x 1;
# 47 ms with these. (Blocks from the worker's pool, 1 MiB and up, are reused either way.)
MALLOC_OPTS = ((-3, 32 << 20), (-1, 512 << 20), (-2, 64 << 20))  # (mallopt param, value)


def tune_malloc() -> bool:
    """Apply :data:`MALLOC_OPTS` to this process's allocator (glibc's ``mallopt``); False
    where there is no glibc (another C library, another OS): nothing changes then.

    Examples
    --------
    >>> tune_malloc() in (True, False)
    True
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return all(mallopt(param, value) == 1 for param, value in MALLOC_OPTS)


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
    stays in force)."""
    limit(ThreadpoolController(), n)
    _SHARE[0] = max(1, int(n))


def limit(controller: ThreadpoolController, n: int) -> None:
    """Set every pool ``controller`` found to ``n`` threads, whichever thread calls.

    threadpoolctl 3.6 and later let only the first thread that set a limit on a process-wide
    OpenBLAS pool set one again (the others' calls do nothing, silently). A worker sets its
    limits from whichever thread runs the batch (Ray's actor thread, the wire's), one batch
    at a time, so it takes that control back every time: without it, the lanes of a worker
    with 2 threads each ran OpenBLAS on 2 threads, 4 on 2 cores (tall QR 2M x 64 on 1 worker
    x 2 threads: 0.86-1.0 s, against 0.64-0.69 s on 2 workers x 1).

    Examples
    --------
    >>> from threadpoolctl import ThreadpoolController
    >>> limit(ThreadpoolController(), blas_threads() or 1)
    """
    for lib in controller.lib_controllers:
        clear = getattr(lib, "clear_controlling_thread", None)  # (threadpoolctl >= 3.6)
        if clear is not None:
            clear(force=True)
    controller.limit(limits=max(1, int(n)))


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
