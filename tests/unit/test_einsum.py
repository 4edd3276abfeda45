"""st.einsum and st.tensordot against numpy (``sharded/ops/einsum.py``)."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import LINALG_TOL, assert_matches_numpy, float64_tensor

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
    with pytest.raises(st.ArgumentError, match="repeated subscript"):
        L.einsum("ii->i", t(np.eye(3)))
    with pytest.raises(st.ShapeError, match="name 2 dims"):
        L.einsum("ij,jk", t(a3), t(b3))
    with pytest.raises(st.ShapeError, match="subscript 'j' has size"):
        L.einsum("ij,jk", t(A76), t(A76))
