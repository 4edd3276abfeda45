"""The documentation builds: ``mkdocs build --strict`` of ``scripts/docs`` fails on a broken
link or anchor between the pages, a reference to an object that no longer exists and a
docstring its (numpy-style) parser cannot read. Skipped only where the ``docs`` extra is not
installed."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _needs(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {missing} (pip install -e '.[docs]')")


def _env() -> dict:
    """This environment, less any Ray cluster address (a test session's cluster must not be
    joined), with the checkout importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env


@_needs("mkdocs", "mkdocstrings_handlers.python", "material")
def test_site_builds_strict(tmp_path):
    config = ROOT / "scripts" / "docs" / "mkdocs.yml"
    build = ["mkdocs", "build", "--strict", "-f", str(config), "-d", str(tmp_path)]
    run = subprocess.run(
        [sys.executable, "-m", *build],
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    for page in ("index.html", "guide/code/index.html", "api/tensor/index.html"):
        assert (tmp_path / page).is_file(), page
    api = (tmp_path / "api" / "tensor" / "index.html").read_text()
    assert 'id="sharded.ShardedTensor.visualize"' in api  # docstrings reached the reference
