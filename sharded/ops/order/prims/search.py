"""Search in a sorted sequence: ``searchsorted`` and ``bucketize``.

A 1-D sorted sequence may be split anywhere: the position of a value in the whole sequence is
the sum over its pieces of the value's position in each piece (every piece is sorted, so the
count of elements ``< v`` -- or ``<= v`` for ``right`` -- adds up). Each value shard therefore
meets each piece of the sequence once, on whichever side moves fewer bytes: the piece travels
to the values' worker (cut into transfer-sized parts), or the values travel to the piece's
worker and only their int64 counts come back. Nothing passes through the driver.

An N-D (batched) sorted sequence is searched row by row: every value shard receives the
sequence rows of its own batch block (the last dim whole), worker to worker.
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps, gather_regions
from ....core.dispatch import apply, as_tensor, is_tensor, via_float32
from ....core.registry import bind, kernel, nondiff, primitive
from ....errors import ArgumentError, DTypeError, ShapeError
from ....runtime.commands import Key, Transfer

__all__ = ["bucketize", "searchsorted"]


# ------------------------------------------------------------------------------ kernels
@kernel
def search_count(xp, seq, values, side):
    """Position of every value in one sorted piece (int64, shaped like ``values``)."""
    return xp.searchsorted(seq, values, side=side).astype(np.int64, copy=False)


@kernel
def search_total(xp, values, *parts, nseq, side, dtype):
    """Sum the positions of ``values`` in the ``nseq`` pieces given first and the counts
    computed elsewhere given after them."""
    acc = xp.zeros(values.shape, dtype=np.int64)
    for p in parts[:nseq]:
        acc += xp.searchsorted(p, values, side=side)
    for c in parts[nseq:]:
        acc += c
    return acc.astype(dtype, copy=False)


@kernel
def search_rows(xp, seq, values, side, dtype):
    """Row-wise search: row ``i`` of ``values`` (last dim) in row ``i`` of ``seq``."""
    out = xp.empty(values.shape, dtype=dtype)
    rows = int(np.prod(values.shape[:-1]))  # explicit: -1 is ambiguous for empty arrays
    s2 = seq.reshape(rows, seq.shape[-1])
    v2, o2 = values.reshape(rows, values.shape[-1]), out.reshape(rows, values.shape[-1])
    for i in range(v2.shape[0]):
        o2[i] = xp.searchsorted(s2[i], v2[i], side=side)
    return out


# ------------------------------------------------------------------------------ planner
def _pieces(lay, limit_rows):
    """Non-empty pieces of a 1-D sequence layout: ``(shard, lo, hi)`` local row ranges of at
    most ``limit_rows`` rows (one copy of a replicated sequence)."""
    shards = lay.shards()[:1] if lay.is_replicated else lay.shards()
    for s, (_, _, shp) in enumerate(shards):
        for lo in range(0, shp[0], limit_rows):
            yield s, lo, min(shp[0], lo + limit_rows)


def _spec(seq, values, right=False, out_int32=False):
    return tuple(values.shape), D.int32 if out_int32 else D.int64


@primitive(
    "searchsorted", kernels=[search_count, search_total, search_rows], out_spec=_spec, kind="index"
)
def _searchsorted_plan(ex, seq, values, right=False, out_int32=False):
    """Positions of ``values`` in ``seq`` (sorted along its last dim); laid out as values."""
    side = "right" if right else "left"
    dt = D.int32 if out_int32 else D.int64
    vlay, slay = values._layout, seq._layout
    if slay.ndim > 1:
        return _rows_plan(ex, seq, values, side, dt)
    sitem, vitem = seq._dtype.itemsize, values._dtype.itemsize
    sshards = slay.shards()
    pieces = list(_pieces(slay, max(1, ex.transfer_bytes // sitem)))
    keys, local, counts, temps = [], [], [], []
    req_seq, req_val, later = collections.defaultdict(list), collections.defaultdict(list), []
    for v, (wv, _, vshp) in enumerate(vlay.shards()):
        nv = int(np.prod(vshp))
        local.append([])
        counts.append([])
        for s, lo, hi in pieces:
            ws = wv if slay.is_replicated and wv in slay.workers else sshards[s][0]
            sl = (slice(lo, hi),)
            key = seq._keys[slay.workers.index(ws) if slay.is_replicated else s]
            if ws == wv:
                local[v].append(Key(key, sl))
            elif nv == 0:
                continue
            elif (hi - lo) * sitem <= nv * (vitem + 8):  # the piece is cheaper to move
                req_seq[ws].append((key, sl, (hi - lo) * sitem))
                local[v].append(ws)
                ex.bytes_moved += (hi - lo) * sitem
            else:  # the values go to the piece, their counts come back
                req_val[wv].append((values._keys[v], None, nv * vitem))
                later.append((v, ws, key, sl))
                ex.bytes_moved += nv * (vitem + 8)
    hv = {w: iter(h) for w, h in ex.export(req_val).items()} if req_val else {}
    back = collections.defaultdict(list)
    for v, ws, key, sl in later:
        c = ex.new_key()
        wv = vlay.shards()[v][0]
        ex.submit(
            ws,
            "search_count",
            (Key(key, sl), Transfer(next(hv[wv]))),
            (c,),
            {"side": side},
            ("searchsorted", v),
        )
        back[ws].append((c, None))
        counts[v].append(ws)
        temps.append((ws, c))
    hs = {w: iter(h) for w, h in ex.export(req_seq).items()} if req_seq else {}
    hb = {w: iter(h) for w, h in ex.export(back).items()} if back else {}
    for v, (wv, _, _) in enumerate(vlay.shards()):
        sargs = [a if isinstance(a, tuple) else Transfer(next(hs[a])) for a in local[v]]
        cargs = [Transfer(next(hb[w])) for w in counts[v]]
        k = ex.new_key()
        ex.submit(
            wv,
            "search_total",
            (Key(values._keys[v], None), *sargs, *cargs),
            (k,),
            {"nseq": len(sargs), "side": side, "dtype": dt.np_str},
            ("searchsorted", v),
        )
        keys.append(k)
    free_temps(ex, temps)
    return Operand(vlay, dt, keys)


def _rows_plan(ex, seq, values, side, dt):
    """Batched search: each value shard gets the sequence rows of its batch block."""
    vlay = values._layout
    m = seq._layout.shape[-1]
    wanted = [
        (w, [(o, o + n) for o, n in zip(offs[:-1], shp[:-1])] + [(0, m)])
        for w, offs, shp in vlay.shards()
    ]
    args, temps = gather_regions(ex, seq, wanted)
    keys = []
    for v, (w, _, _) in enumerate(vlay.shards()):
        k = ex.new_key()
        ex.submit(
            w,
            "search_rows",
            (args[v], Key(values._keys[v], None)),
            (k,),
            {"side": side, "dtype": dt.np_str},
            ("searchsorted", v),
        )
        keys.append(k)
    free_temps(ex, temps)
    return Operand(vlay, dt, keys)


nondiff("searchsorted")  # integer positions


# ------------------------------------------------------------------------------ public
def _side(right, side):
    if side is None:
        return bool(right)
    if side not in ("left", "right"):
        raise ArgumentError(f"side can only be 'left' or 'right' but got {side!r}")
    if right and side == "left":
        raise ArgumentError(
            "side and right can't be set to opposites, got side of left while right was True"
        )
    return side == "right"


@bind("searchsorted", prim="searchsorted")
@via_float32
def searchsorted(
    sorted_sequence,
    input=None,
    *,
    out_int32=False,
    right=False,
    side=None,
    sorter=None,
    values=None,
):
    """Indices where the values ``input`` would be inserted into ``sorted_sequence`` (sorted
    along its last dim) to keep it sorted; ``right``/``side='right'`` puts equal values after.
    The values may be passed as ``input=`` (torch's keyword) or ``values=`` (its docs' name).

    A 1-D sequence may be split anywhere (its pieces and the values meet worker to worker);
    an N-D one must match ``values`` in every dim but the last.

    Examples
    --------
    >>> import sharded as st
    >>> s = st.tensor([1, 3, 5, 7, 9], shards=2)
    >>> st.searchsorted(s, st.tensor([3, 6, 9])).tolist()
    [1, 3, 4]
    >>> st.searchsorted(s, st.tensor([3, 6, 9]), right=True).tolist()
    [2, 3, 5]
    """
    if (input is None) == (values is None):
        raise DTypeError("searchsorted() takes the values as its second argument (input=)")
    values = input if values is None else values
    seq = sorted_sequence if is_tensor(sorted_sequence) else as_tensor(sorted_sequence)
    r = _side(right, side)
    scalar = not is_tensor(values)
    vals = values if not scalar else as_tensor(values)
    if seq.ndim == 0:
        raise ShapeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0"
        )
    if scalar and seq.ndim > 1:
        raise ShapeError(
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({seq.ndim})"
        )
    if seq.ndim > 1 and tuple(seq.shape[:-1]) != tuple(vals.shape[:-1]):
        raise ShapeError(
            "searchsorted(): the first N-1 dimensions of boundaries tensor and input value "
            f"tensor must match, but got boundaries tensor {list(seq.shape)} and input value "
            f"tensor {list(vals.shape)}"
        )
    if sorter is not None:
        sorter = sorter if is_tensor(sorter) else as_tensor(sorter)
        if tuple(sorter.shape) != tuple(seq.shape):
            raise ShapeError(
                f"searchsorted(): sorter shape {list(sorter.shape)} must match boundaries "
                f"shape {list(seq.shape)}"
            )
        if seq.ndim > 1:
            raise ArgumentError("searchsorted(): sorter= is supported for 1-D sequences only")
        seq = seq[sorter]
    if vals.ndim == 0:
        return apply("searchsorted", seq, vals.reshape(1), r, out_int32).reshape(())
    return apply("searchsorted", seq, vals, r, out_int32)


@bind("bucketize")
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """Index of the bucket of every element of ``input`` given 1-D sorted ``boundaries``
    (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``).

    Examples
    --------
    >>> import sharded as st
    >>> st.bucketize(st.tensor([1, 5, 9]), st.tensor([2, 4, 6, 8])).tolist()
    [0, 2, 4]
    """
    b = boundaries if is_tensor(boundaries) else as_tensor(boundaries)
    if b.ndim != 1:
        raise ShapeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return searchsorted(b, input, out_int32=out_int32, right=right)
