"""``st.linalg``: matrix products, batched decompositions and distributed big-matrix solvers.

The namespace of the linear-algebra family, :mod:`sharded.ops.linalg` (the paths below are
inside it):

* Products (``matmul``/``@``, ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``, ``inner``, ``outer``,
  ``tensordot``, ``einsum``, ``multi_dot``, ``vecdot``): torch's shape rules and the layout
  strategy (local, k-split + tree, SUMMA blocks, reshard first) in ``prims/matmul.py``, its
  cost model in ``plan.py``; ``einsum``/``tensordot`` in ``derived/einsum.py``.
* Batched decompositions over sharded batch dims, one kernel per shard (``prims/batched.py``;
  the primitives and their gradients in ``prims/solve.py`` and ``prims/decomp.py``).
* One big split matrix: CholeskyQR2/TSQR ``qr`` with Q row-sharded, ``lstsq`` and tall
  ``svd`` through it (``prims/tall.py``), block-LU ``solve``/``inv``/``det``
  (``prims/lu_dist.py``, its worker kernels in ``kernels.py``), blocked ``cholesky``
  (``prims/cholesky.py``); nothing is gathered on one worker or the driver.
* Norms, ``cond``, ``matrix_rank`` and ``pinv`` are compositions of the above
  (``derived/norms.py``); so are ``matrix_power``, ``matrix_exp``, ``cross``,
  ``solve_triangular``... (``derived/extra.py``), and ``householder_product``
  (``derived/householder.py``).
* The LU family (``lu``, ``lu_factor``, ``lu_factor_ex``, ``lu_solve``; ``st.lu_unpack``) for
  matrices that fit on one worker (``prims/lu_family.py``); so are LAPACK's compact LDL
  (``ldl_factor``, ``ldl_factor_ex``, ``ldl_solve``; ``prims/compact.py``).

Singular or non-positive-definite inputs raise :class:`LinAlgError` at call time, naming the
batch element; the ``*_ex`` variants return torch's ``info`` instead of raising.

This module only names the functions (it defines no primitive); torch's older top-level
``st.svd``/``st.qr``/``st.cholesky`` are in ``derived/toplevel.py``.
"""

from __future__ import annotations

from .ops.linalg.derived.einsum import einsum, tensordot
from .ops.linalg.derived.extra import (
    cross,
    diagonal,
    matrix_exp,
    matrix_power,
    solve_triangular,
    tensorinv,
    vander,
)
from .ops.linalg.derived.householder import householder_product
from .ops.linalg.derived.norms import (
    cond,
    matrix_norm,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    vecdot,
    vector_norm,
)
from .ops.linalg.prims.batched import GATHER_LIMIT, LinAlgError
from .ops.linalg.prims.compact import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.linalg.prims.decomp import (
    EighResult,
    QRResult,
    SVDResult,
    cholesky,
    cholesky_ex,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    qr,
    svd,
    svdvals,
)
from .ops.linalg.prims.lu_family import lu, lu_factor, lu_factor_ex, lu_solve
from .ops.linalg.prims.matmul import bmm, dot, ger, inner, matmul, mm, mv, outer, vdot
from .ops.linalg.prims.solve import (
    ExResult,
    LstsqResult,
    SlogdetResult,
    det,
    inv,
    inv_ex,
    lstsq,
    slogdet,
    solve,
    solve_ex,
    tensorsolve,
)

__all__ = [
    "LinAlgError",
    "GATHER_LIMIT",
    "matmul",
    "mm",
    "bmm",
    "mv",
    "dot",
    "vdot",
    "inner",
    "outer",
    "tensordot",
    "einsum",
    "multi_dot",
    "vecdot",
    "solve",
    "solve_ex",
    "inv",
    "inv_ex",
    "det",
    "slogdet",
    "cholesky",
    "cholesky_ex",
    "eig",
    "eigvals",
    "eigvalsh",
    "eigh",
    "svd",
    "svdvals",
    "qr",
    "lstsq",
    "tensorsolve",
    "matrix_norm",
    "vector_norm",
    "norm",
    "matrix_rank",
    "cond",
    "pinv",
    "QRResult",
    "SVDResult",
    "EighResult",
    "SlogdetResult",
    "LstsqResult",
    "ExResult",
    "ger",
    "matrix_power",
    "matrix_exp",
    "cross",
    "diagonal",
    "tensorinv",
    "vander",
    "solve_triangular",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "householder_product",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
]
