"""Decompositions of ``st.linalg``: ``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``,
``eigvalsh``, ``eigvals`` and ``eig`` (complex results, as torch), each a batched primitive
(``linalg_<op>``: one ``linalg`` kernel per batch block, see ``batched.py``) with its gradient
rule, and the public functions that pick the
distributed algorithm for one big split matrix (``cholesky.py``, ``tall.py``).

Gradient rules follow torch's: the singular vectors and eigenvectors are defined up to sign,
so only sign-invariant functions of them have a gradient; repeated singular values or
eigenvalues make the rules divide by zero (torch's caveat too).
"""

from __future__ import annotations

import collections

from .... import dtypes as D
from ....core.dispatch import apply, placement
from ....core.registry import bind, primitive, vjp
from ....errors import ArgumentError, AutogradError
from ....layout import Layout
from .batched import ExResult, cj, herm, linalg_kernel, matrix, plan_batched, square
from .cholesky import chol_grad
from .lu_dist import is_big
from .tall import is_tall, qr_grad

QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def _eye(k, dtype):
    """A small identity replicated on every worker (masks of k x k gradient terms)."""
    return apply("eye", placement((k, k), layout=Layout.replicated()), dtype)


def _offdiag_inverse(d, eye):
    """``1 / d`` off the diagonal, 0 on it (the diagonal of ``d`` is 0)."""
    off = eye == 0
    return (1.0 / d.where(off, 1.0)).where(off, 0.0)


def _zeros_like(x):
    return apply("full", x._layout, 0, x.dtype)


# ------------------------------------------------------------------------------ cholesky
@primitive("linalg_cholesky", kind="linalg", kernels=[linalg_kernel])
def _plan_cholesky(ex, *ts, **params):
    """Batched ``cholesky``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "cholesky", ts, **params)


@vjp("linalg_cholesky", save_out=True)
def linalg_cholesky_vjp(gs, node):
    out = node.saved["out"][0]
    upper = node.params.get("upper", False)
    lo, gl = (herm(out), herm(gs[0])) if upper else (out, gs[0])
    return (chol_grad(lo, gl),)


@bind("cholesky", prim="linalg_cholesky")
def cholesky(A, *, upper=False):
    """Cholesky factor ``L`` (``A = L L^H``; ``U = L^H`` with ``upper=True``) of symmetric
    (complex: Hermitian) positive-definite matrices, only the lower triangle read; a failure
    raises :class:`LinAlgError` naming the element.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.cholesky(st.tensor([[4., 2.], [2., 2.]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    A = square("cholesky", A)
    if is_big(A):
        u = apply("cholesky_dist", A)  # rows blocked cyclically: back to A's layout
        return (u if upper else herm(u)).reshard(layout=A.layout)
    return apply("linalg_cholesky", A, upper=upper)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`cholesky` returning ``(L, info)``; ``info`` is the order of the first leading
    minor that is not positive-definite (0: success).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.cholesky_ex(st.tensor([[1., 2.], [2., 1.]])).info.item()
    2
    """
    A = square("cholesky", A)
    return ExResult(*apply("linalg_cholesky", A, upper=upper, check=check_errors, want_info=True))


# ------------------------------------------------------------------------------ qr
@primitive("linalg_qr", kind="linalg", kernels=[linalg_kernel])
def _plan_qr(ex, *ts, **params):
    """Batched ``qr``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "qr", ts, **params)


@vjp("linalg_qr", save_out=True)
def linalg_qr_vjp(gs, node):
    (a,) = node.args
    mode = node.params.get("mode", "reduced")
    m, n = a.shape[-2], a.shape[-1]
    if mode == "r" or (mode == "complete" and m > n) or m < n:
        raise AutogradError(
            f"the derivative of qr is implemented for mode='reduced' (or "
            f"'complete' with m <= n) and m >= n; got mode={mode!r} for "
            f"{m}x{n} matrices"
        )
    q, r = node.saved["out"]
    return (qr_grad(q, r, gs[0], gs[1]),)


@bind("qr", prim="linalg_qr")
def qr(A, mode="reduced", *, method="auto"):
    """QR decomposition with ``R``'s diagonal non-negative (the unique QR of a full-rank
    matrix, whatever the layout; LAPACK/torch may differ by column signs). A tall matrix
    split by rows (any number of blocks, uneven too) uses CholeskyQR2 with a TSQR fallback
    for ill-conditioned input (``method="tsqr"`` or ``"cholqr2"`` forces one): ``Q`` keeps
    ``A``'s row layout, ``R`` is replicated. ``mode`` is ``"reduced"``, ``"complete"`` or
    ``"r"``.

    Examples
    --------
    >>> import sharded as st
    >>> q, r = st.linalg.qr(st.tensor([[3., 0.], [4., 5.]]))
    >>> [round(v, 6) for v in r[0].tolist()]
    [5.0, 4.0]
    """
    A = matrix("qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise ArgumentError(
            f"qr received unrecognized mode {mode!r} but expected one of "
            f"'reduced' (default), 'r', or 'complete'"
        )
    if method not in ("auto", "tsqr", "cholqr2"):
        raise ArgumentError(f"qr: method must be 'auto', 'tsqr' or 'cholqr2', got {method!r}")
    if is_tall(A) and (mode != "complete" or A.shape[0] == A.shape[1]):
        q, r = apply("qr_tall", A, method=method)
        if mode == "r":
            return QRResult(apply("empty", placement((0,)), A.dtype), r)
        return QRResult(q, r)
    if mode == "r":
        return QRResult(apply("empty", placement((0,)), A.dtype), apply("linalg_qr", A, mode="r"))
    return QRResult(*apply("linalg_qr", A, mode=mode))


# ------------------------------------------------------------------------------ svd
@primitive("linalg_svd", kind="linalg", kernels=[linalg_kernel])
def _plan_svd(ex, *ts, **params):
    """Batched ``svd``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "svd", ts, **params)


@vjp("linalg_svd", save_out=True)
def linalg_svd_vjp(gs, node):
    """torch's rule for ``A = U diag(S) Vh`` (reduced), in torch's gradient convention (the
    engine's gradients conjugated on the way in and out, see :func:`~.batched.cj`): with
    ``F_ij = 1 / (s_j^2 - s_i^2)`` off the diagonal, ``J = F * (U^H gU - gU^H U)`` and
    ``K = F * (Vh gVh^H - gVh Vh^H)``, ``gA = U (diag(gS) + J S + S K + D) Vh
    + (I - U U^H) gU S^-1 Vh + U S^-1 gVh (I - Vh^H Vh)``, where for complex ``D`` is
    ``diag(U^H gU - gU^H U) / (2 S)`` (the phase of each singular pair; torch's term).
    With ``full_matrices=True`` the columns of U and rows of Vh beyond ``min(m, n)`` get no
    gradient (torch ignores them too)."""
    u, s, vh = node.saved["out"]
    gu, gs_, gvh = (cj(g) for g in gs)
    k = s.shape[-1]
    if node.params.get("full_matrices", True):  # keep the part determined by A
        u, vh = u[..., :, :k], vh[..., :k, :]
        gu = gu[..., :, :k] if gu is not None else None
        gvh = gvh[..., :k, :] if gvh is not None else None
    eye = _eye(k, s.dtype)
    sc = s.unsqueeze(-2)  # scales columns: X S
    inner = gs_.unsqueeze(-1) * eye if gs_ is not None else _zeros_like(eye * sc)
    s2 = s * s
    f = _offdiag_inverse(s2.unsqueeze(-2) - s2.unsqueeze(-1), eye)
    out = None
    if gu is not None:
        utg = herm(u) @ gu
        skew = utg - herm(utg)
        inner = inner + (f * skew) * sc
        if skew.dtype.is_complex:  # its diagonal is imaginary: the singular vectors' phases
            inner = inner + (skew * eye) / (2.0 * sc)
        # the part of gU outside U's column space (zero for a square or wide A)
        out = ((gu - u @ utg) / sc) @ vh
    if gvh is not None:
        vtg = vh @ herm(gvh)
        inner = inner + s.unsqueeze(-1) * (f * (vtg - herm(vtg)))
        rest = u @ ((gvh - (gvh @ herm(vh)) @ vh) / s.unsqueeze(-1))
        out = rest if out is None else out + rest
    main = u @ inner @ vh
    return (cj(main if out is None else main + out),)


def svd(A, full_matrices=True):
    """``A = U diag(S) Vh``. A tall split matrix (reduced) goes through the distributed QR:
    ``U = Q U_R`` stays row-sharded, ``S`` and ``Vh`` are small and replicated.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.svd(st.tensor([[3., 0.], [0., 4.]])).S.tolist()
    [4.0, 3.0]
    """
    A = matrix("svd", A)
    if not full_matrices and is_tall(A):
        q, r = apply("qr_tall", A)
        u, s, vh = apply("linalg_svd", r, full_matrices=False)
        return SVDResult(q @ u, s, vh)
    return SVDResult(*apply("linalg_svd", A, full_matrices=full_matrices))


@primitive("linalg_svdvals", kind="linalg", kernels=[linalg_kernel])
def _plan_svdvals(ex, *ts, **params):
    """Batched ``svdvals``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "svdvals", ts, **params)


@vjp("linalg_svdvals", saves=(0,))
def linalg_svdvals_vjp(gs, node):
    (a,) = node.args
    u, _, vh = svd(a, full_matrices=False)
    return (cj((u * gs[0].unsqueeze(-2)) @ vh),)  # dS_i = re(u_i^H dA v_i)


def svdvals(A):
    """Singular values, descending (a tall split matrix: through the distributed QR).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.svdvals(st.tensor([[3., 0.], [0., 4.]])).tolist()
    [4.0, 3.0]
    """
    A = matrix("svdvals", A)
    if is_tall(A):
        return apply("linalg_svdvals", apply("qr_tall", A)[1])
    return apply("linalg_svdvals", A)


# ------------------------------------------------------------------------------ eigen
@primitive("linalg_eigh", kind="linalg", kernels=[linalg_kernel])
def _plan_eigh(ex, *ts, **params):
    """Batched ``eigh``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "eigh", ts, **params)


def _eigh_grad(w, v, gw, gv):
    """torch's rule for Hermitian ``A = V diag(w) V^H`` (in torch's gradient convention, the
    engine's conjugated in and out): with ``E_ij = w_j - w_i``,
    ``gA = V (diag(gw) + offdiag(skew(V^H gV) / E)) V^H``, ``skew(X) = (X - X^H) / 2``."""
    gv = cj(gv)
    eye = _eye(w.shape[-1], w.dtype)
    inner = gw.unsqueeze(-1) * eye if gw is not None else None
    if gv is not None:
        vtg = herm(v) @ gv
        rest = (0.5 * (vtg - herm(vtg))) * _offdiag_inverse(w.unsqueeze(-2) - w.unsqueeze(-1), eye)
        inner = rest if inner is None else inner + rest
    if inner.dtype != v.dtype:  # real eigenvalue grads meet complex vectors: matmul wants one dtype
        inner = inner.to(v.dtype)
    return cj(v @ inner @ herm(v))


@vjp("linalg_eigh", save_out=True)
def linalg_eigh_vjp(gs, node):
    w, v = node.saved["out"]
    return (_eigh_grad(w, v, gs[0], gs[1]),)


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of symmetric (complex:
    Hermitian) matrices, only the ``UPLO`` triangle read.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.eigh(st.tensor([[2., 0.], [0., 1.]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    A = square("eigh", A)
    return EighResult(*apply("linalg_eigh", A, uplo=UPLO))


@primitive("linalg_eigvalsh", kind="linalg", kernels=[linalg_kernel])
def _plan_eigvalsh(ex, *ts, **params):
    """Batched ``eigvalsh``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "eigvalsh", ts, **params)


@vjp("linalg_eigvalsh", saves=(0,))
def linalg_eigvalsh_vjp(gs, node):
    """``d w_i = v_i^H dA v_i``: ``gA = V diag(gw) V^H`` (eigenvectors recomputed)."""
    w, v = apply("linalg_eigh", node.args[0], uplo=node.params.get("uplo", "L"))
    return (_eigh_grad(w, v, gs[0], None),)


def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending, real) of symmetric (complex: Hermitian) matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.eigvalsh(st.tensor([[2., 0.], [0., 1.]])).tolist()
    [1.0, 2.0]
    """
    A = square("eigvalsh", A)
    return apply("linalg_eigvalsh", A, uplo=UPLO)


@primitive("linalg_eigvals", kind="linalg", kernels=[linalg_kernel])
def _plan_eigvals(ex, *ts, **params):
    """Batched ``eigvals``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "eigvals", ts, **params)


def _eigvals_grad(A, gw):
    """``gA = V^-T diag(gw) V^T`` (eigenvalues are analytic in A; the engine's convention
    needs no conjugates); a real ``A`` keeps the real part (the engine takes it)."""
    _, v = apply("linalg_eig", A)
    vt = v.mT
    return apply("linalg_solve", vt, gw.unsqueeze(-1) * vt)


@vjp("linalg_eigvals", saves=(0,))
def linalg_eigvals_vjp(gs, node):
    return (_eigvals_grad(node.args[0], gs[0]),)


def eigvals(A):
    """Eigenvalues of (a batch of) square matrices, complex as in torch (``complex64`` for
    float32 input, ``complex128`` for float64). A big split matrix is gathered on one worker
    up to :data:`GATHER_LIMIT` bytes; above, an error says so.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.eigvals(st.tensor([[0., 1.], [-1., 0.]])).tolist()
    [1j, -1j]
    """
    A = square("eigvals", A)
    return apply("linalg_eigvals", A)


@primitive("linalg_eig", kind="linalg", kernels=[linalg_kernel])
def _plan_eig(ex, *ts, **params):
    """Batched ``eig``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "eig", ts, **params)


@vjp("linalg_eig", saves=(0,), save_out=True)
def linalg_eig_vjp(gs, node):
    """torch's ``linalg_eig_backward`` (unit-norm eigenvectors, each up to a phase): with
    ``E[i, j] = conj(L_j - L_i)`` (1 on the diagonal), ``P = V^H gV - V^H V diag(Re(diag(V^H
    gV)))``: ``gA = V^-H (P / E + diag(gL)) V^H``, in torch's convention (conjugated in and
    out, see :func:`~.batched.cj`); a real ``A`` takes the real part."""
    gl, gv = gs
    if gv is None:
        return (_eigvals_grad(node.args[0], gl),)
    a = node.args[0]
    lam, v = node.saved["out"]
    gv = cj(gv)
    vh = herm(v)
    vhgv = vh @ gv
    p = vhgv - vh @ (v * vhgv.diagonal(0, -2, -1).real.unsqueeze(-2))
    lc = lam.conj()
    e = lc.unsqueeze(-2) - lc.unsqueeze(-1)
    n = lam.shape[-1]
    eye = apply("eye", placement((n, n), dtype=D.bool_), D.bool_)
    ga = p / e.masked_fill(eye, 1.0)
    if gl is not None:
        ga = ga + cj(gl).diag_embed()
    ga = cj(apply("linalg_solve", vh, ga @ vh))
    return (ga.real if not a.dtype.is_complex else ga,)


EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def eig(A):
    """Eigenvalues and right eigenvectors (columns, unit norm) of (a batch of) square
    matrices, both complex as in torch.

    Examples
    --------
    >>> import sharded as st
    >>> w, v = st.linalg.eig(st.tensor([[2., 0.], [0., 3.]]))
    >>> w.tolist(), v.dtype
    ([(2+0j), (3+0j)], sharded.complex64)
    """
    A = square("eig", A)
    return EigResult(*apply("linalg_eig", A))
