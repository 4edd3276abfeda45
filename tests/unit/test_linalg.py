"""st.linalg against numpy.linalg: batched decompositions (``batched.py``, ``solve.py``,
``decomp.py``), their errors, tensor methods, and the gradients of every linalg op checked
against finite differences (products and big-matrix algorithms included)."""

import math

import numpy as np
import pytest

import sharded as st
from sharded.autograd import gradcheck
from sharded.ops.linalg import batched as OL
from sharded.ops.linalg import lu as LD
from tests.helpers import LINALG_TOL, assert_matches_numpy, current_executor, float64_tensor

L = st.linalg
rng = np.random.default_rng(7)
TOL = LINALG_TOL
ex = current_executor
t = float64_tensor


def leaf(a, **place):
    return st.from_numpy(np.asarray(a, dtype=np.float64), requires_grad=True, **place)


@pytest.fixture
def dist_small(monkeypatch):
    """Small split matrices take the distributed path (no gathering) in these tests."""
    monkeypatch.setattr(LD, "DIST_MIN_BYTES", 0)


# ------------------------------------------------------------------------------ batched
A233, B235 = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3, 5))
BATCH_PLACES = [
    dict(shards=2),
    dict(layout=st.Layout(chunks=(0, 2))),
    dict(shards=3, dim=1),
    dict(layout=st.Layout.replicated()),
]
BATCH_IDS = ["batch", "uneven", "matrix-split", "repl"]


@pytest.mark.parametrize("place", BATCH_PLACES, ids=BATCH_IDS)
def test_tutorial_solve_and_batched_ops(place):
    a, b = t(A233, **place), t(B235, shards=2)
    x = L.solve(a, b)  # the tutorial's A (2,3,3), B (2,3,5)
    assert x.shape == (2, 3, 5)
    assert np.abs(A233 @ x.numpy() - B235).max() < 1e-12
    assert_matches_numpy(
        L.solve(a, t(B235[..., 0])), np.linalg.solve(A233, B235[..., :1])[..., 0], **TOL
    )
    assert_matches_numpy(
        L.solve(a.mT, t(B235.transpose(0, 2, 1)), left=False).mT, np.linalg.solve(A233, B235), **TOL
    )
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
        assert_matches_numpy(
            L.cholesky(s, upper=True), np.linalg.cholesky(spd).transpose(0, 2, 1), **TOL
        )
        w, v = L.eigh(s)
        assert_matches_numpy(w, np.linalg.eigh(spd)[0], **TOL)
        assert_matches_numpy(v @ (w.unsqueeze(-1) * v.mT), spd, **TOL)
        assert_matches_numpy(L.eigvalsh(s), np.linalg.eigvalsh(spd), **TOL)
        assert_matches_numpy(L.eigvals(s), np.linalg.eigvals(spd), dtype=st.complex128, **TOL)
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
    w = L.eigvals(t([[0.0, 1.0], [-1.0, 0.0]]))  # complex, as torch
    assert_matches_numpy(w, [1j, -1j], dtype=st.complex128, **TOL)


def test_bad_input_raises_typed_errors_and_changes_nothing():
    sing = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [0, 0, 1]], np.eye(3)])
    a, b = t(sing, shards=3), t(np.ones((3, 3, 1)), shards=2)
    for fn in (lambda: L.solve(a, b), lambda: L.inv(a)):
        with pytest.raises(L.LinAlgError, match=r"Batch element 1\b.*singular") as e:
            fn()
        assert isinstance(
            e.value, (RuntimeError, ValueError, st.ShardedError, np.linalg.LinAlgError)
        )
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
    with pytest.raises(st.ArgumentError, match="mode"):
        L.qr(t(np.eye(2)), mode="full")


def test_gather_limit_is_documented_and_enforced(monkeypatch):
    m = t(rng.standard_normal((40, 40)), shards=2)
    assert_matches_numpy(
        L.eigvalsh(m + m.mT), np.linalg.eigvalsh(m.numpy() + m.numpy().T), **TOL
    )  # a small split matrix is gathered on one worker
    monkeypatch.setattr(OL, "GATHER_LIMIT", 1000)
    with pytest.raises(st.ArgumentError, match="1,000-byte limit"):
        L.eigvals(m)


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
    "lstsq": (
        lambda a, b: L.lstsq(a, b).solution,
        (rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))),
    ),
    "fro": (L.matrix_norm, (A3,)),
    "nuc": (lambda a: L.matrix_norm(a, "nuc"), (A3,)),
    "spectral": (lambda a: L.matrix_norm(a, 2), (A3,)),
    "inf": (lambda a: L.matrix_norm(a, math.inf), (A3,)),
    "vector_3": (lambda a: L.vector_norm(a, 3, dim=1), (A3,)),
    "qr_tall": (lambda a: L.qr(a), (T63,)),
    "lstsq_tall": (lambda a, b: L.lstsq(a, b).solution, (T63, rng.standard_normal((6, 2)))),
    "svdvals_tall": (lambda a: L.matrix_norm(a, 2), (T63,)),
    # singular vectors and eigenvectors are defined up to sign: check sign-invariant functions
    "svd": (lambda a: _svd_parts(L.svd(a, full_matrices=False)), (rng.standard_normal((2, 5, 3)),)),
    "svd_wide": (
        lambda a: _svd_parts(L.svd(a, full_matrices=False)),
        (rng.standard_normal((2, 3, 5)),),
    ),
    "svd_full_square": (lambda a: _svd_parts(L.svd(a)), (rng.standard_normal((2, 3, 3)),)),
    "svd_full_tall": (lambda a: (lambda r: (r.U[..., :, :3] ** 2, r.S))(L.svd(a)), (T63[None],)),
    "svd_tall": (
        lambda a: (lambda r: (r.U * r.S) @ r.Vh + r.U**2)(L.svd(a, full_matrices=False)),
        (T63,),
    ),
    "eigh": (
        lambda a: (lambda r: (r.eigenvalues, r.eigenvectors**2))(L.eigh(a + a.mT)),
        (rng.standard_normal((2, 4, 4)),),
    ),
    "eigh_values_only": (lambda a: L.eigh(a + a.mT).eigenvalues, (rng.standard_normal((4, 4)),)),
    "eigvalsh": (lambda a: L.eigvalsh(a + a.mT), (rng.standard_normal((2, 4, 4)),)),
}


def _svd_parts(r):
    return r.U**2, r.S, r.Vh**2


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    fn, arrays = GRADS[name]
    assert gradcheck(fn, tuple(leaf(a, shards=2) for a in arrays))


@pytest.mark.parametrize("name", ["solve", "inv", "det", "cholesky"])
def test_gradcheck_distributed(name, dist_small):
    n = 12
    a = rng.standard_normal((n, n)) + 4 * np.eye(n)
    fns = {
        "solve": lambda x, b: L.solve(x, b),
        "inv": L.inv,
        "det": lambda x: L.det(x / 3),
        "cholesky": lambda x: L.cholesky(x @ x.mT + st.eye(n, dtype=st.float64) * n),
    }
    args = (leaf(a, shards=2),) + (
        (leaf(rng.standard_normal((n, 2)), shards=3),) if name == "solve" else ()
    )
    assert gradcheck(fns[name], args)


def test_eigvals_gradient():
    x = leaf(rng.standard_normal((3, 3)), shards=2)
    L.eigvals(x).real.sum().backward()  # the sum of the eigenvalues is the trace
    assert_matches_numpy(x.grad, np.eye(3), **TOL)
    with pytest.raises(st.autograd.AutogradError, match="real scalar"):
        L.eigvals(x).sum().backward()  # a complex output needs gradient=, as torch


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


# ------------------------------------------------------------------------------ issue 12
# Expected values are torch's (CPU): torch.linalg.lstsq(A, B) for A=[[2,1],[1,3]], B=[[1],[2]].
@pytest.mark.parametrize(
    "place",
    [dict(shards=1), dict(layout=st.Layout.replicated()), dict(shards=2)],
    ids=["1", "repl", "2"],
)
def test_lstsq_square_is_not_zeros(place):
    # a square system has an empty (0,) residual: that alone made the kernel return zeros
    A, B = st.tensor([[2.0, 1], [1, 3]], **place), st.tensor([[1.0], [2]], **place)
    r = L.lstsq(A, B)
    assert_matches_numpy(r.solution, [[0.2], [0.6]], rtol=1e-6, atol=1e-6, dtype=st.float32)
    assert r.residuals.shape == (0,) and r.rank.item() == 2
    v = L.lstsq(A, st.tensor([1.0, 2], **place)).solution
    assert_matches_numpy(v, [0.2, 0.6], rtol=1e-6, atol=1e-6, dtype=st.float32)
    wide = L.lstsq(t([[1.0, 0, 1]]), t([[2.0]])).solution  # wide: empty residuals too
    assert_matches_numpy(wide, [[1.0], [0.0], [1.0]], **TOL)
