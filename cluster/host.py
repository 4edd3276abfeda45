"""Facts about this machine that a Ray node needs, and stopping Ray processes on it.

Split from :mod:`cluster.ray_cluster` (which re-exports everything here) to keep files short.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from cluster.errors import ClusterError

DEFAULT_STOP_TIMEOUT = 30.0


def detect_num_gpus(env: Mapping[str, str] | None = None) -> int:
    """Count the GPUs this node may use.

    ``CUDA_VISIBLE_DEVICES`` wins when set, because Slurm (``--gres=gpu:N``) and container
    runtimes restrict a job through it; otherwise the GPUs listed by ``nvidia-smi -L``; else 0.

    Examples
    --------
    >>> detect_num_gpus({"CUDA_VISIBLE_DEVICES": "0,1"})
    2
    >>> detect_num_gpus({"CUDA_VISIBLE_DEVICES": ""})
    0
    """
    env = os.environ if env is None else env
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [v.strip() for v in visible.split(",") if v.strip()]
        # "-1" and "NoDevFiles" are how CUDA and Slurm spell "no GPU".
        if not ids or ids[0].startswith("-1") or ids[0] == "NoDevFiles":
            return 0
        return len(ids)
    try:
        out = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0  # no driver, no tool, or a hung GPU: a CPU node
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def _interface_ip(interface: str) -> str:
    import fcntl
    import struct

    siocgifaddr = 0x8915  # Linux ioctl: an interface's IPv4 address, no iproute2 needed
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            request = struct.pack("256s", interface[:15].encode())
            packed = fcntl.ioctl(s.fileno(), siocgifaddr, request)
        except OSError as e:
            raise ClusterError(f"interface {interface!r} has no IPv4 address: {e}") from e
    return socket.inet_ntoa(packed[20:24])


def node_ip(interface: str | None = None, towards: str | None = None) -> str:
    """The IP address other Ray nodes should use to reach this one.

    Parameters
    ----------
    interface : str, optional
        Take the IPv4 address of this network interface (e.g. ``ib0`` for InfiniBand).
    towards : str, optional
        ``host`` or ``host:port`` of a peer (the head); the address of the interface that routes
        there is returned.  Default: the interface of the default route.

    Raises
    ------
    ClusterError
        Only a loopback address was found, which no other node could reach.

    Examples
    --------
    >>> node_ip(towards="127.0.0.1")
    '127.0.0.1'
    """
    if interface:
        return _interface_ip(interface)
    host = towards.rsplit(":", 1)[0] if towards else "192.0.2.1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            # A UDP connect sends nothing; it only asks the kernel which source address routes
            # to `host`.  192.0.2.1 (TEST-NET) stands for "anywhere" via the default route.
            s.connect((host, 9))
            ip = s.getsockname()[0]
        except OSError as e:
            raise ClusterError(
                f"no route to {host} to pick this node's IP; pass --node-ip-address or "
                f"--interface ({e})"
            ) from e
    if ip.startswith("127.") and not host.startswith("127."):
        raise ClusterError(
            f"only loopback address {ip} found towards {host}; pass --node-ip-address or "
            "--interface"
        )
    return ip


def _ray_processes(temp_dir: str) -> list[int]:
    """Pids of the Ray processes using ``temp_dir``, and all their descendants."""
    root = os.path.abspath(temp_dir).encode()
    cmdlines, children = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdlines[int(entry.name)] = (entry / "cmdline").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile, or not ours to read
        children.setdefault(ppid, []).append(int(entry.name))
    # Daemons name their session dir (TEMP_DIR[/NODE]/session_...); the `ray start --block`
    # parent names the temp dir.  Not a launcher (a batch script, srun) whose arguments merely
    # mention the directory.
    found = [
        pid
        for pid, cmd in cmdlines.items()
        if (root + b"/" in cmd or root + b"\0" in cmd)
        and (b"/session_" in cmd or b"ray.scripts.scripts" in cmd)
    ]
    # Worker processes rename themselves ("ray::IDLE"): reach them as descendants.
    todo, seen = list(found), set(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    seen.discard(os.getpid())
    return sorted(seen)


def stop_temp_dir(temp_dir: str, timeout: float = DEFAULT_STOP_TIMEOUT) -> int:
    """Stop the Ray processes on this machine that use ``temp_dir`` (and their children).

    The ``ray start --block`` parents get SIGTERM first (they stop their node cleanly), whatever
    is left after ``timeout`` seconds gets SIGKILL.  Returns how many processes were found.
    Scoping by temp dir leaves other Ray clusters on a shared node alone.

    Examples
    --------
    >>> stop_temp_dir("/tmp/sharded-ray-1234")  # doctest: +SKIP
    0
    """
    first = _ray_processes(temp_dir)
    for pid in first:
        _kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _ray_processes(temp_dir) and time.monotonic() < deadline:
        time.sleep(0.25)
    for pid in _ray_processes(temp_dir):
        _kill(pid, signal.SIGKILL)
    return len(first)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass  # already gone
