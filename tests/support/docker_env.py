"""Docker for the tests: a running daemon, the Dockerfile's base image, and docker-compose.yml
run as a project whose containers, network and volumes can be listed and removed.

* ``dockerd()`` uses the daemon that answers ``docker info``, or starts ``dockerd`` (as root,
  in the background, log in a file) and waits for it with a bounded timeout; ``stop()`` stops
  only a daemon it started.  Extra daemon flags: ``SHARDED_DOCKERD_FLAGS``, none by default:
  dockerd's defaults (overlay2, iptables for the bridge networks' NAT) work wherever the
  kernel has overlayfs and iptables; ``--storage-driver=vfs`` is the slow way out without
  overlayfs.  Without iptables (``--iptables=false``) ``docker build`` could not reach the
  package indexes, so there is no fallback that keeps the test meaningful.
* ``ensure_base_image()`` runs scripts/python_standin_image.py: ``python:3.11-slim`` built from
  Debian packages when no registry is reachable from the build machine, reused while its inputs
  are unchanged (the image's label holds their digest), and left alone when it is the official
  image (no label).
* ``Compose`` runs ``docker-compose`` (1.x) or ``docker compose`` (2.x) on the repository's file
  under a project name, with the host ports it is given.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "scripts" / "python_standin_image.py"
COMPOSE_FILE = ROOT / "docker-compose.yml"
TOOLS = ("docker", "dockerd", "debootstrap")


class DockerError(RuntimeError):
    pass


def unavailable_reason() -> str | None:
    """Why the Docker tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (dockerd, debootstrap)"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if compose_command() is None:
        missing.append("docker-compose")
    if missing:
        return (
            f"missing {', '.join(missing)}: run `sudo bash scripts/install_system_deps.sh` "
            f"(docker.io, docker-compose, debootstrap)"
        )
    return None


def compose_command() -> list[str] | None:
    """``docker-compose`` (Debian's 1.29) if installed, else the ``docker compose`` plugin."""
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if (
        shutil.which("docker")
        and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
    ):
        return ["docker", "compose"]
    return None


def run(cmd: list[str], timeout: float, check: bool = True, **kw) -> subprocess.CompletedProcess:
    """Run ``cmd`` capturing its output; on failure raise with the command and its output."""
    t0 = time.monotonic()
    try:
        res = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kw
        )
    except subprocess.TimeoutExpired as e:
        out = (
            (e.stdout or b"").decode(errors="replace")
            if isinstance(e.stdout, bytes)
            else (e.stdout or "")
        )
        raise DockerError(f"`{shlex.join(cmd)}` ran past {timeout:.0f} s:\n{out[-4000:]}") from None
    res.seconds = time.monotonic() - t0
    if check and res.returncode != 0:
        raise DockerError(
            f"`{shlex.join(cmd)}` exited {res.returncode} after "
            f"{res.seconds:.0f} s:\n{(res.stdout + res.stderr)[-6000:]}"
        )
    return res


def docker_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


class Daemon:
    """The Docker daemon the tests use; ``proc`` is set when this process started it."""

    def __init__(self, proc: subprocess.Popen | None, log: Path | None):
        self.proc, self.log = proc, log

    @property
    def started_here(self) -> bool:
        return self.proc is not None

    def stop(self, timeout: float = 60) -> None:
        """Stop the daemon if we started it (its containerd goes with it)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def dockerd(log: Path, timeout: float = 90) -> Daemon:
    """The running daemon, or a ``dockerd`` started now (logging to ``log``)."""
    if docker_answers():
        return Daemon(None, None)
    flags = shlex.split(os.environ.get("SHARDED_DOCKERD_FLAGS", ""))
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as f:
        proc = subprocess.Popen(
            ["dockerd", *flags],
            stdout=f,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while not docker_answers():
        if proc.poll() is not None or time.monotonic() > deadline:
            Daemon(proc, log).stop(10)
            tail = log.read_text(errors="replace")[-3000:]
            raise DockerError(
                f"dockerd {'exited' if proc.poll() is not None else 'not up'} (log {log}):\n{tail}"
            )
        time.sleep(0.5)
    return Daemon(proc, log)


def ensure_base_image(timeout: float = 900) -> str:
    """``built``, ``cached`` or ``official``: see scripts/python_standin_image.py."""
    res = run([sys.executable, str(STANDIN)], timeout=timeout)
    return res.stderr.strip().rsplit(": ", 1)[-1]


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(n: int) -> list[int]:
    """``n`` distinct free loopback ports (the sockets stay bound until all are chosen, so
    the kernel cannot hand out one port twice)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def inspect(kind: str, names: list[str]) -> list[dict]:
    if not names:
        return []
    return json.loads(run(["docker", kind, "inspect", *names], timeout=60).stdout)


class Compose:
    """docker-compose.yml of the repository as project ``project``."""

    def __init__(self, project: str, env: dict[str, str] | None = None):
        cmd = compose_command()
        if cmd is None:
            raise DockerError("neither docker-compose nor `docker compose` is installed")
        self.project = project
        self.base = [*cmd, "-p", project, "-f", str(COMPOSE_FILE), "--project-directory", str(ROOT)]
        # Only what the caller sets: no RAY_* from the test process (token auth is the file's
        # default, on, unless a caller passes SHARDED_RAY_NO_AUTH=1).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        self.env.update(env or {})

    def __call__(self, *args: str, timeout: float = 300, check: bool = True):
        return run([*self.base, *args], timeout=timeout, check=check, cwd=ROOT, env=self.env)

    def _ids(self, kind: str) -> list[str]:
        label = f"label=com.docker.compose.project={self.project}"
        cmd = {
            "container": ["docker", "ps", "-a", "-q", "--no-trunc", "--filter", label],
            "network": ["docker", "network", "ls", "-q", "--no-trunc", "--filter", label],
            "volume": ["docker", "volume", "ls", "-q", "--filter", label],
        }[kind]
        return run(cmd, timeout=60).stdout.split()

    def resources(self) -> dict[str, list[str]]:
        """The project's containers, networks and volumes (by the label Compose gives them),
        plus networks and volumes merely named after it."""
        out = {kind: self._ids(kind) for kind in ("container", "network", "volume")}
        prefix = f"{self.project}_"
        named = run(["docker", "network", "ls", "--format", "{{.Name}}"], timeout=60).stdout
        out["network"] += [n for n in named.split() if n.startswith(prefix)]
        named = run(["docker", "volume", "ls", "--format", "{{.Name}}"], timeout=60).stdout
        out["volume"] += [v for v in named.split() if v.startswith(prefix)]
        return {k: sorted(set(v)) for k, v in out.items()}

    def containers(self) -> list[dict]:
        return inspect("container", self._ids("container"))

    def logs(self, tail: int = 60) -> str:
        res = self("logs", "--no-color", f"--tail={tail}", timeout=60, check=False)
        return res.stdout + res.stderr

    def down(self, timeout: float = 180) -> subprocess.CompletedProcess:
        return self(
            "down", "-v", "--remove-orphans", "--timeout", "30", timeout=timeout, check=False
        )
