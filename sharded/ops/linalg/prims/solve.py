"""Solvers and determinants of ``st.linalg``: ``solve``, ``inv``, ``det``, ``slogdet``,
``lstsq``, ``tensorsolve`` and their ``*_ex`` variants, with their batched primitives
(``linalg_solve``, ``linalg_inv``, ``linalg_det``, ``linalg_slogdet``, ``linalg_lstsq``: one
``linalg`` kernel per batch block, see ``batched.py``) and gradient rules.

A big split matrix is solved by the distributed block LU (``lu_dist.py``); a tall split ``lstsq``
goes through the distributed QR (``tall.py``). Rules that need an inverse (``det``,
``slogdet``, ``inv``) assume a non-singular matrix.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, needs, placement, unbroadcast
from ....core.registry import bind, primitive, vjp
from ....errors import ArgumentError, AutogradError, DTypeError, ShapeError
from ....grad_mode import is_grad_enabled
from .batched import (
    ExResult,
    check_float,
    cj,
    dims_str,
    herm,
    linalg_kernel,
    matrix,
    plan_batched,
    square,
    t_,
)
from .lu_dist import inv_any, inv_big, is_big, logdet_vjp, solve_any, solve_vjp
from .tall import is_tall

SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
LstsqResult = collections.namedtuple(
    "LstsqResult", ["solution", "residuals", "rank", "singular_values"]
)


def _same(op, a, b):
    check_float(op, a, b)
    if a.dtype != b.dtype:  # torch never promotes A and B of a solver
        raise DTypeError(
            f"linalg.{op}: Expected A and B to have the same dtype, but found A of type "
            f"{a.dtype.name} and B of type {b.dtype.name} instead"
        )
    return a, b


def _rhs(op, a, b):
    """torch's rule: ``b`` is a (batch of) vector(s) if 1-D or of shape ``a.shape[:-1]``."""
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    bm = b.unsqueeze(-1) if vector else b
    if bm.ndim < 2 or bm.shape[-2] != a.shape[-2]:
        raise ShapeError(
            f"linalg.{op}: incompatible shapes of A and B for the equation AX = B "
            f"({dims_str(a.shape)} and {dims_str(b.shape)})"
        )
    return bm, vector


# ------------------------------------------------------------------------------ solve
@primitive("linalg_solve", kind="linalg", kernels=[linalg_kernel])
def _plan_solve(ex, *ts, **params):
    """Batched ``solve``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "solve", ts, **params)


@vjp("linalg_solve", save_out=True, saves=(0,))
def linalg_solve_vjp(gs, node):
    return solve_vjp(gs, node)


def solve_ex(A, B, *, left=True, check_errors=False):
    """:func:`solve` returning ``(result, info)`` without checking for singular matrices
    (``info`` is non-zero where the matrix is singular; no wait for the workers). One split
    2-D matrix is solved on one worker here (up to ``GATHER_LIMIT`` bytes).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.solve_ex(st.eye(2), st.ones(2)).info.tolist()
    0
    """
    A, B = _same("solve", square("solve", A), t_(B))
    if not left:
        r = solve_ex(A.mT, B.mT, check_errors=check_errors)
        return ExResult(r.result.mT, r.info)
    bm, vector = _rhs("solve", A, B)
    x, info = apply("linalg_solve", A, bm, check=check_errors, want_info=True)
    return ExResult(x.squeeze(-1) if vector else x, info)


def solve(A, B, *, left=True):
    """The solution ``X`` of ``A X = B`` (or ``X A = B`` with ``left=False``).

    Batches (broadcast, any batch split) solve one kernel per shard; one big split matrix
    uses the distributed block LU with partial pivoting. A singular matrix raises
    :class:`LinAlgError` naming the batch element.

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[3., 1.], [1., 2.]])
    >>> st.linalg.solve(A, st.tensor([9., 8.])).tolist()
    [2.0, 3.0]
    """
    A, B = _same("solve", square("solve", A), t_(B))
    if not left:
        return solve(A.mT, B.mT).mT
    bm, vector = _rhs("solve", A, B)
    x = apply("lu_solve", A, bm) if is_big(A) else apply("linalg_solve", A, bm)
    return x.squeeze(-1) if vector else x


# ------------------------------------------------------------------------------ inv
@primitive("linalg_inv", kind="linalg", kernels=[linalg_kernel])
def _plan_inv(ex, *ts, **params):
    """Batched ``inv``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "inv", ts, **params)


@vjp("linalg_inv", save_out=True)
def linalg_inv_vjp(gs, node):
    x = node.saved["out"][0]
    return (-(x.mT @ gs[0] @ x.mT),)  # d(A^-1) = -A^-1 dA A^-1


@bind("inverse", prim="linalg_inv")
def inv(A):
    """The inverse of (a batch of) square matrices; singular ones raise :class:`LinAlgError`.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.inv(st.tensor([[2., 0.], [0., 4.]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    A = square("inv", A)
    return inv_big(A) if is_big(A) else apply("linalg_inv", A)


def inv_ex(A, *, check_errors=False):
    """:func:`inv` returning ``(inverse, info)`` without raising.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.inv_ex(st.zeros(2, 2)).info.item() != 0
    True
    """
    A = square("inv", A)
    return ExResult(*apply("linalg_inv", A, check=check_errors, want_info=True))


# ------------------------------------------------------------------------------ det
@primitive("linalg_det", kind="linalg", kernels=[linalg_kernel])
def _plan_det(ex, *ts, **params):
    """Batched ``det``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "det", ts, **params)


@vjp("linalg_det", save_out=True, saves=(0,))
def linalg_det_vjp(gs, node):
    (a,) = node.args
    d = node.saved["out"][0]
    scale = (gs[0] * d).unsqueeze(-1).unsqueeze(-1)
    return (scale * inv_any(a).mT,)  # d det = det * tr(A^-1 dA)


@primitive("linalg_slogdet", kind="linalg", kernels=[linalg_kernel])
def _plan_slogdet(ex, *ts, **params):
    """Batched ``slogdet``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "slogdet", ts, **params)


@vjp("linalg_slogdet", saves=(0,), save_out=True)
def linalg_slogdet_vjp(gs, node):
    return logdet_vjp(gs, node)


@bind("det", prim="linalg_det")
def det(A):
    """Determinant of (a batch of) square matrices (a big split matrix: from its block LU).

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.det(st.tensor([[1., 2.], [3., 4.]])).item()  # doctest: +ELLIPSIS
    -2.0...
    """
    A = square("det", A)
    if is_big(A):
        s, la = apply("lu_slogdet", A)
        return s * la.exp()
    return apply("linalg_det", A)


@bind("slogdet", prim="linalg_slogdet")
def slogdet(A):
    """``(sign, log|det|)`` of (a batch of) square matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.slogdet(st.tensor([[2., 0.], [0., 3.]])).sign.item()
    1.0
    """
    A = square("slogdet", A)
    if is_big(A):
        return SlogdetResult(*apply("lu_slogdet", A))
    return SlogdetResult(*apply("linalg_slogdet", A))


@bind("logdet")
def logdet(A):
    """``log(det(A))`` (NaN for a negative real determinant, as torch; the principal log
    ``log|det| + i arg(det)`` of a complex one).

    Examples
    --------
    >>> import sharded as st
    >>> round(st.tensor([[2., 0.], [0., 3.]]).logdet().item(), 6)
    1.791759
    """
    sign, logabs = slogdet(A)
    if sign.dtype.is_complex:  # torch: log(sign) + log|det|, the principal log of det
        return sign.log() + logabs
    # the where primitive (elementwise family) by name, as st.where(c, x, y)
    return apply("where", sign > 0, logabs, apply("where", sign == 0, -math.inf, math.nan))


# ------------------------------------------------------------------------------ lstsq
@primitive("linalg_lstsq", kind="linalg", kernels=[linalg_kernel])
def _plan_lstsq(ex, *ts, **params):
    """Batched ``lstsq``: one ``linalg`` kernel command per batch block."""
    return plan_batched(ex, "lstsq", ts, **params)


@vjp("linalg_lstsq", save_out=True, saves=(0, 1))
def linalg_lstsq_vjp(gs, node):
    """Full column rank, tall: ``X = (A^H A)^-1 A^H B``; with ``Y = (A^H A)^-1 gX`` and the
    residual ``E = B - A X``: ``gA = E Y^H - A Y X^H``, ``gB = A Y`` (torch's convention: the
    engine's gradients conjugated in and out, see :func:`~.batched.cj`)."""
    a, b = node.args
    if any(g is not None for g in gs[1:]):
        raise AutogradError(
            "lstsq: only the solution is differentiable (not residuals, rank or singular values)"
        )
    if a.shape[-2] < a.shape[-1]:
        return _wide_lstsq_vjp(gs[0], a, b)
    x = node.saved["out"][0]
    y = solve_any(herm(a) @ a, cj(gs[0]))
    ay = a @ y
    ga = cj((b - a @ x) @ herm(y) - ay @ herm(x)) if needs(a) else None
    return (unbroadcast(ga, a) if ga is not None else None, unbroadcast(cj(ay), b))


def _wide_lstsq_vjp(gx, a, b):
    """Full row rank, wide: the minimum-norm ``X = A^H Z`` with ``Z = (A A^H)^-1 B`` (torch
    differentiates ``pinv(A) @ B``, the same function there). With ``W = (A A^H)^-1 A gX``:
    ``gA = Z gX^H - (W Z^H + Z W^H) A``, ``gB = W`` (conjugated in and out as above)."""
    g = cj(gx)
    m = a @ herm(a)
    z = solve_any(m, b)
    w = solve_any(m, a @ g)
    ga = cj(z @ herm(g) - (w @ herm(z) + z @ herm(w)) @ a) if needs(a) else None
    return (unbroadcast(ga, a) if ga is not None else None, unbroadcast(cj(w), b))


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A X ~= B``: ``(solution, residuals, rank,
    singular_values)``. A tall matrix split by rows solves ``R X = Q^T B`` through the
    distributed QR (``R``'s least squares: the minimum-norm solution also for a
    rank-deficient ``A``); batches use one
    NumPy ``lstsq`` per matrix. ``residuals`` are squared column norms of ``A X - B`` for
    tall systems (real, as the singular values, for complex input).

    As torch (CPU), ``driver`` (``'gelsy'`` by default, ``'gelsd'``, ``'gelss'``, ``'gels'``)
    decides which outputs are empty ``(0,)`` tensors: ``residuals`` unless the driver is not
    ``'gelsy'``, ``m > n`` and every matrix has full rank (``'gelsd'``/``'gelss'`` read the
    ranks for that: a short wait); ``rank`` with ``'gels'``; ``singular_values`` unless
    ``'gelsd'``/``'gelss'``. As torch's, the solution and the residuals have gradients, the
    rank and the singular values none.

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> st.linalg.lstsq(A, st.tensor([[1.], [2.], [3.]])).solution.tolist()
    [[1.0], [2.0]]
    """
    if driver not in _DRIVERS:
        raise ArgumentError(
            f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, "
            f"gelss), got {driver!r}"
        )
    A, B = _same("lstsq", t_(A), t_(B))
    matrix("lstsq", A)
    vector = B.ndim == A.ndim - 1
    bm = B.unsqueeze(-1) if vector else B
    if bm.shape[-2] != A.shape[-2]:
        raise ShapeError(
            f"linalg.lstsq: A and B must have the same number of rows, got "
            f"{tuple(A.shape)} and {tuple(B.shape)}"
        )
    if is_tall(A) and A.ndim == 2 and bm.ndim == 2:
        q, r = apply("qr_tall", A)
        # R X = Q^H B by R's own least squares (SVD, small and replicated): the minimum-norm
        # solution, as torch's gelsd gives, also when A is rank-deficient (a zero on R's
        # diagonal would make a triangular solve fail)
        x = apply("linalg_lstsq", r, herm(q) @ bm, rcond=rcond)[0]
        if A.shape[0] > A.shape[1]:  # squared moduli: real, as torch
            res = ((A @ x - bm).abs() ** 2).sum(0)
        else:  # torch's residuals are empty for a square system
            res = apply("full", placement((0,)), 0, D.to_real(A.dtype))
        sv = apply("linalg_svdvals", r)  # r is small and replicated: one batched kernel
        # rank as gelsd counts it (singular values above rcond * the largest)
        eps = float(np.finfo(D.to_real(A.dtype).np).eps) * max(A.shape)
        tol = sv.amax() * (eps if rcond is None or rcond < 0 else rcond)
        out = (x, res, (sv > tol).sum(), sv.detach())  # (torch's have no gradient)
    else:
        out = apply("linalg_lstsq", A, bm, rcond=rcond)
        if is_grad_enabled() and (needs(A) or needs(bm)):
            # the kernel's residuals are a value only: as a function of A and B (the tall
            # path's), their gradient flows as torch's does; torch's singular values have none
            x = out[0]
            out = (x, ((A @ x - bm).abs() ** 2).sum(-2), out[2], out[3].detach())
    x = out[0].squeeze(-1) if vector else out[0]
    return LstsqResult(x, *_driver_outputs(driver or "gelsy", A, *out[1:]))


_DRIVERS = (None, "gelsy", "gelsd", "gelss", "gels")


def _driver_outputs(driver, A, res, rank, sv):
    """``residuals, rank, singular_values`` as torch's ``driver`` returns them (empty
    ``(0,)`` tensors for what that LAPACK driver does not compute)."""

    def empty(dt):
        return apply("full", placement((0,)), 0, dt)

    m, n = A.shape[-2], A.shape[-1]
    # gels assumes full rank; gelsd/gelss drop the residuals of a rank-deficient batch
    if driver == "gelsy" or m <= n or (driver != "gels" and bool((rank < n).any())):
        res = empty(res.dtype)
    if driver == "gels":
        rank = empty(D.int64)
    if driver not in ("gelsd", "gelss"):
        sv = empty(sv.dtype)
    return res, rank, sv


def tensorsolve(A, B, dims=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``: ``A`` reshaped to a square matrix
    ``(prod(B.shape), prod(rest))`` and solved (distributed when big).

    Examples
    --------
    >>> import sharded as st
    >>> A = st.eye(6).reshape(6, 2, 3)
    >>> st.linalg.tensorsolve(A, st.ones(6)).shape
    sharded.Size([2, 3])
    """
    A, B = t_(A), t_(B)
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute([d for d in range(A.ndim) if d not in dims] + dims)
    nb = B.ndim
    xshape = tuple(A.shape[nb:])
    n = math.prod(B.shape)
    # torch asks only for a square reshape: prod(A.shape[:B.ndim]) == prod(A.shape[B.ndim:])
    # == B.numel(), not A.shape[:B.ndim] == B.shape ((3, 2, 6) solves against a (2, 3) B)
    if math.prod(A.shape[:nb]) != n or math.prod(xshape) != n:
        raise ShapeError(
            f"linalg.tensorsolve: expected prod(A.shape[:B.ndim]) == prod(A.shape[B.ndim:]) "
            f"== B.numel(), got A {tuple(A.shape)} and B {tuple(B.shape)}"
        )
    return solve(A.reshape(n, n), B.reshape(n)).reshape(xshape)
