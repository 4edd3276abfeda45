"""torch.linalg's LU family for matrices that fit on one worker: ``lu``, ``lu_factor``,
``lu_factor_ex``, ``lu_solve`` and ``st.lu_unpack``.

Three batched primitives (one ``linalg`` kernel per batch block, see ``batched.py``):
``linalg_lu_factor`` (LAPACK getrf: partial pivoting, packed ``LU``, 1-based int32
``pivots``, ``info`` = the first exactly-zero pivot), ``linalg_lu_solve`` (getrs) and
``linalg_lu_perm`` (the permutation matrix of a pivot vector). ``lu`` and ``lu_unpack`` are
compositions (``tril``/``triu`` of the packed factor), so their gradients flow through the
gradient of ``linalg_lu_factor`` (torch's ``linalg_lu_backward``, square and rectangular).
NumPy and CuPy have no LU routine: the kernels below loop over the ``k = min(m, n)`` columns,
vectorized over the batch and the rows. A big split matrix is gathered on one worker up to
``GATHER_LIMIT`` bytes (the distributed block LU behind ``solve``/``inv``/``det`` is
``lu_dist.py``).
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, needs, placement, unbroadcast
from ....core.registry import nondiff, primitive, vjp
from ....errors import ArgumentError, DTypeError, ShapeError, UnsupportedDType
from ....layout import Layout
from ..derived.extra import solve_triangular
from .batched import (
    BATCHED,
    LinAlgError,
    cj,
    dims_str,
    first_info,
    herm,
    linalg_kernel,
    plan_batched,
    t_,
)

LUResult = collections.namedtuple("LUResult", ["P", "L", "U"])  # torch.return_types.linalg_lu
LUFactorResult = collections.namedtuple("LUFactorResult", ["LU", "pivots"])
LUFactorExResult = collections.namedtuple("LUFactorExResult", ["LU", "pivots", "info"])
LUUnpackResult = collections.namedtuple("LUUnpackResult", ["P", "L", "U"])

_FLOATS = (D.float32, D.float64, D.complex64, D.complex128)


# ------------------------------------------------------------------------------ kernels
def _amax_index(xp, v):
    """LAPACK's ``i?amax`` along the last axis: the first largest ``|re| + |im|`` (``|v|``
    for reals); a NaN wins only in the first place (its running-max loop compares with
    ``>``), as torch's pivots show."""
    mag = xp.abs(v.real) + xp.abs(v.imag) if v.dtype.kind == "c" else xp.abs(v)
    nan = xp.isnan(mag)
    first = xp.argmax(xp.where(nan, -1.0, mag), axis=-1)
    return xp.where(nan[..., 0], 0, first)


def getrf(xp, a):
    """Partial-pivoting LU of a stack ``a`` (b, m, n), in place: returns ``(lu, pivots,
    info)`` with 1-based pivots (b, k) and ``info`` the 1-based column of the first zero
    pivot (0: none), as LAPACK's getrf; a zero pivot leaves its column unscaled."""
    b, m, n = a.shape
    k = min(m, n)
    piv = xp.zeros((b, k), np.int32)
    info = xp.zeros((b,), np.int32)
    rows = xp.arange(b)
    for j in range(k):
        p = j + _amax_index(xp, a[:, j:, j])
        piv[:, j] = p + 1
        top = a[rows, j].copy()
        a[rows, j] = a[rows, p]
        a[rows, p] = top
        d = a[:, j, j]
        zero = d == 0
        info = xp.where((info == 0) & zero, j + 1, info).astype(np.int32)
        a[:, j + 1 :, j] /= xp.where(zero, 1, d)[:, None]
        a[:, j + 1 :, j + 1 :] -= a[:, j + 1 :, j, None] * a[:, j, None, j + 1 :]
    return a, piv, info


def _swap_rows(xp, x, p, order):
    """Swap rows ``j`` and ``p[:, j]`` of each stacked ``x`` for ``j`` in ``order``."""
    rows = xp.arange(x.shape[0])
    for j in order:
        top = x[rows, j].copy()
        x[rows, j] = x[rows, p[:, j]]
        x[rows, p[:, j]] = top


def _op_lu_factor(xp, a, shapes, dtypes):
    bs = shapes[0][:-2]
    m, n = a.shape[-2:]
    lu, piv, info = getrf(xp, xp.array(a, dtype=dtypes[0]).reshape(-1, m, n))
    return (lu, piv), xp.asnumpy(info).reshape(bs) if hasattr(xp, "asnumpy") else info.reshape(bs)


def _op_lu_solve(xp, lu, piv, b, shapes, dtypes, adjoint=False):
    """getrs: ``A X = B`` (``A^H X = B`` with ``adjoint``) from ``A = P L U``, by row swaps
    and column-oriented substitutions vectorized over the batch and the right-hand sides."""
    bs = shapes[0][:-2]
    n, r = b.shape[-2:]
    lu = xp.broadcast_to(lu, bs + (n, n)).reshape(-1, n, n)
    p = xp.broadcast_to(piv, bs + (n, 1)).reshape(-1, n).astype(np.int64) - 1
    x = xp.array(xp.broadcast_to(b, bs + (n, r)), dtype=dtypes[0]).reshape(-1, n, r)
    if not adjoint:  # x = U^-1 L^-1 P^T b
        _swap_rows(xp, x, p, range(n))
        for j in range(n):
            x[:, j + 1 :] -= lu[:, j + 1 :, j, None] * x[:, j, None, :]
        for j in reversed(range(n)):
            x[:, j] /= lu[:, j, j, None]
            x[:, :j] -= lu[:, :j, j, None] * x[:, j, None, :]
    else:  # A^H = U^H L^H P^T: x = P L^-H U^-H b
        c = lu.conj()
        for j in range(n):
            x[:, j] /= c[:, j, j, None]
            x[:, j + 1 :] -= c[:, j, j + 1 :, None] * x[:, j, None, :]
        for j in reversed(range(n)):
            x[:, :j] -= c[:, j, :j, None] * x[:, j, None, :]
        _swap_rows(xp, x, p, reversed(range(n)))
    return (x.reshape(shapes[0]),), None


def _op_lu_perm(xp, piv, shapes, dtypes, m, dtype):
    """``P`` with ``A = P L U`` from getrf's pivots: the row swaps applied to ``arange(m)``
    give ``perm`` (row ``i`` of ``P^T A`` is row ``perm[i]`` of ``A``), and ``P[perm[i], i] =
    1``."""
    k = piv.shape[-2]
    b = math.prod(piv.shape[:-2])  # reshape(-1, 0) would be ambiguous for k = 0
    p = piv.reshape(b, k).astype(np.int64) - 1
    perm = xp.array(xp.broadcast_to(xp.arange(m)[:, None], (b, m, 1)))
    _swap_rows(xp, perm, p, range(k))
    out = xp.zeros((b, m, m), dtypes[0])
    out[xp.arange(b)[:, None], perm[..., 0], xp.arange(m)[None, :]] = 1
    return (out.reshape(shapes[0]),), None


# the batched kernel's op table (batched.py) takes these ops; registered here, at import
BATCHED.update(lu_factor=_op_lu_factor, lu_solve=_op_lu_solve, lu_perm=_op_lu_perm)


# ------------------------------------------------------------------------------ checks
def _lu_input(op, a):
    """``a`` as a float tensor of at least 2 dims (torch: NotImplementedError for other
    dtypes, as its ``lu_cpu`` kernel is not defined for them)."""
    a = t_(a)
    if a.ndim < 2:
        raise ShapeError(
            f"linalg.{op}: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(a.shape)} instead"
        )
    if a.dtype not in _FLOATS:
        raise UnsupportedDType(f'"lu_cpu" not implemented for {a.dtype.name} (linalg.{op})')
    return a


def _check_pivot(op, pivot):
    if not pivot:  # torch: only CUDA (MAGMA/cuSOLVER) factors without pivoting
        raise ArgumentError(f"linalg.{op}: LU without pivoting is not implemented on the CPU")


def _pivots(op, piv, lo, hi):
    """``piv`` as an int32 tensor whose values the workers check to lie in ``[lo, hi]``
    (torch's CPU check; an out-of-range pivot would index out of the matrix). No read: one
    out of range raises at the next read, an ``IndexError``."""
    piv = t_(piv)
    if piv.dtype != D.int32:
        raise DTypeError(
            f"{op}: pivots should be a Tensor of scalar type int32, got {piv.dtype.name}"
        )
    if piv.numel() and hi >= lo:
        what = f"{op}: pivots must lie between {lo} and {hi} (LU.size(-2)) inclusive, got"
        return apply("check_indices", piv, lo, hi + 1, None, what)
    if piv.numel():
        raise ArgumentError(f"{op}: pivots given for an LU factor with {hi} rows")
    return piv


def _raise_info(op, info, batched):
    """torch's error for ``info > 0``: the first batch element with a zero pivot ``U[i,i]``."""
    got = first_info(info, batched)
    if got is not None:
        where, v = got
        raise LinAlgError(
            f"torch.linalg.{op}: {where}U[{v},{v}] is zero and using it on "
            "lu_solve would result in a division by zero. If you still want to perform the "
            "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )


# ------------------------------------------------------------------------------ lu_factor
@primitive("linalg_lu_factor", kind="linalg", kernels=[linalg_kernel])
def _plan_lu_factor(ex, *ts, **params):
    """Batched getrf: one ``linalg`` kernel command per batch block (``info`` with it)."""
    params.setdefault("check", False)
    return plan_batched(ex, "lu_factor", ts, **params)


@vjp("linalg_lu_factor", save_out=True)
def linalg_lu_factor_vjp(gs, node):
    """torch's ``lu_factor_ex_backward``: the packed gradient read as ``(gL, gU)`` (their
    strict lower and upper triangles) through ``linalg_lu_backward``; in torch's convention,
    so the engine's gradient is conjugated in and out (see :func:`~.batched.cj`)."""
    lu, piv = node.saved["out"][:2]
    if gs[0] is None:
        return (None,)
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    g = cj(gs[0])
    P, L, U = lu_unpack(lu.detach(), piv)
    return (cj(lu_backward(g[..., :, :k], g[..., :k, :], P, L, U)),)


def lu_backward(gl, gu, P, L, U):
    """torch's ``linalg_lu_backward`` (``A = P L U``, ``L`` m x k unit lower, ``U`` k x n):
    square ``P L^-H (L^H gL o 1_L + gU U^H o 1_U) U^-H``; wide and tall matrices split the
    wider factor into its square part and the rest (torch's formulas, ``FunctionsManual.cpp``)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        g = (herm(L) @ gl).tril(-1) + (gu @ herm(U)).triu()
        g = solve_triangular(herm(U), g, upper=False, left=False)
        g = solve_triangular(herm(L), g, upper=True, unitriangular=True)
    elif m < n:  # A = P L [U1 U2]
        g = herm(L) @ gl - gu.triu() @ herm(U)
        g = solve_triangular(herm(U[..., :, :k]), g.tril(-1), upper=False, left=False)
        g = apply("cat", g + gu[..., :, :k].triu(), gu[..., :, k:], dim=g.ndim - 1)
        g = solve_triangular(herm(L), g, upper=True, unitriangular=True)
    else:  # A = P [L1; L2] U
        g = gu @ herm(U) - herm(L) @ gl.tril(-1)  # L2's rows lie below the diagonal
        g = solve_triangular(herm(L[..., :k, :]), g.triu(), upper=True, unitriangular=True)
        g = apply("cat", g + gl[..., :k, :].tril(-1), gl[..., k:, :], dim=g.ndim - 2)
        g = solve_triangular(herm(U), g, upper=False, left=False)
    return P @ g


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """The LU factorization with partial pivoting ``A = P L U`` of (a batch of) ``m x n``
    matrices, packed as LAPACK's getrf: ``(LU, pivots, info)``. ``LU`` holds ``U`` on and
    above the diagonal and ``L``'s multipliers below it (its unit diagonal implied);
    ``pivots`` (int32, 1-based, ``min(m, n)`` per matrix) says row ``i`` was swapped with row
    ``pivots[i]``; ``info`` (int32) is the 1-based index of the first exactly-zero pivot
    (0: none). ``check_errors=True`` raises :class:`LinAlgError` where ``info > 0``.

    Examples
    --------
    >>> import sharded as st
    >>> LU, pivots, info = st.linalg.lu_factor_ex(st.tensor([[1., 2.], [3., 4.]]))
    >>> LU.tolist(), pivots.tolist(), info.item()
    ([[3.0, 4.0], [0.3333333432674408, 0.6666666269302368]], [2, 2], 0)
    """
    A = _lu_input("lu_factor_ex", A)
    _check_pivot("lu_factor", pivot)
    LU, piv, info = apply("linalg_lu_factor", A, check=False, want_info=True)
    if check_errors:
        _raise_info("lu_factor_ex", info, A.ndim > 2)
    return LUFactorExResult(LU, piv, info)


def lu_factor(A, *, pivot=True):
    """:func:`lu_factor_ex` without ``info``: ``(LU, pivots)``; a matrix with a zero pivot
    (singular) raises :class:`LinAlgError` naming the batch element, as torch (read from
    ``info``: a short wait). :func:`lu` factors singular matrices without raising.

    Examples
    --------
    >>> import sharded as st
    >>> LU, pivots = st.linalg.lu_factor(st.tensor([[0., 1.], [2., 0.]]))
    >>> LU.tolist(), pivots.tolist()
    ([[2.0, 0.0], [0.0, 1.0]], [2, 2])
    """
    A = _lu_input("lu_factor", A)
    _check_pivot("lu_factor", pivot)
    LU, piv, info = apply("linalg_lu_factor", A, check=False, want_info=True)
    _raise_info("lu_factor", info, A.ndim > 2)
    return LUFactorResult(LU, piv)


# ------------------------------------------------------------------------------ unpack
@primitive("linalg_lu_perm", kind="linalg", kernels=[linalg_kernel])
def _plan_lu_perm(ex, *ts, **params):
    """Permutation matrices of pivots (as ``(..., k, 1)``): one kernel per batch block."""
    params.setdefault("check", False)
    return plan_batched(ex, "lu_perm", ts, **params)


nondiff("linalg_lu_perm")


def _eye(m, k, dtype):
    """An ``m x k`` identity replicated on every worker (the unit diagonal of ``L``)."""
    return apply("eye", placement((m, k), layout=Layout.replicated()), dtype)


def _empty(dtype):
    return apply("full", placement((0,)), 0, dtype)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` with ``A = P L U`` from :func:`~sharded.linalg.lu_factor`'s packed
    ``LU_data`` (m x n) and ``LU_pivots``: ``P`` m x m, ``L`` m x k unit lower, ``U`` k x n
    upper (``k = min(m, n)``). ``unpack_data=False`` gives empty ``L`` and ``U``,
    ``unpack_pivots=False`` an empty ``P``. ``L`` and ``U`` are differentiable.

    Examples
    --------
    >>> import sharded as st
    >>> P, L, U = st.lu_unpack(*st.linalg.lu_factor(st.tensor([[0., 1.], [2., 0.]])))
    >>> P.tolist(), L.tolist(), U.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]])
    """
    LU = t_(LU_data)
    if LU.ndim < 2:
        raise ShapeError(
            f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(LU.shape)} instead"
        )
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    piv = t_(LU_pivots)
    if piv.dtype != D.int32:
        raise DTypeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            f"dtype, got {piv.dtype.name}. Note: this function is intended to be used with "
            "the output produced by torch.linalg.lu_factor"
        )
    want = tuple(LU.shape[:-2]) + tuple(piv.shape[-1:])
    try:  # torch broadcasts the pivots' batch dims to LU_data's
        fits = piv.ndim >= 1 and piv.shape[-1] <= k and np.broadcast_shapes(piv.shape, want) == want
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(
            f"torch.lu_unpack: LU_pivots of shape {tuple(piv.shape)} do not fit LU_data of "
            f"shape {tuple(LU.shape)} (expected {tuple(LU.shape[:-2]) + (k,)})"
        )
    if tuple(piv.shape) != want:
        piv = piv.expand(*want)
    if unpack_data:
        L = LU[..., :, :k].tril(-1) + _eye(m, k, LU.dtype)
        U = LU[..., :k, :].triu()
    else:
        L = U = _empty(LU.dtype)
    if unpack_pivots:
        piv = _pivots("lu_unpack", piv, 1, m)
        P = apply("linalg_lu_perm", piv.unsqueeze(-1), m=m, dtype=LU.dtype.name)
    else:
        P = _empty(LU.dtype)
    return LUUnpackResult(P, L, U)


def lu(A, *, pivot=True):
    """The LU decomposition with partial pivoting ``A = P L U`` of (a batch of) ``m x n``
    matrices: ``P`` m x m permutation, ``L`` m x k unit lower triangular, ``U`` k x n upper
    triangular (``k = min(m, n)``); singular matrices factor without an error. ``L`` and
    ``U`` are differentiable (torch's rule, also for rectangular ``A``).

    Examples
    --------
    >>> import sharded as st
    >>> P, L, U = st.linalg.lu(st.tensor([[1., 2.], [3., 4.], [5., 6.]]))
    >>> P.tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    >>> [[round(v, 4) for v in r] for r in U.tolist()]
    [[5.0, 6.0], [0.0, 0.8]]
    """
    A = _lu_input("lu", A)
    _check_pivot("lu_factor", pivot)
    LU, piv, _ = apply("linalg_lu_factor", A, check=False, want_info=True)
    return LUResult(*lu_unpack(LU, piv))


# ------------------------------------------------------------------------------ lu_solve
@primitive("linalg_lu_solve", kind="linalg", kernels=[linalg_kernel])
def _plan_lu_solve(ex, *ts, **params):
    """Batched getrs over ``(LU, pivots (..., n, 1), B)``: one kernel per batch block."""
    params.setdefault("check", False)
    return plan_batched(ex, "lu_solve", ts, **params)


@vjp("linalg_lu_solve", save_out=True, saves=(0, 1))
def linalg_lu_solve_vjp(gs, node):
    """torch's ``linalg_lu_solve_LU`` (left=True; ``left=False`` is composed of
    transposes), and ``gB = lu_solve(LU, pivots, gX, adjoint=not adjoint)``."""
    lu, pcol, b = node.args
    adjoint = node.params.get("adjoint", False)
    x = node.saved["out"][0]
    gx = cj(gs[0])
    gb = apply("linalg_lu_solve", lu, pcol, gx, adjoint=not adjoint)
    glu = None
    if needs(lu):
        P, L, U = lu_unpack(lu.detach(), pcol.squeeze(-1))
        if not adjoint:
            gr = solve_triangular(herm(U), -(gx @ herm(x)), upper=False)
            gl = solve_triangular(herm(L), gr @ herm(U), upper=True, unitriangular=True)
            glu = gl.tril(-1) + gr.triu()
        else:
            gr = -(P.mT @ x @ herm(gx) @ P)
            gr = solve_triangular(herm(L), gr, upper=True, left=False, unitriangular=True)
            gu = solve_triangular(herm(U), herm(L) @ gr, upper=False, left=False).triu()
            glu = gr.tril(-1) + gu
        glu = unbroadcast(cj(glu), lu)
    return (glu, None, unbroadcast(cj(gb), b))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """The solution ``X`` of ``A X = B`` from :func:`lu_factor`'s ``(LU, pivots)`` of ``A``
    (``X A = B`` with ``left=False``; ``A^H`` for ``A`` with ``adjoint=True``). Batch dims of
    ``B`` broadcast against ``LU``'s; ``B`` must have at least 2 dims. The pivots' range is
    checked (one short read, as torch). Differentiable in ``LU`` and ``B``.

    Examples
    --------
    >>> import sharded as st
    >>> LU, pivots = st.linalg.lu_factor(st.tensor([[3., 1.], [1., 2.]], dtype=st.float64))
    >>> st.linalg.lu_solve(LU, pivots, st.tensor([[9.], [8.]], dtype=st.float64)).tolist()
    [[2.0], [3.0]]
    """
    LU, B = t_(LU), t_(B)
    if LU.dtype not in _FLOATS:
        raise DTypeError(
            "torch.linalg.lu_solve: Expected a floating point or complex tensor as input. "
            f"Got {LU.dtype.name}"
        )
    if LU.ndim < 2 or LU.shape[-1] != LU.shape[-2]:
        raise ShapeError(
            "torch.linalg.lu_solve: A must be batches of square matrices, but they are "
            f"{dims_str(LU.shape[-2:])} matrices"
        )
    if B.ndim < 2:
        raise ShapeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.dtype != B.dtype:
        raise DTypeError(
            f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{LU.dtype.name} and B of type {B.dtype.name} instead"
        )
    n = LU.shape[-1]
    piv = t_(pivots)
    if piv.dtype != D.int32:
        raise DTypeError(
            f"linalg.lu_solve: pivots should be a Tensor of scalar type int32, got {piv.dtype.name}"
        )
    if piv.ndim < 1 or piv.shape[-1] != n or tuple(piv.shape[:-1]) != tuple(LU.shape[:-2]):
        raise ShapeError(
            f"linalg.lu_solve: Number of pivots per batch should be same as the dimension of "
            f"the matrix: pivots of shape {tuple(piv.shape)} for LU of shape {tuple(LU.shape)}"
        )
    if B.shape[-2 if left else -1] != n:
        eq = "AX = B" if left else "XA = B"
        raise ShapeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} "
            f"({dims_str(LU.shape[-2:])} and {dims_str(B.shape[-2:])})"
        )
    piv = _pivots("linalg.lu_solve", piv, 1, n)
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return herm(apply("linalg_lu_solve", LU, piv.unsqueeze(-1), herm(B), adjoint=not adjoint))
    return apply("linalg_lu_solve", LU, piv.unsqueeze(-1), B, adjoint=adjoint)
