"""``unpermute``: the scatter through a permutation along a dim that carries a sort's
gradient back to where each value was (:mod:`.sort`'s VJP), and its own VJP.

Along a dim no shard cuts every shard scatters its lines; along the split dim of a 1-d
tensor each shard routes its values to the shards that own their target positions (a driver
wait for the counts), which place them; an n-d tensor split along the dim is moved to a
layout that keeps the dim whole first.
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps, reshard
from ....core.dispatch import apply, placement
from ....core.registry import kernel, primitive, vjp
from ....runtime.commands import Key, Transfer
from .sort import _settle, _whole_dim_layout

__all__: list = []


@kernel
def unpermute_local(xp, g, idx, dim):
    """``out`` with ``out[..., idx[..., i], ...] = g[..., i, ...]`` along ``dim``."""
    out = xp.empty_like(g)
    if g.ndim == 0:
        return xp.array(g, copy=True)
    xp.put_along_axis(out, idx, g, axis=dim)
    return out


@kernel
def unpermute_route(xp, g, idx, bounds):
    """Values of a 1-d block grouped by the shard that owns their target index, with
    shard-local target positions and the count per owner (read by the driver)."""
    b = xp.asarray(bounds)
    owner = xp.searchsorted(b, idx, side="right") - 1
    order = xp.argsort(owner, kind="stable")
    counts = xp.bincount(owner, minlength=len(bounds) - 1).astype(xp.int64)
    return g[order], (idx - b[owner])[order], counts


@kernel
def unpermute_place(xp, *pieces, n, dtype):
    """A block of ``n`` built from ``(values, positions)`` piece pairs."""
    out = xp.empty(n, dtype=dtype)
    for v, pos in zip(pieces[0::2], pieces[1::2]):
        out[pos] = v
    return out


def _unpermute_1d(ex, g, idx):
    lay = g._layout
    shards = lay.shards()
    p = len(shards)
    # owners by their start; an empty shard owns nothing (its start equals the next one's)
    bounds = np.asarray(lay.bounds[0], dtype=np.int64)
    keys = []
    for j, (w, _, _) in enumerate(shards):
        ks = (ex.new_key(), ex.new_key(), ex.new_key())
        ex.submit(
            w,
            "unpermute_route",
            (Key(g._keys[j], None), Key(idx._keys[j], None)),
            ks,
            {"bounds": bounds},
            ("unpermute", j),
        )
        keys.append(ks)
    counts = ex.fetch([(shards[j][0], keys[j][2], None) for j in range(p)])  # driver wait
    req, plan = collections.defaultdict(list), [[] for _ in range(p)]
    for j, (src, _, _) in enumerate(shards):
        off = np.concatenate([[0], np.cumsum(counts[j])])
        for o in range(p):
            lo, hi = int(off[o]), int(off[o + 1])
            if lo == hi:
                continue
            for key, item in ((keys[j][0], g._dtype.itemsize), (keys[j][1], 8)):
                sl = (slice(lo, hi),)
                if src == shards[o][0]:
                    plan[o].append(Key(key, sl))
                else:
                    req[src].append((key, sl, (hi - lo) * item))
                    ex.bytes_moved += (hi - lo) * item
                    plan[o].append(src)
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    out = []
    for o, (w, _, shp) in enumerate(shards):
        args = [a if isinstance(a, tuple) else Transfer(next(handles[a])) for a in plan[o]]
        k = ex.new_key()
        ex.submit(
            w,
            "unpermute_place",
            tuple(args),
            (k,),
            {"n": shp[0], "dtype": g._dtype.np_str},
            ("unpermute", o),
        )
        out.append(k)
    free_temps(ex, [(shards[j][0], k) for j in range(p) for k in keys[j]])
    return Operand(lay, g._dtype, out)


@primitive(
    "unpermute",
    kernels=[unpermute_local, unpermute_route, unpermute_place],
    out_spec=lambda g, idx, dim: (tuple(g.shape), g.dtype),
)
def _unpermute_plan(ex, g, idx, dim):
    """``out`` with ``out[..., idx[..., i], ...] = g[..., i, ...]`` along ``dim``, where every
    line of ``idx`` is a permutation (the gradient of a sort); laid out like ``idx``."""
    lay = idx._layout
    temps = []
    if g._layout != lay:
        g = reshard(ex, g, lay)
        temps += [(w, k) for (w, _, _), k in zip(lay.shards(), g._keys)]
    if lay.is_replicated or lay.ndim == 0 or lay.grid[dim] == 1:
        out = []
        for j, (w, _, _) in enumerate(lay.shards()):
            k = ex.new_key()
            ex.submit(
                w,
                "unpermute_local",
                (Key(g._keys[j], None), Key(idx._keys[j], None)),
                (k,),
                {"dim": dim},
                ("unpermute", j),
            )
            out.append(k)
        res = Operand(lay, g._dtype, out)
    elif lay.ndim == 1:
        res = _unpermute_1d(ex, g, idx)
    else:
        mid = _whole_dim_layout(lay, dim, ex)
        gm, im = reshard(ex, g, mid), reshard(ex, idx, mid)
        r = _unpermute_plan(ex, gm, im, dim)
        for t in (gm, im):
            free_temps(ex, [(w, k) for (w, _, _), k in zip(mid.shards(), t._keys)])
        res = _settle(ex, r, lay)
    free_temps(ex, temps)
    return res


@vjp("unpermute", saves=(1,))
def _unpermute_vjp(gs, node):
    # out = scatter(g, idx) so d g = gather(gout, idx) = scatter(gout, inverse(idx)), and the
    # inverse permutation is the scatter of the positions themselves
    _, idx, dim = node.args
    n = idx.shape[dim]
    shape = [1] * idx.ndim
    shape[dim] = n
    pos = apply("arange", placement((n,)), 0, 1, D.int64).reshape(shape) + idx * 0
    inv = apply("unpermute", pos, idx, dim)
    return (apply("unpermute", gs[0], inv, dim), None, None)
