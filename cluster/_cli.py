"""Command line of :mod:`cluster.ray_cluster` (``python -m cluster.ray_cluster ROLE ...``).

``head`` and ``worker`` *exec* ``ray start --block`` so that the process a launcher started
(srun, Docker, a test) is the Ray node itself: its SIGTERM reaches Ray directly and stops the
node's processes, and its exit means the node is gone.  Every option's default can come from an
environment variable (``ENV_VARS``), which is how docker-compose and the Docker image set them.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from cluster import ray_cluster as rc
from cluster.auth import DEFAULT_TOKEN_FILE, resolve_auth

_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_bytes(text: str) -> int:
    """Parse ``"2000000"``, ``"512M"``, ``"2g"`` or ``"1.5GiB"`` (binary units) into bytes.

    Examples
    --------
    >>> parse_bytes("2G")
    2147483648
    """
    raw = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = raw[-1] if raw and raw[-1] in _UNITS else ""
    number = raw[: len(raw) - len(unit)]
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size like 2000000, 512M or 2G"
        ) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive, got {text!r}")
    return int(value)


def _env(key: str, default=None):
    value = os.environ.get(rc.ENV_VARS[key], "")
    return value if value != "" else default


def _env_bool(key: str) -> bool:
    return str(_env(key, "0")).lower() in ("1", "true", "yes", "on")


def _add_auth_options(p: argparse.ArgumentParser, head: bool = False) -> None:
    v = rc.ENV_VARS
    p.add_argument(
        "--no-auth",
        action="store_true",
        default=_env_bool("no_auth"),
        help="run without Ray's token authentication: whoever reaches the ports runs code on "
        f"the cluster (${v['no_auth']}=1)",
    )
    p.add_argument(
        "--token-file",
        default=_env("token_file"),
        help=f"file holding the cluster's auth token, mode 0600 (default {DEFAULT_TOKEN_FILE}"
        + (", created when missing" if head else ", copied from the head")
        + f"; a token in RAY_AUTH_MODE=token/RAY_AUTH_TOKEN wins; ${v['token_file']})",
    )
    if head:
        p.add_argument(
            "--new-token",
            action="store_true",
            default=_env_bool("new_token"),
            help=f"replace the token file with a fresh token (${v['new_token']}=1)",
        )


def _add_node_options(p: argparse.ArgumentParser) -> None:
    v = rc.ENV_VARS
    p.add_argument(
        "--num-cpus",
        type=float,
        default=_env("num_cpus"),
        help=f"CPUs this node offers (default: Ray detects; ${v['num_cpus']})",
    )
    p.add_argument(
        "--num-gpus",
        type=int,
        default=_env("num_gpus"),
        help="GPUs this node offers (default: CUDA_VISIBLE_DEVICES, else nvidia-smi; "
        f"${v['num_gpus']})",
    )
    p.add_argument(
        "--object-store-memory",
        type=parse_bytes,
        default=_env("object_store_memory"),
        help="object store size, e.g. 2G (default: Ray's, 30%% of RAM; "
        f"${v['object_store_memory']})",
    )
    p.add_argument(
        "--node-ip-address",
        default=_env("node_ip_address"),
        help=f"address other nodes use for this one (${v['node_ip_address']})",
    )
    p.add_argument(
        "--interface",
        default=_env("interface"),
        help=f"take the node address from this interface, e.g. ib0 (${v['interface']})",
    )
    p.add_argument(
        "--temp-dir",
        default=_env("temp_dir"),
        help="private directory for this node's Ray files (Ray's own temp dir is DIR/ray): "
        "made mode 0700, refused when another user's or open to group/others "
        f"(default: Ray's shared /tmp/ray; ${v['temp_dir']})",
    )
    p.add_argument(
        "--ray-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for `ray start`, repeatable (e.g. --ray-arg=--node-manager-port=6800)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the ray start command instead of running it"
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m cluster.ray_cluster`` argument parser (tests check compose against it)."""
    v = rc.ENV_VARS
    top = argparse.ArgumentParser(
        prog="python -m cluster.ray_cluster",
        description="Start, join, wait for and stop the Ray cluster that sharded runs on.",
    )
    sub = top.add_subparsers(dest="role", required=True, metavar="ROLE")

    head = sub.add_parser("head", help="run a Ray head node in the foreground")
    head.add_argument(
        "--port",
        type=int,
        default=int(_env("port", rc.DEFAULT_PORT)),
        help=f"GCS port, the cluster address's port (default %(default)s; ${v['port']})",
    )
    head.add_argument(
        "--client-port",
        type=int,
        default=int(_env("client_port", rc.DEFAULT_CLIENT_PORT)),
        help=f"Ray Client server port (default %(default)s; ${v['client_port']})",
    )
    head.add_argument(
        "--dashboard",
        action=argparse.BooleanOptionalAction,
        default=_env_bool("dashboard"),
        help=f"run the Ray dashboard (needs ray[default]; ${v['dashboard']})",
    )
    head.add_argument(
        "--dashboard-port",
        type=int,
        default=int(_env("dashboard_port", rc.DEFAULT_DASHBOARD_PORT)),
        help=f"dashboard port (default %(default)s; ${v['dashboard_port']})",
    )
    head.add_argument(
        "--dashboard-host",
        default=_env("dashboard_host", rc.DEFAULT_DASHBOARD_HOST),
        help="address the dashboard listens on (default %(default)s: this machine only; "
        f"the node's address or 0.0.0.0 opens it to the network; ${v['dashboard_host']})",
    )
    head.add_argument(
        "--client-host",
        default=_env("client_host", rc.DEFAULT_CLIENT_HOST),
        help="address the Ray Client server listens on (default %(default)s: this machine "
        f"only; the node's address or 0.0.0.0 opens it to the network; ${v['client_host']})",
    )
    _add_node_options(head)
    _add_auth_options(head, head=True)

    worker = sub.add_parser("worker", help="run a Ray worker node joining a head")
    worker.add_argument(
        "--address",
        default=_env("address"),
        required=_env("address") is None,
        help=f"head's HOST:PORT (${v['address']})",
    )
    worker.add_argument(
        "--connect-timeout",
        type=float,
        default=float(_env("timeout", rc.DEFAULT_WAIT_TIMEOUT)),
        help="seconds to wait for the head to accept connections (default %(default)s)",
    )
    _add_node_options(worker)
    _add_auth_options(worker)

    wait = sub.add_parser(
        "wait", help="wait until N nodes are alive; exit 1 naming how many arrived on timeout"
    )
    wait.add_argument(
        "--address",
        default=_env("address"),
        required=_env("address") is None,
        help=f"head's HOST:PORT (${v['address']})",
    )
    wait.add_argument(
        "--nodes",
        type=int,
        default=int(_env("nodes", 1)),
        help=f"alive nodes to wait for, head included (default %(default)s; ${v['nodes']})",
    )
    wait.add_argument(
        "--timeout",
        type=float,
        default=float(_env("timeout", rc.DEFAULT_WAIT_TIMEOUT)),
        help=f"seconds (default %(default)s; ${v['timeout']})",
    )
    wait.add_argument(
        "--this-node",
        action="store_true",
        help="also require a node with this machine's IP (a worker's healthcheck)",
    )
    wait.add_argument("--ip", default=None, help="also require an alive node with this IP")
    wait.add_argument(
        "--json",
        action="store_true",
        help='print {"alive": [nodes], "error": text} as the last line',
    )
    _add_auth_options(wait)

    client = sub.add_parser(
        "client",
        help="join with a 0-CPU node, wait for the cluster, run a driver command "
        "with RAY_ADDRESS set, then leave (a Ray driver must run on a Ray node)",
    )
    client.add_argument(
        "--address",
        default=_env("address"),
        required=_env("address") is None,
        help=f"head's HOST:PORT (${v['address']})",
    )
    client.add_argument(
        "--nodes",
        type=int,
        default=int(_env("nodes", 1)),
        help="cluster nodes to wait for, not counting this client "
        f"(default %(default)s; ${v['nodes']})",
    )
    client.add_argument(
        "--timeout",
        type=float,
        default=float(_env("timeout", rc.DEFAULT_WAIT_TIMEOUT)),
        help="seconds to wait for the nodes (default %(default)s)",
    )
    client.add_argument("--temp-dir", default=_env("temp_dir"), help="root of Ray's files")
    _add_auth_options(client)
    client.add_argument(
        "command", nargs=argparse.REMAINDER, help="driver command (default: sharded demo)"
    )

    ip = sub.add_parser("node-ip", help="print the IP other nodes should use for this one")
    ip.add_argument("--interface", default=_env("interface"), help="take it from this interface")
    ip.add_argument("--towards", default=None, help="HOST[:PORT] of a peer to route towards")

    stop = sub.add_parser("stop", help="stop Ray nodes on this machine")
    stop.add_argument(
        "--temp-dir",
        default=_env("temp_dir"),
        help="stop only processes using this Ray temp dir (without it: `ray stop`, "
        "which stops every Ray process of this user on this machine)",
    )
    stop.add_argument(
        "--timeout",
        type=float,
        default=rc.DEFAULT_STOP_TIMEOUT,
        help="seconds before SIGKILL (default %(default)s)",
    )
    return top


def _node_kwargs(args: argparse.Namespace) -> dict:
    return dict(
        object_store_memory=args.object_store_memory,
        num_cpus=args.num_cpus,
        num_gpus=args.num_gpus,
        temp_dir=args.temp_dir,
        ray_args=args.ray_arg,
    )


def _exec(argv: Sequence[str], dry_run: bool) -> int:
    if dry_run:
        print(" ".join(argv))
        return 0
    sys.stdout.flush()
    # replace this process (see module doc); the head's `-m cluster._ray_start` needs the root
    os.execve(argv[0], list(argv), rc._with_root_on_path(rc.ray_env()))


def _use_auth(args: argparse.Namespace, head: bool = False) -> str:
    """Put the role's ``RAY_AUTH_*`` into this process's environment (which ``ray start``, the
    waiters and the client's driver inherit); return where the token comes from."""
    if getattr(args, "dry_run", False):
        return "a token resolved when run for real"  # no file made, no environment changed
    updates, source = resolve_auth(
        os.environ,
        no_auth=args.no_auth,
        token_file=args.token_file,
        create=head,
        new=head and args.new_token,
        required=args.role != "wait",
    )
    for key, value in updates.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    return source


def _head_notice(args: argparse.Namespace, ip: str, source: str) -> str:
    """What the head prints: how workers, drivers and Ray Client users get in."""
    addr = f"{ip}:{args.port}"
    lines = [f"sharded: Ray head at {addr}"]
    if args.no_auth:
        lines.append(
            "sharded: WARNING: token authentication is off (--no-auth): anyone who reaches this "
            "node's Ray ports can run any code on the cluster as this user"
        )
    elif os.environ.get("RAY_AUTH_TOKEN_PATH") and "RAY_AUTH_TOKEN_PATH" not in source:
        path = os.environ["RAY_AUTH_TOKEN_PATH"]
        lines += [
            f"sharded: token authentication on; the token is in {path} (mode 0600, yours only)",
            f"sharded:   workers: copy it to each node (scp -p {path} NODE:{path}), then run",
            f"sharded:     python -m cluster.ray_cluster worker --address {addr}"
            + (f" --token-file {path}" if args.token_file else ""),
            f"sharded:   drivers: export RAY_ADDRESS={addr} RAY_AUTH_MODE=token "
            f"RAY_AUTH_TOKEN_PATH={path}",
            f'sharded:     (or RAY_AUTH_TOKEN="$(cat {path})"); Ray Client and dashboard take '
            "the same token",
        ]
    else:
        lines.append(
            f"sharded: token authentication on, with {source}: give workers and drivers the "
            "same RAY_AUTH_MODE=token and token"
        )
    lines.append(
        f"sharded: Ray Client server on {args.client_host}:{args.client_port}"
        + (f", dashboard on {args.dashboard_host}:{args.dashboard_port}" if args.dashboard else "")
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one role; ``head``/``worker`` do not return (they become ``ray start --block``).

    Examples
    --------
    >>> main(["node-ip", "--towards", "127.0.0.1"])  # doctest: +SKIP
    127.0.0.1
    0
    """
    args = build_parser().parse_args(argv)
    try:
        if args.role == "head":
            ip = args.node_ip_address or rc.node_ip(args.interface)
            cmd = rc.head_command(
                args.port,
                dashboard=args.dashboard,
                dashboard_port=args.dashboard_port,
                client_port=args.client_port,
                node_ip_address=ip,
                dashboard_host=args.dashboard_host,
                client_host=args.client_host,
                **_node_kwargs(args),
            )
            if args.temp_dir and not args.dry_run:
                rc.private_dir(args.temp_dir)  # here for a plain error; the node checks again
            source = _use_auth(args, head=True)
            print(_head_notice(args, ip, source), file=sys.stderr)
            return _exec(cmd, args.dry_run)
        if args.role in ("worker", "wait", "client"):
            _use_auth(args)
        if args.role == "worker":
            ip = args.node_ip_address or (rc.node_ip(args.interface) if args.interface else None)
            cmd = rc.worker_command(args.address, node_ip_address=ip, **_node_kwargs(args))
            if not args.dry_run:
                if args.temp_dir:
                    rc.private_dir(args.temp_dir)
                # Containers and srun steps may start before the head listens; `ray start`
                # itself gives up quickly, so wait here.
                rc.wait_for_port(args.address, args.connect_timeout)
            return _exec(cmd, args.dry_run)
        if args.role == "wait":
            return _wait(args)
        if args.role == "client":
            return _client(args)
        if args.role == "node-ip":
            print(rc.node_ip(args.interface, args.towards))
            return 0
        if args.temp_dir:  # stop
            found = rc.stop_temp_dir(args.temp_dir, args.timeout)
            print(f"sharded: stopped {found} processes using {args.temp_dir}")
            return 0
        return subprocess.call([*rc.ray_cli(), "stop"])
    except rc.ClusterError as e:
        print(f"sharded: error: {e}", file=sys.stderr)
        return 1


def _wait(args: argparse.Namespace) -> int:
    ip = args.ip or (rc.node_ip(towards=args.address) if args.this_node else None)
    try:
        nodes = rc.wait_for_nodes(args.address, args.nodes, args.timeout, ip=ip)
    except rc.NodesNotReady as e:
        if not args.json:
            raise
        print(
            json.dumps(
                {"alive": [], "arrived": e.arrived, "ip": e.ip, "why": e.why, "error": str(e)}
            )
        )
        return 1
    if args.json:
        print(json.dumps({"alive": nodes}))
    else:
        print(f"sharded: {len(nodes)} Ray nodes alive at {args.address}")
    return 0


def _client(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    command = command or ["sharded", "demo"]
    # `docker stop` sends SIGTERM: turn it into SystemExit so that subprocess.call kills the
    # driver and the finally below stops this client's Ray node.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ip = rc.node_ip(towards=args.address)
    # 0 CPUs and GPUs: sharded's worker actors must not land on the client.
    node = rc.start_worker(
        args.address,
        num_cpus=0,
        num_gpus=0,
        node_ip_address=ip,
        temp_dir=args.temp_dir,
        timeout=args.timeout,
        no_auth=args.no_auth,  # the token itself is in this process's environment (_use_auth)
    )
    try:
        rc.wait_for_nodes(args.address, args.nodes + 1, args.timeout)
        # The driver attaches to this client node by its IP (sharded reads SHARDED_RAY_NODE_IP):
        # where several nodes share one process table Ray's own pick is the head's node.
        env = {**node.driver_env(rc.ray_env()), "SHARDED_RAY_NODE_IP": ip}
        return subprocess.call(command, env=env)
    finally:
        node.stop()
