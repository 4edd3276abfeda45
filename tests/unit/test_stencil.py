"""Shifted slices of a grid split by rows: the 5-point stencil and sliced assignments equal
NumPy's bit for bit, for even and uneven splits, with slices crossing shard boundaries; the
operands a few rows off the output's cuts read halo rows (no assembled block copies)."""

import numpy as np
import pytest

import sharded as st
from sharded.core.registry import KERNELS

pytestmark = pytest.mark.ray_mirror

SHARDS = [1, 2, 3, 5, 7]  # the package's session has 3 workers: 5 and 7 split unevenly


def sweep(u, steps):
    """Jacobi sweeps of the 5-point stencil, in place (the benchmark's workload)."""
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def grid(rows=40, cols=13, seed=0):
    return np.random.default_rng(seed).random((rows, cols))


@pytest.mark.parametrize("shards", SHARDS)
def test_stencil_sweeps_equal_numpy(shards):
    a = grid()
    got = sweep(st.from_numpy(a, shards=shards), 3).numpy()
    assert np.array_equal(got, sweep(a.copy(), 3))


@pytest.mark.parametrize("shards", SHARDS)
def test_five_term_sum_of_shifted_slices(shards):
    a = grid(37, 9, seed=1)
    u = st.from_numpy(a, shards=shards)
    got = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    want = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    assert np.array_equal(got.numpy(), want)


@pytest.mark.parametrize("shards", [2, 3, 5])
def test_halo_with_broadcast_and_scalar_operands(shards):
    a, row = grid(30, 6, seed=2), np.linspace(-1.0, 1.0, 6)
    u = st.from_numpy(a, shards=shards)
    got = st.where(u[3:] > u[:-3], u[3:] * st.from_numpy(row), u[:-3] - 2)
    want = np.where(a[3:] > a[:-3], a[3:] * row, a[:-3] - 2)
    assert np.array_equal(got.numpy(), want)


@pytest.mark.parametrize("shards", [2, 3, 5, 7])
def test_sliced_assignments_across_shard_boundaries(shards):
    a, b = grid(40, 13, seed=3), grid(28, 13, seed=4)
    x = st.from_numpy(a, shards=shards)
    x[2:30] = st.from_numpy(b, shards=3)  # another split
    a[2:30] = b
    x[3:] = x[:-3]  # overlapping: NumPy reads the right side whole first
    a[3:] = a[:-3]
    x[1:] += x[:-1]
    a[1:] += a[:-1]
    x[1:-1, 2:] -= 0.5 * x[2:, :-2]
    a[1:-1, 2:] -= 0.5 * a[2:, :-2]
    assert np.array_equal(x.numpy(), a)


def test_integer_and_complex_grids():
    i = np.arange(60 * 5, dtype=np.int64).reshape(60, 5)
    x = st.from_numpy(i, shards=3)
    x[1:-1] = x[2:] + x[:-2] * 3
    i[1:-1] = i[2:] + i[:-2] * 3
    assert np.array_equal(x.numpy(), i)
    c = grid(24, 4, seed=5) + 1j * grid(24, 4, seed=6)
    z = st.from_numpy(c, shards=2)
    assert np.array_equal((z[1:] * z[:-1].conj()).numpy(), c[1:] * c[:-1].conj())


@pytest.mark.ray_mirror(False)  # counts the kernels the in-process workers run
def test_stencil_reads_halos_without_assembled_copies(monkeypatch):
    calls = []
    assemble = KERNELS["assemble"]

    def counted(*args, **kw):
        calls.append(kw.get("shape"))
        return assemble(*args, **kw)

    u = st.from_numpy(grid(64, 16), shards=2)
    monkeypatch.setitem(KERNELS, "assemble", counted)
    sweep(u, 2)
    st.synchronize()
    assert calls == []  # (the old planner assembled 4 blocks a sweep)
    assert np.array_equal(u.numpy(), sweep(grid(64, 16), 2))
