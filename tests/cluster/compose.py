"""Reading docker-compose.yml the way Docker Compose does, for the tests (no Docker needed)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
IMAGE_ROOT = "/opt/sharded"  # where cluster/Dockerfile puts the checkout
_VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def load() -> dict:
    """The parsed compose file (YAML merge keys resolved, as Compose does)."""
    return yaml.safe_load(COMPOSE.read_text())


def interpolate(value: str, env: dict | None = None) -> str:
    """Compose's ``${VAR}`` / ``${VAR:-default}`` substitution."""
    env = os.environ if env is None else env
    return _VAR.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), str(value))


def service_env(service: dict) -> dict[str, str]:
    return {k: interpolate(v) for k, v in (service.get("environment") or {}).items()}


def local_argv(service: dict) -> list[str]:
    """The service's entrypoint + command, with the image's paths mapped onto this checkout."""
    argv = [*service["entrypoint"], *service.get("command", [])]
    return [a.replace(IMAGE_ROOT, str(ROOT), 1) if a.startswith(IMAGE_ROOT) else a for a in argv]


def role_argv(service: dict) -> list[str]:
    """What the entrypoint receives: the role and its arguments (the role may sit in the
    entrypoint, as for the client, whose command is only the driver program)."""
    return [*service["entrypoint"][1:], *service.get("command", [])]


def healthcheck_argv(service: dict) -> list[str]:
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD", f"healthcheck must be exec form, got {test[0]!r}"
    return list(test[1:])
