"""Public decompositions and solvers of ``st.linalg`` (re-exported by ``sharded/linalg.py``).

Thin wrappers with torch's signatures and shape rules over the batched planner
(``ops/linalg.py``: one kernel per shard) and the distributed big-matrix planners
(``ops/linalg_dist.py``). Unlike the planners, this module works on tensors (it dispatches
through ``tensor.apply``, where autograd records), so it is imported only by ``linalg.py``.
"""

from __future__ import annotations

import collections
import math

from .. import dtypes as D
from .. import functional as F
from ..errors import ArgumentError, ShapeError
from ..core.dispatch import apply
from ..tensor import ShardedTensor
from . import linalg_dist as dist
from .linalg import GATHER_LIMIT, LinAlgError, check_float  # noqa: F401

QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
LstsqResult = collections.namedtuple("LstsqResult",
                                     ["solution", "residuals", "rank", "singular_values"])
ExResult = collections.namedtuple("ExResult", ["result", "info"])


def _t(x):
    if isinstance(x, ShardedTensor):
        return x
    from .creation import tensor
    return tensor(x)


def _dims(s) -> str:
    return "x".join(map(str, s))


def matmul(a, b):
    from ..linalg import matmul as mm
    return mm(a, b)


# ------------------------------------------------------------------------------ helpers
def _square(op, a):
    """``a`` as a float tensor of square matrices (typed errors name the shape)."""
    a = _matrix(op, a)
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"linalg.{op}: A must be batches of square matrices, but they are "
                         f"{_dims(a.shape[-2:])} matrices")
    return a


def _matrix(op, a):
    """``a`` as a float tensor of at least 2 dims."""
    a = _t(a)
    if a.ndim < 2:
        raise ShapeError(f"linalg.{op}: the input tensor A must have at least 2 dimensions "
                         f"(got shape {tuple(a.shape)})")
    check_float(op, a)
    return a


def _same(op, a, b):
    check_float(op, a, b)
    dt = D.promote_types(a.dtype, b.dtype)
    return a.to(dt), b.to(dt)


def _rhs(op, a, b):
    """torch's rule: ``b`` is a (batch of) vector(s) if 1-D or of shape ``a.shape[:-1]``."""
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    bm = b.unsqueeze(-1) if vector else b
    if bm.ndim < 2 or bm.shape[-2] != a.shape[-2]:
        raise ShapeError(f"linalg.{op}: incompatible shapes of A and B for the equation AX = B "
                         f"({_dims(a.shape)} and {_dims(b.shape)})")
    return bm, vector


def _batched(op, *ts, **params):
    return apply(f"linalg_{op}", *ts, **params)


# ------------------------------------------------------------------------------ solvers
def solve_ex(A, B, *, left=True, check_errors=False):
    """:func:`solve` returning ``(result, info)`` without checking for singular matrices
    (``info`` is non-zero where the matrix is singular; no wait for the workers). One split
    2-D matrix is solved on one worker here (up to ``GATHER_LIMIT`` bytes).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.solve_ex(st.eye(2), st.ones(2)).info.tolist()
    0
    """
    A, B = _same("solve", _square("solve", A), _t(B))
    if not left:
        r = solve_ex(A.mT, B.mT, check_errors=check_errors)
        return ExResult(r.result.mT, r.info)
    bm, vector = _rhs("solve", A, B)
    x, info = _batched("solve", A, bm, check=check_errors, want_info=True)
    return ExResult(x.squeeze(-1) if vector else x, info)


def solve(A, B, *, left=True):
    """The solution ``X`` of ``A X = B`` (or ``X A = B`` with ``left=False``).

    Batches (broadcast, any batch split) solve one kernel per shard; one big split matrix
    uses the distributed block LU with partial pivoting. A singular matrix raises
    :class:`LinAlgError` naming the batch element.

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[3., 1.], [1., 2.]])
    >>> st.linalg.solve(A, st.tensor([9., 8.])).tolist()
    [2.0, 3.0]
    """
    A, B = _same("solve", _square("solve", A), _t(B))
    if not left:
        return solve(A.mT, B.mT).mT
    bm, vector = _rhs("solve", A, B)
    x = apply("lu_solve", A, bm) if dist.is_big(A) else _batched("solve", A, bm)
    return x.squeeze(-1) if vector else x


def inv(A):
    """The inverse of (a batch of) square matrices; singular ones raise :class:`LinAlgError`.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.inv(st.tensor([[2., 0.], [0., 4.]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    A = _square("inv", A)
    if dist.is_big(A):
        from .creation import eye
        eye_ = eye(A.shape[0], dtype=A.dtype, layout=dist.rows_like(A))
        return apply("lu_solve", A, eye_, op="inv")
    return _batched("inv", A)


def inv_ex(A, *, check_errors=False):
    """:func:`inv` returning ``(inverse, info)`` without raising.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.inv_ex(st.zeros(2, 2)).info.item() != 0
    True
    """
    A = _square("inv", A)
    return ExResult(*_batched("inv", A, check=check_errors, want_info=True))


def det(A):
    """Determinant of (a batch of) square matrices (a big split matrix: from its block LU).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.det(st.tensor([[1., 2.], [3., 4.]])).item()  # doctest: +ELLIPSIS
    -2.0...
    """
    A = _square("det", A)
    if dist.is_big(A):
        s, la = apply("lu_slogdet", A)
        return s * F.exp(la)
    return _batched("det", A)


def slogdet(A):
    """``(sign, log|det|)`` of (a batch of) square matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.slogdet(st.tensor([[2., 0.], [0., 3.]])).sign.item()
    1.0
    """
    A = _square("slogdet", A)
    if dist.is_big(A):
        return SlogdetResult(*apply("lu_slogdet", A))
    return SlogdetResult(*_batched("slogdet", A))


def cholesky(A, *, upper=False):
    """Cholesky factor ``L`` (``A = L L^T``; ``U = L^T`` with ``upper=True``) of symmetric
    positive-definite matrices; a failure raises :class:`LinAlgError` naming the element.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.cholesky(st.tensor([[4., 2.], [2., 2.]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    A = _square("cholesky", A)
    if dist.is_big(A):
        u = apply("cholesky_dist", A)  # rows blocked cyclically: back to A's layout
        return (u if upper else u.mT).reshard(layout=A.layout)
    return _batched("cholesky", A, upper=upper)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`cholesky` returning ``(L, info)``; ``info`` is the order of the first leading
    minor that is not positive-definite (0: success).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.cholesky_ex(st.tensor([[1., 2.], [2., 1.]])).info.item()
    2
    """
    A = _square("cholesky", A)
    return ExResult(*_batched("cholesky", A, upper=upper, check=check_errors, want_info=True))


# ------------------------------------------------------------------------------ spectra
def eigvals(A, *, as_real=False):
    """Eigenvalues of (a batch of) square matrices.

    sharded has no complex dtype yet: real eigenvalues come back as a real tensor (NumPy's
    rule); if any is complex a :class:`~sharded.errors.DTypeError` says so, unless
    ``as_real=True``, which always returns ``(..., n, 2)`` (real, imaginary) pairs, torch's
    ``view_as_real`` layout. A big split matrix is gathered on one worker up to
    :data:`GATHER_LIMIT` bytes; above, an error says so.

    Examples
    --------
    >>> import sharded as st
    >>> sorted(st.linalg.eigvals(st.tensor([[2., 0.], [0., 3.]])).tolist())
    [2.0, 3.0]
    """
    A = _square("eigvals", A)
    re, im = _batched("eigvals", A)
    if as_real:
        return apply("cat", re.unsqueeze(-1), im.unsqueeze(-1), dim=re.ndim)  # stack
    if (im != 0).any().item():
        raise D.DTypeError("linalg.eigvals: the matrix has complex eigenvalues and sharded has "
                           "no complex dtype; pass as_real=True for (real, imag) pairs")
    return re


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.eigh(st.tensor([[2., 0.], [0., 1.]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    A = _square("eigh", A)
    return EighResult(*_batched("eigh", A, uplo=UPLO))


def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.eigvalsh(st.tensor([[2., 0.], [0., 1.]])).tolist()
    [1.0, 2.0]
    """
    A = _square("eigvalsh", A)
    return _batched("eigvalsh", A, uplo=UPLO)


def svd(A, full_matrices=True):
    """``A = U diag(S) Vh``. A tall split matrix (reduced) goes through the distributed QR:
    ``U = Q U_R`` stays row-sharded, ``S`` and ``Vh`` are small and replicated.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.svd(st.tensor([[3., 0.], [0., 4.]])).S.tolist()
    [4.0, 3.0]
    """
    A = _matrix("svd", A)
    if not full_matrices and dist.is_tall(A):
        q, r = apply("qr_tall", A)
        u, s, vh = _batched("svd", r, full_matrices=False)
        return SVDResult(matmul(q, u), s, vh)
    return SVDResult(*_batched("svd", A, full_matrices=full_matrices))


def svdvals(A):
    """Singular values, descending (a tall split matrix: through the distributed QR).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.svdvals(st.tensor([[3., 0.], [0., 4.]])).tolist()
    [4.0, 3.0]
    """
    A = _matrix("svdvals", A)
    if dist.is_tall(A):
        return _batched("svdvals", apply("qr_tall", A)[1])
    return _batched("svdvals", A)


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
    A = _matrix("qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise ArgumentError(f"qr received unrecognized mode {mode!r} but expected one of "
                            f"'reduced' (default), 'r', or 'complete'")
    if method not in ("auto", "tsqr", "cholqr2"):
        raise ArgumentError(f"qr: method must be 'auto', 'tsqr' or 'cholqr2', got {method!r}")
    if dist.is_tall(A) and (mode != "complete" or A.shape[0] == A.shape[1]):
        q, r = apply("qr_tall", A, method=method)
        if mode == "r":
            from .creation import empty
            return QRResult(empty(0, dtype=A.dtype), r)
        return QRResult(q, r)
    if mode == "r":
        from .creation import empty
        return QRResult(empty(0, dtype=A.dtype), _batched("qr", A, mode="r"))
    return QRResult(*_batched("qr", A, mode=mode))


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A X ~= B``: ``(solution, residuals, rank,
    singular_values)``. A tall matrix split by rows solves ``R X = Q^T B`` through the
    distributed QR (full column rank assumed; ``rank`` is then ``n``); batches use one
    NumPy ``lstsq`` per matrix. ``residuals`` are squared column norms of ``A X - B`` for
    tall systems.

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> st.linalg.lstsq(A, st.tensor([[1.], [2.], [3.]])).solution.tolist()
    [[1.0], [2.0]]
    """
    A, B = _same("lstsq", _t(A), _t(B))
    _matrix("lstsq", A)
    vector = B.ndim == A.ndim - 1
    bm = B.unsqueeze(-1) if vector else B
    if bm.shape[-2] != A.shape[-2]:
        raise ShapeError(f"linalg.lstsq: A and B must have the same number of rows, got "
                         f"{tuple(A.shape)} and {tuple(B.shape)}")
    if dist.is_tall(A) and A.ndim == 2 and bm.ndim == 2:
        q, r = apply("qr_tall", A)
        x = solve(r, matmul(q.mT, bm))
        res = F.sum((matmul(A, x) - bm) ** 2, 0)
        from .creation import full
        sv = svdvals(r)
        out = (x, res, full((), A.shape[1], dtype=D.int64), sv)
    else:
        out = _batched("lstsq", A, bm, rcond=rcond)
    x = out[0].squeeze(-1) if vector else out[0]
    return LstsqResult(x, *out[1:])


def tensorsolve(A, B, dims=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``: ``A`` reshaped to a square matrix
    ``(prod(B.shape), prod(rest))`` and solved (distributed when big).

    Examples
    --------
    >>> import sharded as st
    >>> A = st.eye(6).reshape(6, 2, 3)
    >>> st.linalg.tensorsolve(A, st.ones(6)).shape
    sharded.Size([2, 3])
    """
    A, B = _t(A), _t(B)
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute([d for d in range(A.ndim) if d not in dims] + dims)
    nb = B.ndim
    xshape = tuple(A.shape[nb:])
    n = math.prod(B.shape)
    if tuple(A.shape[:nb]) != tuple(B.shape) or math.prod(xshape) != n:
        raise ShapeError(f"linalg.tensorsolve: expected prod(A.shape[B.ndim:]) == B.numel() "
                         f"with A.shape[:B.ndim] == B.shape, got A {tuple(A.shape)} and B "
                         f"{tuple(B.shape)}")
    return solve(A.reshape(n, n), B.reshape(n)).reshape(xshape)


