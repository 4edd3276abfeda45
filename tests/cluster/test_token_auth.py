"""Token authentication of ``python -m cluster.ray_cluster head``, on a real Ray head.

The head runs on loopback only: it advertises 127.0.0.2 (any 127/8 address is this machine),
so a Ray Client server bound to the node's address would answer on 127.0.0.2, while the default
binds it to 127.0.0.1 only.  Every client runs as its own process with a clean environment
(HOME too: no ~/.ray/auth_token of the user's), every wait has a bound, and the head is
stopped (SIGTERM, then SIGKILL of its process group) whatever happens.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from cluster import auth
from cluster import ray_cluster as rc
from cluster.errors import ClusterError
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
NODE_IP = "127.0.0.2"


def _clean_env(home: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    env.update(HOME=home, PYTHONPATH=str(ROOT), **extra)
    return env


def _python(code: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def head():
    """A head started by the command line with its defaults: yields (gcs, client, token, env)."""
    tmp = tempfile.mkdtemp(prefix="sha", dir="/tmp")  # short: Ray's socket path limit
    port, client_port = free_port(), free_port()
    token_file = Path(tmp, "home", "cluster.token")
    env = _clean_env(str(Path(tmp, "home")))
    log_path = Path(tmp, "head.log")
    # The test reads the log through its own file object: seeking the head's shared file
    # description would make the head's later lines overwrite its summary.
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cluster.ray_cluster",
            "head",
            f"--port={port}",
            f"--client-port={client_port}",
            f"--node-ip-address={NODE_IP}",
            "--num-cpus=1",
            "--num-gpus=0",
            "--object-store-memory=100M",
            f"--temp-dir={tmp}/ray",
            f"--token-file={token_file}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        rc.wait_for_port(f"{NODE_IP}:{port}", timeout=90, proc=proc)
        waited = subprocess.run(
            [
                *[sys.executable, "-m", "cluster.ray_cluster", "wait"],
                *["--address", f"{NODE_IP}:{port}", "--nodes", "1", "--timeout", "90"],
                f"--token-file={token_file}",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert waited.returncode == 0, waited.stderr + log_path.read_text()[-3000:]
        rc.wait_for_port(f"127.0.0.1:{client_port}", timeout=60, proc=proc)
        yield f"{NODE_IP}:{port}", client_port, token_file, env, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait(10)
        log.close()
        rc.stop_temp_dir(f"{tmp}/ray", timeout=5)
        shutil.rmtree(tmp, ignore_errors=True)


def test_head_makes_a_private_token_file_and_says_how_to_use_it(head):
    gcs, client_port, token_file, _, out = head
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert token_file.parent.stat().st_mode & 0o077 == 0  # made 0700
    token = token_file.read_text()
    assert len(token) == 64 and int(token, 16) >= 0
    assert f"token authentication on; the token is in {token_file}" in out
    assert f"RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH={token_file}" in out
    assert f"worker --address {gcs} --token-file {token_file}" in out
    assert f"Ray Client server on 127.0.0.1:{client_port}" in out


GCS_PROBE = """
    import sys
    from cluster.readiness import alive_nodes
    try:
        print("NODES", len(alive_nodes(sys.argv[1] if len(sys.argv) > 1 else "{gcs}", 10)))
    except Exception as e:
        print("REFUSED", type(e).__name__, e)
"""


def test_gcs_refuses_a_client_without_the_token(head):
    gcs, _, token_file, env, _ = head
    code = GCS_PROBE.format(gcs=gcs)
    without = _python(code, {**env, "RAY_AUTH_MODE": "disabled"}, timeout=60)
    assert "REFUSED AuthenticationError" in without.stdout, without.stdout + without.stderr
    assert "InvalidAuthToken" in without.stdout
    wrong = _python(code, {**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "0" * 64}, 60)
    assert "REFUSED AuthenticationError" in wrong.stdout, wrong.stdout + wrong.stderr
    right = _python(code, {**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_file)})
    assert "NODES 1" in right.stdout, right.stdout + right.stderr


PING = """
    import grpc
    from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc
    token = {token!r}
    stub = ray_client_pb2_grpc.RayletDriverStub(grpc.insecure_channel({target!r}))
    req = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)
    for md in (None, [("authorization", "Bearer " + "0" * 64)], [("authorization", token)]):
        try:
            stub.ClusterInfo(req, timeout=20, metadata=md)
            print("OK")
        except grpc.RpcError as e:
            print(e.code().name)
"""


def test_ray_client_server_needs_the_token_and_listens_on_loopback_only(head):
    _, client_port, token_file, env, _ = head
    bearer = "Bearer " + token_file.read_text()
    res = _python(PING.format(token=bearer, target=f"127.0.0.1:{client_port}"), env)
    assert res.stdout.split() == ["UNAUTHENTICATED", "UNAUTHENTICATED", "OK"], res.stderr
    # Ray would also bind the node's address (127.0.0.2 here); the default keeps it on 127.0.0.1.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((NODE_IP, client_port), timeout=5).close()


DRIVER = """
    import ray
    ray.init("ray://127.0.0.1:{port}")
    print("RESULT", ray.get(ray.remote(lambda: 6 * 7).remote()))
"""


def _proxy_start_failed(stderr):
    return "Starting Ray client server failed" in stderr or (
        "Initialization failure from server" in stderr and "start_specific_server" in stderr
    )


def test_a_ray_client_driver_connects_with_the_token_and_is_refused_without(head):
    _, client_port, token_file, env, _ = head
    code = textwrap.dedent(DRIVER.format(port=client_port))
    run = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    good_env = {**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_file)}
    for _ in range(3):
        good = subprocess.run([sys.executable, "-c", code], env=good_env, timeout=150, **run)
        # Ray's proxy can fail to start the per-client server on a loaded machine (it gives
        # up on a slow start, or inspects the server process just as it exits and trips on
        # psutil's ZombieProcess); that failure is the server's, after the token was
        # accepted, so the driver tries again
        if not _proxy_start_failed(good.stderr):
            break
    # the refused one gives up only after Ray Client's own retries (~30 s)
    refused = subprocess.Popen(
        [sys.executable, "-c", code], env={**env, "RAY_AUTH_MODE": "disabled"}, **run
    )
    try:
        out, err = refused.communicate(timeout=150)
    finally:
        if refused.poll() is None:
            refused.kill()
            refused.wait()
    assert "RESULT 42" in good.stdout, good.stdout + good.stderr[-3000:]
    assert refused.returncode != 0 and "RESULT" not in out
    assert "ConnectionError" in err, err[-3000:]


def test_opting_out_needs_no_auth(tmp_path):
    env = _clean_env(str(tmp_path), RAY_AUTH_MODE="disabled")
    argv = [sys.executable, "-m", "cluster.ray_cluster", "worker", "--address", "127.0.0.1:1"]
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 1 and "pass --no-auth" in res.stderr
    # A worker without the head's token file is told where to put it.
    env.pop("RAY_AUTH_MODE")
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 1
    assert f"no token file at {tmp_path}/.ray/sharded_auth_token" in res.stderr


def test_token_files_others_can_read_are_refused(tmp_path):
    path = auth.write_token_file(tmp_path / "t")
    assert path.stat().st_mode & 0o777 == 0o600
    first = path.read_text()
    assert auth.resolve_auth({}, token_file=str(path), create=True)[0] == {
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": None,
        "RAY_AUTH_TOKEN_PATH": str(path),
    }
    assert path.read_text() == first  # kept
    auth.resolve_auth({}, token_file=str(path), create=True, new=True)
    assert path.read_text() != first  # --new-token
    path.chmod(0o644)
    with pytest.raises(ClusterError, match=f"token file {path} has mode 0o644"):
        auth.resolve_auth({}, token_file=str(path))
    with pytest.raises(ClusterError, match="neither token nor disabled"):
        auth.resolve_auth({"RAY_AUTH_MODE": "tokn"})
    # Read-only helpers (wait) go on without a token file; the Slurm scripts' env token wins.
    assert auth.resolve_auth({}, token_file=str(tmp_path / "none"), required=False)[0] == {}
    env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "ab" * 32}
    assert auth.resolve_auth(env, token_file=str(tmp_path / "none"))[0] == {}


def test_dashboard_and_client_server_listen_on_loopback_unless_asked():
    cmd = rc.head_command(dashboard=True, num_gpus=0)
    assert "--dashboard-host=127.0.0.1" in cmd and "--ray-client-server-host=127.0.0.1" in cmd
    cmd = rc.head_command(dashboard=True, num_gpus=0, dashboard_host="0.0.0.0", client_host="h")
    assert "--dashboard-host=0.0.0.0" in cmd and "--ray-client-server-host=h" in cmd
    with pytest.raises(ClusterError):
        auth.check_token_file("/nonexistent/token")
