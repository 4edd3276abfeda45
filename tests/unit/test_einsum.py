"""st.einsum and st.tensordot against numpy (``sharded/ops/einsum.py``)."""

import math

import numpy as np
import pytest

import sharded as st
from sharded.autograd import gradcheck
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
t = float64_tensor


A76 = rng.standard_normal((7, 6))

EINSUM = [
    "ij,jk->ik",
    "bij,bjk->bik",
    "bij,bjk->ik",
    "ij->ji",
    "ij->",
    "i,j->ij",
    "ij,ij->i",
    "...ij,jk->...ik",
    "bij,jk",
    "abc,cd,ae->bde",
    "ij,ij->",
    "ijk->kj",
]


@pytest.mark.parametrize("eq", EINSUM)
def test_einsum_against_numpy(eq):
    ins = eq.split("->")[0].split(",")
    sizes = dict(zip("abcdeijk", (2, 3, 4, 5, 3, 4, 3, 2)))
    arrs = []
    for s in ins:
        if s.startswith("..."):
            s = "b" + s[3:]
        arrs.append(rng.standard_normal([sizes[c] for c in s]))
    ts = [t(a, shards=2) for a in arrs]
    assert_matches_numpy(L.einsum(eq, *ts), np.einsum(eq, *arrs), **TOL)


def test_tensordot_and_einsum_errors():
    a3 = rng.standard_normal((3, 4, 5))
    b3 = rng.standard_normal((4, 5, 2))
    assert_matches_numpy(
        L.tensordot(t(a3, shards=3), t(b3, shards=2, dim=1)), np.tensordot(a3, b3), **TOL
    )
    assert_matches_numpy(
        L.tensordot(t(a3), t(b3), ([1], [0])), np.tensordot(a3, b3, ([1], [0])), **TOL
    )
    with pytest.raises(st.ShapeError, match="'i' is repeated for operand 0 .* 3 != 2"):
        L.einsum("ii->i", t(np.ones((2, 3))))
    with pytest.raises(st.ShapeError, match="name 2 dims"):
        L.einsum("ij,jk", t(a3), t(b3))
    with pytest.raises(st.ShapeError, match="subscript 'j' has size"):
        L.einsum("ij,jk", t(A76), t(A76))


# ------------------------------------------------------------------------------ issue 12
# Expected values, shapes and dtypes are torch's (CPU); operands are aranges of the shapes.
REPEATED = [
    ("ii->", [(3, 3)], 12.0),
    ("ii->i", [(3, 3)], [0.0, 4.0, 8.0]),
    ("ii", [(3, 3)], 12.0),
    ("iij->j", [(2, 2, 3)], [9.0, 11.0, 13.0]),
    ("iij->ji", [(2, 2, 3)], [[0.0, 9.0], [1.0, 10.0], [2.0, 11.0]]),
    ("iji->j", [(2, 3, 2)], [7.0, 11.0, 15.0]),
    ("iii->", [(2, 2, 2)], 7.0),
    ("iii->i", [(2, 2, 2)], [0.0, 7.0]),
    ("...ii->...i", [(2, 3, 3)], [[0.0, 4.0, 8.0], [9.0, 13.0, 17.0]]),
    ("ii,jj->ij", [(2, 2), (2, 2)], [[0.0, 0.0], [0.0, 9.0]]),
    ("ij,ii->j", [(2, 2), (2, 2)], [6.0, 9.0]),
    ("ii,i->i", [(3, 3), (1,)], [0.0, 0.0, 0.0]),
    ("bii,bij->bj", [(2, 2, 2), (2, 2, 3)], [[9.0, 12.0, 15.0], [87.0, 98.0, 109.0]]),
]
PLACES = [
    dict(shards=1),
    dict(shards=2),
    dict(shards=3, dim=-1),
    dict(layout=st.Layout.replicated()),
]


def _arange(shape, **place):
    return st.arange(float(np.prod(shape))).reshape(shape).reshard(**place)


@pytest.mark.parametrize("place", PLACES, ids=["1", "2", "3last", "repl"])
@pytest.mark.parametrize("eq, shapes, expected", REPEATED, ids=[r[0] for r in REPEATED])
def test_einsum_repeated_subscripts(eq, shapes, expected, place):
    ins = [_arange(s, **place) for s in shapes]
    assert_matches_numpy(L.einsum(eq, *ins), expected, dtype=st.float32)


@pytest.mark.parametrize("eq, shapes, _", REPEATED, ids=[r[0] for r in REPEATED])
def test_einsum_repeated_subscripts_gradients(eq, shapes, _):
    ins = tuple(st.from_numpy(rng.standard_normal(s), requires_grad=True, shards=2) for s in shapes)
    assert gradcheck(lambda *xs: L.einsum(eq, *xs), ins)


def test_einsum_repeated_subscripts_dtypes_and_special_values():
    assert_matches_numpy(L.einsum("ii", st.arange(9).reshape(3, 3)), 12, dtype=st.int64)
    i32 = st.arange(9, dtype=st.int32).reshape(3, 3)
    assert_matches_numpy(L.einsum("ii->i", i32), [0, 4, 8], dtype=st.int32)
    inf = st.tensor([[1.0, math.inf], [math.inf, 2.0]])  # off-diagonal inf stays out (no NaN)
    assert_matches_numpy(L.einsum("ii->i", inf), [1.0, 2.0])
    assert_matches_numpy(L.einsum("ii", st.zeros(0, 0)), 0.0, dtype=st.float32)


def test_einsum_empty_and_empty_chunks():
    assert_matches_numpy(L.einsum("ij,jk->ik", st.zeros(0, 3), st.ones(3, 3)), np.zeros((0, 3)))
    assert_matches_numpy(L.einsum("i,i->i", st.ones(1), st.ones(0)), np.zeros(0))
    assert_matches_numpy(L.einsum("i,i->", st.ones(0), st.ones(1)), 0.0)
    # a size-1 dim on 3 shards: two empty chunks
    b = st.ones(1, 3, 2, shards=3)
    r = L.einsum("bij,bjk->bik", st.ones(1, 2, 3), b)
    assert_matches_numpy(r, np.full((1, 2, 2), 3.0), dtype=st.float32)
    r = L.einsum("bij,bjk->bik", st.ones(1, 2, 3, shards=3), b)
    assert_matches_numpy(r, np.full((1, 2, 2), 3.0), dtype=st.float32)


def test_einsum_result_is_contiguous():
    # torch: a summed or multiplied result is a new contiguous tensor ('ijk->kj' strides (3, 1))
    r = L.einsum("ijk->kj", st.ones(2, 3, 4))
    assert r.is_contiguous() and r.stride() == (3, 1)
    assert_matches_numpy(r.view(-1), np.full(12, 2.0), dtype=st.float32)
    r = L.einsum("ij,jk->ki", st.ones(2, 3), st.ones(3, 4))
    assert r.is_contiguous() and r.stride() == (2, 1)
    # torch: a single operand only permuted is a view ('ij->ji' strides (1, 3))
    x = st.zeros(2, 3)
    v = L.einsum("ij->ji", x)
    assert not v.is_contiguous() and v.stride() == (1, 3)
    v[0, 0] = 5.0
    assert x[0, 0].item() == 5.0


# ------------------------------------------------------------------------------ property
def _random_place(r, ndim):
    """One of: 1..5 shards along a random dim (uneven and empty chunks), or replicated."""
    if ndim == 0 or r.random() < 0.2:
        return dict(layout=st.Layout.replicated())
    return dict(shards=int(r.integers(1, 6)), dim=int(r.integers(0, ndim)))


def _random_equation(r):
    """Two operands over letters 'abcd' (repeats allowed within an operand), output any
    subset of the letters used, each letter one size in 0..3 (size 1 may broadcast)."""
    size = {c: int(r.choice([0, 1, 2, 3])) for c in "abcd"}
    subs = ["".join(r.choice(list("abcd"), int(r.integers(0, 4)))) for _ in range(2)]
    used = sorted(set("".join(subs)))
    out = "".join(c for c in used if r.random() < 0.5)
    shapes = [[size[c] if r.random() < 0.8 else 1 for c in s] for s in subs]
    for s, shp in zip(subs, shapes):  # a repeated letter needs equal sizes in one operand
        for i, c in enumerate(s):
            shp[i] = shp[s.index(c)]
    return f"{subs[0]},{subs[1]}->{out}", shapes


def test_einsum_and_matmul_property():
    # fixed seed, bounded count: random equations and layouts (empty chunks, size-0 and
    # broadcast size-1 dims, repeated subscripts) against numpy
    r = np.random.default_rng(12)
    for _ in range(60):
        eq, shapes = _random_equation(r)
        arrs = [r.standard_normal(s) for s in shapes]
        ins = [t(a, **_random_place(r, a.ndim)) for a in arrs]
        # numpy's reference on operands broadcast to the full sizes first (torch's rule)
        full = {}
        for s, a in zip(eq.split("->")[0].split(","), arrs):
            for c, n in zip(s, a.shape):
                full[c] = n if full.get(c, 1) == 1 else full[c]
        subs = eq.split("->")[0].split(",")
        bc = [np.broadcast_to(a, [full[c] for c in s]) for s, a in zip(subs, arrs)]
        assert_matches_numpy(L.einsum(eq, *ins), np.einsum(eq, *bc), **TOL)
    for _ in range(40):
        nb = [int(r.choice([0, 1, 2])) for _ in range(int(r.integers(0, 3)))]
        n, k, m = (int(r.integers(0, 4)) for _ in range(3))
        sa = [b if r.random() < 0.7 else 1 for b in nb] + [n, k]
        sb = [b if r.random() < 0.7 else 1 for b in nb][int(r.integers(0, len(nb) + 1)) :]
        sb += [k, m]
        a, b = r.standard_normal(sa), r.standard_normal(sb)
        ta, tb = t(a, **_random_place(r, a.ndim)), t(b, **_random_place(r, b.ndim))
        assert_matches_numpy(ta @ tb, a @ b, **TOL)
