import time

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_from_numpy_roundtrip_every_layout(place):
    a = np.arange(42, dtype=np.float64).reshape(7, 6)
    x = st.from_numpy(a, **place)
    assert_matches_numpy(x, a, dtype=st.float64)
    assert np.asarray(x).tolist() == a.tolist()


def test_tensor_dtype_inference_like_torch():
    assert st.tensor([1.0, 2.0]).dtype == st.float32
    assert st.tensor([1, 2]).dtype == st.int64
    assert st.tensor([True, False]).dtype == st.bool
    assert st.tensor(np.arange(3, dtype=np.int16)).dtype == st.int16
    assert st.tensor(3.5).shape == () and st.tensor(3.5).item() == 3.5
    assert st.tensor([[1, 2]], dtype=st.float64).dtype == st.float64


def test_filled_creators():
    assert_matches_numpy(st.zeros(5, 3, shards=2), np.zeros((5, 3), np.float32), dtype="float32")
    assert_matches_numpy(st.ones((2, 3)), np.ones((2, 3)), dtype=st.float32)
    assert_matches_numpy(st.full((3,), 7), np.full(3, 7), dtype=st.int64)
    assert_matches_numpy(st.full((3,), 2.5, dtype=st.float64), np.full(3, 2.5))
    assert_matches_numpy(st.zeros(size=(2, 2), dtype=st.int32), np.zeros((2, 2), np.int32))
    assert st.empty(4, 2, shards=3).shape == (4, 2)
    assert st.zeros(0, 3).numel() == 0
    assert_matches_numpy(st.eye(5, shards=3), np.eye(5))
    assert_matches_numpy(st.eye(3, 5, layout=st.Layout.block((2, 2))), np.eye(3, 5))


def test_ranges():
    x = st.arange(2, 10, 4)
    assert x.dtype == st.int64 and x.tolist() == [2, 6]
    assert_matches_numpy(st.arange(10, shards=3), np.arange(10))
    assert_matches_numpy(st.arange(0, 1, 0.1, shards=4), np.arange(0, 1, 0.1), dtype=st.float32)
    assert_matches_numpy(st.arange(5, 0, -2), np.arange(5, 0, -2))
    assert st.arange(3, 3).numel() == 0
    assert_matches_numpy(st.linspace(-1, 1, 11, shards=3), np.linspace(-1, 1, 11))
    assert_matches_numpy(st.linspace(0, 1, 1), np.linspace(0, 1, 1))
    assert_matches_numpy(st.logspace(0, 3, 4, shards=2), np.logspace(0, 3, 4), rtol=1e-6)
    assert_matches_numpy(st.logspace(0, 3, 4, base=2), np.logspace(0, 3, 4, base=2))


def test_like_creators_keep_shape_dtype_layout():
    x = st.rand(6, 4, shards=3, dtype=st.float64)
    for y in (
        st.zeros_like(x),
        st.ones_like(x),
        st.empty_like(x),
        st.rand_like(x),
        st.randn_like(x),
        st.full_like(x, 3),
    ):
        assert y.shape == x.shape and y.dtype == x.dtype and y.layout == x.layout
    assert st.full_like(x, 3).sum().item() == 72
    assert st.zeros_like(x, dtype=st.int32).dtype == st.int32


@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_rng_identical_for_every_sharding(fn):
    f = getattr(st, fn)
    st.manual_seed(1234)
    ref = f(7, 5, shards=1).numpy()
    for place in PLACEMENTS:
        st.manual_seed(1234)
        np.testing.assert_array_equal(f(7, 5, **place).numpy(), ref)
    st.manual_seed(1234)
    a, b = f(7, 5).numpy(), f(7, 5).numpy()
    assert not np.array_equal(a, b), "successive draws must differ"


def test_rng_distributions():
    st.manual_seed(0)
    u = st.rand(20000, shards=4, dtype=st.float64).numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    n = st.randn(20000, shards=3).numpy()
    assert n.dtype == np.float32 and abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    r = st.randint(3, 9, (5000,), shards=2).numpy()
    assert r.dtype == np.int64 and r.min() == 3 and r.max() == 8
    assert st.randint(4, (3, 3)).numpy().max() < 4
    st.manual_seed(5)
    p1 = st.randperm(50, shards=1).numpy()
    st.manual_seed(5)
    p3 = st.randperm(50, shards=3).numpy()
    np.testing.assert_array_equal(p1, p3)
    assert sorted(p1.tolist()) == list(range(50))


def test_requires_grad_stored():
    x = st.zeros(3, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    with pytest.raises(st.ArgumentError, match="int64"):
        st.zeros(3, dtype=st.int64, requires_grad=True)


@pytest.mark.parametrize(
    "call, err, text",
    [
        (lambda: st.zeros(-1, 2), st.ArgumentError, "-1"),
        (lambda: st.zeros(2, shards=0), st.ShardingError, "0"),
        (lambda: st.zeros(2, 2, dim=3), st.DimError, "dim 3"),
        (lambda: st.zeros(2, dtype="uint16"), st.DTypeError, "uint16"),
        (lambda: st.arange(0, 3, 0), st.ArgumentError, "step"),
        (lambda: st.randint(5, 2, (3,)), st.ArgumentError, "low=5"),
        (lambda: st.zeros(2, device="cuda"), st.BackendUnavailable, "no GPU worker"),
        (lambda: st.zeros(3, layout=st.Layout(chunks=(1, 1))), st.LayoutMismatch, "add up"),
    ],
)
def test_bad_creation_input(call, err, text):
    with pytest.raises(err, match=text):
        call()


@pytest.mark.parametrize("shards", [1, 2])
def test_integer_arange_of_float_arguments_like_torch(shards):
    # torch truncates start and step; int64 counts from the truncated arguments too
    i64, i32 = st.int64, st.int32
    assert st.arange(0.5, 5, 1.5, dtype=i64, shards=shards).tolist() == [0, 1, 2, 3, 4]
    assert st.arange(0.5, 5, 1.5, dtype=i32, shards=shards).tolist() == [0, 1, 2]
    assert st.arange(-0.5, -5.5, -1.5, dtype=i64, shards=shards).tolist() == [0, -1, -2, -3, -4]
    assert st.arange(0, 10, 3.7, dtype=i64, shards=shards).tolist() == [0, 3, 6, 9]
    assert st.arange(0, 10, 3.7, dtype=i32, shards=shards).tolist() == [0, 3, 6]
    assert st.arange(5.9, dtype=st.uint8, shards=shards).tolist() == [0, 1, 2, 3, 4, 5]
    assert st.arange(2.5, 2.7, 0.1, dtype=i32).tolist() == [2, 2, 2]
    with pytest.raises(ValueError, match="step must be nonzero"):
        st.arange(-2.5, 3, 0.7, dtype=i64)


@pytest.mark.parametrize("shards", [1, 2])
def test_integer_linspace_logspace_like_torch(shards):
    # torch: start and end truncated, then the first half counts up from start and the rest
    # down from end in float64, each value truncated
    i64 = st.int64
    assert st.linspace(0.5, 9.7, 5, dtype=i64, shards=shards).tolist() == [0, 2, 4, 6, 9]
    assert st.linspace(10, 0, 7, dtype=i64, shards=shards).tolist() == [10, 8, 6, 5, 3, 1, 0]
    assert st.linspace(0, 1, 1, dtype=i64).tolist() == [0]
    assert st.logspace(0, 3, 7, dtype=i64, shards=shards).tolist() == [1, 3, 10, 31, 100, 316, 1000]
    got = st.logspace(0.5, 2.5, 5, base=2, dtype=i64, shards=shards)
    assert got.tolist() == [1, 1, 2, 2, 4]
    assert st.logspace(0, 2, 5, base=3, dtype=i64, shards=shards).tolist() == [1, 1, 3, 5, 9]


def test_arange_refuses_a_step_running_away_from_end_like_torch():
    # torch: RuntimeError "upper bound and lower bound inconsistent with step sign" (issue 12)
    for args in ((0, 5, -1), (5, 0, 1), (0.0, 5, -1), (-1,), (2.5, 1.0, 0.5)):
        with pytest.raises(st.ArgumentError, match="inconsistent with step sign"):
            st.arange(*args)
    with pytest.raises(st.ArgumentError, match="step must be nonzero"):
        st.arange(0, 5, 0)
    with pytest.raises(st.ArgumentError, match="unsupported range"):
        st.arange(0, float("inf"))
    assert st.arange(0, 0, -1).shape == (0,) and st.arange(0, 0, -1).dtype == st.int64
    assert st.arange(5, 0, -2, shards=2).tolist() == [5, 3, 1]


# ---------------------------------------------------- issue 12: torch parity (torch 2.13's answers)
def test_python_ints_outside_the_dtype_wrap_in_creation_like_torch():
    assert st.full((2,), -2, dtype=st.uint8, shards=2).tolist() == [254, 254]
    r = st.tensor(-3, dtype=st.uint8)
    assert r.item() == 253 and r.dtype == st.uint8
    assert st.tensor([-1, 7], dtype=st.uint8).tolist() == [255, 7]
    with pytest.raises(st.ValueOverflow, match="300 cannot be converted to type int8"):
        st.full((2,), 300, dtype=st.int8)
    with pytest.raises(st.ValueOverflow, match="300 cannot be converted to type uint8"):
        st.tensor([300, -1], dtype=st.uint8)


def test_a_float_fill_beyond_the_dtype_raises_as_torch():
    # torch 2.13: full/full_like/new_full/fill_ refuse a finite value past the dtype's range;
    # inf fills, float64 takes 1e39, and a tensor of the value rounds to inf without a check
    x = st.zeros(2)
    for make in (
        lambda: st.full((2,), 1e39),
        lambda: st.full_like(x, 1e39),
        lambda: x.new_full((2,), 1e39),
        lambda: x.fill_(1e39),
    ):
        with pytest.raises(st.ValueOverflow, match="1e[+]39 cannot be converted to type float32"):
            make()
    assert x.tolist() == [0.0, 0.0]  # the refused fill_ wrote nothing
    with pytest.raises(st.ValueOverflow, match="type float16"):
        st.full((2,), 70000.0, dtype=st.float16)
    with pytest.raises(st.ValueOverflow, match="300 cannot be converted to type int8"):
        st.zeros(2, dtype=st.int8).fill_(300)
    assert st.full((2,), float("inf")).tolist() == [float("inf")] * 2
    assert st.full((1,), 1e39, dtype=st.float64).item() == 1e39
    assert st.zeros(2, dtype=st.uint8).fill_(-3).tolist() == [253, 253]
    assert st.tensor([1e39], dtype=st.float32).tolist() == [float("inf")]


def test_tensor_keeps_numpy_scalar_dtypes_like_torch():
    assert st.tensor(np.float64(2.0)).dtype == st.float64
    assert st.tensor(np.int32(4)).dtype == st.int32
    assert st.tensor([np.float64(2.0), 1.0]).dtype == st.float64
    assert st.tensor([np.int32(2), 1]).dtype == st.int64  # promoted with the Python int
    assert st.tensor([np.int32(2), 1.5]).dtype == st.float32
    assert st.tensor([1.0, 2.0]).dtype == st.float32


def test_full_fill_values_like_torch():
    assert st.full((2,), st.tensor(3)).dtype == st.int64
    assert st.full((2,), st.tensor(3.0, dtype=st.float64)).dtype == st.float32
    assert st.full((2,), 1 + 0j, dtype=st.float32).tolist() == [1.0, 1.0]
    assert st.full((2,), 1j, dtype=st.bool).tolist() == [True, True]
    for dt in (st.float32, st.int64):
        with pytest.raises(RuntimeError):  # value cannot be converted without overflow
            st.full((2,), 1j, dtype=dt)
    with pytest.raises(RuntimeError):
        st.full_like(st.zeros(2, dtype=st.int32), 2j)


def test_range_arguments_like_torch():
    assert st.arange(end=4).tolist() == [0, 1, 2, 3]
    assert st.arange(start=1, end=4).tolist() == [1, 2, 3]
    assert st.arange(st.tensor(3)).dtype == st.int64
    assert st.arange(st.tensor(2.5)).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError):
        st.arange()
    for f in (lambda: st.arange(5, dtype=st.bool), lambda: st.linspace(0, 2, 3, dtype=st.bool)):
        with pytest.raises(TypeError):  # torch: arange_cpu / linspace_cpu not implemented
            f()
    assert st.linspace(0, 1, st.tensor(3)).tolist() == [0.0, 0.5, 1.0]
    for steps in (2.0, True):
        with pytest.raises(TypeError):
            st.linspace(0, 1, steps)
    with pytest.raises(RuntimeError):
        st.linspace(0, 1, -1)
    z = st.linspace(0, 1j, 3, shards=2)
    assert z.dtype == st.complex64 and np.allclose(z.numpy(), [0, 0.5j, 1j])
    w = st.logspace(0, 1j, 3)
    assert w.dtype == st.complex64 and np.allclose(w.numpy(), 10.0 ** np.linspace(0, 1j, 3))
    with pytest.raises(RuntimeError):  # complex can't be safely cast to float32
        st.linspace(0, 1j, 3, dtype=st.float32)


def test_random_creation_arguments_like_torch():
    for f in (st.rand, st.randn):
        with pytest.raises(TypeError):  # torch: not implemented for 'Long' / 'Bool'
            f(2, dtype=st.int64)
    with pytest.raises(TypeError):
        st.rand_like(st.zeros(2, dtype=st.int32))
    r = st.randint(5, size=(3,))
    assert r.shape == (3,) and r.dtype == st.int64 and int(r.max().item()) < 5
    assert st.randint(high=5, size=(2,)).shape == (2,)
    x = st.randint_like(st.zeros(2, 3, dtype=st.int32), 5)
    assert x.shape == (2, 3) and x.dtype == st.int32 and int(x.max().item()) < 5
    y = st.randint_like(st.zeros(4), 2, 4)
    assert y.dtype == st.float32 and set(y.tolist()) <= {2.0, 3.0}
    for f in (st.zeros, st.ones, st.empty):
        with pytest.raises(TypeError):  # size must be tuple of ints
            f(2.5)


# ------------------------------------------- bad sizes fail at the call (security issue 15)
HUGE = 10**15  # elements: petabytes, more than any session's workers hold


TOO_LARGE = {  # creation call -> the bytes it asks for
    "zeros": (lambda: st.zeros(HUGE), 4 * HUGE),
    "ones": (lambda: st.ones(HUGE, 2, dtype=st.float64), 16 * HUGE),
    "full": (lambda: st.full((HUGE,), 7), 8 * HUGE),
    "empty": (lambda: st.empty(HUGE, dtype=st.uint8), HUGE),
    "rand": (lambda: st.rand(HUGE), 4 * HUGE),
    "randn": (lambda: st.randn(HUGE, shards=2), 4 * HUGE),
    "randint": (lambda: st.randint(3, (HUGE,)), 8 * HUGE),
    "normal": (lambda: st.normal(0.0, 1.0, (HUGE,)), 4 * HUGE),
    "arange": (lambda: st.arange(HUGE), 8 * HUGE),
    "arange_step": (lambda: st.arange(0, 10 * HUGE, 10), 8 * HUGE),
    "linspace": (lambda: st.linspace(0, 1, HUGE), 4 * HUGE),
    "eye": (lambda: st.eye(10**8), 4 * 10**16),
    "new_zeros": (lambda: st.ones(2).new_zeros(HUGE), 4 * HUGE),
}


@pytest.mark.parametrize("make, nbytes", TOO_LARGE.values(), ids=TOO_LARGE.keys())
def test_a_tensor_larger_than_the_workers_memory_fails_at_the_call(make, nbytes):
    mem = st.info()["memory_bytes"]
    before = st.arange(6, shards=2) * 2  # queued work that the refusal must leave alone
    with pytest.raises(st.OutOfMemory) as e:
        make()
    assert isinstance(e.value, MemoryError) and isinstance(e.value, RuntimeError)
    assert f"needs {nbytes} bytes" in str(e.value) and f"{mem} bytes" in str(e.value)
    assert (e.value.nbytes, e.value.memory_bytes) == (nbytes, mem)
    # nothing was queued: the session goes on, earlier and later work reads correctly
    assert before.tolist() == [0, 2, 4, 6, 8, 10]
    assert st.ones(3, shards=2).sum().item() == 3.0


def test_the_workers_memory_is_the_machines_or_their_ray_nodes():
    from sharded.runtime.driver.local import host_memory_bytes

    info = st.info()
    if info["executor"] == "local":  # every worker in this process: the machine's memory
        expected = host_memory_bytes()
    else:  # Ray: memory and object store of each node that runs a worker, once
        used = {w["node"] for w in info["workers"]}
        expected = sum(
            n["memory_bytes"] + n["object_store_bytes"] for n in info["nodes"] if n["node"] in used
        )
    assert info["memory_bytes"] == expected > 0


def test_shards_are_capped_at_the_split_dims_length():
    t0 = time.perf_counter()
    x = st.ones(10, shards=10**6)  # a million commands took 16 s before the cap
    assert x.layout.num_shards == 10 and x.tolist() == [1.0] * 10
    assert time.perf_counter() - t0 < 5
    assert st.arange(4, shards=7).layout.chunk_sizes(0) == (1, 1, 1, 1)
    assert st.arange(4, shards=7).tolist() == [0, 1, 2, 3]
    y = st.full((3, 4), 2.0, dim=1, shards=99)
    assert y.layout.grid == (1, 4) and y.sum().item() == 24.0
    z = st.zeros(0, 3, shards=10**6)  # a 0-length dim keeps one (empty) shard
    assert z.layout.num_shards == 1 and z.shape == (0, 3) and z.sum().item() == 0.0
    st.manual_seed(3)
    r1 = st.rand(5, 2, shards=1).numpy()
    st.manual_seed(3)
    r = st.rand(5, 2, shards=10**6)
    assert r.layout.num_shards == 5 and np.array_equal(r.numpy(), r1)
    e = st.eye(3, layout=st.Layout.block((10**6, 10**6)))  # a grid is capped per dim too
    assert e.layout.grid == (3, 3) and np.array_equal(e.numpy(), np.eye(3))
    assert st.ones(6, shards=2).reshard(shards=10**6).layout.num_shards == 6
