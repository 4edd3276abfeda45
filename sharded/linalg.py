"""``st.linalg``: matrix products, batched decompositions and distributed big-matrix solvers.

* Products (``matmul``/``@``, ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``, ``inner``, ``outer``,
  ``tensordot``, ``einsum``, ``multi_dot``, ``vecdot``): torch's shape rules here, the layout
  strategy (local, k-split + tree, SUMMA blocks, reshard first) in ``ops/matmul.py``.
* Batched decompositions over sharded batch dims, one kernel per shard (``ops/linalg.py``).
* One big split matrix (``ops/linalg_dist.py``): CholeskyQR2/TSQR ``qr`` with Q row-sharded,
  ``lstsq`` and tall ``svd`` through it, block-LU ``solve``/``inv``/``det``, blocked
  ``cholesky``; nothing is gathered on one worker or the driver.
* Norms, ``matrix_rank`` and ``pinv`` are compositions of the above (autograd included).

Singular or non-positive-definite inputs raise :class:`LinAlgError` at call time, naming the
batch element; the ``*_ex`` variants return torch's ``info`` instead of raising.
"""

from __future__ import annotations

from . import dtypes as D
from . import functional as F
from .errors import ArgumentError, ShapeError
from .ops import einsum as E
from .ops import linalg_derived as DV
from .ops.elementwise import broadcast_shapes
from .ops.linalg import GATHER_LIMIT, LinAlgError, check_float
from .core.dispatch import apply

__all__ = [
    "LinAlgError", "GATHER_LIMIT", "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer",
    "tensordot", "einsum", "multi_dot", "vecdot", "solve", "solve_ex", "inv", "inv_ex", "det",
    "slogdet", "cholesky", "cholesky_ex", "eigvals", "eigvalsh", "eigh", "svd", "svdvals",
    "qr", "lstsq", "tensorsolve", "matrix_norm", "vector_norm", "norm", "matrix_rank", "pinv",
    "QRResult", "SVDResult", "EighResult", "SlogdetResult", "LstsqResult", "ExResult",
]

from .ops.linalg_api import (
    EighResult,
    ExResult,
    LstsqResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    _dims,
    _matrix,
    _t,
    cholesky,
    cholesky_ex,
    det,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    qr,
    slogdet,
    solve,
    solve_ex,
    svd,
    svdvals,
    tensorsolve,
)


# ------------------------------------------------------------------------------ products
def matmul(input, other):
    """Matrix product with torch's rules for 1-D and batched (broadcast) operands.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.arange(6.).reshape(3, 2)
    >>> (a @ st.tensor([[1.], [1.]])).tolist()
    [[1.0], [5.0], [9.0]]
    """
    a, b = _t(input), _t(other)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are "
                         f"{a.ndim}D and {b.ndim}D")
    dt = D.promote_types(a.dtype, b.dtype)
    a, b = a.to(dt), b.to(dt)
    squeeze = []
    if a.ndim == 1:
        a = a.unsqueeze(0)
        squeeze.append(-2)
    if b.ndim == 1:
        b = b.unsqueeze(1)
        squeeze.append(-1)
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied "
                         f"({_dims(a.shape)} and {_dims(b.shape)})")
    broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    out = apply("matmul", a, b, dt)
    for d in squeeze:
        out = out.squeeze(d)
    return out


def mm(input, mat2):
    """Product of two 2-D tensors.

    Examples
    --------
    >>> import sharded as st
    >>> st.mm(st.eye(2), st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    if _t(input).ndim != 2 or _t(mat2).ndim != 2:
        raise ShapeError(f"mm expects 2-D tensors, got {_t(input).ndim}-D and {_t(mat2).ndim}-D")
    return matmul(input, mat2)


def bmm(input, mat2):
    """Batched product of two 3-D tensors with equal batch sizes.

    Examples
    --------
    >>> import sharded as st
    >>> st.bmm(st.ones(4, 2, 3), st.ones(4, 3, 5)).shape
    sharded.Size([4, 2, 5])
    """
    a, b = _t(input), _t(mat2)
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm expects 3-D tensors with equal batch sizes, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


def mv(input, vec):
    """Matrix-vector product.

    Examples
    --------
    >>> import sharded as st
    >>> st.mv(st.eye(2), st.tensor([1., 2.])).tolist()
    [1.0, 2.0]
    """
    if _t(input).ndim != 2 or _t(vec).ndim != 1:
        raise ShapeError(f"mv expects a 2-D and a 1-D tensor, got {_t(input).ndim}-D and "
                         f"{_t(vec).ndim}-D")
    return matmul(input, vec)


def dot(input, other):
    """Inner product of two 1-D tensors (a 0-d tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.dot(st.tensor([1., 2.]), st.tensor([3., 4.])).item()
    11.0
    """
    a, b = _t(input), _t(other)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ShapeError(f"dot expects two 1-D tensors of equal size, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


vdot = dot  # real dtypes only: no conjugation to do


def inner(input, other):
    """Sum of products over the last dim of both (``tensordot`` over one dim).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.inner(st.ones(2, 3), st.ones(4, 3)).shape
    sharded.Size([2, 4])
    """
    a, b = _t(input), _t(other)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def outer(input, vec2):
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``.

    Examples
    --------
    >>> import sharded as st
    >>> st.outer(st.tensor([1, 2]), st.tensor([1, 10])).tolist()
    [[1, 10], [2, 20]]
    """
    a, b = _t(input), _t(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer expects two 1-D tensors, got {a.ndim}-D and {b.ndim}-D")
    return a.unsqueeze(1) * b.unsqueeze(0)


ger = outer


def vecdot(x, y, *, dim=-1):
    """Dot products along ``dim`` (batched, broadcasting), as ``torch.linalg.vecdot``.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.vecdot(st.ones(3, 2), st.ones(2)).tolist()
    [2.0, 2.0, 2.0]
    """
    return F.sum(_t(x) * _t(y), dim)


def tensordot(a, b, dims=2):
    """Contract ``dims`` (an int: a's last and b's first dims; or two lists) as one matmul
    of the flattened free and contracted dims.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.tensordot(st.ones(3, 4, 5), st.ones(4, 5, 2), dims=2).shape
    sharded.Size([3, 2])
    """
    return E.tensordot(_t(a), _t(b), dims)


def einsum(equation, *operands):
    """Einstein summation for expressions that reduce to transposes, sums and (batched)
    matmuls; no repeated index inside one operand.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.einsum("bij,bjk->bik", st.ones(2, 3, 4), st.ones(2, 4, 5)).shape
    sharded.Size([2, 3, 5])
    >>> st.linalg.einsum("ij->j", st.ones(3, 2)).tolist()
    [3.0, 3.0]
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return E.einsum(equation, [_t(o) for o in operands])


def multi_dot(tensors):
    """Product of a chain of matrices (first may be 1-D, last may be 1-D), left to right.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.multi_dot([st.eye(2), st.ones(2, 3), st.ones(3)]).tolist()
    [3.0, 3.0]
    """
    ts = [_t(t) for t in tensors]
    if len(ts) < 2:
        raise ArgumentError(f"multi_dot(): expected at least 2 tensors, got {len(ts)}")
    out = ts[0]
    for t in ts[1:]:
        out = matmul(out, t)
    return out


# ------------------------------------------------------------------------------ norms
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``ord``-norm over ``dim`` (all elements by default): sums and maxima, any layout.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.vector_norm(st.tensor([3., 4.])).item()
    5.0
    """
    x = _t(x)
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise D.DTypeError(f"linalg.vector_norm: expected a floating point tensor, got "
                           f"{x.dtype.name}")
    return DV.vector_norm(x, ord, tuple(range(x.ndim)) if dim is None else dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norm over ``dim``: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``,
    ``2``, ``-2`` (the nuclear and 2-norms through :func:`svdvals`).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.matrix_norm(st.tensor([[1., -2.], [3., 4.]]), ord=1).item()
    6.0
    """
    A = _t(A) if dtype is None else _t(A).to(dtype)
    _matrix("matrix_norm", A)
    check_float("matrix_norm", A)
    r, c = (d % A.ndim for d in dim)
    return DV.matrix_norm(A, ord, r, c, keepdim, svdvals)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` or ``matrix_norm`` by torch's rule: a 2-tuple ``dim`` (or a 2-D input
    with ``ord`` given) is a matrix norm, anything else a vector norm.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.norm(st.tensor([[3., 4.]])).item()
    5.0
    """
    A = _t(A)
    dim = (dim,) if isinstance(dim, int) else dim
    if (dim is not None and len(dim) == 2) or (dim is None and ord is not None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim,
                           dtype=dtype)
    if isinstance(ord, str):
        raise ArgumentError(f"linalg.norm: order {ord!r} needs a matrix (2 dims)")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """Number of singular values above ``max(atol, rtol * largest)`` (torch's default
    ``rtol = eps * max(m, n)``).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.matrix_rank(st.tensor([[1., 2.], [2., 4.]])).item()
    1
    """
    A = _t(A)
    check_float("matrix_rank", A)
    s = svdvals(A)
    return F.sum(s > DV.tolerance(A, s, atol, rtol), -1)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse through the SVD (singular values under the tolerance of
    :func:`matrix_rank` count as zero).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.pinv(st.tensor([[2., 0.], [0., 0.]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    A = _matrix("pinv", A)
    u, s, vh = svd(A, full_matrices=False)
    return DV.pinv(u, s, vh, DV.tolerance(A, s, atol, rtol))
