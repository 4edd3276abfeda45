"""Two hosts with their own IPs (network namespaces joined by a bridge), a Ray head on one and
a worker on the other, started by the cluster helpers; a sharded computation whose shards sit on
both hosts; then everything is torn down, whatever happened.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from cluster import ray_cluster as rc
from cluster.smoke import parse_report
from tests.support.netns import VirtualHosts, netns_unavailable_reason

ROOT = Path(__file__).resolve().parents[2]
SIZE = 12

pytestmark = pytest.mark.skipif(
    netns_unavailable_reason() is not None,
    reason=f"multi-host test needs network namespaces: {netns_unavailable_reason()}",
)


def _ray_pids(hosts: VirtualHosts) -> list[str]:
    left = []
    for pid in hosts.pids():
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        left.append(cmd[:200])
    return left


@pytest.fixture(scope="module")
def two_hosts():
    """Head on host 0, worker on host 1, 2 CPUs each; yields (hosts, head, env)."""
    temp_dir = tempfile.mkdtemp(prefix="shm", dir="/tmp")  # short: Ray's socket path limit
    # Ray's workers must import this checkout's sharded and cluster packages.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    hosts = VirtualHosts(2)
    try:
        with hosts:
            common = dict(
                num_cpus=2,
                num_gpus=0,
                object_store_memory=100 * 2**20,
                temp_dir=temp_dir,
                log_dir=temp_dir,
                env=env,
                timeout=90,
                # token authentication on, as by default: the head makes this file, the
                # worker reads it (both "hosts" see this machine's files)
                token_file=f"{temp_dir}/token",
            )
            head = rc.start_head(
                port=rc.DEFAULT_PORT,
                node_ip_address=hosts.ip(0),
                launcher=hosts.prefix(0),
                **common,
            )
            try:
                rc.start_worker(
                    head.address, node_ip_address=hosts.ip(1), launcher=hosts.prefix(1), **common
                )
                yield hosts, head, head.driver_env(env)
            finally:
                rc.stop()  # workers first, then the head
                # what stop() SIGKILLed, or what dies with its raylet (Ray's workers exit when
                # they notice it is gone), ends a moment later
                deadline = time.monotonic() + 20
                while _ray_pids(hosts) and time.monotonic() < deadline:
                    time.sleep(0.5)
                left = _ray_pids(hosts)
            assert left == [], f"processes left in the namespaces after stop(): {left}"
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)
    assert hosts.pids() == []


def test_shards_of_one_tensor_live_on_two_hosts(two_hosts):
    hosts, head, env = two_hosts
    # The driver must run on a Ray node (Ray requires it): host 0, next to the head.
    res = hosts.run(
        0,
        [
            sys.executable,
            "-m",
            "cluster.smoke",
            "--workers",
            "4",
            "--shards",
            "4",
            "--size",
            str(SIZE),
            "--min-nodes",
            "2",
        ],
        env={**env, "RAY_ADDRESS": head.address},
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    report = parse_report(res.stdout)
    ref = np.arange(SIZE, dtype=np.float64)
    assert report["sum"] == ref.sum()
    np.testing.assert_array_equal(np.array(report["doubled"]), ref * 2 + 1)

    # Map the shards' Ray node ids to the hosts' IPs, as the GCS sees them from host 0.
    wait = hosts.run(
        0,
        [
            sys.executable,
            "-m",
            "cluster.ray_cluster",
            "wait",
            "--address",
            head.address,
            "--nodes",
            "2",
            "--timeout",
            "30",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wait.returncode == 0, wait.stderr
    alive = json.loads(wait.stdout.strip().splitlines()[-1])["alive"]
    ip_of = {n["node_id"]: n["ip"] for n in alive}
    shard_ips = sorted(ip_of[p["node"]] for p in report["placement"])
    assert shard_ips == sorted([hosts.ip(0), hosts.ip(0), hosts.ip(1), hosts.ip(1)])


def test_waiting_for_more_nodes_than_exist_names_how_many_arrived(two_hosts):
    hosts, head, env = two_hosts
    res = hosts.run(
        1,
        [
            sys.executable,
            "-m",
            "cluster.ray_cluster",
            "wait",
            "--address",
            head.address,
            "--nodes",
            "3",
            "--timeout",
            "2",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1
    assert f"only 2 of 3 Ray nodes registered at {head.address} within 2 s" in res.stderr


def test_hosts_are_isolated_from_the_machine():
    """The namespaces add no address or route to the machine's own network."""
    before = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
    with VirtualHosts(2) as hosts:
        during = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
        inside = hosts.run(1, ["ip", "-o", "-4", "addr"], capture_output=True, text=True).stdout
        names = list(hosts.names)
    assert before == during
    assert "10.231." not in during
    assert f"{hosts.ip(1)}/24" in inside
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(name in listed for name in names)
