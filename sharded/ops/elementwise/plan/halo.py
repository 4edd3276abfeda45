"""Halo reads: an elementwise operand whose row cuts differ from the output's by a few rows.

Shifted slices of a grid split by rows (``u[:-2, 1:-1] + u[2:, 1:-1]``) have chunk bounds a
row or two apart, so most of each output block's operand sits in the operand's shard on the
same worker and only a *halo* of rows lives on the neighbour. :func:`~sharded.core.dataflow.
align` would assemble a full copy of the block on the output's worker (one more pass over
memory, one more block-sized temporary); here the operand reaches the kernel as *bands*
instead: the local shard's rows as a view, the neighbour's rows as a small transfer.

The worker kernel :func:`banded` cuts the output block at every band boundary and runs the
op's own kernel segment by segment, each segment writing straight into its rows of the
output block (a pooled kernel is offered that slice). The values are those of the unsplit
op: the same kernel, the same parameters, NumPy elementwise. In place (``copy_`` into
``u[1:-1, 1:-1]``, ``x[1:] += y``), the segments are written into the target itself when no
other operand shares its memory; otherwise the whole result is computed first, as before.

An operand qualifies when every output block's pieces are whole rows (full extent in every
dim but the first) and the rows from other workers are few: at most :data:`HALO_SHARE` of
the block and one transfer's worth of bytes. Anything else goes through ``align``.
"""

from __future__ import annotations

import math

import numpy as np

from ....core.dataflow import fetch_regions, region
from ....core.registry import KERNELS, kernel, pooled_empty
from ....runtime.commands import Key, Transfer
from ....runtime.worker.fusion import offer
from ....runtime.worker.rowchain import band_rows

HALO_SHARE = 0.25  # largest fraction of a block's rows that may come from other workers


class Bands(tuple):
    """One output block's operand as row bands: ``((arg, first_row), ...)`` in row order."""

    __slots__ = ()


def halo_args(ex, t, out):
    """Per-shard arguments giving operand ``t`` over each block of layout ``out``.

    Returns ``(args, temps)`` as :func:`~sharded.core.dataflow.align` does, except that a
    block whose operand is mostly local and whose other rows are a small halo gets a
    :class:`Bands` (local rows as sliced keys, the halo as transfers) instead of an
    assembled copy.

    Examples
    --------
    >>> import numpy as np, sharded as st
    >>> ex = st.init(executor="local", num_workers=2).executor
    >>> u = st.from_numpy(np.arange(32.0).reshape(16, 2), shards=2)
    >>> args, temps = halo_args(ex, u[1:], u[:-1]._layout)
    >>> [type(a).__name__ for a in args], temps
    (['Bands', 'Key'], [])
    """
    lay, keys = t._layout, t._keys
    if lay is out or lay == out:
        return [Key(k, None) for k in keys], []
    if lay.is_replicated or lay.ndim != out.ndim or lay.ndim == 0:
        off = out.ndim - lay.ndim
        return fetch_regions(ex, t, [(w, region(lay, o, s, off)) for w, o, s in out.shards()])
    shards, item = lay.shards(), t._dtype.itemsize
    args, rest, req, plans = [], [], {}, []
    for s, (w, offs, shp) in enumerate(out.shards()):
        need = region(lay, offs, shp, 0)
        plan = _bands(lay, shards, need, shp, w, item, ex.transfer_bytes)
        if plan is None:
            args.append(None)
            rest.append((s, w, need))
            continue
        if len(plan) == 1 and shards[plan[0][0]][0] == w:  # all of it in one local shard
            j, src, _ = plan[0]
            args.append(Key(keys[j], _local(src, shards[j][2])))
            continue
        args.append(None)
        for j, src, dst in plan:
            src_w = shards[j][0]
            if src_w != w:
                nbytes = math.prod(d.stop - d.start for d in dst) * item
                req.setdefault(src_w, []).append((keys[j], _local(src, shards[j][2]), nbytes, w))
                ex.bytes_moved += nbytes
        plans.append((s, w, plan))
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    for s, w, plan in plans:
        args[s] = Bands(
            (
                Key(keys[j], _local(src, shards[j][2]))
                if shards[j][0] == w
                else Transfer(next(handles[shards[j][0]])),
                dst[0].start,
            )
            for j, src, dst in plan
        )
    temps = []
    if rest:
        got, temps = fetch_regions(ex, t, [(w, need) for _, w, need in rest])
        for (s, _, _), a in zip(rest, got):
            args[s] = a
    return args, temps


def _bands(lay, shards, need, shp, w, item, limit):
    """The pieces of region ``need`` as row bands ``[(shard, src, dst)]`` sorted by row, or
    None when they are not whole rows, or too much of them lives on other workers."""
    ext = [hi - lo for lo, hi in need]
    if ext[0] != shp[0] or ext[0] < 1 or any(n < 1 for n in ext):
        return None  # (a broadcast first dim, or an empty block: align's business)
    pieces = lay.overlaps(need)
    if not pieces:
        return None
    inner = math.prod(ext[1:])
    remote = 0
    for j, _, dst in pieces:
        if any(d.start != 0 or d.stop != n for d, n in zip(dst[1:], ext[1:])):
            return None  # a piece narrower than the block: not a row band
        if shards[j][0] != w:
            remote += dst[0].stop - dst[0].start
    if remote > HALO_SHARE * ext[0] or remote * inner * item > limit:
        return None
    return sorted(pieces, key=lambda p: p[2][0].start)


def _local(sl, shard_shape):
    """``None`` when ``sl`` covers the whole shard (the kernel reads it unsliced)."""
    if all(s.start == 0 and s.stop == n for s, n in zip(sl, shard_shape)):
        return None
    return sl


def flatten(per_op):
    """One shard's command arguments and the ``bands`` parameter of :func:`banded` from its
    per-operand arguments (plain ones, or :class:`Bands`).

    Examples
    --------
    >>> flatten([Key(1), Bands(((Key(2), 0), (Key(3), 4)))])
    ((Key(key=1, slices=None), Key(key=2, slices=None), Key(key=3, slices=None)), (None, (0, 4)))
    """
    args, bands = [], []
    for a in per_op:
        if type(a) is Bands:
            args += [arg for arg, _ in a]
            bands.append(tuple(start for _, start in a))
        else:
            args.append(a)
            bands.append(None)
    return tuple(args), tuple(bands)


def submit(ex, w, kernel, args, key, shp, params, label, inplace) -> None:
    """Queue ``kernel`` on worker ``w`` for the output block ``key`` (of shape ``shp``):
    through :func:`banded` when an operand comes as :class:`Bands`, else as it is."""
    if not any(type(a) is Bands for a in args):
        ex.submit(w, kernel, args, (key,), params, label, inplace)
        return
    args, bands = flatten(args)
    p = {"op": kernel, "params": params or {}, "bands": bands, "rows": shp[0], "ndim": len(shp)}
    p["into"] = inplace
    if inplace:  # (the target first: the kernel writes into it)
        args = (Key(key, None),) + args
    ex.submit(w, "banded", args, (key,), p, label, inplace)


@kernel(pooled=True)
def banded(xp, *arrays, op, params, bands, rows, ndim, into=False, alloc=None):
    """Kernel ``op`` (with ``params``) over an output block of ``rows`` rows (``ndim`` dims)
    whose operands come as row bands (``bands``: per operand None, one argument, or the
    first rows of its consecutive band arguments), one segment between band cuts at a time.
    ``into``: the first argument is the in-place target; each segment's result is written
    into its rows (operands sharing its memory are read from copies).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(3, 2)
    >>> bands = (None, (0, 1))  # a whole, then a as two bands: row 0, rows 1-2
    >>> banded(np, a, a[:1], a[1:], op="add", params={}, bands=bands, rows=3, ndim=2).tolist()
    [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]
    """
    fn = KERNELS[op]
    target, arrays = (arrays[0], arrays[1:]) if into else (None, arrays)
    ops, cuts, i = [], {0, rows}, 0
    for b in bands:
        if b is None:
            ops.append(arrays[i])
            i += 1
        else:
            ops.append(list(zip(b, arrays[i : i + len(b)])))
            cuts.update(b)
            i += len(b)
    cuts = sorted(c for c in cuts if 0 <= c <= rows)
    segs = sorted(zip(cuts, cuts[1:]), key=lambda s: s[1] - s[0])  # the smallest first
    out = None
    if into and xp is np:  # (elsewhere the result is computed whole, then stored)
        # every segment is read before it is written, but a later segment may read rows an
        # earlier one wrote (``x[1:] += x[:-1]``): such operands are copied first
        ops = [_private(o, target) for o in ops]
        out = target
    for r0, r1 in segs:
        dst = None if out is None else out[r0:r1]
        # (the target read as an operand is the very block written: a kernel that writes its
        # operand in place, as fill_ does, then returns ``dst`` itself)
        a = [dst if o is out and dst is not None else band_rows(o, r0, r1, rows, ndim) for o in ops]
        if dst is not None and getattr(fn, "pooled", False):
            r = fn(xp, *a, alloc=offer(dst), **params)
        else:
            r = fn(xp, *a, **params)
        if out is None:  # the first segment tells the block's dtype and trailing shape
            r = xp.asarray(r)
            shape = (rows,) + r.shape[1:]
            out = pooled_empty(xp, alloc, shape, r.dtype)
            dst = out[r0:r1]
        if r is not dst:
            dst[...] = r
    return out


def _private(o, target):
    """Operand ``o`` with its arrays that may share ``target``'s memory copied (``target``
    itself stays: each segment reads its own rows of it, then writes them)."""

    def own(a):
        shared = a is not target and isinstance(a, np.ndarray)
        return a.copy() if shared and np.may_share_memory(a, target) else a

    return [(s, own(a)) for s, a in o] if type(o) is list else own(o)
