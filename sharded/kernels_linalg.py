"""Per-shard linear-algebra kernels (pure functions of ``xp`` and blocks, like ``kernels.py``).

Batched decompositions run through one kernel, ``linalg``, that looks the operation up in
:data:`BATCHED` and reports failures (singular, not positive-definite) as an ``info`` array
over the block's batch and a one-element *summary*: the global flat batch index of the first
failure, or -1. The driver reads only the summaries, so an error names the batch element
without fetching any data. Below them, the kernels of the distributed algorithms of
``ops/linalg_dist.py`` (CholeskyQR2, TSQR, block LU, blocked Cholesky).
"""

from __future__ import annotations

import numpy as np

from .kernels import _cast, kernel


# ------------------------------------------------------------------------------ products
@kernel("matmul_acc")
def matmul_acc(xp, c, a, b, out=None):
    """``c += a @ b`` in place (one more k panel of a blocked product), in row chunks so the
    temporary product stays small (recycled, not page-faulted afresh)."""
    a, b = _cast(xp, a, out), _cast(xp, b, out)
    if c.ndim != 2 or a.ndim != 2:
        c += _cast(xp, xp.matmul(a, b), c.dtype)
        return c
    step = max(64, (1 << 24) // max(1, c.shape[1] * c.itemsize))
    for r in range(0, c.shape[0], step):
        c[r:r + step] += _cast(xp, a[r:r + step] @ b, c.dtype)
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
    sign, logabs = xp.linalg.slogdet(a)
    return (sign, logabs), None


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
    """QR with R's diagonal made non-negative: the QR is then unique (for full rank), so the
    result does not depend on the layout (the distributed QR produces this one too)."""
    q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    k = min(r.shape[-2:])
    d = xp.diagonal(r[..., :k, :k], axis1=-2, axis2=-1)
    s = xp.where(d < 0, -1.0, 1.0).astype(r.dtype)
    r = r * xp.concatenate([s, xp.ones(r.shape[:-2] + (r.shape[-2] - k,), r.dtype)], -1)[
        ..., :, None]
    if mode == "r":
        return (r,), None
    q = q * xp.concatenate([s, xp.ones(q.shape[:-2] + (q.shape[-1] - k,), q.dtype)], -1)[
        ..., None, :]
    return (q, r), None


def _op_lstsq(xp, a, b, shapes, dtypes, rcond=None):
    """Least squares per matrix (NumPy's lstsq is not batched); rank and singular values
    come along, as torch returns them."""
    bs = _batch_shape(a, b)
    a = xp.broadcast_to(a, bs + a.shape[-2:])
    b = xp.broadcast_to(b, bs + b.shape[-2:])
    x, res, rank, sv = (xp.empty(s, d) for s, d in zip(shapes, dtypes))
    for idx in np.ndindex(*bs):
        xi, _, rk, si = xp.linalg.lstsq(a[idx], b[idx], rcond=rcond)
        x[idx], rank[idx], sv[idx] = xi, rk, si
        if res.shape[-1]:  # squared residual norms, defined for tall systems
            res[idx] = ((a[idx] @ xi - b[idx]) ** 2).sum(0)
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


# ------------------------------------------------------------------------------ tall QR
def _chunks(m, k):
    """Row ranges of about 2 MB: each chunk is multiplied while it sits in cache."""
    step = max(256, (1 << 18) // max(k, 1))
    return [slice(i, min(i + step, m)) for i in range(0, m, step)]


@kernel("gram")
def gram(xp, a):
    """``a^T a`` in float64 as a stack entry (1, k, k): the partial of CholeskyQR's Gram
    matrix (float64 so float32 input keeps its accuracy)."""
    if a.dtype == np.float64:
        return (a.T @ a)[None]
    g = xp.zeros((a.shape[1], a.shape[1]), np.float64)
    for c in _chunks(*a.shape):
        x = a[c].astype(np.float64)
        g += x.T @ x
    return g[None]


@kernel("chol_r")
def chol_r(xp, g, cond_max):
    """From a Gram matrix: ``R`` (upper, ``G = R^T R``), ``R^-1`` and a status: -1 when the
    Cholesky factor exists and ``cond(R) <= cond_max``, else 1 (CholeskyQR would lose
    orthogonality: the caller falls back to TSQR)."""
    g = np.asarray(g.get() if hasattr(g, "get") else g).reshape(g.shape[-2:])
    k = g.shape[0]
    try:
        r = np.linalg.cholesky(g).T
        d = np.abs(np.diag(r))
        ok = bool(k == 0 or (d.min() > 0 and np.linalg.cond(r) <= cond_max))
    except np.linalg.LinAlgError:
        r, ok = np.eye(k), False
    rinv = np.linalg.inv(r) if ok else np.eye(k)
    return xp.asarray(r), xp.asarray(rinv), np.array([-1 if ok else 1], np.int64)


@kernel("cholqr_step")
def cholqr_step(xp, a, rinv, out):
    """``q = a @ R^-1`` (cast to ``out``) and, from the same chunks while they are in cache,
    the Gram partial of ``q`` for CholeskyQR2's second pass."""
    m, k = a.shape
    q = xp.empty((m, k), out)
    g = xp.zeros((k, k), np.float64)
    rinv = xp.asarray(rinv, dtype=np.float64)
    for c in _chunks(m, k):
        x = a[c].astype(np.float64, copy=False) @ rinv
        q[c] = x
        g += x.T @ x
    return q, g[None]


@kernel("scale_rows")
def scale_rows(xp, q, s):
    """``q = q @ s`` in place, chunk by chunk (no second block-sized allocation)."""
    s = xp.asarray(s, dtype=np.float64)
    for c in _chunks(*q.shape):
        q[c] = q[c].astype(np.float64, copy=False) @ s
    return ()


@kernel("mul_small")
def mul_small(xp, a, s, out):
    """``a @ s`` for a block and a small matrix, cast to ``out``."""
    return xp.matmul(a, xp.asarray(s, dtype=a.dtype)).astype(out, copy=False)


@kernel("r_product")
def r_product(xp, r2, r1, out):
    """``R = R2 @ R1`` (the two CholeskyQR passes), upper triangular exactly."""
    return xp.triu(xp.asarray(r2) @ xp.asarray(r1)).astype(out, copy=False)


@kernel("local_qr")
def local_qr(xp, a):
    """TSQR leaf: the reduced QR of a block (float64 on the way, cast back by the caller)."""
    return xp.linalg.qr(a)


@kernel("stack_qr")
def stack_qr(xp, *rs, out):
    """TSQR root: QR of the stacked leaf R factors, signs fixed so that R's diagonal is
    non-negative (the QR is then unique, as CholeskyQR's); returns R then the Q rows of
    every leaf."""
    st = xp.concatenate([r.reshape(-1, r.shape[-1]) for r in rs], axis=0)
    q, r = xp.linalg.qr(st)
    s = xp.where(xp.diag(r) < 0, -1.0, 1.0).astype(r.dtype)
    q, r = q * s[None, :], r * s[:, None]
    cuts = np.cumsum([0] + [x.shape[0] for x in rs])
    return (r.astype(out),) + tuple(q[cuts[i]:cuts[i + 1]] for i in range(len(rs)))


# ------------------------------------------------------------------------------ block LU
def _apply_swaps(x, piv, start=0):
    """Row interchanges ``row start+i <-> piv[i]`` (in order), as one gather (not one by one)."""
    if not len(piv):
        return
    hi = max(int(np.max(piv)), start + len(piv) - 1) + 1
    idx = np.arange(start, hi)
    for i, p in enumerate(piv):
        p = int(p) - start
        idx[i], idx[p] = idx[p], idx[i]
    moved = np.flatnonzero(idx != np.arange(start, hi))
    if moved.size:
        x[start + moved] = x[idx[moved]]


def getrf(xp, a, piv, base=4):
    """Recursive LU with partial pivoting of a tall block, in place (``a = P L U``, L unit
    lower below, U on and above the diagonal); ``piv[i]`` is the row swapped with row ``i``.
    Returns the index of the first exactly zero pivot, or -1. Nearly all flops are in the
    matrix products of the recursion; only ``base`` columns at a time are eliminated one by
    one."""
    m, b = a.shape
    zero = -1
    if b <= base:
        for j in range(min(m, b)):
            p = j + int(xp.argmax(xp.abs(a[j:, j])))
            piv[j] = p
            if p != j:
                a[[j, p]] = a[[p, j]]
            d = a[j, j]
            if d != 0:
                a[j + 1:, j] /= d
            elif zero < 0:
                zero = j
            if j + 1 < b:
                a[j + 1:, j + 1:] -= xp.outer(a[j + 1:, j], a[j, j + 1:])
        return zero
    h = b // 2
    zero = getrf(xp, a[:, :h], piv[:h], base)
    _apply_swaps(a[:, h:], piv[:h])
    a[:h, h:] = _unit_lower_solve(xp, a[:h, :h], a[:h, h:])
    a[h:, h:] -= a[h:, :h] @ a[:h, h:]
    z2 = getrf(xp, a[h:, h:], piv[h:], base)
    _apply_swaps(a[h:, :h], piv[h:])
    piv[h:] += h
    return zero if zero >= 0 else (z2 + h if z2 >= 0 else -1)


def _unit_lower_solve(xp, lo, rhs):
    """``L^-1 rhs`` for the unit lower triangle of ``lo`` (a fresh array)."""
    x = xp.array(rhs)
    _trsm(xp, lo, x)
    return x


def _trsm(xp, lo, x, base=16):
    """``x = L^-1 x`` in place, L the unit lower triangle of ``lo``: halves recursively (the
    off-diagonal block is one matrix product), small triangles row by row. Half the flops of
    a general solve, and no LAPACK call overhead on small blocks."""
    h = lo.shape[0]
    if h <= base:
        for i in range(1, h):
            x[i] -= lo[i, :i] @ x[:i]
        return
    k = h // 2
    _trsm(xp, lo[:k, :k], x[:k], base)
    x[k:] -= lo[k:, :k] @ x[:k]
    _trsm(xp, lo[k:, k:], x[k:], base)


def _sub_product(xp, c, a, b, limit=1 << 24):
    """``c -= a @ b`` in row chunks: the temporary product stays under ``limit`` bytes, so it
    is recycled by the allocator instead of page-faulting fresh memory at every step."""
    step = max(64, limit // max(1, b.shape[1] * c.itemsize))
    for r in range(0, c.shape[0], step):
        c[r:r + step] -= a[r:r + step] @ b


@kernel("lu_init")
def lu_init(xp, *blocks, n, r, na, dtype):
    """The worker's LU matrix ``M = [A_w^T; B_w^T]`` ((n + r) x n_w, C order): its rows of A
    (``na`` blocks) and the matching rows of B, transposed, so that column swaps of A become
    contiguous row swaps and its equations are M's columns."""
    cols = sum(b.shape[0] for b in blocks[:na])
    m = xp.empty((n + r, cols), dtype=dtype)
    c = 0
    for a, b in zip(blocks[:na], blocks[na:] if r else [None] * na):
        w = a.shape[0]
        _put_t(m[:n, c:c + w], a)
        if r:
            _put_t(m[n:, c:c + w], b)
        c += w
    return m


def _put_t(dst, src, tile=256):
    """``dst[...] = src.T`` tile by tile (twice as fast as one strided copy: both sides of a
    tile stay in cache)."""
    for i in range(0, src.shape[0], tile):
        for j in range(0, src.shape[1], tile):
            dst[j:j + tile, i:i + tile] = src[i:i + tile, j:j + tile].T


@kernel("lu_panel")
def lu_panel(xp, m, p, c0, c1, n):
    """Factor step ``p``'s panel (M's columns ``c0:c1``, rows ``p:n``) in place, apply its row
    swaps to M's earlier columns (later ones may still wait for the previous step's update:
    ``lu_update`` swaps them), turn the right-hand-side rows into multipliers; returns the
    panel (to broadcast), the swaps and ``[zero pivot or -1, sum log|U_ii|, sign, parity]``."""
    b = c1 - c0
    pan = xp.asfortranarray(m[p:n, c0:c1])  # column order: the eliminations walk columns
    piv = np.zeros(b, np.int64)
    zero = getrf(xp, pan, piv)
    _apply_swaps(m[p:n, :c0], piv)
    m[p:n, c0:c1] = pan
    if m.shape[0] > n:  # W = B^T U11^-1 for the right-hand sides (rows below n)
        u11 = xp.triu(pan[:b])
        try:
            m[n:, c0:c1] = xp.linalg.solve(u11.T, m[n:, c0:c1].T).T
        except np.linalg.LinAlgError:
            m[n:, c0:c1] = xp.nan
    d = np.asarray(xp.diag(pan[:b]) if not hasattr(xp, "asnumpy") else xp.asnumpy(
        xp.diag(pan[:b])))
    with np.errstate(divide="ignore"):
        logabs = float(np.sum(np.log(np.abs(d))))
    sign = float(np.prod(np.sign(d)))
    parity = int(np.sum(piv != np.arange(b)))
    stat = np.array([zero + p if zero >= 0 else -1, logabs, sign, parity], np.float64)
    return xp.array(m[p:, c0:c1]), piv + p, stat


@kernel("lu_update")
def lu_update(xp, m, panel, piv, p, n, c0, c1, s0, s1):
    """Apply step ``p``'s panel: its row swaps to M's columns ``s0:s1``, then ``U12 = L11^-1
    A12`` and ``A22 -= L21 U12`` (right-hand-side rows included) to columns ``c0:c1``.
    Changes M in place; no output."""
    b = panel.shape[1]
    if s1 > s0:
        _apply_swaps(m[p:n, s0:s1], np.asarray(piv) - p)
    if c1 > c0:
        u12 = _unit_lower_solve(xp, panel[:b], m[p:p + b, c0:c1])
        m[p:p + b, c0:c1] = u12
        _sub_product(xp, m[p + b:, c0:c1], panel[b:], u12)
    return ()


@kernel("lu_back_diag")
def lu_back_diag(xp, m, p, c0, c1, n):
    """Back substitution, block ``p``: ``V^T = W^T L_pp^-1`` in M's right-hand-side rows;
    returns ``V^T`` for the other workers."""
    b = c1 - c0
    lmat = xp.tril(m[p:p + b, c0:c1], -1) + xp.eye(b, dtype=m.dtype)
    m[n:, c0:c1] = xp.linalg.solve(lmat.T, m[n:, c0:c1].T).T
    return xp.array(m[n:, c0:c1])


@kernel("lu_back_update")
def lu_back_update(xp, m, vt, p, e, n):
    """``W_i^T -= V_p^T L_pi`` for this worker's earlier blocks (M's columns ``:e``)."""
    b = vt.shape[1]
    if e > 0:
        _sub_product(xp, m[n:, :e], vt, m[p:p + b, :e])
    return ()


@kernel("rows_from_t")
def rows_from_t(xp, *pieces, shape, dtype, rows):
    """A block whose rows ``rows[i]`` are the columns of ``pieces[i]`` (transposed pieces)."""
    out = xp.empty(shape, dtype=dtype)
    for pc, rw in zip(pieces, rows):
        out[rw] = pc.T
    return out


# ------------------------------------------------------------------------------ Cholesky
@kernel("concat_cols")
def concat_cols(xp, *blocks, dtype):
    """The worker's column blocks side by side (C order): its part of the Cholesky matrix."""
    return xp.ascontiguousarray(xp.concatenate(blocks, axis=1).astype(dtype, copy=False))


@kernel("chol_panel")
def chol_panel(xp, m, p, c0, c1):
    """Step ``p``: ``L_pp = chol(A_pp)``, ``L_ip = A_ip L_pp^-T`` below, zeros above, in place;
    returns the panel (rows ``p:``) and ``[order of the failing leading minor or -1]``."""
    b = c1 - c0
    d = m[p:p + b, c0:c1]
    try:
        lo = xp.linalg.cholesky(d)
        bad = -1
    except np.linalg.LinAlgError:
        bad = p + _chol_order(np.asarray(d))
        lo = xp.eye(b, dtype=m.dtype)
    m[:p, c0:c1] = 0
    m[p:p + b, c0:c1] = lo
    if m.shape[0] > p + b:
        m[p + b:, c0:c1] = xp.linalg.solve(lo, m[p + b:, c0:c1].T).T
    return xp.array(m[p:, c0:c1]), np.array([bad], np.int64)


@kernel("chol_update")
def chol_update(xp, m, panel, p, cols):
    """``A_jj' -= L_jp L_j'p^T`` for this worker's later column blocks ``cols`` (pairs of
    (local start, global start, width)); rows above a block's diagonal are skipped."""
    for c0, g0, w in cols:
        lj = panel[g0 - p:g0 - p + w]
        _sub_product(xp, m[g0:, c0:c0 + w], panel[g0 - p:], lj.T)
    return ()


@kernel("t_copy")
def t_copy(xp, m, c0, c1):
    """Rows of U = L^T: the transpose of M's columns ``c0:c1`` as a C-ordered block."""
    return xp.ascontiguousarray(m[:, c0:c1].T)

