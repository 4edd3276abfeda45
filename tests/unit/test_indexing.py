"""``x[key]`` and ``x[key] = value`` on every layout against NumPy read with torch's key rule
(:func:`torch_ref`; torch's own answers in ``TORCH_ANSWERS``): basic keys (views), integer
lists/tensors (gathers across shards), boolean masks (data-dependent sizes), mixes of them,
out-of-range errors that change nothing, and generated index expressions."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sharded as st
from tests.helpers import (
    PLACEMENT_IDS,
    PLACEMENTS,
    assert_matches_numpy,
    examples,
    moved,
    sharded_arrays,
)
from tests.unit.test_indexing_torch import torch_ref, torch_set

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

A = np.arange(42.0).reshape(7, 6) * 1.5 - 20
M = A.astype(np.int64) % 3 == 0

KEYS = {
    "int": np.s_[2],
    "neg_int": np.s_[-1],
    "int_int": np.s_[-3, 4],
    "slice": np.s_[1:5],
    "slice_step": np.s_[1::2, ::3],
    "slice_neg_step": np.s_[::-1, 5:1:-2],
    "slice_out_of_range_bounds": np.s_[-100:100, 4:100],
    "empty_slice": np.s_[4:2],
    "none": np.s_[None],
    "none_mid": np.s_[:, None, 2],
    "ellipsis": np.s_[..., 1],
    "ellipsis_none": np.s_[None, ..., None, -2],
    "int_list": np.s_[[0, 6, 3, 3]],
    "neg_int_list": np.s_[[-1, -7, 2]],
    "col_list": np.s_[:, [5, 0, 2]],
    "two_lists": np.s_[[1, 1, 6], [-1, 0, 3]],
    "broadcast_lists": np.s_[[[0], [4]], [1, 2, 5]],
    "list_then_slice": np.s_[[6, 0], 1::2],
    "slice_list": np.s_[2:, [0, 3]],
    "list_none_list": np.s_[[2, 4], None, [0, 1]],
    "none_list_slice": np.s_[None, [0, 2], 1:3],
    "int_list_separated": np.s_[[1, 2], 3],
    "np_array": np.s_[np.array([[5, 1], [0, 6]])],
    "empty_list": np.s_[[]],
    "mask_2d": np.s_[M],
    "mask_rows": np.s_[M[:, 0] | M[:, 1]],
    "mask_cols": np.s_[:, M[0]],
    "mask_with_int": np.s_[3, M[1]],
    "bool_list": np.s_[[True, False, True, False, False, False, True]],
    "ellipsis_mask": np.s_[..., [True, False] * 3],
    "scalar_true": np.s_[True],
}


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("name", list(KEYS))
def test_getitem_matches_numpy(name, place):
    key = KEYS[name]
    x = st.from_numpy(A, **place)
    r = x[key]
    assert_matches_numpy(r, torch_ref(A, key))
    assert_matches_numpy(x, A)  # reading never changes the tensor


def _values(shape):
    """Value kinds for ``x[key] = v``: scalar, NumPy array, tensor, broadcast row, 0-d
    tensor, nested list."""
    full = -np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)
    row = -np.arange(shape[-1], dtype=np.float64) - 0.5 if shape else np.float64(9.0)
    return {
        "scalar": (7.25, 7.25),
        "int_scalar": (3, 3),
        "numpy": (full, full),
        "tensor": (st.from_numpy(full, shards=2), full),
        "tensor_cols": (
            st.from_numpy(full, shards=2, dim=-1) if full.ndim else st.from_numpy(full),
            full,
        ),
        "row": (st.from_numpy(row), row),
        "numpy_row": (row, row),
        "zero_d": (st.tensor(-2.0), -2.0),
        **({"list": (full.tolist(), full)} if full.size else {}),
    }


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("name", [k for k in KEYS if k != "scalar_true"])
def test_setitem_matches_numpy(name, place):
    key = KEYS[name]
    shape = torch_ref(A, key).shape
    for vname, (v, nv) in _values(shape).items():
        x, a = st.from_numpy(A.copy(), **place), A.copy()
        layout = x.layout
        x[key] = v
        torch_set(a, key, nv)
        assert_matches_numpy(x, a)
        assert x.layout == layout, vname  # in place: same shards


@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_setitem_value_dtype_is_converted_and_int_tensor(place):
    x = st.from_numpy(A.astype(np.int32), **place)
    a = A.astype(np.int32)
    x[1:3] = 2.9  # truncated to the tensor's dtype, like torch
    a[1:3] = 2.9
    x[[0, 6], 2] = st.tensor([5.5, -6.5])
    a[[0, 6], 2] = [5.5, -6.5]
    x[x < -10] = 0
    a[a < -10] = 0
    assert_matches_numpy(x, a, dtype=st.int32)


# ---------------------------------------------------------------- tensor indices
MASK_PLACES = [
    dict(),
    dict(shards=3),
    dict(shards=2, dim=1),
    dict(layout=st.Layout.block((2, 2))),
    dict(layout=st.Layout(chunks=(4, 0, 3))),
    dict(layout=st.Layout.replicated()),
]
MASK_IDS = ["default", "rows", "cols", "block", "uneven", "repl"]


def _fit(place, ndim):
    """A mask placement valid for a mask of ``ndim`` dims."""
    if ndim == 1 and ("dim" in place or "layout" in place and place["layout"]._req["grid"]):
        return dict(shards=2)
    return place


@pytest.mark.parametrize("mplace", MASK_PLACES, ids=MASK_IDS)
@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_tensor_masks_get_and_set(place, mplace):
    for m in (M, M[:, 0] | M[:, 3], ~M, np.zeros_like(M)):
        mask = st.from_numpy(m, **_fit(mplace, m.ndim))
        x = st.from_numpy(A.copy(), **place)
        assert_matches_numpy(x[mask], A[m])
        assert_matches_numpy(
            x[mask, 1:] if m.ndim == 1 else x[mask][1:], A[m, 1:] if m.ndim == 1 else A[m][1:]
        )
        for v, nv in (
            (-1.5, -1.5),
            (st.tensor(4.0), 4.0),
            (
                st.from_numpy(
                    -np.arange(int(m.sum()) * (6 if m.ndim == 1 else 1), dtype=np.float64).reshape(
                        A[m].shape
                    )
                ),
                None,
            ),
        ):
            a = A.copy()
            a[m] = nv if nv is not None else v.numpy()
            x[mask] = v
            assert_matches_numpy(x, a)
            x = st.from_numpy(A.copy(), **place)


def test_mask_selection_stays_sharded_and_moves_nothing():
    x = st.from_numpy(A, shards=3)
    mask = x > 0  # same layout as x
    before = moved()
    r = x[mask]
    assert_matches_numpy(r, A[A > 0])
    assert moved() == before
    assert r.layout.num_shards == 3  # each shard selected its own elements
    assert r.layout.chunk_sizes(0) == tuple(
        int((A[s] > 0).sum()) for s in (slice(0, 3), slice(3, 5), slice(5, 7))
    )
    rows = x[st.from_numpy(M[:, 0], shards=3)]
    assert_matches_numpy(rows, A[M[:, 0]])
    assert rows.layout.num_shards == 3 and moved() == before
    assert_matches_numpy(rows.sum(0), A[M[:, 0]].sum(0))  # the result is a usable tensor
    # an all-false mask gives an empty tensor with the trailing shape
    assert_matches_numpy(x[x > 1e9], np.zeros(0))
    assert_matches_numpy(x[st.zeros(7, dtype=st.bool, shards=3)], np.zeros((0, 6)))


@pytest.mark.ray_mirror(False)  # (the kernel itself, in this process)
@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.bool_, "bfloat16"])
def test_mask_select_kernel_in_steps_and_into_a_pooled_block(monkeypatch, dtype):
    from sharded.dtypes import BF16_NP
    from sharded.ops.index.prims import masking

    dt = BF16_NP if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 5, 2)).astype(dt)
    m = rng.random((37, 5)) > 0.4
    monkeypatch.setattr(masking, "SELECT_BYTES", 3 * 2 * dt.itemsize)  # 3 rows a step
    got = masking.mask_select(np, a, m)
    assert got.dtype == dt and np.array_equal(got, a[m])
    lent = []

    def alloc(shape, dtype):
        lent.append(np.empty(shape, dtype))
        return lent[-1]

    got = masking.mask_select(np, a, m, alloc=alloc)
    assert got is lent[0] and np.array_equal(got, a[m])
    assert masking.mask_select(np, a, np.zeros((37, 5), bool)).shape == (0, 2)
    assert np.array_equal(masking.mask_select(np, a[:0], m[:0]), a[:0][m[:0]])


@pytest.mark.parametrize(
    "iplace",
    [dict(), dict(shards=2), dict(layout=st.Layout.replicated())],
    ids=["default", "2", "repl"],
)
@pytest.mark.parametrize("place", PLACEMENTS, ids=PLACEMENT_IDS)
def test_integer_tensor_indices_gather_across_shards(place, iplace):
    idx = np.array([[5, 0, 3], [-1, 2, 2]])
    i = st.from_numpy(idx, **iplace)
    j = st.from_numpy(np.array([5, -6, 1]), **iplace)
    x = st.from_numpy(A.copy(), **place)
    assert_matches_numpy(x[i], A[idx])
    assert_matches_numpy(x[:, i], A[:, idx])
    assert_matches_numpy(x[i, j], A[idx, np.array([5, -6, 1])])
    assert_matches_numpy(x[st.tensor(4)], A[4])
    assert_matches_numpy(x[i[0], 1:4], A[idx[0], 1:4])
    a = A.copy()
    x[i, j] = st.tensor([100.0, 200.0, 300.0])
    a[idx, np.array([5, -6, 1])] = [100.0, 200.0, 300.0]
    assert_matches_numpy(x, a)
    x[j] = 0.5
    a[np.array([5, -6, 1])] = 0.5
    assert_matches_numpy(x, a)


def test_gather_moves_only_points_from_other_workers():
    x = st.from_numpy(A, shards=3)  # rows 0-2 on worker 0, 3-4 on 1, 5-6 on 2
    before = moved()
    r = x[[0, 1, 2]]  # result rows split 2 workers-ways: row 2 travels, rows 0-1 stay
    assert_matches_numpy(r, A[[0, 1, 2]])
    assert 0 < moved() - before <= 3 * 6 * 8
    before = moved()
    r = x[[6, 5, 0, 3]]
    assert_matches_numpy(r, A[[6, 5, 0, 3]])
    assert moved() > before


# ---------------------------------------------------------------- errors
OOR = [  # key, index, dim, size named in the message
    (np.s_[7], 7, 0, 7),
    (np.s_[-8], -8, 0, 7),
    (np.s_[0, 6], 6, 1, 6),
    (np.s_[:, -7], -7, 1, 6),
    (np.s_[[0, 7]], 7, 0, 7),
    (np.s_[:, [0, -7]], -7, 1, 6),
    (np.s_[[1], [2, 9]], 9, 1, 6),
    (np.s_[..., 6], 6, 1, 6),
    (np.s_[None, 3, 10], 10, 1, 6),
]


@pytest.mark.parametrize(
    "place",
    [dict(shards=3), dict(shards=2, dim=1), dict(layout=st.Layout.replicated())],
    ids=["rows", "cols", "repl"],
)
@pytest.mark.parametrize("key, index, dim, size", OOR, ids=[str(i) for i in range(len(OOR))])
def test_out_of_range_raises_naming_index_dim_size_and_changes_nothing(
    key, index, dim, size, place
):
    x = st.from_numpy(A.copy(), **place)
    with pytest.raises(IndexError):
        A[key]
    with pytest.raises(st.IndexOutOfRange) as e:
        x[key]
    msg = str(e.value)
    assert f"size {size}" in msg
    assert f"index {index}" in msg and (f"dimension {dim}" in msg or f"axis {dim}" in msg)
    for v in (1.0, np.ones(A[np.s_[0]].shape[-1:]), st.tensor(5.0)):
        with pytest.raises(st.IndexOutOfRange):
            x[key] = v
    with pytest.raises(st.IndexOutOfRange):
        x[[0, 1], [1, 99]] = st.tensor([1.0, 2.0])  # the valid point is not written either
    assert_matches_numpy(x, A)
    assert isinstance(e.value, st.ShardedError)


def test_other_index_errors():
    x = st.from_numpy(A.copy(), shards=3)
    with pytest.raises(st.IndexOutOfRange, match="too many indices.*dimension 2"):
        x[1, 2, 3]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="boolean index did not match.*size of axis is 7"):
        x[np.ones(5, bool)]
    with pytest.raises(IndexError):
        x[st.ones(5, dtype=st.bool)]
    with pytest.raises(IndexError):
        x[st.tensor([1.0, 2.0])]  # float indices
    with pytest.raises(IndexError):
        x[[0, 1], [0, 1, 2]]  # index arrays that do not broadcast
    with pytest.raises(ValueError, match="step"):
        x[::0]
    with pytest.raises(ValueError):
        x[[0, 1]] = np.ones(5)  # value does not broadcast to (2, 6)
    with pytest.raises(ValueError):
        x[0] = np.ones(5)
    with pytest.raises(ValueError):
        x[x > 0] = st.ones(3)
    assert_matches_numpy(x, A)


def test_overlapping_setitem_reads_before_writing():
    # NumPy's answer for assignments whose value overlaps the target (torch asks for a clone)
    for place in (
        dict(shards=3),
        dict(shards=1),
        dict(shards=2, dim=1),
        dict(layout=st.Layout.replicated()),
    ):
        x, a = st.from_numpy(A.copy(), **place), A.copy()
        x[1:] = x[:-1]
        a[1:] = a[:-1]
        assert_matches_numpy(x, a)
        x[:, ::-1] = x
        a[:, ::-1] = a.copy()
        assert_matches_numpy(x, a)
        x[[0, 2, 4]] = x[[1, 3, 5]]
        a[[0, 2, 4]] = a[[1, 3, 5]]
        assert_matches_numpy(x, a)
        sq, b = x[:6], a[:6]
        sq.copy_(sq.t())
        b[...] = b.T.copy()
        assert_matches_numpy(x, a)


VIEW_KINDS = {
    "t": (lambda x: x.t(), lambda a: a.T),
    "steps": (lambda x: x[1::2, ::-2], lambda a: a[1::2, ::-2]),
    "flipped": (lambda x: x[::-1], lambda a: a[::-1]),
    "view_select": (lambda x: x.view(7, 2, 3)[:, 1], lambda a: a.reshape(7, 2, 3)[:, 1]),
    "none": (lambda x: x[None, :, 1:4], lambda a: a[None, :, 1:4]),
}


@pytest.mark.parametrize(
    "place",
    [
        dict(shards=1),
        dict(shards=3),
        dict(shards=3, dim=1),
        dict(layout=st.Layout(chunks=(4, 0, 3))),
        dict(layout=st.Layout.replicated()),
    ],
    ids=["1", "rows", "cols", "uneven", "repl"],
)
@pytest.mark.parametrize("view", list(VIEW_KINDS))
def test_advanced_indexing_of_views_reads_and_writes_the_base(view, place):
    f, g = VIEW_KINDS[view]
    x, a = st.from_numpy(A.copy(), **place), A.copy()
    if view == "view_select" and place.get("dim") == 1:
        x = st.from_numpy(A.copy(), shards=2, dim=1)  # chunks of 3: whole rows of the view
    v, va = f(x), g(a)
    m = va % 3 == 0
    rows = np.arange(va.shape[0]) % 2 == 0
    for mp in (dict(), dict(shards=2), dict(layout=st.Layout.replicated())):
        assert_matches_numpy(v[st.from_numpy(m, **mp)], va[m])
        assert_matches_numpy(v[st.from_numpy(rows, **mp)], va[rows])
    assert_matches_numpy(v[[0, -1, 0]], va[[0, -1, 0]])
    v[st.from_numpy(m, shards=2)] = -1.0
    va[m] = -1.0
    v[st.from_numpy(rows)] = 5.5
    va[rows] = 5.5
    v[[-1, 0]] = st.from_numpy(np.stack([va[0] * 0 + 7, va[0] * 0 + 8]))
    va[[-1, 0]] = np.stack([va[0] * 0 + 7, va[0] * 0 + 8])
    assert_matches_numpy(x, a)  # every write reached the base


def test_duplicate_advanced_indices_last_write_wins_like_numpy():
    x, a = st.from_numpy(A.copy(), shards=3), A.copy()
    x[[0, 4, 0], [1, 2, 1]] = st.tensor([1.0, 2.0, 3.0])
    a[[0, 4, 0], [1, 2, 1]] = [1.0, 2.0, 3.0]
    assert_matches_numpy(x, a)


# ---------------------------------------------------------------- hypothesis
@hs.composite
def index_keys(draw, shape, allow_tensors=True):
    """A NumPy key mixing ints, slices (any step), None, Ellipsis, int lists and bool masks,
    plus the same key for sharded (some lists/masks as tensors)."""
    nd = len(shape)
    n_used = draw(hs.integers(0, nd))
    pos = draw(hs.one_of(hs.none(), hs.integers(0, n_used)))  # where an Ellipsis goes
    if pos is None:
        dims = list(shape[:n_used])
    else:  # the ellipsis stands for the dims between the leading and trailing ones indexed
        dims = list(shape[:pos]) + list(shape[nd - (n_used - pos) :] if n_used > pos else [])
    length = draw(hs.integers(1, 3))  # int lists of one key share a length (they broadcast)
    parts_np, parts_st = [], []
    for i, n in enumerate(dims):
        if pos is not None and i == pos:
            parts_np.append(Ellipsis)
            parts_st.append(Ellipsis)
        kinds = ["slice", "slice", "none_slice"] + (
            ["int", "int", "list", "list", "mask"] if n else []
        )
        k = draw(hs.sampled_from(kinds))
        if k in ("slice", "none_slice"):
            b = hs.one_of(hs.none(), hs.none(), hs.integers(-n - 2, n + 2))
            step = draw(hs.one_of(hs.none(), hs.sampled_from([1, 2, 3, -1, -2, -3])))
            v = slice(draw(b), draw(b), step)
            if k == "none_slice":
                parts_np.append(None)
                parts_st.append(None)
            parts_np.append(v)
            parts_st.append(v)
        elif k == "int":
            v = draw(hs.integers(-n, n - 1))
            parts_np.append(v)
            parts_st.append(v)
        elif k == "list":
            v = draw(hs.lists(hs.integers(-n, n - 1), min_size=length, max_size=length))
            parts_np.append(v)
            parts_st.append(
                st.tensor(v, shards=draw(hs.integers(1, 2)))
                if allow_tensors and draw(hs.booleans())
                else v
            )
        else:
            v = draw(hs.lists(hs.booleans(), min_size=n, max_size=n))
            parts_np.append(np.array(v))
            parts_st.append(st.tensor(v) if allow_tensors and draw(hs.booleans()) else v)
    if pos is not None and pos == len(dims):
        parts_np.append(Ellipsis)
        parts_st.append(Ellipsis)
    if draw(hs.booleans()):
        parts_np.append(None)
        parts_st.append(None)
    if len(parts_np) == 1 and draw(hs.booleans()):
        return parts_np[0], parts_st[0]
    return tuple(parts_np), tuple(parts_st)


@hs.composite
def indexed(draw, allow_tensors=True):
    a, place = draw(sharded_arrays(max_dims=3, min_dims=0, max_side=4))
    kn, ks = draw(index_keys(a.shape, allow_tensors))
    if a.ndim and draw(hs.integers(0, 9)) == 0:  # a bool tensor over the leading dims
        k = draw(hs.integers(1, a.ndim))
        m = draw(
            hs.lists(
                hs.booleans(),
                min_size=int(np.prod(a.shape[:k])),
                max_size=int(np.prod(a.shape[:k])),
            )
        )
        m = np.array(m, bool).reshape(a.shape[:k])
        kn, ks = (
            m,
            st.from_numpy(
                m,
                **draw(
                    hs.sampled_from(
                        [dict(), dict(layout=st.Layout.replicated())]
                        + ([dict(shards=2)] if k else [])
                    )
                ),
            ),
        )
    return a, place, kn, ks


def _numpy_result(a, key):
    try:
        return torch_ref(a, key), None
    except IndexError as e:
        return None, e


HS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def test_hypothesis_getitem_matches_numpy():
    @settings(max_examples=examples(200), deadline=None, suppress_health_check=HS)
    @given(indexed())
    def run(case):
        a, place, kn, ks = case
        x = st.from_numpy(a, **place)
        want, err = _numpy_result(a, kn)
        if err is not None:  # NumPy refuses (e.g. lists that do not broadcast): so do we
            with pytest.raises(IndexError):
                x[ks].numpy()
            return
        r = x[ks]
        assert_matches_numpy(r, want)
        if r._base is x and want.size > 1 and np.shares_memory(want, a):
            # a basic key gives a view with NumPy's strides (in elements) on dims of size > 1
            # and offset of its first element
            ns = [s // a.itemsize for s in want.strides]
            assert all(s == n for s, n, k in zip(r.stride(), ns, want.shape) if k > 1)
            first = want.__array_interface__["data"][0] - a.__array_interface__["data"][0]
            assert r.storage_offset() == first // a.itemsize
            x.add_(1)  # and it sees x change
            assert_matches_numpy(r, want + 1)

    run()


def test_hypothesis_setitem_matches_numpy():
    @settings(max_examples=examples(200), deadline=None, suppress_health_check=HS)
    @given(indexed(), hs.sampled_from(["scalar", "numpy", "tensor", "row", "row_tensor"]))
    def run(case, vkind):
        a, place, kn, ks = case
        want, err = _numpy_result(a, kn)
        x = st.from_numpy(a, **place)
        if err is not None:
            with pytest.raises(IndexError):
                x[ks] = 1.0
            assert_matches_numpy(x, a)
            return
        shape = want.shape
        full = -np.arange(1, want.size + 1, dtype=np.float64).reshape(shape) - 0.5
        row = full[(0,) * (len(shape) - 1)] if full.size else full
        v, nv = {
            "scalar": (3.5, 3.5),
            "numpy": (full, full),
            "tensor": (st.from_numpy(full, shards=2), full),
            "row": (row, row),
            "row_tensor": (st.from_numpy(row), row),
        }[vkind]
        b = a.copy()
        torch_set(b, kn, nv)
        x[ks] = v
        assert_matches_numpy(x, b)

    run()


# ------------------------------------------------------------------ kernels and rules
def test_indexing_kernels_with_numpy():
    from sharded.runtime.worker.core import KERNELS as K

    out = K["gather"](
        np,
        np.array([5.0, 6.0]),
        np.array([7.0]),
        shape=(3,),
        dtype="<f8",
        positions=[np.array([0, 2]), np.array([1])],
    )
    assert out.tolist() == [5.0, 7.0, 6.0]
    a = np.zeros(4)
    assert K["scatter_add"](np, a, np.array([1.0, 2.0]), coords=[(np.array([3, 3]),)]) is a
    assert a.tolist() == [0, 0, 0, 3.0]
    assert K["put_points"](np, a, np.array([9.0]), coords=[(np.array([0]),)]).tolist() == [
        9.0,
        0,
        0,
        3.0,
    ]
    m = np.array([True, False, True, False])
    assert K["mask_select"](np, a, m).tolist() == [9.0, 0.0]
    assert int(K["count"](np, m)) == 2
    assert K["put_mask"](np, a, m, -1.0).tolist() == [-1.0, 0, -1.0, 3.0]


def test_key_rules_are_pure():
    from sharded.ops.index.prims.indexing import basic_entries, coords_of, index_strides

    e = basic_entries((4, 5), (Ellipsis, slice(None, None, -2)))
    assert e == [("slice", 0, 4, 1), ("slice", 4, -1, -2)]
    assert index_strides((4, 5), (5, 1), 0, e) == ([5, -2], 4)
    assert basic_entries((4,), np.array([1])) is None
    with pytest.raises(st.IndexOutOfRange, match="index 4 is out of bounds for dimension 0"):
        basic_entries((4,), 4)
    assert [c.tolist() for c in coords_of((2, 3), (slice(None), [2]))] == [[[0], [1]], [[2], [2]]]


@pytest.mark.parametrize("place", [dict(shards=2), dict(shards=3, dim=1)], ids=["rows", "cols"])
def test_gradients_through_advanced_and_mask_assignment(place):
    from sharded.autograd import gradcheck

    def points(t):
        y = t * 1
        y[[0, 2], [1, 1]] = 3.0
        return y

    def mask(t):
        y = t * 1
        y[t > 0] = 0.5
        return y

    a = np.arange(12.0).reshape(4, 3) - 5.5
    x = st.from_numpy(a, requires_grad=True, **place)
    assert gradcheck(points, (x,)) and gradcheck(mask, (x,))
    v = st.tensor(2.0, dtype=st.float64, requires_grad=True)
    y = x * 1
    y[x > 0] = v
    (y * y).sum().backward()
    assert v.grad.item() == pytest.approx(2 * 2.0 * (a > 0).sum())
    g = st.autograd.grad((x[[0, 0, 3], [1, 1, 2]] ** 2).sum(), x, create_graph=True)[0]
    assert_matches_numpy(
        st.autograd.grad(g.sum(), x)[0],
        np.array([[0, 4, 0], [0] * 3, [0] * 3, [0, 0, 2]], dtype=float),
    )


@pytest.mark.parametrize("shards", [1, 2])
def test_advanced_setitem_gives_the_value_tensor_a_gradient_like_torch(shards):
    # torch: y = x.clone(); y[key] = v; v.grad sums the grads of the points v wrote
    w = st.arange(12.0).reshape(4, 3)
    m = st.tensor([True, False, True, False])
    for key, v0, want in [
        (m, [1.0, 2.0, 3.0], [6.0, 8.0, 10.0]),
        (m.reshape(4, 1).expand(4, 3), [1.0, 2, 3, 4, 5, 6], [0.0, 1, 2, 6, 7, 8]),
        ((st.tensor([0, 2]), st.tensor([1, -1])), [1.0, 2.0], [1.0, 8.0]),
    ]:
        x = st.zeros(4, 3, shards=shards).requires_grad_()
        v = st.tensor(v0).requires_grad_()
        y = x.clone()
        y[key] = v
        (y * w).sum().backward()
        assert v.grad.tolist() == want
        assert (x.grad.numpy() == np.where(y.detach().numpy() != 0, 0.0, w.numpy())).all()
