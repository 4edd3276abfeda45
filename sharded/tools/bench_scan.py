"""Benchmark of the scan family: ``cumsum`` of ``size`` float64 against ``np.cumsum`` and
``dask.array.cumsum`` (one chunk per worker), timed in the same run.

``cases`` follows the row format of :mod:`sharded.tools.bench`: ``(name, sharded_s,
numpy_s, dask_s, target)``; the caller owns the session (``st.init()`` first).
"""

from __future__ import annotations

from .timing import median_time, shard_slots


def cases(st, np, da, size=50_000_000, repeat=5) -> list:
    """Rows for ``cumsum`` of ``size`` float64 (split dim, the carry exchanged between
    workers), against NumPy and dask.array.

    Examples
    --------
    >>> import numpy as np
    >>> import sharded as st
    >>> rows = cases(st, np, None, size=1000, repeat=1)
    >>> rows[0][0], rows[0][4]
    ('cumsum 1,000 float64', '<= 1.0 x numpy')
    """
    nw = shard_slots(st.runtime.driver.session.current().executor)
    st.manual_seed(0)
    x = st.rand(size, dtype=st.float64)
    xn = x.numpy()
    xd = da.from_array(xn, chunks=-(-size // nw)).persist() if da is not None else None
    keep = {}

    def st_cumsum():
        keep["r"] = None  # drop the last result first, as a loop rebinding it would
        keep["r"] = x.cumsum(0)
        st.synchronize()

    def np_cumsum():
        keep["r"] = None
        keep["r"] = np.cumsum(xn)

    def da_cumsum():
        keep["r"] = None
        keep["r"] = xd.cumsum(0).persist()

    ts = median_time(st_cumsum, repeat)
    keep.clear()
    tn = median_time(np_cumsum, repeat)
    keep.clear()
    td = median_time(da_cumsum, repeat) if da is not None else float("nan")
    keep.clear()
    return [(f"cumsum {size:,} float64", ts, tn, td, "<= 1.0 x numpy")]
