"""Linear algebra: products (matmul, einsum), batched decompositions and the distributed
big-matrix solvers (``st.linalg`` is :mod:`sharded.linalg`).

- ``prims``: ``matmul`` (the products), ``batched`` (one kernel per batch block),
  ``decomp`` and ``solve`` (the ``st.linalg`` decompositions and solvers), ``lu_family``,
  ``compact`` (LAPACK's compact forms: ldl_factor/ldl_solve, geqrf),
  and the distributed algorithms for one big split matrix: ``tall`` (QR), ``lu_dist``
  (block LU), ``cholesky`` (blocked Cholesky);
- ``plan``: matmul's layout strategy and cost model;
- ``kernels``: the worker kernels of the block LU;
- ``derived``: ``einsum`` (einsum, tensordot), ``norms`` (norms, cond, matrix_rank, pinv...),
  ``extra`` (matrix_power, matrix_exp, det/inverse at the top level...), ``toplevel``
  (torch's older svd/qr/cholesky, the BLAS thread count), ``legacy_lu`` (torch's older
  lu/lu_solve/triangular_solve), ``householder`` (householder_product, orgqr, ormqr), ``lowrank``
  (svd_lowrank, pca_lowrank).

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from .derived import einsum as _einsum
from .derived import extra as _extra
from .derived import householder as _householder
from .derived import legacy_lu as _legacy_lu
from .derived import lowrank as _lowrank
from .derived import norms  # noqa: F401  (registers its primitives)
from .derived import toplevel as _toplevel
from .derived.einsum import *  # noqa: F403
from .derived.extra import *  # noqa: F403
from .derived.householder import *  # noqa: F403
from .derived.legacy_lu import *  # noqa: F403
from .derived.lowrank import *  # noqa: F403
from .derived.norms import tensor_norm as norm
from .derived.toplevel import *  # noqa: F403
from .prims import (
    batched,  # noqa: F401  (registers its primitives)
    decomp,  # noqa: F401  (registers its primitives)
    lu_dist,  # noqa: F401  (registers its primitives)
    lu_family,  # noqa: F401  (registers its primitives)
    solve,  # noqa: F401  (registers its primitives)
    tall,  # noqa: F401  (registers its primitives)
)
from .prims import cholesky as _cholesky  # noqa: F401  (registers; the name is toplevel's)
from .prims import compact as _compact
from .prims import matmul as _matmul
from .prims.compact import *  # noqa: F403
from .prims.lu_family import lu_unpack
from .prims.matmul import *  # noqa: F403

__all__ = [
    *_matmul.__all__,
    *_einsum.__all__,
    *_extra.__all__,
    *_householder.__all__,
    *_toplevel.__all__,
    *_legacy_lu.__all__,
    *_lowrank.__all__,
    "norm",
    "lu_unpack",
    *_compact.__all__,
]
