"""scripts/sbatch_ray.sh and scripts/salloc_ray.sh on a real Slurm, running a sharded program.

Each run brings up a Ray cluster over the job's nodes, runs ``python -m cluster.smoke`` (a
sharded computation) as the driver, and must leave no Ray process behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from cluster.smoke import parse_report

ROOT = Path(__file__).resolve().parents[2]
SIZE = 12
NOBODY = 65534  # a uid that is not ours (the tests run as root)


def _ray_options(slurm, tmp: Path) -> tuple[list[str], str]:
    """Script options for a small, quick cluster, and the run's Ray temp dir."""
    # A short temp dir per run (Ray's socket paths are length-limited); its name also finds
    # any leftover process of this run afterwards.
    temp_dir = tempfile.mkdtemp(prefix="r", dir=slurm.dir)
    return [
        "--python",
        sys.executable,
        "--object-store-memory",
        "100M",
        "--timeout",
        "120",
        f"--temp-dir={temp_dir}",
        f"--log-dir={tmp / 'ray-logs'}",
    ], temp_dir


def _smoke_command(n_nodes: int) -> list[str]:
    # One worker per CPU of the 2-CPU nodes: the workers, hence the shards, span every node.
    return [
        sys.executable,
        "-m",
        "cluster.smoke",
        "--workers",
        str(2 * n_nodes),
        "--shards",
        "4",
        "--size",
        str(SIZE),
        "--min-nodes",
        str(n_nodes),
    ]


def _logs(tmp: Path, slurm) -> str:
    parts = [slurm.logs()]
    for path in sorted((tmp / "ray-logs").glob("*.log")):
        parts.append(f"--- {path.name} ---\n" + path.read_text(errors="replace")[-3000:])
    return "\n".join(parts)


def _ray_leftovers(slurm, temp_dir: str) -> list[str]:
    """Command lines of processes still using this run's Ray temp dir, or Ray processes inside
    the Slurm nodes' namespaces."""
    pids = set(slurm.hosts.pids()) if slurm.hosts is not None else set()
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        is_ray = any(
            k in cmd
            for k in (
                "raylet",
                "gcs_server",
                "ray.scripts",
                "default_worker",
                "ray::",
                "dashboard/agent",
                "log_monitor",
            )
        )
        if temp_dir in cmd or (int(entry.name) in pids and is_ray):
            left.append(cmd[:200])
    return left


def _ray_leftovers_after(slurm, temp_dir: str, timeout: float) -> list[str]:
    """:func:`_ray_leftovers`, once they are gone or ``timeout`` s on: processes killed (by
    the scripts' SIGKILL, by slurmstepd, or with their raylet: Ray workers exit when they
    notice it is gone) end a moment after the job does."""
    deadline = time.monotonic() + timeout
    while _ray_leftovers(slurm, temp_dir) and time.monotonic() < deadline:
        time.sleep(0.5)
    return _ray_leftovers(slurm, temp_dir)


def _check_report(output: str, n_nodes: int) -> None:
    report = parse_report(output)
    ref = np.arange(SIZE, dtype=np.float64)
    assert report["sum"] == ref.sum()
    np.testing.assert_array_equal(np.array(report["doubled"]), ref * 2 + 1)
    assert report["ok"]
    assert len(report["nodes"]) == n_nodes, report["placement"]
    assert sorted(p["offsets"][0] for p in report["placement"]) == [0, 3, 6, 9]


def test_sbatch_runs_a_sharded_program_on_every_node(slurm, tmp_path):
    n = len(slurm.nodes)
    ray_opts, temp_dir = _ray_options(slurm, tmp_path)
    out = tmp_path / "job.out"
    job = slurm.submit(
        [
            f"--nodes={n}",
            "--ntasks-per-node=1",
            "--cpus-per-task=2",
            f"--output={out}",
            "--time=10",
            str(ROOT / "scripts/sbatch_ray.sh"),
            *ray_opts,
            "--",
            *_smoke_command(n),
        ],
        cwd=ROOT,
    )
    state, code = slurm.wait_job(job, timeout=240)
    text = out.read_text(errors="replace") if out.exists() else "<no job output>"
    assert (state, code) == ("COMPLETED", 0), f"{text}\n{_logs(tmp_path, slurm)}"
    _check_report(text, n)
    assert f"Ray cluster up: {n} nodes" in text
    assert "Ray stopped" in text
    assert _ray_leftovers_after(slurm, temp_dir, 20) == []
    # Logs: new files of this user only, in a directory only this user may enter.  Each
    # node's temp dir stays 0700 (Ray's world-writable tree is inside it, in NODE/ray).
    logs = tmp_path / "ray-logs"
    assert _mode(logs) == 0o700
    names = sorted(p.name.rsplit("-", 1)[0] for p in logs.glob("*.log"))
    assert names == sorted([f"head-{slurm.nodes[0]}", *(f"worker-{w}" for w in slurm.nodes[1:])])
    assert {_mode(p) for p in logs.glob("*.log")} == {0o600}
    for node in slurm.nodes:
        assert _mode(Path(temp_dir, node)) == 0o700, node
        assert Path(temp_dir, node, "ray", "session_latest").is_symlink(), node


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_scancel_stops_ray_on_every_node(slurm, tmp_path):
    n = len(slurm.nodes)
    ray_opts, temp_dir = _ray_options(slurm, tmp_path)
    out = tmp_path / "job.out"
    program = "import time; print('PROGRAM STARTED', flush=True); time.sleep(600)"
    job = slurm.submit(
        [
            f"--nodes={n}",
            "--ntasks-per-node=1",
            "--cpus-per-task=2",
            f"--output={out}",
            str(ROOT / "scripts/sbatch_ray.sh"),
            *ray_opts,
            "--",
            sys.executable,
            "-c",
            program,
        ],
        cwd=ROOT,
    )
    deadline = time.monotonic() + 180
    while "PROGRAM STARTED" not in (out.read_text(errors="replace") if out.exists() else ""):
        assert time.monotonic() < deadline, _logs(tmp_path, slurm)
        time.sleep(0.5)
    slurm.run(["scancel", str(job)], check=True, timeout=30)
    state, _ = slurm.wait_job(job, timeout=120)
    text = out.read_text(errors="replace")
    assert state == "CANCELLED", f"{text}\n{_logs(tmp_path, slurm)}"
    assert "terminated (scancel or time limit?)" in text
    # Slurm's KillWait, then SIGKILL, covers the rest
    assert _ray_leftovers_after(slurm, temp_dir, 30) == []


def test_salloc_runs_a_program_and_returns_its_status(slurm, tmp_path):
    ray_opts, temp_dir = _ray_options(slurm, tmp_path)
    # One node keeps it quick; the exit status must be the program's, and Ray must stop.
    res = slurm.run(
        [
            "salloc",
            "--nodes=1",
            "--cpus-per-task=2",
            "bash",
            str(ROOT / "scripts/salloc_ray.sh"),
            *ray_opts,
            "--",
            sys.executable,
            "-c",
            "import os, sys; print('ADDRESS', os.environ['RAY_ADDRESS']); sys.exit(3)",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    text = res.stdout + res.stderr
    assert res.returncode == 3, f"{text}\n{_logs(tmp_path, slurm)}"
    assert f"ADDRESS {slurm.addrs[0]}:6379" in text
    assert "program exited with status 3" in text and "Ray stopped" in text
    assert _ray_leftovers_after(slurm, temp_dir, 20) == []


def test_salloc_shell_runs_a_sharded_program(slurm, tmp_path):
    n = len(slurm.nodes)
    ray_opts, temp_dir = _ray_options(slurm, tmp_path)
    # The default mode opens a shell on the head node; a piped script stands in for the user.
    script = " ".join(_smoke_command(n)) + "\nexit $?\n"
    res = slurm.run(
        [
            "salloc",
            f"--nodes={n}",
            "--ntasks-per-node=1",
            "--cpus-per-task=2",
            "--time=10",
            "bash",
            str(ROOT / "scripts/salloc_ray.sh"),
            *ray_opts,
        ],
        input=script,
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    text = res.stdout + res.stderr
    assert res.returncode == 0, f"{text}\n{_logs(tmp_path, slurm)}"
    _check_report(text, n)
    assert "Ray stopped" in text
    assert _ray_leftovers_after(slurm, temp_dir, 20) == []


def _salloc_true(slurm, tmp_path, *options: str) -> subprocess.CompletedProcess:
    ray_opts, _ = _ray_options(slurm, tmp_path)
    return slurm.run(
        ["salloc", "--nodes=1", "--cpus-per-task=2", "bash", str(ROOT / "scripts/salloc_ray.sh")]
        + [*ray_opts, *options, "--", "true"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


def test_scripts_refuse_log_and_temp_dirs_others_can_use(slurm, tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    for log_dir, why in [(loose, "it has mode 755"), (tmp_path / "link", "it is a symlink")]:
        res = _salloc_true(slurm, tmp_path, f"--log-dir={log_dir}")
        assert res.returncode == 1, res.stdout + res.stderr
        assert f"refusing {log_dir}: {why}" in res.stderr, res.stderr
    assert os.listdir(loose) == [] and os.listdir(real) == []
    # A temp dir another user made beforehand (/tmp/sharded-ray-JOBID is a name anyone can
    # guess): the head's helper refuses it on its node, and the script says why.
    theirs = Path(tempfile.mkdtemp(prefix="t", dir=slurm.dir))
    os.chown(theirs, NOBODY, NOBODY)
    res = _salloc_true(slurm, tmp_path, f"--temp-dir={theirs}")
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"refusing {theirs}: it is owned by uid {NOBODY}" in res.stderr, res.stderr
    assert "Ray cluster failed to start" in res.stderr
    assert os.listdir(theirs) == []


def test_scripts_refuse_to_run_outside_an_allocation():
    for script in ("sbatch_ray.sh", "salloc_ray.sh"):
        res = subprocess.run(
            ["bash", str(ROOT / "scripts" / script), "--", "true"],
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": "/usr/bin:/bin"},
        )
        assert res.returncode == 1
        assert "not inside a Slurm allocation" in res.stderr
