"""Readiness of a Ray cluster: waiting for the GCS port and for N alive nodes, with bounded
timeouts and errors that say what was missing (used by the head/worker helpers, the Slurm
scripts and the tests)."""

from __future__ import annotations

import socket
import subprocess
import time

from cluster.errors import ClusterError, NodesNotReady, RayStartError

DEFAULT_WAIT_TIMEOUT = 120.0  # seconds; a cold start of many nodes on a busy cluster is slow


def _split_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterError(f"Ray address {address!r} is not HOST:PORT")
    return host, int(port)


def wait_for_port(address: str, timeout: float, proc: subprocess.Popen | None = None) -> None:
    """Wait until something accepts TCP connections at ``HOST:PORT``.

    Raises
    ------
    NodesNotReady
        Nothing listened within ``timeout`` seconds (0 of 1 nodes arrived).

    Examples
    --------
    >>> wait_for_port("127.0.0.1:6379", timeout=30)  # doctest: +SKIP
    """
    host, port = _split_address(address)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=1.0).close()
            return
        except OSError as e:
            err = e
        if proc is not None and proc.poll() is not None:
            raise RayStartError(f"ray exited with code {proc.returncode} before {address} opened")
        if time.monotonic() > deadline:
            raise NodesNotReady(address, 1, 0, timeout, f"GCS port not reachable ({err})")
        time.sleep(0.25)


def alive_nodes(address: str, rpc_timeout: float = 10.0) -> list[dict]:
    """The nodes the GCS at ``address`` reports alive, as dicts ``node_id, ip, resources``.

    Talks to the GCS directly instead of connecting a driver, so it works from any machine that
    can reach the head (a Ray driver must run on a Ray node) and creates no Ray job.

    Examples
    --------
    >>> [n["ip"] for n in alive_nodes("10.0.0.1:6379")]  # doctest: +SKIP
    ['10.0.0.1', '10.0.0.2']
    """
    from ray._raylet import GcsClient  # Ray's own CLI (ray status) uses this client
    from ray.core.generated.gcs_pb2 import GcsNodeInfo

    client = GcsClient(address=address)
    infos = client.get_all_node_info(
        timeout=rpc_timeout, state_filter=GcsNodeInfo.GcsNodeState.ALIVE
    )
    return [
        {
            "node_id": info.node_id.hex(),
            "ip": info.node_manager_address,
            "resources": dict(info.resources_total),
        }
        for info in infos.values()
    ]


def wait_for_nodes(
    address: str,
    n: int,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    *,
    poll: float = 0.5,
    ip: str | None = None,
    proc: subprocess.Popen | None = None,
) -> list[dict]:
    """Block until at least ``n`` Ray nodes are alive in the cluster at ``address``.

    Parameters
    ----------
    address : str
        ``HOST:PORT`` of the head's GCS.
    n : int
        Number of alive nodes to wait for (head included).
    timeout : float
        Seconds to wait in total, connection attempts included.
    ip : str, optional
        Also require an alive node with this IP (a worker waiting for itself).
    proc : subprocess.Popen, optional
        A ``ray start`` process whose early exit should fail the wait at once.

    Returns
    -------
    list of dict
        The alive nodes (see :func:`alive_nodes`).

    Raises
    ------
    NodesNotReady
        Fewer than ``n`` nodes after ``timeout`` seconds; the message names how many arrived.

    Examples
    --------
    >>> nodes = wait_for_nodes("10.0.0.1:6379", 2, timeout=60)  # doctest: +SKIP
    >>> len(nodes)  # doctest: +SKIP
    2
    """
    if n < 1:
        raise ValueError(f"wait_for_nodes needs n >= 1, got {n}")
    start = time.monotonic()
    try:
        wait_for_port(address, timeout, proc)
    except NodesNotReady as e:  # say "0 of n", not "0 of 1"
        raise NodesNotReady(address, n, 0, timeout, e.why) from None
    nodes: list[dict] = []
    why = ""
    while True:
        left = timeout - (time.monotonic() - start)
        try:
            nodes = alive_nodes(address, rpc_timeout=max(1.0, min(10.0, left)))
            why = ""
        except Exception as e:  # GCS restarting or not yet reachable: keep polling
            why = f"GCS query failed: {e}"
        have_ip = ip is None or any(node["ip"] == ip for node in nodes)
        if len(nodes) >= n and have_ip:
            return nodes
        if proc is not None and proc.poll() is not None:
            raise RayStartError(
                f"ray exited with code {proc.returncode} while waiting for "
                f"{n} nodes at {address} ({len(nodes)} alive)"
            )
        if left <= 0:
            raise NodesNotReady(address, n, len(nodes), timeout, why, ip=None if have_ip else ip)
        time.sleep(min(poll, max(left, 0.0)))
