"""The ``sharded`` command: ``demo``, ``info``, ``bench`` and ``service status|stop``.

Without ``--address`` (and without ``RAY_ADDRESS``) each command starts an embedded local Ray;
with one it joins that cluster. ``service`` needs a running cluster (default ``auto``);
``service status`` without ``--namespace`` tells what holds the cluster's CPUs, per namespace.
"""

from __future__ import annotations

import argparse
import os
import sys

import sharded as st

from .runtime.driver.session import service_cluster, service_status, service_stop
from .tools.bench import main as bench_main
from .tools.bench_classic import main as classic_main
from .tools.bench_scaling import main as scaling_main
from .tools.demo import tour


def _init(address, workers):
    if workers is None and not (address or os.environ.get("RAY_ADDRESS")):
        workers = max(2, os.cpu_count() or 1)  # the tour needs at least two workers
    return st.init(address=address, num_workers=workers)


def cmd_demo(args) -> int:
    _init(args.address, args.workers)
    try:
        tour(size=args.size)
    finally:
        st.shutdown()
    return 0


def cmd_info(args) -> int:
    _init(args.address, args.workers)
    try:
        info = st.info()
        print(f"executor: {info['executor']}   address: {info['address'] or 'embedded'}")
        print(f"nodes ({len(info['nodes'])}):")
        for n in info["nodes"]:
            extra = (
                ""
                if "cpus" not in n
                else (
                    f"  cpus {n['cpus']:g}  gpus {n['gpus']:g}  memory "
                    f"{n['memory_bytes'] / 2**30:.1f} GiB  object store "
                    f"{n['object_store_bytes'] / 2**30:.1f} GiB"
                )
            )
            print(f"  {n['node'][:16]}  {n['address']}{extra}")
        print(f"workers ({len(info['workers'])}):")
        for w in info["workers"]:
            print(
                f"  {w['name']:18} node {str(w['node'])[:8]}  {w['device']:6} pid {w['pid']:>7}"
                f"  rss {w['rss_bytes'] / 2**20:8.1f} MiB  live shards {w['live_shards']:>4}"
                f"  ({w['live_bytes'] / 2**20:.1f} MiB)"
            )
        print(f"live shards: {info['live_shards']}   bytes moved: {info['bytes_moved']}")
    finally:
        st.shutdown()
    return 0


def cmd_service(args) -> int:
    if args.action == "stop":
        if args.namespace is None:
            print("sharded service stop: --namespace is required", file=sys.stderr)
            return 2
        killed = service_stop(args.address, args.namespace)
        print(f"namespace {args.namespace!r}: stopped {len(killed)} actors")
        for name in killed:
            print(f"  {name}")
        return 0
    if args.namespace is None:
        return _cluster_status(args.address)
    info = service_status(args.address, args.namespace)
    if info is None:
        print(f"namespace {args.namespace!r}: no sharded service (no {'sharded-registry'!r})")
        return 1
    print(f"namespace {args.namespace!r}: clients {info['clients']}")
    print(f"workers ({len(info['workers'])}):")
    for w in info["workers"]:
        if "error" in w:
            print(f"  {w['name']:18} unreachable: {w['error']}")
            continue
        print(
            f"  {w['name']:18} node {str(w['node'])[:8]}  {w['device']:6} cpus {w['cpus']:g}  "
            f"rss {w['rss_bytes'] / 2**20:8.1f} MiB  shards {w['live_shards']:>4} "
            f"({w['live_bytes'] / 2**20:.1f} MiB)"
        )
    print(f"published ({len(info['published'])}):")
    for e in info["published"]:
        print(
            f"  {e['name']:20} v{e['version']:<4} shape {tuple(e['shape'])}  {e['dtype']:8} "
            f"{e['nbytes']:>12} bytes  holders {e['holders']}"
        )
    return 0


def _cluster_status(address) -> int:
    """``sharded service status`` without ``--namespace``: what holds the cluster's CPUs, per
    namespace, with each namespace's workers (what each reserves) and published names."""
    info = service_cluster(address)
    free = "" if info["free"] is None else f", {info['free']:g} free"
    print(f"cluster: {info['cpus']:g} CPUs{free}")
    held = {h["namespace"]: h for h in info["holders"]}
    spaces = info.get("namespaces", {})
    for ns in list(held) + [ns for ns in spaces if ns not in held]:
        h = held.get(ns) or dict(workers=0, others=0, cpus=0.0)
        space = spaces.get(ns) or dict(workers=[], published=None)
        others = f", {h['others']} other actors" if h["others"] else ""
        print(
            f"  namespace {ns!r}: {len(space['workers']) or h['workers']} sharded workers"
            f"{others}, {h['cpus']:g} CPUs"
        )
        for w in space["workers"]:
            gpus = f"  gpus {w['gpus']:g}" if w["gpus"] else ""
            where = f"node {w['node'][:8]}" if w["node"] else "not placed"
            state = "" if w["state"] == "ALIVE" else f"  {w['state'].lower()}"
            print(f"    {w['name']:20} {where:13} cpus {w['cpus']:g}{gpus}{state}")
        if space["published"] is not None:
            print(f"    published: {', '.join(space['published']) or '-'}")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:  # the benchmark parses its own options
        if "--scaling" in argv:  # driver cost per op and per read over 1..N workers
            return scaling_main([a for a in argv[1:] if a != "--scaling"])
        if "--classic" in argv:  # whole programs: Black-Scholes, k-means, CG... against both
            return classic_main([a for a in argv[1:] if a != "--classic"])
        return bench_main(argv[1:])
    p = argparse.ArgumentParser(prog="sharded", description="Sharded tensors on Ray actors.")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser(
        "bench",
        help="timings against numpy and dask.array (sharded bench --help lists its options)",
    )
    for name, fn, helptext in (
        ("demo", cmd_demo, "a tour of the tensor on >= 2 workers"),
        ("info", cmd_info, "nodes, workers, memory and live shards"),
    ):
        s = sub.add_parser(name, help=helptext)
        s.add_argument(
            "--address",
            default=None,
            help="Ray cluster to join (default: $RAY_ADDRESS, else embedded Ray)",
        )
        s.add_argument("--workers", type=int, default=None, help="number of worker actors")
        if name == "demo":
            s.add_argument(
                "--size",
                type=int,
                default=2_000_000,
                help="elements of the vectorized-vs-loop example",
            )
        s.set_defaults(fn=fn)
    s = sub.add_parser("service", help="a named namespace: status (workers, published) or stop")
    s.add_argument("action", choices=("status", "stop"))
    s.add_argument("--address", default=None, help="Ray cluster (default: $RAY_ADDRESS, auto)")
    s.add_argument(
        "--namespace",
        default=None,
        help="the namespace given to st.init (status without it: what holds the CPUs, "
        "per namespace; stop needs it)",
    )
    s.set_defaults(fn=cmd_service)
    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
