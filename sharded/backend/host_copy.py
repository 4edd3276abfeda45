"""Copies of large host arrays into one result on several threads.

A read of a large tensor ends in a copy of its shards into one new array. On a virtual machine
whose freed memory goes back to the hypervisor (free page reporting), the first touch of each
fresh page costs a fault in the host, and those faults, not the copy, set the time: ~0.45
GB/s on one thread of a 2-core VM, twice that on two. NumPy releases the GIL while it copies,
so splitting the copy over threads divides that time as well as the copy's own.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

PARALLEL_MIN_BYTES = 8 << 20  # below this a copy is quicker than handing it to threads
MAX_THREADS = 4  # page faults and memory bandwidth stop scaling beyond a few cores

_pool = None
_pool_pid = None  # the process that made it: a forked child's copy has no threads
_pool_lock = threading.Lock()


def _threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not on Linux)
        cores = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, cores))


def _executor() -> ThreadPoolExecutor:
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(_threads(), thread_name_prefix="sharded-copy")
            _pool_pid = os.getpid()
        return _pool


def _chunks(dst: np.ndarray, src: np.ndarray, parts: int):
    """``(dst, src)`` cut into about ``parts`` pieces along their first dim longer than 1."""
    dims = [d for d, n in enumerate(dst.shape) if n > 1]
    if parts <= 1 or not dims:
        return [(dst, src)]
    d = dims[0]
    n = dst.shape[d]
    step = -(-n // min(parts, n))
    if src.ndim != dst.ndim or src.shape[d] != n:  # (a broadcast source: copied whole)
        return [(dst, src)]
    out = []
    for s in range(0, n, step):
        sl = (slice(None),) * d + (slice(s, s + step),)
        out.append((dst[sl], src[sl]))
    return out


def _put(dst, src) -> None:
    dst[...] = src  # (an assignment's casting, as the one-thread path)


def assemble(out: np.ndarray, pieces) -> np.ndarray:
    """Copy each ``(index, array)`` of ``pieces`` into ``out[index]``; returns ``out``.

    ``index`` is a tuple of slices (``()``: all of ``out``).

    Copies of ``PARALLEL_MIN_BYTES`` or more in all run on up to ``MAX_THREADS`` threads
    (each piece cut along its first long dim so that even one piece spreads); smaller ones run
    here. The values are the same either way: each element is copied once.

    Examples
    --------
    >>> import numpy as np
    >>> from sharded.backend.host_copy import assemble
    >>> out = np.empty(4)
    >>> assemble(out, [((slice(0, 2),), np.array([1.0, 2.0])), ((slice(2, 4),), np.zeros(2))])
    array([1., 2., 0., 0.])
    """
    # (a trailing Ellipsis keeps a 0-d result's index a view, not a scalar)
    pairs = [(out[(*idx, ...)], np.asarray(a)) for idx, a in pieces]
    threads = _threads()
    if threads == 1 or out.nbytes < PARALLEL_MIN_BYTES:
        for dst, src in pairs:
            dst[...] = src
        return out
    per = max(1, -(-threads // len(pairs)))  # (chunks per piece: every thread gets work)
    jobs = [c for dst, src in pairs for c in _chunks(dst, src, per)]
    # (the caller's thread takes the last chunk itself rather than waiting idle)
    futures = [_executor().submit(_put, dst, src) for dst, src in jobs[:-1]]
    _put(*jobs[-1])
    for f in futures:
        f.result()
    return out
