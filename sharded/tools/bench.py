"""Benchmarks against NumPy and dask.array, measured in the same run (``sharded bench``).

Each case times sharded, NumPy and dask.array (threaded scheduler, one chunk per worker) on the
same data and prints seconds and ratios. Times are medians of ``repeat`` runs after a warm-up;
a sharded timing includes waiting for the workers (``st.synchronize()`` or a read).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

import sharded as st

from . import bench_attention
from .bench_algorithms import run as run_algorithms
from .bench_jit import run as run_jit
from .bench_linalg import run as run_linalg
from .bench_report import BenchError, check_plotting, parse_workers, plot, scaling, write_json
from .timing import dask_array, median_time, report, shard_slots, workers_label


def run(
    size: int = 50_000_000,
    repeat: int = 5,
    tiny_ops: int = 200,
    reshard_gb: float = 2.0,
    mlp_rows: int = 1_000_000,
    linalg: bool = True,
    out=print,
    ckpt_gb: float = 2.0,
    ckpt_dir=None,
    algorithms: bool = True,
    read_size: int = 1_000_000,
    attn_len: int = 4096,
) -> list:
    """Run the cases; returns rows ``(name, sharded_s, numpy_s, dask_s, target)``."""
    sess = st.init()
    nw = shard_slots(sess.executor)  # dask's chunks: one per shard
    da = dask_array()
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
        ts = median_time(f_st, repeat)
        keep.clear()
        tn = median_time(f_np, repeat)
        keep.clear()
        td = median_time(f_da, repeat) if da is not None else float("nan")
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

    # Fused in the workers: one blocked pass over memory where NumPy makes four.
    case(f"2*x + 3*y - 1 on {size:,}", st_expr, np_expr, da_expr, "<= 0.5 x numpy")
    case(
        f"sum of {size:,}",
        lambda: x.sum().item(),
        lambda: xn.sum(),
        lambda: xd.sum().compute(),
        "<= 1.0 x numpy",
    )
    if read_size:
        rows.append(_read_case(st, da, read_size, max(repeat, 20), nw))

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

    if tiny_ops:
        case(
            f"{tiny_ops} chained tiny ops (1,000 el, 4 shards)",
            st_tiny,
            np_tiny,
            da_tiny,
            "<= 0.05 s",
        )

    m, mn = x > 0.5, xn > 0.5
    md = xd > 0.5 if da is not None else None

    def st_mask():
        keep["r"] = None
        keep["r"] = x[m]
        st.synchronize()

    def np_mask():
        keep["r"] = None
        keep["r"] = xn[mn]

    def da_mask():
        keep["r"] = None
        keep["r"] = xd[md].persist()

    case(f"x[mask] of {size:,} (half selected)", st_mask, np_mask, da_mask, "")
    x = y = xn = yn = xd = yd = m = mn = md = None  # free the arrays before the reshard case
    keep.clear()
    if reshard_gb:
        rows.append(_reshard_case(st, da, reshard_gb, max(1, min(repeat, 3)), nw))
    if ckpt_gb:
        rows += _ckpt_case(st, ckpt_gb, max(1, min(repeat, 3)), ckpt_dir)
    if mlp_rows:
        rows += _mlp_case(st, mlp_rows, max(1, min(repeat, 3)), out)
    report(rows, workers_label(sess.executor), out)
    if tiny_ops or mlp_rows:  # st.jit against eager: 200 tiny ops, a 10,000 x 64 MLP step
        rows += run_jit(st, tiny_ops, 10_000 if mlp_rows else 0, max(repeat, 5), out)
    if linalg:
        rows += run_linalg(repeat=max(1, min(repeat, 3)), out=out)
    if algorithms:
        rows += run_algorithms(st, repeat=max(1, min(repeat, 3)), out=out)
    if attn_len:  # SDPA forward+backward, batch-split and sequence-split (ring attention)
        attn = bench_attention.cases(st, attn_len, max(1, min(repeat, 3)), out)
        report(attn, workers_label(sess.executor), out)
        rows += attn
    return rows


def _read_case(st, da, n: int, repeat: int, nw: int):
    """Latency of reading a small result: ``x.sum().item()`` of ``n`` float64 (the sum is
    queued, combined across the workers and read: the driver waits for it)."""
    st.manual_seed(5)
    x = st.rand(n, dtype=st.float64)
    xn = x.numpy()
    ts = median_time(lambda: x.sum().item(), repeat)
    tn = median_time(lambda: float(xn.sum()), repeat)
    td = float("nan")
    if da is not None:
        xd = da.from_array(xn, chunks=-(-n // nw)).persist()
        td = median_time(lambda: float(xd.sum().compute()), repeat)
    return (f"read latency x.sum().item() of {n:,}", ts, tn, td, "<= 0.0015 s")


def _mlp_case(st, n: int, repeat: int, out=print):
    """One training step (forward, backward, Adam) of a 64-64-1 MLP on ``n`` x 64 float32
    rows sharded over the workers, against the same step written in NumPy."""
    d, h = 64, 64
    st.manual_seed(2)
    X = st.randn(n, d)
    y = st.randn(n, 1)
    model = st.nn.Sequential(st.nn.Linear(d, h), st.nn.ReLU(), st.nn.Linear(h, 1))
    opt = st.optim.Adam(model.parameters(), lr=1e-3)
    t = {"fwd": [], "bwd": [], "opt": []}
    for i in range(repeat + 1):
        opt.zero_grad()
        t0 = time.perf_counter()
        loss = st.nn.functional.mse_loss(model(X), y)
        loss.item()
        t1 = time.perf_counter()
        loss.backward()
        st.synchronize()
        t2 = time.perf_counter()
        opt.step()
        st.synchronize()
        t3 = time.perf_counter()
        if i:  # the first step warms up
            t["fwd"].append(t1 - t0)
            t["bwd"].append(t2 - t1)
            t["opt"].append(t3 - t2)
    Xn, yn = X.numpy(), y.numpy()
    params = [p.detach().numpy() for p in model.parameters()]
    tn = {"fwd": [], "bwd": [], "opt": []}
    state = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    for i in range(repeat + 1):
        W1, b1, W2, b2 = params
        t0 = time.perf_counter()
        z = Xn @ W1.T + b1
        a = np.maximum(z, 0)
        pred = a @ W2.T + b2
        r = pred - yn
        float((r * r).mean())
        t1 = time.perf_counter()
        g = 2 * r / r.size
        gW2, gb2 = g.T @ a, g.sum(0)
        ga = (g @ W2) * (z > 0)
        gW1, gb1 = ga.T @ Xn, ga.sum(0)
        t2 = time.perf_counter()
        for k, (p, gp) in enumerate(zip(params, (gW1, gb1, gW2, gb2))):
            m, v = state[k]
            m[...] = 0.9 * m + 0.1 * gp
            v[...] = 0.999 * v + 0.001 * gp * gp
            p -= (
                1e-3
                / (1 - 0.9 ** (i + 1))
                * m
                / (np.sqrt(v) / np.sqrt(1 - 0.999 ** (i + 1)) + 1e-8)
            )
        t3 = time.perf_counter()
        if i:
            tn["fwd"].append(t1 - t0)
            tn["bwd"].append(t2 - t1)
            tn["opt"].append(t3 - t2)
    med = {k: statistics.median(v) for k, v in t.items()}
    medn = {k: statistics.median(v) for k, v in tn.items()}
    out(
        f"MLP {n:,}x{d} float32: backward/forward time ratio "
        f"{med['bwd'] / med['fwd']:.2f} (target <= 3)"
    )
    nan = float("nan")
    return [
        (f"MLP forward {n:,}x{d} f32", med["fwd"], medn["fwd"], nan, ""),
        (
            f"MLP backward {n:,}x{d} f32",
            med["bwd"],
            medn["bwd"],
            nan,
            f"bwd/fwd {med['bwd'] / med['fwd']:.2f} <= 3",
        ),
        (
            f"MLP train step (fwd+bwd+Adam) {n:,}x{d}",
            sum(med.values()),
            sum(medn.values()),
            nan,
            "vs numpy step",
        ),
    ]


def _reshard_case(st, da, gb: float, repeat: int, nw: int):
    """Row split -> column split of a square float64 matrix of ``gb`` GB, against NumPy's
    transposed copy and dask's rechunk; the name carries sharded's GB/s."""
    n = int((gb * 1e9 / 8) ** 0.5)
    st.manual_seed(1)
    a = st.rand(n, n, dtype=st.float64, dim=0)
    an = a.numpy()
    keep = {}

    def st_reshard():
        keep["r"] = None
        keep["r"] = a.reshard(dim=1)
        st.synchronize()

    def np_copy():
        keep["r"] = None
        keep["r"] = np.ascontiguousarray(an.T)

    ts = median_time(st_reshard, repeat)
    keep.clear()
    tn = median_time(np_copy, repeat)
    keep.clear()
    td = float("nan")
    if da is not None:
        ad = da.from_array(an, chunks=(-(-n // nw), n)).persist()
        td = median_time(lambda: ad.rechunk((n, -(-n // nw))).persist(), repeat)
        del ad
    return (
        f"reshard {n * n * 8 / 1e9:.1f} GB rows->cols ({n * n * 8 / ts / 1e9:.2f} GB/s)",
        ts,
        tn,
        td,
        "vs numpy a.T copy",
    )


def _ckpt_case(st, gb: float, repeat: int, directory=None):
    """``st.save``/``st.load`` of a float64 vector of ``gb`` GB (each worker writes and reads
    its own shards; saves are fsynced, loads CRC-checked) against ``np.save``/``np.load`` of
    the same array in one file; the names carry the GB/s of each, and of ``np.save`` followed
    by an fsync (what ``st.save`` does)."""
    n = int(gb * 1e9 / 8)
    st.manual_seed(4)
    x = st.rand(n, dtype=st.float64)
    xn = x.numpy()
    root = tempfile.mkdtemp(prefix="sharded-bench-", dir=directory)
    path, npy = os.path.join(root, "ckpt"), os.path.join(root, "x.npy")
    keep = {}

    def st_load():
        keep["r"] = None
        keep["r"] = st.load(path)
        st.synchronize()

    def np_save_synced():
        np.save(npy, xn)
        fd = os.open(npy, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)

    def np_load():
        keep["r"] = None
        keep["r"] = np.load(npy)

    try:
        ts = median_time(lambda: st.save(x, path), repeat)
        tn = median_time(lambda: np.save(npy, xn), repeat)
        tns = median_time(np_save_synced, repeat)
        tl = median_time(st_load, repeat)
        keep.clear()
        tnl = median_time(np_load, repeat)
        keep.clear()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    nb, nan = n * 8, float("nan")
    return [
        (
            f"st.save {nb / 1e9:.1f} GB ({nb / ts / 1e9:.2f} GB/s; np.save {nb / tn / 1e9:.2f}, "
            f"+fsync {nb / tns / 1e9:.2f})",
            ts,
            tn,
            nan,
            "fsynced, vs np.save",
        ),
        (
            f"st.load {nb / 1e9:.1f} GB ({nb / tl / 1e9:.2f} GB/s; np.load {nb / tnl / 1e9:.2f})",
            tl,
            tnl,
            nan,
            "CRC-checked, vs np.load",
        ),
    ]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="sharded bench", description=__doc__)
    p.add_argument("--size", type=int, default=50_000_000, help="elements of the big arrays")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per case (median)")
    p.add_argument(
        "--reshard-gb", type=float, default=2.0, help="size of the reshard case in GB (0 skips it)"
    )
    p.add_argument(
        "--ckpt-gb",
        type=float,
        default=2.0,
        help="size of the st.save/st.load case in GB (0 skips it)",
    )
    p.add_argument(
        "--ckpt-dir",
        default=None,
        help="directory for the checkpoint case (default: the system's temporary directory; "
        "on a cluster, one every node sees)",
    )
    p.add_argument(
        "--mlp-rows",
        type=int,
        default=1_000_000,
        help="rows of the MLP training-step case (0 skips it)",
    )
    p.add_argument(
        "--tiny-ops", type=int, default=200, help="length of the chain of tiny ops (0 skips it)"
    )
    p.add_argument(
        "--read-size",
        type=int,
        default=1_000_000,
        help="elements of the read-latency case x.sum().item() (0 skips it)",
    )
    p.add_argument(
        "--attn-len",
        type=int,
        default=4096,
        help="sequence length of the attention case, 4 x 8 heads x L x 64 float32 forward "
        "and backward (0 skips it)",
    )
    p.add_argument(
        "--no-linalg",
        action="store_true",
        help="skip the linear-algebra cases (matmul, QR, lstsq, solve)",
    )
    p.add_argument(
        "--no-algorithms",
        action="store_true",
        help="skip the data-dependent algorithm cases (sort, scans, top-k, gather...)",
    )
    p.add_argument("--address", default=None, help="Ray cluster address (default: embedded)")
    p.add_argument(
        "--workers",
        type=parse_workers,
        default=None,
        help="worker actors; a list (1,2) runs the whole benchmark once per count and "
        "prints each case's scaling efficiency",
    )
    p.add_argument(
        "--workers-per-node",
        type=int,
        default=None,
        help="st.init(workers_per_node=...): e.g. 1 runs one worker per node whose shards "
        "use the node's cores on threads (default: one worker per CPU)",
    )
    p.add_argument(
        "--executor",
        choices=("ray", "local"),
        default="ray",
        help="'local' runs the workers in this process (quick checks, no parallelism)",
    )
    p.add_argument("--json", metavar="FILE", default=None, help="also write the table as JSON")
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        default=None,
        help="also draw the sharded/numpy ratios as a bar chart (needs matplotlib: the "
        "[bench] extra)",
    )
    a = p.parse_args(argv)
    if a.plot:
        try:
            check_plotting()
        except BenchError as e:  # before the benchmark runs, not after minutes of it
            print(f"sharded bench: {e}", file=sys.stderr)
            return 2
    runs = []
    for n in a.workers or [None]:
        sess = st.init(
            address=a.address,
            num_workers=n,
            executor=a.executor,
            workers_per_node=a.workers_per_node,
        )
        try:
            rows = run(
                a.size,
                a.repeat,
                tiny_ops=a.tiny_ops,
                reshard_gb=a.reshard_gb,
                mlp_rows=a.mlp_rows,
                linalg=not a.no_linalg,
                ckpt_gb=a.ckpt_gb,
                ckpt_dir=a.ckpt_dir,
                algorithms=not a.no_algorithms,
                read_size=a.read_size,
                attn_len=a.attn_len,
            )
            runs.append((sess.executor.num_workers, rows))
        finally:
            st.shutdown()
    if len(runs) > 1:
        scaling(runs)
    if a.json:
        write_json(runs, a.json)
        print(f"wrote {a.json}")
    if a.plot:
        plot(runs, a.plot)
        print(f"wrote {a.plot}")
    return 0
