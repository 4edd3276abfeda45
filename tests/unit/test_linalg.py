"""st.linalg against numpy.linalg: batched decompositions (``batched.py``, ``solve.py``,
``decomp.py``), their errors, tensor methods, and the gradients of every linalg op checked
against finite differences (products and big-matrix algorithms included)."""

import math

import numpy as np
import pytest

import sharded as st
from sharded.autograd import gradcheck
from sharded.ops.linalg.prims import batched as OL
from sharded.ops.linalg.prims import lu_dist as LD
from tests.helpers import LINALG_TOL, assert_matches_numpy, current_executor, float64_tensor

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

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
    sol, res, rank, svals = L.lstsq(a, b, driver="gelsd")  # gelsd: all four outputs
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
    # torch's info is getrf's: the 1-based index of the first zero pivot (U[1, 1] here)
    assert L.inv_ex(a).info.tolist() == [0, 2, 0]
    assert L.solve_ex(a, b).info.tolist() == [0, 2, 0]
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


@pytest.mark.ray_mirror(False)  # on Ray a subset: tests/ray/test_linalg.py
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    fn, arrays = GRADS[name]
    assert gradcheck(fn, tuple(leaf(a, shards=2) for a in arrays))


@pytest.mark.ray_mirror(False)  # on Ray a subset: tests/ray/test_linalg.py
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


@pytest.mark.parametrize("shards", [1, 2])
def test_logdet_of_complex_as_torch(shards):
    # torch: log(sign) + logabsdet, the principal log of det; the gradient of its real part
    a = np.array([[1 + 2j, 0.5], [1j, 3 - 1j]])
    x = st.tensor(a.tolist(), dtype=st.complex128, shards=shards, requires_grad=True)
    y = x.logdet()
    assert y.item() == pytest.approx(1.9061013350729676 + 0.7328151017865066j)
    y.real.backward()
    want = [[0.23204419889502764 + 0.4088397790055249j, -0.0994475138121547 + 0.1104972375690608j]]
    want += [[-0.0552486187845304 - 0.04972375690607735j, 0.3093922651933702 - 0.1215469613259669j]]
    assert_matches_numpy(x.grad, np.array(want), **TOL)
    neg = st.tensor([[-2 + 0j, 0], [0, 1]], dtype=st.complex128, shards=shards)
    assert st.logdet(neg).item() == pytest.approx(math.log(2) + math.pi * 1j)


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


# ------------------------------------------------------------------------------ complex
# Small complex inputs and torch's gradients of real losses (torch 2.13, complex128).
CA = [[1 + 2j, 0.5 - 1j], [2 - 0.5j, 1 + 1j], [-1 + 0.5j, 3 - 2j]]
CH = [[4, 1 + 2j, 0.5j], [1 - 2j, 6, 1], [-0.5j, 1, 5]]  # Hermitian positive-definite
CW2 = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
CW3 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]
W123 = [1.0, 2.0, 3.0]
GQ = [
    [-0.2197848178 - 0.35976248j, -0.2178436629 + 0.2760730144j],
    [0.3866261575 - 0.0029541041j, -0.1142130014 - 0.3016178719j],
    [-0.024779518 + 0.2796017852j, 0.2259154777 - 0.0615396431j],
]
TORCH_COMPLEX_GRADS = {
    "svdvals": (
        CA,
        lambda a: L.svdvals(a).sum(),
        7.179074488573097,
        [
            [0.3556309819 + 0.6044981209j, 0.1960777273 - 0.1786277686j],
            [0.677547066 - 0.1047665458j, 0.3415831078 + 0.2123426663j],
            [-0.1645798945 + 0.1047665458j, 0.7325535428 - 0.480876829j],
        ],
    ),
    "qr_q": (CA, lambda a: (L.qr(a)[0].abs() ** 2 * t(CW2)).sum(), 7.487388120423109, GQ),
    "svd_u": (
        CA,
        lambda a: (L.svd(a, full_matrices=False)[0].abs() ** 2 * t(CW2)).sum(),
        7.48738812042311,
        GQ,  # U spans the same columns as Q: the same loss, the same gradient
    ),
    "qr_r": (
        CA,
        lambda a: (L.qr(a)[1].abs() ** 2 * t(W123[:2])).sum(),
        43.0,
        [[2 + 4j, 2 - 4j], [4 - 1j, 4 + 4j], [-2 + 1j, 12 - 8j]],
    ),
    "eigh_values": (
        CH,
        lambda a: (L.eigh(a)[0] * t(W123)).sum(),
        35.34321418830412,
        [
            [1.5680003618, 0.3866935033 + 0.757396606j, -0.0319808011 + 0.1453755499j],
            [0.3866935033 - 0.757396606j, 2.3174017675, 0.322731901 - 0.0159904006j],
            [-0.0319808011 - 0.1453755499j, 0.322731901 + 0.0159904006j, 2.1145978708],
        ],
    ),
    "eigh_vectors": (
        CH,
        lambda a: (L.eigh(a)[1].abs() ** 2 * t(CW3)).sum(),
        15.12714946887428,
        [
            [-0.0217322922, -0.016597803 - 0.0273277917j, 0.0117356285 + 0.0380743828j],
            [-0.016597803 + 0.0273277917j, -0.0461261767, 0.0644131372 + 0.0058678143j],
            [0.0117356285 - 0.0380743828j, 0.0644131372 - 0.0058678143j, 0.0678584689],
        ],
    ),
    "cholesky": (
        CH,
        lambda a: L.cholesky(a).real.sum(),
        7.218063781985588,
        [
            [0.277811818 + 0.1543633575j, 0.1964743156 - 0.122185889j, 0.204637819 - 0.1266996194j],
            [
                0.2025115718 + 0.1252045171j,
                0.199030287 - 0.0060372562j,
                0.1934404763 + 0.0059958763j,
            ],
            [0.204637819 + 0.1266996194j, 0.1934404763 - 0.0059958763j, 0.2278432977],
        ],
    ),
    "cholesky_upper": (
        CH,
        lambda a: L.cholesky(a, upper=True).imag.sum(),
        1.1926460665323595,
        [
            [
                -0.1400248741 - 0.3967745619j,
                -0.161428054 + 0.3156001967j,
                0.1027161144 + 0.180654314j,
            ],
            [
                0.1010554925 - 0.1783625472j,
                0.0060372562 - 0.2714773608j,
                0.0059958763 + 0.2653909914j,
            ],
            [0.1266996194 - 0.204637819j, -0.0059958763 - 0.1934404763j, -0.2278432977j],
        ],
    ),
    "lstsq": (
        CA,
        lambda a: (
            L.lstsq(a, st.tensor([[1.0], [2j], [3.0]], dtype=st.complex128)).solution.abs().sum()
        ),
        1.1473250685599603,
        [
            [-0.0055385432 - 0.0715294797j, -0.0218041083 - 0.2139088778j],
            [-0.0552050696 + 0.0582094875j, -0.2836733698 - 0.1235488451j],
            [-0.046160648 + 0.051444371j, -0.1725671024 + 0.1045894091j],
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(TORCH_COMPLEX_GRADS))
@pytest.mark.parametrize("place", [dict(shards=2), dict(layout=st.Layout.replicated())])
def test_complex_decomposition_gradients_match_torch(name, place):
    a, loss, value, grad = TORCH_COMPLEX_GRADS[name]
    x = st.tensor(a, dtype=st.complex128, requires_grad=True, **place)
    out = loss(x)
    out.backward()
    assert out.dtype == st.float64 and abs(out.item() - value) < 1e-9
    assert_matches_numpy(x.grad, np.array(grad), dtype=st.complex128, atol=1e-9)


CZ = rng.standard_normal((2, 5, 3)) + 1j * rng.standard_normal((2, 5, 3))
CHP = CZ.conj().transpose(0, 2, 1) @ CZ + np.eye(3)  # (2, 3, 3) Hermitian positive-definite


@pytest.mark.parametrize("place", BATCH_PLACES, ids=BATCH_IDS)
@pytest.mark.parametrize("dtype", [st.complex64, st.complex128], ids=["c64", "c128"])
def test_complex_decompositions(place, dtype):
    tol = TOL if dtype == st.complex128 else dict(rtol=1e-4, atol=1e-4)
    z, h = st.tensor(CZ, dtype=dtype, **place), st.tensor(CHP, dtype=dtype, **place)
    real = st.float64 if dtype == st.complex128 else st.float32
    lo = L.cholesky(h)
    assert lo.dtype == dtype
    assert_matches_numpy(lo, np.linalg.cholesky(CHP), **tol)
    assert_matches_numpy(L.cholesky(h, upper=True), np.linalg.cholesky(CHP).conj().mT, **tol)
    w, v = L.eigh(h)
    assert w.dtype == real and v.dtype == dtype and L.eigvalsh(h).dtype == real
    assert_matches_numpy(w, np.linalg.eigvalsh(CHP), **tol)
    assert_matches_numpy(L.eigvalsh(h, UPLO="U"), np.linalg.eigvalsh(CHP), **tol)
    vn = v.numpy()
    assert np.abs(CHP @ vn - vn * w.numpy()[:, None, :]).max() < 1e-4  # A V = V diag(w)
    u, s, vh = L.svd(z, full_matrices=False)
    assert s.dtype == real and u.dtype == vh.dtype == dtype
    assert_matches_numpy(s, np.linalg.svd(CZ, compute_uv=False), **tol)
    assert_matches_numpy(L.svdvals(z), np.linalg.svd(CZ, compute_uv=False), **tol)
    assert np.abs((u.numpy() * s.numpy()[:, None, :]) @ vh.numpy() - CZ).max() < 1e-4
    assert L.svd(z).U.shape == (2, 5, 5)
    q, r = L.qr(z)
    qn, rn = q.numpy(), r.numpy()
    assert np.abs(qn @ rn - CZ).max() < 1e-4 and np.allclose(np.triu(rn), rn)
    d = np.diagonal(rn, axis1=-2, axis2=-1)  # R's diagonal real and positive: the unique QR
    assert np.all(d.real > 0) and np.all(d.imag == 0)
    assert np.abs(qn.conj().mT @ qn - np.eye(3)).max() < 1e-5
    assert L.qr(z, mode="complete").Q.shape == (2, 5, 5)
    b = CZ[..., :2] + 1j
    sol = L.lstsq(z, st.tensor(b, dtype=dtype), driver="gelsd")
    assert sol.residuals.dtype == real and sol.singular_values.dtype == real
    ref = [np.linalg.lstsq(CZ[i], b[i], rcond=None) for i in range(2)]
    assert_matches_numpy(sol.solution, np.stack([x[0] for x in ref]), **tol)
    assert_matches_numpy(sol.residuals, np.stack([x[1] for x in ref]), rtol=1e-4)


def test_complex_not_positive_definite_raises():
    bad = np.array([[1, 2j], [-2j, 1]])  # Hermitian, eigenvalues -1 and 3
    with pytest.raises(L.LinAlgError, match="positive-definite"):
        L.cholesky(st.tensor(bad, dtype=st.complex128))
    assert L.cholesky_ex(st.tensor(bad)).info.item() == 2


COMPLEX_GRADCHECKS = {
    "svdvals": lambda a: L.svdvals(a),
    "svd_usv": lambda a: (lambda u, s, vh: (u * s) @ vh)(*L.svd(a, full_matrices=False)),
    "svd_wide_phase_free": lambda a: (lambda u, s, vh: u[:, :1] @ vh[:1])(*L.svd(a.mT)),
    "qr": lambda a: L.qr(a),
    "eigh": lambda a: (lambda w, v: (w, v.abs() ** 2))(*L.eigh(a)),
    "eigvalsh": lambda a: L.eigvalsh(a[:3] @ a[:3].conj().mT),
    "cholesky": lambda a: L.cholesky(a.conj().mT @ a),
    "cholesky_upper": lambda a: L.cholesky(a.conj().mT @ a, upper=True),
    "lstsq": lambda a: L.lstsq(a, st.ones(5, 2, dtype=st.complex128)).solution,
    "pinv": lambda a: L.pinv(a),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_GRADCHECKS))
def test_gradcheck_complex_decompositions(name):
    m = rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))
    if name == "eigh":  # a Hermitian input whose eigenvalues are well apart
        m = m[:3] @ m[:3].conj().T + np.diag([1.0, 4.0, 9.0])
        fn = COMPLEX_GRADCHECKS[name]
        x = st.tensor(m, requires_grad=True, shards=2)
        # only the lower triangle is read: perturb a Hermitian matrix through it
        assert gradcheck(lambda a: fn(st.tril(a) + st.tril(a, -1).conj().mT), (x,))
        return
    x = st.tensor(m, requires_grad=True, shards=2)
    assert gradcheck(COMPLEX_GRADCHECKS[name], (x,))


# ------------------------------------------------------------------------------ torch audit
# torch (CPU) returns empty (0,) outputs for what the chosen LAPACK driver does not compute.
@pytest.mark.parametrize("place", [dict(shards=2), dict(layout=st.Layout.replicated())])
def test_lstsq_outputs_follow_the_driver(place):
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    A, B = t(a, **place), t(b, **place)
    ref = [np.linalg.lstsq(a[i], b[i], rcond=None) for i in range(2)]
    shapes = {  # driver: residuals, rank, singular_values
        None: ((0,), (2,), (0,)),  # gelsy, torch's CPU default
        "gelsy": ((0,), (2,), (0,)),
        "gelsd": ((2, 2), (2,), (2, 3)),
        "gelss": ((2, 2), (2,), (2, 3)),
        "gels": ((2, 2), (0,), (0,)),
    }
    for driver, want in shapes.items():
        r = L.lstsq(A, B, driver=driver)
        assert_matches_numpy(r.solution, np.stack([x[0] for x in ref]), **TOL)
        assert (
            tuple(r.residuals.shape),
            tuple(r.rank.shape),
            tuple(r.singular_values.shape),
        ) == want
        assert r.rank.dtype == st.int64
    assert_matches_numpy(
        L.lstsq(A, B, driver="gels").residuals, np.stack([x[1] for x in ref]), **TOL
    )
    low = a[0].copy()
    low[:, 2] = low[:, 1]  # rank-deficient: gelsd drops the residuals
    r = L.lstsq(t(low), t(b[0]), driver="gelsd")
    assert r.residuals.shape == (0,) and r.rank.item() == 2 and r.singular_values.shape == (3,)
    with pytest.raises(st.ArgumentError, match="driver"):
        L.lstsq(A, B, driver="bogus")


def test_solvers_refuse_mixed_dtypes():
    a = st.tensor([[2.0, 0.0], [0.0, 1.0]])  # float32
    b = st.tensor([[1.0], [1.0]], dtype=st.float64)
    for fn in (L.solve, L.lstsq, L.solve_ex):  # torch: "Expected A and B to have the same dtype"
        with pytest.raises(st.DTypeError, match="same dtype"):
            fn(a, b)
