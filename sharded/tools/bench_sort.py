"""Sorting-family benchmarks against NumPy and dask.array, measured in the same run.

Cases (the issue's targets, <= 0.7 x NumPy): the sorts of 20M float64, each against the
NumPy call that gives the same (``msort`` and ``sort(x).values``: ``np.sort``; ``v, i =
sort(x)``: a stable ``np.argsort`` and a take; ``argsort``: a stable ``np.argsort``), and
unique of 20M int64 (<= 1.0 x ``np.unique``). Every sharded case reads what it times (the
values and indices of ``sort`` are made when first read).
sharded's operands are split evenly over the workers; dask gets one chunk per worker.
Rows are ``(name, sharded_s, numpy_s, dask_s, target)`` as in :mod:`sharded.tools.bench`.
"""

from __future__ import annotations

from .timing import median_time

SLOW_S = 20.0  # a run longer than this is not repeated


def cases(st, np, da, size: int = 20_000_000, repeat: int = 3) -> list:
    """Time the sorts and unique of ``size`` elements; returns the rows.

    Examples
    --------
    >>> import numpy as np, sharded as st
    >>> rows = cases(st, np, None, size=1000, repeat=1)
    >>> [r[0].split()[0] for r in rows]
    ['msort', 'sort(x).values', 'sort', 'argsort', 'unique']
    """
    rng = np.random.default_rng(0)
    keep = {}
    rows = []

    def case(name, f_st, f_np, f_da, target):
        def wrap(f):
            def g():
                keep.clear()  # drop the last result first, as a loop rebinding it would
                keep["r"] = f()

            return g

        ts = median_time(wrap(f_st), repeat, SLOW_S)
        tn = median_time(wrap(f_np), repeat, SLOW_S)
        td = median_time(wrap(f_da), repeat, SLOW_S) if f_da is not None else float("nan")
        keep.clear()
        rows.append((name, ts, tn, td, target))

    a = rng.random(size)
    # the default sharding (one shard per kernel thread: 2 on 1 worker x 2 threads too),
    # as a user's tensor would have; one per worker left a threaded worker's second core idle
    held = {"x": st.tensor(a)}

    def timed(f):
        def g():
            r = f(held["x"])
            st.synchronize()
            return r

        return g

    def np_both():
        i = np.argsort(a, kind="stable")
        return a[i], i

    def st_both(x):
        v, i = st.sort(x)  # unpacking makes both in one pass
        return v, i

    # dask.array has no full sort: its column stays NaN
    m = f"{size / 1e6:g}M float64"
    case(f"msort {m} (values)", timed(st.msort), lambda: np.sort(a), None, 0.7)
    case(f"sort(x).values {m}", timed(lambda x: st.sort(x).values), lambda: np.sort(a), None, 0.7)
    case(f"sort {m}: v, i = sort(x)", timed(st_both), np_both, None, 0.7)
    case(f"argsort {m}", timed(st.argsort), lambda: np.argsort(a, kind="stable"), None, 0.7)
    held.clear()
    b = rng.integers(0, size // 2 or 1, size)
    y = st.tensor(b)

    def st_unique():
        r = st.unique(y)
        st.synchronize()
        return r

    nc = len(y.layout.shards())  # dask's chunks: as many as sharded's shards
    bd = da.from_array(b, chunks=-(-size // nc)).persist() if da is not None else None
    case(
        f"unique {size / 1e6:g}M int64",
        st_unique,
        lambda: np.unique(b),
        (lambda: da.unique(bd).compute()) if bd is not None else None,
        1.0,
    )
    return rows
