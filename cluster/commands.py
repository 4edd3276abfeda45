"""The command lines and environment of the Ray nodes the helpers start.

Split from :mod:`cluster.ray_cluster` (which re-exports everything here) to keep files short.
Only the standard library is needed here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from cluster.host import detect_num_gpus

DEFAULT_PORT = 6379  # GCS port: the cluster address is HEAD_IP:DEFAULT_PORT
DEFAULT_CLIENT_PORT = 10001  # Ray Client server (ray://HEAD_IP:10001) for drivers off-cluster
DEFAULT_DASHBOARD_PORT = 8265
# The dashboard and the Ray Client server run code for whoever reaches them (token auth aside):
# they listen on loopback unless a host is asked for (compose: 0.0.0.0 inside the container,
# published on the Docker host's loopback only).
DEFAULT_DASHBOARD_HOST = "127.0.0.1"
DEFAULT_CLIENT_HOST = "127.0.0.1"


def ray_cli() -> list[str]:
    """The ``ray`` command of *this* interpreter (srun/Docker PATHs may point at another one)."""
    return [sys.executable, "-m", "ray.scripts.scripts"]


def _ray_start_cli() -> list[str]:
    """``ray`` plus a private ``--temp-dir`` and ``--ray-client-server-host`` (see
    :mod:`cluster._ray_start`): what every node runs."""
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
        *_ray_start_cli(),
        "start",
        f"--address={address}",
        *_common_args(num_cpus, num_gpus, object_store_memory, node_ip_address, temp_dir, ray_args),
    ]


def ray_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the Ray nodes of a cluster started here (``env``, default this
    process's, with one Ray default pinned unless set).

    ``RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0``: Ray drains a node for 30 s on SIGTERM (meant
    for Serve replicas); a batch job or a test wants its nodes gone at once.
    ``OPENBLAS_THREAD_TIMEOUT=20``: the idle BLAS threads of a worker that owns several cores
    spin ~0.3 ms, not ~0.1 s, after a call, so NumPy's and SciPy's BLAS do not take the cores
    from each other (``sharded.runtime.worker.threads.BLAS_ENV`` says why; this package does
    not import ``sharded``).  Authentication is
    not decided here: :func:`start_head`, :func:`start_worker` and the command line set the
    ``RAY_AUTH_*`` variables themselves, token on unless told otherwise (:mod:`cluster.auth`),
    and :meth:`RayNode.driver_env` gives drivers the same.

    Examples
    --------
    >>> ray_env({"PATH": "/bin"})  # doctest: +NORMALIZE_WHITESPACE
    {'PATH': '/bin', 'RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S': '0',
     'OPENBLAS_THREAD_TIMEOUT': '20'}
    """
    out = dict(os.environ if env is None else env)
    out.setdefault("RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S", "0")
    out.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")
    return out
