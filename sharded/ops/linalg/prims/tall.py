"""Tall QR of one big matrix split by rows (``qr_tall``), nothing gathered on one worker.

Rows split (a matrix split otherwise is first resharded by rows). CholeskyQR2: each shard forms
its Gram matrix ``A_s^T A_s``; the tree sums them on the first shard's worker, which factors
``G = R^T R`` and broadcasts ``R^-1`` (k x k); every shard computes ``Q_s = A_s R^-1`` and, in
the same pass, the Gram matrix of ``Q_s``; a second round makes ``Q`` orthogonal to working
precision. If ``cond(R) > COND_MAX`` (CholeskyQR would lose orthogonality) the driver, having
read one status word, switches to TSQR: a QR per shard, a QR of the stacked R factors on one
worker, and ``Q_s @ Q2_s`` back on every shard. Both give R with a non-negative diagonal (the
unique QR), ``Q`` in A's row layout and ``R`` replicated. ``lstsq`` and the reduced ``svd`` of
a tall matrix go through it (``solve.py``, ``decomp.py``).
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, even_bounds
from ....core.dispatch import apply, placement
from ....core.registry import kernel, pooled_empty, primitive, vjp
from ....core.tree import plan_reduce
from ....layout import Layout
from ....runtime.commands import Key, Transfer
from . import batched as B

COND_MAX = 1e6  # CholeskyQR2 is used while cond(R) stays below this, TSQR above


def is_tall(t) -> bool:
    """A 2-D matrix with at least as many rows as columns, split over several shards, whose
    k x k factor R is small enough to sit whole on every worker (``GATHER_LIMIT``)."""
    lay = t._layout
    return (
        lay.ndim == 2
        and not lay.is_replicated
        and lay.num_shards > 1
        and lay.shape[0] >= lay.shape[1]
        and lay.shape[1] ** 2 * t._dtype.itemsize <= B.GATHER_LIMIT
    )


# ------------------------------------------------------------------------------ tall QR
def _chunks(m, k):
    """Row ranges of about 2 MB: each chunk is multiplied while it sits in cache."""
    step = max(256, (1 << 18) // max(k, 1))
    return [slice(i, min(i + step, m)) for i in range(0, m, step)]


def wide(dt):
    """The accumulation dtype of CholeskyQR: float64 (complex128 for complex input), so
    single precision input keeps its accuracy."""
    return np.complex128 if np.dtype(dt).kind == "c" else np.float64


def _h(x):
    """``x^H`` of a block (a plain transpose view for reals: no copy)."""
    return x.T.conj() if x.dtype.kind == "c" else x.T


@kernel
def gram(xp, a):
    """``a^H a`` in float64/complex128 as a stack entry (1, k, k): the partial of
    CholeskyQR's Gram matrix."""
    acc = wide(a.dtype)
    if a.dtype == acc:
        return (_h(a) @ a)[None]
    g = xp.zeros((a.shape[1], a.shape[1]), acc)
    for c in _chunks(*a.shape):
        x = a[c].astype(acc)
        g += _h(x) @ x
    return g[None]


@kernel
def chol_r(xp, g, cond_max):
    """From a Gram matrix: ``R`` (upper, ``G = R^H R``), ``R^-1`` and a status: -1 when the
    Cholesky factor exists and ``cond(R) <= cond_max``, else 1 (CholeskyQR would lose
    orthogonality: the caller falls back to TSQR)."""
    g = np.asarray(g.get() if hasattr(g, "get") else g).reshape(g.shape[-2:])
    k = g.shape[0]
    try:
        r = _h(np.linalg.cholesky(g))
        d = np.abs(np.diag(r))
        ok = bool(k == 0 or (d.min() > 0 and np.linalg.cond(r) <= cond_max))
    except np.linalg.LinAlgError:
        r, ok = np.eye(k, dtype=g.dtype), False
    rinv = np.linalg.inv(r) if ok else np.eye(k, dtype=g.dtype)
    return xp.asarray(r), xp.asarray(rinv), np.array([-1 if ok else 1], np.int64)


@kernel(pooled=True)
def cholqr_step(xp, a, rinv, out, alloc=None):
    """``q = a @ R^-1`` (cast to ``out``, into a block of the worker's pool when one fits)
    and, from the same chunks while they are in cache, the Gram partial of ``q`` for
    CholeskyQR2's second pass."""
    m, k = a.shape
    acc = wide(a.dtype)
    q = pooled_empty(xp, alloc, (m, k), np.dtype(out))
    g = xp.zeros((k, k), acc)
    rinv = xp.asarray(rinv, dtype=acc)
    for c in _chunks(m, k):
        x = a[c].astype(acc, copy=False) @ rinv
        q[c] = x
        g += _h(x) @ x
    return q, g[None]


@kernel
def scale_rows(xp, q, s):
    """``q = q @ s`` in place, chunk by chunk (no second block-sized allocation); returns
    ``q``."""
    acc = wide(q.dtype)
    s = xp.asarray(s, dtype=acc)
    for c in _chunks(*q.shape):
        q[c] = q[c].astype(acc, copy=False) @ s
    return q


@kernel
def mul_small(xp, a, s, out):
    """``a @ s`` for a block and a small matrix, cast to ``out``."""
    return xp.matmul(a, xp.asarray(s, dtype=a.dtype)).astype(out, copy=False)


@kernel
def r_product(xp, r2, r1, out):
    """``R = R2 @ R1`` (the two CholeskyQR passes), upper triangular exactly."""
    return xp.triu(xp.asarray(r2) @ xp.asarray(r1)).astype(out, copy=False)


@kernel
def local_qr(xp, a):
    """TSQR leaf: the reduced QR of a block (float64 on the way, cast back by the caller)."""
    return xp.linalg.qr(a)


@kernel
def stack_qr(xp, *rs, out):
    """TSQR root: QR of the stacked leaf R factors, signs fixed so that R's diagonal is
    real and non-negative (the QR is then unique, as CholeskyQR's); returns R then the Q rows
    of every leaf."""
    st = xp.concatenate([r.reshape(-1, r.shape[-1]) for r in rs], axis=0)
    q, r = xp.linalg.qr(st)
    s = B.unit_phase(xp, xp.diag(r))
    q, r = q * s.conj()[None, :], r * s[:, None]
    cuts = np.cumsum([0] + [x.shape[0] for x in rs])
    return (r.astype(out),) + tuple(q[cuts[i] : cuts[i + 1]] for i in range(len(rs)))


# ------------------------------------------------------------------------------ tall QR
def row_layout(lay, num_workers):
    """``lay`` if only its rows are split, else its row chunks (or even ones) with whole rows,
    on the workers of its first column of blocks."""
    n, m = lay.shape
    if not lay.is_replicated and lay.grid[1] == 1:
        return lay
    if not lay.is_replicated and lay.grid[0] > 1:
        rb = lay.bounds[0]
        ws = [lay.workers[lay.index((i, 0))] for i in range(lay.grid[0])]
    else:
        rb = even_bounds(n, num_workers)
        ws = [i % num_workers for i in range(len(rb) - 1)]
    return Layout.from_bounds((n, m), [rb, (0, m)], ws)


def by_rows(ex, a):
    """``a`` laid out by rows, and the temporary to free (or None)."""
    lay = row_layout(a._layout, ex.num_workers)
    if lay == a._layout:
        return a, None
    r = B.reshard(ex, a, lay)
    return r, r


def broadcast_block(ex, src, key, workers):
    """Ship block ``key`` from worker ``src`` once to each other worker: {worker: arg}."""
    others = [w for w in dict.fromkeys(workers) if w != src]
    out = {src: Key(key, None)}
    if others:
        h = ex.export({src: [(key, None)]})[src][0]
        out.update({w: Transfer(h) for w in others})
    return out


def _sum_gram(ex, parts, k, label, acc):
    """Tree-sum (1, k, k) Gram partials ``[(worker, key)]`` of dtype ``acc`` onto the first
    one's worker."""
    ws = [w for w, _ in parts]
    stack = Layout.from_bounds(
        (len(parts), k, k), [tuple(range(len(parts) + 1)), (0, k), (0, k)], ws
    )
    res = plan_reduce(
        ex,
        Operand(stack, acc, [q for _, q in parts]),
        "sum",
        (0,),
        False,
        acc,
        label=label,
    )[0]
    ex.free_pairs(parts)
    return res.layout.workers[0], res.keys[0]


def _replicate(ex, src, key, dt, shape):
    ws = list(range(ex.num_workers))
    args = broadcast_block(ex, src, key, ws)
    keys = []
    for w in ws:
        if w == src:
            keys.append(key)
            continue
        k = ex.new_key()
        ex.submit(w, "copy", (args[w],), (k,), None, ("qr_tall", None))
        keys.append(k)
    return Operand(
        Layout.from_bounds(shape, [(0, s) for s in shape], ws, replicated=True), dt, tuple(keys)
    )


def _cholqr2(ex, a, strict):
    lay, keys, dt = a._layout, a._keys, a._dtype
    acc = D.complex128 if dt.is_complex else D.float64
    k = lay.shape[1]
    shards = lay.shards()
    parts = []
    for s, (w, _, _) in enumerate(shards):
        g = ex.new_key()
        ex.submit(w, "gram", (Key(keys[s], None),), (g,), None, ("qr_tall", s))
        parts.append((w, g))
    root, gk = _sum_gram(ex, parts, k, "qr_tall", acc)
    r1, r1i, st = ex.new_key(), ex.new_key(), ex.new_key()
    ex.submit(
        root, "chol_r", (Key(gk, None),), (r1, r1i, st), {"cond_max": COND_MAX}, ("qr_tall", None)
    )
    ex.free(root, [gk])
    ok = int(ex.fetch([(root, st, None)])[0][0]) < 0
    ex.free(root, [st])
    if not ok:
        ex.free_pairs([(root, r1), (root, r1i)])
        if strict:
            raise B.LinAlgError(
                f"linalg.qr: CholeskyQR2 needs cond(A) <= {COND_MAX:g}; this "
                f"{lay.shape[0]}x{k} matrix is worse conditioned (use "
                f"method='tsqr')"
            )
        return None
    rinv = broadcast_block(ex, root, r1i, lay.workers)
    qs, parts = [], []
    for s, (w, _, _) in enumerate(shards):
        q, g = ex.new_key(), ex.new_key()
        ex.submit(
            w,
            "cholqr_step",
            (Key(keys[s], None), rinv[w]),
            (q, g),
            {"out": dt.np_str},
            ("qr_tall", s),
        )
        qs.append(q)
        parts.append((w, g))
    ex.free(root, [r1i])
    root2, gk2 = _sum_gram(ex, parts, k, "qr_tall", acc)
    r2, r2i, st2 = ex.new_key(), ex.new_key(), ex.new_key()
    ex.submit(
        root2,
        "chol_r",
        (Key(gk2, None),),
        (r2, r2i, st2),
        {"cond_max": math.inf},
        ("qr_tall", None),
    )
    ex.free(root2, [gk2, st2])
    rinv2 = broadcast_block(ex, root2, r2i, lay.workers)
    for s, (w, _, _) in enumerate(shards):
        # (in place, its block named as the output: the shards' scalings may run at once)
        ex.submit(
            w, "scale_rows", (Key(qs[s], None), rinv2[w]), (qs[s],), None, ("qr_tall", s), True
        )
    ex.free(root2, [r2i])
    r1_at = broadcast_block(ex, root, r1, [root2])[root2]
    rk = ex.new_key()
    ex.submit(
        root2, "r_product", (Key(r2, None), r1_at), (rk,), {"out": dt.np_str}, ("qr_tall", None)
    )
    ex.free_pairs([(root, r1), (root2, r2)])
    return Operand(lay, dt, tuple(qs)), _replicate(ex, root2, rk, dt, (k, k))


def _tsqr(ex, a):
    lay, keys, dt = a._layout, a._keys, a._dtype
    k = lay.shape[1]
    shards = lay.shards()
    root = shards[0][0]
    leaves = []
    for s, (w, _, _) in enumerate(shards):
        q, r = ex.new_key(), ex.new_key()
        ex.submit(w, "local_qr", (Key(keys[s], None),), (q, r), None, ("qr_tall", s))
        leaves.append((w, q, r))
    req = collections.defaultdict(list)
    for w, _, r in leaves:
        if w != root:
            req[w].append((r, None))
    hs = {w: iter(h) for w, h in ex.export(req).items()}
    rargs = [Key(r, None) if w == root else Transfer(next(hs[w])) for w, _, r in leaves]
    rk, q2 = ex.new_key(), [ex.new_key() for _ in leaves]
    ex.submit(
        root, "stack_qr", tuple(rargs), (rk,) + tuple(q2), {"out": dt.np_str}, ("qr_tall", None)
    )
    ex.free_pairs([(w, r) for w, _, r in leaves])
    req = collections.defaultdict(list)
    for (w, _, _), qk in zip(leaves, q2):
        if w != root:
            req[root].append((qk, None))
    hs = iter(ex.export(req)[root]) if req else iter(())
    out = []
    for s, ((w, q, _), qk) in enumerate(zip(leaves, q2)):
        arg = Key(qk, None) if w == root else Transfer(next(hs))
        nk = ex.new_key()
        ex.submit(w, "mul_small", (Key(q, None), arg), (nk,), {"out": dt.np_str}, ("qr_tall", s))
        out.append(nk)
    ex.free_pairs([(w, q) for w, q, _ in leaves] + [(root, qk) for qk in q2])
    return Operand(lay, dt, tuple(out)), _replicate(ex, root, rk, dt, (k, k))


@primitive(
    "qr_tall",
    kind="linalg",
    kernels=[gram, chol_r, cholqr_step, scale_rows, mul_small, r_product, local_qr, stack_qr],
)
def plan_qr_tall(ex, a, method="auto"):
    """Reduced QR of a tall matrix split by rows: ``(Q like A's rows, R replicated)``."""
    t, tmp = by_rows(ex, a)
    res = None
    if method in ("auto", "cholqr2"):
        res = _cholqr2(ex, t, strict=method == "cholqr2")
    if res is None:
        res = _tsqr(ex, t)
    if tmp is not None:
        ex.free_pairs(list(zip(tmp._layout.workers, tmp._keys)))
    return res


def qr_grad(q, r, gq, gr):
    """torch's rule for the reduced QR of a tall matrix, ``A = Q R`` (R's diagonal real), in
    torch's gradient convention (the engine's conjugated in and out, see
    :func:`~.batched.cj`): with ``M = gR R^H - Q^H gQ``,
    ``G = triu(M) + triu(M, 1)^H`` with the diagonal's real part only (a Hermitian matrix),
    ``gA = (gQ + Q G) R^-H``."""
    gq, gr = B.cj(gq), B.cj(gr)
    if gq is None:
        gq = apply("full", q._layout, 0, q.dtype)
    if gr is None:
        gr = apply("full", r._layout, 0, r.dtype)
    qtg = B.herm(q) @ gq  # k x k, summed across row shards
    m = gr @ B.herm(r) - qtg
    up = tril(m.mT).mT  # triu(M)
    g = up + tril(B.herm(up), -1)
    if g.dtype.is_complex:  # drop the imaginary part of the diagonal (R's is real)
        g = g - 1j * tril(tril(g.imag).mT)
    rinv_h = B.herm(apply("linalg_inv", r))  # small; keeps Q's row layout in the product below
    return B.cj((gq + q @ g) @ rinv_h)


@vjp("qr_tall", save_out=True)
def qr_tall_vjp(gs, node):
    q, r = node.saved["out"]
    return (qr_grad(q, r, gs[0], gs[1]),) + (None,) * (len(node.args) - 1)


def tril(x, k=0):
    """Lower triangle (on and below diagonal ``k``) of the last two dims, by a mask built
    from two distributed ranges (a big matrix's mask is never made on the driver)."""
    n, m = x.shape[-2], x.shape[-1]
    rows = apply("arange", placement((n,)), 0, 1, D.int64).reshape(n, 1)
    cols = apply("arange", placement((m,)), 0, 1, D.int64).reshape(1, m)
    return x * ((rows - cols) >= -k)
