"""Benchmark of attention: forward and backward of ``scaled_dot_product_attention`` on
(B, H, L, d) float32 query, key and value split over the workers along the batch dim and
along the sequence dim (ring attention), with the extra memory each worker needed.

The reference figure is torch's CPU ``scaled_dot_product_attention`` at the same thread
count, which the benchmark cannot run (torch is no dependency of sharded):
``scripts/bench_attention_torch.py`` times the same computation in an environment that has
torch. ``cases`` follows the row format of :mod:`sharded.tools.bench`: ``(name, sharded_s,
numpy_s, dask_s, target)``, with NaN for the NumPy and dask columns; the caller owns the
session (``st.init()`` first).
"""

from __future__ import annotations

import statistics
import time

SLOW_S = 60.0  # a run longer than this is not repeated


def _step(st, q, k, v, g):
    """Forward and backward once; the time includes waiting for the workers."""
    for t in (q, k, v):
        t.grad = None
    out = st.nn.functional.scaled_dot_product_attention(q, k, v)
    out.backward(g)
    st.synchronize()


def _inputs(st, shape, dim):
    st.manual_seed(3)
    q, k, v = (st.randn(*shape, dim=dim).requires_grad_() for _ in range(3))
    return q, k, v, st.randn(*shape, dim=dim)


def _time(st, ins, repeat):
    t = time.perf_counter()
    _step(st, *ins)  # warm-up
    first = time.perf_counter() - t
    if first > SLOW_S:
        return first
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        _step(st, *ins)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _peak_extra(st, ins) -> int:
    """The most extra memory any worker held over one step (traced allocations, in an
    untimed run: tracing slows every allocation down). Starting the trace empties the
    workers' pools of freed blocks: a kernel that took its output from a block an earlier
    step freed would allocate nothing the trace sees, and the step would look lighter than
    it is (the last step's gradients are dropped before, not into the traced pools). The
    blocks a worker received count too (ring attention's visiting key/value pieces and the
    gradient sums that travel with them): on Ray they come mapped from the object store,
    which the trace does not see, and the worker adds them to the peak of the batch that
    holds them (:func:`sharded.trace_memory`)."""
    for t in ins[:3]:
        t.grad = None
    st.trace_memory(received=True)
    try:
        _step(st, *ins)
        return max(w["traced_peak_bytes"] or 0 for w in st.stats()["workers"])
    finally:
        st.trace_memory(False)


def cases(st, length: int = 4096, repeat: int = 3, out=print, batch=4, heads=8, dim=64) -> list:
    """Rows for attention forward+backward at ``(batch, heads, length, dim)`` float32,
    batch-split then sequence-split; prints the sequence/batch ratio and each split's peak
    extra memory per worker against the inputs per worker (query, key, value and the
    output's gradient).

    Examples
    --------
    >>> import sharded as st
    >>> rows = cases(st, length=64, repeat=1, out=lambda s: None, batch=2, heads=1, dim=8)
    >>> [r[0] for r in rows]
    ['attention fwd+bwd 2x1x64x8 f32, batch split', 'attention fwd+bwd 2x1x64x8 f32, seq split']
    """
    shape = (batch, heads, length, dim)
    nw = st.runtime.driver.session.current().executor.num_workers
    per_worker = 4 * batch * heads * length * dim * 4 / nw
    name = f"attention fwd+bwd {'x'.join(map(str, shape))} f32"
    rows, times, peaks = [], {}, {}
    for split, d in (("batch", 0), ("seq", 2)):
        ins = _inputs(st, shape, d)
        times[split] = _time(st, ins, repeat)
        peaks[split] = _peak_extra(st, ins)
        del ins
        rows.append((f"{name}, {split} split", times[split], float("nan"), float("nan"), ""))
    ratio = times["seq"] / times["batch"]
    out(f"{name}: sequence/batch split time ratio {ratio:.2f} (target <= 1.5)")
    for split, peak in peaks.items():
        out(
            f"{name}, {split} split: peak extra memory per worker {peak / 2**20:.1f} MiB, "
            f"{peak / per_worker:.2f} x its inputs ({per_worker / 2**20:.1f} MiB; target < 2)"
        )
    rss = [w.get("rss_peak_bytes") for w in st.stats()["workers"]]
    if all(rss):  # the whole process's peak since it started, earlier cases included
        out(f"peak resident memory per worker: {', '.join(f'{r / 2**20:.0f} MiB' for r in rss)}")
    return rows
