"""VJPs of the linear-algebra primitives, registered into the one gradient table.

Like every rule they are written with sharded ops, so backward of a big solve runs the same
distributed LU as forward (``A^-T`` applied through ``solve(A.mT, g)``) and the backward of
the tall QR keeps ``Q``'s row layout. Products reuse ``matmul``'s rule in ``gradients.py``;
``lstsq`` of a split tall matrix, the norms and ``pinv`` are compositions and need no rule.
Rules that need an inverse (``det``, ``slogdet``, ``inv``) assume a non-singular matrix.
"""

from __future__ import annotations

from .autograd import AutogradError
from .gradients import unbroadcast, vjp
from .ops import linalg_dist as _dist  # noqa: F401  (its primitives get VJPs below)
from .ops import linalg as _batched  # noqa: F401


def _la():
    from . import linalg
    return linalg


def _needs(a) -> bool:
    return getattr(a, "requires_grad", False)


def _tril(x, k=0):
    """Lower triangle (on and below diagonal ``k``) of the last two dims, by a mask."""
    from .ops.creation import arange
    n, m = x.shape[-2], x.shape[-1]
    keep = (arange(n).reshape(n, 1) - arange(m).reshape(1, m)) >= -k
    return x * keep


def _solve_pair(gs, node, a, b):
    """A X = B: ``gB = A^-T gX``, ``gA = -gB X^T`` (batch dims summed back)."""
    x = node.saved["out"][0]
    gb = _la().solve(a.mT, gs[0])
    ga = -(gb @ x.mT) if _needs(a) else None
    return (unbroadcast(ga, a) if ga is not None else None, unbroadcast(gb, b))


@vjp("linalg_solve", save_out=True, saves=(0,))
def _solve(gs, node):
    a, b = node.args
    return _solve_pair(gs, node, a, b)


@vjp("lu_solve", save_out=True, saves=(0,))
def _lu_solve(gs, node):
    a, b = node.args
    return _solve_pair(gs, node, a, b)


@vjp("linalg_inv", save_out=True)
def _inv(gs, node):
    x = node.saved["out"][0]
    return (-(x.mT @ gs[0] @ x.mT),)  # d(A^-1) = -A^-1 dA A^-1


@vjp("linalg_det", save_out=True, saves=(0,))
def _det(gs, node):
    (a,) = node.args
    d = node.saved["out"][0]
    scale = (gs[0] * d).unsqueeze(-1).unsqueeze(-1)
    return (scale * _la().inv(a).mT,)  # d det = det * tr(A^-1 dA)


def _logdet(gs, node):
    (a,) = node.args
    g = gs[1]
    if g is None:  # the sign is piecewise constant
        return (None,)
    return (g.unsqueeze(-1).unsqueeze(-1) * _la().inv(a).mT,)


@vjp("linalg_slogdet", saves=(0,))
def _slogdet(gs, node):
    return _logdet(gs, node)


@vjp("lu_slogdet", saves=(0,))
def _lu_slogdet(gs, node):
    return _logdet(gs, node)


def _chol_grad(lo, gl):
    """torch's rule for ``A = L L^T`` (only the lower triangle of A is read, the gradient is
    the symmetric ``L^-T Y L^-1``, ``Y`` = the lower triangle of ``L^T gL`` mirrored, halved)."""
    la = _la()
    x = _tril(lo.mT @ gl)
    y = 0.5 * (x + _tril(x, -1).mT)
    z = la.solve(lo.mT, y)  # L^-T Y
    return la.solve(lo.mT, z.mT).mT  # (L^-T Y) L^-1


@vjp("linalg_cholesky", save_out=True)
def _cholesky(gs, node):
    out = node.saved["out"][0]
    upper = node.params.get("upper", False)
    lo, gl = (out.mT, gs[0].mT) if upper else (out, gs[0])
    return (_chol_grad(lo, gl),)


@vjp("cholesky_dist", save_out=True)
def _cholesky_dist(gs, node):
    u = node.saved["out"][0]
    return (_chol_grad(u.mT, gs[0].mT),)


def _qr_grad(q, r, gq, gr):
    """Reduced QR of a tall matrix, ``A = Q R``: with ``N = Q^T gQ - gR R^T``,
    ``G = gR R^T + tril(N - N^T, -1) - Q^T gQ`` and ``gA = (gQ + Q G) R^-T``."""
    la = _la()
    if gq is None:
        from .ops.creation import zeros_like
        gq = zeros_like(q)
    if gr is None:
        from .ops.creation import zeros_like
        gr = zeros_like(r)
    qtg = q.mT @ gq  # k x k, summed across row shards
    grr = gr @ r.mT
    nn = qtg - grr
    g = grr + _tril(nn - nn.mT, -1) - qtg
    rinv_t = la.inv(r).mT  # small; keeps Q's row layout in the product below
    return (gq + q @ g) @ rinv_t


@vjp("qr_tall", save_out=True)
def _qr_tall(gs, node):
    q, r = node.saved["out"]
    return (_qr_grad(q, r, gs[0], gs[1]),) + (None,) * (len(node.args) - 1)


@vjp("linalg_qr", save_out=True)
def _qr(gs, node):
    (a,) = node.args
    mode = node.params.get("mode", "reduced")
    m, n = a.shape[-2], a.shape[-1]
    if mode == "r" or (mode == "complete" and m > n) or m < n:
        raise AutogradError(f"the derivative of qr is implemented for mode='reduced' (or "
                            f"'complete' with m <= n) and m >= n; got mode={mode!r} for "
                            f"{m}x{n} matrices")
    q, r = node.saved["out"]
    return (_qr_grad(q, r, gs[0], gs[1]),)


@vjp("linalg_lstsq", save_out=True, saves=(0, 1))
def _lstsq(gs, node):
    """Full column rank, tall: ``X = (A^T A)^-1 A^T B``; with ``Y = (A^T A)^-1 gX`` and the
    residual ``E = B - A X``: ``gA = E Y^T - A Y X^T``, ``gB = A Y``."""
    a, b = node.args
    if any(g is not None for g in gs[1:]):
        raise AutogradError("lstsq: only the solution is differentiable (not residuals, rank "
                            "or singular values)")
    if a.shape[-2] < a.shape[-1]:
        raise AutogradError(f"the derivative of lstsq needs a tall A (m >= n), got "
                            f"{tuple(a.shape)}")
    x = node.saved["out"][0]
    y = _la().solve(a.mT @ a, gs[0])
    ay = a @ y
    ga = (b - a @ x) @ y.mT - ay @ x.mT if _needs(a) else None
    return (unbroadcast(ga, a) if ga is not None else None, unbroadcast(ay, b))


@vjp("linalg_svdvals", saves=(0,))
def _svdvals(gs, node):
    (a,) = node.args
    u, _, vh = _la().svd(a, full_matrices=False)
    return ((u * gs[0].unsqueeze(-2)) @ vh,)  # dS_i = u_i^T dA v_i
