"""Secure defaults of the Python launchers (``cluster.ray_cluster.start_head``/``start_worker``),
on a real Ray head: token authentication unless opted out, private temp and log directories,
and launch logs that never write through something planted at their path.

Every driver runs as its own process with a clean environment (HOME too: no token file of the
user's) and a bounded timeout; the head is one per module, stopped whatever happens.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from cluster import auth
from cluster import ray_cluster as rc
from cluster.errors import ClusterError, TokenAuthUnsupported, TokenNotFound, UnsafePath
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534  # a uid that is not ours, for directories another user owns

DRIVER = textwrap.dedent(
    """
    import ray
    ray.init()  # RAY_ADDRESS from the environment
    print("RESULT", ray.get(ray.remote(lambda: 6 * 7).remote()), flush=True)
    """
)


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    return env


def _driver(env: dict[str, str], timeout: float = 120) -> tuple[int | None, str, str]:
    """Run :data:`DRIVER`; (exit code or None when it had to be killed, stdout, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out, err


def _small(tmp: Path, name: str) -> dict:
    """Options of a small node whose files all stay under ``tmp``."""
    return dict(
        num_cpus=1,
        num_gpus=0,
        object_store_memory=100 << 20,
        temp_dir=str(tmp / f"ray-{name}"),
        log_dir=str(tmp / "logs"),
        timeout=90,
    )


@pytest.fixture(scope="module")
def tmp():
    path = Path(tempfile.mkdtemp(prefix="shl", dir="/tmp"))  # short: Ray's socket path limit
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def head(tmp):
    """A head started from Python with the defaults (a token file under ``tmp``)."""
    env = _clean_env(tmp / "home")
    node = rc.start_head(
        port=free_port(),
        client_port=free_port(),
        token_file=str(tmp / "home" / "token"),
        env=env,
        **_small(tmp, "head"),
    )
    try:
        yield node, env
    finally:
        node.stop()
        rc.stop_temp_dir(str(tmp / "ray-head"), timeout=5)


def test_a_head_started_from_python_refuses_a_driver_without_the_token(head, tmp):
    node, env = head
    assert node.auth_env == {
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(tmp / "home" / "token"),
    }
    assert node.token_file == tmp / "home" / "token"
    assert node.token_file.stat().st_mode & 0o777 == 0o600
    # RAY_AUTH_MODE=disabled, as the launchers used to give every node and driver
    tokenless = {**env, "RAY_ADDRESS": node.address, "RAY_AUTH_MODE": "disabled"}
    code, out, err = _driver(tokenless, timeout=120)
    assert code != 0 and "RESULT" not in out, out + err[-3000:]
    assert "AuthenticationError" in err or "ConnectionError" in err, err[-3000:]
    # the head's own driver environment gets in
    code, out, err = _driver(node.driver_env(env))
    assert code == 0 and "RESULT 42" in out, out + err[-3000:]


def test_the_nodes_files_stay_private(head, tmp):
    node, _ = head
    # Ray makes its temp dir world-writable (chmod 0777, by every Ray process): it is one
    # level down, in a 0700 directory that drivers and Ray's workers leave alone
    assert (tmp / "ray-head").stat().st_mode & 0o777 == 0o700
    assert (tmp / "ray-head" / "ray" / "session_latest").exists()
    assert node.log_path.parent == tmp / "logs"
    assert node.log_path.parent.stat().st_mode & 0o777 == 0o700
    assert node.log_path.stat().st_mode & 0o777 == 0o600


def test_start_worker_needs_the_heads_token(head, tmp):
    node, env = head
    with pytest.raises(TokenNotFound, match=f"no token file at {tmp}/nowhere/token") as info:
        rc.start_worker(node.address, env=env, token_file=str(tmp / "nowhere" / "token"))
    assert info.value.path == str(tmp / "nowhere" / "token")
    with pytest.raises(ClusterError, match="pass --no-auth"):  # disabled only when asked
        rc.start_worker(node.address, env={**env, "RAY_AUTH_MODE": "disabled"})
    worker = rc.start_worker(node.address, env=node.driver_env(env), **_small(tmp, "worker"))
    try:
        # start_worker returned: the cluster counted it (2 nodes alive)
        assert worker.alive and worker.auth_env == node.auth_env
    finally:
        worker.stop()
        rc.stop_temp_dir(str(tmp / "ray-worker"), timeout=5)


def test_opting_out_is_explicit_and_then_runs_without_a_token(tmp):
    env = {**_clean_env(tmp / "home-off"), "RAY_AUTH_MODE": "disabled"}
    with pytest.raises(ClusterError, match="no_auth=True"):
        rc.start_head(port=free_port(), env=env, **_small(tmp, "off"))
    node = rc.start_head(
        port=free_port(), client_port=free_port(), env=env, no_auth=True, **_small(tmp, "off")
    )
    try:
        assert node.auth_env == {"RAY_AUTH_MODE": "disabled"} and node.token_file is None
        assert not (tmp / "home-off" / ".ray").exists()  # no token made
        code, out, err = _driver({**env, "RAY_ADDRESS": node.address})
        assert code == 0 and "RESULT 42" in out, out + err[-3000:]
    finally:
        node.stop()
        rc.stop_temp_dir(str(tmp / "ray-off"), timeout=5)


def test_token_auth_needs_ray_2_52():
    assert auth.check_ray_supports_tokens() == __import__("ray").__version__
    assert auth.check_ray_supports_tokens("2.52.0") == "2.52.0"
    assert auth.check_ray_supports_tokens("3.0.0.dev0") == "3.0.0.dev0"
    with pytest.raises(TokenAuthUnsupported, match=r"needs ray>=2\.52, but Ray 2\.51\.1") as info:
        auth.check_ray_supports_tokens("2.51.1")
    assert (info.value.version, info.value.minimum) == ("2.51.1", "2.52")
    assert isinstance(info.value, ClusterError)
    # the image installs pyproject.toml's dependencies (cluster/Dockerfile reads the list)
    assert '"ray[default]>=2.52"' in (ROOT / "pyproject.toml").read_text()
    assert "['project']['dependencies']" in (ROOT / "cluster/Dockerfile").read_text()


def test_launch_logs_refuse_a_planted_symlink(tmp_path):
    logs = rc.private_dir(tmp_path / "logs")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (logs / "head.log").symlink_to(victim)
    (logs / "dangling.log").symlink_to(tmp_path / "not-yet")
    (logs / "old.log").write_text("old")
    planted = [("head.log", "a symlink"), ("dangling.log", "a symlink"), ("old.log", "a file")]
    for name, what in planted:
        with pytest.raises(UnsafePath, match=f"{what} is already there"):
            rc.open_private_log(logs / name)
    assert victim.read_text() == "precious" and not (tmp_path / "not-yet").exists()
    with rc.open_private_log(logs / "new.log") as log:
        log.write(b"ok")
    assert (logs / "new.log").stat().st_mode & 0o777 == 0o600


def test_launchers_refuse_log_and_temp_dirs_others_can_use(tmp_path):
    env = _clean_env(tmp_path / "home")
    opts = dict(port=free_port(), env=env, token_file=str(tmp_path / "token"), num_gpus=0)
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    (tmp_path / "link").symlink_to(rc.private_dir(tmp_path / "real"))
    # refused before any process starts
    with pytest.raises(UnsafePath, match=f"refusing {loose}: it has mode 0o755"):
        rc.start_head(log_dir=str(loose), **opts)
    with pytest.raises(UnsafePath, match="is a symlink"):
        rc.start_head(log_dir=str(tmp_path / "link"), **opts)
    with pytest.raises(UnsafePath, match=f"refusing {loose}: it has mode 0o755"):
        rc.start_head(temp_dir=str(loose), **opts)
    # the node checks its temp dir itself where it runs (under a launcher, from the CLI)
    for argv in (
        ["-m", "cluster.ray_cluster", "head", "--num-gpus=0", f"--token-file={tmp_path}/t"],
        ["-m", "cluster._ray_start", "start", "--head"],
    ):
        res = subprocess.run(
            [sys.executable, *argv, f"--temp-dir={loose}"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 1 and f"refusing {loose}: it has mode 0o755" in res.stderr, (
            argv,
            res.stderr[-2000:],
        )
    assert os.listdir(loose) == []


def test_private_dir_makes_0700_and_refuses_what_others_could_change(tmp_path):
    old = os.umask(0)  # even so: 0700, never briefly wider
    try:
        made = rc.private_dir(tmp_path / "a" / "b")
    finally:
        os.umask(old)
    for d in (made, made.parent):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert rc.private_dir(made) == made  # an existing private one is fine
    (tmp_path / "file").write_text("")
    with pytest.raises(UnsafePath, match="is not a directory"):
        rc.private_dir(tmp_path / "file")
    # a directory above that anyone may write to (no sticky bit): refused
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UnsafePath, match=f"refusing {shared}: it has mode 0o777"):
        rc.private_dir(shared / "mine")
    shared.chmod(0o1777)  # as /tmp: only an entry's owner may rename it
    assert rc.private_dir(shared / "mine") == shared / "mine"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory another user owns needs root")
def test_private_dir_refuses_another_users_directory(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=f"refusing {theirs}: it is owned by uid {NOBODY}"):
        rc.private_dir(theirs)
    # ... nor a directory of ours inside theirs (they could swap it for another one), and
    # nothing is made in there first
    with pytest.raises(UnsafePath, match=f"refusing {theirs}: it is owned by uid {NOBODY}"):
        rc.private_dir(theirs / "ours" / "logs")
    assert os.listdir(theirs) == []
    inner = theirs / "ours"
    inner.mkdir(mode=0o700)
    with pytest.raises(UnsafePath, match=f"refusing {theirs}: it is owned by uid {NOBODY}"):
        rc.private_dir(inner)
