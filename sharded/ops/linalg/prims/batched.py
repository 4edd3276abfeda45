"""Batched linear algebra over sharded batch dims: one kernel per shard, no data moves.

Layout rule: the output's batch dims are chunked like the first input that is split along a
batch dim it does not broadcast (the *lead*), each block on the lead's worker; its matrix
dims are whole. Other inputs are aligned to those blocks (their batch slice, whole matrices;
local when laid out alike, replicated operands are read in place). An input whose matrix
dims are split is first resharded along its first batch dim; a single split 2-D matrix (no
batch) is gathered on one worker if it is at most :data:`GATHER_LIMIT` bytes, and refused
above (the distributed algorithms of ``tall.py``, ``lu_dist.py`` and ``cholesky.py`` cover
solve, inv, cholesky, qr, lstsq, svd and det of big matrices). All-replicated inputs give a
replicated output computed on every worker.

Failures (singular, not positive-definite) are checked at call time: each block's kernel
leaves a one-element summary (first failing global batch index, or -1) that the planner
reads; on a failure it frees the outputs and raises :class:`LinAlgError` naming the element,
so nothing is left half-made and the inputs are never touched. ``check=False`` (the ``*_ex``
functions) skips the read and returns torch's ``info`` instead.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps
from ....core.dataflow import gather_regions as gather
from ....core.dispatch import as_tensor, is_tensor
from ....core.registry import PRIMITIVES, kernel
from ....errors import ArgumentError, ShapeError, ShardedError, UnsupportedDType
from ....layout import Layout, broadcast_shapes

ExResult = collections.namedtuple("ExResult", ["result", "info"])  # the *_ex functions

GATHER_LIMIT = 1 << 28  # bytes: a split matrix this small may be gathered on one worker


class LinAlgError(ShardedError, np.linalg.LinAlgError, RuntimeError):
    """A matrix is singular or not positive-definite (names the batch element).

    A :class:`ValueError` (as NumPy's ``LinAlgError``, which it also subclasses) and a
    :class:`RuntimeError` (as torch's ``torch.linalg.LinAlgError``).
    """


_FAIL = {
    "solve": "The solver failed because the input matrix is singular.",
    "inv": "The inversion could not be completed because the input matrix is singular.",
    "cholesky": "The factorization could not be completed because the input is not "
    "positive-definite.",
}


def fail(op: str, index, shape=None) -> LinAlgError:
    """The error for a failure of ``op`` at flat batch ``index`` (None: an unbatched matrix)."""
    where = "" if index is None else f"(Batch element {index}): "
    what = f" (input of shape {tuple(shape)})" if shape is not None else ""
    return LinAlgError(f"linalg.{op}: {where}{_FAIL.get(op, 'the computation failed.')}{what}")


def first_info(info, batched):
    """The first nonzero LAPACK ``info`` of a batch, read on the driver: ``(where, value)``
    with ``where`` torch's ``"(Batch element i): "`` prefix of a batch, or None when all
    are zero."""
    vals = np.asarray(info.numpy()).reshape(-1)
    bad = np.flatnonzero(vals)
    if not bad.size:
        return None
    i = int(bad[0])
    return (f"(Batch element {i}): " if batched else ""), int(vals[i])


def check_float(op: str, *ts) -> None:
    """torch accepts only floating point and complex inputs for linalg decompositions."""
    ok = (D.float32, D.float64, D.complex64, D.complex128)
    for t in ts:
        if t._dtype in (D.float16, D.bfloat16):  # torch: NotImplementedError for half precision
            raise UnsupportedDType(
                f"linalg.{op}: Low precision dtypes not supported. Got {t._dtype.name}"
            )
        if t._dtype not in ok:
            raise D.DTypeError(
                f"linalg.{op}: expected a {' or '.join(d.name for d in ok)} tensor, got "
                f"{t._dtype.name}"
            )


def cj(x):
    """``conj(x)`` of a complex tensor, ``x`` itself if real or None. The engine carries the
    conjugate of torch's gradient (see ``autograd.py``): a rule written in torch's convention
    (conjugate transposes) conjugates its incoming and outgoing gradients with this."""
    return x.conj() if x is not None and x.dtype.is_complex else x


def herm(x):
    """The conjugate transpose ``x^H`` of the last two dims (``x^T`` for reals)."""
    return cj(x.mT)


# ------------------------------------------------------------------------------ shapes
def out_specs(op, shapes, dt, params):
    """Core shapes and dtypes of ``op``'s outputs for input core shapes ``shapes``."""
    (m, n) = shapes[0]
    kk = min(m, n)
    if op == "solve":
        return [(shapes[1], dt)]
    if op in ("inv", "cholesky"):
        return [((n, n), dt)]
    if op == "det":
        return [((), dt)]
    if op == "slogdet":  # a complex sign, a real log|det|, as torch
        return [((), dt), ((), D.to_real(dt))]
    if op == "eigvals":
        return [((n,), D.to_complex(dt))]
    if op == "eig":
        return [((n,), D.to_complex(dt)), ((n, n), D.to_complex(dt))]
    rt = D.to_real(dt)  # eigenvalues of Hermitian matrices, singular values: real, as torch
    if op == "eigh":
        return [((n,), rt), ((n, n), dt)]
    if op in ("eigvalsh", "svdvals"):
        return [((n if op == "eigvalsh" else kk,), rt)]
    if op == "svd":
        if params.get("full_matrices", True):
            return [((m, m), dt), ((kk,), rt), ((n, n), dt)]
        return [((m, kk), dt), ((kk,), rt), ((kk, n), dt)]
    if op == "qr":
        mode = params.get("mode", "reduced")
        if mode == "r":
            return [((kk, n), dt)]
        if mode == "complete":
            return [((m, m), dt), ((m, n), dt)]
        return [((m, kk), dt), ((kk, n), dt)]
    if op == "lu_factor":  # packed L and U, then getrf's 1-based int32 pivots
        return [((m, n), dt), ((kk,), D.int32)]
    if op == "lu_solve":  # inputs LU, pivots (k, 1), B
        return [(shapes[2], dt)]
    if op == "lu_perm":  # P (m x m) from pivots (k, 1), in the dtype of LU
        return [((params["m"], params["m"]), D.as_dtype(params["dtype"]))]
    if op == "ldl_factor":  # compact LD, then sytrf's 1-based int32 pivots
        return [((n, n), dt), ((n,), D.int32)]
    if op == "geqrf":  # reflectors below the diagonal, R on and above; tau
        return [((m, n), dt), ((kk,), dt)]
    if op == "ldl_solve":  # inputs LD, pivots (n, 1), B
        return [(shapes[2], dt)]
    if op == "lstsq":
        k = shapes[1][1]
        return [((n, k), dt), ((k,) if m > n else (0,), rt), ((), D.int64), ((kk,), rt)]
    raise ArgumentError(f"unknown batched linalg op {op!r}")


# ------------------------------------------------------------------------------ planning


def reshard(ex, t, layout) -> Operand:
    """Planner-level copy of ``t`` laid out as ``layout`` (the movement family's planner,
    reached by name: the result is an internal operand, not a recorded tensor)."""
    return PRIMITIVES["reshard"].plan(ex, t, layout)


def whole_matrices(ex, t, op):
    """``t`` with its last two dims unsplit: resharded along its first batch dim of size > 1,
    or (no batch) gathered on one worker when at most :data:`GATHER_LIMIT` bytes. Returns
    ``(tensor-like, temporary or None)``."""
    lay = t._layout
    if lay.is_replicated or all(g == 1 for g in lay.grid[-2:]):
        return t, None
    batch = [d for d in range(lay.ndim - 2) if lay.shape[d] > 1]
    if batch:
        target = Layout(dim=batch[0]).bind(lay.shape, ex.num_workers)
    else:
        nbytes = math.prod(lay.shape) * t._dtype.itemsize
        if nbytes > GATHER_LIMIT:
            raise ArgumentError(
                f"linalg.{op}: a split {lay.shape[-2]}x{lay.shape[-1]} matrix ({nbytes:,} "
                f"bytes) is above the {GATHER_LIMIT:,}-byte limit for gathering on one worker "
                f"and {op} has no distributed algorithm; use a batch of smaller matrices"
            )
        sizes = [math.prod(shp) for _, _, shp in lay.shards()]
        w = lay.workers[sizes.index(max(sizes))]
        target = Layout.from_bounds(lay.shape, [(0, s) for s in lay.shape], [w])
    r = reshard(ex, t, target)
    return r, r


def _blocks(ins, bshape):
    """Output batch bounds, workers and the replicated flag (see the module docstring)."""
    nb = len(bshape)
    for t in ins:
        lay = t._layout
        if lay.is_replicated:
            continue
        off = nb - (lay.ndim - 2)
        own = [i + off for i in range(lay.ndim - 2) if lay.shape[i] == bshape[i + off]]
        if not any(lay.grid[i - off] > 1 for i in own):
            continue
        bounds = [lay.bounds[i - off] if i in own else (0, bshape[i]) for i in range(nb)]
        workers = []
        for c in np.ndindex(*[len(b) - 1 for b in bounds]):
            coords = [c[i + off] if i + off in own else 0 for i in range(lay.ndim - 2)]
            workers.append(lay.workers[lay.index(coords + [0, 0])])
        return bounds, workers, False
    first = ins[0]._layout
    bounds = [(0, s) for s in bshape]
    if first.is_replicated:
        return bounds, list(first.workers), True
    return bounds, [first.workers[0]], False


def free_results(ex, results) -> None:
    ex.free_pairs([(w, k) for r in results for w, k in zip(r.layout.workers, r.keys)])


def read_summaries(ex, summaries) -> int:
    """The smallest failing index over the blocks' summaries (-1: none failed)."""
    vals = ex.fetch([(w, k, None) for w, k in summaries])
    bad = [int(v.reshape(-1)[0]) for v in vals if int(v.reshape(-1)[0]) >= 0]
    return min(bad) if bad else -1


def run_batched(ex, op, inputs, params, check=True, want_info=False):
    """Plan batched ``op`` over ``inputs`` (tensor-likes whose last two dims are matrices).

    Returns a list of :class:`Operand` (the op's outputs, then ``info`` if ``want_info``).
    """
    ins, temps = [], []
    for t in inputs:
        t2, tmp = whole_matrices(ex, t, op)
        ins.append(t2)
        if tmp is not None:
            temps.append(tmp)
    bshape = broadcast_shapes(
        *[t._layout.shape[:-2] for t in ins], what=f"linalg.{op}: batch dims cannot be broadcast: "
    )
    nb = len(bshape)
    dt = inputs[0]._dtype
    specs = out_specs(op, [t._layout.shape[-2:] for t in ins], dt, params)
    bounds, workers, repl = _blocks(ins, bshape)
    blay = Layout.from_bounds(bshape, bounds, workers, repl)
    shards = blay.shards()
    wanted = [[] for _ in ins]
    for w, offs, shp in shards:
        for i, t in enumerate(ins):
            lay = t._layout
            off = nb - (lay.ndim - 2)
            reg = [
                (0, 1) if lay.shape[j] == 1 else (offs[j + off], offs[j + off] + shp[j + off])
                for j in range(lay.ndim - 2)
            ]
            wanted[i].append((w, reg + [(0, lay.shape[-2]), (0, lay.shape[-1])]))
    args, ftemps = zip(*[gather(ex, t, wt) for t, wt in zip(ins, wanted)]) if ins else ((), ())
    outs = [[] for _ in specs]
    infos, sums = [], []
    for s, (w, offs, shp) in enumerate(shards):
        keys = [ex.new_key() for _ in specs]
        extra = []
        if want_info:
            extra.append(ex.new_key())
            infos.append(extra[-1])
        if check:
            extra.append(ex.new_key())
            sums.append((w, extra[-1]))
        prm = dict(
            params,
            op=op,
            shapes=[tuple(shp) + tuple(c) for c, _ in specs],
            dtypes=[d.np_str for _, d in specs],
            boffs=tuple(offs),
            bshape=bshape,
            want_info=want_info,
            check=check,
        )
        ex.submit(
            w,
            "linalg",
            tuple(a[s] for a in args),
            tuple(keys) + tuple(extra),
            prm,
            (f"linalg_{op}", s),
        )
        for o, k in zip(outs, keys):
            o.append(k)
    for ft in ftemps:
        free_temps(ex, ft)
    free_results(ex, temps)
    results = []
    for (core, d), keys in zip(specs, outs):
        lay = Layout.from_bounds(
            bshape + tuple(core), list(bounds) + [(0, c) for c in core], workers, repl
        )
        results.append(Operand(lay, d, tuple(keys)))
    if want_info:
        results.append(Operand(blay, D.int32, tuple(infos)))
    if check:
        sums_used = sums[:1] if repl else sums
        bad = read_summaries(ex, sums_used)
        for w, k in sums:
            ex.free(w, [k])
        if bad >= 0:
            free_results(ex, results)
            raise fail(op, bad if nb else None, inputs[0]._layout.shape)
    return results


# ------------------------------------------------------------------------------ arguments
def t_(x):
    """``x`` as a tensor (tensors pass through)."""
    return x if is_tensor(x) else as_tensor(x)


def dims_str(s) -> str:
    return "x".join(map(str, s))


def matrix(op, a):
    """``a`` as a float tensor of at least 2 dims."""
    a = t_(a)
    if a.ndim < 2:
        raise ShapeError(
            f"linalg.{op}: the input tensor A must have at least 2 dimensions "
            f"(got shape {tuple(a.shape)})"
        )
    check_float(op, a)
    return a


def square(op, a):
    """``a`` as a float tensor of square matrices (typed errors name the shape)."""
    a = matrix(op, a)
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"linalg.{op}: A must be batches of square matrices, but they are "
            f"{dims_str(a.shape[-2:])} matrices"
        )
    return a


def plan_batched(ex, op, ts, check=True, want_info=False, **params):
    """What the planner of primitive ``linalg_<op>`` does (each decomposition module defines
    its planner with this, right above its VJP): one ``linalg`` kernel per batch block."""
    res = run_batched(ex, op, ts, params, check=check, want_info=want_info)
    return res[0] if len(res) == 1 else tuple(res)


# ------------------------------------------------------------------------------ kernel
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


def chol_order(a):
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
        e.code = chol_order(a)
        raise


def pivot_order(a):
    """torch's (LAPACK getrf's) info for a singular matrix: the 1-based index of the first
    exactly-zero pivot of LU with partial pivoting."""
    u = np.array(a)
    n = u.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1 :, k:] -= np.outer(u[k + 1 :, k] / u[k, k], u[k, k:])
    return n  # LAPACK's rounding found a zero this elimination missed: the last pivot


def _lu_coded(fn):
    """``fn`` whose LinAlgError on one matrix carries torch's ``info`` (see _each)."""

    def run(a, *rest):
        try:
            return fn(a, *rest)
        except np.linalg.LinAlgError as e:
            if a.ndim == 2:
                e.code = pivot_order(a)
            raise

    return run


def _op_solve(xp, a, b, shapes, dtypes):
    return _guarded(xp, _lu_coded(lambda x, y: xp.linalg.solve(x, y)), [a, b], shapes, dtypes)


def _op_inv(xp, a, shapes, dtypes):
    return _guarded(xp, _lu_coded(xp.linalg.inv), [a], shapes, dtypes)


def _op_cholesky(xp, a, shapes, dtypes, upper=False):
    def chol(x):
        if x.ndim == 2 and xp is np:
            return _cholesky_one(x)
        return xp.linalg.cholesky(x)

    (lo,), info = _guarded(xp, chol, [a], shapes, dtypes)
    lo = xp.tril(lo)
    return ((xp.swapaxes(lo, -1, -2).conj() if upper else lo),), info  # U = L^H


def _op_det(xp, a, shapes, dtypes):
    return (xp.linalg.det(a),), None


def _op_slogdet(xp, a, shapes, dtypes):
    sign, logabs = xp.linalg.slogdet(a)
    return (sign, logabs), None


def _op_eigvals(xp, a, shapes, dtypes):
    # NumPy's eig runs on the host (CuPy has none); complex like torch, even when all are real
    w = np.linalg.eigvals(xp.asnumpy(a) if hasattr(xp, "asnumpy") else a)
    return (xp.asarray(w.astype(dtypes[0])),), None


def _op_eig(xp, a, shapes, dtypes):
    w, v = np.linalg.eig(xp.asnumpy(a) if hasattr(xp, "asnumpy") else a)
    return (xp.asarray(w.astype(dtypes[0])), xp.asarray(v.astype(dtypes[1]))), None


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
    """QR with R's diagonal made real and non-negative: the QR is then unique (for full
    rank), so the result does not depend on the layout (the distributed QR produces this one
    too)."""
    q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    k = min(r.shape[-2:])
    s = unit_phase(xp, xp.diagonal(r[..., :k, :k], axis1=-2, axis2=-1))
    r = (
        r
        * xp.concatenate([s, xp.ones(r.shape[:-2] + (r.shape[-2] - k,), r.dtype)], -1)[..., :, None]
    )
    if mode == "r":
        return (r,), None
    q = (
        q
        * xp.concatenate([s.conj(), xp.ones(q.shape[:-2] + (q.shape[-1] - k,), q.dtype)], -1)[
            ..., None, :
        ]
    )
    return (q, r), None


def unit_phase(xp, d):
    """``conj(d) / |d|`` (1 where ``d`` is 0): scaling R's row ``i`` by it makes the diagonal
    ``|d_i|`` (real, non-negative); ``sign(d)`` for reals."""
    if d.dtype.kind != "c":
        return xp.where(d < 0, -1.0, 1.0).astype(d.dtype)
    a = xp.abs(d)
    return xp.where(a == 0, 1.0, d.conj() / xp.where(a == 0, 1.0, a)).astype(d.dtype)


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
            res[idx] = (xp.abs(a[idx] @ xi - b[idx]) ** 2).sum(0)
    return (x, res, rank, sv), None


BATCHED = {
    "solve": _op_solve,
    "inv": _op_inv,
    "cholesky": _op_cholesky,
    "det": _op_det,
    "slogdet": _op_slogdet,
    "eigvals": _op_eigvals,
    "eig": _op_eig,
    "eigh": _op_eigh,
    "eigvalsh": _op_eigvalsh,
    "svd": _op_svd,
    "svdvals": _op_svdvals,
    "qr": _op_qr,
    "lstsq": _op_lstsq,
}


def first_failure(info, boffs, bshape) -> int:
    """Global flat batch index of the first non-zero ``info`` entry of a block, or -1."""
    bad = np.flatnonzero(np.asarray(info).reshape(-1))
    if not bad.size:
        return -1
    local = np.unravel_index(int(bad[0]), np.shape(info)) if np.ndim(info) else ()
    return int(np.ravel_multi_index([i + o for i, o in zip(local, boffs)], bshape)) if bshape else 0


@kernel
def linalg(
    xp, *arrays, op, shapes, dtypes, boffs=(), bshape=(), want_info=False, check=False, **params
):
    """Batched ``op`` on one block; returns its outputs (cast to ``dtypes``, shaped
    ``shapes``), then ``info`` (if ``want_info``), then the failure summary (if ``check``)."""
    # lstsq's residuals are empty (0,) for every square or wide system: not an empty problem
    core = shapes[:1] + shapes[2:] if op == "lstsq" else shapes
    if any(0 in s for s in core) or any(0 in a.shape[:-2] for a in arrays):
        outs, info = tuple(xp.zeros(s, d) for s, d in zip(shapes, dtypes)), None
    else:
        outs, info = BATCHED[op](xp, *arrays, shapes=shapes, dtypes=dtypes, **params)
    outs = [xp.asarray(o).astype(d, copy=False).reshape(s) for o, s, d in zip(outs, shapes, dtypes)]
    if info is None:
        info = np.zeros(shapes[0][: len(bshape)], np.int32)
    if want_info:
        outs.append(xp.asarray(info, dtype=np.int32).reshape(shapes[0][: len(bshape)]))
    if check:
        outs.append(np.array([first_failure(info, boffs, bshape)], np.int64))
    return outs[0] if len(outs) == 1 else tuple(outs)


linalg_kernel = linalg  # the kernel every batched primitive runs (named for imports)
