"""Worker kernels of the distributed block LU (:mod:`.prims.lu_dist`, the primitives
``lu_solve`` and ``lu_slogdet``) and the in-place block products it shares with the blocked
Cholesky (:mod:`.prims.cholesky`).

Each worker holds one matrix ``M = [A_w^T; B_w^T]``: its rows of A and of the right-hand
sides, transposed (:func:`lu_init`). The kernels factor a panel (LAPACK's getrf on the host,
else a recursive LU), apply its swaps and its update to later columns, and run the back
substitution, all in M's memory; the driver's plan that sends them is ``_LU`` in
:mod:`.prims.lu_dist`.
"""

from __future__ import annotations

import numpy as np

from ...backend import host_blas
from ...core.registry import kernel


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
                a[j + 1 :, j] /= d
            elif zero < 0:
                zero = j
            if j + 1 < b:
                isub_product(xp, a[j + 1 :, j + 1 :], a[j + 1 :, j : j + 1], a[j : j + 1, j + 1 :])
        return zero
    h = b // 2
    zero = getrf(xp, a[:, :h], piv[:h], base)
    _apply_swaps(a[:, h:], piv[:h])
    a[:h, h:] = _unit_lower_solve(xp, a[:h, :h], a[:h, h:])
    isub_product(xp, a[h:, h:], a[h:, :h], a[:h, h:])
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
    isub_product(xp, x[k:], lo[k:, :k], x[:k])
    _trsm(xp, lo[k:, k:], x[k:], base)


def isub_product(xp, c, a, b) -> None:
    """``c -= a @ b`` with the product made in ``c``'s memory order: a matmul result is C
    order, and subtracting it from a column-order block walks one of the two across its
    rows (an 8192 x 256 panel, its update after 8 columns: 38 ms against 1.4 ms). On the
    host, one gemm call does it with no temporary (:func:`host_blas.gemm_add`)."""
    if xp is np and host_blas.gemm_add(c, a, b, -1.0):
        return
    if c.ndim == 2 and c.strides[0] < c.strides[1]:  # column order (the panel's)
        c -= (b.T @ a.T).T
    else:
        c -= a @ b


def sub_product(xp, c, a, b, limit=1 << 24):
    """``c -= a @ b`` in row chunks: the temporary product stays under ``limit`` bytes, so it
    is recycled by the allocator instead of page-faulting fresh memory at every step. On the
    host, one gemm call with ``beta = 1`` (no temporary, one pass fewer over ``c``)."""
    if xp is np and host_blas.gemm_add(c, a, b, -1.0):
        return
    step = max(64, limit // max(1, b.shape[1] * c.itemsize))
    for r in range(0, c.shape[0], step):
        c[r : r + step] -= a[r : r + step] @ b


@kernel(pooled=True)
def lu_init(xp, *blocks, n, r, na, nb, dtype, alloc=None):
    """The worker's LU matrix ``M = [A_w^T; B_w^T]`` ((n + r) x n_w, C order): its rows of A
    (``na`` blocks) and the matching rows of B, transposed, so that column swaps of A become
    contiguous row swaps and its equations are M's columns; and the scratch of its panels
    (:func:`lu_panel`): three slots of ``(n + r) x nb``.

    Both come from the worker's pool of freed blocks where one fits (``alloc``; they are
    freed when the solve ends), and the panels reuse their slots: fresh pages cost a fault
    each, 0.2-0.7 s for the 268 MB of each worker's M in an 8192^2 solve on 2 workers
    (0.08 s for the transposing copy into a reused block), 30 ms for a 16 MB panel."""
    cols = sum(b.shape[0] for b in blocks[:na])
    m, s = (alloc((n + r, cols), dtype), alloc((3, (n + r) * nb), dtype)) if alloc else (None,) * 2
    m = xp.empty((n + r, cols), dtype=dtype) if m is None else m
    s = xp.empty((3, (n + r) * nb), dtype=dtype) if s is None else s
    c = 0
    for a, b in zip(blocks[:na], blocks[na:] if r else [None] * na):
        w = a.shape[0]
        _put_t(m[:n, c : c + w], a)
        if r:
            _put_t(m[n:, c : c + w], b)
        c += w
    return m, s


def _put_t(dst, src, tile=64):
    """``dst[...] = src.T`` tile by tile (twice as fast as one strided copy: both sides of a
    tile stay in cache)."""
    for i in range(0, src.shape[0], tile):
        for j in range(0, src.shape[1], tile):
            dst[j : j + tile, i : i + tile] = src[i : i + tile, j : j + tile].T


@kernel
def lu_panel(xp, m, s, p, c0, c1, n, slot):
    """Factor step ``p``'s panel (M's columns ``c0:c1``, rows ``p:n``) in place, apply its row
    swaps to M's earlier columns (later ones may still wait for the previous step's update:
    ``lu_update`` swaps them), turn the right-hand-side rows into multipliers; returns the
    panel (to broadcast), the swaps and ``[zero pivot or -1, sum log|U_ii|, sign, parity,
    sum arg(U_ii)]`` (the last: the phase of a complex determinant; the sign is then 1).

    The panel returned is a view of scratch slot ``slot`` (``s``, from :func:`lu_init`); the
    caller alternates two slots, so a panel stays intact while the next one is made (the
    look-ahead), and is done with it before the one after."""
    b = c1 - c0
    # column order: the eliminations walk columns (a tiled transpose: 2.5x faster than one
    # strided copy for a 8192 x 256 panel); its own slot of the scratch
    pan = s[2, : b * (n - p)].reshape(b, n - p).T
    _put_t(pan.T, m[p:n, c0:c1])
    lapack = host_blas.getrf(pan) if xp is np else None  # LAPACK: twice as fast
    if lapack is None:
        piv = np.zeros(b, np.int64)
        zero = getrf(xp, pan, piv)
    else:
        piv, zero = lapack
    _apply_swaps(m[p:n, :c0], piv)
    _put_t(m[p:n, c0:c1], pan.T)
    if m.shape[0] > n:  # W = B^T U11^-1 for the right-hand sides (rows below n)
        u11 = xp.triu(pan[:b])
        try:
            m[n:, c0:c1] = xp.linalg.solve(u11.T, m[n:, c0:c1].T).T
        except np.linalg.LinAlgError:
            m[n:, c0:c1] = xp.nan
    d = np.asarray(xp.diag(pan[:b]) if not hasattr(xp, "asnumpy") else xp.asnumpy(xp.diag(pan[:b])))
    with np.errstate(divide="ignore"):
        logabs = float(np.sum(np.log(np.abs(d))))
    cx = d.dtype.kind == "c"
    sign = 1.0 if cx else float(np.prod(np.sign(d)))
    phase = float(np.sum(np.angle(d))) if cx else 0.0
    parity = int(np.sum(piv != np.arange(b)))
    stat = np.array([zero + p if zero >= 0 else -1, logabs, sign, parity, phase], np.float64)
    out = s[slot, : b * (m.shape[0] - p)].reshape(m.shape[0] - p, b)
    out[...] = m[p:, c0:c1]
    return out, piv + p, stat


@kernel
def lu_update(xp, m, panel, piv, p, n, c0, c1, s0, s1):
    """Apply step ``p``'s panel: its row swaps to M's columns ``s0:s1``, then ``U12 = L11^-1
    A12`` and ``A22 -= L21 U12`` (right-hand-side rows included) to columns ``c0:c1``.
    Changes M in place; no output."""
    b = panel.shape[1]
    if s1 > s0:
        _apply_swaps(m[p:n, s0:s1], np.asarray(piv) - p)
    if c1 > c0:
        u12 = m[p : p + b, c0:c1]
        if not (xp is np and host_blas.trsm_unit_lower(panel[:b], u12)):  # in place
            u12[...] = _unit_lower_solve(xp, panel[:b], u12)
        sub_product(xp, m[p + b :, c0:c1], panel[b:], u12)
    return ()


@kernel
def lu_back_diag(xp, m, p, c0, c1, n):
    """Back substitution, block ``p``: ``V^T = W^T L_pp^-1`` in M's right-hand-side rows;
    returns ``V^T`` for the other workers."""
    b = c1 - c0
    lmat = xp.tril(m[p : p + b, c0:c1], -1) + xp.eye(b, dtype=m.dtype)
    m[n:, c0:c1] = xp.linalg.solve(lmat.T, m[n:, c0:c1].T).T
    return xp.array(m[n:, c0:c1])


@kernel
def lu_back_update(xp, m, vt, p, e, n):
    """``W_i^T -= V_p^T L_pi`` for this worker's earlier blocks (M's columns ``:e``)."""
    b = vt.shape[1]
    if e > 0:
        sub_product(xp, m[n:, :e], vt, m[p : p + b, :e])
    return ()


@kernel
def rows_from_t(xp, *pieces, shape, dtype, rows):
    """A block whose rows ``rows[i]`` are the columns of ``pieces[i]`` (transposed pieces)."""
    out = xp.empty(shape, dtype=dtype)
    for pc, rw in zip(pieces, rows):
        out[rw] = pc.T
    return out
