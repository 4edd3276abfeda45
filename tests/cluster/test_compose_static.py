"""docker-compose.yml and cluster/Dockerfile, checked without Docker: the file parses, every
service runs the cluster/ entrypoint with a role it knows, and ports, variables and commands
agree with the helpers' own parser and defaults."""

from __future__ import annotations

import re
import stat

import pytest

from cluster import _cli
from cluster import ray_cluster as rc
from tests.cluster import compose

SERVICES = {"ray-head", "ray-worker", "ray-gpu-worker", "client"}
ENTRYPOINT = f"{compose.IMAGE_ROOT}/cluster/entrypoint.sh"


@pytest.fixture(scope="module")
def spec():
    return compose.load()


def _parse(role_args: list[str], env: dict[str, str], monkeypatch):
    """Parse arguments with the helpers' CLI parser, under the service's environment."""
    for key in rc.ENV_VARS.values():
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return _cli.build_parser().parse_args(role_args)


def test_services_and_their_entrypoint(spec):
    assert set(spec["services"]) == SERVICES
    for name, service in spec["services"].items():
        assert service["entrypoint"][0] == ENTRYPOINT, name
        assert service["entrypoint"][1:] == (["client"] if name == "client" else []), name
        assert service["build"]["dockerfile"] == "cluster/Dockerfile", name
        assert service["build"]["context"] == ".", name


def test_dockerfile_installs_the_project_and_uses_the_entrypoint():
    text = (compose.ROOT / "cluster/Dockerfile").read_text()
    assert f'ENTRYPOINT ["{ENTRYPOINT}"]' in text
    assert f"WORKDIR {compose.IMAGE_ROOT}" in text
    for src in ("pyproject.toml", "README.md", "sharded", "cluster"):
        assert re.search(rf"^COPY .*\b{re.escape(src)}\b", text, re.M), src
        assert (compose.ROOT / src).exists(), src
    # the dependencies are pyproject.toml's own list (ray[default]>=2.52: token authentication)
    assert "tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']" in text
    assert text.index("COPY pyproject.toml") < text.index("pip install -r /tmp/requirements.txt")
    assert '"ray[default]>=2.52"' in (compose.ROOT / "pyproject.toml").read_text()
    entry = compose.ROOT / "cluster/entrypoint.sh"
    assert entry.stat().st_mode & stat.S_IXUSR


def test_containers_run_as_an_unprivileged_user(spec):
    text = (compose.ROOT / "cluster/Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    # the last USER is what the entrypoint runs as: made in the image, never root
    assert users and users[-1] == "sharded", users
    assert re.search(r"useradd [^\n]*--uid 1000 [^\n]*sharded", text)
    # the token's directory (the ray-auth volume's mount point) belongs to that user
    assert "install -d -o sharded -g sharded -m 0700 /run/sharded-auth" in text
    assert text.index("/run/sharded-auth") < text.index("USER sharded")
    for name, service in spec["services"].items():
        assert service["user"] == "sharded", name  # no service overrides it with root


def test_every_command_is_a_role_the_helpers_parse(spec, monkeypatch):
    roles = re.search(
        r"^(\S.*)\)\n\s+exec \"\$python\" -m cluster.ray_cluster",
        (compose.ROOT / "cluster/entrypoint.sh").read_text(),
        re.M,
    ).group(1)
    known = {r.strip() for r in roles.split("|")}
    assert known == {"head", "worker", "client"}
    for name, service in spec["services"].items():
        role, *args = compose.role_argv(service)
        assert role in known, name
        args = _parse([role, *args], compose.service_env(service), monkeypatch)
        assert args.role == role


def test_healthchecks_run_the_wait_helper(spec, monkeypatch):
    for name, service in spec["services"].items():
        if name == "client":
            assert "healthcheck" not in service
            continue
        argv = compose.healthcheck_argv(service)
        assert argv[:3] == ["python", "-m", "cluster.ray_cluster"], name
        args = _parse(argv[3:], compose.service_env(service), monkeypatch)
        assert args.role == "wait" and args.nodes == 1
        assert args.address == "ray-head:6379"
        assert args.this_node == (name != "ray-head"), name


def test_every_variable_is_one_the_helpers_read(spec):
    known = set(rc.ENV_VARS.values())
    for name, service in spec["services"].items():
        assert set(service["environment"]) <= known, name


def test_token_auth_is_on_with_a_token_made_per_up(spec, monkeypatch):
    token_file = "/run/sharded-auth/token"
    for name, service in spec["services"].items():
        env = compose.service_env(service)
        args = _parse(["worker"], env, monkeypatch)
        assert args.no_auth is False and args.token_file == token_file, name
        # The token never sits in the file or the image: the head writes it into the volume.
        assert not any(k.startswith("RAY_AUTH") for k in service["environment"]), name
        mount = "ray-auth:/run/sharded-auth" + ("" if name == "ray-head" else ":ro")
        assert service["volumes"] == [mount], name
        assert (env.get("SHARDED_RAY_NEW_TOKEN") == "1") == (name == "ray-head"), name
    assert "ray-auth" in spec["volumes"]
    head = _parse(["head"], compose.service_env(spec["services"]["ray-head"]), monkeypatch)
    assert head.new_token and head.dashboard_host == head.client_host == "0.0.0.0"
    # Opting out is explicit, also here.
    no = _parse(["worker", "--address", "h:1"], {"SHARDED_RAY_NO_AUTH": "1"}, monkeypatch)
    assert no.no_auth is True


def test_head_ports_agree_with_its_options(spec, monkeypatch):
    head = spec["services"]["ray-head"]
    args = _parse(["head"], compose.service_env(head), monkeypatch)
    assert (args.port, args.client_port, args.dashboard_port) == (
        rc.DEFAULT_PORT,
        rc.DEFAULT_CLIENT_PORT,
        rc.DEFAULT_DASHBOARD_PORT,
    )
    assert args.dashboard is True
    published = {}
    for mapping in head["ports"]:
        host_ip, host_port, container_port = compose.interpolate(mapping, {}).split(":")
        assert host_ip == "127.0.0.1"  # never open to the network by default
        published[int(container_port)] = int(host_port)
    assert published == {p: p for p in (args.port, args.client_port, args.dashboard_port)}
    # The host side moves with SHARDED_HOST_*_PORT (the Docker test uses free ports).
    moved = {
        "SHARDED_HOST_GCS_PORT": "16379",
        "SHARDED_HOST_CLIENT_PORT": "20001",
        "SHARDED_HOST_DASHBOARD_PORT": "18265",
    }
    assert sorted(compose.interpolate(m, moved) for m in head["ports"]) == [
        "127.0.0.1:16379:6379",
        "127.0.0.1:18265:8265",
        "127.0.0.1:20001:10001",
    ]
    # Every node reaches the head under its service name and GCS port.
    for name, service in spec["services"].items():
        assert compose.service_env(service)["SHARDED_RAY_ADDRESS"] == f"ray-head:{args.port}"
    assert head["hostname"] == "ray-head"


def test_shm_holds_the_object_store(spec, monkeypatch):
    for name, service in spec["services"].items():
        shm = _cli.parse_bytes(service["shm_size"])
        args = _parse(["head"], compose.service_env(service), monkeypatch)
        assert args.object_store_memory is not None, name
        # Ray also keeps some shared memory besides the store: leave room.
        assert shm >= args.object_store_memory * 3 // 2, name


def test_workers_gpu_profile_and_client(spec, monkeypatch):
    s = spec["services"]
    assert s["ray-worker"]["deploy"]["replicas"] == 2
    for name in ("ray-worker", "ray-gpu-worker"):
        assert s[name]["depends_on"]["ray-head"]["condition"] == "service_healthy"
        assert s[name]["command"] == ["worker"]
    gpu = s["ray-gpu-worker"]
    assert gpu["profiles"] == ["gpu"]
    device = gpu["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]
    assert "cupy" in gpu["build"]["args"]["GPU_PACKAGES"]
    assert "SHARDED_RAY_NUM_GPUS" not in gpu["environment"]  # detected in the container
    client = s["client"]
    args = _parse(compose.role_argv(client), compose.service_env(client), monkeypatch)
    assert args.nodes == 1 + s["ray-worker"]["deploy"]["replicas"]  # head + CPU workers
    assert args.command == ["sharded", "demo"]
    # `docker compose run client python x.py` replaces the command: still a parsed client.
    mine = _parse(["client", "python", "x.py", "--flag"], compose.service_env(client), monkeypatch)
    assert mine.command == ["python", "x.py", "--flag"] and mine.nodes == args.nodes
    assert client["depends_on"]["ray-worker"]["condition"] == "service_healthy"
    assert "profiles" not in client and "ports" not in client


def test_interpolation_defaults_and_overrides():
    assert compose.interpolate("${RAY_AUTH_MODE:-disabled}", {}) == "disabled"
    assert compose.interpolate("${RAY_AUTH_MODE:-disabled}", {"RAY_AUTH_MODE": "token"}) == "token"
    assert compose.interpolate("${X:-}", {}) == ""


def _patterns(path) -> list[str]:
    return [
        line.strip()
        for line in path.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_both_dockerignore_files_filter_the_same():
    # BuildKit reads cluster/Dockerfile.dockerignore; the classic builder and docker-compose 1.x
    # read only .dockerignore at the root of the context.
    root = _patterns(compose.ROOT / ".dockerignore")
    assert root == _patterns(compose.ROOT / "cluster/Dockerfile.dockerignore")
    assert root[0] == "**" and {"!sharded/", "!cluster/"} <= set(root)
