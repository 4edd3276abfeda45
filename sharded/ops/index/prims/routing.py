"""``gather``/``scatter`` along any dim, with index tensors routed worker to worker.

Two primitives move points whose position along one or more dims is given by *index
values* held in workers (never read by the driver):

``route_gather(x, idx, cmap)``
    A result laid out like the index tensors: element ``e`` is ``x[c(e)]``, where the
    coordinate map ``cmap`` gives, per dim of ``x``, either the element's own position along
    a dim of the index (``("p", e)``) or the value of an index tensor (``("i", k)``).
``route_scatter(x, idx, cmap, values, reduce, include_self)``
    ``x`` with ``values`` (laid out like the index, or a scalar) written or reduced at the
    points ``c(e)``; in place with ``target=x``, else on a copy.

How a routed op runs: the worker of every index block computes the global coordinates of its
points and buckets them by the shard of ``x`` that owns them (``route_split``: only the
shards of ``x`` whose ranges meet the block along the ``("p", e)`` dims are candidates, so a
gather along a non-split dim stays on its worker). The driver then reads **one small status
array per index block**: the number of out-of-range indices (with the first one) and the
bucket sizes. That is a driver wait (data-dependent ops need one): it lets an out-of-range
index raise :class:`~sharded.errors.IndexOutOfRange` before anything is written (operands
stay intact, as in torch) and it sizes the transfers, so they stream through buffers of at
most ``ex.transfer_bytes``. Buckets then travel to the owners (shard-local coordinates for a
gather, coordinates and values for a scatter); a gather's picked values travel back and are
placed at their positions. A gather's points on the shards its index block's worker holds
move not at all: ``route_split`` picks them into the block of the result, which the values
from the other workers then complete. The kernels (:mod:`sharded.ops.index.kernels.route`)
work through a block in chunks of points. Peak extra memory per worker: one byte per point
of its index block (the owners) and its buckets (32-bit shard-local coordinates, one row per
dim of ``x``, and the points' int64 positions or their values).
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, align, free_temps
from ....core.dispatch import apply, is_tensor
from ....core.registry import kernel, primitive, vjp
from ....errors import AutogradError, IndexOutOfRange
from ....runtime.commands import Key, Transfer
from ..kernels.route import NBAD, route_pick, route_place, route_split


# ------------------------------------------------------------------------ worker kernels
def _identity(dtype, reduce):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if D.kind(dtype) == "f":
        return -np.inf if reduce == "amax" else np.inf
    if D.kind(dtype) == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


@kernel
def route_apply(xp, a, *pieces, reduce, include_self):
    """Write (``reduce`` None) or reduce ``(coords, values)`` pairs into block ``a`` in place."""
    if not pieces:
        return a
    c = tuple(xp.concatenate([p for p in pieces[0::2]], axis=1))
    v = xp.concatenate([p.reshape(-1) for p in pieces[1::2]]).astype(a.dtype, copy=False)
    if reduce is None:
        a[c] = v
        return a
    if not include_self:
        a[c] = _identity(a.dtype, reduce)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum}
    ufunc = ufunc.get(reduce, np.minimum)
    if reduce != "mean":
        ufunc.at(a, c, v)
        return a
    cnt = xp.zeros(a.shape, dtype=np.int64)
    np.add.at(cnt, c, 1)
    np.add.at(a, c, v)
    hit = cnt > 0
    den = cnt[hit] + int(bool(include_self))
    a[hit] = a[hit] // den if D.kind(a) in "iu" else a[hit] / den
    return a


# ------------------------------------------------------------------------ routing planner
def _candidates(lay, offs, shp, cmap, gather_side, w):
    """``[(shard, grid coords or None)]`` of ``x`` that points of an index block may hit."""
    if lay.is_replicated:
        if gather_side:
            return [(lay.workers.index(w) if w in lay.workers else 0, None)]
        return [(j, None) for j in range(len(lay.workers))]
    out = []
    for j, (_, xo, xs) in enumerate(lay.shards()):
        if 0 in xs:
            continue
        ok = all(
            kind == "i" or (xo[d] < offs[e] + shp[e] and offs[e] < xo[d] + xs[d])
            for d, (kind, e) in enumerate(cmap)
        )
        if ok:
            out.append((j, lay.coords(j)))
    return out


def _split(ex, x, idx, cmap, elay, values, fill, wrap, op, gather_side):
    """Run ``route_split`` on every index block, read the status arrays, raise on an
    out-of-range index. Returns per block ``(worker, shape, [(shard, n, k_coords, k_other)],
    k_result)`` and the keys to free. A gather picks the points whose shards of ``x`` the
    block's worker holds in ``route_split`` itself, into a block of the result (``k_result``,
    else None), and lists only the other shards. While ``st.jit`` traces (reads refuse),
    nothing is read: the blocks raise out-of-range indices themselves (at the next read) and
    every bucket's size is -1 (unknown: the transfers then go unsized)."""
    lay = x._layout
    blind = ex.recorder is not None
    temps, iargs = [], []
    for t in idx:
        a, tt = align(ex, t, elay)
        iargs.append(a)
        temps += tt
    vargs = [None] * len(elay.shards())
    if values is not None:
        vargs, tt = align(ex, values, elay)
        temps += tt
    blocks, status, results = [], [], []
    seen, shards = set(), lay.shards()
    for s, (w, offs, shp) in enumerate(elay.shards()):
        if elay.is_replicated and not gather_side:
            if seen:  # a scatter from replicated indices: one replica is enough
                break
            seen.add(w)
        cands = _candidates(lay, offs, shp, cmap, gather_side, w)
        if 0 in shp or not cands:
            blocks.append((w, shp, [], None))
            continue
        st_key = ex.new_key()
        keys = [(ex.new_key(), ex.new_key()) for _ in cands]
        args = tuple(a[s] for a in iargs) + ((vargs[s],) if values is not None else ())
        own = [i for i, (j, _) in enumerate(cands) if gather_side and shards[j][0] == w]
        args += tuple(Key(x._keys[cands[i][0]], None) for i in own)
        kres = ex.new_key() if own else None
        params = {
            "offs": offs,
            "shape": shp,
            "cmap": cmap,
            "sizes": lay.shape,
            "bounds": lay.bounds,
            "cands": [c for _, c in cands],
            "nidx": len(idx),
            "wrap": wrap,
        }
        if fill is not None:
            params["fill"] = fill
        if blind:
            params["strict"] = True
        if own:
            params["own"] = tuple(own)
        outs = (st_key,) + ((kres,) if own else ()) + tuple(k for pair in keys for k in pair)
        ex.submit(w, "route_split", args, outs, params, (op, s))
        status.append((w, st_key))
        parts = [(i, j, k1, k2) for i, ((j, _), (k1, k2)) in enumerate(zip(cands, keys))]
        blocks.append((w, shp, parts, kres))
        temps += [(w, k) for k in outs if k != kres]
        results += [(w, kres)] if own else []
    stats = [None] * len(status) if blind else ex.fetch([(w, k, None) for w, k in status])
    if any(st is not None and st[0] for st in stats):
        free_temps(ex, temps + results)
        raise IndexOutOfRange(_bad_message(op, lay.shape, [st for st in stats if st[0]]))
    it = iter(stats)
    out = []
    for w, shp, parts, kres in blocks:
        st = next(it) if parts else None
        sized = [(j, -1 if st is None else int(st[3 + i]), k1, k2) for i, j, k1, k2 in parts]
        if kres is not None:  # (the block's own shards: picked already)
            sized = [p for p in sized if shards[p[0]][0] != w]
        out.append((w, shp, sized, kres))
    return out, temps


def _sized(key, nbytes):
    """An export request for a whole bucket; its size only where known (not while traced)."""
    return (key, None, nbytes) if nbytes >= 0 else (key, None)


def _bad_message(op, sizes, bad):
    """torch's message for the first out-of-range index, naming every distinct offending value
    of that dim once over all blocks (replicas and expanded indices repeat them)."""
    d = int(bad[0][1])
    vals, complete, most = [], True, 0
    for st in bad:
        if int(st[1]) != d:
            continue
        vals += [int(v) for v in st[2:] if int(v) not in vals]
        complete = complete and int(st[0]) == len(st) - 2
        most = max(most, int(st[0]))
    msg = f"{op}: index {vals[0]} is out of bounds for dimension {d} with size {sizes[d]}"
    if len(vals) > 1 or not complete:
        more = "" if complete else f", ... (at least {max(most, len(vals))} distinct values)"
        msg += f" (also out of range: {', '.join(map(str, vals[1:NBAD]))}{more})"
    return msg


@primitive("route_gather", kernels=[route_split, route_pick, route_place], kind="index")
def _route_gather_plan(ex, x, idx, cmap, wrap=False, op="gather") -> Operand:
    """``x`` at the points ``cmap`` gives for every element of the index tensors ``idx``
    (a tuple, all of one shape and laid out like ``idx[0]``); laid out like ``idx[0]``."""
    lay, elay = x._layout, idx[0]._layout
    blocks, temps = _split(ex, x, idx, cmap, elay, None, None, wrap, op, True)
    shards, item, nd = lay.shards(), x._dtype.itemsize, lay.ndim
    # the points on other workers' shards (route_split picked the block's own): coordinates
    # there, values back
    remote = [(j, w, shards[j][0], n, kc) for w, _, ps, _ in blocks for j, n, kc, _ in ps if n]
    req, back = {}, {}
    for _, w, _, n, kc in remote:
        req.setdefault(w, []).append(_sized(kc, n * nd * 8))
        ex.bytes_moved += max(n, 0) * nd * 8
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    for j, w, wj, n, kc in remote:
        kv = ex.new_key()
        arg = Transfer(next(handles[w]))
        ex.submit(wj, "route_pick", (Key(x._keys[j], None), arg), (kv,), {}, (op, j))
        temps.append((wj, kv))
        back.setdefault(wj, []).append(_sized(kv, n * item))
        ex.bytes_moved += max(n, 0) * item
    bh = {w: iter(h) for w, h in ex.export(back).items()} if back else {}
    came = {kc: Transfer(next(bh[wj])) for _, _, wj, _, kc in remote}
    keys = []
    for s, (w, shp, ps, kres) in enumerate(blocks):
        args = [a for _, n, kc, kp in ps if n for a in (Key(kp, None), came[kc])]
        params = {"shape": shp, "dtype": x._dtype.np_str}
        if kres is None:
            k = ex.new_key()
            ex.submit(w, "route_place", tuple(args), (k,), params, (op, s))
        else:  # route_split began the block: the rest goes into it
            k = kres
            if args:
                args, params = (Key(k, None), *args), dict(params, into=True)
                ex.submit(w, "route_place", args, (k,), params, (op, s), inplace=True)
        keys.append(k)
    free_temps(ex, temps)
    return Operand(elay, x._dtype, keys)


@vjp("route_gather")
def _route_gather_vjp(gs, node):
    x, idx, cmap = node.args
    z = apply("full", x._layout, 0, gs[0].dtype)  # zeros like x, in the gradient's dtype
    p = node.params
    apply(
        "route_scatter",
        z,
        idx,
        cmap,
        gs[0],
        reduce="sum",
        include_self=True,
        wrap=p.get("wrap", False),
        target=z,
    )
    return (z, None, None)


@primitive("route_scatter", kernels=[route_split, route_apply], kind="index")
def _route_scatter_plan(
    ex, x, idx, cmap, values, reduce=None, include_self=True, wrap=False, op="scatter", target=None
) -> Operand:
    """``x`` with ``values`` (a tensor laid out like ``idx[0]``'s shape, or a scalar)
    written (``reduce`` None) or reduced into the points ``cmap`` gives; in place into
    ``target`` (which is ``x``), else into a copy."""
    lay, elay = x._layout, idx[0]._layout
    tval = is_tensor(values)
    blocks, temps = _split(
        ex, x, idx, cmap, elay, values if tval else None, None if tval else values, wrap, op, False
    )
    shards, nd, item = lay.shards(), lay.ndim, x._dtype.itemsize
    if target is None:  # out of place: scatter into fresh copies of x's shards
        keys = [ex.new_key() for _ in shards]
        for j, (w, _, _) in enumerate(shards):
            ex.submit(w, "copy", (Key(x._keys[j], None),), (keys[j],), None, (op, j))
    else:
        keys = list(x._keys)
    req, plan = {}, []
    for w, _, parts, _ in blocks:
        for j, n, kc, kv in parts:
            wj = shards[j][0]
            if n and wj != w:
                vi = values._dtype.itemsize if tval else item
                req.setdefault(w, []).extend([_sized(kc, n * nd * 8), _sized(kv, n * vi)])
                ex.bytes_moved += max(n, 0) * (nd * 8 + vi)
            if n:
                plan.append((j, w, kc, kv))
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    per = [[] for _ in shards]
    for j, w, kc, kv in plan:
        if shards[j][0] == w:
            per[j] += [Key(kc, None), Key(kv, None)]
        else:
            per[j] += [Transfer(next(handles[w])), Transfer(next(handles[w]))]
    for j, (w, _, _) in enumerate(shards):
        if per[j] or (not include_self and reduce is not None):
            ex.submit(
                w,
                "route_apply",
                (Key(keys[j], None), *per[j]),
                (keys[j],),
                {"reduce": reduce, "include_self": include_self},
                (op, j),
                inplace=True,
            )
    free_temps(ex, temps)
    return Operand(lay, x._dtype, keys)


@vjp("route_scatter", saves=(0,), save_out=True)
def _route_scatter_vjp(gs, node):
    x, idx, cmap, values = node.args[:4]
    p = node.params
    reduce, inc = p.get("reduce"), p.get("include_self", True)
    wrap = p.get("wrap", False)
    g = gs[0]
    tval = is_tensor(values) and values.requires_grad

    def back(t):  # t at the scattered points, laid out like the index
        return apply("route_gather", t, idx, cmap, wrap=wrap)

    if reduce == "sum" and inc:
        return (g, None, None, back(g) if tval else None)
    if reduce is None or reduce == "sum":  # overwritten (or reset) points: no gradient to x
        gx = g.clone()
        apply(
            "route_scatter", gx, idx, cmap, 0, reduce=None, include_self=True, wrap=wrap, target=gx
        )
        return (gx, None, None, back(g) if tval else None)
    ones = apply("full", x._layout, 1 if inc else 0, g.dtype)
    if reduce == "mean":
        cnt = apply(
            "route_scatter", ones, idx, cmap, 1.0, reduce="sum", include_self=True, wrap=wrap
        )
        gn = g / cnt
        gx = gn if inc else g.clone()
        if not inc:
            apply(
                "route_scatter",
                gx,
                idx,
                cmap,
                0,
                reduce=None,
                include_self=True,
                wrap=wrap,
                target=gx,
            )
        return (gx, None, None, back(gn) if tval else None)
    if reduce in ("amax", "amin"):
        out = node.saved["out"][0]
        sel_x = (x == out).to(g.dtype) * ones  # self ties count only when included
        vals = values if is_tensor(values) else None
        sel_v = (vals == back(out)).to(g.dtype) if vals is not None else None
        cnt = sel_x.clone()
        if sel_v is not None:
            apply(
                "route_scatter",
                cnt,
                idx,
                cmap,
                sel_v,
                reduce="sum",
                include_self=True,
                wrap=wrap,
                target=cnt,
            )
        gn = g / apply("where", cnt > 0, cnt, 1.0)  # ties share the gradient evenly
        touched = apply("full", x._layout, 0.0, g.dtype)
        apply(
            "route_scatter",
            touched,
            idx,
            cmap,
            1.0,
            reduce=None,
            include_self=True,
            wrap=wrap,
            target=touched,
        )
        gx = apply("where", touched > 0, gn * sel_x, g)
        return (gx, None, None, back(gn) * sel_v if tval else None)
    if reduce == "prod" and p.get("op") != "scatter":  # torch has none for reduce="multiply"
        return _prod_vjp(g, x, idx, cmap, values, inc, wrap, node.saved["out"][0], back, tval)
    raise AutogradError(
        f"the gradient of {p.get('op', 'scatter')} with reduce={reduce!r} is not "
        "supported (sum, prod, mean, amax, amin and plain writes are; torch has none for "
        "scatter's reduce='multiply' either)"
    )


def _prod_vjp(g, x, idx, cmap, values, inc, wrap, out, back, tval):
    """torch's gradient of a scatter "prod": each factor's gradient is the product of the
    others, computed with zeros masked to one (dividing the result by a zero factor would
    lose it); a factor that is the only zero of its point gets the product of the rest."""

    def red(base, src, reduce="prod"):
        kw = {"reduce": reduce, "include_self": inc if reduce == "prod" else True, "wrap": wrap}
        return apply("route_scatter", base, idx, cmap, src, **kw)

    xm = x.masked_fill(x == 0, 1)
    gx = g * red(xm, values) / xm
    if not inc:  # the old values of the points written took no part
        apply(
            "route_scatter", gx, idx, cmap, 0, reduce=None, include_self=True, wrap=wrap, target=gx
        )
    if not tval:
        return (gx, None, None, None)
    zero = values == 0
    zeros = red(apply("full", x._layout, 0, g.dtype), zero.to(g.dtype), "sum")
    single = zero & (back(zeros) == 1)
    rest = back(g * red(x, values.masked_fill(single, 1)))
    gv = apply("where", single, rest, back(g * out) / values.masked_fill(zero, 1))
    return (gx, None, None, gv)
