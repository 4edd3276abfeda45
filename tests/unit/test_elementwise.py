"""The shared elementwise planner: layouts, broadcasting, operands and result dtypes."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.linspace(-3, 3, 42).reshape(7, 6)
B = np.cos(np.arange(42.0)).reshape(7, 6) + 2.0


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_binary_ops_on_every_layout(place):
    x, y = st.from_numpy(A, **place), st.from_numpy(B, **place)
    assert_matches_numpy(x + y, A + B)
    assert_matches_numpy(x - y, A - B)
    assert_matches_numpy(x * y, A * B)
    assert_matches_numpy(x / y, A / B)
    assert_matches_numpy(x // y, A // B)
    assert_matches_numpy(x % y, A % B)
    assert_matches_numpy(y**x, B**A)
    assert_matches_numpy(st.maximum(x, y), np.maximum(A, B))
    assert_matches_numpy(st.minimum(x, y), np.minimum(A, B))


@pytest.mark.parametrize(
    "px, py",
    [
        (dict(shards=2), dict(shards=3)),
        (dict(shards=3), dict(shards=3, dim=1)),
        (dict(layout=st.Layout.block((2, 2))), dict(shards=2)),
        (dict(shards=2), dict(layout=st.Layout.replicated())),
        (dict(layout=st.Layout(chunks=(4, 0, 3))), dict(layout=st.Layout(chunks=(1, 6)))),
    ],
)
def test_mismatched_layouts_are_aligned(px, py):
    x, y = st.from_numpy(A, **px), st.from_numpy(B, **py)
    z = x * y + x
    assert_matches_numpy(z, A * B + A)
    assert z.layout == x.layout  # the output follows the first sharded full-shape operand
    assert_matches_numpy(x, A) and assert_matches_numpy(y, B)  # operands untouched


def test_rank_mismatch_broadcast_sums_to_12():
    a, b = st.tensor([[1], [2]]), st.tensor([1, 2])
    assert (a + b).sum().item() == 12
    assert_matches_numpy(a + b, np.array([[2, 3], [3, 4]]))


@pytest.mark.parametrize(
    "sa, sb",
    [
        ((7, 6), (6,)),
        ((7, 1), (1, 6)),
        ((7, 6), (7, 1)),
        ((1, 6), (7, 6)),
        ((7, 6), ()),
        ((2, 1, 6), (7, 1)),
    ],
)
@pytest.mark.parametrize("shards", [1, 3])
def test_broadcasting_shapes(sa, sb, shards):
    a = np.arange(np.prod(sa), dtype=np.float64).reshape(sa) + 1
    b = np.arange(np.prod(sb), dtype=np.float64).reshape(sb) * 0.5 - 1
    x, y = st.from_numpy(a, shards=shards), st.from_numpy(b, shards=2)
    assert_matches_numpy(x * y - y, a * b - b)
    assert_matches_numpy(y / x, b / a)


def test_scalars_and_numpy_operands_reflected():
    x = st.from_numpy(A, shards=3)
    assert_matches_numpy(2 * x + 3, 2 * A + 3)
    assert_matches_numpy(1 - x, 1 - A)
    assert_matches_numpy(2 / (x + 10), 2 / (A + 10))
    assert_matches_numpy(2**x, 2**A)
    assert_matches_numpy(A[0] + x, A[0] + A)
    assert_matches_numpy(x - B, A - B)
    assert_matches_numpy(B - x, B - A)
    assert_matches_numpy(np.float64(2.0) * x, 2 * A)
    assert_matches_numpy(-x, -A)
    assert_matches_numpy(abs(x), np.abs(A))
    assert_matches_numpy(+x, A)


@pytest.mark.parametrize(
    "a, b, out",
    [
        ("int32", 5, "int32"),
        ("int64", 2.5, "float32"),
        ("int8", "int16", "int16"),
        ("uint8", "int8", "int16"),
        ("float16", 3.0, "float16"),
        ("bool", 1, "int64"),
        ("int32", "float64", "float64"),
        ("float32", "float64", "float64"),
    ],
)
def test_result_dtypes_follow_torch(a, b, out):
    x = st.ones(4, dtype=a, shards=2)
    other = b if not isinstance(b, str) else st.ones(4, dtype=b, shards=3)
    r = x + other
    assert r.dtype == st.dtypes.as_dtype(out)
    assert r.numpy().dtype == np.dtype(out)


def test_pure_rules_without_an_executor():
    from sharded.core.dataflow import Operand
    from sharded.ops.elementwise import plan as E

    assert E.broadcast_shapes((7, 1), (1, 6), ()) == (7, 6)
    with pytest.raises(st.ShapeError, match=r"\(7, 6\) and \(5,\)"):
        E.broadcast_shapes((7, 6), (5,))
    assert E.operand_dtypes([np.ones(2, np.int32), 2.5]) == st.float32
    lay = st.layout.Layout.from_bounds((4, 6), [(0, 2, 4), (0, 6)], [0, 1])
    x = Operand(lay, st.float32, (1, 2))
    assert E.out_layout((4, 6), [x], 2) is lay  # full shape: the output follows it
    out = E.out_layout((3, 4, 6), [x], 2)  # broadcast over a new leading dim: same chunks
    assert out.shape == (3, 4, 6) and out.bounds[1] == (0, 2, 4) and list(out.workers) == [0, 1]
    rep = Operand(
        st.layout.Layout.from_bounds((6,), [(0, 6)], [0, 1], replicated=True), st.float32, (3, 4)
    )
    assert E.out_layout((6,), [rep], 2).is_replicated


def test_elementwise_result_of_a_transposed_view_reshapes():
    # a ufunc over a transposed block keeps its memory order; the result must be C order
    for place in (dict(shards=1), dict(shards=2, dim=1), dict(layout=st.Layout.replicated())):
        x = st.from_numpy(np.arange(8.0).reshape(2, 4), **place)
        y = x.transpose(0, 1) / 2.0
        assert y.reshape(-1).tolist() == [0.0, 2.0, 0.5, 2.5, 1.0, 3.0, 1.5, 3.5]
        assert (st.maximum(x.transpose(0, 1), st.tensor(1.0))).reshape(-1).tolist()[:2] == [
            1.0,
            4.0,
        ]


def test_cached_dtype_rules_follow_the_default_dtype_and_scalar_types():
    # the planner remembers a rule's answer per operand signature: the default dtype, the
    # scalars' types and values that wrap (uint8 + -1) must still count
    x = st.tensor(np.array([1, 2, 3], np.int32), shards=3)
    assert (x * 1.5).dtype == st.float32
    st.set_default_dtype(st.float64)
    try:
        y = x * 1.5
        assert y.dtype == st.float64 and y.tolist() == [1.5, 3.0, 4.5]
    finally:
        st.set_default_dtype(st.float32)
    assert (x * 1.5).dtype == st.float32
    assert (st.tensor([True]) + 2).dtype == st.int64
    u = st.tensor(np.array([1, 2], np.uint8), shards=2)
    z = u + (-1)
    assert z.dtype == st.uint8 and z.tolist() == [0, 1]


def test_one_layout_fast_path_keeps_in_place_checks():
    # equal layouts that are distinct objects take the one-command path too
    x = st.from_numpy(A, shards=3)
    y = st.from_numpy(B, shards=3)
    assert x.layout is not y.layout and x.layout == y.layout
    assert_matches_numpy(x * y + 0.5, A * B + 0.5)
    i = st.tensor(np.array([1, 2]), shards=2)
    with pytest.raises(st.errors.DTypeError, match="can't be cast"):
        i.mul_(1.5)
    assert i.tolist() == [1, 2]  # refused before anything was queued
    v = i._vc[0]
    i.mul_(3)
    assert i.tolist() == [3, 6] and i._vc[0] == v + 1
