"""More of torch's linear algebra, composed of the solvers, products and tensor methods:
``matrix_power``, ``matrix_exp``, ``cross``, ``diagonal``, ``tensorinv``, ``vander``,
``solve_triangular``, ``cholesky_solve`` and ``cholesky_inverse``.

They need no gradient rule of their own (matmul, solve, inv and the elementwise ops carry
it). The names torch also has at the top level (``torch.det``, ``torch.inverse``...) are
listed in ``__all__`` and re-exported by ``sharded``.
"""

from __future__ import annotations

import math

from .... import dtypes as D
from ....core.dispatch import apply, placement
from ....core.registry import bind
from ....errors import ArgumentError, DimError, DTypeError, ShapeError
from ..prims.batched import herm, matrix, square, t_
from ..prims.solve import det, inv, logdet, slogdet, solve
from .norms import pinv

__all__ = [
    "det",
    "slogdet",
    "logdet",
    "inverse",
    "pinverse",
    "matrix_power",
    "matrix_exp",
    "cholesky_solve",
    "cholesky_inverse",
]

inverse = inv  # torch.inverse
pinverse = pinv  # torch.pinverse


def _identity_like(a):
    """Identity matrices of ``a``'s shape and dtype (batch dims broadcast)."""
    n = a.shape[-1]
    eye = apply("eye", placement((n, n), dtype=a.dtype), a.dtype)
    return eye.expand(tuple(a.shape))


@bind("matrix_power")
def matrix_power(A, n):
    """``A`` to the integer power ``n`` by repeated squaring; ``n = 0`` gives the identity,
    ``n < 0`` powers ``inv(A)`` (floating point only), as ``torch.linalg.matrix_power``.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.matrix_power(st.tensor([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    """
    A = t_(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(
            f"linalg.matrix_power: A must be batches of square matrices, got shape {tuple(A.shape)}"
        )
    if not isinstance(n, int) or isinstance(n, bool):
        raise DTypeError(f"linalg.matrix_power: n must be an int, got {n!r}")
    if n == 0:  # connected to A (a zero gradient, as torch) whatever A holds
        return _identity_like(A) + A.where((A != A) & (A == A), 0)
    if n < 0:
        A, n = inv(square("matrix_power", A)), -n
    out, base = None, A
    while n:  # binary powering: O(log n) products
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out


@bind("matrix_exp")
def matrix_exp(A):
    """The matrix exponential: scaling and squaring of an order-18 Taylor polynomial (the
    largest 1-norm of the batch sets the scaling: one short read).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.matrix_exp(st.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    A = square("matrix_exp", A)
    if A.numel() == 0:
        return A.clone()
    norm1 = float(A.detach().abs().sum(-2).amax().item())
    s = max(0, math.ceil(math.log2(norm1))) if norm1 > 0 and math.isfinite(norm1) else 0
    x = A / (2.0**s) if s else A
    eye = _identity_like(A)
    out = eye
    for k in range(18, 0, -1):  # Horner: I + X/1 (I + X/2 (I + ...)); |X| <= 1: 1/19! error
        out = eye + (x @ out) / k
    for _ in range(s):
        out = out @ out
    return out


def cross(input, other, *, dim=-1):
    """Cross product of 3-vectors along ``dim`` (broadcasting), as ``torch.linalg.cross``.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.cross(st.tensor([1., 0., 0.]), st.tensor([0., 1., 0.])).tolist()
    [0.0, 0.0, 1.0]
    """
    a, b = t_(input), t_(other)
    if a.ndim != b.ndim:
        raise ShapeError(
            f"linalg.cross: inputs must have the same number of dimensions, got "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    if not -a.ndim <= dim < a.ndim:
        raise DimError(f"linalg.cross: dim {dim} out of range for {a.ndim} dims")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise ShapeError(
            f"linalg.cross: inputs dimension {dim} must have length 3, got "
            f"{a.shape[dim]} and {b.shape[dim]}"
        )
    shape = _bshape(a, b)
    a, b = a.expand(shape), b.expand(shape)
    # (a x b)_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}; roll(-k) brings element i+k to i
    return a.roll(-1, dim) * b.roll(-2, dim) - a.roll(-2, dim) * b.roll(-1, dim)


def _bshape(a, b):
    out = []
    for x, y in zip(a.shape, b.shape):
        if x != y and 1 not in (x, y):
            raise ShapeError(
                f"linalg.cross: shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast"
            )
        out.append(max(x, y) if 0 not in (x, y) else 0)
    return tuple(out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``A.diagonal(offset, dim1, dim2)``, with ``torch.linalg.diagonal``'s defaults (the
    last two dims).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.diagonal(st.eye(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    return t_(A).diagonal(offset, dim1, dim2)


def tensorinv(A, ind=2):
    """The inverse of ``A`` read as a matrix ``prod(A.shape[:ind]) x prod(A.shape[ind:])``,
    shaped ``A.shape[ind:] + A.shape[:ind]`` (``tensordot(tensorinv(A), A, ind)`` is I).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.tensorinv(st.eye(6).reshape(6, 2, 3), ind=1).shape
    sharded.Size([2, 3, 6])
    """
    A = t_(A)
    if not isinstance(ind, int) or ind <= 0:
        raise ArgumentError(
            f"linalg.tensorinv: expected a strictly positive integer ind, got {ind!r}"
        )
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise ShapeError(
            f"linalg.tensorinv: expected prod(A.shape[:ind]) == prod(A.shape[ind:]), got "
            f"{rows} and {cols} for shape {tuple(A.shape)} and ind={ind}"
        )
    return inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def vander(x, *, N=None):
    """Vandermonde matrix ``x[..., :, None] ** [0, 1, ..., N-1]`` (``N`` defaults to
    ``x.shape[-1]``), as ``torch.linalg.vander``.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.vander(st.tensor([1, 2, 3])).tolist()
    [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    """
    x = t_(x)
    if x.ndim < 1:  # torch takes a 0-d x as one element
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n < 2:  # torch refuses N = 1 too (and so a one-element x without N)
        raise ArgumentError(f"linalg.vander: N must be greater than 1, got {n}")
    dt = x.dtype if x.dtype != D.bool_ else D.int64
    p = apply("arange", placement((n,), dtype=D.int64), 0, 1, D.int64)
    return x.to(dt).unsqueeze(-1) ** p.to(dt)


def _tri(A, upper, unitriangular):
    T = A.triu(1) if upper else A.tril(-1)
    return T + _identity_like(A) if unitriangular else (A.triu() if upper else A.tril())


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """Solution of the triangular system ``A X = B`` (``X A = B`` with ``left=False``): only
    the ``upper`` or lower triangle of ``A`` is read (its diagonal taken as ones with
    ``unitriangular``); solved with :func:`solve` on that triangle.

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[2., 1.], [5., 4.]])
    >>> st.linalg.solve_triangular(A, st.tensor([[3.], [4.]]), upper=True).tolist()
    [[1.0], [1.0]]
    """
    A, B = square("solve_triangular", A), matrix("solve_triangular", B)
    return solve(_tri(A, upper, unitriangular), B, left=left)


def _from_factor(L, upper, op):
    L = square(op, L)
    return herm(L) @ L if upper else L @ herm(L)


@bind("cholesky_solve")
def cholesky_solve(B, L, upper=False):
    """Solution of ``A X = B`` for ``A = L L^H`` (``U^H U`` with ``upper``) given its
    Cholesky factor, as ``torch.cholesky_solve``.

    Examples
    --------
    >>> import sharded as st
    >>> L = st.tensor([[2., 0.], [1., 1.]])
    >>> st.cholesky_solve(st.tensor([[4.], [2.]]), L).tolist()
    [[1.0], [0.0]]
    """
    B = matrix("cholesky_solve", B)
    return solve(_from_factor(L, upper, "cholesky_solve"), B)


@bind("cholesky_inverse")
def cholesky_inverse(L, upper=False):
    """The inverse of ``A = L L^H`` (``U^H U`` with ``upper``) from its Cholesky factor, as
    ``torch.cholesky_inverse``.

    Examples
    --------
    >>> import sharded as st
    >>> st.cholesky_inverse(st.tensor([[2., 0.], [0., 1.]])).tolist()
    [[0.25, 0.0], [0.0, 1.0]]
    """
    return inv(_from_factor(L, upper, "cholesky_inverse"))
