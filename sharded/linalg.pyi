from typing import NamedTuple

from sharded.ops.linalg.prims.batched import LinAlgError as LinAlgError
from sharded.tensor import (
    ShardedTensor,
    _EigResult,
    _LDLFactorExResult,
    _LDLFactorResult,
    _LUFactorExResult,
    _LUFactorResult,
    _LUResult,
)

GATHER_LIMIT: int

class EighResult(NamedTuple):
    eigenvalues: ShardedTensor
    eigenvectors: ShardedTensor

class ExResult(NamedTuple):
    result: ShardedTensor
    info: ShardedTensor

class LstsqResult(NamedTuple):
    solution: ShardedTensor
    residuals: ShardedTensor
    rank: ShardedTensor
    singular_values: ShardedTensor

class QRResult(NamedTuple):
    Q: ShardedTensor
    R: ShardedTensor

class SVDResult(NamedTuple):
    U: ShardedTensor
    S: ShardedTensor
    Vh: ShardedTensor

class SlogdetResult(NamedTuple):
    sign: ShardedTensor
    logabsdet: ShardedTensor

def bmm(input, mat2) -> ShardedTensor:
    """Batched product of two 3-D tensors with equal batch sizes."""

def cholesky(A, *, upper=...) -> ShardedTensor:
    """Cholesky factor ``L`` (``A = L L^H``; ``U = L^H`` with ``upper=True``) of symmetric
    (complex: Hermitian) positive-definite matrices, only the lower triangle read; a failure
    raises :class:`LinAlgError` naming the element."""

def cholesky_ex(A, *, upper=..., check_errors=...) -> ExResult:
    """:func:`cholesky` returning ``(L, info)``; ``info`` is the order of the first leading
    minor that is not positive-definite (0: success)."""

def cond(A, p=...) -> ShardedTensor:
    """Condition number: ``s_max / s_min`` for ``p`` None or 2 (``s_min / s_max`` for -2), else
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` of square matrices, ``inf`` where ``A`` is
    singular (torch's rule). Real for complex input."""

def cross(input, other, *, dim=...) -> ShardedTensor:
    """Cross product of 3-vectors along ``dim`` (broadcasting), as ``torch.linalg.cross``."""

def det(A) -> ShardedTensor:
    """Determinant of (a batch of) square matrices (a big split matrix: from its block LU)."""

def diagonal(A, *, offset=..., dim1=..., dim2=...) -> ShardedTensor:
    """``A.diagonal(offset, dim1, dim2)``, with ``torch.linalg.diagonal``'s defaults (the last
    two dims)."""

def dot(input, other) -> ShardedTensor:
    """Inner product of two 1-D tensors (a 0-d tensor)."""

def eig(A) -> _EigResult:
    """Eigenvalues and right eigenvectors (columns, unit norm) of (a batch of) square matrices,
    both complex as in torch."""

def eigh(A, UPLO=...) -> EighResult:
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of symmetric (complex:
    Hermitian) matrices, only the ``UPLO`` triangle read."""

def eigvals(A) -> ShardedTensor:
    """Eigenvalues of (a batch of) square matrices, complex as in torch (``complex64`` for
    float32 input, ``complex128`` for float64). A big split matrix is gathered on one worker
    up to :data:`GATHER_LIMIT` bytes; above, an error says so."""

def eigvalsh(A, UPLO=...) -> ShardedTensor:
    """Eigenvalues (ascending, real) of symmetric (complex: Hermitian) matrices."""

def einsum(equation, *operands) -> ShardedTensor:
    """Einstein summation, reduced to diagonals, transposes, sums and (batched) matmuls:
    repeated indices of one operand take its diagonal, lone indices are summed, operands
    contract pairwise left to right (each pair one batched matmul), then permute to the
    output order."""

def ger(input, vec2) -> ShardedTensor:
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``."""

def householder_product(A, tau) -> ShardedTensor:
    """The first ``n`` columns of ``H_0 H_1 ... H_{k-1}`` for ``A`` (*, m, n) and ``tau`` (*,
    k), ``k <= n <= m``: ``H_i = I - tau_i v_i v_i^H`` with ``v_i`` column ``i`` of ``A``
    below the diagonal and 1 on it, as ``torch.linalg.householder_product`` (LAPACK's
    ``orgqr``/``ungqr``). Differentiable in ``A`` and ``tau``; batch dims may be split."""

def inner(input, other) -> ShardedTensor:
    """Sum of products over the last dim of both: one matmul of the flattened free dims."""

def inv(A) -> ShardedTensor:
    """The inverse of (a batch of) square matrices; singular ones raise :class:`LinAlgError`."""

def inv_ex(A, *, check_errors=...) -> ExResult:
    """:func:`inv` returning ``(inverse, info)`` without raising."""

def ldl_factor(A, *, hermitian=...) -> _LDLFactorResult:
    """:func:`ldl_factor_ex` without ``info``: ``(LD, pivots)``; a singular ``D`` raises
    :class:`LinAlgError` naming the batch element (read from ``info``: a short wait)."""

def ldl_factor_ex(A, *, hermitian=..., check_errors=...) -> _LDLFactorExResult:
    """The compact LDL factorization of (a batch of) symmetric (``hermitian=True``: Hermitian)
    matrices, as LAPACK's sytrf/hetrf (Bunch-Kaufman pivoting, the lower triangle): ``(LD,
    pivots, info)``. ``LD`` holds ``L``'s multipliers below the diagonal and the 1 x 1 and 2
    x 2 blocks of ``D`` on and next to it (its upper triangle zero); ``pivots`` (int32,
    1-based) are sytrf's ``ipiv``, a pair of equal negatives marking a 2 x 2 block; ``info``
    (int32) is the 1-based index of an exactly zero ``D[i, i]`` (0: none), and
    ``check_errors=True`` raises :class:`LinAlgError` naming the batch element where it is
    not 0. Only the lower triangle of ``A`` is read. Batch dims may be split (each block
    factored where it lies); a split matrix is gathered on one worker. Not differentiable (as
    torch)."""

def ldl_solve(LD, pivots, B, *, hermitian=...) -> ShardedTensor:
    """The solution ``X`` of ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` of ``A``
    (LAPACK's sytrs/hetrs; ``hermitian`` as given to the factorization). ``B`` (*, n, k)
    broadcasts its batch dims against ``LD``'s; ``pivots`` has ``LD``'s shape but the last
    dim and any integer dtype; invalid pivots raise ``IndexError`` at the next read. Not
    differentiable (as torch)."""

def lstsq(A, B, rcond=..., *, driver=...) -> LstsqResult:
    """Least-squares solution of ``A X ~= B``: ``(solution, residuals, rank, singular_values)``.
    A tall matrix split by rows solves ``R X = Q^T B`` through the distributed QR (``R``'s
    least squares: the minimum-norm solution also for a rank-deficient ``A``); batches use
    one NumPy ``lstsq`` per matrix. ``residuals`` are squared column norms of ``A X - B`` for
    tall systems (real, as the singular values, for complex input)."""

def lu(A, *, pivot=...) -> _LUResult:
    """The LU decomposition with partial pivoting ``A = P L U`` of (a batch of) ``m x n``
    matrices: ``P`` m x m permutation, ``L`` m x k unit lower triangular, ``U`` k x n upper
    triangular (``k = min(m, n)``); singular matrices factor without an error. ``L`` and
    ``U`` are differentiable (torch's rule, also for rectangular ``A``)."""

def lu_factor(A, *, pivot=...) -> _LUFactorResult:
    """:func:`lu_factor_ex` without ``info``: ``(LU, pivots)``; a matrix with a zero pivot
    (singular) raises :class:`LinAlgError` naming the batch element, as torch (read from
    ``info``: a short wait). :func:`lu` factors singular matrices without raising."""

def lu_factor_ex(A, *, pivot=..., check_errors=...) -> _LUFactorExResult:
    """The LU factorization with partial pivoting ``A = P L U`` of (a batch of) ``m x n``
    matrices, packed as LAPACK's getrf: ``(LU, pivots, info)``. ``LU`` holds ``U`` on and
    above the diagonal and ``L``'s multipliers below it (its unit diagonal implied);
    ``pivots`` (int32, 1-based, ``min(m, n)`` per matrix) says row ``i`` was swapped with row
    ``pivots[i]``; ``info`` (int32) is the 1-based index of the first exactly-zero pivot (0:
    none). ``check_errors=True`` raises :class:`LinAlgError` where ``info > 0``."""

def lu_solve(LU, pivots, B, *, left=..., adjoint=...) -> ShardedTensor:
    """The solution ``X`` of ``A X = B`` from :func:`lu_factor`'s ``(LU, pivots)`` of ``A`` (``X
    A = B`` with ``left=False``; ``A^H`` for ``A`` with ``adjoint=True``). Batch dims of
    ``B`` broadcast against ``LU``'s; ``B`` must have at least 2 dims. The pivots' range is
    checked (one short read, as torch). Differentiable in ``LU`` and ``B``."""

def matmul(input, other) -> ShardedTensor:
    """Matrix product with torch's rules for 1-D and batched (broadcast) operands."""

def matrix_exp(A) -> ShardedTensor:
    """The matrix exponential: scaling and squaring of an order-18 Taylor polynomial (the
    largest 1-norm of the batch sets the scaling: one short read)."""

def matrix_norm(A, ord=..., dim=..., keepdim=..., *, dtype=...) -> ShardedTensor:
    """Matrix norm over ``dim``: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``, ``2``,
    ``-2`` (the nuclear and 2-norms through :func:`svdvals`); real for complex input."""

def matrix_power(A, n) -> ShardedTensor:
    """``A`` to the integer power ``n`` by repeated squaring; ``n = 0`` gives the identity, ``n
    < 0`` powers ``inv(A)`` (floating point only), as ``torch.linalg.matrix_power``."""

def matrix_rank(A, *, atol=..., rtol=..., hermitian=...) -> ShardedTensor:
    """Number of singular values above ``max(atol, rtol * largest)`` (torch's default ``rtol =
    eps * max(m, n)``)."""

def mm(input, mat2) -> ShardedTensor:
    """Product of two 2-D tensors."""

def multi_dot(tensors) -> ShardedTensor:
    """Product of a chain of matrices (first may be 1-D, last may be 1-D), left to right."""

def mv(input, vec) -> ShardedTensor:
    """Matrix-vector product."""

def norm(A, ord=..., dim=..., keepdim=..., *, dtype=...) -> ShardedTensor:
    """``vector_norm`` or ``matrix_norm`` by torch's rule: a 2-tuple ``dim`` (or a 2-D input
    with ``ord`` given) is a matrix norm, anything else a vector norm."""

def outer(input, vec2) -> ShardedTensor:
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``."""

def pinv(A, *, atol=..., rtol=..., hermitian=...) -> ShardedTensor:
    """Moore-Penrose pseudo-inverse through the SVD (singular values under the tolerance of
    :func:`matrix_rank` count as zero); with ``hermitian=True`` through ``eigh``, which reads
    the lower triangle only (as torch)."""

def qr(A, mode=..., *, method=...) -> QRResult:
    """QR decomposition with ``R``'s diagonal non-negative (the unique QR of a full-rank matrix,
    whatever the layout; LAPACK/torch may differ by column signs). A tall matrix split by
    rows (any number of blocks, uneven too) uses CholeskyQR2 with a TSQR fallback for
    ill-conditioned input (``method="tsqr"`` or ``"cholqr2"`` forces one): ``Q`` keeps
    ``A``'s row layout, ``R`` is replicated. ``mode`` is ``"reduced"``, ``"complete"`` or
    ``"r"``."""

def slogdet(A) -> SlogdetResult:
    """``(sign, log|det|)`` of (a batch of) square matrices."""

def solve(A, B, *, left=...) -> ShardedTensor:
    """The solution ``X`` of ``A X = B`` (or ``X A = B`` with ``left=False``)."""

def solve_ex(A, B, *, left=..., check_errors=...) -> ExResult:
    """:func:`solve` returning ``(result, info)`` without checking for singular matrices
    (``info`` is non-zero where the matrix is singular; no wait for the workers). One split
    2-D matrix is solved on one worker here (up to ``GATHER_LIMIT`` bytes)."""

def solve_triangular(A, B, *, upper, left=..., unitriangular=...) -> ShardedTensor:
    """Solution of the triangular system ``A X = B`` (``X A = B`` with ``left=False``): only the
    ``upper`` or lower triangle of ``A`` is read (its diagonal taken as ones with
    ``unitriangular``); solved with :func:`solve` on that triangle."""

def svd(A, full_matrices=...) -> SVDResult:
    """``A = U diag(S) Vh``. A tall split matrix (reduced) goes through the distributed QR: ``U
    = Q U_R`` stays row-sharded, ``S`` and ``Vh`` are small and replicated."""

def svdvals(A) -> ShardedTensor:
    """Singular values, descending (a tall split matrix: through the distributed QR)."""

def tensordot(a, b, dims=...) -> ShardedTensor:
    """Contract ``dims`` (an int: a's last and b's first dims; or two lists) as one matmul of
    the flattened free and contracted dims."""

def tensorinv(A, ind=...) -> ShardedTensor:
    """The inverse of ``A`` read as a matrix ``prod(A.shape[:ind]) x prod(A.shape[ind:])``,
    shaped ``A.shape[ind:] + A.shape[:ind]`` (``tensordot(tensorinv(A), A, ind)`` is I)."""

def tensorsolve(A, B, dims=...) -> ShardedTensor:
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``: ``A`` reshaped to a square matrix
    ``(prod(B.shape), prod(rest))`` and solved (distributed when big)."""

def vander(x, *, N=...) -> ShardedTensor:
    """Vandermonde matrix ``x[..., :, None] ** [0, 1, ..., N-1]`` (``N`` defaults to
    ``x.shape[-1]``), as ``torch.linalg.vander``."""

def vdot(input, other) -> ShardedTensor:
    """``dot(conj(input), other)``: the inner product that conjugates its first operand."""

def vecdot(x, y, *, dim=...) -> ShardedTensor:
    """Dot products along ``dim`` (batched, broadcasting) of ``conj(x)`` and ``y`` (equal
    dtypes), as ``torch.linalg.vecdot``."""

def vector_norm(x, ord=..., dim=..., keepdim=..., *, dtype=...) -> ShardedTensor:
    """``ord``-norm over ``dim`` (all elements by default): sums and maxima, any layout."""
