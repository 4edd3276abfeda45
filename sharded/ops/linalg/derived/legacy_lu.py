"""torch's older top-level LU and triangular solvers: ``st.lu``, ``st.lu_solve`` and
``st.triangular_solve``, thin wrappers of ``st.linalg.lu_factor_ex``, ``lu_solve`` and
``solve_triangular`` with torch's old argument orders and return types.
"""

from __future__ import annotations

import collections

from ....core.registry import bind
from ....errors import DTypeError, ShapeError
from ..prims.lu_family import lu_factor_ex
from ..prims.lu_family import lu_solve as _lu_solve
from .extra import solve_triangular

__all__ = ["lu", "lu_solve", "triangular_solve"]

# torch.return_types.triangular_solve
TriangularSolve = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


@bind("lu")
def lu(A, pivot=True, get_infos=False) -> tuple:
    """torch's older LU: ``(LU, pivots)`` packed as ``st.linalg.lu_factor``'s (int32
    pivots), plus the int32 ``infos`` with ``get_infos=True``; singular matrices factor
    without raising either way (their ``infos`` name the first zero pivot).

    Examples
    --------
    >>> import sharded as st
    >>> LU, piv = st.lu(st.tensor([[1., 2.], [3., 4.]]))
    >>> LU.tolist(), piv.tolist()
    ([[3.0, 4.0], [0.3333333432674408, 0.6666666269302368]], [2, 2])
    """
    if A.ndim < 2:
        raise ShapeError(
            "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(A.shape)} instead"
        )
    LU, pivots, infos = lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, infos) if get_infos else (LU, pivots)


@bind("lu_solve")
def lu_solve(b, LU_data, LU_pivots):
    """torch's older ``lu_solve(b, LU_data, LU_pivots)``: the solution of ``A X = b`` from
    :func:`lu`'s factorization of ``A`` (``st.linalg.lu_solve`` with the arguments in
    torch's old order).

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[2., 1.], [1., 3.]], dtype=st.float64)
    >>> st.lu_solve(st.tensor([[3.], [4.]], dtype=st.float64), *st.lu(A)).tolist()
    [[1.0], [1.0]]
    """
    return _lu_solve(LU_data, LU_pivots, b)


@bind("triangular_solve")
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """torch's older triangular solver: ``(solution, cloned_coefficient)`` with
    ``solution`` the ``X`` of ``A X = b`` (``A^T X = b`` with ``transpose``), reading only
    the ``upper`` or lower triangle of ``A`` (its diagonal as ones with ``unitriangular``),
    and ``cloned_coefficient`` a copy of ``A``. Batch dims broadcast.

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[2., 1.], [0., 4.]])
    >>> st.triangular_solve(st.tensor([[3.], [4.]]), A).solution.tolist()
    [[1.0], [1.0]]
    """
    if b.ndim < 2:
        raise ShapeError(
            "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
            f"{b.ndim} dimensions instead"
        )
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(
            f"triangular_solve: A must be batches of square matrices, but got shape {list(A.shape)}"
        )
    if b.dtype != A.dtype:
        raise DTypeError(
            f"Expected b and A to have the same dtype, but found b of type {b.dtype} and A of "
            f"type {A.dtype} instead."
        )
    if transpose:
        x = solve_triangular(A.mT, b, upper=not upper, unitriangular=unitriangular)
    else:
        x = solve_triangular(A, b, upper=upper, unitriangular=unitriangular)
    return TriangularSolve(x, A.clone())
