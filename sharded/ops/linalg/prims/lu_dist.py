"""Block LU of one big square matrix split over the workers (``lu_solve``, ``lu_slogdet``):
``solve``, ``inv`` and ``det`` of a big matrix with nothing gathered on one worker.

Gaussian elimination with partial pivoting on ``A^T`` (pivoting over A's columns, as stable as
GEPP on A), so each worker keeps its own rows of A (and of the right-hand sides) as the columns
of one local matrix ``M = [A_w^T; B_w^T]`` and nothing moves to start. The equations are
eliminated in an order that takes blocks of ``nb`` rows from the workers in turn (a row
permutation of A X = B does not change X), which balances the work. Step k: the owner of block
k factors its panel (recursive LU) and broadcasts it; every worker applies its row swaps,
``U12 = L11^-1 A12`` and ``A22 -= L21 U12`` to its later columns; the next owner updates its
next panel first and factors it at once (look-ahead). The right-hand sides ride along as extra
rows, so the forward solve comes free; the back solve is a sweep of small broadcasts. X leaves
in A's row layout after one permuting transfer planned from the pivots (the one read the
driver makes, with the singularity status).

This module is the driver side (the ``_LU`` planner, the primitives and their gradients);
the worker kernels that factor, update and solve in place are in :mod:`..kernels`.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps
from ....core.dataflow import gather_regions as gather
from ....core.dispatch import apply, needs, session_of, unbroadcast
from ....core.registry import primitive, vjp
from ....layout import Layout
from ....runtime.commands import Key, Transfer
from ..kernels import lu_back_diag, lu_back_update, lu_init, lu_panel, lu_update, rows_from_t
from . import batched as B
from .tall import broadcast_block, by_rows, row_layout

DIST_MIN_BYTES = 1 << 20  # smaller split matrices are gathered on one worker instead
MAX_BLOCK = 256  # elimination block (panel width) of LU and Cholesky


def is_big(t) -> bool:
    """A 2-D matrix split over several shards and above :data:`DIST_MIN_BYTES`."""
    lay = t._layout
    return (
        lay.ndim == 2
        and not lay.is_replicated
        and lay.num_shards > 1
        and math.prod(lay.shape) * t._dtype.itemsize > DIST_MIN_BYTES
    )


def rows_like(t):
    """The bound row layout :func:`inv_big` gives its identity right-hand side."""
    return row_layout(t._layout, session_of([t]).executor.num_workers)


def solve_any(a, b):
    """``A^-1 B`` by the distributed LU for a big ``a``, else batched (tensors)."""
    return apply("lu_solve", a, b) if is_big(a) else apply("linalg_solve", a, b)


def inv_big(a):
    """The inverse of a big split matrix: ``A^-1 I`` by the distributed LU."""
    eye = apply("eye", rows_like(a), a.dtype)
    return apply("lu_solve", a, eye, op="inv")


def inv_any(a):
    """The inverse of ``a`` by the distributed LU (big) or the batched kernel."""
    return inv_big(a) if is_big(a) else apply("linalg_inv", a)


def _scalar(ex, w, value, dt):
    k = ex.new_key()
    ex.submit(w, "full", (), (k,), {"shape": (), "value": value, "dtype": dt.np_str})
    return Operand(Layout.from_bounds((), [], [w]), dt, (k,))


# ------------------------------------------------------------------- block LU: the planner
class _LU:
    """Block LU of ``A^T`` over the workers holding A's rows (see the module docstring)."""

    def __init__(self, ex, a, b, op):
        self.ex, self.op, self.shape = ex, op, a._layout.shape
        self.label = "lu_slogdet" if op == "slogdet" else "lu_solve"  # the primitive's name
        self.a, self.tmp = by_rows(ex, a)
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
        local = {
            w: [(c, min(c + nb, len(self.rows[w]))) for c in range(0, len(self.rows[w]), nb)]
            for w in self.wlist
        }
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
            wanted = [
                (shards[s][0], [(shards[s][1][0], shards[s][1][0] + shards[s][2][0]), (0, r)])
                for w in self.wlist
                for s in mine[w]
            ]
            bargs, temps = gather(ex, b, wanted)
        self.m, self.scratch = {}, {}
        it = iter(bargs)
        for w in self.wlist:
            args = [Key(lay_key, None) for lay_key in (self.a._keys[s] for s in mine[w])]
            bl = [next(it) for _ in mine[w]] if r else []
            k = ex.new_key()
            ks = ex.new_key()
            ex.submit(
                w,
                "lu_init",
                tuple(args + bl),
                (k, ks),
                {"n": n, "r": r, "na": len(mine[w]), "nb": nb, "dtype": self.dt.np_str},
                (self.label, None),
            )
            self.m[w], self.scratch[w] = k, ks
        free_temps(ex, temps)
        self.keep = []  # (worker, key) to free at the end

    def _m(self, w):
        return Key(self.m[w], None)

    def _panel(self, k):
        ex, (w, c0, c1) = self.ex, self.order[k]
        pk, ik, sk = ex.new_key(), ex.new_key(), ex.new_key()
        ex.submit(
            w,
            "lu_panel",
            (self._m(w), Key(self.scratch[w], None)),
            (pk, ik, sk),
            {"p": self.pos[k], "c0": c0, "c1": c1, "n": self.n, "slot": k % 2},
            (self.label, k),
        )
        self.keep += [(w, ik), (w, sk)]  # (the panel itself is freed after its step)
        self.stats.append((w, sk))
        self.pivs.append((w, ik))
        others = [v for v in self.wlist if v != w]
        args = {w: (Key(pk, None), Key(ik, None))}
        if others:
            hp, hi = ex.export({w: [(pk, None), (ik, None)]})[w]
            ex.bytes_moved += (
                (self.n + self.r - self.pos[k]) * (c1 - c0) * self.dt.itemsize * len(others)
            )
            args.update({v: (Transfer(hp), Transfer(hi)) for v in others})
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
                    ex.submit(
                        w,
                        "lu_update",
                        (self._m(w), pa, ia),
                        (),
                        dict(prm, c0=t, c1=c1n, **sw),
                        (self.label, k),
                    )
                    ex.flush_all()
                    nxt_args = self._panel(k + 1)
                    t, sw = c1n, dict(s0=0, s1=0)
                ex.submit(
                    w,
                    "lu_update",
                    (self._m(w), pa, ia),
                    (),
                    dict(prm, c0=t, c1=self.width[w], **sw),
                    (self.label, k),
                )
            ex.free(own, [args[own][0][1]])  # step k's panel (a view of its scratch slot)

    def back(self):
        ex = self.ex
        for j in reversed(range(len(self.order))):
            w, c0, c1 = self.order[j]
            p = self.pos[j]
            vk = ex.new_key()
            ex.submit(
                w,
                "lu_back_diag",
                (self._m(w),),
                (vk,),
                {"p": p, "c0": c0, "c1": c1, "n": self.n},
                (self.label, j),
            )
            ends = {
                v: max([c1_ for v_, _, c1_ in self.order[:j] if v_ == v], default=0)
                for v in self.wlist
            }
            need = [v for v in self.wlist if ends[v] > 0]
            vargs = broadcast_block(ex, w, vk, need + [w])
            for v in need:
                ex.submit(
                    v,
                    "lu_back_update",
                    (self._m(v), vargs[v]),
                    (),
                    {"p": p, "e": ends[v], "n": self.n},
                    (self.label, j),
                )
            ex.free(w, [vk])

    def status(self):
        """Read every panel's status and pivots (the driver's one wait)."""
        vals = self.ex.fetch([(w, k, None) for w, k in self.stats + self.pivs])
        k = len(self.stats)
        return [np.asarray(v) for v in vals[:k]], [np.asarray(v) for v in vals[k:]]

    def free(self):
        self.ex.free_pairs(self.keep + list(self.m.items()) + list(self.scratch.items()))
        if self.tmp is not None:
            self.ex.free_pairs(list(zip(self.tmp._layout.workers, self.tmp._keys)))

    def solution(self, pivs):
        """X in A's row layout: X[perm[q]] = V[q], V's rows sitting in M's last rows."""
        ex, n, r = self.ex, self.n, self.r
        perm = np.arange(n)
        for (_, c0, c1), pv, p in zip(self.order, pivs, self.pos):
            for i, q in enumerate(pv.astype(np.int64)):
                perm[p + i], perm[q] = perm[q], perm[p + i]
        src = np.empty((n, 2), np.int64)  # position -> (worker, local column)
        for (w, c0, c1), p in zip(self.order, self.pos):
            src[p : p + c1 - c0, 0] = w
            src[p : p + c1 - c0, 1] = np.arange(c0, c1)
        lay = self.a._layout
        out = Layout.from_bounds((n, r), [lay.bounds[0], (0, r)], lay.workers)
        dest = np.empty(n, np.int64)
        dest[perm] = np.arange(n)  # position holding each unknown
        plans, req = [], collections.defaultdict(list)
        for s, (w, offs, shp) in enumerate(out.shards()):
            q = dest[offs[0] : offs[0] + shp[0]]
            pieces = []
            for v in np.unique(src[q, 0]):
                sel = np.flatnonzero(src[q, 0] == v)
                sl = (slice(n, n + r), src[q[sel], 1])
                if v == w:
                    pieces.append((Key(self.m[v], sl), sel))
                else:
                    req[int(v)].append((self.m[v], sl, len(sel) * r * self.dt.itemsize))
                    ex.bytes_moved += len(sel) * r * self.dt.itemsize
                    pieces.append((int(v), sel))
            plans.append((s, w, shp, pieces))
        hs = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
        keys = []
        for s, w, shp, pieces in plans:
            args = [a if isinstance(a, tuple) else Transfer(next(hs[a])) for a, _ in pieces]
            k = ex.new_key()
            ex.submit(
                w,
                "rows_from_t",
                tuple(args),
                (k,),
                {"shape": tuple(shp), "dtype": self.dt.np_str, "rows": [sel for _, sel in pieces]},
                (self.label, s),
            )
            keys.append(k)
        return Operand(out, self.dt, tuple(keys))

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


@primitive(
    "lu_solve",
    kind="linalg",
    kernels=[lu_init, lu_panel, lu_update, lu_back_diag, lu_back_update, rows_from_t],
)
def plan_lu_solve(ex, a, b, op="solve") -> Operand:
    """``A^-1 B`` of a big split square matrix by block LU (see the module docstring)."""
    f = _LU(ex, a, b, op)
    f.factor()
    f.back()
    stats, pivs = f.status()
    bad = [int(s[0]) for s in stats if s[0] >= 0]
    if bad:
        f.free()
        raise B.fail(op, None, f.shape)
    out = f.solution(pivs)
    f.free()
    return out


def solve_vjp(gs, node):
    """A X = B: ``gB = A^-T gX``, ``gA = -gB X^T`` (batch dims summed back); shared with
    the batched ``linalg_solve``."""
    a, b = node.args[:2]
    x = node.saved["out"][0]
    gb = solve_any(a.mT, gs[0])
    ga = -(gb @ x.mT) if needs(a) else None
    return (unbroadcast(ga, a) if ga is not None else None, unbroadcast(gb, b))


@vjp("lu_solve", save_out=True, saves=(0,))
def lu_solve_vjp(gs, node):
    return solve_vjp(gs, node)


@primitive("lu_slogdet", kind="linalg", kernels=[lu_init, lu_panel, lu_update])
def plan_lu_slogdet(ex, a):
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
        if a._dtype.is_complex:  # det / |det| = e^(i sum arg(U_ii)) times the swaps' sign
            sign = sign * complex(np.exp(1j * sum(s[4] for s in stats)))
        logabs = float(sum(s[1] for s in stats))
    w = f.wlist[0] if f.wlist else 0
    real = D.to_real(a._dtype)  # log|det| is real, as torch
    return _scalar(ex, w, sign, a._dtype), _scalar(ex, w, logabs, real)


def logdet_vjp(gs, node):
    """``d log|det A| = re tr(A^-1 dA)`` (shared with the batched ``linalg_slogdet``). A real
    sign is piecewise constant; a complex one moves, ``d sign = i sign im tr(A^-1 dA)``, which
    in the engine's convention adds ``i im(g_sign sign)`` to the factor of ``A^-T``."""
    (a,) = node.args
    g, gsign = gs[1], gs[0] if a.dtype.is_complex else None
    if g is None and gsign is None:
        return (None,)
    if gsign is not None:
        rot = 1j * (gsign * node.saved["out"][0]).imag
        g = rot if g is None else g + rot
    return (g.unsqueeze(-1).unsqueeze(-1) * inv_any(a).mT,)


@vjp("lu_slogdet", saves=(0,), save_out=True)
def lu_slogdet_vjp(gs, node):
    return logdet_vjp(gs, node)
