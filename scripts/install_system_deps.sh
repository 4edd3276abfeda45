#!/bin/bash
# Install the system packages the Slurm, multi-host and Docker tests need (Debian/Ubuntu, as
# root).
#
#   bash scripts/install_system_deps.sh
#
# Idempotent: packages already present are not fetched again, so a second run only checks.
# Non-interactive (no stdin, CI=true): no prompts, no services started by the package scripts.
set -euo pipefail

# slurmctld/slurmd/slurm-client + munge: the real Slurm the tests start from a generated config;
# iproute2: `ip netns` for the multi-host tests; util-linux: nsenter; procps: ps/pgrep when
# debugging leftovers.
PACKAGES=(slurmctld slurmd slurm-client munge iproute2 util-linux procps)
# The Docker Compose test (tests/cluster/test_compose_docker.py): docker.io (dockerd, containerd,
# runc, iptables), docker-compose (1.29), and debootstrap with Debian's keyring (not preinstalled
# on Ubuntu), which build the stand-in for the Dockerfile's python:3.11-slim where no image
# registry is reachable.  Without recommends: apparmor, git, needrestart are not needed and
# needrestart's hooks only slow apt down.
DOCKER_PACKAGES=(docker.io docker-compose debootstrap debian-archive-keyring)

missing_of() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            echo "$p"
    done
}
mapfile -t missing < <(missing_of "${PACKAGES[@]}")
mapfile -t missing_docker < <(missing_of "${DOCKER_PACKAGES[@]}")
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_docker[@]} -eq 0 ]; then
    echo "install_system_deps: all present: ${PACKAGES[*]} ${DOCKER_PACKAGES[*]}"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install_system_deps: need root to install: ${missing[*]} ${missing_docker[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Package postinst scripts must not try to start munge/slurm services in a container or CI
# (there is no init system; the tests start their own daemons).  policy-rc.d exit 101 = "don't".
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    created_policy=1
fi
trap '[ $created_policy = 0 ] || rm -f /usr/sbin/policy-rc.d' EXIT

echo "install_system_deps: installing ${missing[*]} ${missing_docker[*]}"
apt-get update -q
if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y -q "${missing[@]}" </dev/null
fi
if [ ${#missing_docker[@]} -gt 0 ]; then
    apt-get install -y -q --no-install-recommends "${missing_docker[@]}" </dev/null
fi
