"""Benchmark cases of ``st.jit``: a jitted function against the same function run eagerly.

Two cases, as issue 17 states them: the chain of 200 tiny elementwise ops (target <= 5 ms a
call) and a training step (forward, backward, SGD with momentum) of a 64-64-1 MLP on
10,000 x 64 float32 rows (target: the jitted step >= 1.5 x faster than the eager one). Each
time includes waiting for the workers; driver CPU (``time.process_time``) is printed too,
since the wall time on a busy machine is noisy.
"""

from __future__ import annotations

import statistics
import time

from .timing import median_time


def _cpu_time(fn, repeat: int) -> float:
    """Median driver CPU seconds of ``fn`` (after the warm-up calls :func:`median_time` made)."""
    out = []
    for _ in range(repeat):
        c = time.process_time()
        fn()
        out.append(time.process_time() - c)
    return statistics.median(out)


def _pair(st, name, make, repeat, target, warm=4):
    """Time the eager and the jitted function ``make()`` returns; returns the row for the
    main table and the line of this one."""
    eager, jitted, stats = make()
    for _ in range(warm):  # traces until two agree, then replays
        jitted()
    te, tj = median_time(eager, repeat), median_time(jitted, repeat)
    ce, cj = _cpu_time(eager, repeat), _cpu_time(jitted, repeat)
    line = (
        f"{name:46} {te:9.4f} {tj:9.4f} {te / tj:7.2f}  {ce * 1e3:8.2f} {cj * 1e3:8.2f}  "
        f"{target}  (replays {stats['replays']})"
    )
    # a row of the main table: its numpy column holds the eager time
    return (f"jit: {name} (numpy col: eager)", tj, te, float("nan"), target), line


def run(st, tiny_ops: int = 200, rows: int = 10_000, repeat: int = 5, out=print) -> list:
    """Run both cases, print their table (eager vs jitted), return the rows."""

    def tiny():
        z0 = st.zeros(1000, shards=4)

        def chain(z):
            for _ in range(tiny_ops):
                z = z + 1
            return z

        jc = st.jit(chain)
        return (lambda: chain(z0).numpy()), (lambda: jc(z0).numpy()), jc.stats

    def mlp():
        st.manual_seed(2)
        X, y = st.randn(rows, 64), st.randn(rows, 1)
        eager, jitted = _step(st), st.jit(_step(st))

        def run_eager():
            eager(X, y)
            st.synchronize()

        def run_jitted():
            jitted(X, y)
            st.synchronize()

        return run_eager, run_jitted, jitted.stats

    cases = []
    if tiny_ops:
        cases.append((f"{tiny_ops} chained tiny ops (1,000 el, 4 shards)", tiny, "<= 0.005 s"))
    if rows:
        cases.append((f"MLP training step {rows:,} x 64 (SGD)", mlp, ">= 1.5 x eager"))
    head = (
        f"{'st.jit case':46} {'eager s':>9} {'jit s':>9} {'speedup':>7}  "
        f"{'cpu ms e':>8} {'cpu ms j':>8}  target"
    )
    out(head)
    out("-" * len(head))
    out_rows = []
    for name, make, target in cases:
        row, line = _pair(st, name, make, repeat, target)
        out(line)
        out_rows.append(row)
    return out_rows


def _step(st):
    """A training step (zero_grad, forward, MSE loss, backward, SGD with momentum) of a
    freshly initialized 64-64-1 MLP (the same weights on every call: seeded)."""
    st.manual_seed(3)
    model = st.nn.Sequential(st.nn.Linear(64, 64), st.nn.ReLU(), st.nn.Linear(64, 1))
    opt = st.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step(x, t):
        opt.zero_grad()
        loss = st.nn.functional.mse_loss(model(x), t)
        loss.backward()
        opt.step()
        return loss

    return step
