"""Benchmark case of the order-statistics family: topk(100) of a float64 vector against
``np.argpartition`` (rows in :mod:`sharded.tools.bench`'s format)."""

from __future__ import annotations

from .timing import median_time


def cases(st, np, da, size, repeat):
    """``[(name, sharded_s, numpy_s, dask_s, target)]`` for topk(100) of ``size`` float64.

    Examples
    --------
    >>> import numpy as np, sharded as st
    >>> st.init(executor="local", num_workers=2)  # doctest: +ELLIPSIS
    Session(...)
    >>> cases(st, np, None, 10_000, 1)[0][0]
    'topk(100) of 10,000 float64'
    """
    x = st.rand(size, dtype=st.float64)
    xn = x.numpy()
    keep = {}

    def st_topk():
        keep["r"] = None
        keep["r"] = st.topk(x, 100)
        st.synchronize()

    def np_topk():
        keep["r"] = None
        i = np.argpartition(xn, size - 100)[size - 100 :]
        keep["r"] = (xn[i], i)

    def da_topk():
        keep["r"] = None
        keep["r"] = da.topk(da.from_array(xn, chunks=-(-size // 2)), 100).compute()

    ts = median_time(st_topk, repeat)
    tn = median_time(np_topk, repeat)
    td = median_time(da_topk, repeat) if da is not None else float("nan")
    keep.clear()
    return [(f"topk(100) of {size:,} float64", ts, tn, td, "<= 0.6 x np.argpartition")]
