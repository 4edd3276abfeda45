"""LAPACK's compact factor forms for matrices that fit on one worker: the symmetric indefinite
(Bunch-Kaufman) factorization ``linalg.ldl_factor``/``ldl_factor_ex`` (sytrf/hetrf) and its
solver ``linalg.ldl_solve`` (sytrs/hetrs), and ``geqrf`` (Householder QR, reflectors and
``tau`` as LAPACK leaves them; ``ormqr`` and ``householder_product`` apply them, see
``derived/householder.py``).

Three batched primitives (one ``linalg`` kernel per batch block, see ``batched.py``: a split
batch stays split, a split matrix is gathered on one worker up to ``GATHER_LIMIT`` bytes). Each
kernel calls SciPy's LAPACK wrappers matrix by matrix on the host (a CuPy block is copied
there and back: NumPy and CuPy have no such routines), so the results are LAPACK's, as
torch's. torch defines no gradient for any of them; neither does sharded.
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....backend.host_blas import lapack
from ....core.dispatch import apply
from ....core.registry import bind, nondiff, primitive
from ....errors import DTypeError, ShapeError, UnsupportedDType
from .batched import (
    BATCHED,
    LinAlgError,
    dims_str,
    first_info,
    linalg_kernel,
    plan_batched,
    t_,
)

__all__ = ["geqrf"]

LDLFactorResult = collections.namedtuple("LDLFactorResult", ["LD", "pivots"])
LDLFactorExResult = collections.namedtuple("LDLFactorExResult", ["LD", "pivots", "info"])
GeqrfResult = collections.namedtuple("GeqrfResult", ["a", "tau"])  # torch.return_types.geqrf

_FLOATS = (D.float32, D.float64, D.complex64, D.complex128)


# ------------------------------------------------------------------------------ kernels
def _host(xp, a, shape):
    """``a`` broadcast to ``shape`` as a NumPy stack of matrices (SciPy runs on the host)."""
    a = xp.asnumpy(a) if hasattr(xp, "asnumpy") else np.asarray(a)
    return np.broadcast_to(a, shape).reshape((-1,) + tuple(shape[-2:]))


def _herm(hermitian, dtype) -> bool:
    return bool(hermitian) and np.dtype(dtype).kind == "c"  # real: sytrf either way


def _op_ldl_factor(xp, a, shapes, dtypes, hermitian=False):
    """sytrf/hetrf (lower) per matrix: ``LD`` is LAPACK's output with its upper triangle
    zeroed (as torch), ``pivots`` its 1-based ``ipiv`` (negative pairs: a 2 x 2 block),
    ``info`` the 1-based index of an exactly zero ``D[i, i]`` (0: none)."""
    bs, n = shapes[0][:-2], shapes[0][-1]
    stack = _host(xp, a, shapes[0]).astype(dtypes[0])
    fn = lapack("hetrf" if _herm(hermitian, dtypes[0]) else "sytrf", dtypes[0])
    ld, piv = np.empty_like(stack), np.empty((len(stack), n), np.int32)
    info = np.zeros(len(stack), np.int32)
    for i, m in enumerate(stack):
        out, p, info[i] = fn(m, lower=1)
        ld[i], piv[i] = np.tril(out), p
    return (xp.asarray(ld), xp.asarray(piv)), info.reshape(bs)


def _valid_pivots(p, n):
    """The first entry of pivot row ``p`` sytrs cannot take (None: all fine): each in
    ``[1, n]`` or a pair of equal negatives in ``[-n, -1]`` (a 2 x 2 block of ``D``)."""
    k = 0
    while k < n:
        if 1 <= p[k] <= n:
            k += 1
        elif -n <= p[k] <= -1 and k + 1 < n and p[k + 1] == p[k]:
            k += 2
        else:
            return int(p[k])
    return None


def _op_ldl_solve(xp, ld, piv, b, shapes, dtypes, hermitian=False):
    """sytrs/hetrs (lower) per matrix, after checking the pivots (a bad one would make LAPACK
    read outside the matrix; torch's CPU kernel does not check)."""
    bs = shapes[0][:-2]
    n, r = shapes[0][-2:]
    lds = _host(xp, ld, bs + (n, n)).astype(dtypes[0])
    ps = _host(xp, piv, bs + (n, 1)).reshape(-1, n).astype(np.int32)
    rhs = _host(xp, b, bs + (n, r)).astype(dtypes[0])
    fn = lapack("hetrs" if _herm(hermitian, dtypes[0]) else "sytrs", dtypes[0])
    x = np.empty_like(rhs)
    for i in range(len(rhs)):
        bad = _valid_pivots(ps[i], n)
        if bad is not None:
            raise IndexError(
                f"linalg.ldl_solve: invalid pivot {bad} for LD of size {n} (pivots are sytrf's: "
                f"in [1, {n}], or equal negative pairs in [-{n}, -1])"
            )
        x[i], _ = fn(lds[i], ps[i], rhs[i], lower=1)
    return (xp.asarray(x.reshape(shapes[0])),), None


def _op_geqrf(xp, a, shapes, dtypes):
    """geqrf per matrix (the workspace LAPACK asks for, so the blocked algorithm as torch)."""
    m, n = shapes[0][-2:]
    stack = _host(xp, a, shapes[0]).astype(dtypes[0])
    fn = lapack("geqrf", dtypes[0])
    qr, tau = np.empty_like(stack), np.empty((len(stack), min(m, n)), dtypes[1])
    for i, mat in enumerate(stack):
        qr[i], tau[i], _, _ = fn(mat)
    return (xp.asarray(qr), xp.asarray(tau)), None


# the batched kernel's op table (batched.py) takes these ops; registered here, at import
BATCHED.update(ldl_factor=_op_ldl_factor, ldl_solve=_op_ldl_solve, geqrf=_op_geqrf)


# ------------------------------------------------------------------------------ primitives
@primitive("linalg_ldl_factor", kind="linalg", kernels=[linalg_kernel])
def _plan_ldl_factor(ex, *ts, **params):
    """Batched sytrf/hetrf: one ``linalg`` kernel command per batch block (``info`` with it)."""
    params.setdefault("check", False)
    return plan_batched(ex, "ldl_factor", ts, **params)


@primitive("linalg_ldl_solve", kind="linalg", kernels=[linalg_kernel])
def _plan_ldl_solve(ex, *ts, **params):
    """Batched sytrs/hetrs over ``(LD, pivots (..., n, 1), B)``: one kernel per batch block."""
    params.setdefault("check", False)
    return plan_batched(ex, "ldl_solve", ts, **params)


@primitive("linalg_geqrf", kind="linalg", kernels=[linalg_kernel])
def _plan_geqrf(ex, *ts, **params):
    """Batched geqrf: one ``linalg`` kernel command per batch block."""
    params.setdefault("check", False)
    return plan_batched(ex, "geqrf", ts, **params)


nondiff("linalg_ldl_factor", "linalg_ldl_solve", "linalg_geqrf")  # as torch: no derivative


# ------------------------------------------------------------------------------ ldl
def _float_input(op, a, what="A"):
    if a.dtype in (D.float16, D.bfloat16):
        raise UnsupportedDType(f'"{op}_kernel_cpu" not implemented for {a.dtype.name!r}')
    if a.dtype not in _FLOATS:
        raise DTypeError(
            f"torch.linalg.{op}: Expected a floating point or complex tensor as input. "
            f"Got {a.dtype.name}"
        )


def _square(op, a, what="A"):
    if a.ndim < 2:
        raise ShapeError(
            f"torch.linalg.{op}: The input tensor {what} must have at least 2 dimensions "
            f"(got shape {list(a.shape)})"
        )
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"torch.linalg.{op}: {what} must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )


def _raise_info(op, info, batched):
    """A zero ``D[i, i]`` (``info > 0``): the first batch element with one, by name."""
    got = first_info(info, batched)
    if got is not None:
        where, v = got
        raise LinAlgError(
            f"torch.linalg.{op}: {where}The factorization could not be completed because "
            f"D[{v},{v}] is exactly zero (the matrix is singular); ldl_solve with "
            "it would divide by zero"
        )


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """The compact LDL factorization of (a batch of) symmetric (``hermitian=True``: Hermitian)
    matrices, as LAPACK's sytrf/hetrf (Bunch-Kaufman pivoting, the lower triangle):
    ``(LD, pivots, info)``. ``LD`` holds ``L``'s multipliers below the diagonal and the 1 x 1
    and 2 x 2 blocks of ``D`` on and next to it (its upper triangle zero); ``pivots`` (int32,
    1-based) are sytrf's ``ipiv``, a pair of equal negatives marking a 2 x 2 block; ``info``
    (int32) is the 1-based index of an exactly zero ``D[i, i]`` (0: none), and
    ``check_errors=True`` raises :class:`LinAlgError` naming the batch element where it is
    not 0. Only the lower triangle of ``A`` is read. Batch dims may be split (each block
    factored where it lies); a split matrix is gathered on one worker. Not differentiable
    (as torch).

    Examples
    --------
    >>> import sharded as st
    >>> LD, pivots, info = st.linalg.ldl_factor_ex(st.tensor([[4.0, 2.0], [2.0, 3.0]]))
    >>> LD.tolist(), pivots.tolist(), info.item()
    ([[4.0, 0.0], [0.5, 2.0]], [1, 2], 0)
    """
    A = t_(A)
    _square("ldl_factor_ex", A)
    _float_input("ldl_factor", A)
    LD, piv, info = apply(
        "linalg_ldl_factor", A, hermitian=bool(hermitian), check=False, want_info=True
    )
    if check_errors:
        _raise_info("ldl_factor_ex", info, A.ndim > 2)
    return LDLFactorExResult(LD, piv, info)


def ldl_factor(A, *, hermitian=False):
    """:func:`ldl_factor_ex` without ``info``: ``(LD, pivots)``; a singular ``D`` raises
    :class:`LinAlgError` naming the batch element (read from ``info``: a short wait).

    Examples
    --------
    >>> import sharded as st
    >>> LD, pivots = st.linalg.ldl_factor(st.tensor([[0.0, 1.0], [1.0, 0.0]]))
    >>> LD.tolist(), pivots.tolist()
    ([[0.0, 0.0], [1.0, 0.0]], [-2, -2])
    """
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_info("ldl_factor", info, LD.ndim > 2)
    return LDLFactorResult(LD, piv)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """The solution ``X`` of ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` of ``A``
    (LAPACK's sytrs/hetrs; ``hermitian`` as given to the factorization). ``B`` (*, n, k)
    broadcasts its batch dims against ``LD``'s; ``pivots`` has ``LD``'s shape but the last
    dim and any integer dtype; invalid pivots raise ``IndexError`` at the next read. Not
    differentiable (as torch).

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=st.float64)
    >>> LD, pivots = st.linalg.ldl_factor(A)
    >>> st.linalg.ldl_solve(LD, pivots, st.tensor([[8.0], [7.0]], dtype=st.float64)).tolist()
    [[1.25], [1.5]]
    """
    LD, B, piv = t_(LD), t_(B), t_(pivots)
    _square("ldl_solve", LD)
    _float_input("ldl_solve", LD)
    if B.ndim < 2:
        raise ShapeError(
            f"torch.linalg.ldl_solve: The input tensor B must have at least 2 dimensions "
            f"(got shape {list(B.shape)})"
        )
    if tuple(piv.shape) != tuple(LD.shape[:-1]):
        raise ShapeError(
            "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, "
            f"but got pivots with shape {list(piv.shape)} instead (LD of shape {list(LD.shape)})"
        )
    if piv.dtype.is_floating_point or piv.dtype.is_complex or piv.dtype == D.bool_:
        raise DTypeError(
            f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {piv.dtype.name}"
        )
    if B.dtype != LD.dtype:
        raise DTypeError(
            f"torch.linalg.ldl_solve: Expected b and A to have the same dtype, but found b of "
            f"type {B.dtype.name} and A of type {LD.dtype.name} instead."
        )
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise ShapeError(
            f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {n} by "
            f"{n} but each b matrix is {dims_str(B.shape[-2:]).replace('x', ' by ')}"
        )
    if piv.dtype != D.int32:
        piv = piv.to(D.int32)
    return apply("linalg_ldl_solve", LD, piv.unsqueeze(-1), B, hermitian=bool(hermitian))


# ------------------------------------------------------------------------------ geqrf
@bind("geqrf")
def geqrf(input):
    """The QR factorization of (a batch of) ``m x n`` matrices in LAPACK's compact form
    (geqrf): ``(a, tau)``, ``a`` holding ``R`` on and above the diagonal and the Householder
    vectors below it (their unit heads implied), ``tau`` (``min(m, n)``) their scalars, so
    that ``Q = householder_product(a, tau)``. Batch dims may be split; a split matrix is
    gathered on one worker. Not differentiable (as torch; :func:`sharded.linalg.qr` is).

    Examples
    --------
    >>> import sharded as st
    >>> a, tau = st.geqrf(st.tensor([[3.0, 1.0], [4.0, 2.0]], dtype=st.float64))
    >>> [[round(v, 4) for v in r] for r in a.tolist()], [round(v, 4) for v in tau.tolist()]
    ([[-5.0, -2.2], [0.5, 0.4]], [1.6, 0.0])
    """
    a = t_(input)
    if a.ndim < 2:
        raise ShapeError(
            f"torch.geqrf: input must have at least 2 dimensions (got shape {list(a.shape)})."
        )
    if a.dtype not in _FLOATS:
        raise UnsupportedDType(f'"geqrf_cpu" not implemented for {a.dtype.name!r}')
    qr, tau = apply("linalg_geqrf", a, check=False)
    return GeqrfResult(qr, tau)
