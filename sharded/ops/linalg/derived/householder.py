"""``linalg.householder_product`` (and its older name ``orgqr``): the first ``n`` columns of
the product of the Householder reflectors stored below the diagonal of ``A`` (LAPACK's
compact form, as ``geqrf`` leaves it), composed of matrix products.

The product ``H_0 H_1 ... H_{k-1}`` is applied to the ``m x n`` identity from the right
(each ``H_i = I - tau_i v_i v_i^H`` a rank-one update), so the gradient with respect to
``A`` and ``tau`` is that of its products and the batch dims stay split as they are.
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor, placement
from ....core.registry import bind
from ....errors import DTypeError, ShapeError, UnsupportedDType
from ...creation.prims import zeros_like

__all__ = ["orgqr", "ormqr"]

_OP = "torch.linalg.householder_product"


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _check(A, tau):
    if A.ndim < 2:
        raise ShapeError(f"{_OP}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise ShapeError(
            f"{_OP}: input.shape[-2] must be greater than or equal to input.shape[-1] "
            f"(got {list(A.shape)})"
        )
    if tau.ndim and n < tau.shape[-1]:
        raise ShapeError(
            f"{_OP}: input.shape[-1] must be greater than or equal to tau.shape[-1] "
            f"(got {n} and {tau.shape[-1]})"
        )
    if tau.ndim != A.ndim - 1:
        raise ShapeError(
            f"{_OP}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {A.ndim}"
        )
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise ShapeError(
            f"{_OP}: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
            f"got {list(tau.shape[:-1])}"
        )
    if tau.dtype != A.dtype:
        raise DTypeError(
            f"{_OP}: tau dtype {tau.dtype.name} does not match input dtype {A.dtype.name}"
        )
    if A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):  # LAPACK's
        raise UnsupportedDType(f'"orgqr" not implemented for {A.dtype.name!r}')


def householder_product(A, tau):
    """The first ``n`` columns of ``H_0 H_1 ... H_{k-1}`` for ``A`` (*, m, n) and ``tau``
    (*, k), ``k <= n <= m``: ``H_i = I - tau_i v_i v_i^H`` with ``v_i`` column ``i`` of
    ``A`` below the diagonal and 1 on it, as ``torch.linalg.householder_product``
    (LAPACK's ``orgqr``/``ungqr``). Differentiable in ``A`` and ``tau``; batch dims may
    be split.

    Examples
    --------
    >>> import sharded as st
    >>> A = st.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> st.linalg.householder_product(A, st.tensor([1.0, 0.0])).tolist()
    [[0.0, -1.0], [-1.0, 0.0]]
    """
    A, tau = _t(A), _t(tau)
    _check(A, tau)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    eye = apply("eye", placement((m, n), dtype=A.dtype), A.dtype)
    q = zeros_like(A) + eye  # the identity, with A's batch cuts
    if k == 0:  # no reflector: the identity, still a function of A and tau (zero gradients)
        return q + A * 0 + tau.sum(-1, keepdim=True).unsqueeze(-1) * 0
    v = A.tril(-1) + eye  # the reflectors, unit diagonal
    for i in reversed(range(k)):  # q <- H_i q, from the right-most reflector
        vi = v[..., :, i : i + 1]
        q = q - tau[..., i : i + 1].unsqueeze(-1) * (vi @ (vi.mH @ q))
    return q


@bind("orgqr")
def orgqr(input, tau):
    """torch's older name of :func:`sharded.linalg.householder_product`.

    Examples
    --------
    >>> import sharded as st
    >>> st.orgqr(st.tensor([[1.0], [1.0]]), st.tensor([1.0])).tolist()
    [[0.0], [-1.0]]
    """
    return householder_product(input, tau)


def _check_ormqr(A, tau, C, left):
    op = "torch.ormqr"
    for t, name in ((A, "input"), (C, "other")):
        if t.ndim < 2:
            raise ShapeError(f"{op}: {name} must have at least 2 dimensions (got {list(t.shape)}).")
    if tau.ndim != A.ndim - 1:
        raise ShapeError(
            f"{op}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {A.ndim}"
        )
    if C.ndim != A.ndim:
        raise ShapeError(
            f"{op}: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {C.ndim} and input.ndim is equal to {A.ndim}"
        )
    side = -2 if left else -1
    if C.shape[side] != A.shape[-2]:
        raise ShapeError(
            f"{op}: other.shape[{side}] must be equal to input.shape[-2] (got {C.shape[side]} "
            f"and {A.shape[-2]})"
        )
    k = min(C.shape[side], A.shape[-1])
    if tau.shape[-1] != k:
        raise ShapeError(
            f"{op}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1]) "
            f"(got {tau.shape[-1]}, expected {k})"
        )
    for t, name in ((tau, "tau"), (C, "other")):
        if tuple(t.shape[: A.ndim - 2]) != tuple(A.shape[:-2]):
            raise ShapeError(
                f"{op}: Expected batch dimensions of {name} to be equal to input.shape[:-2], "
                f"but got {list(t.shape[: A.ndim - 2])}"
            )
    for t, name in ((tau, "tau"), (C, "other")):
        if t.dtype != A.dtype:
            raise DTypeError(
                f"{op}: Expected input and {name} to have the same dtype, but input has dtype "
                f"{A.dtype.name} and {name} has dtype {t.dtype.name}"
            )
    if A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):  # LAPACK's
        raise UnsupportedDType(f'"ormqr_cpu" not implemented for {A.dtype.name!r}')


@bind("ormqr")
def ormqr(input, tau, other, left=True, transpose=False):
    """``Q @ other`` for ``Q = H_0 H_1 ... H_{k-1}`` the product of the Householder reflectors
    stored below the diagonal of ``input`` (LAPACK's compact form, as :func:`geqrf` leaves
    it; ``H_i = I - tau_i v_i v_i^H``), as ``torch.ormqr`` (LAPACK's ormqr/unmqr):
    ``other @ Q`` with ``left=False``, ``Q^H`` in place of ``Q`` with ``transpose=True``. ``Q``
    is never formed: each reflector is a rank-one update of ``other``, so the gradient with
    respect to all three inputs is that of its products and batch dims stay split as they are.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> st.ormqr(a, st.tensor([1.0, 0.0]), st.tensor([[1.0], [2.0]])).tolist()
    [[-2.0], [-1.0]]
    """
    A, tau, C = _t(input), _t(tau), _t(other)
    _check_ormqr(A, tau, C, left)
    m, k = A.shape[-2], tau.shape[-1]
    eye = apply("eye", placement((m, k), dtype=A.dtype), A.dtype)
    v = A[..., :, :k].tril(-1) + eye  # the reflectors, unit diagonal
    t = tau.conj() if transpose and tau.dtype.is_complex else tau  # H_i^H = I - conj(tau_i) v v^H
    # Q C applies H_{k-1} first; Q^H C applies H_0 first; C Q: H_0 first; C Q^H: H_{k-1} first
    order = range(k) if left == bool(transpose) else reversed(range(k))
    out = C
    for i in order:
        vi, ti = v[..., :, i : i + 1], t[..., i : i + 1].unsqueeze(-1)
        if left:
            out = out - ti * (vi @ (vi.mH @ out))
        else:
            out = out - ti * ((out @ vi) @ vi.mH)
    if k == 0:  # no reflector: ``other`` itself, still a function of all three inputs
        return out + A.sum() * 0 + tau.sum() * 0
    return out
