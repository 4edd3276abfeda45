"""``sharded bench --classic``: whole programs of the classic distributed-array workloads
(Black-Scholes, logistic regression, k-means, a 5-point stencil, Richardson-Lucy
deconvolution, sort + bincount + unique, Jacobi, conjugate gradient), each written in NumPy,
dask.array and sharded as their users would (:mod:`sharded.tools.bench_classic_cases`).

The inputs are placed first and not timed: sharded's big inputs split by rows over the
session's workers (one shard each), dask's into as many row blocks, persisted. A timed call
runs the whole program and brings its result back as NumPy (``.numpy()``,
``.compute()``). Each workload first runs once in every library and the dask and sharded
results are checked against NumPy's (a mismatch stops the run); that call is sharded's
*first call* (its code paths cold), reported apart. Then ``repeat`` rounds call NumPy,
dask and sharded in turn; the table shows their medians, the ratios, and the median CPU time
of the driver process during sharded's calls (``time.process_time``: on Ray the workers'
arithmetic is not in it; on the local executor it is).

Timings on a shared machine are noisy: read ratios near 1 as a tie.
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import time
from typing import NamedTuple

import numpy as np

import sharded as st

from ..errors import ShardedError
from .bench_classic_cases import WORKLOADS, Workload
from .bench_report import BenchError, check_plotting, finish_ratio_plot
from .timing import dask_array, shard_slots, title, workers_label

NAMES = tuple(w.name for w in WORKLOADS)


class MismatchError(ShardedError):
    """A workload's dask or sharded result differs from NumPy's."""


class Row(NamedTuple):
    """One workload's medians in seconds (``dask_s`` NaN without dask)."""

    label: str
    numpy_s: float
    dask_s: float
    sharded_s: float
    first_s: float
    cpu_s: float


def select(only) -> list:
    """The workloads named in ``only`` (``"a,b"``, in the table's order; None: all), or
    :class:`~sharded.tools.bench_report.BenchError` naming the unknown ones.

    Examples
    --------
    >>> [w.name for w in select("cg,kmeans")]
    ['kmeans', 'cg']
    """
    if only is None:
        return list(WORKLOADS)
    want = {p.strip() for p in only.split(",") if p.strip()}
    unknown = sorted(want - set(NAMES))
    if unknown or not want:
        raise BenchError(
            f"--only takes workload names separated by commas, got {only!r} "
            f"(unknown: {', '.join(unknown) or 'none given'}); names: {', '.join(NAMES)}"
        )
    return [w for w in WORKLOADS if w.name in want]


class Placed(NamedTuple):
    """A workload's inputs as each library takes them."""

    label: str
    numpy: tuple
    dask: tuple | None
    sharded: tuple


def place(w: Workload, scale: float, nw: int, da=None, seed: int = 0) -> Placed:
    """Make ``w``'s inputs at ``scale`` and place them: big arrays split by rows into ``nw``
    shards / dask row blocks (persisted); small arrays whole (``st.from_numpy``'s default
    placement; NumPy for dask), numbers as they are. ``da`` None: no dask inputs.

    Examples
    --------
    >>> import sharded as st
    >>> from sharded.tools.bench_classic import place, select
    >>> _ = st.init(executor="local", num_workers=2)
    >>> p = place(select("cg")[0], 1e-4, 2)
    >>> p.label, p.sharded[0].layout.num_shards, p.sharded[2]
    ('conjugate gradient (36x36 dense, 100 iters)', 2, 100)
    >>> st.shutdown()
    """
    label, big, small = w.make(scale, np.random.default_rng(seed))
    shards = [st.from_numpy(a, shards=min(nw, a.shape[0])) for a in big]
    st_small = [st.from_numpy(a) if isinstance(a, np.ndarray) else a for a in small]
    st.synchronize()  # (placing is queued work: not part of the first call's time)
    dk = None
    if da is not None:
        chunks = [(-(-a.shape[0] // nw),) + a.shape[1:] for a in big]
        dk = tuple(da.from_array(a, chunks=c).persist() for a, c in zip(big, chunks)) + small
    return Placed(label, tuple(big) + small, dk, tuple(shards + st_small))


def _as_tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def check(name: str, library: str, got, want, rtol: float) -> None:
    """Raise :class:`MismatchError` unless ``got`` matches ``want`` array by array: same
    shapes, values within ``rtol`` of the largest magnitude of each (``rtol`` 0: equal).

    Examples
    --------
    >>> check("w", "sharded", (np.ones(2),), (np.ones(2),), 1e-9)
    >>> check("w", "sharded", np.ones(2), np.zeros(2), 1e-9)
    Traceback (most recent call last):
    ...
    sharded.tools.bench_classic.MismatchError: w: sharded's result 0 differs from numpy's: \
max abs difference 1 (allowed 0)
    """
    got, want = _as_tuple(got), _as_tuple(want)
    if len(got) != len(want):
        raise MismatchError(f"{name}: {library} returned {len(got)} arrays, numpy {len(want)}")
    for i, (g, e) in enumerate(zip(got, want)):
        g = np.asarray(g)
        if g.shape != e.shape:
            raise MismatchError(
                f"{name}: {library}'s result {i} has shape {g.shape}, numpy's {e.shape}"
            )
        allowed = rtol * float(np.abs(e).max()) if e.size else 0.0
        diff = float(np.abs(g.astype(np.float64) - e).max()) if e.size else 0.0
        if not diff <= allowed:  # NaN fails too
            raise MismatchError(
                f"{name}: {library}'s result {i} differs from numpy's: max abs difference "
                f"{diff:.3g} (allowed {allowed:.3g})"
            )


def verify(w: Workload, p: Placed) -> float:
    """Run ``w`` once in every library, check dask's and sharded's results against NumPy's
    (:class:`MismatchError` if one differs); returns the seconds of sharded's call.

    Examples
    --------
    >>> import sharded as st
    >>> from sharded.tools.bench_classic import place, select, verify
    >>> _ = st.init(executor="local", num_workers=2)
    >>> w = select("black_scholes")[0]
    >>> verify(w, place(w, 1e-5, 2)) > 0
    True
    >>> st.shutdown()
    """
    want = w.numpy(*p.numpy)
    if p.dask is not None:
        check(w.name, "dask", w.dask(*p.dask), want, w.rtol)
    time.sleep(SETTLE_S)  # (as before every timed run: the others' threads spin a while)
    t = time.perf_counter()
    got = w.sharded(*p.sharded)
    first = time.perf_counter() - t
    check(w.name, "sharded", got, want, w.rtol)
    return first


# a pause before each timed run: the BLAS and thread-pool threads of the run before spin-wait
# for work a while after it returns (OpenBLAS's do), and would take cores from the next one
SETTLE_S = 0.2


def measure(w: Workload, scale: float, repeat: int, nw: int, da=None) -> Row:
    """:func:`verify` ``w``, then ``repeat`` rounds of NumPy, dask and sharded in turn."""
    p = place(w, scale, nw, da)
    first = verify(w, p)
    tn, td, ts, cpu = [], [], [], []
    for _ in range(repeat):
        time.sleep(SETTLE_S)
        t = time.perf_counter()
        w.numpy(*p.numpy)
        tn.append(time.perf_counter() - t)
        if p.dask is not None:
            time.sleep(SETTLE_S)
            t = time.perf_counter()
            w.dask(*p.dask)
            td.append(time.perf_counter() - t)
        time.sleep(SETTLE_S)
        t, c = time.perf_counter(), time.process_time()
        w.sharded(*p.sharded)
        ts.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    med = statistics.median
    return Row(p.label, med(tn), med(td) if td else math.nan, med(ts), first, med(cpu))


def table(rows, workers, repeat: int) -> str:
    """The printed table: medians, ratios, sharded's first call and driver CPU.

    Examples
    --------
    >>> print(table([Row("bs (8)", 2.0, 1.0, 0.5, 0.6, 0.1)], 2, 3))  # doctest: +ELLIPSIS
    classic workloads: 2 workers; median of 3 rounds; seconds
    workload   numpy s    dask s sharded s sh/numpy  sh/dask  first call (x steady)  drv cpu s
    ---...
    bs (8)      2.0000    1.0000    0.5000     0.25     0.50     0.6000 (1.20x)         0.1000
    """
    width = max([8] + [len(r.label) for r in rows])
    out = [
        f"classic workloads: {title(workers)}; median of {repeat} rounds; seconds",
        f"{'workload':{width}} {'numpy s':>9} {'dask s':>9} {'sharded s':>9} {'sh/numpy':>8} "
        f"{'sh/dask':>8}  {'first call (x steady)':21} {'drv cpu s':>10}",
    ]
    out.append("-" * len(out[1]))
    for r in rows:
        first = f"{r.first_s:9.4f} ({r.first_s / r.sharded_s:.2f}x)"
        out.append(
            f"{r.label:{width}} {r.numpy_s:9.4f} {r.dask_s:9.4f} {r.sharded_s:9.4f} "
            f"{r.sharded_s / r.numpy_s:8.2f} {r.sharded_s / r.dask_s:8.2f}  {first:21} "
            f"{r.cpu_s:10.4f}"
        )
    return "\n".join(out)


def run(names=None, scale: float = 1.0, repeat: int = 3, out=print) -> list:
    """Measure the workloads named in ``names`` (see :func:`select`) on the live session
    and print the table; returns its :class:`Row` s."""
    ex = st.init().executor
    nw = shard_slots(ex)  # (one shard per worker thread, as a default placement makes)
    da = dask_array()
    if da is None:
        out("dask is not installed: its column is nan (pip install 'sharded[bench]')")
    rows = []
    for w in select(names):
        rows.append(measure(w, scale, repeat, nw, da))
        out(f"  {rows[-1].label}: done")
        sys.stdout.flush()
        gc.collect()  # the last workload's inputs leave before the next one's arrive
    out(table(rows, workers_label(ex), repeat))
    return rows


def plot(rows, path) -> None:
    """A horizontal bar chart of sharded/numpy and sharded/dask per workload (log scale,
    parity at 1), written to ``path``."""
    plt = check_plotting()
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(rows) + 1.5))
    ys = np.arange(len(rows))
    ax.barh(ys - 0.2, [r.sharded_s / r.numpy_s for r in rows], 0.4, label="sharded / numpy")
    dask = [r.sharded_s / r.dask_s for r in rows]
    ax.barh(ys + 0.2, [0 if math.isnan(v) else v for v in dask], 0.4, label="sharded / dask")
    xlabel = "time ratio (below 1: sharded is faster)"
    finish_ratio_plot(plt, fig, ax, ys, [r.label for r in rows], xlabel, path, fontsize=8)


def _positive(kind):
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            v = None
        if v is None or not v > 0 or (kind is float and not math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got {text!r}")
        return v

    return parse


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="sharded bench --classic", description=__doc__)
    p.add_argument(
        "--scale",
        type=_positive(float),
        default=1.0,
        help="multiplies every workload's element count (0.01 for a quick run)",
    )
    p.add_argument("--repeat", type=_positive(int), default=3, help="timed rounds (median)")
    p.add_argument(
        "--only", default=None, metavar="NAME[,NAME]", help=f"workloads: {', '.join(NAMES)}"
    )
    p.add_argument("--address", default=None, help="Ray cluster address (default: embedded)")
    p.add_argument("--workers", type=_positive(int), default=None, help="worker actors")
    p.add_argument(
        "--executor",
        choices=("ray", "local"),
        default="ray",
        help="'local' runs the workers in this process (quick checks, no parallelism)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        default=None,
        help="also draw the ratios as a bar chart (needs matplotlib: the [bench] extra)",
    )
    a = p.parse_args(argv)
    try:
        select(a.only)
        if a.plot:
            check_plotting()  # before the benchmark runs, not after minutes of it
    except BenchError as e:
        print(f"sharded bench --classic: {e}", file=sys.stderr)
        return 2
    st.init(address=a.address, num_workers=a.workers, executor=a.executor)
    try:
        rows = run(a.only, a.scale, a.repeat)
    except MismatchError as e:
        print(f"sharded bench --classic: wrong result: {e}", file=sys.stderr)
        return 1
    finally:
        st.shutdown()
    if a.plot:
        plot(rows, a.plot)
        print(f"wrote {a.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
