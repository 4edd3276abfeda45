"""Benchmark cases of the data-dependent algorithms (one module per family, each with a
``cases(st, np, da, size, repeat)`` function), at the sizes the targets are stated for."""

from __future__ import annotations

import numpy as np

from . import bench_fft, bench_order, bench_scan, bench_scatter, bench_sort
from .timing import dask_array, report, workers_label

# (family module, elements) in the order the table prints them
FAMILIES = [
    (bench_sort, 20_000_000),
    (bench_scan, 50_000_000),
    (bench_order, 50_000_000),
    (bench_scatter, 10_000_000),
    (bench_fft, 1 << 24),
]


def run(st, repeat: int = 3, scale: float = 1.0, out=print) -> list:
    """Run every family's cases (sizes times ``scale``), print their table, return the rows."""
    da = dask_array()
    rows = []
    for module, size in FAMILIES:
        rows += module.cases(st, np, da, max(1000, int(size * scale)), repeat)
    report(rows, workers_label(st.runtime.current().executor), out)
    return rows
