"""Operators and torch-style methods of ShardedTensor not yet bound by their op family
(``@bind`` in ``sharded/ops``): matmul, views and indexing, autograd and linear algebra (one
implementation each; a method is the function with ``self`` first).
"""

from __future__ import annotations

import numpy as np

from . import functional as F
from .errors import ArgumentError
from .tensor import ShardedTensor

_OPERAND = (ShardedTensor, np.ndarray, bool, int, float, np.generic)


def _binary(fn, reflected=False):
    def op(self, other):
        if not isinstance(other, _OPERAND):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = fn.__name__
    return op


from . import linalg as _la  # noqa: E402

ShardedTensor.__matmul__ = _binary(_la.matmul)
ShardedTensor.__rmatmul__ = _binary(_la.matmul, reflected=True)
for _n in ("matmul", "mm", "bmm", "mv", "dot", "outer"):
    setattr(ShardedTensor, _n, getattr(_la, _n))


# ------------------------------------------------------------------ linear algebra
def _linalg_methods():
    """torch's linear-algebra methods (``x.det()``, ``x.inverse()``, ``x.norm()``...), each
    the ``st.linalg`` function with ``self`` first."""
    la = _la

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """torch's ``Tensor.norm``: ``'fro'`` (default) and numbers are vector norms over
        ``dim`` (all elements by default), ``'nuc'`` the nuclear norm of matrices.

        Examples
        --------
        >>> import sharded as st
        >>> st.tensor([3., 4.]).norm().item()
        5.0
        """
        if p == "nuc":
            return la.matrix_norm(self, "nuc", dim or (-2, -1), keepdim, dtype=dtype)
        return la.vector_norm(self, 2 if p == "fro" else p, dim, keepdim, dtype=dtype)

    def logdet(self):
        """``log(det(self))`` (NaN for a negative determinant, as torch)."""
        sign, logabs = la.slogdet(self)
        return F.where(sign > 0, logabs, F.where(sign == 0, -np.inf, np.nan))

    table = {"det": la.det, "slogdet": la.slogdet, "logdet": logdet, "inverse": la.inv,
             "cholesky": la.cholesky, "qr": la.qr, "pinverse": la.pinv, "norm": norm,
             "inner": la.inner, "vdot": la.vdot, "ger": la.ger, "tensordot": la.tensordot}
    for name, fn in table.items():
        setattr(ShardedTensor, name, fn)


_linalg_methods()
