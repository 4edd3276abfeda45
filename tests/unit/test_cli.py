"""The ``sharded`` command, run in-process on the local executor (the embedded Ray it starts
by default is covered by the Ray tests; here a session must not cost seconds)."""

import subprocess
import sys

import pytest

import sharded as st
from sharded import cli


@pytest.fixture
def local_cli(monkeypatch):
    """Commands get a two-worker local session instead of an embedded Ray; the package's
    three-worker session comes back afterwards (each command shuts its session down)."""
    st.shutdown()
    monkeypatch.setattr(
        cli, "_init", lambda address, workers: st.init(executor="local", num_workers=workers or 2)
    )
    yield
    st.shutdown()
    st.init(executor="local", num_workers=3, min_shard_bytes=0)


def test_info_lists_nodes_and_workers(local_cli, capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "executor: local" in out and "nodes (1):" in out and "workers (2):" in out
    assert "sharded-worker-1" in out and "live shards:" in out


def test_demo_tour_passes(local_cli, capsys):
    assert cli.main(["demo", "--size", "1000", "--workers", "3"]) == 0
    out = capsys.readouterr().out
    assert "== sharded demo: 3 workers" in out and "MISMATCH" not in out and "== done" in out
    for part in ("writing through the view", "x.grad =", "A @ solve(A, b) == b", "epoch 39"):
        assert part in out


def test_bench_help_lists_its_options(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--size" in out and "--no-linalg" in out


def test_unknown_command_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["frobnicate"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_module_entry_point():
    r = subprocess.run(
        [sys.executable, "-m", "sharded.cli", "--help"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0 and "demo" in r.stdout and "bench" in r.stdout
