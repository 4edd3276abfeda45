"""One big matrix spread over the workers: tall QR, block LU (solve, inv, det) and blocked
Cholesky, with nothing gathered on one worker or the driver.

Tall QR (``qr_tall``)
    Rows split (a matrix split otherwise is first resharded by rows). CholeskyQR2: each shard
    forms its Gram matrix ``A_s^T A_s``; the tree sums them on the first shard's worker, which
    factors ``G = R^T R`` and broadcasts ``R^-1`` (k x k); every shard computes ``Q_s = A_s
    R^-1`` and, in the same pass, the Gram matrix of ``Q_s``; a second round makes ``Q``
    orthogonal to working precision. If ``cond(R) > COND_MAX`` (CholeskyQR would lose
    orthogonality) the driver, having read one status word, switches to TSQR: a QR per shard,
    a QR of the stacked R factors on one worker, and ``Q_s @ Q2_s`` back on every shard. Both
    give R with a non-negative diagonal (the unique QR), ``Q`` in A's row layout and ``R``
    replicated.
Block LU (``lu_solve``, ``lu_slogdet``)
    Gaussian elimination with partial pivoting on ``A^T`` (pivoting over A's columns, as stable
    as GEPP on A), so each worker keeps its own rows of A (and of the right-hand sides) as the
    columns of one local matrix ``M = [A_w^T; B_w^T]`` and nothing moves to start. The
    equations are eliminated in an order that takes blocks of ``nb`` rows from the workers in
    turn (a row permutation of A X = B does not change X), which balances the work. Step k:
    the owner of block k factors its panel (recursive LU) and broadcasts it; every worker
    applies its row swaps, ``U12 = L11^-1 A12`` and ``A22 -= L21 U12`` to its later columns;
    the next owner updates its next panel first and factors it at once (look-ahead). The
    right-hand sides ride along as extra rows, so the forward solve comes free; the back
    solve is a sweep of small broadcasts. X leaves in A's row layout after one permuting
    transfer planned from the pivots (the one read the driver makes, with the singularity
    status).
Blocked Cholesky (``cholesky_dist``)
    A's columns are resharded into blocks of ``nb`` dealt to the workers in turn (balance),
    and a right-looking column Cholesky runs on them (only the lower triangle is read, as
    torch). The result is ``U = L^T`` row-blocked the same way.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .. import dtypes as D
from ..layout import Layout
from .linalg import fail
from .matmul import Arr, even_bounds, gather
from ..core.dataflow import free_temps, reshard
from ..core.tree import plan_reduce
from ..core.dataflow import Operand as Result
from ..core.registry import primitive

DIST_MIN_BYTES = 1 << 20  # smaller split matrices are gathered on one worker instead
COND_MAX = 1e6  # CholeskyQR2 is used while cond(R) stays below this, TSQR above
MAX_BLOCK = 256  # elimination block (panel width) of LU and Cholesky


def is_big(t) -> bool:
    """A 2-D matrix split over several shards and above :data:`DIST_MIN_BYTES`."""
    lay = t._layout
    return (lay.ndim == 2 and not lay.is_replicated and lay.num_shards > 1
            and math.prod(lay.shape) * t._dtype.itemsize > DIST_MIN_BYTES)


def is_tall(t) -> bool:
    """A 2-D matrix with at least as many rows as columns, split over several shards, whose
    k x k factor R is small enough to sit whole on every worker (``GATHER_LIMIT``)."""
    from .linalg import GATHER_LIMIT
    lay = t._layout
    return (lay.ndim == 2 and not lay.is_replicated and lay.num_shards > 1
            and lay.shape[0] >= lay.shape[1]
            and lay.shape[1] ** 2 * t._dtype.itemsize <= GATHER_LIMIT)


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


def rows_like(t):
    """The bound row layout :func:`inv` gives its identity right-hand side."""
    from ..runtime import session
    return row_layout(t._layout, session.current().executor.num_workers)


def _by_rows(ex, a):
    """``a`` laid out by rows, and the temporary to free (or None)."""
    lay = row_layout(a._layout, ex.num_workers)
    if lay == a._layout:
        return a, None
    r = reshard(ex, a, lay)
    t = Arr(r.layout, r.dtype, r.keys)
    return t, t


def _free(ex, items):
    by_w = collections.defaultdict(list)
    for w, k in items:
        by_w[w].append(k)
    for w, ks in by_w.items():
        ex.free(w, ks)


def _broadcast(ex, src, key, workers):
    """Ship block ``key`` from worker ``src`` once to each other worker: {worker: arg}."""
    others = [w for w in dict.fromkeys(workers) if w != src]
    out = {src: ("k", key, None)}
    if others:
        h = ex.export({src: [(key, None)]})[src][0]
        out.update({w: ("x", h) for w in others})
    return out


def _scalar(ex, w, value, dt):
    k = ex.new_key()
    ex.submit(w, "full", (), (k,), {"shape": (), "value": value, "dtype": dt.np.str})
    return Result(Layout.from_bounds((), [], [w]), dt, (k,))


# ------------------------------------------------------------------------------ tall QR
def _sum_gram(ex, parts, k, label):
    """Tree-sum (1, k, k) Gram partials ``[(worker, key)]`` onto the first one's worker."""
    ws = [w for w, _ in parts]
    stack = Layout.from_bounds((len(parts), k, k), [tuple(range(len(parts) + 1)), (0, k),
                                                    (0, k)], ws)
    res = plan_reduce(ex, Arr(stack, D.float64, [q for _, q in parts]), "sum", (0,), False,
                      D.float64, label=label)[0]
    _free(ex, parts)
    return res.layout.workers[0], res.keys[0]


def _replicate(ex, src, key, dt, shape):
    ws = list(range(ex.num_workers))
    args = _broadcast(ex, src, key, ws)
    keys = []
    for w in ws:
        if w == src:
            keys.append(key)
            continue
        k = ex.new_key()
        ex.submit(w, "copy", (args[w],), (k,), None, ("qr", None))
        keys.append(k)
    return Result(Layout.from_bounds(shape, [(0, s) for s in shape], ws, replicated=True), dt,
                  tuple(keys))


def _cholqr2(ex, a, strict):
    lay, keys, dt = a._layout, a._keys, a._dtype
    k = lay.shape[1]
    shards = lay.shards()
    parts = []
    for s, (w, _, _) in enumerate(shards):
        g = ex.new_key()
        ex.submit(w, "gram", (("k", keys[s], None),), (g,), None, ("qr", s))
        parts.append((w, g))
    root, gk = _sum_gram(ex, parts, k, "qr")
    r1, r1i, st = ex.new_key(), ex.new_key(), ex.new_key()
    ex.submit(root, "chol_r", (("k", gk, None),), (r1, r1i, st), {"cond_max": COND_MAX},
              ("qr", None))
    ex.free(root, [gk])
    ok = int(ex.fetch([(root, st, None)])[0][0]) < 0
    ex.free(root, [st])
    if not ok:
        _free(ex, [(root, r1), (root, r1i)])
        if strict:
            from .linalg import LinAlgError
            raise LinAlgError(f"linalg.qr: CholeskyQR2 needs cond(A) <= {COND_MAX:g}; this "
                              f"{lay.shape[0]}x{k} matrix is worse conditioned (use "
                              f"method='tsqr')")
        return None
    rinv = _broadcast(ex, root, r1i, lay.workers)
    qs, parts = [], []
    for s, (w, _, _) in enumerate(shards):
        q, g = ex.new_key(), ex.new_key()
        ex.submit(w, "cholqr_step", (("k", keys[s], None), rinv[w]), (q, g),
                  {"out": dt.np.str}, ("qr", s))
        qs.append(q)
        parts.append((w, g))
    ex.free(root, [r1i])
    root2, gk2 = _sum_gram(ex, parts, k, "qr")
    r2, r2i, st2 = ex.new_key(), ex.new_key(), ex.new_key()
    ex.submit(root2, "chol_r", (("k", gk2, None),), (r2, r2i, st2), {"cond_max": math.inf},
              ("qr", None))
    ex.free(root2, [gk2, st2])
    rinv2 = _broadcast(ex, root2, r2i, lay.workers)
    for s, (w, _, _) in enumerate(shards):
        ex.submit(w, "scale_rows", (("k", qs[s], None), rinv2[w]), (), None, ("qr", s))
    ex.free(root2, [r2i])
    r1_at = _broadcast(ex, root, r1, [root2])[root2]
    rk = ex.new_key()
    ex.submit(root2, "r_product", (("k", r2, None), r1_at), (rk,), {"out": dt.np.str},
              ("qr", None))
    _free(ex, [(root, r1), (root2, r2)])
    return Result(lay, dt, tuple(qs)), _replicate(ex, root2, rk, dt, (k, k))


def _tsqr(ex, a):
    lay, keys, dt = a._layout, a._keys, a._dtype
    k = lay.shape[1]
    shards = lay.shards()
    root = shards[0][0]
    leaves = []
    for s, (w, _, _) in enumerate(shards):
        q, r = ex.new_key(), ex.new_key()
        ex.submit(w, "local_qr", (("k", keys[s], None),), (q, r), None, ("qr", s))
        leaves.append((w, q, r))
    req = collections.defaultdict(list)
    for w, _, r in leaves:
        if w != root:
            req[w].append((r, None))
    hs = {w: iter(h) for w, h in ex.export(req).items()}
    rargs = [("k", r, None) if w == root else ("x", next(hs[w])) for w, _, r in leaves]
    rk, q2 = ex.new_key(), [ex.new_key() for _ in leaves]
    ex.submit(root, "stack_qr", tuple(rargs), (rk,) + tuple(q2), {"out": dt.np.str},
              ("qr", None))
    _free(ex, [(w, r) for w, _, r in leaves])
    req = collections.defaultdict(list)
    for (w, _, _), qk in zip(leaves, q2):
        if w != root:
            req[root].append((qk, None))
    hs = iter(ex.export(req)[root]) if req else iter(())
    out = []
    for s, ((w, q, _), qk) in enumerate(zip(leaves, q2)):
        arg = ("k", qk, None) if w == root else ("x", next(hs))
        nk = ex.new_key()
        ex.submit(w, "mul_small", (("k", q, None), arg), (nk,), {"out": dt.np.str}, ("qr", s))
        out.append(nk)
    _free(ex, [(w, q) for w, q, _ in leaves] + [(root, qk) for qk in q2])
    return Result(lay, dt, tuple(out)), _replicate(ex, root, rk, dt, (k, k))


@primitive("qr_tall", kind="linalg")
def qr_tall(ex, a, method="auto"):
    """Reduced QR of a tall matrix split by rows: ``(Q like A's rows, R replicated)``."""
    t, tmp = _by_rows(ex, a)
    res = None
    if method in ("auto", "cholqr2"):
        res = _cholqr2(ex, t, strict=method == "cholqr2")
    if res is None:
        res = _tsqr(ex, t)
    if tmp is not None:
        _free(ex, zip(tmp._layout.workers, tmp._keys))
    return res


# ------------------------------------------------------------------------------ block LU
class _LU:
    """Block LU of ``A^T`` over the workers holding A's rows (see the module docstring)."""

    def __init__(self, ex, a, b, op):
        self.ex, self.op, self.shape = ex, op, a._layout.shape
        self.a, self.tmp = _by_rows(ex, a)
        lay = self.a._layout
        self.n = n = lay.shape[0]
        self.r = r = b._layout.shape[1] if b is not None else 0
        self.dt = a._dtype
        shards = lay.shards()
        self.wlist = list(dict.fromkeys(w for w, _, shp in shards if shp[0]))
        self.rows = {w: [] for w in self.wlist}  # global row (equation) of each local column
        mine = collections.defaultdict(list)
        for s, (w, offs, shp) in enumerate(shards):
            if shp[0]:
                self.rows[w].extend(range(offs[0], offs[0] + shp[0]))
                mine[w].append(s)
        nb = max(16, min(MAX_BLOCK, -(-n // (4 * max(1, len(self.wlist))))))
        local = {w: [(c, min(c + nb, len(self.rows[w]))) for c in range(0, len(self.rows[w]),
                                                                         nb)]
                 for w in self.wlist}
        self.order, ptr = [], dict.fromkeys(self.wlist, 0)
        while len(self.order) < sum(len(v) for v in local.values()):
            for w in self.wlist:  # one block from each worker in turn
                if ptr[w] < len(local[w]):
                    self.order.append((w,) + local[w][ptr[w]])
                    ptr[w] += 1
        self.pos = [0]
        for _, c0, c1 in self.order:
            self.pos.append(self.pos[-1] + c1 - c0)
        self.width = {w: len(self.rows[w]) for w in self.wlist}
        bargs, temps = [], []
        if r:
            wanted = [(shards[s][0], [(shards[s][1][0], shards[s][1][0] + shards[s][2][0]),
                                      (0, r)]) for w in self.wlist for s in mine[w]]
            bargs, temps = gather(ex, b, wanted)
        self.m = {}
        it = iter(bargs)
        for w in self.wlist:
            args = [("k", lay_key, None) for lay_key in (self.a._keys[s] for s in mine[w])]
            bl = [next(it) for _ in mine[w]] if r else []
            k = ex.new_key()
            ex.submit(w, "lu_init", tuple(args + bl), (k,),
                      {"n": n, "r": r, "na": len(mine[w]), "dtype": self.dt.np.str},
                      (f"linalg.{op}", None))
            self.m[w] = k
        free_temps(ex, temps)
        self.keep = []  # (worker, key) to free at the end

    def _m(self, w):
        return ("k", self.m[w], None)

    def _panel(self, k):
        ex, (w, c0, c1) = self.ex, self.order[k]
        pk, ik, sk = ex.new_key(), ex.new_key(), ex.new_key()
        ex.submit(w, "lu_panel", (self._m(w),), (pk, ik, sk),
                  {"p": self.pos[k], "c0": c0, "c1": c1, "n": self.n}, (f"linalg.{self.op}", k))
        self.keep += [(w, pk), (w, ik), (w, sk)]
        self.stats.append((w, sk))
        self.pivs.append((w, ik))
        others = [v for v in self.wlist if v != w]
        args = {w: (("k", pk, None), ("k", ik, None))}
        if others:
            hp, hi = ex.export({w: [(pk, None), (ik, None)]})[w]
            ex.bytes_moved += (self.n + self.r - self.pos[k]) * (c1 - c0) * self.dt.itemsize * \
                len(others)
            args.update({v: (("x", hp), ("x", hi)) for v in others})
        return args

    def _trail(self, w, k):
        """First local column of ``w`` in a block after step ``k``."""
        for j in range(k + 1, len(self.order)):
            if self.order[j][0] == w:
                return self.order[j][1]
        return self.width[w]

    def factor(self):
        ex, order = self.ex, self.order
        self.stats, self.pivs = [], []
        if not order:
            return
        nxt_args = self._panel(0)
        for k in range(len(order)):
            args, own = nxt_args, order[k][0]
            nxt = order[k + 1][0] if k + 1 < len(order) else None
            prm = {"p": self.pos[k], "n": self.n}
            # the next panel's owner goes last: its export may wait on back-pressure, and
            # every other worker's update must be dispatched (flush_all) before that
            for w in sorted(self.wlist, key=lambda v: v == nxt):
                pa, ia = args[w]
                t = self._trail(w, k)
                # step k's swaps reach every column once, in order: the owner's panel kernel
                # did its columns up to the panel, the first update here does the rest
                sw = dict(s0=order[k][2] if w == own else 0, s1=self.width[w])
                if w == nxt:  # look-ahead: the next panel first, then the rest
                    c1n = order[k + 1][2]
                    ex.submit(w, "lu_update", (self._m(w), pa, ia), (),
                              dict(prm, c0=t, c1=c1n, **sw), (f"linalg.{self.op}", k))
                    ex.flush_all()
                    nxt_args = self._panel(k + 1)
                    t, sw = c1n, dict(s0=0, s1=0)
                ex.submit(w, "lu_update", (self._m(w), pa, ia), (),
                          dict(prm, c0=t, c1=self.width[w], **sw), (f"linalg.{self.op}", k))
            ex.flush_all()

    def back(self):
        ex = self.ex
        for j in reversed(range(len(self.order))):
            w, c0, c1 = self.order[j]
            p = self.pos[j]
            vk = ex.new_key()
            ex.submit(w, "lu_back_diag", (self._m(w),), (vk,),
                      {"p": p, "c0": c0, "c1": c1, "n": self.n}, (f"linalg.{self.op}", j))
            ends = {v: max([c1_ for v_, _, c1_ in self.order[:j] if v_ == v], default=0)
                    for v in self.wlist}
            need = [v for v in self.wlist if ends[v] > 0]
            vargs = _broadcast(ex, w, vk, need + [w])
            for v in need:
                ex.submit(v, "lu_back_update", (self._m(v), vargs[v]), (),
                          {"p": p, "e": ends[v], "n": self.n}, (f"linalg.{self.op}", j))
            ex.free(w, [vk])
            ex.flush_all()

    def status(self):
        """Read every panel's status and pivots (the driver's one wait)."""
        vals = self.ex.fetch([(w, k, None) for w, k in self.stats + self.pivs])
        k = len(self.stats)
        return [np.asarray(v) for v in vals[:k]], [np.asarray(v) for v in vals[k:]]

    def free(self):
        _free(self.ex, self.keep + [(w, k) for w, k in self.m.items()])
        if self.tmp is not None:
            _free(self.ex, zip(self.tmp._layout.workers, self.tmp._keys))

    def solution(self, pivs):
        """X in A's row layout: X[perm[q]] = V[q], V's rows sitting in M's last rows."""
        ex, n, r = self.ex, self.n, self.r
        perm = np.arange(n)
        for (_, c0, c1), pv, p in zip(self.order, pivs, self.pos):
            for i, q in enumerate(pv.astype(np.int64)):
                perm[p + i], perm[q] = perm[q], perm[p + i]
        src = np.empty((n, 2), np.int64)  # position -> (worker, local column)
        for (w, c0, c1), p in zip(self.order, self.pos):
            src[p:p + c1 - c0, 0] = w
            src[p:p + c1 - c0, 1] = np.arange(c0, c1)
        lay = self.a._layout
        out = Layout.from_bounds((n, r), [lay.bounds[0], (0, r)], lay.workers)
        dest = np.empty(n, np.int64)
        dest[perm] = np.arange(n)  # position holding each unknown
        plans, req = [], collections.defaultdict(list)
        for s, (w, offs, shp) in enumerate(out.shards()):
            q = dest[offs[0]:offs[0] + shp[0]]
            pieces = []
            for v in np.unique(src[q, 0]):
                sel = np.flatnonzero(src[q, 0] == v)
                sl = (slice(n, n + r), src[q[sel], 1])
                if v == w:
                    pieces.append((("k", self.m[v], sl), sel))
                else:
                    req[int(v)].append((self.m[v], sl, len(sel) * r * self.dt.itemsize))
                    ex.bytes_moved += len(sel) * r * self.dt.itemsize
                    pieces.append((int(v), sel))
            plans.append((s, w, shp, pieces))
        hs = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
        keys = []
        for s, w, shp, pieces in plans:
            args = [a if isinstance(a, tuple) else ("x", next(hs[a])) for a, _ in pieces]
            k = ex.new_key()
            ex.submit(w, "rows_from_t", tuple(args), (k,),
                      {"shape": tuple(shp), "dtype": self.dt.np.str,
                       "rows": [sel for _, sel in pieces]}, (f"linalg.{self.op}", s))
            keys.append(k)
        return Result(out, self.dt, tuple(keys))

    def equation_sign(self) -> float:
        """Sign of the permutation taking A's rows to elimination order."""
        eq = np.concatenate([np.asarray(self.rows[w][c0:c1]) for w, c0, c1 in self.order])
        seen, sign = np.zeros(len(eq), bool), 1.0
        for i in range(len(eq)):
            if not seen[i]:
                j, length = i, 0
                while not seen[j]:
                    seen[j], j, length = True, eq[j], length + 1
                sign *= -1.0 if length % 2 == 0 else 1.0
        return sign


@primitive("lu_solve", kind="linalg")
def lu_solve(ex, a, b, op="solve") -> Result:
    """``A^-1 B`` of a big split square matrix by block LU (see the module docstring)."""
    f = _LU(ex, a, b, op)
    f.factor()
    f.back()
    stats, pivs = f.status()
    bad = [int(s[0]) for s in stats if s[0] >= 0]
    if bad:
        f.free()
        raise fail(op, None, f.shape)
    out = f.solution(pivs)
    f.free()
    return out


@primitive("lu_slogdet", kind="linalg")
def lu_slogdet(ex, a):
    """``(sign, log|det|)`` of a big split square matrix from its block LU."""
    f = _LU(ex, a, None, "slogdet")
    f.factor()
    stats, _ = f.status()
    f.free()
    if any(s[0] >= 0 for s in stats):
        sign, logabs = 0.0, -math.inf
    else:
        parity = int(sum(s[3] for s in stats))
        sign = float(np.prod([s[2] for s in stats])) * (-1.0) ** parity * f.equation_sign()
        logabs = float(sum(s[1] for s in stats))
    w = f.wlist[0] if f.wlist else 0
    return _scalar(ex, w, sign, a._dtype), _scalar(ex, w, logabs, a._dtype)


# ------------------------------------------------------------------------------ Cholesky
@primitive("cholesky_dist", kind="linalg")
def cholesky_dist(ex, a) -> Result:
    """``U`` (``A = U^T U``) of a big split SPD matrix, rows blocked cyclically."""
    n = a._layout.shape[0]
    P = ex.num_workers
    nb = max(16, min(MAX_BLOCK, -(-n // (4 * P))))
    cuts = tuple(range(0, n, nb)) + (n,)
    owners = [i % P for i in range(len(cuts) - 1)]
    cols = reshard(ex, a, Layout.from_bounds((n, n), [(0, n), cuts], owners))
    blocks = collections.defaultdict(list)  # worker -> [(block, local c0, global g0, width)]
    for i, w in enumerate(owners):
        c0 = sum(x[3] for x in blocks[w])
        blocks[w].append((i, c0, cuts[i], cuts[i + 1] - cuts[i]))
    m, dt = {}, a._dtype
    for w, bl in blocks.items():
        m[w] = ex.new_key()
        ex.submit(w, "concat_cols", tuple(("k", cols.keys[i], None) for i, *_ in bl), (m[w],),
                  {"dtype": dt.np.str}, ("linalg.cholesky", None))
    _free(ex, zip(owners, cols.keys))
    stats, keep = [], []

    def panel(i):
        w = owners[i]
        _, c0, g0, wd = next(x for x in blocks[w] if x[0] == i)
        pk, sk = ex.new_key(), ex.new_key()
        ex.submit(w, "chol_panel", (("k", m[w], None),), (pk, sk),
                  {"p": g0, "c0": c0, "c1": c0 + wd}, ("linalg.cholesky", i))
        stats.append((w, sk))
        keep.extend([(w, pk), (w, sk)])
        return _broadcast(ex, w, pk, [v for v in blocks if any(x[0] > i for x in blocks[v])])

    nargs = panel(0)
    for i in range(len(owners)):
        args = nargs
        nxt = owners[i + 1] if i + 1 < len(owners) else None
        for w in sorted(blocks, key=lambda v: v == nxt):  # the exporting worker last
            later = [x[1:] for x in blocks[w] if x[0] > i]
            if not later:
                continue
            if w == nxt:  # look-ahead: next panel's block, the panel, then the rest
                ex.submit(w, "chol_update", (("k", m[w], None), args[w]), (),
                          {"p": cuts[i], "cols": later[:1]}, ("linalg.cholesky", i))
                ex.flush_all()
                nargs = panel(i + 1)
                later = later[1:]
            if later:
                ex.submit(w, "chol_update", (("k", m[w], None), args[w]), (),
                          {"p": cuts[i], "cols": later}, ("linalg.cholesky", i))
        ex.flush_all()
    vals = ex.fetch([(w, k, None) for w, k in stats])
    bad = [int(v[0]) for v in vals if v[0] >= 0]
    if bad:
        _free(ex, keep + list(m.items()))
        err = fail("cholesky", None, (n, n))
        err.args = (err.args[0] + f" (the leading minor of order {min(bad)} is not "
                    f"positive-definite)",)
        raise err
    keys = []
    for i, w in enumerate(owners):
        _, c0, _, wd = next(x for x in blocks[w] if x[0] == i)
        k = ex.new_key()
        ex.submit(w, "t_copy", (("k", m[w], None),), (k,), {"c0": c0, "c1": c0 + wd},
                  ("linalg.cholesky", i))
        keys.append(k)
    _free(ex, keep + list(m.items()))
    return Result(Layout.from_bounds((n, n), [cuts, (0, n)], owners), dt, tuple(keys))
