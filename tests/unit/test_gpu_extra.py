"""``pip install 'sharded[gpu]'`` installs a prebuilt CuPy wheel, and with it sharded still
imports on a machine without a usable GPU: ``st.cuda.is_available()`` is False and a CUDA
device is refused with a typed error (``test_cupy_without_gpu`` run where CuPy is installed).

The extra's requirements are read from ``pyproject.toml`` and installed into a throwaway
virtual environment that sees this one's packages (sharded included, by a ``.pth`` file),
so the check is of the extra as published. Skipped where the package index cannot be reached."""

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # (Python 3.11 and later)
ROOT = Path(__file__).resolve().parents[2]
PIP_S = 900  # a ~140 MB wheel from the index


def _extra(name):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["optional-dependencies"][name]


def test_the_gpu_extras_name_prebuilt_cupy_wheels():
    # the plain ``cupy`` package builds from source against a local CUDA toolkit
    assert [r.split(">")[0] for r in _extra("gpu")] == ["cupy-cuda12x"]
    assert [r.split(">")[0] for r in _extra("gpu-cuda13")] == ["cupy-cuda13x"]


def test_sharded_with_the_gpu_extra_on_a_machine_without_a_gpu(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    paths = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    Path(site, "parent-env.pth").write_text("".join(f"{p}\n" for p in sorted(paths)))
    try:
        got = subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *_extra("gpu")],
            capture_output=True,
            text=True,
            timeout=PIP_S,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"installing {_extra('gpu')} took over {PIP_S} s")
    if got.returncode:
        if "No matching distribution" in got.stderr or "Could not" in got.stderr:
            pytest.skip(f"the package index is not reachable: {got.stderr.strip()[-200:]}")
        raise AssertionError(got.stderr[-2000:])
    run = subprocess.run(
        [
            str(py),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/unit/test_cupy_without_gpu.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
