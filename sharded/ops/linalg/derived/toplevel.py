"""torch's top-level names of the linear-algebra family that are not ``torch.linalg``'s: the
older ``svd``/``qr``/``cholesky`` forms (thin wrappers of the ``st.linalg`` decompositions,
with torch's old return types), and the thread count of the workers' BLAS, which runs the
products and factorizations (``get_num_threads``/``set_num_threads``).
"""

from __future__ import annotations

import collections
import numbers

from ....core.registry import bind
from ....errors import ArgumentError, ArgumentTypeError
from ....runtime.commands import Threads
from ....runtime.driver import session as _session
from ....runtime.worker import threads as _threads
from ...creation.prims import zeros
from ..prims import decomp as LA

__all__ = ["svd", "qr", "cholesky", "get_num_threads", "set_num_threads"]


# ----------------------------------------------------------- legacy svd / qr / cholesky
SVDLegacy = collections.namedtuple("svd", ["U", "S", "V"])  # torch.return_types.svd
QRLegacy = collections.namedtuple("qr", ["Q", "R"])  # torch.return_types.qr


@bind("svd")
def svd(input, some=True, compute_uv=True):
    """torch's older SVD: ``(U, S, V)`` with ``input = U diag(S) V^H`` (``V``, not
    ``V^H``); ``some=False`` gives square ``U`` and ``V``; ``compute_uv=False`` gives zero
    ``U`` (m x m) and ``V`` (n x n), as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.svd(st.tensor([[3., 0.], [0., 2.]])).S.tolist()
    [3.0, 2.0]
    """
    if not compute_uv:
        s = LA.svdvals(input)
        m, n, batch = input.shape[-2], input.shape[-1], tuple(input.shape[:-2])
        return SVDLegacy(
            zeros(batch + (m, m), dtype=input.dtype), s, zeros(batch + (n, n), dtype=input.dtype)
        )
    u, s, vh = LA.svd(input, full_matrices=not some)
    return SVDLegacy(u, s, vh.mH)


@bind("qr")
def qr(input, some=True):
    """torch's older QR: ``(Q, R)``, reduced unless ``some=False`` (then ``Q`` is square).

    Examples
    --------
    >>> import sharded as st
    >>> [t.shape for t in st.qr(st.ones(3, 2))]
    [sharded.Size([3, 2]), sharded.Size([2, 2])]
    """
    q, r = LA.qr(input, "reduced" if some else "complete")
    return QRLegacy(q, r)


@bind("cholesky")
def cholesky(input, upper=False):
    """torch's older Cholesky: ``L`` (``upper=True``: ``U = L^H``) of positive-definite
    matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.cholesky(st.tensor([[4., 2.], [2., 2.]]), True).tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    return LA.cholesky(input, upper=upper)


# ------------------------------------------------------------------------------ threads
_THREADS = [None]  # the count set by set_num_threads (None: the BLAS's own)


def get_num_threads():
    """The number of threads each worker's BLAS uses: the last :func:`set_num_threads`, else
    this process's BLAS pool size.

    Examples
    --------
    >>> import sharded as st
    >>> st.get_num_threads() >= 1
    True
    """
    return _THREADS[0] or _threads.blas_threads() or 1


def set_num_threads(n):
    """Set the BLAS/OpenMP threads of every worker of the session (queued after the work
    before it) and of this process.

    Examples
    --------
    >>> import sharded as st
    >>> n = st.get_num_threads()
    >>> st.set_num_threads(1); st.get_num_threads()
    1
    >>> st.set_num_threads(n)
    """
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise ArgumentTypeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise ArgumentError(f"set_num_threads expects a positive integer, got {n}")
    _threads.set_threads(n)
    _THREADS[0] = int(n)
    if _session.is_initialized():
        ex = _session.current().executor
        ex.send({w: [Threads(int(n))] for w in range(ex.num_workers)})
