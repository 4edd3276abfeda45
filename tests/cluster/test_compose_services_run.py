"""docker-compose.yml's services, run for real without Docker: each container becomes a network
namespace host, running the service's own entrypoint, command, environment and healthcheck.
The client's `sharded demo` must pass against head + 2 workers, and SIGTERM (what `docker stop`
sends) must leave nothing running.  Only Docker itself (image, DNS) is left out: the service
name ray-head is replaced by the head host's address.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from tests.cluster import compose
from tests.support.netns import VirtualHosts, netns_unavailable_reason

pytestmark = pytest.mark.skipif(
    netns_unavailable_reason() is not None,
    reason=f"compose services run on network-namespace hosts: {netns_unavailable_reason()}",
)


def _env(service: dict, head_ip: str, temp_dir: str) -> dict[str, str]:
    env = compose.service_env(service)
    env["SHARDED_RAY_ADDRESS"] = env["SHARDED_RAY_ADDRESS"].replace("ray-head", head_ip)
    # Not in compose: every container has a /tmp of its own, the namespaces share one.
    env["SHARDED_RAY_TEMP_DIR"] = temp_dir
    # The volume ray-auth, which the containers share, is one directory the namespaces share.
    env["SHARDED_RAY_TOKEN_FILE"] = os.path.join(os.path.dirname(temp_dir), "auth", "token")
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    # Only what compose sets: not RAY_AUTH_*/RAY_ADDRESS an earlier ray.init() left behind.
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    return {**base, "PATH": path, **env}


def _healthy(hosts, i, service, env, logs, timeout=120.0) -> None:
    """Run the service's healthcheck until it passes, as Docker's retries would."""
    argv = compose.healthcheck_argv(service)
    deadline = time.monotonic() + timeout
    while True:
        res = hosts.run(
            i, argv, env=env, capture_output=True, text=True, timeout=60, cwd=compose.ROOT
        )
        if res.returncode == 0:
            return
        assert time.monotonic() < deadline, (
            f"healthcheck of host {i} never passed: {res.stderr[-2000:]}{_tails(logs)}"
        )
        time.sleep(1)


def test_compose_services_bring_up_a_cluster_and_run_the_demo():
    spec = compose.load()["services"]
    replicas = spec["ray-worker"]["deploy"]["replicas"]
    temp_dir = tempfile.mkdtemp(prefix="shc", dir="/tmp")  # short: Ray's socket path limit
    nodes: list[tuple[str, subprocess.Popen]] = []
    logs = []
    try:
        with VirtualHosts(2 + replicas) as hosts:  # head, workers, client
            head_ip = hosts.ip(0)
            try:
                plan = [("ray-head", 0)] + [("ray-worker", 1 + r) for r in range(replicas)]
                for name, i in plan:
                    env = _env(spec[name], head_ip, f"{temp_dir}/{i}")
                    log = open(os.path.join(temp_dir, f"{name}-{i}.log"), "w")
                    logs.append(log)
                    nodes.append(
                        (
                            name,
                            hosts.popen(
                                i,
                                compose.local_argv(spec[name]),
                                env=env,
                                stdout=log,
                                stderr=subprocess.STDOUT,
                                cwd=compose.ROOT,
                            ),
                        )
                    )
                    # The workers wait for a healthy head (depends_on); Compose would start
                    # the replicas together, one at a time spares a 2-core machine.
                    _healthy(hosts, i, spec[name], env, logs)

                client = spec["client"]
                res = hosts.run(
                    1 + replicas,
                    compose.local_argv(client),
                    env=_env(client, head_ip, f"{temp_dir}/c"),
                    capture_output=True,
                    text=True,
                    timeout=300,
                    cwd=compose.ROOT,
                )
                out = res.stdout + res.stderr
                assert res.returncode == 0, out[-5000:] + _tails(logs)
                assert "== sharded demo:" in out and "MISMATCH" not in out
                assert f"on {1 + replicas} node(s)" in out  # not on the 0-CPU client node
                assert "== done" in out
                # (one worker per node: the solve's 256 x 256 blocks over 3 workers are above
                # Ray's 100 KB inline size, so the workers fetch objects the driver owns; a
                # driver attached to the head's node instead of its own hung there)
                assert "A @ solve(A, b) == b" in out
            finally:
                # `docker compose down`: SIGTERM to each container's main process.
                for _, proc in reversed(nodes):
                    proc.send_signal(signal.SIGTERM)
                exits = [(name, proc.wait(60)) for name, proc in nodes]
                # The node's daemons finish their own shutdown a moment after the main process.
                deadline = time.monotonic() + 20
                while hosts.pids() and time.monotonic() < deadline:
                    time.sleep(0.5)
                left = [_cmdline(pid) for pid in hosts.pids()]
            assert all(code is not None for _, code in exits), exits
            assert left == [], f"still running after SIGTERM: {left}"
    finally:
        for log in logs:
            log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def _tails(logs) -> str:
    parts = []
    for log in logs:
        # A new file object: seeking the node's shared one would make its next lines overwrite.
        with open(log.name) as f:
            parts.append(f"\n--- {log.name} ---\n" + f.read()[-2000:])
    return "".join(parts)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:150]
    except OSError:
        return f"{pid} (gone)"
