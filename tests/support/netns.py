"""Several virtual hosts on one Linux machine, for trying multi-node setups (and testing them).

Each host is a network namespace with its own loopback and one interface ``eth0`` holding
``10.231.0.<i+1>/24``; the interfaces meet on a bridge that lives in a further "switch"
namespace.  Nothing is added to the machine's own namespace, so the hosts cannot collide with
its addresses or routes, and deleting the namespaces removes every trace.  Needs root and
iproute2.

Example
-------
>>> with VirtualHosts(2) as hosts:  # doctest: +SKIP
...     hosts.run(0, ["ping", "-c1", hosts.ip(1)])
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence

SUBNET = "10.231.0"  # private range; only ever configured inside our own namespaces
_instances = itertools.count()  # distinct namespace names for several instances per process


class NetnsError(RuntimeError):
    """A network namespace command failed."""


def netns_unavailable_reason() -> str | None:
    """Why :class:`VirtualHosts` cannot run here, or ``None`` when it can.

    Examples
    --------
    >>> netns_unavailable_reason() in (None, "needs root (uid 1000)", "needs iproute2 (`ip`)")
    True
    """
    if os.geteuid() != 0:
        return f"needs root (uid {os.geteuid()})"
    if shutil.which("ip") is None:
        return "needs iproute2 (`ip`)"
    return None


def _ip(*args: str) -> None:
    res = subprocess.run(["ip", *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise NetnsError(f"`ip {' '.join(args)}` failed ({res.returncode}): {res.stderr.strip()}")


class VirtualHosts:
    """``n`` network-namespace hosts on one bridge; a context manager that always cleans up.

    Parameters
    ----------
    n : int
        Number of hosts (2 to 250).
    tag : str, optional
        Name prefix of the namespaces (default ``shd<pid>-<n>``, unique per instance).

    Examples
    --------
    >>> with VirtualHosts(2) as hosts:  # doctest: +SKIP
    ...     print(hosts.ip(0), hosts.prefix(1))
    10.231.0.1 ['nsenter', '--net=/run/netns/shd4242-0-h1']
    """

    def __init__(self, n: int = 2, tag: str | None = None):
        if not 1 <= n <= 250:
            raise ValueError(f"VirtualHosts needs 1 to 250 hosts, got {n}")
        why = netns_unavailable_reason()
        if why:
            raise NetnsError(f"network namespaces unavailable: {why}")
        self.n = n
        self.tag = tag or f"shd{os.getpid()}-{next(_instances)}"
        self.names = [f"{self.tag}-h{i}" for i in range(n)]
        self.switch = f"{self.tag}-sw"
        self._created: list[str] = []

    def ip(self, i: int) -> str:
        """IPv4 address of host ``i``."""
        return f"{SUBNET}.{i + 1}"

    def prefix(self, i: int) -> list[str]:
        """Command prefix that runs a program on host ``i``.

        ``nsenter --net`` rather than ``ip netns exec``: the latter also remounts ``/sys``,
        which hides ``/sys/fs/cgroup`` and makes slurmd refuse to start.
        """
        return ["nsenter", f"--net=/run/netns/{self.names[i]}"]

    def run(self, i: int, argv: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
        """Run ``argv`` on host ``i`` to completion (``subprocess.run`` keywords accepted)."""
        return subprocess.run([*self.prefix(i), *argv], **kwargs)

    def popen(self, i: int, argv: Sequence[str], **kwargs) -> subprocess.Popen:
        """Start ``argv`` on host ``i`` in the background; :meth:`close` kills it at the latest."""
        return subprocess.Popen([*self.prefix(i), *argv], **kwargs)

    def pids(self, i: int | None = None) -> list[int]:
        """Processes running inside host ``i`` (all hosts and the switch when ``None``)."""
        names = self._created if i is None else [self.names[i]]
        found: list[int] = []
        for name in names:
            res = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
            found += [int(p) for p in res.stdout.split()]
        return found

    def __enter__(self) -> VirtualHosts:
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _create(self) -> None:
        _ip("netns", "add", self.switch)
        self._created.append(self.switch)
        sw = ["netns", "exec", self.switch, "ip"]
        _ip(*sw, "link", "add", "br0", "type", "bridge")
        _ip(*sw, "link", "set", "br0", "up")
        for i, name in enumerate(self.names):
            _ip("netns", "add", name)
            self._created.append(name)
            # Created straight into the namespaces: the root namespace never sees the links.
            _ip(
                "link",
                "add",
                "eth0",
                "netns",
                name,
                "type",
                "veth",
                "peer",
                "name",
                f"p{i}",
                "netns",
                self.switch,
            )
            _ip(*sw, "link", "set", f"p{i}", "master", "br0")
            _ip(*sw, "link", "set", f"p{i}", "up")
            host = ["netns", "exec", name, "ip"]
            _ip(*host, "link", "set", "lo", "up")  # Ray and Slurm talk to themselves on loopback
            _ip(*host, "addr", "add", f"{self.ip(i)}/24", "dev", "eth0")
            _ip(*host, "link", "set", "eth0", "up")
            # A device route (no gateway exists): lets "which address reaches the world?"
            # lookups, such as Ray's node-IP detection, answer with this host's address.
            _ip(*host, "route", "add", "default", "dev", "eth0")

    def kill_all(self, timeout: float = 10.0) -> None:
        """SIGTERM every process in the namespaces, SIGKILL what is left after ``timeout`` s."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            pids = self.pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + wait
            while self.pids() and time.monotonic() < deadline:
                time.sleep(0.2)

    def close(self) -> None:
        """Kill everything inside the namespaces and delete them (safe to call twice)."""
        if self._created:
            self.kill_all()
        errors = []
        for name in reversed(self._created):
            try:
                _ip("netns", "del", name)
            except NetnsError as e:
                errors.append(str(e))
        self._created.clear()
        if errors:
            raise NetnsError("; ".join(errors))
