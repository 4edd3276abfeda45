"""Benchmark of the FFT family: ``st.fft.fft`` of ``size`` complex128 split over the workers
(the four-step algorithm: three all-to-all transposes, worker to worker) against
``np.fft.fft`` and ``dask.array.fft.fft`` (which needs the transformed axis in one chunk),
timed in the same run.

``cases`` follows the row format of :mod:`sharded.tools.bench`: ``(name, sharded_s,
numpy_s, dask_s, target)``; the caller owns the session (``st.init()`` first).
"""

from __future__ import annotations

from .timing import median_time

SLOW_S = 20.0  # a run longer than this is not repeated


def cases(st, np, da, size: int = 1 << 24, repeat: int = 3) -> list:
    """Rows for a 1-D complex128 FFT of ``size`` points split evenly over the workers.

    Examples
    --------
    >>> import numpy as np
    >>> import sharded as st
    >>> rows = cases(st, np, None, size=1 << 10, repeat=1)
    >>> rows[0][0], rows[0][4]
    ('fft 1,024 complex128', 1.0)
    """
    rng = np.random.default_rng(0)
    a = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    # the default sharding (one shard per kernel thread: 2 on 1 worker x 2 threads too),
    # as a user's tensor would have; one per worker left a threaded worker's second core idle
    x = st.tensor(a)
    xd = da.from_array(a, chunks=size).persist() if da is not None else None
    keep = {}

    def st_fft():
        keep.clear()  # drop the last result first, as a loop rebinding it would
        keep["r"] = st.fft.fft(x)
        st.synchronize()

    def np_fft():
        keep.clear()
        keep["r"] = np.fft.fft(a)

    def da_fft():
        keep.clear()
        keep["r"] = da.fft.fft(xd).persist()

    ts = median_time(st_fft, repeat, SLOW_S)
    tn = median_time(np_fft, repeat, SLOW_S)
    td = median_time(da_fft, repeat, SLOW_S) if xd is not None else float("nan")
    keep.clear()
    return [(f"fft {size:,} complex128", ts, tn, td, 1.0)]
