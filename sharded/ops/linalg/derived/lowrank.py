"""``svd_lowrank`` and ``pca_lowrank``: randomized truncated SVD (Halko, Martinsson and
Tropp 2009, algorithms 4.4 and 5.1), composed of matrix products, ``linalg.qr`` and a small
``linalg.svd``, as torch's ``torch._lowrank``.

The random test matrix comes from sharded's own generator (``st.manual_seed`` makes a run
reproducible; the numbers differ from torch's). Nothing is gathered: the products and the
tall QR run where the operands lie (a split batch stays split, a row-split tall matrix uses
the distributed tall QR), and the one SVD is of a ``q x n`` matrix. Differentiable through
its parts, as torch's.
"""

from __future__ import annotations

from ....core.dispatch import as_tensor, is_tensor
from ....errors import ArgumentError, DTypeError, ShapeError
from ...random.prims.counter import randn
from ..prims.decomp import qr, svd

__all__ = ["svd_lowrank", "pca_lowrank"]


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _check(op, A):
    if A.ndim < 2:
        raise ShapeError(f"{op}: A must have at least 2 dimensions (got shape {list(A.shape)})")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise DTypeError(f"{op}: expected a floating point or complex tensor, got {A.dtype.name}")


def _basis(A, q, niter, M):
    """An orthonormal ``Q`` (m x q at most) with ``Q Q^H (A - M) ~ A - M`` (algorithm 4.4:
    ``niter`` subspace iterations, a QR after each product)."""
    R = randn(A.shape[-1], q, dtype=A.dtype)

    def prod(X, Y, h=False):
        P = (A.mH if h else A) @ Y
        return P if M is None else P - (M.mH if h else M) @ Y

    Q = qr(prod(A, R)).Q
    for _ in range(niter):
        Q = qr(prod(A, Q, h=True)).Q
        Q = qr(prod(A, Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    m, n = A.shape[-2:]
    if M is not None:
        M = _t(M).broadcast_to(A.shape)
    if m < n:  # work on the tall one
        A = A.mH
        M = None if M is None else M.mH
    Q = _basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """A rank-``q`` approximate SVD ``(U, S, V)`` of (a batch of) ``m x n`` matrices ``A`` (of
    ``A - M`` when ``M`` is given, broadcast to ``A``'s shape), ``A ~ U diag(S) V^H``, by
    randomized subspace iteration (``niter`` rounds), as ``torch.svd_lowrank``. ``q=None``
    means 6. The test matrix is drawn from sharded's generator (seed it with
    ``st.manual_seed`` to repeat a result); the results are close to torch's, not equal.

    Examples
    --------
    >>> import sharded as st
    >>> _ = st.manual_seed(0)
    >>> A = st.tensor([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=st.float64)
    >>> U, S, V = st.svd_lowrank(A, q=2)
    >>> [round(s, 6) for s in S.tolist()]
    [3.0, 1.0]
    """
    A = _t(A)
    _check("svd_lowrank", A)
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if not isinstance(q, int) or q < 0:
        raise ArgumentError(f"svd_lowrank: q(={q}) must be a non-negative integer")
    if not isinstance(niter, int) or niter < 0:
        raise ArgumentError(f"svd_lowrank: niter(={niter}) must be a non-negative integer")
    if M is not None and _t(M).dtype != A.dtype:
        raise DTypeError(f"svd_lowrank: M has dtype {_t(M).dtype.name}, A has dtype {A.dtype.name}")
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal component analysis of (a batch of) ``m x n`` data matrices (``m`` samples,
    ``n`` features): :func:`svd_lowrank` of ``A`` less its column means (``center=False``:
    of ``A``), ``(U, S, V)`` with the principal directions in ``V``'s columns, as
    ``torch.pca_lowrank``. ``q`` defaults to ``min(6, m, n)`` and must not exceed
    ``min(m, n)``.

    Examples
    --------
    >>> import sharded as st
    >>> _ = st.manual_seed(0)
    >>> A = st.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], dtype=st.float64)
    >>> U, S, V = st.pca_lowrank(A, q=1)
    >>> round(S.item(), 6), [round(abs(v), 6) for v in V[:, 0].tolist()]
    (2.0, [0.707107, 0.707107])
    """
    A = _t(A)
    _check("pca_lowrank", A)
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ArgumentError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (isinstance(niter, int) and niter >= 0):
        raise ArgumentError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return _svd_lowrank(A, q, niter, None)
