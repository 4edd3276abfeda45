"""A real Slurm (munged + slurmctld + slurmd) started by the tests, torn down after them.

As root with iproute2 there are two Slurm nodes, each a network namespace with its own IP, so
the scripts' worker path (`srun -w node2`) runs for real; otherwise one node on 127.0.0.1.
With CI=true a missing Slurm is a failure, never a skip.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from tests.support.local_slurm import LocalSlurm, missing_binaries
from tests.support.netns import VirtualHosts, netns_unavailable_reason

IN_CI = os.environ.get("CI") == "true"


def _unavailable(reason: str):
    if IN_CI:
        pytest.fail(
            f"Slurm tests must run in CI: {reason} (scripts/install_system_deps.sh "
            "installs slurmctld slurmd slurm-client munge)"
        )
    pytest.skip(reason)


@pytest.fixture(scope="package")
def slurm():
    missing = missing_binaries()
    if missing:
        _unavailable(f"Slurm/munge programs missing: {', '.join(missing)}")
    if os.geteuid() != 0:
        _unavailable(f"the local Slurm runs its daemons as root (uid {os.geteuid()})")
    # Short path: Ray's socket paths under the job's temp dir must stay below 107 characters.
    workdir = tempfile.mkdtemp(prefix="shs", dir="/tmp")
    hosts = None if netns_unavailable_reason() else VirtualHosts(2).__enter__()
    instance = LocalSlurm(workdir, hosts=hosts, cpus=2)
    # An embedded ray.init() earlier in the session may have set RAY_AUTH_MODE here; jobs must
    # see what a user's shell would, so the scripts' own defaults are what gets tested.
    for key in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        instance.env.pop(key, None)
    try:
        instance.start(timeout=60)
        yield instance
    finally:
        instance.stop()
        if hosts is not None:
            hosts.close()
        shutil.rmtree(workdir, ignore_errors=True)
