"""A throwaway Slurm (munged + slurmctld + slurmd) on this machine, for trying the launch scripts.

Everything lives in one directory: a generated ``slurm.conf``, a fresh munge key and socket,
state, spool and logs, so it never touches ``/etc/slurm`` or a system munged.  With
:class:`tests.support.netns.VirtualHosts` every Slurm node is its own network host (own IP, own
slurmd port), so ``srun -w node2`` really reaches another address; without it there is one node on
127.0.0.1.  The daemons run as root, as in a container (``SlurmUser=root``).

Example
-------
>>> with VirtualHosts(2) as hosts, LocalSlurm("/tmp/ls", hosts=hosts) as slurm:  # doctest: +SKIP
...     slurm.run(["sinfo"])
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from tests.support.netns import VirtualHosts
from tests.support.ports import free_port

SLURM_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "salloc", "srun", "sinfo")


class LocalSlurmError(RuntimeError):
    """The local Slurm could not be configured or did not come up; the message has its logs."""


def missing_binaries() -> list[str]:
    """The Slurm and munge programs absent from PATH (``[]`` when all are there).

    Examples
    --------
    >>> isinstance(missing_binaries(), list)
    True
    """
    extra = os.pathsep.join(["/usr/sbin", "/sbin"])  # daemons live in sbin, off a user's PATH
    path = os.pathsep.join([os.environ.get("PATH", ""), extra])
    return [b for b in SLURM_BINARIES if shutil.which(b, path=path) is None]


class LocalSlurm:
    """Start munged, slurmctld and one slurmd per node from a generated configuration.

    Parameters
    ----------
    workdir : str or Path
        Empty directory for configuration, key, state and logs.
    hosts : VirtualHosts, optional
        One Slurm node per virtual host (``node1``, ``node2``, ...); the controller runs on the
        first.  Without it: a single node named after this machine, on 127.0.0.1.
    cpus : int
        CPUs each node advertises (trusted as configured, whatever the machine has).
    memory_mb : int
        Memory each node advertises.

    Examples
    --------
    >>> slurm = LocalSlurm("/tmp/ls").start()  # doctest: +SKIP
    >>> slurm.run(["sbatch", "--wait", "job.sh"]).returncode  # doctest: +SKIP
    0
    >>> slurm.stop()  # doctest: +SKIP
    """

    def __init__(
        self,
        workdir: str | os.PathLike,
        hosts: VirtualHosts | None = None,
        cpus: int = 2,
        memory_mb: int = 4000,
    ):
        self.dir = Path(workdir).resolve()
        self.hosts = hosts
        self.cpus, self.memory_mb = cpus, memory_mb
        self.hostname = socket.gethostname().split(".")[0]
        if hosts is None:
            self.nodes = [self.hostname]
            self.addrs = ["127.0.0.1"]
        else:
            self.nodes = [f"node{i + 1}" for i in range(hosts.n)]
            self.addrs = [hosts.ip(i) for i in range(hosts.n)]
        self.conf = self.dir / "slurm.conf"
        self.socket = self.dir / "munge" / "munge.socket"
        self._daemons: list[tuple[str, subprocess.Popen]] = []
        path = os.environ.get("PATH", "")
        self.env = dict(
            os.environ,
            SLURM_CONF=str(self.conf),
            PATH=os.pathsep.join([path, "/usr/sbin", "/sbin"]),
        )

    # -- running commands -------------------------------------------------------------------
    def prefix(self, node: int = 0) -> list[str]:
        """Command prefix that runs on Slurm node ``node`` (the controller's host for 0)."""
        return self.hosts.prefix(node) if self.hosts is not None else []

    def run(self, argv: Sequence[str], node: int = 0, **kwargs) -> subprocess.CompletedProcess:
        """Run a command (``sbatch``, ``salloc`` ...) against this Slurm, from node ``node``."""
        kwargs.setdefault("env", self.env)
        return subprocess.run([*self.prefix(node), *argv], **kwargs)

    def submit(self, argv: Sequence[str], cwd: str | os.PathLike | None = None) -> int:
        """``sbatch --parsable ARGV`` from the controller's host; returns the job id."""
        res = self.run(
            ["sbatch", "--parsable", *argv], capture_output=True, text=True, cwd=cwd, timeout=60
        )
        if res.returncode != 0:
            raise LocalSlurmError(
                f"sbatch {' '.join(argv)} failed ({res.returncode}): {res.stderr.strip()}"
            )
        return int(res.stdout.strip().split(";")[0])

    def wait_job(self, job_id: int, timeout: float = 300.0) -> tuple[str, int]:
        """Wait until a job ends; return ``(state, exit_code)``, e.g. ``("COMPLETED", 0)``.

        Polls ``scontrol`` twice a second (``sbatch --wait`` backs off to 32 s between polls).
        On timeout the job is cancelled and :class:`LocalSlurmError` raised.
        """
        deadline = time.monotonic() + timeout
        while True:
            res = self.run(
                ["scontrol", "show", "job", "-o", str(job_id)],
                capture_output=True,
                text=True,
                timeout=30,
            )
            fields = dict(f.split("=", 1) for f in res.stdout.split() if "=" in f)
            state = fields.get("JobState", "UNKNOWN")
            if state not in (
                "PENDING",
                "CONFIGURING",
                "RUNNING",
                "COMPLETING",
                "UNKNOWN",
                "SUSPENDED",
            ):
                code, _, sig = fields.get("ExitCode", "255:0").partition(":")
                return state, int(code) if int(code) or not int(sig or 0) else 128 + int(sig)
            if time.monotonic() > deadline:
                self.run(["scancel", str(job_id)], capture_output=True, timeout=30)
                raise LocalSlurmError(
                    f"job {job_id} still {state} after {timeout:g} s\n{self.logs()}"
                )
            time.sleep(0.5)

    # -- lifecycle ----------------------------------------------------------------------------
    def write_config(self, slurmctld_port: int, slurmd_port: int) -> str:
        """Write ``slurm.conf`` and return its text."""
        d = self.dir
        lines = [
            "ClusterName=sharded-local",
            # The controller host must carry this machine's hostname; the address in brackets is
            # where the other nodes reach it.
            f"SlurmctldHost={self.hostname}({self.addrs[0]})",
            f"SlurmctldPort={slurmctld_port}",
            f"SlurmdPort={slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool/%n",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd-%n.pid",
            f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={d}/slurmd-%n.log",
            # No cgroups in containers or CI: track job processes by parent pid, bind nothing.
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/builtin",
            "MpiDefault=none",
            "ReturnToService=2",
            # Trust the configured CPUs/memory: two 2-CPU nodes may share a 2-core machine.
            "SlurmdParameters=config_overrides",
            "KillWait=5",
            "InactiveLimit=0",
            "MinJobAge=300",
            "SlurmdTimeout=30",
            "SlurmctldTimeout=30",
        ]
        for name, addr in zip(self.nodes, self.addrs):
            lines.append(
                f"NodeName={name} NodeAddr={addr} NodeHostname={self.hostname} "
                f"CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN"
            )
        lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        text = "\n".join(lines) + "\n"
        self.conf.write_text(text)
        return text

    def _spawn(self, name: str, argv: list[str], node: int | None = None) -> None:
        log = open(self.dir / f"{name}.stdout", "ab")
        prefix = self.prefix(node) if node is not None else []
        proc = subprocess.Popen(
            [*prefix, *argv],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
            start_new_session=True,
        )
        log.close()
        self._daemons.append((name, proc))

    def start(self, timeout: float = 60.0) -> LocalSlurm:
        """Start the daemons and wait until every node is idle; cleans up if that fails."""
        missing = missing_binaries()
        if missing:
            raise LocalSlurmError(
                f"Slurm/munge programs not found: {', '.join(missing)} "
                "(apt-get install slurmctld slurmd slurm-client munge)"
            )
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, timeout: float) -> None:
        for sub in ("state", "munge", *(f"spool/{n}" for n in self.nodes)):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir / "munge", 0o700)  # munged refuses keys and sockets others can reach
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o600)
        self._spawn(
            "munged",
            [
                "munged",
                "--foreground",
                "--force",
                f"--socket={self.socket}",
                f"--key-file={key}",
                f"--pid-file={self.dir}/munge/munged.pid",
                f"--log-file={self.dir}/munged.log",
                f"--seed-file={self.dir}/munge/munged.seed",
            ],
        )
        self._wait(lambda: self.socket.exists(), timeout, "munged socket")
        # In network namespaces every node has its own address, so the default ports are free;
        # on 127.0.0.1 pick unused ones so a real Slurm on this machine is not disturbed.
        ports = (6817, 6818) if self.hosts is not None else (free_port(), free_port())
        self.write_config(*ports)
        self._spawn("slurmctld", ["slurmctld", "-D", "-c", "-f", str(self.conf)], node=0)
        for i, name in enumerate(self.nodes):
            self._spawn(
                f"slurmd-{name}",
                ["slurmd", "-D", "-f", str(self.conf), "-N", name],
                node=i if self.hosts is not None else None,
            )
        self._wait(self._all_idle, timeout, f"{len(self.nodes)} idle Slurm nodes")

    def _all_idle(self) -> bool:
        res = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True)
        states = dict(line.split() for line in res.stdout.splitlines() if line.strip())
        return res.returncode == 0 and all(states.get(n) == "idle" for n in self.nodes)

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [(n, p.returncode) for n, p in self._daemons if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"daemons exited: {dead}" if dead else f"not within {timeout:g} s"
                raise LocalSlurmError(f"waiting for {what}: {why}\n{self.logs()}")
            time.sleep(0.3)

    def logs(self, lines: int = 15) -> str:
        """The last lines of every daemon log, for error messages."""
        out = []
        for path in sorted(self.dir.glob("*.log")) + sorted(self.dir.glob("*.stdout")):
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name} ---\n" + "\n".join(tail))
        return "\n".join(out)

    def processes(self) -> list[int]:
        """Pids of every process started under this Slurm: daemons, slurmstepd, job programs.

        They are recognised by ``SLURM_CONF`` pointing at this instance's config in their
        environment, which each of them inherits from the daemons or the submitting command.
        """
        needle = f"SLURM_CONF={self.conf}\0".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if needle in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel jobs, stop the daemons, then kill whatever this Slurm started (idempotent)."""
        if self._daemons and self.conf.exists():
            self.run(["scancel", "--full", "--user=root"], capture_output=True, timeout=30)
        for _, proc in reversed(self._daemons):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for _, proc in reversed(self._daemons):
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._daemons.clear()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.processes():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            end = time.monotonic() + 5
            while self.processes() and time.monotonic() < end:
                time.sleep(0.2)

    def __enter__(self) -> LocalSlurm:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
