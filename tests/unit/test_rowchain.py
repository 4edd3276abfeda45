"""Row chains (``sharded/runtime/worker/rowchain.py``): a stencil's sums of halo-banded
views in one pass over each block's rows, bit for bit as NumPy's, on one worker holding
the grid's shards (where a step's halos need no shipment)."""

import numpy as np
import pytest

import sharded as st
from sharded.runtime.worker import rowchain
from sharded.runtime.worker.fusion import configure
from sharded.tools.bench_classic_cases import stencil


@pytest.fixture
def one_worker(cli_session, monkeypatch, spy_runs):
    """A session of one in-process worker, chains of 100 elements on, blocks of 8 rows; the
    list of what each chain attempt returned."""
    ex = st.init(executor="local", num_workers=1).executor
    configure(ex, True, min_elems=100)
    monkeypatch.setattr(rowchain, "BLOCK_BYTES", 64)
    return spy_runs(rowchain)


def test_stencil_in_one_pass_bit_identical(one_worker):
    un = np.random.default_rng(0).random((61, 37))
    for shards in (2, 3):
        u = st.from_numpy(un, shards=shards)
        got = stencil(u.clone(), 4).numpy()
        assert got.tobytes() == stencil(un.copy(), 4).tobytes()
    assert one_worker.count(True) >= 8  # (a pass per step)


def test_a_sum_the_driver_holds_is_written_whole(one_worker):
    un = np.random.default_rng(1).random((50, 40))
    u = st.from_numpy(un, shards=2)
    st.synchronize()
    del one_worker[:]
    s = u[:-2, 1:-1] + u[2:, 1:-1]  # kept: read below
    t = (s + u[1:-1, :-2] + u[1:-1, 2:]) * 0.25
    assert (
        t.numpy().tobytes()
        == ((un[:-2, 1:-1] + un[2:, 1:-1] + un[1:-1, :-2] + un[1:-1, 2:]) * 0.25).tobytes()
    )
    assert s.numpy().tobytes() == (un[:-2, 1:-1] + un[2:, 1:-1]).tobytes()
    assert any(one_worker)


def test_fusion_off_runs_op_by_op(one_worker):
    ex = st.init().executor
    un = np.random.default_rng(2).random((40, 30))
    u = st.from_numpy(un, shards=2)
    configure(ex, False)
    got = stencil(u.clone(), 2).numpy()
    configure(ex, True, min_elems=100)
    assert not any(one_worker)
    assert got.tobytes() == stencil(un.copy(), 2).tobytes()
