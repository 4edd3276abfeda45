"""Linear-algebra ops derived from primitives: norms, rank tolerance, pseudo-inverse.

They are compositions of tensor methods (``abs``, ``sum``, ``amax``, ``sqrt``, ``where``,
``@``), so they run on any layout, need no gradient rule of their own and import no tensor
class; ``linalg.py`` wraps them with torch's signatures.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError


def vector_norm(x, ord, dims, keepdim):
    """``ord``-norm of ``x`` over ``dims``."""
    if ord == math.inf:
        return x.abs().amax(dims, keepdim)
    if ord == -math.inf:
        return x.abs().amin(dims, keepdim)
    if ord == 0:  # the number of non-zeros
        return (x != 0).to(x.dtype).sum(dims, keepdim)
    if ord == 1:
        return x.abs().sum(dims, keepdim)
    if ord == 2:
        return (x * x).sum(dims, keepdim).sqrt()
    return (x.abs() ** ord).sum(dims, keepdim) ** (1.0 / ord)


def matrix_norm(a, ord, r, c, keepdim, svdvals):
    """Matrix norm of ``a`` over dims ``(r, c)``; ``svdvals`` gives singular values (for the
    2, -2 and nuclear norms) of a tensor whose matrices are its last two dims."""
    if ord == "fro":
        return vector_norm(a, 2, (r, c), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(a.permute([d for d in range(a.ndim) if d not in (r, c)] + [r, c]))
        out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((r, c)):
                out = out.unsqueeze(d)
        return out
    if ord in (math.inf, -math.inf, 1, -1):
        # inf: the largest absolute row sum; 1: the largest absolute column sum
        red, over = (c, r) if ord in (math.inf, -math.inf) else (r, c)
        sums = a.abs().sum(red, keepdim=True)
        out = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
        return out if keepdim else out.squeeze((r, c))
    raise ArgumentError(f"linalg.matrix_norm: order {ord!r} not supported (use 'fro', 'nuc', "
                        f"inf, -inf, 1, -1, 2 or -2)")


def tolerance(a, s, atol, rtol):
    """torch's rank tolerance ``max(atol, rtol * s_max)``; ``rtol`` defaults to
    ``eps * max(m, n)`` unless only ``atol`` is given."""
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            float(np.finfo(a.dtype.np).eps) * max(a.shape[-2:])
    tol = s.amax(-1, keepdim=True) * rtol if s.shape[-1] else s.sum(-1, keepdim=True)
    return tol.maximum(float(atol)) if atol is not None else tol


def pinv(u, s, vh, tol):
    """``V diag(1/s) U^T`` with singular values under ``tol`` treated as zero."""
    keep = s > tol
    sinv = (1.0 / s.where(keep, 1.0)).where(keep, 0.0)
    return (vh.mT * sinv.unsqueeze(-2)) @ u.mT
