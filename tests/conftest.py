"""The Ray mirror: every unit module that sets ``pytestmark = pytest.mark.ray_mirror`` is
collected a second time inside ``tests/ray``, so its tests also run, unchanged, on that
package's multi-node cluster (``tests/ray/conftest.py``: one cluster per session).

``pytest tests`` runs both; ``pytest tests/unit`` runs the unit modules alone, in process,
without Ray; ``pytest tests/ray`` runs the mirror and the Ray-only modules. A mirrored module
shows up as ``tests/ray/unit/<file>`` (``pytest tests/ray -m ray_mirror -k <file stem>`` runs one
on Ray); ``@pytest.mark.ray_mirror(False)`` keeps a test of it local (a Ray module runs a
cheaper subset instead).
"""

import ast
from pathlib import Path

import pytest

UNIT = Path(__file__).parent / "unit"
RAY = Path(__file__).parent / "ray"


def mirrored(path: Path) -> bool:
    """Whether the module at ``path`` marks itself ``ray_mirror`` (its module-level
    ``pytestmark``), read from its source: collecting tests/ray imports only what it mirrors."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            return any(
                isinstance(n, ast.Attribute) and n.attr == "ray_mirror" for n in ast.walk(node)
            )
    return False


class RayMirror(pytest.Module):
    """A unit module collected again under tests/ray (its fixtures, not tests/unit's, apply),
    less its tests marked ``ray_mirror(False)``."""

    def collect(self):
        return [
            n
            for n in super().collect()
            if (m := n.get_closest_marker("ray_mirror")) is None or m.args[:1] != (False,)
        ]


class RayPackage(pytest.Package):
    """``tests/ray``: its own modules and the mirrored unit modules, in file-name order (a
    mirror runs before the Ray module of the same name, which holds its Ray-only tests)."""

    def collect(self):
        mirrors = [
            RayMirror.from_parent(self, path=p, nodeid=f"{self.nodeid}/unit/{p.name}")
            for p in sorted(UNIT.glob("test_*.py"))
            if mirrored(p)
        ]
        nodes = [*super().collect(), *mirrors]
        return sorted(nodes, key=lambda n: (n.path.name, not isinstance(n, RayMirror)))


def pytest_collect_directory(path, parent):
    if path == RAY:
        return RayPackage.from_parent(parent, path=path)
    return None
