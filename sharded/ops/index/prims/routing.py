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
placed at their positions. Peak extra memory per worker: the index block's coordinates (one
int64 array per dim of ``x``) and its buckets.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, align, free_temps
from ....core.dispatch import apply, is_tensor
from ....core.registry import kernel, primitive, vjp
from ....errors import AutogradError, IndexOutOfRange
from ....runtime.commands import Key, Transfer

# ------------------------------------------------------------------------ worker kernels
_NBAD = 16  # distinct out-of-range values a block names to the driver (its message lists them)


def _coords(xp, idx, offs, shape, cmap, sizes, wrap):
    """Global coordinates (one flat int64 array per dim of ``x``) of a block's points, and
    ``(distinct count, dim, [first distinct values in order of appearance])`` of its
    out-of-range indices (along the first dim that has any)."""
    n = int(np.prod(shape, dtype=np.int64))
    out, bad = [], (0, 0, [])
    for d, (kind, e) in enumerate(cmap):
        if kind == "p":
            r = xp.arange(offs[e], offs[e] + shape[e], dtype=np.int64)
            r = r.reshape((1,) * e + (shape[e],) + (1,) * (len(shape) - e - 1))
            out.append(xp.broadcast_to(r, shape).reshape(-1))
            continue
        c = xp.asarray(idx[e], dtype=np.int64).reshape(-1)
        if wrap:  # advanced indexing reads negative indices from the end
            c = xp.where(c < 0, c + sizes[d], c)
        # one unsigned compare finds both ends: a negative index reads as a huge one
        wrong = c.view(np.uint64) >= np.uint64(sizes[d])
        if not bad[0] and bool(wrong.any()):
            # distinct values as given: an index expanded over other dims (index_select)
            # or repeated counts once
            vals, first = xp.unique(xp.asarray(idx[e]).reshape(-1)[wrong], return_index=True)
            vals = vals[xp.argsort(first)]
            bad = (len(vals), d, [int(v) for v in vals[:_NBAD]])
        out.append(c)
    return out, bad, n


_FEW = 8  # owners up to which bucketing compresses once per owner instead of sorting


def _chunk_of(xp, c, b):
    """The chunk of ``bounds`` ``b`` holding each coordinate ``c`` (all in range): a compare
    per inner bound when there are few (``searchsorted`` costs a binary search each)."""
    if len(b) - 2 > 2 * _FEW:
        return xp.minimum(xp.searchsorted(xp.asarray(b), c, side="right") - 1, len(b) - 2)
    ch = xp.zeros(c.shape, dtype=np.int64)
    for bb in b[1:-1]:
        ch += c >= bb
    return ch


@kernel
def route_split(
    xp, *blocks, offs, shape, cmap, sizes, bounds, cands, nidx, wrap, fill=None, strict=False
):
    """Bucket an index block's points by the candidate shard of ``x`` that owns them.

    ``blocks``: ``nidx`` index blocks, then (for a scatter) a values block. Outputs: a status
    array, ``[0, 0, 0, n_0, n_1, ...]`` or, with out-of-range indices, ``[distinct count, dim,
    v_0, v_1, ...]`` (the first :data:`_NBAD` distinct bad values), and, per candidate ``j``
    (``cands[j]`` = its grid coords, or None for a replica), the shard-local coordinates
    ``(ndim, n_j)`` and either the flat positions (gather) or the values (scatter).
    ``strict``: an out-of-range index raises here (the driver reads no status: a traced call).
    """
    idx, vals = blocks[:nidx], blocks[nidx:]
    coords, bad, n = _coords(xp, idx, offs, shape, cmap, sizes, wrap)
    scatter = bool(vals) or fill is not None
    nd = len(sizes)
    if bad[0] and strict:  # raised at the driver's next read, typed IndexError there
        raise IndexError(
            f"index {bad[2][0]} is out of bounds for dimension {bad[1]} with size {sizes[bad[1]]}"
        )
    if bad[0]:  # nothing moves: the driver raises before the next phase
        empty = [xp.empty((nd, 0), np.int32), xp.empty(0, np.int32)] * len(cands)
        return (xp.asarray([bad[0], bad[1], *bad[2]], dtype=np.int64), *empty)
    if scatter:
        v = vals[0].reshape(-1) if vals else None
        if v is None:
            v = xp.full(n, fill)
    if len(cands) == 1 or cands[0] is None:  # one owner, or replicas that all take every point
        order, counts = None, [n] * len(cands)
    else:
        sid = _chunk_of(xp, coords[0], bounds[0])
        for d in range(1, nd):
            sid *= len(bounds[d]) - 1
            sid += _chunk_of(xp, coords[d], bounds[d])
        lookup = {}
        for j, cc in enumerate(cands):
            s = 0
            for d in range(nd):
                s = s * (len(bounds[d]) - 1) + cc[d]
            lookup[s] = j
        table = xp.full(int(np.prod([len(b) - 1 for b in bounds])), len(cands), dtype=np.int64)
        for s, j in lookup.items():
            table[s] = j
        cid = table[sid].astype(np.int16)  # a 16-bit key sorts by radix (linear time)
        counts = [int(c) for c in xp.bincount(cid, minlength=len(cands))[: len(cands)]]
        # a few owners: one compress per owner beats sorting the owner ids
        order = None if len(cands) <= _FEW else xp.argsort(cid, kind="stable")
    outs, lo = [], 0
    small = np.int32 if max(list(sizes) + [n]) < 2**31 else np.int64
    for j, cc in enumerate(cands):
        if len(cands) == 1 or cands[0] is None:
            sel = slice(0, n)
        elif order is None:
            sel = xp.flatnonzero(cid == j)
        else:
            sel = order[lo : lo + counts[j]]
            lo += counts[j]
        base = [0] * nd if cc is None else [bounds[d][cc[d]] for d in range(nd)]
        lc = xp.empty((nd, counts[j]), dtype=small)  # 32-bit where it fits: half the bytes
        for d in range(nd):
            lc[d] = coords[d][sel] - base[d]
        if scatter:
            outs += [lc, v[sel]]
        elif isinstance(sel, slice):
            outs += [lc, xp.arange(n, dtype=small)]
        else:
            outs += [lc, sel.astype(small)]
    return (xp.asarray([0, 0, 0] + counts, dtype=np.int64), *outs)


@kernel
def route_pick(xp, a, lc):
    """The elements of block ``a`` at shard-local coordinates ``lc`` (one row per dim)."""
    return a[tuple(lc)]


@kernel
def route_place(xp, *pieces, shape, dtype):
    """A block of ``shape`` from ``(positions, values)`` pairs."""
    out = xp.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    for p, v in zip(pieces[0::2], pieces[1::2]):
        flat[p] = v
    return out


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
    out-of-range index. Returns per block ``(worker, shape, [(shard, n, k_coords, k_other)])``
    and the keys to free. While ``st.jit`` traces (reads refuse), nothing is read: the blocks
    raise out-of-range indices themselves (at the next read) and every bucket's size is -1
    (unknown: the transfers then go unsized)."""
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
    blocks, status = [], []
    seen = set()
    for s, (w, offs, shp) in enumerate(elay.shards()):
        if elay.is_replicated and not gather_side:
            if seen:  # a scatter from replicated indices: one replica is enough
                break
            seen.add(w)
        cands = _candidates(lay, offs, shp, cmap, gather_side, w)
        if 0 in shp or not cands:
            blocks.append((w, shp, []))
            continue
        st_key = ex.new_key()
        keys = [(ex.new_key(), ex.new_key()) for _ in cands]
        args = tuple(a[s] for a in iargs) + ((vargs[s],) if values is not None else ())
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
        outs = (st_key,) + tuple(k for pair in keys for k in pair)
        ex.submit(w, "route_split", args, outs, params, (op, s))
        status.append((w, st_key))
        blocks.append((w, shp, [(j, k1, k2) for (j, _), (k1, k2) in zip(cands, keys)]))
        temps += [(w, k) for k in outs]
    if blind:
        return [
            (w, shp, [(j, -1, k1, k2) for j, k1, k2 in parts]) for w, shp, parts in blocks
        ], temps
    stats = ex.fetch([(w, k, None) for w, k in status]) if status else []
    if any(st[0] for st in stats):
        free_temps(ex, temps)
        raise IndexOutOfRange(_bad_message(op, lay.shape, [st for st in stats if st[0]]))
    it = iter(stats)
    out = []
    for w, shp, parts in blocks:
        if not parts:
            out.append((w, shp, []))
            continue
        st = next(it)
        out.append((w, shp, [(j, int(n), k1, k2) for (j, k1, k2), n in zip(parts, st[3:])]))
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
        msg += f" (also out of range: {', '.join(map(str, vals[1:_NBAD]))}{more})"
    return msg


@primitive("route_gather", kernels=[route_split, route_pick, route_place], kind="index")
def _route_gather_plan(ex, x, idx, cmap, wrap=False, op="gather") -> Operand:
    """``x`` at the points ``cmap`` gives for every element of the index tensors ``idx``
    (a tuple, all of one shape and laid out like ``idx[0]``); laid out like ``idx[0]``."""
    lay, elay = x._layout, idx[0]._layout
    blocks, temps = _split(ex, x, idx, cmap, elay, None, None, wrap, op, True)
    shards, item, nd = lay.shards(), x._dtype.itemsize, lay.ndim
    req, picks = {}, []
    for w, _, parts in blocks:
        for j, n, kc, _ in parts:
            wj = shards[j][0]
            if wj != w and n:
                req.setdefault(w, []).append(_sized(kc, n * nd * 8))
                ex.bytes_moved += max(n, 0) * nd * 8
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    back = {}
    for w, _, parts in blocks:
        for j, n, kc, _ in parts:
            wj = shards[j][0]
            if not n:
                continue
            arg = Key(kc, None) if wj == w else Transfer(next(handles[w]))
            kv = ex.new_key()
            ex.submit(wj, "route_pick", (Key(x._keys[j], None), arg), (kv,), None, (op, j))
            temps.append((wj, kv))
            picks.append((w, wj, kv, n))
            if wj != w:
                back.setdefault(wj, []).append(_sized(kv, n * item))
                ex.bytes_moved += max(n, 0) * item
    bh = {w: iter(h) for w, h in ex.export(back).items()} if back else {}
    it = iter(picks)
    keys = []
    for s, (w, shp, parts) in enumerate(blocks):
        args = []
        for _, n, _, kp in parts:
            if not n:
                continue
            _, wj, kv, _ = next(it)
            args += [Key(kp, None), Key(kv, None) if wj == w else Transfer(next(bh[wj]))]
        k = ex.new_key()
        params = {"shape": shp, "dtype": x._dtype.np_str}
        ex.submit(w, "route_place", tuple(args), (k,), params, (op, s))
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
    for w, _, parts in blocks:
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
