"""Benchmarks against NumPy and dask.array, measured in the same run (``sharded bench``).

Each case times sharded, NumPy and dask.array (threaded scheduler, one chunk per worker) on the
same data and prints seconds and ratios. Times are medians of ``repeat`` runs after a warm-up;
a sharded timing includes waiting for the workers (``st.synchronize()`` or a read).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _median_time(fn, repeat: int) -> float:
    fn()  # warm-up: first-touch page faults, imports, actor code paths
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _dask():
    try:
        import dask
        import dask.array as da
        dask.config.set(scheduler="threads")
        return da
    except ImportError:
        return None


def run(size: int = 50_000_000, repeat: int = 5, tiny_ops: int = 200, out=print) -> list:
    """Run the cases; returns rows ``(name, sharded_s, numpy_s, dask_s, target)``."""
    import sharded as st

    sess = st.init()
    nw = sess.executor.num_workers
    da = _dask()
    st.manual_seed(0)
    x = st.rand(size, dtype=st.float64)
    y = st.rand(size, dtype=st.float64)
    xn, yn = x.numpy(), y.numpy()
    xd = yd = None
    if da is not None:
        xd = da.from_array(xn, chunks=-(-size // nw)).persist()
        yd = da.from_array(yn, chunks=-(-size // nw)).persist()
    rows = []
    keep = {}

    def case(name, f_st, f_np, f_da, target):
        ts = _median_time(f_st, repeat)
        keep.clear()
        tn = _median_time(f_np, repeat)
        keep.clear()
        td = _median_time(f_da, repeat) if da is not None else float("nan")
        keep.clear()
        rows.append((name, ts, tn, td, target))

    def st_add():
        keep["r"] = None  # drop the last result first, as a loop rebinding it would
        keep["r"] = x + y
        st.synchronize()

    def np_add():
        keep["r"] = None
        keep["r"] = xn + yn

    def da_add():
        keep["r"] = None
        keep["r"] = (xd + yd).persist()

    case(f"add {size:,} float64", st_add, np_add, da_add, "<= 0.8 x numpy")

    def st_expr():
        keep["r"] = None
        keep["r"] = 2 * x + 3 * y - 1
        st.synchronize()

    def np_expr():
        keep["r"] = None
        keep["r"] = 2 * xn + 3 * yn - 1

    def da_expr():
        keep["r"] = None
        keep["r"] = (2 * xd + 3 * yd - 1).persist()

    case(f"2*x + 3*y - 1 on {size:,}", st_expr, np_expr, da_expr, "")
    case(f"sum of {size:,}", lambda: x.sum().item(), lambda: xn.sum(),
         lambda: xd.sum().compute(), "<= 1.0 x numpy")

    def st_tiny():
        z = st.zeros(1000, shards=4)
        for _ in range(tiny_ops):
            z = z + 1
        return z.numpy()

    def np_tiny():
        z = np.zeros(1000, dtype=np.float32)
        for _ in range(tiny_ops):
            z = z + 1
        return z

    def da_tiny():
        z = da.zeros(1000, chunks=250, dtype=np.float32)
        for _ in range(tiny_ops):
            z = z + 1
        return z.compute()

    case(f"{tiny_ops} chained tiny ops (1,000 el, 4 shards)", st_tiny, np_tiny, da_tiny,
         "<= 0.05 s")
    report(rows, nw, out)
    return rows


def report(rows, num_workers, out=print) -> None:
    out(f"sharded benchmark: {num_workers} workers; median of repeated runs; seconds")
    head = f"{'case':44} {'sharded':>9} {'numpy':>9} {'dask':>9} {'/numpy':>7} {'/dask':>7}  target"
    out(head)
    out("-" * len(head))
    for name, ts, tn, td, target in rows:
        out(f"{name:44} {ts:9.4f} {tn:9.4f} {td:9.4f} {ts / tn:7.2f} {ts / td:7.2f}  {target}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="sharded bench", description=__doc__)
    p.add_argument("--size", type=int, default=50_000_000, help="elements of the big arrays")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per case (median)")
    p.add_argument("--address", default=None, help="Ray cluster address (default: embedded)")
    p.add_argument("--workers", type=int, default=None, help="number of worker actors")
    a = p.parse_args(argv)
    import sharded as st
    st.init(address=a.address, num_workers=a.workers)
    try:
        run(a.size, a.repeat)
    finally:
        st.shutdown()
    return 0
