"""The C heap of a worker process: keep freed big blocks mapped for the next op.

glibc hands every block above ``M_MMAP_THRESHOLD`` (32 MiB at most by default) to a fresh
``mmap`` and returns it to the system when it is freed, and it trims the top of the heap
once more than ``M_TRIM_THRESHOLD`` of it is free. A worker's blocks are shards and their
temporaries (80 MB for 10M float64), so every op then pays the kernel for zeroing fresh
pages: measured on a destination of the sample sort (10M float64 with indices), 0.3-0.4 s
of system time on top of 0.95 s of user time, and none once freed blocks are reused. A
worker therefore serves blocks up to ``limit`` bytes from its heap and keeps up to ``limit``
bytes of free heap mapped (the buffer pool of :mod:`.worker` makes the same trade for the
blocks it recycles whole).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_memory(limit: int = 1 << 30) -> bool:
    """Keep up to ``limit`` bytes of freed heap mapped for reuse (glibc only): True when
    set, False where the C library has no ``mallopt`` (macOS, musl) or refuses a value.

    Examples
    --------
    >>> keep_freed_memory(1 << 30) in (True, False)
    True
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    limit = min(int(limit), 2**31 - 1)
    ok = mallopt(M_MMAP_THRESHOLD, limit) == 1
    return mallopt(M_TRIM_THRESHOLD, limit) == 1 and ok
