"""``x[key]`` and ``x[key] = value`` against torch's own answers (generated with torch on CPU;
the tests never import it): mixed int/list/slice/bool keys on every layout, 0-d tensors with
bool keys and masks, 0-d integer tensor indices (views), values with leading size-1 dims, and
Python scalars that torch wraps or refuses for a dtype. :func:`torch_ref` reads a key with
torch's rule in NumPy; ``test_indexing``'s generated keys compare with it."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

# ---------------------------------------------------------------- torch's key rule in NumPy


def _torch_split(key):
    """``(first, then)``: torch applies ints as selections and ``None``/bools as new dims
    before the advanced indices (a bool then indexes its new dim by ``[0]`` or ``[]``), so
    that ``a[key]`` is ``a[first][then]`` with NumPy's rules for the rest."""
    key = key if isinstance(key, tuple) else (key,)
    first, then, advanced = [], [], False
    for k in key:
        if isinstance(k, np.ndarray) and k.ndim == 0:  # as a 0-d tensor: an int or a bool
            k = bool(k) if k.dtype in (bool, np.uint8) else int(k)
        if isinstance(k, np.ndarray) and k.dtype == np.uint8:
            k = k.astype(bool)  # torch reads a uint8 index as a mask
        if isinstance(k, (bool, np.bool_)):
            first.append(None)
            then.append(np.arange(int(k)))
            advanced = True
        elif isinstance(k, (int, np.integer)):
            first.append(k)
        elif k is None or isinstance(k, slice):
            first.append(k)
            then.append(slice(None))
        elif k is Ellipsis:
            first.append(k)
            then.append(k)
        else:
            arr = np.asarray(k)
            first += [slice(None)] * (arr.ndim if arr.dtype == bool else 1)
            then.append(k)
            advanced = True
    return (tuple(first), tuple(then)) if advanced else (key, None)


def torch_ref(a, key):
    """``a[key]`` for a NumPy array as torch reads ``key`` (a view where the key is basic)."""
    first, then = _torch_split(key)
    return a[first] if then is None else a[first][then]


def torch_set(a, key, value):
    """``a[key] = value`` in place, as torch reads ``key``."""
    first, then = _torch_split(key)
    if then is None:
        a[first] = value
    else:
        a[first][then] = value  # ``a[first]`` is a view: the write reaches ``a``


# ---------------------------------------------------------------- issue 12: torch's answers
# Generated with torch 2.x (CPU): for each key on ``arange(24).reshape(2, 3, 4)``, the
# result's shape, its flat values, whether it is a view, and the flat positions that
# ``x[key] = -1`` writes (None: torch refuses, a deprecated uint8-mask assignment, not checked)
TORCH_ANSWERS = [
    (lambda T: np.s_[0, :, [0]], (3, 1), [0, 4, 8], False, [0, 4, 8]),
    (lambda T: np.s_[0, :, [0, 1]], (3, 2), [0, 1, 4, 5, 8, 9], False, [0, 1, 4, 5, 8, 9]),
    (lambda T: np.s_[:, 0, [0, 1]], (2, 2), [0, 1, 12, 13], False, [0, 1, 12, 13]),
    (lambda T: np.s_[[0], :, 0], (1, 3), [0, 4, 8], False, [0, 4, 8]),
    (lambda T: np.s_[[1, 0], :, -1], (2, 3), [15, 19, 23, 3, 7, 11], False, [3, 7, 11, 15, 19, 23]),
    (lambda T: np.s_[0, [0, 1], [1, 2]], (2,), [1, 6], False, [1, 6]),
    (lambda T: np.s_[[0, 1], 0, [1, 2]], (2,), [1, 14], False, [1, 14]),
    (
        lambda T: np.s_[[0, 1], :, [1, 2]],
        (2, 3),
        [1, 5, 9, 14, 18, 22],
        False,
        [1, 5, 9, 14, 18, 22],
    ),
    (lambda T: np.s_[0, None, :, [1]], (1, 3, 1), [1, 5, 9], False, [1, 5, 9]),
    (lambda T: np.s_[None, 0, :, [1]], (1, 3, 1), [1, 5, 9], False, [1, 5, 9]),
    (lambda T: np.s_[:, [1], 0], (2, 1), [4, 16], False, [4, 16]),
    (
        lambda T: np.s_[1, ..., [1, 2]],
        (3, 2),
        [13, 14, 17, 18, 21, 22],
        False,
        [13, 14, 17, 18, 21, 22],
    ),
    (lambda T: np.s_[..., 0, [1, 2]], (2, 2), [1, 2, 13, 14], False, [1, 2, 13, 14]),
    (lambda T: np.s_[[1, 0], ..., 0], (2, 3), [12, 16, 20, 0, 4, 8], False, [0, 4, 8, 12, 16, 20]),
    (lambda T: np.s_[-1, :, [-1]], (3, 1), [15, 19, 23], False, [15, 19, 23]),
    (
        lambda T: np.s_[[0, 1], None, [1, 2]],
        (2, 1, 4),
        [4, 5, 6, 7, 20, 21, 22, 23],
        False,
        [4, 5, 6, 7, 20, 21, 22, 23],
    ),
    (lambda T: np.s_[[0, 1], 1, None, [1, 2]], (2, 1), [5, 18], False, [5, 18]),
    (lambda T: np.s_[None, [0, 1], 1, [1, 2]], (1, 2), [5, 18], False, [5, 18]),
    (lambda T: np.s_[:, [[0], [1]], 1], (2, 2, 1), [1, 5, 13, 17], False, [1, 5, 13, 17]),
    (lambda T: np.s_[1, [[0], [1]], [1, 2]], (2, 2), [13, 14, 17, 18], False, [13, 14, 17, 18]),
    (
        lambda T: np.s_[[[1]], :, [[0], [1]]],
        (2, 1, 3),
        [12, 16, 20, 13, 17, 21],
        False,
        [12, 13, 16, 17, 20, 21],
    ),
    (lambda T: np.s_[True, 0, :, [1]], (1, 3), [1, 5, 9], False, [1, 5, 9]),
    (lambda T: np.s_[0, True, :, [1]], (1, 3), [1, 5, 9], False, [1, 5, 9]),
    (lambda T: np.s_[0, :, True, [1]], (3, 1), [1, 5, 9], False, [1, 5, 9]),
    (
        lambda T: np.s_[[0], True],
        (1, 3, 4),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        False,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    ),
    (
        lambda T: np.s_[[0], :, True],
        (1, 3, 4),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        False,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    ),
    (lambda T: np.s_[0, :, False], (3, 0, 4), [], False, []),
    (
        lambda T: np.s_[True],
        (1, 2, 3, 4),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
        False,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (lambda T: np.s_[False], (0, 2, 3, 4), [], False, []),
    (
        lambda T: np.s_[..., True],
        (2, 3, 4, 1),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
        False,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (
        lambda T: np.s_[None, True],
        (1, 1, 2, 3, 4),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
        False,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (
        lambda T: np.s_[T([[True, False, True], [False, True, True]]), 0],
        (4,),
        [0, 8, 16, 20],
        False,
        [0, 8, 16, 20],
    ),
    (
        lambda T: np.s_[0, T([True, False, True])],
        (2, 4),
        [0, 1, 2, 3, 8, 9, 10, 11],
        False,
        [0, 1, 2, 3, 8, 9, 10, 11],
    ),
    (lambda T: np.s_[T([True, False]), :, 0], (1, 3), [0, 4, 8], False, [0, 4, 8]),
    (
        lambda T: np.s_[0, :, T([True, False, True, False])],
        (3, 2),
        [0, 2, 4, 6, 8, 10],
        False,
        [0, 2, 4, 6, 8, 10],
    ),
    (
        lambda T: np.s_[[0, 1], :, T([True, False, True, False])],
        (2, 3),
        [0, 4, 8, 14, 18, 22],
        False,
        [0, 4, 8, 14, 18, 22],
    ),
    (lambda T: np.s_[0, :, T([0])], (3, 1), [0, 4, 8], False, [0, 4, 8]),
    (lambda T: np.s_[0, :, T(0)], (3,), [0, 4, 8], True, [0, 4, 8]),
    (lambda T: np.s_[T(1), :, [0]], (3, 1), [12, 16, 20], False, [12, 16, 20]),
    (
        lambda T: np.s_[T(1)],
        (3, 4),
        [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
        True,
        [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (lambda T: np.s_[T(1), T(2)], (4,), [20, 21, 22, 23], True, [20, 21, 22, 23]),
    (
        lambda T: np.s_[T(-1), 1:, None],
        (2, 1, 4),
        [16, 17, 18, 19, 20, 21, 22, 23],
        True,
        [16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (
        lambda T: np.s_[T(1, dtype=st.uint8)],
        (1, 2, 3, 4),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
        False,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (lambda T: np.s_[T(0, dtype=st.uint8)], (0, 2, 3, 4), [], False, []),
    (
        lambda T: np.s_[T(True)],
        (1, 2, 3, 4),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
        False,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23],
    ),
    (
        lambda T: np.s_[[0, 1], T(0)],
        (2, 4),
        [0, 1, 2, 3, 12, 13, 14, 15],
        False,
        [0, 1, 2, 3, 12, 13, 14, 15],
    ),
    (lambda T: np.s_[[0, 1], :, T(0)], (2, 3), [0, 4, 8, 12, 16, 20], False, [0, 4, 8, 12, 16, 20]),
    (lambda T: np.s_[T([1, 0], dtype=st.uint8), 0], (1, 4), [0, 1, 2, 3], False, None),
]
TORCH_ANSWERS_0D = [  # on tensor(3.): shape, flat values, view?, value after x[key] = -1
    (lambda T: np.s_[True], (1,), [3.0], False, -1.0),
    (lambda T: np.s_[False], (0,), [], False, 3.0),
    (lambda T: np.s_[None, True], (1, 1), [3.0], False, -1.0),
    (lambda T: np.s_[True, None], (1, 1), [3.0], False, -1.0),
    (lambda T: np.s_[True, True], (1,), [3.0], False, -1.0),
    (lambda T: np.s_[True, False], (0,), [], False, 3.0),
    (lambda T: np.s_[..., True], (1,), [3.0], False, -1.0),
    (lambda T: np.s_[T(True)], (1,), [3.0], False, -1.0),
    (lambda T: np.s_[T(False)], (0,), [], False, 3.0),
    (lambda T: np.s_[T(1, dtype=st.uint8)], (1,), [3.0], False, -1.0),
    (lambda T: np.s_[...], (), [3.0], True, -1.0),
    (lambda T: np.s_[None], (1,), [3.0], True, -1.0),
]

ANSWER_PLACES = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=3, dim=1),
    dict(shards=2, dim=2),
    dict(layout=st.Layout.block((2, 1, 2))),
    dict(layout=st.Layout.replicated()),
]
ANSWER_IDS = ["1", "rows", "mid", "last", "block", "repl"]


@pytest.mark.parametrize("place", ANSWER_PLACES, ids=ANSWER_IDS)
def test_mixed_keys_match_torchs_answers(place):
    base = np.arange(24).reshape(2, 3, 4)
    for i, (key, shape, flat, view, written) in enumerate(TORCH_ANSWERS):
        x = st.from_numpy(base, **place)
        r = x[key(st.tensor)]
        assert tuple(r.shape) == shape, (i, tuple(r.shape), shape)
        assert r.dtype == st.int64 and r.numpy().reshape(-1).tolist() == flat, i
        assert (r._base is x) == view, i
        ref = torch_ref(base, key(lambda v, dtype=None: np.array(v, getattr(dtype, "np", None))))
        assert_matches_numpy(r, ref, dtype=st.int64)  # the reference the other tests use
        if written is None:
            continue
        x[key(st.tensor)] = -1
        assert np.flatnonzero(x.numpy() == -1).tolist() == written, i


@pytest.mark.parametrize("place", [dict(), dict(layout=st.Layout.replicated())], ids=["1", "repl"])
def test_zero_d_tensor_keys_and_masks_match_torch(place):
    for i, (key, shape, flat, view, after) in enumerate(TORCH_ANSWERS_0D):
        x = st.tensor(3.0, **place)
        r = x[key(st.tensor)]
        assert tuple(r.shape) == shape and r.numpy().reshape(-1).tolist() == flat, i
        assert r.dtype == st.float32 and (r._base is x) == view, i
        x[key(st.tensor)] = -1
        assert x.shape == () and x.item() == after, i
    x = st.tensor(3.0, **place)  # issue 12: a 0-d mask of a 0-d tensor
    assert_matches_numpy(x[x > 0], np.array([3.0]))
    assert_matches_numpy(x[x < 0], np.zeros(0))
    x[x < 0] = 2
    assert x.item() == 3.0
    x[x > 0] = 2
    assert x.item() == 2.0 and x.shape == ()
    with pytest.raises(st.IndexOutOfRange, match="too many indices"):
        x[0]


def test_zero_d_integer_tensor_index_is_a_view_like_torch():
    x = st.arange(4.0, shards=2)
    y = x[st.tensor(1)]
    assert y._base is x and y.shape == ()
    y.add_(10)  # torch writes through
    assert x.tolist() == [0.0, 11.0, 2.0, 3.0]
    x = st.arange(4.0, shards=2, requires_grad=True)
    x[st.tensor(1)].backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0]
    g = st.autograd.grad((x[st.tensor(-1), None] * x[st.tensor(2)]).sum(), x)[0]
    assert g.tolist() == [0.0, 0.0, 3.0, 2.0]


@pytest.mark.parametrize("place", [dict(shards=2), dict(layout=st.Layout.replicated())])
def test_setitem_drops_the_values_leading_size_one_dims_like_torch(place):
    for key, value, want in (
        (np.s_[1:], st.ones(1, 2), [0.0, 1.0, 1.0]),
        (np.s_[1:], st.ones(1, 1, 2), [0.0, 1.0, 1.0]),
        (np.s_[[1, 2]], st.ones(1, 2), [0.0, 1.0, 1.0]),
        (np.s_[:], np.ones((1, 3)), [1.0, 1.0, 1.0]),
        (np.s_[2], st.ones(1, 1), [0.0, 0.0, 1.0]),
    ):
        x = st.zeros(3, **place)
        x[key] = value
        assert x.tolist() == want
    x = st.zeros(3, **place)
    x[x == 0] = st.ones(1, 3)
    assert x.tolist() == [1.0, 1.0, 1.0]
    x = st.zeros(2, 3, **place)
    x[0] = st.ones(1, 1, 3)
    assert x.tolist() == [[1.0] * 3, [0.0] * 3]
    with pytest.raises(ValueError):  # torch: RuntimeError, the value does not fit (2,)
        x[0, 1:] = st.ones(2, 2)
    with pytest.raises(ValueError):  # copy_ itself keeps torch's strict broadcast
        x[0, 1:].copy_(st.ones(1, 2))
    assert x.tolist() == [[1.0] * 3, [0.0] * 3]


# torch's answers for x[k] = value on a tensor of dtype (None: torch raises)
WRAP = {
    "uint8": [(-1, 255), (-255, 1), (-128, 128), (-129, 127), (255, 255), (2.7, 2)]
    + [(v, None) for v in (-256, 256, 2**31, -2.7, 300.5, float("inf"), float("nan"))],
    "int8": [(-1, -1), (-128, -128), (127, 127), (-2.7, -2)]
    + [(v, None) for v in (128, -129, 255, 300.5, float("nan"))],
    "int16": [(300.5, 300), (-256, -256)] + [(v, None) for v in (2**31, 1e10)],
    "int32": [(-1, -1)] + [(v, None) for v in (2**31, -(2**31) - 1, 1e10, float("inf"))],
    "bool": [(-1, True), (2**63 - 1, True), (-2.7, True), (float("nan"), True)],
}


@pytest.mark.parametrize("dtype", list(WRAP))
def test_setitem_scalars_wrap_or_raise_like_torch(dtype):
    keys = {
        "int": lambda x: 0,
        "list": lambda x: [0],
        "mask": lambda x: st.tensor([True, False]),
        "slice": lambda x: slice(0, 1),
    }
    for value, want in WRAP[dtype]:
        for kind, key in keys.items():
            x = st.tensor([0, 7], dtype=dtype, shards=2)
            if want is None:
                with pytest.raises(st.ArgumentError, match="without overflow"):
                    x[key(x)] = value
                assert x.tolist() == [0, 7]  # refused before anything was written
            else:
                x[key(x)] = value
                assert x.tolist() == [want, 7 if dtype != "bool" else True], (value, kind)
    x = st.tensor([0, 7], dtype=st.uint8)
    with pytest.raises(st.ArgumentError):  # a list value is checked on the driver too
        x[[0, 1]] = [-1, 300]
    assert x.tolist() == [0, 7]
