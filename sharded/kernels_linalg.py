"""Per-shard linear-algebra kernels (pure functions of ``xp`` and blocks, like ``kernels.py``).

Batched decompositions run through one kernel, ``linalg``, that looks the operation up in
:data:`BATCHED` and reports failures (singular, not positive-definite) as an ``info`` array
over the block's batch and a one-element *summary*: the global flat batch index of the first
failure, or -1. The driver reads only the summaries, so an error names the batch element
without fetching any data. The kernels of the distributed algorithms (CholeskyQR2, TSQR,
block LU, blocked Cholesky) live in ``kernels_dist.py``.
"""

from __future__ import annotations

import numpy as np

from .kernels import _cast, kernel


# ------------------------------------------------------------------------------ products
@kernel("matmul_acc")
def matmul_acc(xp, c, a, b, out=None):
    """``c += a @ b`` in place (one more k panel of a blocked product)."""
    c += _cast(xp, xp.matmul(_cast(xp, a, out), _cast(xp, b, out)), c.dtype)
    return c


@kernel("add_n")
def add_n(xp, *parts):
    """The sum of equally shaped blocks, in a fresh array (a reduce-scatter's last step)."""
    out = xp.array(parts[0], copy=True)
    for p in parts[1:]:
        out += p
    return out


# ------------------------------------------------------------------------------ batched
def _each(a, fn, info, *rest):
    """Apply ``fn`` matrix by matrix (the slow path, taken only when the stacked LAPACK
    call failed): failing elements get NaN results and ``info[i] = fn``'s failure code."""
    outs = None
    for idx in np.ndindex(*info.shape):
        args = [r[idx] if r.ndim > 2 else r for r in (a,) + rest]
        try:
            res = fn(*args)
            code = 0
        except np.linalg.LinAlgError as e:
            code = getattr(e, "code", 1)
            res = None
        res = res if isinstance(res, tuple) or res is None else (res,)
        if outs is None and res is not None:
            outs = [np.full(info.shape + np.shape(r), np.nan, np.result_type(r)) for r in res]
        if res is not None:
            for o, r in zip(outs, res):
                o[idx] = r
        info[idx] = code
    return outs


def _batch_shape(*arrays):
    return np.broadcast_shapes(*[a.shape[:-2] for a in arrays])


def _guarded(xp, fn, arrays, shapes, dtypes):
    """Run ``fn`` on the whole stack; on a LinAlgError find the failing elements one by one."""
    info = np.zeros(_batch_shape(*arrays), np.int32)
    try:
        res = fn(*arrays)
        return (res if isinstance(res, tuple) else (res,)), info
    except np.linalg.LinAlgError:
        pass
    bs = info.shape
    arrays = [xp.broadcast_to(a, bs + a.shape[-2:]) for a in arrays]
    host = [xp.asnumpy(a) if hasattr(xp, "asnumpy") else a for a in arrays]
    outs = _each(host[0], fn, info, *host[1:])
    if outs is None:
        outs = [np.full(s, np.nan, d) for s, d in zip(shapes, dtypes)]
    return tuple(xp.asarray(o) for o in outs), info


def _chol_order(a):
    """torch's info for Cholesky: the order of the first leading minor that is not PD."""
    lo, hi = 1, a.shape[-1]
    while lo < hi:  # the smallest order whose leading minor fails
        mid = (lo + hi) // 2
        try:
            np.linalg.cholesky(a[:mid, :mid])
            lo = mid + 1
        except np.linalg.LinAlgError:
            hi = mid
    return lo


def _cholesky_one(a):
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError as e:
        e.code = _chol_order(a)
        raise


def _solve(xp, a, b, **_):
    return xp.linalg.solve(a, b)


def _op_solve(xp, a, b, shapes, dtypes):
    return _guarded(xp, lambda x, y: xp.linalg.solve(x, y), [a, b], shapes, dtypes)


def _op_inv(xp, a, shapes, dtypes):
    return _guarded(xp, xp.linalg.inv, [a], shapes, dtypes)


def _op_cholesky(xp, a, shapes, dtypes, upper=False):
    def chol(x):
        if x.ndim == 2 and xp is np:
            return _cholesky_one(x)
        return xp.linalg.cholesky(x)
    (lo,), info = _guarded(xp, chol, [a], shapes, dtypes)
    lo = xp.tril(lo)
    return ((xp.swapaxes(lo, -1, -2).copy() if upper else lo),), info


def _op_det(xp, a, shapes, dtypes):
    return (xp.linalg.det(a),), None


def _op_slogdet(xp, a, shapes, dtypes):
    s, l = xp.linalg.slogdet(a)
    return (s, l), None


def _op_eigvals(xp, a, shapes, dtypes):
    w = np.linalg.eigvals(xp.asnumpy(a) if hasattr(xp, "asnumpy") else a)
    w = np.asarray(w, dtype=np.result_type(w, np.complex64))
    return (xp.asarray(w.real), xp.asarray(w.imag)), None


def _op_eigh(xp, a, shapes, dtypes, uplo="L"):
    w, v = xp.linalg.eigh(a, UPLO=uplo)
    return (w, v), None


def _op_eigvalsh(xp, a, shapes, dtypes, uplo="L"):
    return (xp.linalg.eigvalsh(a, UPLO=uplo),), None


def _op_svd(xp, a, shapes, dtypes, full_matrices=True):
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return (u, s, vh), None


def _op_svdvals(xp, a, shapes, dtypes):
    return (xp.linalg.svd(a, compute_uv=False),), None


def _op_qr(xp, a, shapes, dtypes, mode="reduced"):
    if mode == "r":
        r = xp.linalg.qr(a, mode="r") if a.ndim == 2 else xp.linalg.qr(a)[1]
        return (xp.empty(shapes[0], dtypes[0]), r), None
    q, r = xp.linalg.qr(a, mode=mode)
    return (q, r), None


def _op_lstsq(xp, a, b, shapes, dtypes, rcond=None):
    """Least squares per matrix (NumPy's lstsq is not batched); rank and singular values
    come along, as torch returns them."""
    bs = _batch_shape(a, b)
    a = xp.broadcast_to(a, bs + a.shape[-2:])
    b = xp.broadcast_to(b, bs + b.shape[-2:])
    x, res, rank, sv = (xp.empty(s, d) for s, d in zip(shapes, dtypes))
    for idx in np.ndindex(*bs):
        xi, ri, rk, si = xp.linalg.lstsq(a[idx], b[idx], rcond=rcond)
        x[idx], rank[idx], sv[idx] = xi, rk, si
        res[idx] = ri if ri.size == res[idx].size else xp.nan
    return (x, res, rank, sv), None


BATCHED = {
    "solve": _op_solve, "inv": _op_inv, "cholesky": _op_cholesky, "det": _op_det,
    "slogdet": _op_slogdet, "eigvals": _op_eigvals, "eigh": _op_eigh,
    "eigvalsh": _op_eigvalsh, "svd": _op_svd, "svdvals": _op_svdvals, "qr": _op_qr,
    "lstsq": _op_lstsq,
}


def first_failure(info, boffs, bshape) -> int:
    """Global flat batch index of the first non-zero ``info`` entry of a block, or -1."""
    bad = np.flatnonzero(np.asarray(info).reshape(-1))
    if not bad.size:
        return -1
    local = np.unravel_index(int(bad[0]), np.shape(info)) if np.ndim(info) else ()
    return int(np.ravel_multi_index([i + o for i, o in zip(local, boffs)], bshape)) \
        if bshape else 0


@kernel("linalg")
def linalg(xp, *arrays, op, shapes, dtypes, boffs=(), bshape=(), want_info=False,
           check=False, **params):
    """Batched ``op`` on one block; returns its outputs (cast to ``dtypes``, shaped
    ``shapes``), then ``info`` (if ``want_info``), then the failure summary (if ``check``)."""
    if any(0 in s for s in shapes) or any(0 in a.shape[:-2] for a in arrays):
        outs, info = tuple(xp.zeros(s, d) for s, d in zip(shapes, dtypes)), None
    else:
        outs, info = BATCHED[op](xp, *arrays, shapes=shapes, dtypes=dtypes, **params)
    outs = [xp.asarray(o).astype(d, copy=False).reshape(s)
            for o, s, d in zip(outs, shapes, dtypes)]
    if info is None:
        info = np.zeros(shapes[0][:len(bshape)], np.int32)
    if want_info:
        outs.append(xp.asarray(info, dtype=np.int32).reshape(shapes[0][:len(bshape)]))
    if check:
        outs.append(np.array([first_failure(info, boffs, bshape)], np.int64))
    return outs[0] if len(outs) == 1 else tuple(outs)
