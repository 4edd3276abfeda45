"""Blocked Cholesky of one big split SPD (complex: Hermitian PD) matrix (``cholesky_dist``),
nothing gathered.

A's columns are resharded into blocks of ``nb`` dealt to the workers in turn (balance), and a
right-looking column Cholesky runs on them (only the lower triangle is read, as torch). The
result is ``U = L^H`` row-blocked the same way. The gradient rule here serves the batched
``linalg_cholesky`` too.
"""

from __future__ import annotations

import collections

import numpy as np

from ....core.dataflow import Operand
from ....core.registry import kernel, primitive, vjp
from ....layout import Layout
from ....runtime.commands import Key
from ..kernels import sub_product
from . import batched as B
from .lu_dist import MAX_BLOCK, solve_any
from .tall import broadcast_block, tril


# ------------------------------------------------------------------------------ Cholesky
@kernel
def concat_cols(xp, *blocks, dtype):
    """The worker's column blocks side by side (C order): its part of the Cholesky matrix."""
    return xp.ascontiguousarray(xp.concatenate(blocks, axis=1).astype(dtype, copy=False))


@kernel
def chol_panel(xp, m, p, c0, c1):
    """Step ``p``: ``L_pp = chol(A_pp)``, ``L_ip = A_ip L_pp^-H`` below, zeros above, in place;
    returns the panel (rows ``p:``) and ``[order of the failing leading minor or -1]``."""
    b = c1 - c0
    d = m[p : p + b, c0:c1]
    try:
        lo = xp.linalg.cholesky(d)
        bad = -1
    except np.linalg.LinAlgError:
        bad = p + B.chol_order(np.asarray(d))
        lo = xp.eye(b, dtype=m.dtype)
    m[:p, c0:c1] = 0
    m[p : p + b, c0:c1] = lo
    if m.shape[0] > p + b:
        h = (lambda x: x.T.conj()) if m.dtype.kind == "c" else (lambda x: x.T)
        m[p + b :, c0:c1] = h(xp.linalg.solve(lo, h(m[p + b :, c0:c1])))
    return xp.array(m[p:, c0:c1]), np.array([bad], np.int64)


@kernel
def chol_update(xp, m, panel, p, cols):
    """``A_jj' -= L_jp L_j'p^H`` for this worker's later column blocks ``cols`` (pairs of
    (local start, global start, width)); rows above a block's diagonal are skipped."""
    iscx = panel.dtype.kind == "c"
    for c0, g0, w in cols:
        lj = panel[g0 - p : g0 - p + w]
        sub_product(xp, m[g0:, c0 : c0 + w], panel[g0 - p :], lj.T.conj() if iscx else lj.T)
    return ()


@kernel
def t_copy(xp, m, c0, c1):
    """Rows of U = L^H: the conjugate transpose of M's columns ``c0:c1``, C-ordered."""
    u = m[:, c0:c1].T
    return u.conj() if u.dtype.kind == "c" else xp.ascontiguousarray(u)


# ------------------------------------------------------------------------------ Cholesky
@primitive("cholesky_dist", kind="linalg", kernels=[concat_cols, chol_panel, chol_update, t_copy])
def plan_cholesky_dist(ex, a) -> Operand:
    """``U`` (``A = U^T U``) of a big split SPD matrix, rows blocked cyclically."""
    n = a._layout.shape[0]
    P = ex.num_workers
    nb = max(16, min(MAX_BLOCK, -(-n // (4 * P))))
    cuts = tuple(range(0, n, nb)) + (n,)
    owners = [i % P for i in range(len(cuts) - 1)]
    cols = B.reshard(ex, a, Layout.from_bounds((n, n), [(0, n), cuts], owners))
    blocks = collections.defaultdict(list)  # worker -> [(block, local c0, global g0, width)]
    for i, w in enumerate(owners):
        c0 = sum(x[3] for x in blocks[w])
        blocks[w].append((i, c0, cuts[i], cuts[i + 1] - cuts[i]))
    m, dt = {}, a._dtype
    for w, bl in blocks.items():
        m[w] = ex.new_key()
        ex.submit(
            w,
            "concat_cols",
            tuple(Key(cols.keys[i], None) for i, *_ in bl),
            (m[w],),
            {"dtype": dt.np_str},
            ("cholesky_dist", None),
        )
    ex.free_pairs(list(zip(owners, cols.keys)))
    stats, keep = [], []

    def panel(i):
        w = owners[i]
        _, c0, g0, wd = next(x for x in blocks[w] if x[0] == i)
        pk, sk = ex.new_key(), ex.new_key()
        ex.submit(
            w,
            "chol_panel",
            (Key(m[w], None),),
            (pk, sk),
            {"p": g0, "c0": c0, "c1": c0 + wd},
            ("cholesky_dist", i),
        )
        stats.append((w, sk))
        keep.extend([(w, pk), (w, sk)])
        return broadcast_block(ex, w, pk, [v for v in blocks if any(x[0] > i for x in blocks[v])])

    nargs = panel(0)
    for i in range(len(owners)):
        args = nargs
        nxt = owners[i + 1] if i + 1 < len(owners) else None
        for w in sorted(blocks, key=lambda v: v == nxt):  # the exporting worker last
            later = [x[1:] for x in blocks[w] if x[0] > i]
            if not later:
                continue
            if w == nxt:  # look-ahead: next panel's block, the panel, then the rest
                ex.submit(
                    w,
                    "chol_update",
                    (Key(m[w], None), args[w]),
                    (),
                    {"p": cuts[i], "cols": later[:1]},
                    ("cholesky_dist", i),
                )
                ex.flush_all()
                nargs = panel(i + 1)
                later = later[1:]
            if later:
                ex.submit(
                    w,
                    "chol_update",
                    (Key(m[w], None), args[w]),
                    (),
                    {"p": cuts[i], "cols": later},
                    ("cholesky_dist", i),
                )
    vals = ex.fetch([(w, k, None) for w, k in stats])
    bad = [int(v[0]) for v in vals if v[0] >= 0]
    if bad:
        ex.free_pairs(keep + list(m.items()))
        err = B.fail("cholesky", None, (n, n))
        err.args = (
            err.args[0] + f" (the leading minor of order {min(bad)} is not positive-definite)",
        )
        raise err
    keys = []
    for i, w in enumerate(owners):
        _, c0, _, wd = next(x for x in blocks[w] if x[0] == i)
        k = ex.new_key()
        ex.submit(
            w, "t_copy", (Key(m[w], None),), (k,), {"c0": c0, "c1": c0 + wd}, ("cholesky_dist", i)
        )
        keys.append(k)
    ex.free_pairs(keep + list(m.items()))
    return Operand(Layout.from_bounds((n, n), [cuts, (0, n)], owners), dt, tuple(keys))


def chol_grad(lo, gl):
    """torch's rule for ``A = L L^H`` (only the lower triangle of A is read, the gradient is
    the Hermitian ``L^-H Y L^-1``, ``Y`` = the lower triangle of ``L^H gL`` mirrored, halved),
    in torch's gradient convention: the engine's ``gL`` and result are conjugated (``cj``)."""
    x = tril(B.herm(lo) @ B.cj(gl))
    y = 0.5 * (x + B.herm(tril(x, -1)))
    z = solve_any(B.herm(lo), y)  # L^-H Y
    return B.cj(B.herm(solve_any(B.herm(lo), B.herm(z))))  # (L^-H Y) L^-1


@vjp("cholesky_dist", save_out=True)
def cholesky_dist_vjp(gs, node):
    u = node.saved["out"][0]
    return (chol_grad(B.herm(u), B.herm(gs[0])),)
