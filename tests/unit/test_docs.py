"""The documentation holds: README's commands and example run as written, and ``mkdocs build
--strict`` of ``scripts/docs`` fails on a broken link or anchor between the pages, a reference
to an object that no longer exists and a docstring its (numpy-style) parser cannot read, and
the tour ``scripts/notebooks/tour.ipynb`` runs in a fresh kernel with its own embedded Ray of
two workers (these two are skipped only where the ``docs`` extra is not installed)."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sharded as st

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"


def test_readme_starts_with_install_and_test_commands():
    """The first block is the install + demo line and the test command that .ci/run runs."""
    first = re.search(r"```bash\n(.*?)```", README.read_text(), flags=re.S).group(1)
    assert first.splitlines() == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]' && sharded demo",
        "python -m pytest -q tests",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pip install -q -e '.[dev]'" in ci and "python -m pytest -q tests" in ci


def test_readme_links_lead_to_files():
    """README's relative links (into the guide and the API pages) name files that exist."""
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert len(local) >= 20, local
    missing = [link for link in local if not (ROOT / link).is_file()]
    assert not missing, f"README links to missing files: {missing}"


def test_readme_example_runs(cli_session, tmp_path, monkeypatch):
    """README's example, on the in-process executor (its ``st.init()`` finds the live
    session), down to its checkpoint and ``st.shutdown()``."""
    text = README.read_text()
    example = text[text.index("\n## Example\n") :]
    code = re.search(r"```python\n(.*?)```", example, flags=re.S).group(1)
    monkeypatch.chdir(tmp_path)
    st.init(executor="local", num_workers=2)
    exec(compile(code, "README.md (Example)", "exec"), {"__name__": "readme_example"})
    assert not st.is_initialized()
    assert (tmp_path / "checkpoint").is_dir()


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


@_needs("mkdocs", "mkdocstrings", "mkdocstrings_handlers", "material")
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


@_needs("nbclient", "nbformat", "ipykernel")
def test_notebook_tour_runs():
    import nbclient
    import nbformat

    nb = nbformat.read(ROOT / "scripts" / "notebooks" / "tour.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=120,  # per cell; the first starts Ray
        startup_timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute(env=_env())  # raises CellExecutionError, naming the cell, if one raises
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(o.output_type != "error" for c in code for o in c.outputs)
    shown = [o for c in code for o in c.outputs if o.output_type == "execute_result"]
    html = [o.data["text/html"] for o in shown if "text/html" in o.data]
    assert len(html) >= 5, "the tensors and st.stats() show as HTML"
    assert all("<svg" in h for h in html), "each shows a picture of its shards"
    assert any("matches NumPy" in o.get("text", "") for c in code for o in c.outputs)
    assert "st.shutdown()" in code[-1].source
