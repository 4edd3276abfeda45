"""Reads assemble their shards on several threads: the result is the same array."""

import numpy as np
import pytest

import sharded as st
from sharded.backend import host_copy


@pytest.fixture
def threaded(monkeypatch):
    # every copy spreads over three threads, whatever this machine's size
    monkeypatch.setattr(host_copy, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(host_copy, "_threads", lambda: 3)


@pytest.mark.parametrize("shape", [(), (1,), (7,), (5, 1, 9), (1, 1, 4)])
def test_assemble_whole(threaded, shape):
    src = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    out = host_copy.assemble(np.empty(shape), [((), src)])
    np.testing.assert_array_equal(out, src)


def test_assemble_pieces_cast_like_assignment(threaded):
    out = np.zeros((6, 10), dtype=np.float32)
    a, b = np.arange(30.0).reshape(3, 10), np.arange(30, dtype=np.int64).reshape(3, 10)
    host_copy.assemble(out, [((slice(0, 3),), a), ((slice(3, 6),), b)])
    np.testing.assert_array_equal(out, np.vstack([a, b]).astype(np.float32))


@pytest.mark.parametrize("dim", [0, 1])
def test_read_of_split_tensor(threaded, dim):
    x = np.random.default_rng(0).standard_normal((37, 23))
    t = st.tensor(x, shards=3, dim=dim)
    np.testing.assert_array_equal(t.numpy(), x)
    assert t.sum().item() == pytest.approx(x.sum())


def test_forked_child_copies_on_threads_of_its_own(threaded):
    import multiprocessing as mp
    import time

    # the parent's pool with all its threads started (a child inherits none of them)
    for f in [host_copy._executor().submit(time.sleep, 0.05) for _ in range(3)]:
        f.result()
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_child_copy).get(timeout=30)
    np.testing.assert_array_equal(got, np.arange(6.0))


def _child_copy():
    host_copy.PARALLEL_MIN_BYTES, host_copy._threads = 0, lambda: 3
    return host_copy.assemble(np.empty(6), [((), np.arange(6.0))])
