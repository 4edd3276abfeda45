"""The sample sort's destination order (``packed_sort``: uint64 keys packing an order key
above the position) against NumPy's stable argsort, in torch's order: NaN last (first when
descending), -0.0 == 0.0, ties by position; exact and truncated keys, crowded values."""

import numpy as np
import pytest

from sharded.ops.order.kernels.packed import reverse
from sharded.ops.order.kernels.sort import (
    order_keys,
    packed_sort,
    sort_finish,
    sort_local,
    sort_positions,
    sort_split,
    sort_values_local,
)

RNG = np.random.default_rng(5)


def ref(v, descending):
    if not descending:
        return np.argsort(v, kind="stable")
    r = np.argsort(v[::-1], kind="stable")  # the reverse of the flipped ascending sort
    return (v.size - 1 - r)[::-1]


SPECIAL = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan, 1.0, -1.0, 0.0, -0.0])
CASES = {
    "random": RNG.random(5000),
    "ties": RNG.integers(0, 7, 5000).astype(np.float64),
    "special": np.tile(SPECIAL, 50),
    "wide": np.concatenate([RNG.random(3000), [1e300, -1e300, 5e-324]]),  # truncated keys
    "crowded": np.concatenate([1 + RNG.integers(0, 50, 3000) * 2e-16, [1e300, -1e300]]),
    "some-crowded": np.concatenate(
        [RNG.random(3000), 1 + RNG.integers(0, 50, 300) * 2.3e-16, [1e300, -1e300]]
    ),
    "float32": RNG.standard_normal(3000).astype(np.float32),
    "float16": np.tile(SPECIAL, 20).astype(np.float16),
    "int64": np.concatenate([RNG.integers(-(2**62), 2**62, 3000), [2**63 - 1, -(2**63)]]),
    "int64-ties": RNG.integers(-3, 3, 3000),
    "uint64": np.array([2**64 - 1, 0, 5, 2**63, 5, 0], dtype=np.uint64),
    "int8": RNG.integers(-128, 127, 3000).astype(np.int8),
    "bool": RNG.random(3000) > 0.5,
    "one": np.array([3.0]),
    "empty": np.zeros(0),
}


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_packed_order_is_torchs_stable_order(name, descending):
    v = CASES[name]
    vals, got = packed_sort(np, v, descending)
    assert got.dtype == np.int64 and vals.dtype == v.dtype
    want = ref(v, descending)
    assert np.array_equal(got, want)
    assert np.array_equal(vals, v[want], equal_nan=True)
    assert np.array_equal(np.signbit(vals), np.signbit(v[want]))  # -0.0 kept as given


def test_order_keys_tie_zeros_and_nans():
    k = order_keys(np, np.array([-0.0, 0.0, np.nan, -np.nan, np.inf]), False)
    assert k[0] == k[1] and k[2] == k[3] and k[4] < k[2]


@pytest.mark.parametrize("descending", [False, True])
def test_a_long_local_line_takes_the_packed_sort(descending):
    v = np.concatenate([RNG.integers(0, 50, 70_000).astype(np.float64), SPECIAL])
    vals, idx = sort_local(np, v, 0, descending)
    want = ref(v, descending)
    assert np.array_equal(idx, want) and np.array_equal(vals, v[want], equal_nan=True)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_destination_sorts_its_pieces_with_their_global_positions(name, descending):
    # two sources, each sending the elements of its block that pass a random mask, in
    # position order: the result is those elements in torch's stable order, and their
    # global positions (one gather of (value, position) records)
    v = CASES[name]
    pos = np.flatnonzero(RNG.random(v.size) < 0.7)
    cut = v.size // 2
    pieces = []
    for p in (pos[pos < cut], pos[pos >= cut]):
        pieces += [v[p], p]
    vals, idx, _, _ = sort_finish(
        np, *pieces, dtype=v.dtype.str, descending=descending, index=True, cap=v.size + 3
    )
    n = pos.size  # the run is the block's head (the block has the capacity asked for)
    assert vals.size == idx.size == max(n, v.size + 3)
    vals, idx = vals[:n], idx[:n]
    want = pos[ref(v[pos], descending)]
    assert idx.dtype == np.int64 and vals.dtype == v.dtype
    assert np.array_equal(idx, want)
    assert np.array_equal(vals, v[want], equal_nan=True)
    assert np.array_equal(np.signbit(vals), np.signbit(v[want]))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_values_destination_is_bit_identical_to_the_stable_sort(name, descending):
    # the plain (unstable) sort of the values, its mixed zeros and NaNs put back in input
    # order: every bit as torch's stable sort leaves them
    v = CASES[name]
    if v.dtype.kind == "f":
        v = v.copy()
        v[::7] = -0.0
        v[3::11] = -np.nan  # NaNs of both signs
    cut = v.size // 3
    got = sort_finish(np, v[:cut], v[cut:], dtype=v.dtype.str, descending=descending,
                      index=False, cap=v.size + 5)[: v.size]  # fmt: skip
    want = v[ref(v, descending)]
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", [((5000,), 0), ((40, 30), 0), ((40, 30), 1)])
def test_the_local_values_sort_is_bit_identical(shape, dim, descending):
    a = RNG.integers(-3, 3, shape).astype(np.float64)
    a[a == 2] = -0.0
    a[a == -3] = np.nan
    a.reshape(-1)[::13] = -np.nan
    got = sort_values_local(np, a, dim, descending)
    if descending:
        idx = a.shape[dim] - 1 - np.flip(np.argsort(np.flip(a, dim), dim, kind="stable"), dim)
    else:
        idx = np.argsort(a, dim, kind="stable")
    want = np.take_along_axis(a, idx, dim)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_reverse_in_place_and_pooled_blocks():
    for n in (0, 1, 2, 7, 3 * (1 << 16) + 5):
        v = np.arange(n)
        assert np.array_equal(reverse(np, v.copy()), v[::-1])
    taken = []

    def alloc(shape, dtype):  # the worker's pool: a block of exactly that shape, or None
        b = np.full(shape, 99.0, dtype=dtype)
        taken.append(b)
        return b

    a = RNG.random(100_000)
    vals, perm = sort_local(np, a, 0, False, alloc=alloc)
    assert vals is taken[0] and perm is taken[1]  # the result lives in the pooled blocks
    assert np.array_equal(perm, np.argsort(a, kind="stable")) and np.array_equal(vals, np.sort(a))


def ref_lines(a, dim, descending):
    if descending:
        return a.shape[dim] - 1 - np.flip(np.argsort(np.flip(a, dim), dim, kind="stable"), dim)
    return np.argsort(a, dim, kind="stable")


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize(
    "name,shape,dim",
    [
        ("ties", (300, 250), 1),
        ("ties", (300, 250), 0),
        ("random", (4, 20, 900), 1),
        ("crowded", (70, 1000), 1),  # truncated keys: rows sorted again by the argsort
        ("special", (1000, 70), 1),
        ("int64", (500, 140), 1),
    ],
)
def test_many_lines_sort_at_once_by_packed_keys(name, shape, dim, descending):
    src = CASES[name]
    a = src[RNG.integers(0, src.size, int(np.prod(shape)))].reshape(shape)
    if name == "crowded":
        a[::7, 3] = 1e300  # a wide span in some rows, crowded values in all
    vals, idx = sort_local(np, a, dim, descending)
    want = ref_lines(a, dim, descending)
    assert idx.dtype == np.int64 and np.array_equal(idx, want)
    assert np.take_along_axis(a, want, dim).tobytes() == vals.tobytes()


@pytest.mark.parametrize("p", [2, 5, 12])
def test_codes_give_the_position_groups(p):
    # a source keeps every element's destination (a byte each); the positions it would have
    # sent are made from them only when indices are asked for
    a = np.concatenate([RNG.integers(0, 9, 300_000).astype(np.float64), SPECIAL])
    at = RNG.choice(a.size, p - 1, replace=False)
    keys = np.sort(a[at] + 1j * (at + 1000))  # splitters: (value, global index) keys
    vals, pos, counts = sort_split(np, a, 1000, 1, keys, p, True)
    vals2, codes, counts2 = sort_split(np, a, 1000, 1, keys, p, "codes")
    assert codes.dtype == np.uint8 and codes.size == a.size
    assert np.array_equal(counts, counts2) and vals.tobytes() == vals2.tobytes()
    assert np.array_equal(sort_positions(np, codes, 1000, p), pos)
    assert np.array_equal(np.sort(pos), np.arange(1000, 1000 + a.size))  # every one, once
