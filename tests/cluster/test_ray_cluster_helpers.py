"""The cluster helpers without a cluster: commands they build, detection, errors, scoped stop,
and the launch scripts' help and syntax."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster import _cli
from cluster import ray_cluster as rc

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "visible, n",
    [
        ("0,1", 2),
        ("3", 1),
        ("", 0),
        ("-1", 0),
        ("NoDevFiles", 0),
        ("GPU-a1b2,GPU-c3d4,GPU-e5f6", 3),
    ],
)
def test_gpus_from_cuda_visible_devices(visible, n):
    assert rc.detect_num_gpus({"CUDA_VISIBLE_DEVICES": visible}) == n


def test_gpus_from_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text(
        "#!/bin/sh\necho 'GPU 0: NVIDIA H100 (UUID: GPU-1)'\n"
        "echo 'GPU 1: NVIDIA H100 (UUID: GPU-2)'\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert rc.detect_num_gpus({}) == 2
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert rc.detect_num_gpus({}) == 0


def test_head_command():
    cmd = rc.head_command(
        6400,
        object_store_memory=10**8,
        num_cpus=2,
        num_gpus=1,
        node_ip_address="10.0.0.1",
        temp_dir="/tmp/x",
        ray_args=["--foo"],
    )
    # Ray's own `ray start`, plus --ray-client-server-host and a private temp dir
    # (cluster/_ray_start.py)
    assert cmd[:3] == [sys.executable, "-m", "cluster._ray_start"]
    assert cmd[3:6] == ["start", "--head", "--port=6400"]
    for arg in (
        "--num-cpus=2",
        "--num-gpus=1",
        "--object-store-memory=100000000",
        "--node-ip-address=10.0.0.1",
        "--temp-dir=/tmp/x",
        "--include-dashboard=false",
        f"--ray-client-server-port={rc.DEFAULT_CLIENT_PORT}",
        "--ray-client-server-host=127.0.0.1",
        "--foo",
    ):
        assert arg in cmd
    assert cmd[-1] == "--block"  # the launcher owns the node's lifetime
    dash = rc.head_command(dashboard=True, num_gpus=0)
    assert "--include-dashboard=true" in dash and "--dashboard-host=127.0.0.1" in dash


def test_worker_command_detects_gpus(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    cmd = rc.worker_command("10.0.0.1:6379", num_cpus=0.5)
    assert cmd[:3] == [sys.executable, "-m", "cluster._ray_start"]  # as the head's
    assert cmd[3:5] == ["start", "--address=10.0.0.1:6379"]
    assert "--num-gpus=3" in cmd and "--num-cpus=0.5" in cmd and "--head" not in cmd


def test_cli_reads_options_from_the_environment(monkeypatch, capsys):
    monkeypatch.setenv("SHARDED_RAY_PORT", "6500")
    monkeypatch.setenv("SHARDED_RAY_NUM_CPUS", "3")
    monkeypatch.setenv("SHARDED_RAY_OBJECT_STORE_MEMORY", "512M")
    monkeypatch.setenv("SHARDED_RAY_NUM_GPUS", "0")
    assert _cli.main(["head", "--dry-run", "--node-ip-address", "10.1.2.3"]) == 0
    out = capsys.readouterr().out
    assert "--port=6500" in out and "--num-cpus=3" in out
    assert f"--object-store-memory={512 * 2**20}" in out and "--node-ip-address=10.1.2.3" in out
    monkeypatch.setenv("SHARDED_RAY_ADDRESS", "head:6500")
    assert _cli.main(["worker", "--dry-run"]) == 0
    assert "--address=head:6500" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text, n",
    [
        ("1000", 1000),
        ("512M", 512 * 2**20),
        ("2g", 2 * 2**30),
        ("1.5GiB", 3 * 2**29),
        ("2gb", 2 * 2**30),
    ],
)
def test_parse_bytes(text, n):
    assert _cli.parse_bytes(text) == n


@pytest.mark.parametrize("bad", ["", "lots", "-1G", "0"])
def test_parse_bytes_rejects(bad):
    with pytest.raises(Exception, match=re.escape(repr(bad)) if bad else "size"):
        _cli.parse_bytes(bad)


def test_node_ip():
    assert rc.node_ip(towards="127.0.0.1:6379") == "127.0.0.1"
    assert rc.node_ip(interface="lo") == "127.0.0.1"
    with pytest.raises(rc.ClusterError, match="'nosuch0'"):
        rc.node_ip(interface="nosuch0")


def test_ray_env_pins_drain_but_never_turns_auth_off():
    env = rc.ray_env({"PATH": "/bin"})
    assert "RAY_AUTH_MODE" not in env  # decided by cluster.auth, token on by default
    assert env["RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"] == "0"
    assert env["OPENBLAS_THREAD_TIMEOUT"] == "20"  # (the workers' BLAS threads spin briefly)
    mine = rc.ray_env(
        {
            "RAY_AUTH_MODE": "token",
            "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "5",
            "OPENBLAS_THREAD_TIMEOUT": "28",
        }
    )
    assert mine["RAY_AUTH_MODE"] == "token"
    assert mine["RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"] == "5"
    assert mine["OPENBLAS_THREAD_TIMEOUT"] == "28"


def test_waiting_for_an_absent_cluster_names_how_many_arrived():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(rc.NodesNotReady) as info:
        rc.wait_for_nodes(f"127.0.0.1:{port}", 2, timeout=1)
    assert time.monotonic() - t0 < 10
    err = info.value
    assert isinstance(err, TimeoutError) and isinstance(err, rc.ClusterError)
    assert (err.expected, err.arrived, err.timeout) == (2, 0, 1)
    assert str(err).startswith(f"only 0 of 2 Ray nodes registered at 127.0.0.1:{port} within 1 s")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "cluster.ray_cluster",
            "wait",
            "--address",
            f"127.0.0.1:{port}",
            "--nodes",
            "3",
            "--timeout",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert res.returncode == 1
    assert "only 0 of 3 Ray nodes registered" in res.stderr


def test_bad_addresses_and_counts_are_refused():
    with pytest.raises(rc.ClusterError, match="'nohost'"):
        rc.wait_for_nodes("nohost", 1, timeout=1)
    with pytest.raises(ValueError, match="got 0"):
        rc.wait_for_nodes("127.0.0.1:1", 0, timeout=1)
    with pytest.raises(rc.ClusterError, match="needs node_ip_address"):
        rc.start_head(launcher=["nsenter", "--net=/run/netns/x"])


def _children(pid: int) -> list[int]:
    """Pids of the processes whose parent is ``pid``."""
    kids = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid
            ):
                kids.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile
    return kids


def test_stop_temp_dir_kills_only_that_clusters_ray_processes(tmp_path):
    temp_dir = tmp_path / "ray"
    sleeper = (
        "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(60)']); time.sleep(60)"
    )
    # Stand-ins: a "daemon" naming its session dir (with a child, like raylet's workers), a
    # launcher merely mentioning the temp dir, and another cluster's daemon.
    daemon = subprocess.Popen(
        [sys.executable, "-c", sleeper, f"--session-dir={temp_dir}/session_1"]
    )
    launcher = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", f"--temp-dir={temp_dir}"]
    )
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(60)",
            f"--session-dir={tmp_path}/other/session_1",
        ]
    )
    try:
        # let the daemon start its child (a Python's start-up: seconds on a loaded machine)
        deadline = time.monotonic() + 60
        while not _children(daemon.pid):
            assert time.monotonic() < deadline and daemon.poll() is None, "no child in 60 s"
            time.sleep(0.05)
        found = rc.stop_temp_dir(str(temp_dir), timeout=5)
        assert found == 2  # the daemon and its child
        assert daemon.wait(5) is not None
        assert launcher.poll() is None and other.poll() is None
    finally:
        for p in (daemon, launcher, other):
            p.kill()
            p.wait()


SCRIPTS = [
    "scripts/sbatch_ray.sh",
    "scripts/salloc_ray.sh",
    "cluster/slurm_ray.sh",
    "cluster/entrypoint.sh",
    "scripts/install_system_deps.sh",
]


@pytest.mark.parametrize("path", SCRIPTS)
def test_shell_syntax(path):
    shell = "sh" if path == "cluster/entrypoint.sh" else "bash"
    res = subprocess.run([shell, "-n", str(ROOT / path)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def _options_in(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", text))


@pytest.mark.parametrize(
    "script, own",
    [("scripts/sbatch_ray.sh", set()), ("scripts/salloc_ray.sh", {"--shell", "--print"})],
)
def test_help_explains_every_option(script, own):
    res = subprocess.run(
        ["bash", str(ROOT / script), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert res.returncode == 0, res.stderr
    parser = (ROOT / "cluster/slurm_ray.sh").read_text()
    block = parser[parser.index("sr_parse_option() {") :]
    block = block[: block.index("\n}\n")]
    accepted = _options_in(block) | own
    assert len(accepted) >= 12
    documented = _options_in(res.stdout)
    assert accepted <= documented, f"undocumented: {accepted - documented}"
    assert "RAY_ADDRESS" in res.stdout and "-h, --help" in res.stdout


def test_entrypoint_help_and_roles(tmp_path):
    res = subprocess.run(
        [str(ROOT / "cluster/entrypoint.sh"), "help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
    )
    assert res.returncode == 0, res.stderr
    for role in ("head", "worker", "client"):
        assert f"python -m cluster.ray_cluster {role}" in res.stdout
    res = subprocess.run(
        [
            str(ROOT / "cluster/entrypoint.sh"),
            "head",
            "--dry-run",
            "--node-ip-address",
            "10.9.8.7",
            "--num-gpus",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
    )
    assert res.returncode == 0, res.stderr
    assert "start --head --port=6379" in res.stdout and "--block" in res.stdout
