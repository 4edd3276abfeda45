"""The distributed tall QR (CholeskyQR2 / TSQR) and the tall lstsq and svd through it
(``sharded/ops/linalg/tall.py``), on even, uneven, column-split and block layouts."""

import numpy as np
import pytest

import sharded as st
from tests.helpers import LINALG_TOL, assert_matches_numpy, current_executor, float64_tensor

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
ex = current_executor
t = float64_tensor


TALL_PLACES = [
    dict(shards=2),
    dict(shards=3),
    dict(layout=st.Layout(chunks=(40, 0, 37, 3, 20))),
    dict(shards=3, dim=1),
    dict(layout=st.Layout.block((2, 2))),
]
TALL_IDS = ["2", "3", "uneven-empty-short", "cols", "block"]


@pytest.mark.parametrize("place", TALL_PLACES, ids=TALL_IDS)
def test_tall_qr_lstsq_svd(place):
    a = rng.standard_normal((100, 7))
    x = t(a, **place)
    moved = ex().bytes_moved
    q, r = L.qr(x)
    if place == dict(shards=2):  # only k x k matrices travel
        assert ex().bytes_moved - moved < 100 * 7 * 8 / 4
    qn, rn = q.numpy(), r.numpy()
    assert r.layout.is_replicated and q.layout.grid[1] == 1
    assert np.abs(qn.T @ qn - np.eye(7)).max() < 1e-10
    assert np.abs(qn @ rn - a).max() < 1e-10 and np.all(np.diag(rn) >= 0)
    assert np.allclose(np.triu(rn), rn)
    ill = a.copy()
    ill[:, 3] = ill[:, 2] + 1e-9 * ill[:, 1]  # cond ~ 1e9: the TSQR fallback
    q2, r2 = L.qr(t(ill, **place))
    q2n = q2.numpy()
    assert np.abs(q2n.T @ q2n - np.eye(7)).max() < 1e-10
    assert np.abs(q2n @ r2.numpy() - ill).max() < 1e-10
    with pytest.raises(L.LinAlgError, match="method='tsqr'"):
        L.qr(t(ill, **place), method="cholqr2")
    q3, r3 = L.qr(x, method="tsqr")  # the same unique QR by the other algorithm
    assert_matches_numpy(q3, qn, **TOL)
    assert_matches_numpy(r3, rn, **TOL)
    b = rng.standard_normal((100, 3))
    sol = L.lstsq(x, t(b, shards=2))
    ref = np.linalg.lstsq(a, b, rcond=None)
    assert_matches_numpy(sol.solution, ref[0], **TOL)
    assert_matches_numpy(sol.residuals, ref[1], rtol=1e-9)
    assert_matches_numpy(L.lstsq(x, t(b[:, 0])).solution, ref[0][:, 0], **TOL)
    u, s, vh = L.svd(x, full_matrices=False)
    assert_matches_numpy(s, np.linalg.svd(a, compute_uv=False), **TOL)
    assert_matches_numpy((u * s) @ vh, a, **TOL)
    assert u.layout.grid[1] == 1 and u.layout.grid[0] > 1
