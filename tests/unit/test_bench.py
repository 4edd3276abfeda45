"""``sharded bench`` flags (--json, --plot, --workers 1,2) on tiny sizes and the in-process
executor: the benchmark's plumbing, not its timings."""

import json
import sys

import pytest

from sharded import cli
from sharded.tools import bench_report

TINY = [
    "bench",
    "--executor",
    "local",
    "--size",
    "3000",
    "--repeat",
    "1",
    "--reshard-gb",
    "0",
    "--ckpt-gb",
    "0",
    "--mlp-rows",
    "0",
    "--tiny-ops",
    "3",
    "--read-size",
    "500",
    "--no-linalg",
    "--no-algorithms",
    "--attn-len",
    "16",
]


def test_json_plot_and_scaling_over_worker_counts(cli_session, tmp_path, capsys):
    js, png = tmp_path / "b.json", tmp_path / "b.png"
    argv = TINY + ["--workers", "1,2", "--json", str(js), "--plot", str(png)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "sharded benchmark: 1 worker;" in out and "sharded benchmark: 2 workers" in out
    assert "scaling efficiency over 1, 2 workers" in out and "eff(2)" in out
    data = json.loads(js.read_text())
    assert [r["workers"] for r in data["runs"]] == [1, 2]
    names = [c["name"] for c in data["runs"][0]["cases"]]
    assert "2*x + 3*y - 1 on 3,000" in names
    assert "read latency x.sum().item() of 500" in names
    assert "attention fwd+bwd 4x8x16x64 f32, seq split" in names
    assert "sequence/batch split time ratio" in out and "x its inputs (0.5 MiB" in out
    fused = next(c for c in data["runs"][1]["cases"] if c["name"].startswith("2*x"))
    assert fused["target"] == "<= 0.5 x numpy" and fused["sharded_s"] > 0
    assert fused["ratio_numpy"] == pytest.approx(fused["sharded_s"] / fused["numpy_s"])
    eff = {s["name"]: s["efficiency"] for s in data["scaling"]}
    assert eff["2*x + 3*y - 1 on 3,000"]["1"] == 1.0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_fails_before_running(cli_session, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert cli.main(TINY + ["--plot", "x.png"]) == 2
    captured = capsys.readouterr()
    assert "--plot needs matplotlib" in captured.err and "sharded[bench]" in captured.err
    assert "sharded benchmark" not in captured.out  # nothing was measured


@pytest.mark.parametrize("bad", ["0", "a,b", "", "2,-1"])
def test_workers_list_must_be_positive_ints(bad, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--workers", bad])
    assert e.value.code == 2 and "--workers takes positive ints" in capsys.readouterr().err


def test_json_has_no_nan():
    d = bench_report.to_dict([(1, [("a", 1.0, 2.0, float("nan"), "")])])
    assert json.loads(json.dumps(d, allow_nan=False))["runs"][0]["cases"][0]["dask_s"] is None


def test_scaling_table_on_the_local_executor_has_no_ray_floor(cli_session, capsys):
    argv = ["bench", "--scaling", "--executor", "local", "--workers", "2"]
    assert cli.main(argv + ["--ops", "4", "--reads", "1", "--repeat", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "ray floor ms" in out[1]
    rows = [line.split() for line in out[2:4]]
    assert [r[0] for r in rows] == ["1", "2"] and all(r[-1] == "-" for r in rows)


def test_scaling_cluster_needs_ray(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--scaling", "--executor", "local", "--cluster-only"])
    assert e.value.code == 2 and "need --executor ray" in capsys.readouterr().err
