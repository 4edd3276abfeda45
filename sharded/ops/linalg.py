"""Batched linear algebra over sharded batch dims: one kernel per shard, no data moves.

Layout rule: the output's batch dims are chunked like the first input that is split along a
batch dim it does not broadcast (the *lead*), each block on the lead's worker; its matrix
dims are whole. Other inputs are aligned to those blocks (their batch slice, whole matrices;
local when laid out alike, replicated operands are read in place). An input whose matrix
dims are split is first resharded along its first batch dim; a single split 2-D matrix (no
batch) is gathered on one worker if it is at most :data:`GATHER_LIMIT` bytes, and refused
above (the distributed algorithms in ``ops/linalg_dist.py`` cover solve, inv, cholesky, qr,
lstsq, svd and det of big matrices). All-replicated inputs give a replicated output computed
on every worker.

Failures (singular, not positive-definite) are checked at call time: each block's kernel
leaves a one-element summary (first failing global batch index, or -1) that the planner
reads; on a failure it frees the outputs and raises :class:`LinAlgError` naming the element,
so nothing is left half-made and the inputs are never touched. ``check=False`` (the ``*_ex``
functions) skips the read and returns torch's ``info`` instead.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..errors import ArgumentError, ShapeError, ShardedError
from ..layout import Layout
from .elementwise import broadcast_shapes
from .matmul import Arr, gather
from ..core.dataflow import reshard
from ..core.dataflow import Operand as Result
from ..core.registry import primitive

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


def check_float(op: str, *ts) -> None:
    """torch accepts only floating point inputs for linalg decompositions."""
    for t in ts:
        if t._dtype not in (D.float32, D.float64):
            raise D.DTypeError(f"linalg.{op}: expected a float32 or float64 tensor, got "
                               f"{t._dtype.name}")


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
    if op == "slogdet":
        return [((), dt), ((), dt)]
    if op == "eigvals":
        return [((n,), dt), ((n,), dt)]
    if op == "eigh":
        return [((n,), dt), ((n, n), dt)]
    if op in ("eigvalsh", "svdvals"):
        return [((n if op == "eigvalsh" else kk,), dt)]
    if op == "svd":
        if params.get("full_matrices", True):
            return [((m, m), dt), ((kk,), dt), ((n, n), dt)]
        return [((m, kk), dt), ((kk,), dt), ((kk, n), dt)]
    if op == "qr":
        mode = params.get("mode", "reduced")
        if mode == "r":
            return [((kk, n), dt)]
        if mode == "complete":
            return [((m, m), dt), ((m, n), dt)]
        return [((m, kk), dt), ((kk, n), dt)]
    if op == "lstsq":
        k = shapes[1][1]
        return [((n, k), dt), ((k,) if m > n else (0,), dt), ((), D.int64), ((kk,), dt)]
    raise ArgumentError(f"unknown batched linalg op {op!r}")


# ------------------------------------------------------------------------------ planning
def _broadcast(shapes, op):
    try:
        return broadcast_shapes(*shapes)
    except ShapeError as e:
        raise ShapeError(f"linalg.{op}: batch dims cannot be broadcast: {e}") from None


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
                f"and {op} has no distributed algorithm; use a batch of smaller matrices")
        sizes = [math.prod(shp) for _, _, shp in lay.shards()]
        w = lay.workers[sizes.index(max(sizes))]
        target = Layout.from_bounds(lay.shape, [(0, s) for s in lay.shape], [w])
    r = reshard(ex, t, target)
    a = Arr(r.layout, r.dtype, r.keys)
    return a, a


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
    for r in results:
        for w, k in zip(r.layout.workers, r.keys):
            ex.free(w, [k])


def read_summaries(ex, summaries) -> int:
    """The smallest failing index over the blocks' summaries (-1: none failed)."""
    vals = ex.fetch([(w, k, None) for w, k in summaries])
    bad = [int(v.reshape(-1)[0]) for v in vals if int(v.reshape(-1)[0]) >= 0]
    return min(bad) if bad else -1


def run_batched(ex, op, inputs, params, check=True, want_info=False):
    """Plan batched ``op`` over ``inputs`` (tensor-likes whose last two dims are matrices).

    Returns a list of :class:`Result` (the op's outputs, then ``info`` if ``want_info``).
    """
    ins, temps = [], []
    for t in inputs:
        t2, tmp = whole_matrices(ex, t, op)
        ins.append(t2)
        if tmp is not None:
            temps.append(tmp)
    bshape = _broadcast([t._layout.shape[:-2] for t in ins], op)
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
            reg = [(0, 1) if lay.shape[j] == 1 else (offs[j + off], offs[j + off] + shp[j + off])
                   for j in range(lay.ndim - 2)]
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
        prm = dict(params, op=op, shapes=[tuple(shp) + tuple(c) for c, _ in specs],
                   dtypes=[d.np.str for _, d in specs], boffs=tuple(offs), bshape=bshape,
                   want_info=want_info, check=check)
        ex.submit(w, "linalg", tuple(a[s] for a in args), tuple(keys) + tuple(extra), prm,
                  (f"linalg.{op}", s))
        for o, k in zip(outs, keys):
            o.append(k)
    for ft in ftemps:
        from ..core.dataflow import free_temps
        free_temps(ex, ft)
    for t in temps:
        free_results(ex, [Result(t._layout, t._dtype, t._keys)])
    results = []
    for (core, d), keys in zip(specs, outs):
        lay = Layout.from_bounds(bshape + tuple(core), list(bounds) + [(0, c) for c in core],
                                 workers, repl)
        results.append(Result(lay, d, tuple(keys)))
    if want_info:
        results.append(Result(blay, D.int32, tuple(infos)))
    if check:
        sums_used = sums[:1] if repl else sums
        bad = read_summaries(ex, sums_used)
        for w, k in sums:
            ex.free(w, [k])
        if bad >= 0:
            free_results(ex, results)
            raise fail(op, bad if nb else None, inputs[0]._layout.shape)
    return results


def _register(op):
    def impl(ex, *ts, check=True, want_info=False, **params):
        res = run_batched(ex, op, ts, params, check=check, want_info=want_info)
        return res[0] if len(res) == 1 else tuple(res)
    impl.__name__ = f"linalg_{op}"
    impl.__doc__ = f"Batched ``{op}``: one ``linalg`` kernel per batch block."
    primitive(f"linalg_{op}", kind="linalg")(impl)


for _op in ("solve", "inv", "cholesky", "det", "slogdet", "eigvals", "eigh", "eigvalsh", "svd",
            "svdvals", "qr", "lstsq"):
    _register(_op)
