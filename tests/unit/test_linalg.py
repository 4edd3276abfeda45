"""st.linalg against numpy.linalg: products on every layout pair, batched decompositions,
the distributed big-matrix algorithms (uneven blocks too), errors, and gradients."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

import sharded as st
from sharded.autograd import gradcheck
from sharded.core.dataflow import Operand
from sharded.ops import matmul as MM
from sharded.ops.linalg import batched as OL
from sharded.ops.linalg import lu as LD
from tests.helpers import PLACEMENT_IDS, PLACEMENTS, assert_matches_numpy

L = st.linalg
rng = np.random.default_rng(7)
TOL = dict(rtol=1e-10, atol=1e-10)


def ex():
    return st.runtime.session.current().executor


def t(a, **place):
    return st.from_numpy(np.asarray(a, dtype=np.float64), **place)


def leaf(a, **place):
    return st.from_numpy(np.asarray(a, dtype=np.float64), requires_grad=True, **place)


@pytest.fixture
def dist_small(monkeypatch):
    """Small split matrices take the distributed path (no gathering) in these tests."""
    monkeypatch.setattr(LD, "DIST_MIN_BYTES", 0)


# ------------------------------------------------------------------------------ products
A76, B65 = rng.standard_normal((7, 6)), rng.standard_normal((6, 5))
B75 = rng.standard_normal((7, 5))
A77, B77 = rng.standard_normal((7, 7)), rng.standard_normal((7, 7))


@pytest.mark.parametrize("pb", PLACEMENTS, ids=PLACEMENT_IDS)
@pytest.mark.parametrize("pa", PLACEMENTS, ids=PLACEMENT_IDS)
def test_matmul_every_layout_pair(pa, pb):
    a, b = t(A77, **pa), t(B77, **pb)
    assert_matches_numpy(a @ b, A77 @ B77, **TOL)
    assert_matches_numpy(a.mT @ b, A77.T @ B77, **TOL)  # rows of a: the contraction dim
    assert_matches_numpy(a @ b.mT, A77 @ B77.T, **TOL)


def test_layout_rules():
    x, w = t(A76, shards=3), t(B65, layout=st.Layout.replicated())
    moved = ex().bytes_moved
    y = x @ w
    assert y.layout.bounds[0] == x.layout.bounds[0] and ex().bytes_moved == moved  # local
    r = t(A76, layout=st.Layout.replicated()) @ w
    assert r.layout.is_replicated
    g = x.mT @ t(B75, shards=3)  # k-split, small: summed into one block
    assert g.layout.num_shards == 1
    big_x, big_g = rng.standard_normal((600, 400)), rng.standard_normal((600, 400))
    gg = t(big_x, shards=3).mT @ t(big_g, shards=3)  # k-split, big: reduce-scattered rows
    assert gg.layout.grid == (3, 1) and len(set(gg.layout.workers)) == 3
    assert_matches_numpy(gg, big_x.T @ big_g, **TOL)
    c = t(A76, layout=st.Layout.replicated()) @ t(B65, shards=3, dim=1)  # columns stay put
    assert c.layout.grid == (1, 3)
    blk = t(rng.standard_normal((8, 8)), layout=st.Layout.block((2, 2)))
    assert_matches_numpy(blk @ blk, blk.numpy() @ blk.numpy(), **TOL)
    # a big 2x2 block grid on 4 workers: SUMMA blocks, one per worker (the planner is pure)
    lay = st.Layout.block((2, 2)).bind((1000, 1000), 4)
    a = Operand(lay, st.float64, range(4))
    _, plan = MM.choose(SimpleNamespace(num_workers=4), a, a)
    assert plan[0] == "blocks" and plan[1].grid == (2, 2) and sorted(plan[1].workers) == [0, 1,
                                                                                       2, 3]


@pytest.mark.parametrize("pa, pb", [
    (dict(shards=2), dict(shards=2)), (dict(shards=3, dim=1), dict(shards=2, dim=2)),
    (dict(shards=2, dim=2), dict(layout=st.Layout.replicated())),
    (dict(layout=st.Layout.replicated()), dict(shards=3))], ids=["batch", "rows-cols", "k", "rep"])
def test_batched_matmul_and_broadcast(pa, pb):
    a3, b3 = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5, 2))
    b2 = rng.standard_normal((5, 2))
    a = t(a3, **pa)
    assert_matches_numpy(a @ t(b3, **pb), a3 @ b3, **TOL)
    assert_matches_numpy(a @ t(b2), a3 @ b2, **TOL)
    assert_matches_numpy(t(b2).mT @ a.mT, b2.T @ a3.transpose(0, 2, 1), **TOL)
    a4 = rng.standard_normal((2, 1, 3, 5))
    assert_matches_numpy(t(a4, shards=2) @ t(b3, **pb), a4 @ b3, **TOL)
    assert_matches_numpy(st.bmm(a, t(b3, **pb)), a3 @ b3, **TOL)


def test_vectors_and_family():
    v, m = rng.standard_normal(7), rng.standard_normal((7, 7))
    for pv in (dict(shards=3), dict(layout=st.Layout(chunks=(4, 0, 3)))):
        x, a = t(v, **pv), t(m, shards=2, dim=1)
        assert_matches_numpy(a @ x, m @ v, **TOL)
        assert_matches_numpy(x @ a, v @ m, **TOL)
        assert abs((x @ x).item() - v @ v) < 1e-12 and (x @ x).ndim == 0
        assert abs(st.dot(x, x).item() - v @ v) < 1e-12
        assert_matches_numpy(st.mv(a, x), m @ v, **TOL)
        assert_matches_numpy(st.outer(x, x), np.outer(v, v), **TOL)
    assert_matches_numpy(st.mm(t(A76, shards=2), t(B65)), A76 @ B65, **TOL)
    assert_matches_numpy(L.inner(t(A76), t(B75.T @ A76)), np.inner(A76, B75.T @ A76), **TOL)
    assert_matches_numpy(L.vecdot(t(A76, shards=2), t(A76[0])), A76 @ A76[0], **TOL)
    assert_matches_numpy(L.multi_dot([t(A76), t(B65), t(B65.T)]), A76 @ B65 @ B65.T, **TOL)
    assert_matches_numpy(L.matmul(st.arange(6).reshape(2, 3), st.arange(3)), [5, 14],
                         dtype=st.int64)


def test_product_errors_name_shapes():
    with pytest.raises(st.ShapeError, match=r"7x6 and 5x6"):
        t(A76) @ t(B65.T)
    with pytest.raises(st.ShapeError, match="at least 1D"):
        st.matmul(st.tensor(1.0), t(B65))
    with pytest.raises(st.ShapeError, match="cannot be broadcast"):
        t(np.ones((2, 3, 4))) @ t(np.ones((3, 4, 5)))
    with pytest.raises(st.ShapeError, match="equal batch sizes"):
        st.bmm(t(np.ones((2, 3, 4))), t(np.ones((3, 4, 5))))
    with pytest.raises(st.ShapeError, match="do not match"):
        L.tensordot(t(A76), t(B65), ([0], [0]))


EINSUM = ["ij,jk->ik", "bij,bjk->bik", "bij,bjk->ik", "ij->ji", "ij->", "i,j->ij", "ij,ij->i",
          "...ij,jk->...ik", "bij,jk", "abc,cd,ae->bde", "ij,ij->", "ijk->kj"]


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
    assert_matches_numpy(L.tensordot(t(a3, shards=3), t(b3, shards=2, dim=1)),
                         np.tensordot(a3, b3), **TOL)
    assert_matches_numpy(L.tensordot(t(a3), t(b3), ([1], [0])), np.tensordot(a3, b3, ([1], [0])),
                         **TOL)
    with pytest.raises(st.ArgumentError, match="repeated subscript"):
        L.einsum("ii->i", t(np.eye(3)))
    with pytest.raises(st.ShapeError, match="name 2 dims"):
        L.einsum("ij,jk", t(a3), t(b3))
    with pytest.raises(st.ShapeError, match="subscript 'j' has size"):
        L.einsum("ij,jk", t(A76), t(A76))


# ------------------------------------------------------------------------------ batched
A233, B235 = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3, 5))
BATCH_PLACES = [dict(shards=2), dict(layout=st.Layout(chunks=(0, 2))), dict(shards=3, dim=1),
                dict(layout=st.Layout.replicated())]
BATCH_IDS = ["batch", "uneven", "matrix-split", "repl"]


@pytest.mark.parametrize("place", BATCH_PLACES, ids=BATCH_IDS)
def test_tutorial_solve_and_batched_ops(place):
    a, b = t(A233, **place), t(B235, shards=2)
    x = L.solve(a, b)  # the tutorial's A (2,3,3), B (2,3,5)
    assert x.shape == (2, 3, 5)
    assert np.abs(A233 @ x.numpy() - B235).max() < 1e-12
    assert_matches_numpy(L.solve(a, t(B235[..., 0])), np.linalg.solve(A233, B235[..., :1])[..., 0],
                         **TOL)
    assert_matches_numpy(L.solve(a.mT, t(B235.transpose(0, 2, 1)), left=False).mT,
                         np.linalg.solve(A233, B235), **TOL)
    assert_matches_numpy(L.inv(a), np.linalg.inv(A233), **TOL)
    assert_matches_numpy(L.det(a), np.linalg.det(A233), **TOL)
    sign, logabs = L.slogdet(a)
    ref = np.linalg.slogdet(A233)
    assert_matches_numpy(sign, ref[0])
    assert_matches_numpy(logabs, ref[1], **TOL)


def test_batched_decompositions_match_numpy():
    rep = st.Layout.replicated()
    spd = A233 @ A233.transpose(0, 2, 1) + np.eye(3)
    for place in (dict(shards=2), dict(layout=rep)):
        s = t(spd, **place)
        assert_matches_numpy(L.cholesky(s), np.linalg.cholesky(spd), **TOL)
        assert_matches_numpy(L.cholesky(s, upper=True),
                             np.linalg.cholesky(spd).transpose(0, 2, 1), **TOL)
        w, v = L.eigh(s)
        assert_matches_numpy(w, np.linalg.eigh(spd)[0], **TOL)
        assert_matches_numpy(v @ (w.unsqueeze(-1) * v.mT), spd, **TOL)
        assert_matches_numpy(L.eigvalsh(s), np.linalg.eigvalsh(spd), **TOL)
        assert_matches_numpy(L.eigvals(s), np.linalg.eigvals(spd).real, **TOL)
    a = t(rng.standard_normal((3, 5, 4)), shards=3)
    an = a.numpy()
    u, sv, vh = L.svd(a, full_matrices=False)
    assert_matches_numpy(sv, np.linalg.svd(an, compute_uv=False), **TOL)
    assert_matches_numpy((u * sv.unsqueeze(-2)) @ vh, an, **TOL)
    assert L.svd(a).U.shape == (3, 5, 5)
    assert_matches_numpy(L.svdvals(a), np.linalg.svd(an, compute_uv=False), **TOL)
    for mode in ("reduced", "complete"):
        q, r = L.qr(a, mode=mode)
        assert_matches_numpy(q @ r, an, **TOL)
        assert np.all(np.diagonal(r.numpy(), axis1=-2, axis2=-1) >= 0)
    assert L.qr(a, mode="r").R.shape == (3, 4, 4)
    assert_matches_numpy(L.pinv(a), np.linalg.pinv(an), **TOL)
    assert L.matrix_rank(a).tolist() == [4, 4, 4]
    low = t(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert L.matrix_rank(low).item() == 1 and L.matrix_rank(low, atol=10.0).item() == 0
    b = t(rng.standard_normal((3, 5, 2)), shards=3)
    sol, res, rank, svals = L.lstsq(a, b)
    ref = [np.linalg.lstsq(an[i], b.numpy()[i], rcond=None) for i in range(3)]
    assert_matches_numpy(sol, np.stack([r[0] for r in ref]), **TOL)
    assert_matches_numpy(res, np.stack([r[1] for r in ref]), **TOL)
    assert rank.tolist() == [4, 4, 4]
    re_im = L.eigvals(t([[0.0, 1.0], [-1.0, 0.0]]), as_real=True)
    assert_matches_numpy(re_im, [[0.0, 1.0], [0.0, -1.0]], **TOL)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norms(ord):
    a = rng.standard_normal((3, 4, 5))
    assert_matches_numpy(L.matrix_norm(t(a, shards=2, dim=2), ord=ord),
                         np.linalg.norm(a, ord, axis=(-2, -1)), **TOL)
    assert_matches_numpy(L.matrix_norm(t(a, shards=3), ord=ord, dim=(0, 2), keepdim=True),
                         np.linalg.norm(a, ord, axis=(0, 2), keepdims=True), **TOL)


def test_vector_norms_and_norm():
    a = rng.standard_normal((4, 6))
    x = t(a, shards=3, dim=1)
    for ord in (2, 1, 0, 3.5, math.inf, -math.inf):
        assert_matches_numpy(L.vector_norm(x, ord), np.linalg.norm(a.ravel(), ord), **TOL)
        assert_matches_numpy(L.vector_norm(x, ord, dim=1, keepdim=True),
                             np.linalg.norm(a, ord, axis=1, keepdims=True), **TOL)
    assert_matches_numpy(L.norm(x), np.linalg.norm(a), **TOL)
    assert_matches_numpy(L.norm(x, 2), np.linalg.norm(a, 2), **TOL)
    assert_matches_numpy(L.norm(x, dim=0), np.linalg.norm(a, axis=0), **TOL)
    assert_matches_numpy(L.norm(x, "nuc"), np.linalg.norm(a, "nuc"), **TOL)


def test_bad_input_raises_typed_errors_and_changes_nothing():
    sing = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [0, 0, 1]], np.eye(3)])
    a, b = t(sing, shards=3), t(np.ones((3, 3, 1)), shards=2)
    for fn in (lambda: L.solve(a, b), lambda: L.inv(a)):
        with pytest.raises(L.LinAlgError, match=r"Batch element 1\b.*singular") as e:
            fn()
        assert isinstance(e.value, (RuntimeError, ValueError, st.ShardedError,
                                    np.linalg.LinAlgError))
    assert_matches_numpy(a, sing)
    assert_matches_numpy(b, np.ones((3, 3, 1)))
    not_pd = np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])])
    with pytest.raises(L.LinAlgError, match=r"Batch element 1.*positive-definite"):
        L.cholesky(t(not_pd, shards=2))
    assert L.cholesky_ex(t(not_pd, shards=2)).info.tolist() == [0, 2]
    assert L.inv_ex(a).info.tolist() == [0, 1, 0]
    assert L.solve_ex(a, b).info.tolist() == [0, 1, 0]
    with pytest.raises(L.LinAlgError, match="singular"):
        L.solve(t([[1.0, 2.0], [2.0, 4.0]]), t([1.0, 1.0]))  # unbatched: no element index
    with pytest.raises(st.ShapeError, match="square matrices, but they are 2x3"):
        L.inv(t(np.ones((2, 3))))
    with pytest.raises(st.ShapeError, match=r"incompatible shapes.*3x3x3 and 3x2x1"):
        L.solve(a, t(np.ones((3, 2, 1))))
    with pytest.raises(st.ShapeError, match="at least 2 dimensions"):
        L.qr(t(np.ones(3)))
    with pytest.raises(st.DTypeError, match="int64"):
        L.det(st.ones(2, 2, dtype=st.int64))
    with pytest.raises(st.DTypeError, match="complex eigenvalues"):
        L.eigvals(t([[0.0, 1.0], [-1.0, 0.0]]))
    with pytest.raises(st.ArgumentError, match="mode"):
        L.qr(t(np.eye(2)), mode="full")


def test_gather_limit_is_documented_and_enforced(monkeypatch):
    m = t(rng.standard_normal((40, 40)), shards=2)
    assert_matches_numpy(L.eigvalsh(m + m.mT), np.linalg.eigvalsh(m.numpy() + m.numpy().T),
                         **TOL)  # a small split matrix is gathered on one worker
    monkeypatch.setattr(OL, "GATHER_LIMIT", 1000)
    with pytest.raises(st.ArgumentError, match="1,000-byte limit"):
        L.eigvals(m)


# ------------------------------------------------------------------------------ big
TALL_PLACES = [dict(shards=2), dict(shards=3), dict(layout=st.Layout(chunks=(40, 0, 37, 3, 20))),
               dict(shards=3, dim=1), dict(layout=st.Layout.block((2, 2)))]
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


SQUARE = [(50, dict(shards=2)), (61, dict(layout=st.Layout(chunks=(20, 0, 41)))),
          (64, dict(shards=3, dim=1)), (70, dict(layout=st.Layout.block((2, 2)))),
          (37, dict(shards=5))]


@pytest.mark.parametrize("n, place", SQUARE, ids=["2", "uneven-empty", "cols", "block", "5"])
def test_block_lu_and_cholesky(n, place, dist_small):
    a = rng.standard_normal((n, n))
    x = t(a, **place)
    b = rng.standard_normal((n, 3))
    sol = L.solve(x, t(b, shards=3))
    assert np.abs(a @ sol.numpy() - b).max() < 1e-10 and sol.layout.grid[1] == 1
    assert_matches_numpy(L.solve(x, t(b[:, 0], shards=2)), np.linalg.solve(a, b[:, 0]), **TOL)
    assert_matches_numpy(L.inv(x), np.linalg.inv(a), **TOL)
    assert_matches_numpy(L.det(x), np.linalg.det(a), rtol=1e-10)
    sign, logabs = L.slogdet(x)
    ref = np.linalg.slogdet(a)
    assert sign.item() == ref[0] and abs(logabs.item() - ref[1]) < 1e-10
    spd = a @ a.T + n * np.eye(n)
    s = t(spd, **place)
    c = L.cholesky(s)
    assert c.layout == s.layout
    assert_matches_numpy(c, np.linalg.cholesky(spd), **TOL)
    assert_matches_numpy(L.cholesky(s, upper=True), np.linalg.cholesky(spd).T, **TOL)


def test_big_matrix_errors(dist_small):
    a = rng.standard_normal((60, 60))
    a[17] = 0.0  # an exactly zero row: an exactly zero pivot
    x = t(a, shards=2)
    with pytest.raises(L.LinAlgError, match="singular"):
        L.solve(x, st.ones(60, 1, dtype=st.float64))
    with pytest.raises(L.LinAlgError, match="linalg.inv"):
        L.inv(x)
    assert L.det(x).item() == 0.0 and L.slogdet(x).logabsdet.item() == -math.inf
    assert_matches_numpy(x, a)
    s = np.eye(60)
    s[30, 30] = -1.0
    with pytest.raises(L.LinAlgError, match="leading minor of order 31"):
        L.cholesky(t(s, shards=2))


def test_tensorsolve_tutorial(dist_small):
    a = st.eye(2 * 3 * 4, dtype=st.float64).reshape(2 * 3, 4, 2, 3, 4)
    b = t(rng.standard_normal((2 * 3, 4)))
    x = L.tensorsolve(a, b)
    assert x.shape == (2, 3, 4)
    assert_matches_numpy(L.tensordot(a, x, dims=x.ndim), b.numpy(), **TOL)
    an = rng.standard_normal((6, 4, 2, 3, 4))
    x = L.tensorsolve(t(an, shards=2), b)
    assert_matches_numpy(x, np.linalg.tensorsolve(an, b.numpy()), **TOL)
    with pytest.raises(st.ShapeError, match="tensorsolve"):
        L.tensorsolve(t(an), t(np.ones(5)))


# ------------------------------------------------------------------------------ gradients
A3 = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
S3 = rng.standard_normal((2, 3, 3))
T63 = rng.standard_normal((6, 3))
I3 = np.eye(3)
GRADS = {
    "matmul_bcast": (lambda a, b: a @ b, (A3, B235[0])),
    "tensordot": (lambda a, b: L.tensordot(a, b, ([1, 2], [0, 1])), (A3, S3[0][:, :, None])),
    "einsum": (lambda a, b: L.einsum("bij,bjk->ik", a, b), (A3, B235)),
    "solve": (lambda a, b: L.solve(a, b), (A3, B235)),
    "solve_bcast": (lambda a, b: L.solve(a, b), (A3[0], B235)),
    "inv": (L.inv, (A3,)),
    "det": (L.det, (A3,)),
    "slogdet": (lambda a: L.slogdet(a).logabsdet, (A3,)),
    "cholesky": (lambda s: L.cholesky(s @ s.mT + st.from_numpy(I3)), (S3,)),
    "cholesky_upper": (lambda s: L.cholesky(s @ s.mT + st.from_numpy(I3), upper=True), (S3,)),
    "qr": (lambda a: L.qr(a), (rng.standard_normal((2, 5, 3)),)),
    "lstsq": (lambda a, b: L.lstsq(a, b).solution, (rng.standard_normal((2, 5, 3)),
                                                   rng.standard_normal((2, 5, 2)))),
    "fro": (L.matrix_norm, (A3,)),
    "nuc": (lambda a: L.matrix_norm(a, "nuc"), (A3,)),
    "spectral": (lambda a: L.matrix_norm(a, 2), (A3,)),
    "inf": (lambda a: L.matrix_norm(a, math.inf), (A3,)),
    "vector_3": (lambda a: L.vector_norm(a, 3, dim=1), (A3,)),
    "qr_tall": (lambda a: L.qr(a), (T63,)),
    "lstsq_tall": (lambda a, b: L.lstsq(a, b).solution, (T63, rng.standard_normal((6, 2)))),
    "svdvals_tall": (lambda a: L.matrix_norm(a, 2), (T63,)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    fn, arrays = GRADS[name]
    assert gradcheck(fn, tuple(leaf(a, shards=2) for a in arrays))


@pytest.mark.parametrize("name", ["solve", "inv", "det", "cholesky"])
def test_gradcheck_distributed(name, dist_small):
    n = 12
    a = rng.standard_normal((n, n)) + 4 * np.eye(n)
    fns = {"solve": lambda x, b: L.solve(x, b), "inv": L.inv,
           "det": lambda x: L.det(x / 3),
           "cholesky": lambda x: L.cholesky(x @ x.mT + st.eye(n, dtype=st.float64) * n)}
    args = (leaf(a, shards=2),) + ((leaf(rng.standard_normal((n, 2)), shards=3),)
                                   if name == "solve" else ())
    assert gradcheck(fns[name], args)


def test_tensor_methods():
    a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    x = t(a, shards=2)
    assert_matches_numpy(x.det(), np.linalg.det(a), **TOL)
    assert_matches_numpy(x.inverse(), np.linalg.inv(a), **TOL)
    assert_matches_numpy(x.logdet(), np.log(np.linalg.det(a)), **TOL)
    assert_matches_numpy(x.norm(), np.linalg.norm(a), **TOL)
    assert_matches_numpy(x.norm(1, dim=0), np.linalg.norm(a, 1, axis=0), **TOL)
    assert_matches_numpy(x.norm("nuc"), np.linalg.norm(a, "nuc"), **TOL)
    assert_matches_numpy(x.pinverse(), np.linalg.pinv(a), **TOL)
    assert_matches_numpy(x.tensordot(x, 1), a @ a, **TOL)
    assert math.isnan(t([[1.0, 2.0], [3.0, 4.0]]).logdet().item())
