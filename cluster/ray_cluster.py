"""Start a Ray head, join workers to it, wait for nodes, and stop them again.

This is the one place that knows how ``ray start`` is called for ``sharded``: the Slurm scripts,
the Docker entrypoint, docker-compose and the tests all run these helpers (as Python functions or
as ``python -m cluster.ray_cluster head|worker|wait|client|node-ip|stop``), never their own copy.

Every node runs ``ray start --block`` in the foreground.  That makes the launcher (``srun``,
Docker, a test) the owner of the node's lifetime: SIGTERM to that one process makes Ray kill the
raylet, GCS and workers it started, and nothing else on the machine.  ``ray stop`` would instead
kill every Ray process of the user on the machine, including other people's clusters.

Only Ray is needed here, not ``sharded``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from cluster.errors import ClusterError, NodesNotReady, RayStartError
from cluster.host import DEFAULT_STOP_TIMEOUT, detect_num_gpus, node_ip, stop_temp_dir
from cluster.readiness import (
    DEFAULT_WAIT_TIMEOUT,
    alive_nodes,
    wait_for_nodes,
    wait_for_port,
)

__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_CLIENT_PORT",
    "DEFAULT_DASHBOARD_PORT",
    "DEFAULT_DASHBOARD_HOST",
    "DEFAULT_CLIENT_HOST",
    "DEFAULT_WAIT_TIMEOUT",
    "DEFAULT_STOP_TIMEOUT",
    "ENV_VARS",
    "ClusterError",
    "RayStartError",
    "NodesNotReady",
    "RayNode",
    "ray_cli",
    "ray_env",
    "detect_num_gpus",
    "node_ip",
    "head_command",
    "worker_command",
    "wait_for_port",
    "alive_nodes",
    "wait_for_nodes",
    "start_head",
    "start_worker",
    "stop",
    "stop_temp_dir",
]

DEFAULT_PORT = 6379  # GCS port: the cluster address is HEAD_IP:DEFAULT_PORT
DEFAULT_CLIENT_PORT = 10001  # Ray Client server (ray://HEAD_IP:10001) for drivers off-cluster
DEFAULT_DASHBOARD_PORT = 8265
# The dashboard and the Ray Client server run code for whoever reaches them (token auth aside):
# they listen on loopback unless a host is asked for (compose: 0.0.0.0 inside the container,
# published on the Docker host's loopback only).
DEFAULT_DASHBOARD_HOST = "127.0.0.1"
DEFAULT_CLIENT_HOST = "127.0.0.1"

# Environment variables read by the command line as option defaults.  docker-compose, the Docker
# entrypoint and the Slurm scripts configure nodes through these, so their names live here once.
ENV_VARS: dict[str, str] = {
    "address": "SHARDED_RAY_ADDRESS",
    "port": "SHARDED_RAY_PORT",
    "client_port": "SHARDED_RAY_CLIENT_PORT",
    "dashboard": "SHARDED_RAY_DASHBOARD",
    "dashboard_port": "SHARDED_RAY_DASHBOARD_PORT",
    "dashboard_host": "SHARDED_RAY_DASHBOARD_HOST",
    "client_host": "SHARDED_RAY_CLIENT_HOST",
    "no_auth": "SHARDED_RAY_NO_AUTH",
    "token_file": "SHARDED_RAY_TOKEN_FILE",
    "new_token": "SHARDED_RAY_NEW_TOKEN",
    "object_store_memory": "SHARDED_RAY_OBJECT_STORE_MEMORY",
    "num_cpus": "SHARDED_RAY_NUM_CPUS",
    "num_gpus": "SHARDED_RAY_NUM_GPUS",
    "node_ip_address": "SHARDED_RAY_NODE_IP",
    "interface": "SHARDED_RAY_INTERFACE",
    "temp_dir": "SHARDED_RAY_TEMP_DIR",
    "nodes": "SHARDED_RAY_NODES",
    "timeout": "SHARDED_RAY_WAIT_TIMEOUT",
}


def ray_cli() -> list[str]:
    """The ``ray`` command of *this* interpreter (srun/Docker PATHs may point at another one)."""
    return [sys.executable, "-m", "ray.scripts.scripts"]


def _ray_start_cli() -> list[str]:
    """``ray`` plus ``--ray-client-server-host`` (see :mod:`cluster._ray_start`): the head's."""
    return [sys.executable, "-m", "cluster._ray_start"]


def _with_root_on_path(env: dict[str, str]) -> dict[str, str]:
    """``env`` with this checkout on PYTHONPATH: the head runs ``-m cluster._ray_start``."""
    root = str(Path(__file__).resolve().parents[1])
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        env["PYTHONPATH"] = os.pathsep.join([root, *paths])
    return env


def _common_args(
    num_cpus: float | None,
    num_gpus: int | None,
    object_store_memory: int | None,
    node_ip_address: str | None,
    temp_dir: str | None,
    ray_args: Sequence[str],
) -> list[str]:
    args = [f"--num-gpus={detect_num_gpus() if num_gpus is None else num_gpus}"]
    if num_cpus is not None:
        args.append(f"--num-cpus={num_cpus:g}")
    if object_store_memory is not None:
        args.append(f"--object-store-memory={int(object_store_memory)}")
    if node_ip_address:
        args.append(f"--node-ip-address={node_ip_address}")
    if temp_dir:
        args.append(f"--temp-dir={temp_dir}")
    return [*args, "--disable-usage-stats", *ray_args, "--block"]


def head_command(
    port: int = DEFAULT_PORT,
    *,
    object_store_memory: int | None = None,
    num_cpus: float | None = None,
    num_gpus: int | None = None,
    dashboard: bool = False,
    dashboard_port: int = DEFAULT_DASHBOARD_PORT,
    client_port: int = DEFAULT_CLIENT_PORT,
    node_ip_address: str | None = None,
    temp_dir: str | None = None,
    ray_args: Sequence[str] = (),
    dashboard_host: str = DEFAULT_DASHBOARD_HOST,
    client_host: str = DEFAULT_CLIENT_HOST,
) -> list[str]:
    """The ``ray start --head --block`` command line for a head node.

    Parameters are those of :func:`start_head`.  ``num_gpus=None`` is resolved now with
    :func:`detect_num_gpus` so the node advertises exactly the GPUs it was given.

    Examples
    --------
    >>> cmd = head_command(6380, num_cpus=2, num_gpus=0)
    >>> cmd[3:6]
    ['start', '--head', '--port=6380']
    >>> "--ray-client-server-host=127.0.0.1" in cmd
    True
    """
    if dashboard:
        dash = [
            "--include-dashboard=true",
            f"--dashboard-host={dashboard_host}",
            f"--dashboard-port={dashboard_port}",
        ]
    else:
        dash = ["--include-dashboard=false"]  # saves a process and ~200 MB per head
    return [
        *_ray_start_cli(),
        "start",
        "--head",
        f"--port={port}",
        f"--ray-client-server-port={client_port}",
        f"--ray-client-server-host={client_host}",
        *dash,
        *_common_args(num_cpus, num_gpus, object_store_memory, node_ip_address, temp_dir, ray_args),
    ]


def worker_command(
    address: str,
    *,
    object_store_memory: int | None = None,
    num_cpus: float | None = None,
    num_gpus: int | None = None,
    node_ip_address: str | None = None,
    temp_dir: str | None = None,
    ray_args: Sequence[str] = (),
) -> list[str]:
    """The ``ray start --address=... --block`` command line for a worker node.

    Examples
    --------
    >>> worker_command("10.0.0.1:6379", num_gpus=0)[3:5]
    ['start', '--address=10.0.0.1:6379']
    """
    return [
        *ray_cli(),
        "start",
        f"--address={address}",
        *_common_args(num_cpus, num_gpus, object_store_memory, node_ip_address, temp_dir, ray_args),
    ]


def ray_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the Ray nodes, and the drivers, of a cluster started here.

    Two Ray defaults are pinned, each only when the user has not set the variable:

    * ``RAY_AUTH_MODE=disabled``: ``ray start`` silently turns token authentication on when a
      ``~/.ray/auth_token`` file exists (any earlier local ``ray.init()`` writes one), but a
      driver given an explicit address (``RAY_ADDRESS``) does not, and is then refused.  Set
      ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN`` (as the Slurm scripts do per job) for a
      cluster that needs a token, and give drivers the same variables.  The command line
      (``python -m cluster.ray_cluster head|worker|client``) decides these variables itself
      before this runs, token on by default (:mod:`cluster.auth`).
    * ``RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0``: Ray drains a node for 30 s on SIGTERM (meant
      for Serve replicas); a batch job or a test wants its nodes gone at once.

    Examples
    --------
    >>> ray_env({"PATH": "/bin"})["RAY_AUTH_MODE"]
    'disabled'
    >>> ray_env({"RAY_AUTH_MODE": "token"})["RAY_AUTH_MODE"]
    'token'
    """
    out = dict(os.environ if env is None else env)
    out.setdefault("RAY_AUTH_MODE", "disabled")
    out.setdefault("RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S", "0")
    return out


class RayNode:
    """A Ray node started by this process (``ray start --block`` running in the background).

    Use :meth:`stop` (or a ``with`` block) to shut it down; SIGTERM makes Ray stop the raylet,
    GCS and worker processes of this node only.
    """

    def __init__(self, role: str, address: str, process: subprocess.Popen, log_path: Path):
        self.role, self.address, self.process, self.log_path = role, address, process, log_path

    def __repr__(self) -> str:
        return f"RayNode({self.role!r}, address={self.address!r}, pid={self.process.pid})"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = DEFAULT_STOP_TIMEOUT) -> int | None:
        """SIGTERM the node, SIGKILL its process group after ``timeout`` s; return its exit code."""
        if self.alive:
            try:
                self.process.send_signal(signal.SIGTERM)
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        try:
            # Kernel fate-sharing should have taken the children with it; killing the group
            # makes sure even when that is unavailable (e.g. inside some containers).
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        if self in _STARTED:
            _STARTED.remove(self)
        return self.process.returncode

    def __enter__(self) -> RayNode:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


_STARTED: list[RayNode] = []


def _launch(
    role: str,
    argv: list[str],
    address: str,
    launcher: Sequence[str],
    log_dir: str | None,
    env: Mapping[str, str] | None,
) -> RayNode:
    log_dir_path = Path(log_dir or os.environ.get("TMPDIR", "/tmp"))
    log_dir_path.mkdir(parents=True, exist_ok=True)
    log_path = log_dir_path / f"sharded-ray-{role}-{os.getpid()}-{len(_STARTED)}.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [*launcher, *argv],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=_with_root_on_path(ray_env(env)),
            start_new_session=True,  # own group: stop() can kill it whole
        )
    node = RayNode(role, address, proc, log_path)
    _STARTED.append(node)
    return node


def _wait_via(
    launcher: Sequence[str],
    address: str,
    n: int,
    timeout: float,
    ip: str | None = None,
    proc: subprocess.Popen | None = None,
) -> list[dict]:
    """:func:`wait_for_nodes`, run through ``launcher`` when there is one.

    A node started in another network namespace (or host) may be unreachable from here, so the
    wait runs where the node runs, as ``python -m cluster.ray_cluster wait --json``.
    """
    if not launcher:
        return wait_for_nodes(address, n, timeout, ip=ip, proc=proc)
    cmd = [
        *launcher,
        sys.executable,
        "-m",
        "cluster.ray_cluster",
        "wait",
        "--address",
        address,
        "--nodes",
        str(n),
        "--timeout",
        str(timeout),
        "--json",
        *(["--ip", ip] if ip else []),
    ]
    env = ray_env()
    # The waiting interpreter must find this package wherever the launcher runs it.
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    waiter = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        while waiter.poll() is None:
            if proc is not None and proc.poll() is not None:
                raise RayStartError(
                    f"ray exited with code {proc.returncode} while waiting for "
                    f"{n} nodes at {address}"
                )
            time.sleep(0.2)
    finally:
        if waiter.poll() is None:
            waiter.kill()
        out, err = waiter.communicate()
    try:
        report = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise ClusterError(f"`{' '.join(cmd)}` exited {waiter.returncode}: {err[-2000:]}") from None
    if waiter.returncode != 0:
        raise NodesNotReady(
            address, n, report.get("arrived", 0), timeout, report.get("why", ""), report.get("ip")
        )
    return report["alive"]


def _await_start(
    node: RayNode, n: int, ip: str | None, timeout: float, launcher: Sequence[str]
) -> RayNode:
    try:
        _wait_via(launcher, node.address, n, timeout, ip=ip, proc=node.process)
    except RayStartError as e:
        node.stop(timeout=5)
        raise RayStartError(f"{e}\n--- {node.log_path} ---\n{node.log_tail()}") from None
    except NodesNotReady as e:
        node.stop(timeout=5)
        why = "; ".join(filter(None, [e.why, f"log: {node.log_path}"]))
        raise NodesNotReady(e.address, e.expected, e.arrived, e.timeout, why, e.ip) from None
    return node


def start_head(
    port: int = DEFAULT_PORT,
    object_store_memory: int | None = None,
    num_cpus: float | None = None,
    num_gpus: int | None = None,
    dashboard: bool = False,
    *,
    node_ip_address: str | None = None,
    temp_dir: str | None = None,
    client_port: int = DEFAULT_CLIENT_PORT,
    dashboard_port: int = DEFAULT_DASHBOARD_PORT,
    client_host: str = DEFAULT_CLIENT_HOST,
    dashboard_host: str = DEFAULT_DASHBOARD_HOST,
    ray_args: Sequence[str] = (),
    launcher: Sequence[str] = (),
    log_dir: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
) -> RayNode:
    """Start a Ray head node in the background and wait until it has registered.

    Parameters
    ----------
    port : int
        GCS port; the cluster address is ``NODE_IP:port``.
    object_store_memory : int, optional
        Object store size in bytes (default: Ray's, 30% of RAM capped by /dev/shm).
    num_cpus : float, optional
        CPUs to advertise (default: Ray's detection).  Give each node >= 1: every sharded
        worker actor asks for CPU.
    num_gpus : int, optional
        GPUs to advertise (default: :func:`detect_num_gpus`).
    dashboard : bool
        Start the Ray dashboard on ``dashboard_port`` (needs ``ray[default]``).
    node_ip_address : str, optional
        Address to advertise (default: the address of this node's default route, chosen by Ray).
    temp_dir : str, optional
        Root of Ray's session files; one per cluster keeps clusters on a shared machine apart.
    client_port, dashboard_port : int
        Ray Client server and dashboard ports.
    client_host, dashboard_host : str
        Addresses they listen on (default 127.0.0.1: this machine only; the node's address or
        0.0.0.0 opens them to the network, where only token authentication guards them).
    ray_args : sequence of str
        Extra ``ray start`` arguments.
    launcher : sequence of str
        Prefix for the command, e.g. ``["nsenter", "--net=/run/netns/ns1"]`` or an ``srun``
        line; then ``node_ip_address`` is required, and waiting runs through it too.
    log_dir : str, optional
        Where ``ray start``'s output goes (default ``$TMPDIR`` or /tmp), as
        ``sharded-ray-ROLE-PID-N.log``; error messages quote its end.
    env : mapping, optional
        Environment of the node (default this process's), passed through :func:`ray_env`.
    timeout : float
        Seconds to wait for the head to come up.

    Returns
    -------
    RayNode
        Handle with ``.address`` (``IP:PORT``) and ``.stop()``.

    Raises
    ------
    RayStartError
        ``ray start`` exited early; the message ends with its log.
    NodesNotReady
        The head did not register within ``timeout`` seconds.

    Examples
    --------
    >>> head = start_head(port=6390, num_cpus=2, object_store_memory=10**8)  # doctest: +SKIP
    >>> head.address  # doctest: +SKIP
    '192.168.1.5:6390'
    >>> head.stop()  # doctest: +SKIP
    """
    if launcher and not node_ip_address:
        # The launcher may run the node in another host or network namespace, where this
        # process cannot tell which address it will have.
        raise ClusterError(f"start_head with launcher {list(launcher)} needs node_ip_address")
    ip = node_ip_address or node_ip()
    argv = head_command(
        port,
        object_store_memory=object_store_memory,
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        dashboard=dashboard,
        dashboard_port=dashboard_port,
        client_port=client_port,
        node_ip_address=ip,
        temp_dir=temp_dir,
        ray_args=ray_args,
        dashboard_host=dashboard_host,
        client_host=client_host,
    )
    node = _launch("head", argv, f"{ip}:{port}", launcher, log_dir, env)
    return _await_start(node, 1, ip, timeout, launcher)


def start_worker(
    address: str,
    object_store_memory: int | None = None,
    num_cpus: float | None = None,
    num_gpus: int | None = None,
    *,
    node_ip_address: str | None = None,
    temp_dir: str | None = None,
    ray_args: Sequence[str] = (),
    launcher: Sequence[str] = (),
    log_dir: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
) -> RayNode:
    """Start a Ray worker node joining the head at ``address`` and wait until it is alive.

    Parameters are those of :func:`start_head`; ``address`` is the head's ``IP:PORT``.  Without
    ``node_ip_address`` Ray picks the address of the interface that routes to the head.

    Examples
    --------
    >>> worker = start_worker("192.168.1.5:6390", num_cpus=2)  # doctest: +SKIP
    >>> worker.stop()  # doctest: +SKIP
    """
    argv = worker_command(
        address,
        object_store_memory=object_store_memory,
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        node_ip_address=node_ip_address,
        temp_dir=temp_dir,
        ray_args=ray_args,
    )
    before = len(_wait_via(launcher, address, 1, timeout))
    node = _launch("worker", argv, address, launcher, log_dir, env)
    return _await_start(node, before + 1, node_ip_address, timeout, launcher)


def stop(node: RayNode | None = None, timeout: float = DEFAULT_STOP_TIMEOUT) -> int:
    """Stop ``node``, or every node this process started (workers first, head last).

    Returns the number of nodes stopped.

    Examples
    --------
    >>> stop()  # doctest: +SKIP
    2
    """
    nodes = [node] if node is not None else sorted(_STARTED, key=lambda n: n.role == "head")
    for each in nodes:
        each.stop(timeout)
    return len(nodes)


if __name__ == "__main__":
    from cluster._cli import main  # the command line lives apart to keep this file short

    sys.exit(main())
