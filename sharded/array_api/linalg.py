"""The ``linalg`` extension of the Array API namespace, over :mod:`sharded.ops.linalg`.

Decompositions return the standard's named tuples; ``solve`` follows the standard's rule for a
1-D ``x2`` (a vector only when it cannot be a stack of matrices), as torch does.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import dtypes as D
from .. import linalg as L
from ..errors import ArgumentError, DimError
from ..tensor import ShardedTensor
from ._st import ST
from ._stats import _same, matmul, matrix_transpose, tensordot, vecdot


class EighResult(NamedTuple):
    eigenvalues: ShardedTensor
    eigenvectors: ShardedTensor


class QRResult(NamedTuple):
    Q: ShardedTensor
    R: ShardedTensor


class SlogdetResult(NamedTuple):
    sign: ShardedTensor
    logabsdet: ShardedTensor


class SVDResult(NamedTuple):
    U: ShardedTensor
    S: ShardedTensor
    Vh: ShardedTensor


def cholesky(x, /, *, upper=False):
    """Cholesky factor of symmetric positive-definite matrices.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.cholesky(xp.asarray([[4.0, 0.0], [0.0, 9.0]])).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    return L.cholesky(x, upper=upper)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.cross(xp.asarray([1, 0, 0]), xp.asarray([0, 1, 0])).tolist()
    [0, 0, 1]
    """
    x1, x2 = _same(x1, x2)
    n = max(x1.ndim, x2.ndim)
    if not -n <= axis < n:
        raise DimError(f"axis {axis} is out of range for arrays of {n} dims")
    a = axis if axis < 0 else axis - n
    if x1.shape[a] != 3 or x2.shape[a] != 3:
        raise ArgumentError(f"cross needs size 3 along axis {axis}, got {x1.shape} and {x2.shape}")
    x1, x2 = ST.broadcast_tensors(x1, x2)
    return ST.cross(x1, x2, a)


def det(x, /):
    """Determinant of (a stack of) square matrices.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> float(xp.linalg.det(xp.asarray([[2.0, 0.0], [0.0, 3.0]])))
    6.0
    """
    return L.det(x)


def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonal of the last two dims.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.diagonal(xp.asarray([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    return ST.diagonal(x, offset, -2, -1)


def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.eigh(xp.asarray([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    return EighResult(*L.eigh(x))


def eigvalsh(x, /):
    """Eigenvalues (ascending) of symmetric matrices.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.eigvalsh(xp.asarray([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [1.0, 2.0]
    """
    return L.eigvalsh(x)


def inv(x, /):
    """Inverse of (a stack of) square matrices.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.inv(xp.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return L.inv(x)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm of the last two dims (``"fro"``, ``"nuc"``, 1, 2, inf and negatives).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> float(xp.linalg.matrix_norm(xp.asarray([[3.0, 0.0], [0.0, 4.0]])))
    5.0
    """
    return L.matrix_norm(x, ord, (-2, -1), keepdims)


def matrix_power(x, n, /):
    """``x`` multiplied by itself ``n`` times (the inverse's power for negative ``n``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.matrix_power(xp.asarray([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    """
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ArgumentError(f"matrix_power needs square matrices, got shape {tuple(x.shape)}")
    if n == 0:
        eye = ST.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return ST.broadcast_to(eye, tuple(x.shape)).clone()
    base = L.inv(x) if n < 0 else x
    out, k = None, abs(n)
    while k:  # square-and-multiply: log2(n) matmuls
        if k & 1:
            out = base if out is None else ST.matmul(out, base)
        k >>= 1
        if k:
            base = ST.matmul(base, base)
    return out.clone() if out is x else out


def matrix_rank(x, /, *, rtol=None):
    """Number of singular values above ``rtol`` times the largest.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> int(xp.linalg.matrix_rank(xp.asarray([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    return L.matrix_rank(x, rtol=rtol)


def outer(x1, x2, /):
    """Outer product of two vectors.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.outer(xp.asarray([1, 2]), xp.asarray([3, 4])).tolist()
    [[3, 4], [6, 8]]
    """
    x1, x2 = _same(x1, x2)
    return L.outer(x1, x2)


def pinv(x, /, *, rtol=None):
    """Moore-Penrose pseudo-inverse.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.pinv(xp.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return L.pinv(x, rtol=rtol)


def qr(x, /, *, mode="reduced"):
    """QR decomposition (``mode="reduced"`` or ``"complete"``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.qr(xp.asarray([[1.0, 0.0], [0.0, 1.0]])).R.shape
    sharded.Size([2, 2])
    """
    if mode not in ("reduced", "complete"):
        raise ArgumentError(f"mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*L.qr(x, mode))


def slogdet(x, /):
    """Sign and log of the absolute determinant.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> float(xp.linalg.slogdet(xp.asarray([[-1.0, 0.0], [0.0, 1.0]])).sign)
    -1.0
    """
    return SlogdetResult(*L.slogdet(x))


def solve(x1, x2, /):
    """Solution of ``x1 @ y = x2``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.solve(xp.asarray([[2.0, 0.0], [0.0, 4.0]]), xp.asarray([2.0, 4.0])).tolist()
    [1.0, 1.0]
    """
    x1, x2 = _same(x1, x2)
    return L.solve(x1, x2)


def svd(x, /, *, full_matrices=True):
    """Singular value decomposition ``U @ diag(S) @ Vh``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.svd(xp.asarray([[3.0, 0.0], [0.0, 4.0]])).S.tolist()
    [4.0, 3.0]
    """
    return SVDResult(*L.svd(x, full_matrices))


def svdvals(x, /):
    """Singular values, descending.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.linalg.svdvals(xp.asarray([[3.0, 0.0], [0.0, 4.0]])).tolist()
    [4.0, 3.0]
    """
    return L.svdvals(x)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset``-th diagonal of the last two dims.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> int(xp.linalg.trace(xp.asarray([[1, 2], [3, 4]])))
    5
    """
    d = ST.diagonal(x, offset, -2, -1)
    k = x.dtype.np.kind
    dt = dtype if dtype is not None else (x.dtype if k in "fc" else D.int64)
    return ST.sum(d.to(dt) if dt != d.dtype else d, -1)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over ``axis`` (an int, a tuple or None for all).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> float(xp.linalg.vector_norm(xp.asarray([3.0, 4.0])))
    5.0
    """
    if isinstance(axis, tuple) and not axis:
        return ST.abs(x) if ord not in (0,) else (x != 0).to(x.dtype)
    return L.vector_norm(x, ord, axis, keepdims)


__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]  # fmt: skip
