"""Linear-algebra ops derived from primitives: ``vecdot``, ``multi_dot``, vector and matrix
norms, ``cond``, ``matrix_rank`` and ``pinv``.

They are compositions of tensor methods (``abs``, ``sum``, ``amax``, ``sqrt``, ``where``,
``@``) and of :func:`~..prims.decomp.svd`/:func:`~..prims.decomp.svdvals`, so they run on
any layout and need no gradient rule of their own, except ``pinv``: the SVD's gradient
does not exist at a singular matrix, the pseudo-inverse's does (a composite node).
"""

from __future__ import annotations

import math

import numpy as np

from .... import dtypes as D
from ....amp import lower_precision
from ....core.dispatch import apply, is_tensor, record_composite, via_float32
from ....core.registry import bind, composite, vjp
from ....errors import ArgumentError, DTypeError, ShapeError
from ....grad_mode import is_grad_enabled, no_grad
from ..prims.batched import check_float, cj, herm, matrix, square, t_
from ..prims.decomp import eigh, svd, svdvals
from ..prims.solve import inv_ex


# ------------------------------------------------------------------------------ products
@lower_precision
def vecdot(x, y, *, dim=-1):
    """Dot products along ``dim`` (batched, broadcasting) of ``conj(x)`` and ``y`` (equal
    dtypes), as ``torch.linalg.vecdot``.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.vecdot(st.ones(3, 2), st.ones(2)).tolist()
    [2.0, 2.0, 2.0]
    """
    x, y = t_(x), t_(y)
    if x.dtype != y.dtype:  # torch never promotes in a product
        raise DTypeError(
            f"linalg.vecdot: expected x and y to have the same dtype, but got "
            f"{x.dtype.name} and {y.dtype.name}"
        )
    check_float("vecdot", x)
    return ((x.conj() if x.dtype.is_complex else x) * y).sum(dim)  # conj(x) . y, as torch


def multi_dot(tensors):
    """Product of a chain of matrices (first may be 1-D, last may be 1-D), left to right.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.multi_dot([st.eye(2), st.ones(2, 3), st.ones(3)]).tolist()
    [3.0, 3.0]
    """
    ts = [t_(t) for t in tensors]
    if len(ts) < 2:
        raise ArgumentError(f"multi_dot(): expected at least 2 tensors, got {len(ts)}")
    for i, t in enumerate(ts):  # torch: only the ends may be vectors, nothing batched
        ends = i in (0, len(ts) - 1)
        if t.ndim > 2 or (t.ndim < 2 and not ends) or t.ndim == 0:
            where = "the first tensor" if i == 0 else "the last tensor" if ends else f"tensor {i}"
            need = "1D or 2D" if ends else "2D"
            raise ShapeError(f"multi_dot(): {where} must be {need} but got {t.ndim}D")
        if t.dtype != ts[0].dtype:
            raise DTypeError(
                f"multi_dot(): all tensors must have the same dtype but tensor 0 is "
                f"{ts[0].dtype.name} and tensor {i} {t.dtype.name}"
            )
    out = ts[0]
    for t in ts[1:]:
        out = out @ t
    return out


# ------------------------------------------------------------------------------ rules
def _vector_norm(x, ord, dims, keepdim):
    """``ord``-norm of ``x`` over ``dims``, with torch's subgradient 0 where the norm is 0."""
    if ord == math.inf:
        return x.abs().amax(dims, keepdim)
    if ord == -math.inf:
        return x.abs().amin(dims, keepdim)
    if ord == 0:  # the number of non-zeros; differentiable with a zero gradient, as torch
        never = (x != 0) & (x == 0)
        return (x != 0).to(x.dtype).sum(dims, keepdim) + x.where(never, 0.0).sum(dims, keepdim)
    if ord == 1:
        return x.abs().sum(dims, keepdim)
    if ord == 2:
        return _root((x * x).sum(dims, keepdim), 2)
    a = x.abs()
    if ord < 1:  # d|x|^p/dx is infinite at 0 for p < 1: mask it so 0 * inf gives no NaN
        nz = a != 0
        a = (a.where(nz, 1.0) ** ord).where(nz, 0.0 if ord > 0 else math.inf)
    else:
        a = a**ord
    return _root(a.sum(dims, keepdim), ord)


def _root(s, p):
    """``s ** (1/p)``; its derivative at ``s == 0`` (infinite, times a zero gradient) is
    taken as 0, as torch does: the value passes through a ``where`` that hides the 0s."""
    nz = s != 0
    r = s.where(nz, 1.0) ** (1.0 / p) if p != 2 else s.where(nz, 1.0).sqrt()
    return r.where(nz, 0.0 if p > 0 else math.inf)


def _matrix_norm(a, ord, r, c, keepdim, svdvals):
    """Matrix norm of ``a`` over dims ``(r, c)``; ``svdvals`` gives singular values (for the
    2, -2 and nuclear norms) of a tensor whose matrices are its last two dims."""
    if ord == "fro":  # of the moduli for complex: a real result, as torch
        return _vector_norm(a.abs() if a.dtype.is_complex else a, 2, (r, c), keepdim)
    if ord == 2 and a.numel() == 0:  # torch: 0 for an empty matrix (-2 raises)
        return a.abs().sum((r, c), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(a.permute([d for d in range(a.ndim) if d not in (r, c)] + [r, c]))
        out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((r, c)):
                out = out.unsqueeze(d)
        return out
    if a.numel() == 0 and ord in (math.inf, 1, 2):  # torch: 0 for an empty matrix
        return a.abs().sum((r, c), keepdim)
    if ord in (math.inf, -math.inf, 1, -1):
        # inf: the largest absolute row sum; 1: the largest absolute column sum
        red, over = (c, r) if ord in (math.inf, -math.inf) else (r, c)
        sums = a.abs().sum(red, keepdim=True)
        out = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
        return out if keepdim else out.squeeze((r, c))
    raise ArgumentError(
        f"linalg.matrix_norm: order {ord!r} not supported (use 'fro', 'nuc', "
        f"inf, -inf, 1, -1, 2 or -2)"
    )


def _per_matrix(v):
    """A tolerance as a column against the singular values ``s`` (``(..., k)``): a tensor
    holds one value per matrix (shape ``a.shape[:-2]``, broadcasting), so torch unsqueezes it."""
    return v.unsqueeze(-1) if is_tensor(v) else v


def _tolerance(a, s, atol, rtol):
    """torch's rank tolerance ``max(atol, rtol * s_max)`` per matrix; ``rtol`` defaults to
    ``eps * max(m, n)``, or to 0 where a given ``atol`` is positive. ``atol`` and ``rtol``
    are numbers or tensors broadcasting with the batch shape."""
    if rtol is None:
        rtol = float(np.finfo(a.dtype.np).eps) * max(a.shape[-2:])
        if is_tensor(atol):
            rtol = apply("where", atol > 0, 0.0, rtol)
        elif atol is not None and atol > 0:
            rtol = 0.0
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    tol = smax * _per_matrix(rtol)
    if atol is None:
        return tol
    return tol.maximum(_per_matrix(atol)) if is_tensor(atol) else tol.clamp(min=float(atol))


def _pinv(u, s, vh, tol):
    """``V diag(1/s) U^H`` with singular values under ``tol`` treated as zero."""
    keep = s > tol
    sinv = (1.0 / s.where(keep, 1.0)).where(keep, 0.0)
    return (herm(vh) * sinv.unsqueeze(-2)) @ herm(u)


# ------------------------------------------------------------------------------ norms
@via_float32
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``ord``-norm over ``dim`` (all elements by default): sums and maxima, any layout.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.vector_norm(st.tensor([3., 4.])).item()
    5.0
    """
    x = t_(x)
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.is_complex:  # the norm of the moduli: a real result, as torch
        x = x.abs()
    if not x.dtype.is_floating_point:
        raise D.DTypeError(
            f"linalg.vector_norm: expected a floating point tensor, got {x.dtype.name}"
        )
    dims = tuple(range(x.ndim)) if dim is None else dim
    if x.dtype.itemsize < 4:  # torch accumulates half precision in float32 (300**2 > 65504)
        return _vector_norm(x.float(), ord, dims, keepdim).to(x.dtype)
    return _vector_norm(x, ord, dims, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norm over ``dim``: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``,
    ``2``, ``-2`` (the nuclear and 2-norms through :func:`svdvals`); real for complex input.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.matrix_norm(st.tensor([[1., -2.], [3., 4.]]), ord=1).item()
    6.0
    """
    A = t_(A) if dtype is None else t_(A).to(dtype)
    matrix("matrix_norm", A)
    check_float("matrix_norm", A)
    r, c = (d % A.ndim for d in dim)
    return _matrix_norm(A, ord, r, c, keepdim, svdvals)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` or ``matrix_norm`` by torch's rule: a 2-tuple ``dim`` (or a 2-D input
    with ``ord`` given) is a matrix norm, anything else a vector norm.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.norm(st.tensor([[3., 4.]])).item()
    5.0
    """
    A = t_(A)
    dim = (dim,) if isinstance(dim, int) else dim
    if dim is None and ord is not None and A.ndim not in (1, 2):
        raise ShapeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {A.ndim}D."
        )
    if (dim is not None and len(dim) == 2) or (dim is None and ord is not None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise ArgumentError(f"linalg.norm: order {ord!r} needs a matrix (2 dims)")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A, p=None):
    """Condition number: ``s_max / s_min`` for ``p`` None or 2 (``s_min / s_max`` for -2),
    else ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` of square matrices, ``inf`` where
    ``A`` is singular (torch's rule). Real for complex input.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.cond(st.tensor([[2., 0.], [0., 0.5]])).item()
    4.0
    """
    A = matrix("cond", A)
    if A.numel() == 0:  # torch: 0 for empty matrices, whatever p
        return A.abs().sum((-2, -1))
    if p is None or p in (2, -2):
        s = svdvals(A)
        return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    A = square(f"cond(ord={p})", A)
    inv, info = inv_ex(A)
    ok = info == 0
    inv = inv.where(ok.unsqueeze(-1).unsqueeze(-1), 0.0)  # a singular one's NaNs: no SVD
    return (matrix_norm(A, p) * matrix_norm(inv, p)).where(ok, math.inf)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """Number of singular values above ``max(atol, rtol * largest)`` (torch's default
    ``rtol = eps * max(m, n)``).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.matrix_rank(st.tensor([[1., 2.], [2., 4.]])).item()
    1
    """
    A = t_(A)
    check_float("matrix_rank", A)
    s = svdvals(A)
    return (s > _tolerance(A, s, atol, rtol)).sum(-1)


@bind("pinverse")
@composite("linalg_pinv")
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse through the SVD (singular values under the tolerance of
    :func:`matrix_rank` count as zero); with ``hermitian=True`` through ``eigh``, which reads
    the lower triangle only (as torch).

    Its gradient is torch's formula for the pseudo-inverse (:func:`linalg_pinv_vjp`), not
    the SVD's, which has none at repeated singular values (a singular matrix).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.pinv(st.tensor([[2., 0.], [0., 0.]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    A = matrix("pinv", A)
    with no_grad():
        if hermitian:  # torch: eigh, which reads the lower triangle only
            w, v = eigh(A)
            s = w.abs()
            keep = s > _tolerance(A, s, atol, rtol)
            winv = (1.0 / w.where(keep, 1.0)).where(keep, 0.0)
            P = (v * winv.unsqueeze(-2)) @ herm(v)
        else:
            u, s, vh = svd(A, full_matrices=False)
            P = _pinv(u, s, vh, _tolerance(A, s, atol, rtol))
    params = {"atol": atol, "rtol": rtol, "hermitian": hermitian}
    return record_composite("linalg_pinv", (A,), params, P)


@vjp("linalg_pinv", saves=(0,), save_out=True)
def linalg_pinv_vjp(gs, node):
    """The derivative of P = pinv(A) where A's rank does not change (torch's, for
    ``hermitian=True`` too): ``dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P``,
    so ``gA = -P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A)``."""
    (A,) = node.args
    if is_grad_enabled():  # create_graph: P as a function of A
        P = pinv(A, **node.params)
    else:
        (P,) = node.saved["out"]
    G = cj(gs[0])  # (the engine carries the conjugate of torch's gradient: batched.cj)
    PH, GH = herm(P), herm(G)
    gA = -(PH @ G) @ PH
    gA = gA + (GH - A @ (P @ GH)) @ (P @ PH)
    gA = gA + (PH @ P) @ (GH - (GH @ P) @ A)
    return (cj(gA),)


@bind("norm")
def tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """torch's ``Tensor.norm``: ``'fro'`` (default) and numbers are vector norms over
    ``dim`` (all elements by default), ``'nuc'`` the nuclear norm of matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([3., 4.]).norm().item()
    5.0
    """
    if p == "nuc":
        return matrix_norm(self, "nuc", dim or (-2, -1), keepdim, dtype=dtype)
    return vector_norm(self, 2 if p == "fro" else p, dim, keepdim, dtype=dtype)
