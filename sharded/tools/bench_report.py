"""What ``sharded bench`` does with its table besides printing it: JSON (``--json``), a bar
chart of the ratios (``--plot``, matplotlib from the ``[bench]`` extra, imported only then)
and, over several worker counts (``--workers 1,2``), each case's scaling efficiency.

A run is ``(workers, rows)`` with rows ``(name, sharded_s, numpy_s, dask_s, target)`` as
:func:`sharded.tools.timing.report` prints them.
"""

from __future__ import annotations

import argparse
import json
import math

from ..errors import ArgumentError


class BenchError(ArgumentError):
    """A benchmark option that cannot be honoured (a malformed list, a missing plotter)."""


def parse_workers(text: str) -> list:
    """``"1,2"`` -> ``[1, 2]``: worker counts, each a positive int (argparse type).

    Examples
    --------
    >>> parse_workers("1,2"), parse_workers("4")
    ([1, 2], [4])
    """
    try:
        counts = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        counts = []
    if not counts or any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(
            f"--workers takes positive ints separated by commas (e.g. 1,2), got {text!r}"
        )
    return counts


def _num(v):
    """JSON has no NaN: a case that did not run (NaN) is null."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _ratio(a, b):
    return a / b if b and not math.isnan(a) and not math.isnan(b) else float("nan")


def to_dict(runs) -> dict:
    """The runs as plain data: per run its worker count and cases, with both ratios.

    Examples
    --------
    >>> to_dict([(2, [("add", 1.0, 2.0, float("nan"), "t")])])["runs"][0]["cases"][0]
    {'name': 'add', 'sharded_s': 1.0, 'numpy_s': 2.0, 'dask_s': None, 'ratio_numpy': 0.5, \
'ratio_dask': None, 'target': 't'}
    """
    out = {
        "runs": [
            {
                "workers": nw,
                "cases": [
                    {
                        "name": name,
                        "sharded_s": _num(ts),
                        "numpy_s": _num(tn),
                        "dask_s": _num(td),
                        "ratio_numpy": _num(_ratio(ts, tn)),
                        "ratio_dask": _num(_ratio(ts, td)),
                        "target": target,
                    }
                    for name, ts, tn, td, target in rows
                ],
            }
            for nw, rows in runs
        ]
    }
    if len(runs) > 1:
        out["scaling"] = [
            {"name": name, "efficiency": {str(nw): _num(e) for nw, e in effs.items()}}
            for name, effs in efficiencies(runs).items()
        ]
    return out


def write_json(runs, path) -> None:
    """Write :func:`to_dict` of ``runs`` to ``path``."""
    with open(path, "w") as f:
        json.dump(to_dict(runs), f, indent=1)


def efficiencies(runs) -> dict:
    """Strong-scaling efficiency of each case: ``t(b) * b / (t(n) * n)`` against the first
    worker count ``b`` (1.0: ``n`` workers are ``n / b`` times faster). Cases are matched
    by name; a case missing from a run is left out of it.

    Examples
    --------
    >>> efficiencies([(1, [("a", 2.0, 1, 1, "")]), (2, [("a", 1.25, 1, 1, "")])])
    {'a': {1: 1.0, 2: 0.8}}
    """
    base_nw, base = runs[0][0], {r[0]: r[1] for r in runs[0][1]}
    out: dict = {}
    for nw, rows in runs:
        for name, ts, *_ in rows:
            if name in base:
                out.setdefault(name, {})[nw] = _ratio(base[name] * base_nw, ts * nw)
    return out


def scaling(runs, out=print) -> None:
    """Print each case's time and scaling efficiency for every worker count."""
    counts = [nw for nw, _ in runs]
    times = [{r[0]: r[1] for r in rows} for _, rows in runs]
    eff = efficiencies(runs)
    out(f"scaling efficiency over {', '.join(map(str, counts))} workers: t(b)*b / (t(n)*n)")
    head = f"{'case':50}" + "".join(f" {f't({n})':>9}" for n in counts)
    head += "".join(f" {f'eff({n})':>8}" for n in counts[1:])
    out(head)
    out("-" * len(head))
    for name, effs in eff.items():
        line = f"{name[:50]:50}" + "".join(f" {t.get(name, float('nan')):9.4f}" for t in times)
        line += "".join(f" {effs.get(n, float('nan')):8.2f}" for n in counts[1:])
        out(line)


def check_plotting():
    """matplotlib's ``pyplot`` on the file-only backend, or :class:`BenchError` saying how
    to install it (it is an optional dependency: the ``[bench]`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise BenchError(
            f"--plot needs matplotlib ({e}); install it with pip install 'sharded[bench]'"
        ) from None
    return plt


def plot(runs, path) -> None:
    """A horizontal bar chart of sharded/numpy time per case (one bar per worker count),
    log-scaled, with the parity line at 1, written to ``path``."""
    plt = check_plotting()
    names = [r[0] for r in runs[0][1]]
    for _, rows in runs[1:]:
        names += [r[0] for r in rows if r[0] not in names]
    height = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(names) * max(1, len(runs)) + 1.5))
    for j, (nw, rows) in enumerate(runs):
        ratio = {r[0]: _ratio(r[1], r[2]) for r in rows}
        ys = [i + j * height for i in range(len(names))]
        vals = [ratio.get(n, float("nan")) for n in names]
        ax.barh(ys, [0 if math.isnan(v) else v for v in vals], height, label=f"{nw} workers")
    ticks = [i + height * (len(runs) - 1) / 2 for i in range(len(names))]
    finish_ratio_plot(
        plt, fig, ax, ticks, names, "sharded time / numpy time (lower is faster)", path
    )


def finish_ratio_plot(plt, fig, ax, ticks, labels, xlabel, path, fontsize=7) -> None:
    """The common end of the benchmarks' ratio charts: parity line at 1, the case labels
    top to bottom, a log x axis, the legend; written to ``path`` and closed."""
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=fontsize)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
