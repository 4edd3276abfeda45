"""Boolean masks over a tensor's leading dims, shard-locally: ``x[mask]`` (``mask_select``),
``x[mask] = value`` (``put_mask``) and the selection's inverse (``mask_scatter``, its VJP).

A mask laid out like the leading dims of ``x`` is aligned block by block to ``x``'s shards
(resharded worker to worker where its layout differs); each shard selects or writes its own
elements, and only the counts (one int per shard) travel to the driver to lay out a
selection's data-dependent size. ``x[key]`` in :mod:`sharded.ops.index.prims.indexing` reaches these
primitives by name.
"""

from __future__ import annotations

import math

import numpy as np

from ....core.dataflow import Operand, align, free_temps
from ....core.dispatch import apply, is_tensor
from ....core.registry import kernel, primitive, vjp
from ....layout import Layout
from ....runtime.commands import Const, Key


# ------------------------------------------------------------------------ boolean masks
def _lead_layout(lay: Layout, nd: int) -> Layout:
    """``lay`` restricted to its first ``nd`` dims (where a leading-dims mask must live)."""
    return Layout.from_bounds(lay.shape[:nd], lay.bounds[:nd], lay.workers, lay.is_replicated)


def _mask_args(ex, mask, lay: Layout):
    """The mask's block for every shard of ``lay``. An empty shard gets an empty mask: the
    aligned block of a size-1 mask dim is read whole (broadcasting), which would not match
    a shard holding none of that dim."""
    nd = mask._layout.ndim
    margs, temps = align(ex, mask, _lead_layout(lay, nd))
    if not lay.is_replicated:
        for s, (_, _, shp) in enumerate(lay.shards()):
            if 0 in shp[:nd]:
                margs[s] = Const(np.zeros(shp[:nd], dtype=bool))
    return margs, temps


SELECT_BYTES = 1 << 20  # bytes of rows one step of a host selection reads (a step costs
# ~5 us of the interpreter: smaller steps fit a cache better, but kernel threads share a GIL)


@kernel(pooled=True)
def mask_select(xp, a, m, alloc=None):
    """``a[m]`` for a bool mask over the leading dims of a block.

    On the host the selected rows are taken a cache-sized run of rows at a time (their
    indices by ``np.flatnonzero``, then ``np.take``) into one output block, which may come
    from the worker's pool (``alloc``): NumPy's boolean indexing branches on every element,
    which a random mask makes mispredict (half of 25M float64 selected, one thread: 113 ms
    against 42 ms, 37 ms into a recycled block), and a fresh output block of a large
    selection costs its page faults at every call. Same elements, same order.

    Examples
    --------
    >>> mask_select(np, np.arange(6.0).reshape(3, 2), np.array([True, False, True]))
    array([[0., 1.],
           [4., 5.]])
    """
    if xp is not np or m.ndim == 0:
        return a[m]
    n, tail = m.size, a.shape[m.ndim :]
    rows, flat = a.reshape((n,) + tail), m.reshape(n)
    shape = (int(np.count_nonzero(flat)),) + tail
    out = alloc(shape, a.dtype) if alloc is not None else None
    if out is None:
        out = np.empty(shape, a.dtype)
    step = max(1, SELECT_BYTES // max(1, a.itemsize * math.prod(tail)))
    at = 0
    for lo in range(0, n, step):
        idx = np.flatnonzero(flat[lo : lo + step])
        np.take(rows[lo : lo + step], idx, axis=0, out=out[at : at + idx.size], mode="clip")
        at += idx.size
    return out


@kernel
def count(xp, m):
    """Number of true elements of a block, as a 0-d int64 array."""
    return xp.asarray(xp.count_nonzero(m), dtype=np.int64)


@primitive("mask_select", kernels=[mask_select, count], kind="index")
def _mask_select_plan(ex, x, mask) -> Operand:
    """``x[mask]`` for a bool tensor covering ``x``'s leading dims, ``x`` split on dim 0 only
    (the caller reshards otherwise). Shards select locally; the driver reads only counts."""
    lay = x._layout
    margs, temps = _mask_args(ex, mask, lay)
    keys, counts = [], []
    for s, ((w, _, _), a) in enumerate(zip(lay.shards(), margs)):
        k, c = ex.new_key(), ex.new_key()
        ex.submit(w, "mask_select", (Key(x._keys[s], None), a), (k,), None, ("mask_select", s))
        ex.submit(w, "count", (a,), (c,), None, ("mask_select", s))
        keys.append(k)
        counts.append((w, c))
    free_temps(ex, temps)
    n = [int(v) for v in ex.fetch([(w, c, None) for w, c in counts])]
    free_temps(ex, counts)
    rest = lay.shape[mask._layout.ndim :]
    if lay.is_replicated:  # every replica selected the same elements: count them once
        n = n[:1]
    shape = (sum(n),) + tuple(rest)
    bounds = [tuple(np.cumsum([0] + n).tolist())] + [(0, m) for m in rest]
    if lay.is_replicated:
        out = Layout.from_bounds(shape, [(0, m) for m in shape], lay.workers, replicated=True)
    else:
        out = Layout.from_bounds(shape, bounds, lay.workers)
    return Operand(out, x._dtype, keys)


@vjp("mask_select", saves=(1,))
def _mask_select_vjp(gs, node):
    x, mask = node.args
    z = apply("full", x._layout, 0, gs[0].dtype)  # zeros like x, in the gradient's dtype
    apply("mask_scatter", z, mask, gs[0], target=z)
    return (z, None)


@kernel
def put_mask(xp, a, m, v):
    """Set ``a[m] = v`` in place (``v`` a scalar or broadcastable to the selection); NumPy
    checks shapes before writing, so a failure leaves ``a`` unchanged."""
    a[m] = v
    return a


@primitive("put_mask", kernels=[put_mask], kind="index")
def _put_mask_plan(ex, x, mask, value, target) -> Operand:
    """``x[mask] = value`` in place, shard by shard (``value``: a scalar or 0-d tensor)."""
    lay = x._layout
    margs, temps = _mask_args(ex, mask, lay)
    if is_tensor(value):
        vargs, vt = align(ex, value, lay)
        temps += vt
    else:
        vargs = [Const(value)] * len(margs)
    for s, ((w, _, _), a, v) in enumerate(zip(lay.shards(), margs, vargs)):
        ex.submit(
            w,
            "put_mask",
            (Key(x._keys[s], None), a, v),
            (x._keys[s],),
            None,
            ("put_mask", s),
            inplace=True,
        )
    free_temps(ex, temps)
    return Operand(lay, x._dtype, x._keys)


@vjp("put_mask", saves=(1,))
def _put_mask_vjp(gs, node):
    _, mask, value = node.args
    g = gs[0].clone()
    apply("put_mask", g, mask, 0, target=g)  # overwritten elements get no gradient
    # a 0-d tensor value was written at every selected element: it gets their sum
    gv = gs[0][mask].sum() if is_tensor(value) and value.requires_grad else None
    return (g, None, gv)


@primitive("mask_scatter", kernels=[put_mask], kind="index")
def _mask_scatter_plan(ex, x, mask, values, target) -> Operand:
    """``x[mask] = values`` in place where ``values`` is the result of ``x[mask]`` on the same
    layout (one block per shard, on the same worker): the inverse of a mask selection."""
    lay = x._layout
    margs, temps = align(ex, mask, _lead_layout(lay, mask._layout.ndim))
    for s, ((w, _, _), a) in enumerate(zip(lay.shards(), margs)):
        ex.submit(
            w,
            "put_mask",
            (Key(x._keys[s], None), a, Key(values._keys[s], None)),
            (x._keys[s],),
            None,
            ("mask_scatter", s),
            inplace=True,
        )
    free_temps(ex, temps)
    return Operand(lay, x._dtype, x._keys)


@vjp("mask_scatter", saves=(1,))
def _mask_scatter_vjp(gs, node):
    _, mask, _ = node.args
    g = gs[0].clone()
    apply("put_mask", g, mask, 0, target=g)  # overwritten elements get no gradient
    return (g, None, apply("mask_select", gs[0], mask))
