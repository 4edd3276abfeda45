"""The ``.pyi`` stubs: the committed ones are what ``python -m sharded.tools.stubgen`` writes
from the live objects, the wheel ships them, and mypy sees tensors through them (not ``Any``)."""

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sharded.tools.stubgen import stale

ROOT = Path(__file__).resolve().parents[2]
STUBS = sorted((ROOT / "sharded").rglob("*.pyi"))
TENSOR = "sharded.tensor.ShardedTensor"

# A user's script; each ``reveal_type`` names the type mypy must infer for it.
SCRIPT = f"""
import sharded as st

st.init(executor="local", num_workers=2)
x = st.rand(8, 4, shards=2)
y = st.ones(8, 4, dtype=st.float32)
w = st.randn(4, 3, requires_grad=True)
reveal_type(x + y)  # {TENSOR}
reveal_type(x.sum())  # {TENSOR}
reveal_type(x @ w)  # {TENSOR}
reveal_type(2.0 * x)  # {TENSOR}
reveal_type(x.max(dim=0).values)  # {TENSOR}
reveal_type(x.size(0))  # int
reveal_type(x.shape)  # sharded.tensor.Size
model = st.nn.Sequential(st.nn.Linear(4, 16), st.nn.ReLU(), st.nn.Linear(16, 1))
reveal_type(model(x))  # {TENSOR}
loss = st.nn.functional.mse_loss(model(x), st.zeros(8, 1))
reveal_type(loss)  # {TENSOR}
opt = st.optim.SGD(model.parameters(), lr=0.1)
sched = st.optim.lr_scheduler.StepLR(opt, step_size=1)
for _ in range(2):
    opt.zero_grad()
    loss = st.nn.MSELoss()(model(x), st.zeros(8, 1))
    loss.backward()
    opt.step()
    sched.step()
with st.no_grad():
    q, r = st.linalg.qr(w)
value = loss.item()
rows: int = x.shape[0] + x.dim()
print(value, rows, q.T @ q, r.tolist())
st.shutdown()
"""


def _mypy(args, cwd, tmp_path, env=None):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it is in the dev extra: pip install -e '.[dev]')")
    cmd = [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_committed_stubs_are_fresh():
    """Regenerating the stubs in memory gives exactly the committed files (in a new
    interpreter: the surface a plain ``import sharded`` gives, which tests here extend)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "sharded.tools.stubgen", "--check"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr  # names the stale files and the command


def test_check_names_stale_missing_and_leftover_stubs():
    stubs = {p: p.read_text(encoding="utf-8") for p in STUBS}
    edited, removed = STUBS[0], STUBS[1]
    stubs[edited] += "x: int\n"
    del stubs[removed]  # a stub the generator would no longer write (its module moved)
    moved = ROOT / "sharded" / "moved.pyi"
    stubs[moved] = ""
    assert stale(stubs) == [edited, moved, removed]


def test_the_wheel_ships_the_stubs():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    stubs = {p.relative_to(ROOT).as_posix() for p in STUBS}
    assert {"sharded/__init__.pyi", "sharded/tensor.pyi", "sharded/nn/__init__.pyi"} <= stubs
    assert (ROOT / "sharded" / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["sharded"] and "*.pyi" in data["*"]
    assert any(d.startswith("mypy") for d in config["project"]["optional-dependencies"]["dev"])


def test_mypy_sees_tensors_in_a_user_script(tmp_path):
    """mypy, with sharded importable as an installed package, infers ShardedTensor for
    ``x + y``, ``x.sum()``, ``model(x)``... and finds no error in the script."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = _mypy([str(script)], tmp_path, tmp_path, env)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and " error: " not in out, out
    got = dict(re.findall(r'train\.py:(\d+): note: Revealed type is "([^"]+)"', out))
    lines = script.read_text().splitlines()
    want = {str(i): ln.split("# ")[1] for i, ln in enumerate(lines, 1) if "reveal_type" in ln}
    assert got == want, out


def test_stubs_pass_mypy(tmp_path):
    """The stubs themselves are valid: no undefined name, no bad override or overload."""
    r = _mypy(["--follow-imports=silent", *map(str, STUBS)], ROOT, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
