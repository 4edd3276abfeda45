"""Linear-algebra benchmarks against NumPy and dask.array, measured in the same run.

Cases (the issues' targets): matmul 4096^2 float64 (<= 1.0 x numpy), QR of 2,000,000 x 64
float64 (<= 0.2 x numpy.linalg.qr), lstsq of the same, solve of 8192^2 (<= 1.0 x numpy).
sharded's operands are made by ``st.rand`` in the default layout (rows split over the
workers); dask gets the same data in one row chunk per worker (its ``tsqr`` needs one column
of blocks). Times are medians of ``repeat`` runs after a warm-up, except the slow NumPy and
dask runs (above :data:`SLOW_S` seconds), which are timed once. A dask case that cannot run
here (``dask.array.linalg.solve`` needs SciPy, installed with sharded) reports NaN.

Worker BLAS threads: Ray starts each actor with ``OMP_NUM_THREADS`` set to its CPUs (1), so
OpenBLAS would run one thread per worker; each worker raises its own to its share of the
node's cores (``node CPUs // workers on the node``, :mod:`sharded.runtime.worker.threads`), so the
workers together use every core without oversubscribing, as NumPy in the driver does.
"""

from __future__ import annotations

import math

import numpy as np

import sharded as st

from .timing import dask_array, median_time, report, shard_slots, workers_label

SLOW_S = 8.0  # a run longer than this is not repeated


def _time(fn, repeat: int) -> float:
    return median_time(fn, repeat, SLOW_S)


def run(
    repeat: int = 3,
    out=print,
    n_mm: int = 4096,
    m_qr: int = 2_000_000,
    k_qr: int = 64,
    n_solve: int = 8192,
) -> list:
    """Run the cases; returns rows ``(name, sharded_s, numpy_s, dask_s, target)``.

    Examples
    --------
    >>> from sharded.tools.bench_linalg import run
    >>> rows = run(1, out=lambda s: None, n_mm=64, m_qr=1000, k_qr=4, n_solve=64)
    ... # doctest: +SKIP
    """
    sess = st.init()
    nw = shard_slots(sess.executor)  # dask's chunks: one per shard
    da = dask_array()
    rows, keep = [], {}

    def case(name, f_st, f_np, f_da, target):
        def wrap(f):
            def g():
                keep.clear()  # drop the last result first, as a loop rebinding it would
                keep["r"] = f()

            return g

        ts = _time(wrap(f_st), repeat)
        tn = _time(wrap(f_np), repeat)
        td = float("nan")
        if da is not None and f_da is not None:
            try:
                td = _time(wrap(f_da), repeat)
            except ImportError:  # dask's routine needs SciPy
                td = float("nan")
        keep.clear()
        rows.append((name, ts, tn, td, target))
        out(f"  {name}: sharded {ts:.3f}s numpy {tn:.3f}s dask {td:.3f}s")

    def chunks(n, m):
        return (math.ceil(n / nw), m)

    # ---------------------------------------------------------------- matmul
    st.manual_seed(0)
    a = st.rand(n_mm, n_mm, dtype=st.float64)
    b = st.rand(n_mm, n_mm, dtype=st.float64)
    an, bn = a.numpy(), b.numpy()
    ad = bd = None
    if da is not None:
        ad = da.from_array(an, chunks=chunks(n_mm, n_mm)).persist()
        bd = da.from_array(bn, chunks=chunks(n_mm, n_mm)).persist()

    def st_mm():
        r = a @ b
        st.synchronize()
        return r

    case(
        f"matmul {n_mm}x{n_mm} float64",
        st_mm,
        lambda: an @ bn,
        (lambda: (ad @ bd).persist()) if da is not None else None,
        "<= 1.0 x numpy",
    )
    a = b = an = bn = ad = bd = None

    # ---------------------------------------------------------------- tall QR and lstsq
    x = st.rand(m_qr, k_qr, dtype=st.float64)
    y = st.rand(m_qr, dtype=st.float64)
    xn, yn = x.numpy(), y.numpy()
    xd = yd = None
    if da is not None:
        xd = da.from_array(xn, chunks=chunks(m_qr, k_qr)).persist()
        yd = da.from_array(yn, chunks=(math.ceil(m_qr / nw),)).persist()

    def st_qr():
        q, r = st.linalg.qr(x)
        st.synchronize()
        return q, r

    def da_qr():
        q, r = da.linalg.qr(xd)
        return q.persist(), r.persist()

    case(
        f"qr {m_qr:,}x{k_qr} float64",
        st_qr,
        lambda: np.linalg.qr(xn),
        da_qr if da is not None else None,
        "<= 0.2 x numpy",
    )

    def st_lstsq():
        s = st.linalg.lstsq(x, y)
        st.synchronize()
        return s

    def da_lstsq():
        return [t.persist() for t in da.linalg.lstsq(xd, yd)]

    case(
        f"lstsq {m_qr:,}x{k_qr} float64",
        st_lstsq,
        lambda: np.linalg.lstsq(xn, yn, rcond=None),
        da_lstsq if da is not None else None,
        "",
    )
    x = y = xn = yn = xd = yd = None

    # ---------------------------------------------------------------- solve
    big = st.rand(n_solve, n_solve, dtype=st.float64)
    rhs = st.rand(n_solve, dtype=st.float64)
    bign, rhsn = big.numpy(), rhs.numpy()
    bd_ = rd = None
    if da is not None:
        c = math.ceil(n_solve / nw)  # (dask's LU takes square blocks only)
        bd_ = da.from_array(bign, chunks=(c, c)).persist()
        rd = da.from_array(rhsn, chunks=(math.ceil(n_solve / nw),)).persist()

    def st_solve():
        s = st.linalg.solve(big, rhs)
        st.synchronize()
        return s

    case(
        f"solve {n_solve}x{n_solve} float64",
        st_solve,
        lambda: np.linalg.solve(bign, rhsn),
        (lambda: da.linalg.solve(bd_, rd).persist()) if da is not None else None,
        "<= 1.0 x numpy",
    )
    big = rhs = bign = rhsn = bd_ = rd = None
    keep.clear()
    report(rows, workers_label(sess.executor), out)
    return rows
