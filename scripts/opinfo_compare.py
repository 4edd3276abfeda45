"""Compare sharded with torch's own operator database (OpInfo).

Every OpInfo of ``torch.testing._internal.common_methods_invocations.op_db`` is looked up in
sharded under torch's name (``torch.X`` -> ``st.X``, ``torch.linalg.X`` -> ``st.linalg.X``,
``torch.nn.functional.X`` -> ``st.nn.functional.X``, a tensor method -> ``ShardedTensor``'s),
and its samples run through both libraries:

- forward: ``sample_inputs`` in float32, float64, int64, bool and complex64 (those the op
  supports), each with every tensor whole and again split into 2 shards on dim 0 (where it has
  2+ rows); dtype, shape and values are compared with torch's default tolerance of the dtype,
  NaN where torch has NaN; random ops compare dtype and shape only. A float32 or complex64
  run whose values miss that tolerance still agrees when torch, run again in float64, shows
  sharded's float32 answer no further from the float64 one than twice torch's own float32
  answer is (``opinfo.convert.rounding_only``: another summation order of a matmul,
  convolution or attention); those runs are counted and printed apart;
- grad: float64 samples with ``requires_grad``; the gradient of the sum of the differentiable
  outputs (after the sample's ``output_process_fn_grad``) with respect to every input;
- error: ``error_inputs``, which sharded must refuse with a typed error: one of
  ``sharded.errors`` (all are ``RuntimeError`` and the ``ValueError``/``TypeError``/
  ``IndexError`` of their kind) or the same builtin class torch raises. The figure "torch's
  class" counts refusals that are also instances of the class torch raises.

Run it in a venv that has torch (sharded's tests never import torch)::

    PYTHONPATH=$PWD /path/to/torch-venv/bin/python scripts/opinfo_compare.py \\
        [--ops NAME ...] [--limit-samples K] [--executor local] [--json out.json]

It prints one summary line per category and the failures grouped by op with the first message.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", nargs="*", help="OpInfo names (or name.variant) to run; default all")
    p.add_argument("--limit-samples", type=int, default=None, help="samples per op and dtype")
    p.add_argument("--executor", default="local", choices=("local", "ray"))
    p.add_argument("--workers", type=int, default=2, help="workers (2: split placements are real)")
    p.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="seconds per OpInfo before its "
        "remaining samples are skipped (a running sample is never interrupted)",
    )
    p.add_argument("--json", help="write every record and the summary here")
    p.add_argument("--top", type=int, default=40, help="failing ops listed")
    return p.parse_args(argv)


def select(op_db, wanted):
    """The OpInfos named by ``--ops`` (a name selects all its variants)."""
    from opinfo.runner import label

    if not wanted:
        return list(op_db)
    chosen = [o for o in op_db if o.name in wanted or label(o) in wanted]
    unknown = set(wanted) - {o.name for o in chosen} - {label(o) for o in chosen}
    if unknown:
        sys.exit(f"unknown OpInfo names: {sorted(unknown)}")
    return chosen


def name_figures(op_db):
    """Public OpInfo names (see ``names.is_public``) and those sharded has."""
    from opinfo.names import is_public, sharded_target

    public = sorted({o.name for o in op_db if is_public(o)})
    missing = [n for n in public if sharded_target(n) is None]
    return public, missing


def pct(a, b):
    return f"{100.0 * a / b:.2f} %" if b else "n/a"


def summarize(records, public, missing, seconds):
    """Counts per category: ``{cat: {pass, fail, skip, ops, failing_ops}}`` and text lines."""
    from opinfo.convert import ROUNDING

    out = {"names": {"public": len(public), "found": len(public) - len(missing)}}
    lines = [
        f"names: {len(public) - len(missing)}/{len(public)} public OpInfo names exist in "
        f"sharded ({pct(len(public) - len(missing), len(public))})"
    ]
    for cat in ("forward", "grad", "error"):
        rs = [r for r in records if r["cat"] == cat]
        n = collections.Counter(r["status"] for r in rs)
        ran = n["pass"] + n["fail"]
        failing = sorted({r["op"] for r in rs if r["status"] == "fail"})
        out[cat] = dict(
            passed=n["pass"],
            failed=n["fail"],
            known=n["known"],
            skipped=n["skip"],
            ops=len({r["op"] for r in rs}),
            failing_ops=len(failing),
        )
        verb = "refused with a typed error" if cat == "error" else "agree"
        lines.append(
            f"{cat}: {n['pass']}/{ran} sample runs {verb} ({pct(n['pass'], ran)}); "
            f"{n['known']} known differences apart; {n['skip']} skipped; "
            f"{len(failing)} of {out[cat]['ops']} ops with a failure"
        )
        rounded = sum(1 for r in rs if r["status"] == "pass" and r.get("rounding"))
        if rounded:  # agreeing only to float32 rounding (opinfo.convert.rounding_only)
            out[cat]["rounding"] = rounded
            lines.append(
                f"{cat}: {rounded} of them float32 runs off torch's default tolerance whose "
                f"error against torch's float64 answer is at most "
                f"{ROUNDING:g}x torch's own; {n['pass'] - rounded}/{ran} "
                f"({pct(n['pass'] - rounded, ran)}) within the default tolerance"
            )
        if cat == "error":  # how many typed refusals are also the class torch raises
            same = sum(1 for r in rs if r["status"] == "pass" and r.get("same_class"))
            out[cat]["torch_class"] = same
            lines.append(f"error: {same}/{ran} are also an instance of torch's class")
    by_split = collections.Counter(
        (r["placement"], r["status"]) for r in records if r["cat"] == "forward"
    )
    for p in ("whole", "split"):
        ran = by_split[(p, "pass")] + by_split[(p, "fail")]
        ok = by_split[(p, "pass")]
        lines.append(f"forward {p}: {ok}/{ran} ({pct(ok, ran)})")
    lines.append(f"time: {seconds:.0f} s")
    return out, lines


def known_lines(records):
    """One line per (op, reason) of the known differences, with its count."""
    n = collections.Counter(
        (r["op"], r["msg"].split(":")[0]) for r in records if r["status"] == "known"
    )
    return [f"  {op}: {k} runs; {why}" for (op, why), k in sorted(n.items())]


def failures(records, top):
    """Lines of the ops with most failing runs: count per category and the first message."""
    per = collections.defaultdict(list)
    for r in records:
        if r["status"] == "fail":
            per[r["op"]].append(r)
    ranked = sorted(per.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    lines = []
    for op, rs in ranked[:top]:  # (known differences are listed apart: see known_lines)
        cats = collections.Counter(r["cat"] for r in rs)
        total = sum(1 for r in records if r["op"] == op and r["status"] != "skip")
        where = ", ".join(f"{c} {k}" for c, k in sorted(cats.items()))
        first = rs[0]
        lines.append(
            f"  {op}: {len(rs)}/{total} fail ({where}); first [{first['cat']} {first['dtype']} "
            f"{first['placement']}] {first['msg']}"
        )
    if len(ranked) > top:
        lines.append(f"  ... and {len(ranked) - top} more failing ops")
    return lines


def main(argv=None):
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    from opinfo.runner import OpRun
    from torch.testing._internal.common_methods_invocations import op_db

    import sharded as st

    kw = {"min_shard_bytes": 1 << 20}
    st.init(executor=args.executor, num_workers=args.workers, **kw)
    public, missing = name_figures(op_db)
    start = time.monotonic()
    records = []
    chosen = select(op_db, args.ops)
    for i, info in enumerate(chosen):
        t0 = time.monotonic()
        run = OpRun(info, args.limit_samples, args.budget)
        try:
            run.run()
        except Exception as e:  # a bug of the harness on one op must not end the run
            run.records.append(
                dict(
                    op=run.op,
                    cat="forward",
                    dtype="-",
                    placement="-",
                    status="skip",
                    msg=f"harness: {type(e).__name__}: {e}"[:200],
                )
            )
        records += run.records
        dt = time.monotonic() - t0
        if dt > 10:
            print(f"[{i + 1}/{len(chosen)}] {run.op}: {dt:.0f} s", file=sys.stderr, flush=True)
    if args.ops:
        sel = {o.name for o in chosen}
        public = [n for n in public if n in sel]
        missing = [n for n in missing if n in sel]
    summary, lines = summarize(records, public, missing, time.monotonic() - start)
    print("\n".join(lines))
    if missing:
        print(f"missing names ({len(missing)}): {' '.join(missing)}")
    if any(r["status"] == "known" for r in records):
        print("known differences (not counted as agreement):")
        print("\n".join(known_lines(records)))
    fail_lines = failures(records, args.top)
    if fail_lines:
        print("failing ops (failing runs/runs):")
        print("\n".join(fail_lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(summary=summary, missing=missing, records=records), f, indent=1)
    return summary


if __name__ == "__main__":
    main()
