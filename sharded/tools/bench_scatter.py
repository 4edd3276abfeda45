"""Benchmark cases of the gather/scatter family: ``x[idx]`` and ``gather`` of random indices
along the split dim (every index block routed to the workers that own its rows, values routed
back; the driver reads no index value), against NumPy's fancy indexing and dask's ``take`` in
the same run."""

from __future__ import annotations

from .timing import median_time, shard_slots


def cases(st, np, da, size: int = 10_000_000, repeat: int = 3) -> list:
    """Rows ``(name, sharded_s, numpy_s, dask_s, target)`` of the gather cases (``size``
    indices into a ``size``-element float64 tensor split over the workers, through
    advanced indexing ``x[idx]`` and through ``st.gather``; NumPy's and dask's forms are
    the same for both).

    Examples
    --------
    >>> import numpy as np, sharded as st
    >>> from sharded.tools.bench_scatter import cases
    >>> rows = cases(st, np, None, size=1000, repeat=1)
    >>> [r[0] for r in rows]
    ['x[idx] of 1,000 indices along the split dim', 'gather of 1,000 indices along the split dim']
    """
    nw = shard_slots(st.runtime.driver.session.current().executor)
    st.manual_seed(0)
    x = st.rand(size, dtype=st.float64)
    idx = (st.rand(size, dtype=st.float64) * size).to(st.int64)
    xn, idn = x.numpy(), idx.numpy()
    xd = da.from_array(xn, chunks=-(-size // nw)).persist() if da is not None else None
    keep = {}

    def st_index():
        keep["r"] = None  # drop the last result first, as a loop rebinding it would
        keep["r"] = x[idx]
        st.synchronize()

    def st_gather():
        keep["r"] = None
        keep["r"] = st.gather(x, 0, idx)
        st.synchronize()

    def np_gather():
        keep["r"] = None
        keep["r"] = xn[idn]

    def da_gather():
        keep["r"] = None
        keep["r"] = da.take(xd, idn).persist()

    ti = median_time(st_index, repeat)
    keep.clear()
    ts = median_time(st_gather, repeat)
    keep.clear()
    tn = median_time(np_gather, repeat)
    keep.clear()
    td = median_time(da_gather, repeat) if da is not None else float("nan")
    keep.clear()
    end = f"{size:,} indices along the split dim"
    return [
        (f"x[idx] of {end}", ti, tn, td, "<= 1.5 x numpy"),
        (f"gather of {end}", ts, tn, td, "<= 1.5 x numpy"),
    ]
