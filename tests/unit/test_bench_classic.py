"""``sharded bench --classic``: every workload computes what NumPy computes (checked at a tiny
scale on the in-process executor), a wrong result is caught, and the CLI prints its table."""

import dataclasses

import numpy as np
import pytest

from sharded import cli
from sharded.tools import bench_classic as bc
from sharded.tools.timing import dask_array

TINY = 1e-4  # 800 options, a 30x30 stencil, a 36x36 CG system...


@pytest.mark.parametrize("name", bc.NAMES)
def test_workload_matches_numpy(name):
    # the package's session: 3 workers, every tensor split (psf and centroids too)
    w = bc.select(name)[0]
    p = bc.place(w, TINY, 3, dask_array())
    assert p.dask is not None  # dask is a dev dependency: its implementation is checked too
    assert all(t.layout.num_shards == 3 for t in p.sharded[:1])
    assert bc.verify(w, p) > 0


def test_a_wrong_sharded_result_is_caught():
    w = bc.select("kmeans")[0]
    off = dataclasses.replace(w, sharded=lambda X, C, iters: w.sharded(X, C, iters - 1))
    with pytest.raises(bc.MismatchError, match="kmeans: sharded's result 0 differs"):
        bc.verify(off, bc.place(off, TINY, 3))
    short = dataclasses.replace(w, sharded=lambda X, C, iters: w.sharded(X, C, iters)[:-1])
    with pytest.raises(bc.MismatchError, match=r"shape \(9, 2\), numpy's \(10, 2\)"):
        bc.verify(short, bc.place(short, TINY, 3))


def test_sort_unique_is_checked_exactly():
    with pytest.raises(bc.MismatchError, match="allowed 0"):
        bc.check("sort_unique", "dask", np.array([1, 2]), np.array([1, 3]), 0.0)


def test_cli_prints_the_table(cli_session, tmp_path, capsys):
    png = tmp_path / "c.png"
    argv = ["bench", "--classic", "--executor", "local", "--workers", "2", "--scale", str(TINY)]
    assert cli.main(argv + ["--repeat", "1", "--only", "cg,stencil", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "classic workloads: 2 workers; median of 1 rounds" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(("5-point", "conjugate"))]
    assert [ln.split(" (")[0] for ln in lines[-2:]] == ["5-point stencil", "conjugate gradient"]
    # numpy, dask, sharded, two ratios, first call, its ratio, driver cpu: all measured
    assert all(np.isfinite([float(v.strip("()x")) for v in ln.split()[-8:]]).all() for ln in lines)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--only", "cg,nope"], "unknown: nope"),
        (["--only", ","], "unknown: none given"),
        (["--scale", "0"], "expected a positive float, got '0'"),
        (["--repeat", "x"], "expected a positive int, got 'x'"),
    ],
)
def test_bad_options_fail_before_running(cli_session, args, message, capsys):
    rc = None
    try:
        rc = cli.main(["bench", "--classic", "--executor", "local"] + args)
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    captured = capsys.readouterr()
    assert rc == 2 and message in captured.err
    assert "classic workloads" not in captured.out  # nothing was measured
