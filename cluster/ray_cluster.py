"""Start a Ray head, join workers to it, wait for nodes, and stop them again.

This is the one place that knows how ``ray start`` is called for ``sharded``: the Slurm scripts,
the Docker entrypoint, docker-compose and the tests all run these helpers (as Python functions or
as ``python -m cluster.ray_cluster head|worker|wait|client|node-ip|stop``), never their own copy.

Token authentication is on unless the caller asks otherwise (``no_auth=True``, the command
line's ``--no-auth``): :func:`start_head` makes or reuses a token file as
``python -m cluster.ray_cluster head`` does (:mod:`cluster.auth`), :func:`start_worker` needs
the same token, and :meth:`RayNode.driver_env` is the environment a driver connects with.

Every node runs ``ray start --block`` in the foreground.  That makes the launcher (``srun``,
Docker, a test) the owner of the node's lifetime: SIGTERM to that one process makes Ray kill the
raylet, GCS and workers it started, and nothing else on the machine.  ``ray stop`` would instead
kill every Ray process of the user on the machine, including other people's clusters.

Only Ray is needed here, not ``sharded``.

The command lines and node environment are built in :mod:`cluster.commands`, facts about the
machine (and private directories and log files) come from :mod:`cluster.host`; both are
re-exported here.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from cluster.auth import AUTH_VARS, auth_env
from cluster.commands import (
    DEFAULT_CLIENT_HOST,
    DEFAULT_CLIENT_PORT,
    DEFAULT_DASHBOARD_HOST,
    DEFAULT_DASHBOARD_PORT,
    DEFAULT_PORT,
    _with_root_on_path,
    head_command,
    ray_cli,
    ray_env,
    worker_command,
)
from cluster.errors import (
    ClusterError,
    NodesNotReady,
    RayStartError,
    TokenAuthUnsupported,
    TokenNotFound,
    UnsafePath,
)
from cluster.host import (
    DEFAULT_STOP_TIMEOUT,
    detect_num_gpus,
    node_ip,
    open_private_log,
    private_dir,
    stop_temp_dir,
)
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
    "TokenNotFound",
    "TokenAuthUnsupported",
    "UnsafePath",
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
    "private_dir",
    "open_private_log",
]

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


class RayNode:
    """A Ray node started by this process (``ray start --block`` running in the background).

    Use :meth:`stop` (or a ``with`` block) to shut it down; SIGTERM makes Ray stop the raylet,
    GCS and worker processes of this node only.

    Attributes
    ----------
    address : str
        The cluster's ``IP:PORT`` (the head's, for a worker too).
    auth_env : dict
        The ``RAY_AUTH_*`` variables the node runs with: what a driver or another node needs
        (``{"RAY_AUTH_MODE": "disabled"}`` only for a node started with ``no_auth=True``).
    token_file : Path or None
        The file holding the cluster's token, when the token comes from a file.
    log_path : Path
        ``ray start``'s output.
    """

    def __init__(
        self,
        role: str,
        address: str,
        process: subprocess.Popen,
        log_path: Path,
        auth_env: Mapping[str, str] | None = None,
    ):
        self.role, self.address, self.process, self.log_path = role, address, process, log_path
        self.auth_env = dict(auth_env or {})
        path = self.auth_env.get("RAY_AUTH_TOKEN_PATH")
        self.token_file = Path(path) if path and "RAY_AUTH_TOKEN" not in self.auth_env else None

    def driver_env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """``env`` (default this process's) for a driver of this cluster: ``RAY_ADDRESS`` and
        the node's ``RAY_AUTH_*`` set, any other ``RAY_AUTH_*`` removed.

        Examples
        --------
        >>> head = start_head(port=6390, num_cpus=1, token_file="/tmp/t")  # doctest: +SKIP
        >>> subprocess.run(["python", "my_driver.py"], env=head.driver_env())  # doctest: +SKIP
        """
        out = {k: v for k, v in (os.environ if env is None else env).items() if k not in AUTH_VARS}
        return {**out, **self.auth_env, "RAY_ADDRESS": self.address}

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
_LOG_NUMBERS = itertools.count()
_DEFAULT_LOG_DIR: list[str] = []  # made on first use, then kept for this process


def _log_dir(log_dir: str | None) -> Path:
    """``log_dir`` made or checked private, or this process's own private directory."""
    if log_dir:
        return private_dir(log_dir)
    if not _DEFAULT_LOG_DIR:
        # mkdtemp: a new directory of mode 0700 under $TMPDIR or /tmp, where a fixed name
        # could have been placed (or symlinked) by another user beforehand
        _DEFAULT_LOG_DIR.append(tempfile.mkdtemp(prefix="sharded-ray-logs-"))
    return Path(_DEFAULT_LOG_DIR[0])


def _node_env(env: Mapping[str, str] | None, **auth) -> dict[str, str]:
    """The node's environment: ``env`` through :func:`ray_env`, ``RAY_AUTH_*`` decided."""
    return _with_root_on_path(auth_env(ray_env(env), **auth)[0])


def _launch(
    role: str,
    argv: list[str],
    address: str,
    launcher: Sequence[str],
    log_dir: str | None,
    env: dict[str, str],
) -> RayNode:
    log_path = _log_dir(log_dir) / f"sharded-ray-{role}-{os.getpid()}-{next(_LOG_NUMBERS)}.log"
    with open_private_log(log_path) as log:
        proc = subprocess.Popen(
            [*launcher, *argv],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # own group: stop() can kill it whole
        )
    node = RayNode(role, address, proc, log_path, {k: env[k] for k in AUTH_VARS if k in env})
    _STARTED.append(node)
    return node


def _wait_via(
    launcher: Sequence[str],
    address: str,
    n: int,
    timeout: float,
    ip: str | None = None,
    proc: subprocess.Popen | None = None,
    env: dict[str, str] | None = None,
) -> list[dict]:
    """:func:`wait_for_nodes`, run through ``launcher`` when there is one.

    A node started in another network namespace (or host) may be unreachable from here, so the
    wait runs where the node runs, as ``python -m cluster.ray_cluster wait --json``.  So it
    does, in a process of its own, when the cluster's ``RAY_AUTH_*`` (in ``env``) differ from
    this process's: Ray reads them once per process.
    """
    env = _with_root_on_path(ray_env()) if env is None else env
    same_auth = all(env.get(k) == os.environ.get(k) for k in AUTH_VARS)
    if not launcher and same_auth:
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
    node: RayNode, n: int, ip: str | None, timeout: float, launcher: Sequence[str], env: dict
) -> RayNode:
    try:
        _wait_via(launcher, node.address, n, timeout, ip=ip, proc=node.process, env=env)
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
    no_auth: bool = False,
    token_file: str | os.PathLike | None = None,
    new_token: bool = False,
) -> RayNode:
    """Start a Ray head node in the background and wait until it has registered.

    Token authentication is on, as with ``python -m cluster.ray_cluster head``: the head uses
    the token in ``env`` (``RAY_AUTH_MODE=token`` with ``RAY_AUTH_TOKEN`` or
    ``RAY_AUTH_TOKEN_PATH``) or else the token file ``token_file``, made (mode 0600) when
    missing.  Workers and drivers need the same token: :meth:`RayNode.driver_env`.

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
        Private directory for the node's Ray files; one per cluster keeps clusters on a shared
        machine apart.  It is made mode 0700 (an existing one must be this user's, with no
        access for group or others), and Ray's own temp dir, which Ray makes world-writable,
        is ``temp_dir/ray`` inside it (:mod:`cluster._ray_start`).  Default: Ray's /tmp/ray,
        shared by every user of the machine.
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
        Where ``ray start``'s output goes, as a new file ``sharded-ray-ROLE-PID-N.log``; made
        private like ``temp_dir`` (default: a private directory made for this process under
        ``$TMPDIR`` or /tmp).  Error messages quote the log's end.
    env : mapping, optional
        Environment of the node (default this process's), passed through :func:`ray_env`.
    timeout : float
        Seconds to wait for the head to come up.
    no_auth : bool
        Run without token authentication (the command line's ``--no-auth``): anyone who
        reaches the node's ports runs code on the cluster.
    token_file : str, optional
        The token file (default :data:`cluster.auth.DEFAULT_TOKEN_FILE`); a token in ``env``
        wins.
    new_token : bool
        Replace the token file with a fresh token (``--new-token``).

    Returns
    -------
    RayNode
        Handle with ``.address`` (``IP:PORT``), ``.auth_env`` / ``.driver_env()`` (what a
        driver connects with) and ``.stop()``.

    Raises
    ------
    ClusterError
        ``RAY_AUTH_MODE=disabled`` in ``env`` without ``no_auth``, or a token file others can
        read.
    TokenAuthUnsupported
        Token authentication with a Ray older than 2.52.
    UnsafePath
        ``temp_dir`` or ``log_dir`` is not private, or a file already sits at the log's path.
    RayStartError
        ``ray start`` exited early; the message ends with its log.
    NodesNotReady
        The head did not register within ``timeout`` seconds.

    Examples
    --------
    >>> head = start_head(port=6390, num_cpus=2, object_store_memory=10**8)  # doctest: +SKIP
    >>> head.address, head.token_file  # doctest: +SKIP
    ('192.168.1.5:6390', PosixPath('/home/me/.ray/sharded_auth_token'))
    >>> subprocess.run(["python", "my_program.py"], env=head.driver_env())  # doctest: +SKIP
    >>> head.stop()  # doctest: +SKIP
    """
    if launcher and not node_ip_address:
        # The launcher may run the node in another host or network namespace, where this
        # process cannot tell which address it will have.
        raise ClusterError(f"start_head with launcher {list(launcher)} needs node_ip_address")
    node_env = _node_env(env, no_auth=no_auth, token_file=token_file, create=True, new=new_token)
    if temp_dir and not launcher:
        private_dir(temp_dir)  # refused here, typed; the node checks again where it runs
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
    node = _launch("head", argv, f"{ip}:{port}", launcher, log_dir, node_env)
    return _await_start(node, 1, ip, timeout, launcher, node_env)


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
    no_auth: bool = False,
    token_file: str | os.PathLike | None = None,
) -> RayNode:
    """Start a Ray worker node joining the head at ``address`` and wait until it is alive.

    Parameters are those of :func:`start_head`; ``address`` is the head's ``IP:PORT``.  Without
    ``node_ip_address`` Ray picks the address of the interface that routes to the head.  The
    worker needs the head's token: in ``env`` (e.g. ``env=head.driver_env()``) or in
    ``token_file`` (default :data:`cluster.auth.DEFAULT_TOKEN_FILE`, which it never creates);
    ``no_auth=True`` joins a head started without authentication.

    Raises
    ------
    TokenNotFound
        No token in ``env`` and no token file: the message says where it was looked for.

    Examples
    --------
    >>> worker = start_worker("192.168.1.5:6390", num_cpus=2)  # doctest: +SKIP
    >>> worker = start_worker(head.address, env=head.driver_env())  # doctest: +SKIP
    >>> worker.stop()  # doctest: +SKIP
    """
    node_env = _node_env(env, no_auth=no_auth, token_file=token_file)
    if temp_dir and not launcher:
        private_dir(temp_dir)
    argv = worker_command(
        address,
        object_store_memory=object_store_memory,
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        node_ip_address=node_ip_address,
        temp_dir=temp_dir,
        ray_args=ray_args,
    )
    before = len(_wait_via(launcher, address, 1, timeout, env=node_env))
    node = _launch("worker", argv, address, launcher, log_dir, node_env)
    return _await_start(node, before + 1, node_ip_address, timeout, launcher, node_env)


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
