"""Check a freshly started cluster: a sharded computation whose shards span its nodes.

    python -m cluster.smoke [--workers N] [--shards S] [--size N] [--min-nodes K]

Connects with ``st.init()`` (so ``RAY_ADDRESS`` picks the cluster), computes on a sharded
``arange``, compares with NumPy, and prints one JSON line (``"sharded-smoke": {...}``) with the
results and where each shard lived.  Exits 1 when a value differs from NumPy or the shards sit
on fewer than ``--min-nodes`` Ray nodes.  The Slurm and multi-host tests run exactly this.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


def run(workers: int | None = None, shards: int = 4, size: int = 12) -> dict:
    """Run the computation on the cluster ``st.init()`` connects to; return a JSON-able report.

    Examples
    --------
    >>> report = run(workers=4, shards=4)  # doctest: +SKIP
    >>> report["ok"], len(report["nodes"])  # doctest: +SKIP
    (True, 2)
    """
    import numpy as np

    import sharded as st

    st.init(num_workers=workers) if workers else st.init()
    try:
        x = st.arange(size, dtype=st.float64, shards=shards)
        total = x.sum().item()
        doubled = (x * 2 + 1).numpy()
        placement = x.placement()
    finally:
        st.shutdown()
    ref = np.arange(size, dtype=np.float64)
    ok = bool(np.isclose(total, ref.sum()) and np.allclose(doubled, ref * 2 + 1))
    return {
        "ok": ok,
        "sum": total,
        "expected_sum": float(ref.sum()),
        "doubled": doubled.tolist(),
        "nodes": sorted({str(p["node"]) for p in placement}),
        "placement": [
            {k: (list(v) if isinstance(v, tuple) else v) for k, v in p.items()} for p in placement
        ],
    }


def parse_report(output: str) -> dict:
    r"""The report a run printed, found in ``output`` (e.g. a Slurm job's output file).

    Raises
    ------
    ValueError
        No ``{"sharded-smoke": ...}`` line in ``output``.

    Examples
    --------
    >>> parse_report('noise\n{"sharded-smoke": {"ok": true}}\n')
    {'ok': True}
    """
    for line in reversed(output.splitlines()):
        if line.startswith('{"sharded-smoke"'):
            return json.loads(line)["sharded-smoke"]
    raise ValueError(f"no sharded-smoke report in {len(output)} characters of output")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cluster.smoke", description=__doc__.split("\n")[0])
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker actors (default: sharded's, one per CPU of the cluster)",
    )
    p.add_argument("--shards", type=int, default=4, help="shards of the tensor (default 4)")
    p.add_argument("--size", type=int, default=12, help="elements (default 12)")
    p.add_argument(
        "--min-nodes",
        type=int,
        default=1,
        help="fail unless the shards sit on at least this many nodes (default 1)",
    )
    args = p.parse_args(argv)
    report = run(args.workers, args.shards, args.size)
    print(json.dumps({"sharded-smoke": report}, default=str), flush=True)
    if not report["ok"]:
        print("sharded smoke: results differ from numpy", file=sys.stderr)
        return 1
    if len(report["nodes"]) < args.min_nodes:
        print(
            f"sharded smoke: shards on {len(report['nodes'])} nodes, wanted at least "
            f"{args.min_nodes}",
            file=sys.stderr,
        )
        return 1
    print(
        f"sharded smoke: ok, {args.shards} shards on {len(report['nodes'])} nodes", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
