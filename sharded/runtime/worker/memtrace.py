"""A worker's memory figures: its resident memory, and the traced peak of what its batches
allocate (``st.trace_memory``), with ``received=True`` the blocks mapped from the object
store included.

Examples
--------
>>> from sharded.runtime.worker.core import Worker
>>> w = Worker(0)
>>> w.rss_bytes() > 0 and w.traced_peak_bytes() is None
True
"""

from __future__ import annotations

import os
import sys
import tracemalloc

import numpy as np


class MemoryTrace:
    """The memory half of :class:`~.core.Worker` (a mixin: ``run`` and ``traced_peak`` are
    the worker's)."""

    def _batch_traced(self, run, refs):
        """``run()`` (a batch whose ``refs`` may be mapped, not allocated: Ray's object
        store hands large arrays over zero-copy): while tracing with ``received``, the
        batch's peak counts them, as they stay mapped until the batch ends (Ray holds a
        call's arguments until it returns). The trace alone would not see them at all."""
        mapped = _mapped_bytes(refs) if self.trace_received and tracemalloc.is_tracing() else 0
        if not mapped:
            return run()
        self.traced_peak = max(self.traced_peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.reset_peak()  # the peak of this batch alone, from here
        try:
            return run()
        finally:
            if tracemalloc.is_tracing():  # (the batch may have stopped tracing)
                peak = tracemalloc.get_traced_memory()[1] + mapped
                self.traced_peak = max(self.traced_peak, peak)
                tracemalloc.reset_peak()

    def traced_peak_bytes(self):
        """The most bytes allocated at once since tracing started (None: not tracing)."""
        if not tracemalloc.is_tracing():
            return None
        return max(self.traced_peak, tracemalloc.get_traced_memory()[1])

    @staticmethod
    def rss_bytes() -> int:
        """This process's resident memory in bytes."""
        return _rss_bytes()


def trace(on: bool) -> None:
    """Trace allocations (NumPy reports its data buffers too) from now on, or stop.

    Only blocks allocated while tracing count, so the peak is the extra memory an operation
    needed; data mapped from the object store is not an allocation: the worker adds it
    when asked (:meth:`~.core.Worker.run_mapped`)."""
    if on:
        if not tracemalloc.is_tracing():
            tracemalloc.start()
        tracemalloc.reset_peak()
        tracemalloc.clear_traces()
    elif tracemalloc.is_tracing():
        tracemalloc.stop()


def _mapped_bytes(refs) -> int:
    """Bytes of the arrays in ``refs`` (a batch's received values, or lists of them) that
    were handed over without a copy: read-only views of memory NumPy did not allocate."""
    total = 0
    for v in refs:
        for a in v if type(v) in (list, tuple) else (v,):
            if isinstance(a, np.ndarray) and not a.flags.owndata and not a.flags.writeable:
                total += a.nbytes
    return total


def rss_peak_bytes() -> int:
    """The most resident memory this process has held since it started."""
    import resource

    # ru_maxrss is in KiB on Linux, in bytes on macOS
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: report peak instead of current
        return rss_peak_bytes()
