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


def requires_grad_(self, requires_grad=True):
    """Record operations on this tensor for autograd (floating dtypes only)."""
    if requires_grad and not self.dtype.is_floating_point:
        raise ArgumentError(f"only floating point tensors can require gradients, got "
                            f"{self.dtype.name}")
    self.requires_grad = requires_grad
    return self


ShardedTensor.requires_grad_ = requires_grad_


# ------------------------------------------------------------------ views and indexing
from . import indexing as _ix  # noqa: E402
from . import shape as S  # noqa: E402

for _n in ("view reshape flatten permute transpose swapaxes t squeeze unsqueeze expand "
           "expand_as contiguous clone narrow select split chunk unbind flip roll").split():
    setattr(ShardedTensor, _n, getattr(S, _n))
ShardedTensor.__getitem__ = _ix.getitem
ShardedTensor.__setitem__ = _ix.setitem
ShardedTensor.T = property(lambda self: S.permute(self, tuple(reversed(range(self.ndim)))))
ShardedTensor.mT = property(lambda self: S.transpose(self, -2, -1))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(S.unbind(self, 0))


ShardedTensor.__iter__ = _iter


# ------------------------------------------------------------------ autograd
from . import autograd as _ag  # noqa: E402


def backward(self, gradient=None, retain_graph=None, create_graph=False):
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``gradient`` is required
    unless ``self`` has one element).

    Examples
    --------
    >>> import sharded as st
    >>> a = st.ones(4, requires_grad=True)
    >>> (a * 5).sum().backward(); a.grad.tolist()
    [5.0, 5.0, 5.0, 5.0]
    """
    _ag.backward(self, gradient, retain_graph, create_graph)


def detach(self):
    """A tensor sharing this one's shards, cut from the graph (``requires_grad=False``).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, requires_grad=True).detach().requires_grad
    False
    """
    return _ag._alias(self)


def detach_(self):
    """Cut this tensor from the graph in place."""
    self.grad_fn, self.requires_grad = None, False
    return self


def retain_grad(self):
    """Keep ``.grad`` for this non-leaf tensor after backward."""
    if self.grad_fn is not None:
        self._retains_grad = True
    return self


ShardedTensor.backward = backward
ShardedTensor.detach = detach
ShardedTensor.detach_ = detach_
ShardedTensor.retain_grad = retain_grad
ShardedTensor.retains_grad = property(lambda self: self._retains_grad)


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
