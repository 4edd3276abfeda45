"""Scans: cumsum, cumprod, logcumsumexp, cummax/cummin (values, indices).

Along a dim that is not split every shard scans on its own. Along the split dim each shard
scans locally and keeps its *total* (the last slice of its scan: one row per line); every
shard then receives the totals of the shards before it along the dim (tiny slices, exported
worker to worker in one round, never through the driver), combines them in order into its
carry and applies the carry to its block in place. Peak extra memory per worker: the output
block plus a few slices. ``diff`` needs the first row of the next shard (a one-row halo).

The cummax/cummin gradient scatters to the indices; since those never decrease along the
dim, only one index per line can point into an earlier shard, so each shard keeps one
``(index, sum)`` pair per line; the pairs of later shards aiming before a shard all aim at
the same index as its own, so they combine in a reverse scan (the same exchange, reversed):
one pair reaches each shard, work and messages linear in the shard count.
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand
from ....core.dispatch import apply, as_tensor, is_tensor, via_float32
from ....core.registry import bind, kernel, nondiff, pooled_empty, primitive, vjp
from ....core.tree import reduce_groups
from ....errors import ArgumentError, UnsupportedDType
from ....layout import Layout, normalize_dim
from ....runtime.commands import Key, Transfer
from ..kernels.scan import logaddexp, lse_accumulate, lse_total

__all__ = [
    "CummaxResult",
    "CumminResult",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "logcumsumexp",
]

CummaxResult = collections.namedtuple("cummax", ["values", "indices"])
CumminResult = collections.namedtuple("cummin", ["values", "indices"])


# ------------------------------------------------------------------------------ kernels
def _last(a, axis, reverse=False):
    """The last (first, for a reverse scan) slice of ``a`` along ``axis``, keepdims."""
    sl = [slice(None)] * a.ndim
    sl[axis] = slice(0, 1) if reverse else slice(-1, None)
    return a[tuple(sl)]


def _flip(a, axis):
    sl = [slice(None)] * a.ndim
    sl[axis] = slice(None, None, -1)
    return a[tuple(sl)]


def _accumulate(xp, op, a, axis, dtype, out=None):
    if op == "sum":
        return xp.cumsum(a, axis=axis, dtype=dtype, out=out)
    if op == "prod":
        return xp.cumprod(a, axis=axis, dtype=dtype, out=out)
    return lse_accumulate(xp, a, axis, dtype, out=out)


_COMBINE = {"sum": "add", "prod": "multiply", "lse": "logaddexp"}


def _combine_fn(xp, op):
    """The binary op folding two totals of ``op`` (log-add-exp: complex too)."""
    if op == "lse":
        return lambda a, b, out=None: logaddexp(xp, a, b, out=out)
    return getattr(xp, _COMBINE[op])


_BLOCK = 1 << 16  # elements per slab: the carry is added while the slab is still in cache


@kernel
def scan_total(xp, a, op, axis, dtype):
    """The block's total along ``axis`` (keepdims): what the later shards need, computed
    before the scan so that they can start theirs with the carry folded in."""
    if op == "sum":
        return xp.sum(a, axis=axis, keepdims=True, dtype=dtype)
    if op == "prod":
        return xp.prod(a, axis=axis, keepdims=True, dtype=dtype)
    return lse_total(xp, a, axis, dtype)


@kernel(pooled=True)
def scan_block(xp, a, *totals, op, axis, dtype, reverse=False, alloc=None):
    """The scan of a block along ``axis`` (reversed: from the end), starting from the
    combination of the earlier shards' ``totals`` (in scan order) when there are any; into a
    block of the worker's pool when one fits.

    With a carry the block is scanned slab by slab, each slab getting the carry while it is
    in cache (one pass over memory, as an unsplit scan)."""
    out = pooled_empty(xp, alloc, a.shape, np.dtype(dtype))
    if not totals:
        if not reverse:
            return _accumulate(xp, op, a, axis, dtype, out=out)
        _accumulate(xp, op, _flip(a, axis), axis, dtype, out=_flip(out, axis))
        return out
    fn = _combine_fn(xp, op)
    carry = totals[0]
    for t in totals[1:]:
        carry = fn(carry, t)
    src, dst = (_flip(a, axis), _flip(out, axis)) if reverse else (a, out)
    n = a.shape[axis]
    step = max(1, _BLOCK // max(1, a.size // max(n, 1)))
    sl = [slice(None)] * a.ndim
    for lo in range(0, n, step):
        sl[axis] = slice(lo, lo + step)
        o = dst[tuple(sl)]
        _accumulate(xp, op, src[tuple(sl)], axis, dtype, out=o)
        fn(carry, o, out=o)  # the carry is the earlier operand
        carry = _last(o, axis)
    return out


def _take_later(xp, v, cv, fn):
    """Where the later of two running extremes wins: ties and NaN go to the later one, as
    torch (its indices are the last ones among equals)."""
    win = (v >= cv) if fn == "max" else (v <= cv)
    if v.dtype.kind in "fc":
        win |= xp.isnan(v)
    return win


@kernel
def cumarg_local(xp, a, fn, axis, offset):
    """Running max/min of a block and the global index of the last element reaching it."""
    v = (xp.maximum if fn == "max" else xp.minimum).accumulate(a, axis=axis)
    hit = a == v
    if a.dtype.kind in "fc":
        hit |= xp.isnan(a)  # NaN stays the extreme, each later NaN takes over the index
    shape = [1] * a.ndim
    shape[axis] = a.shape[axis]
    pos = xp.arange(offset, offset + a.shape[axis], dtype=np.int64).reshape(shape)
    idx = xp.maximum.accumulate(xp.where(hit, pos, -1), axis=axis)
    return v, idx, xp.array(_last(v, axis), copy=True), xp.array(_last(idx, axis), copy=True)


@kernel
def cumarg_apply(xp, v, idx, *totals, fn):
    """Apply the carry ``(value, index)`` of the earlier shards to a block in place."""
    cv, ci = totals[0], totals[1]
    for k in range(2, len(totals), 2):
        win = _take_later(xp, totals[k], cv, fn)
        cv, ci = xp.where(win, totals[k], cv), xp.where(win, totals[k + 1], ci)
    win = _take_later(xp, v, cv, fn)
    xp.copyto(idx, ci, where=~win, casting="unsafe")
    xp.copyto(v, cv, where=~win, casting="unsafe")
    return v, idx


# ------------------------------------------------------------------- the exchange
def _lines(lay: Layout, d: int, reverse: bool):
    """Shards along ``d`` sharing their other coordinates, in scan order, skipping empty
    ones (a block with no elements has no total to give and nothing to update)."""
    shards = lay.shards()
    for members in reduce_groups(lay, (d,)).values():
        live = [s for s in members if 0 not in shards[s][2]]
        yield live[::-1] if reverse else live


_DIRECT = 4  # lines up to this many shards send every total to every later shard


def _combine_pair(xp, op, early, late):
    """``early`` then ``late`` (tuples of arrays: a total, or a (value, index) pair)."""
    if op in _COMBINE:
        return (_combine_fn(xp, op)(early[0], late[0]),)
    if op == "pending":  # gradient sums aimed at an index: they add where they aim alike
        return (late[0] + xp.where(early[1] == late[1], early[0], 0), late[1])
    win = _take_later(xp, late[0], early[0], op)
    return tuple(xp.where(win, b, a) for a, b in zip(early, late))


@kernel
def scan_prefix(xp, *totals, op, width):
    """The carries of positions 1..n-1 of a line from the totals of positions 0..n-2 (each
    ``width`` arrays): the exclusive prefix, combined in order."""
    parts = [totals[i : i + width] for i in range(0, len(totals), width)]
    acc, out = tuple(parts[0]), list(parts[0])
    for p in parts[1:]:
        acc = _combine_pair(xp, op, acc, p)
        out.extend(acc)
    out = [xp.array(o, copy=True) for o in out]
    return out[0] if len(out) == 1 else tuple(out)


def _exchange(ex, lay, d, totals, reverse=False, op=None):
    """For every shard, the command arguments of the totals before it (in scan order) on its
    worker: ``totals[s]`` holds keys on shard ``s``'s worker. Returns ``({shard: [args]},
    temps)``.

    A short line sends every total to every later shard (one export round). A longer one,
    when ``op`` says how totals combine, sends them to the line's first worker, which
    combines the exclusive prefixes and sends each shard its one carry (two rounds, messages
    linear in the shard count, so the driver's cost stays linear too)."""
    shards = lay.shards()
    req, wants, rooted = collections.defaultdict(list), [], []
    for line in _lines(lay, d, reverse):
        if op is not None and len(line) > _DIRECT:
            rooted.append(line)
            continue
        for j, s in enumerate(line[1:], 1):
            w = shards[s][0]
            for p in line[:j]:
                src = shards[p][0]
                for k in totals[p]:
                    if src == w:
                        wants.append((s, Key(k, None)))
                    else:
                        req[src].append((k, None))
                        wants.append((s, src))
    roots = []
    for line in rooted:  # the totals travel to the line's root in the same round
        root = shards[line[0]][0]
        args = []
        for p in line[:-1]:
            for k in totals[p]:
                if shards[p][0] == root:
                    args.append(Key(k, None))
                else:
                    req[shards[p][0]].append((k, None))
                    args.append(shards[p][0])
        roots.append((line, root, args))
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    out = collections.defaultdict(list)
    for s, a in wants:
        out[s].append(a if isinstance(a, tuple) else Transfer(next(handles[a])))
    temps, back, sends = [], collections.defaultdict(list), []
    for line, root, args in roots:
        args = [a if isinstance(a, tuple) else Transfer(next(handles[a])) for a in args]
        width = len(totals[line[0]])
        keys = [ex.new_key() for _ in range((len(line) - 1) * width)]
        ex.submit(root, "scan_prefix", args, keys, {"op": op, "width": width}, ("scan", None))
        temps += [(root, k) for k in keys]
        for j, s in enumerate(line[1:]):
            ks = keys[j * width : (j + 1) * width]
            if shards[s][0] == root:
                out[s] += [Key(k, None) for k in ks]
            else:
                back[root] += [(k, None) for k in ks]
                sends.append((s, root, len(ks)))
    hb = {w: iter(h) for w, h in ex.export(back).items()} if back else {}
    for s, root, n in sends:
        out[s] += [Transfer(next(hb[root])) for _ in range(n)]
    return out, temps


def _free_totals(ex, lay, totals):
    shards = lay.shards()
    ex.free_pairs([(shards[s][0], k) for s, ks in totals.items() for k in ks])


# ------------------------------------------------------------------ cumsum, cumprod, lse
def _scan_dtype(x, op, dtype):
    if dtype is not None:
        return dtype
    if op == "lse" or D.category(x.dtype) >= 2:
        return x.dtype
    return D.int64  # torch: integer and bool cumsum/cumprod accumulate in int64


def _scan_spec(x, op, dim, dtype=None, reverse=False):
    return tuple(x.shape), _scan_dtype(x, op, dtype)


@primitive(
    "cumscan", kernels=[scan_total, scan_block, scan_prefix], out_spec=_scan_spec, kind="scan"
)
def _cumscan_plan(ex, x, op, dim, dtype=None, reverse=False):
    """Inclusive scan of ``x`` along ``dim`` with ``op`` (``sum``, ``prod``, ``lse``): the
    totals of all but the last shard of each line first, then every shard's scan with the
    carry of the shards before it."""
    lay = x._layout
    dt = _scan_dtype(x, op, dtype)
    shards = lay.shards()
    totals = {}
    for line in _lines(lay, dim, reverse):
        for s in line[:-1]:
            t = ex.new_key()
            params = {"op": op, "axis": dim, "dtype": dt.np_str}
            ex.submit(
                shards[s][0], "scan_total", (Key(x._keys[s], None),), (t,), params, ("cumscan", s)
            )
            totals[s] = (t,)
    carries, temps = _exchange(ex, lay, dim, totals, reverse, op)
    keys = ex.new_keys(len(shards))
    # the blocks that take carries are queued first: a worker holding several shards of a
    # line runs a run of independent kernels in parallel lanes, and a block queued after
    # the first shard's (which needs no carry) would wait for the run holding its total:
    # on 1 worker x 2 threads, [total 0, block 0] then block 1 took two blocks' time
    params = {"op": op, "axis": dim, "dtype": dt.np_str, "reverse": reverse}
    for s in sorted(range(len(shards)), key=lambda s: -len(carries.get(s, ()))):
        args = (Key(x._keys[s], None), *carries.get(s, ()))
        ex.submit(shards[s][0], "scan_block", args, (keys[s],), params, ("cumscan", s))
    _free_totals(ex, lay, totals)
    ex.free_pairs(temps)
    return Operand(lay, dt, keys)


def _rev_cumsum(g, d, reverse=False):
    return apply("cumscan", g, "sum", d, None, not reverse)


@vjp("cumscan", saves=(0,), save_out=True)
def _cumscan_vjp(gs, node):
    x, op, d = node.args[:3]
    reverse = node.args[4] if len(node.args) > 4 else False
    g, out = gs[0], node.saved["out"][0]
    if op == "sum":
        gx = _rev_cumsum(g, d, reverse)
    elif op == "lse" and x.dtype.is_complex:
        # torch: conj(exp(revlse(log(conj g) - out) + x)); the engine carries conj(g) (see
        # autograd.py), so no conj here, nor a split by sign: complex logs always exist
        gx = (apply("cumscan", g.log() - out, "lse", d, None, not reverse) + x).exp()
    elif op == "lse":
        # sum_{k>=i} g_k exp(x_i - out_k), split by sign of g so the logs exist (torch)
        def part(gp):
            return (apply("cumscan", gp.log() - out, "lse", d, None, not reverse) + x).exp()

        gx = part(apply("where", g > 0, g, 0.0)) - part(apply("where", g < 0, -g, 0.0))
    else:
        gx = _cumprod_grad(g, x, out, d)
    return (gx if gx.dtype == x.dtype else gx.to(x.dtype),) + (None,) * (len(node.args) - 1)


def _cumprod_grad(g, x, out, d):
    """torch's cumprod gradient, exact at zeros: before a line's first zero it is
    ``revcumsum(g * out) / x``; at the first zero, ``revcumsum(g * cumprod(y))`` with that
    zero replaced by 1 in ``y``; after it, 0 (every later product holds the zero)."""
    zero = x == 0
    nz = apply("cumscan", zero, "sum", d, None, False)
    before, first = nz == 0, zero & (nz == 1)
    a = _rev_cumsum(g * out, d) / apply("where", before, x, 1.0)
    y = apply("where", first, 1.0, x)
    b = _rev_cumsum(g * apply("cumscan", y, "prod", d, None, False), d)
    return apply("where", before, a, apply("where", first, b, 0.0))


_NAMES = {"sum": "cumsum", "prod": "cumprod", "lse": "logcumsumexp"}


def _scan(op, input, dim, dtype):
    x = input if is_tensor(input) else as_tensor(input)
    dtype = None if dtype is None else D.as_dtype(dtype)
    d = normalize_dim(dim, max(x.ndim, 1))  # torch checks the dim before the dtype
    dt = _scan_dtype(x, op, dtype)
    # torch has no bool kernel, but returns 0-d and empty inputs before needing one
    if (op == "lse" and not (dt.is_floating_point or dt.is_complex)) or (
        dt == D.bool_ and x.ndim and x.numel()
    ):
        raise UnsupportedDType(
            f'"{_NAMES[op]}_out_cpu" not implemented for {dt.name} (input {x.dtype.name})'
        )
    if x.ndim == 0:  # torch: a 0-d scan is the element itself, its gradient too (even at inf)
        return x.clone() if dt == x.dtype else x.to(dt)
    return apply("cumscan", x, op, d, dtype)


@bind("cumsum", prim="cumscan")
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim`` (integer and bool inputs give int64, as torch).

    Along the split dim each shard adds the sum of the shards before it, exchanged worker to
    worker.

    Examples
    --------
    >>> import sharded as st
    >>> st.cumsum(st.tensor([1, 2, 3, 4], shards=2), 0).tolist()
    [1, 3, 6, 10]
    """
    return _scan("sum", input, dim, dtype)


@bind("cumprod", prim="cumscan")
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim`` (integer and bool inputs give int64, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.cumprod(st.tensor([1, 2, 3, 4], shards=2), 0).tolist()
    [1, 2, 6, 24]
    """
    return _scan("prod", input, dim, dtype)


@bind("logcumsumexp", prim="cumscan")
@via_float32
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably (floating and complex dtypes;
    complex ones fold one slice at a time, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.logcumsumexp(st.tensor([0.0, 0.0]), 0).tolist()]
    [0.0, 0.6931]
    """
    return _scan("lse", input, dim, None)


def _inplace(name):
    def method(self, dim, *, dtype=None):
        if dtype is not None and D.as_dtype(dtype) != self.dtype:
            raise ArgumentError(
                f"Bad in-place call: input tensor dtype {self.dtype.name} and output tensor "
                f"dtype {D.as_dtype(dtype).name} should match ({name}_)"
            )
        if self.dtype == D.bool_ and self.ndim and self.numel():  # no bool kernel (torch)
            raise UnsupportedDType(f'"{name}_out_cpu" not implemented for bool ({name}_)')
        r = (cumsum if name == "cumsum" else cumprod)(self, dim, dtype=dtype)
        return self.copy_(r)

    method.__name__ = name + "_"
    method.__doc__ = f"In-place :func:`{name}` (the result is cast to this tensor's dtype)."
    return method


bind("cumsum_", prim="cumscan")(_inplace("cumsum"))
bind("cumprod_", prim="cumscan")(_inplace("cumprod"))


# ------------------------------------------------------------------------ cummax, cummin
def _cumarg_spec(x, fn, dim):
    return (tuple(x.shape), x.dtype), (tuple(x.shape), D.int64)


@primitive(
    "cumarg",
    kernels=[cumarg_local, cumarg_apply, "scan_prefix"],
    out_spec=_cumarg_spec,
    kind="scan",
)
def _cumarg_plan(ex, x, fn, dim):
    """Running max/min along ``dim`` and the (last) index reaching it."""
    lay = x._layout
    shards = lay.shards()
    vk, ik, totals = [], [], {}
    for s, (w, offs, _) in enumerate(shards):
        k = tuple(ex.new_key() for _ in range(4))
        params = {"fn": fn, "axis": dim, "offset": 0 if lay.is_replicated else offs[dim]}
        ex.submit(w, "cumarg_local", (Key(x._keys[s], None),), k, params, ("cumarg", s))
        vk.append(k[0])
        ik.append(k[1])
        totals[s] = k[2:]
    carries, temps = _exchange(ex, lay, dim, totals, op=fn)
    for s, args in carries.items():
        ex.submit(
            shards[s][0],
            "cumarg_apply",
            (Key(vk[s], None), Key(ik[s], None), *args),
            (vk[s], ik[s]),
            {"fn": fn},
            ("cumarg", s),
            inplace=True,
        )
    _free_totals(ex, lay, totals)
    ex.free_pairs(temps)
    return Operand(lay, x._dtype, vk), Operand(lay, D.int64, ik)


@vjp("cumarg", save_out=(1,))
def _cumarg_vjp(gs, node):
    d = node.args[2]
    return (apply("cumarg_grad", gs[0], node.saved["out"][1], d), None, None)


@kernel
def cumarg_grad_local(xp, g, idx, axis, lo):
    """Scatter-add ``g`` to ``idx`` within the block; the part pointing before it (one index
    per line, indices never decrease) comes back as a ``(index, sum)`` pair per line."""
    inside = idx >= lo
    moved = xp.moveaxis(g, axis, -1)
    n = moved.shape[-1]
    lines = int(np.prod(moved.shape[:-1]))
    flat = (
        xp.arange(lines, dtype=np.int64).reshape(moved.shape[:-1] + (1,)) * n
        + xp.moveaxis(idx, axis, -1)
        - lo
    )
    ins = xp.moveaxis(inside, axis, -1)
    acc = xp.bincount(flat[ins], weights=moved[ins], minlength=lines * n)
    out = xp.moveaxis(acc.reshape(moved.shape).astype(g.dtype, copy=False), -1, axis)
    psum = xp.where(inside, 0, g).sum(axis=axis, keepdims=True)
    pidx = idx.min(axis=axis, keepdims=True) if idx.shape[axis] else idx
    return xp.ascontiguousarray(out), psum, pidx


@kernel
def cumarg_grad_apply(xp, out, *pending, axis, lo, hi):
    """Add the gradient that later shards aim into ``[lo, hi)``. ``pending`` holds their
    ``(sum, index)`` pairs in reverse scan order (or one pair, already combined): indices
    never decrease along the dim, so every later shard that aims before the next shard aims
    at the same index as it does, and the pairs fold into one per line."""
    acc = tuple(pending[:2])
    for k in range(2, len(pending), 2):
        acc = _combine_pair(xp, "pending", acc, pending[k : k + 2])
    psum, pidx = acc
    hit = (pidx >= lo) & (pidx < hi)
    at = xp.clip(pidx - lo, 0, hi - lo - 1)
    cur = xp.take_along_axis(out, at, axis)
    xp.put_along_axis(out, at, cur + xp.where(hit, psum, 0), axis)
    return out


@primitive("cumarg_grad", kernels=[cumarg_grad_local, cumarg_grad_apply], kind="scan")
def _cumarg_grad_plan(ex, g, idx, dim):
    """The gradient of cummax/cummin: ``g`` scattered (added) to ``idx`` along ``dim``;
    ``g`` and ``idx`` share a layout (the output's)."""
    lay = g._layout
    shards = lay.shards()
    keys, pend = [], {}
    for s, (w, offs, _) in enumerate(shards):
        k = tuple(ex.new_key() for _ in range(3))
        lo = 0 if lay.is_replicated else offs[dim]
        ex.submit(
            w,
            "cumarg_grad_local",
            (Key(g._keys[s], None), Key(idx._keys[s], None)),
            k,
            {"axis": dim, "lo": lo},
            ("cumarg_grad", s),
        )
        keys.append(k[0])
        pend[s] = k[1:]
    # a reverse scan of the pending pairs: each shard gets one combined pair (the work and
    # the messages grow linearly with the shard count)
    carries, temps = _exchange(ex, lay, dim, pend, reverse=True, op="pending")
    for s, args in carries.items():
        w, offs, shp = shards[s]
        lo = 0 if lay.is_replicated else offs[dim]
        ex.submit(
            w,
            "cumarg_grad_apply",
            (Key(keys[s], None), *args),
            (keys[s],),
            {"axis": dim, "lo": lo, "hi": lo + shp[dim]},
            ("cumarg_grad", s),
            inplace=True,
        )
    _free_totals(ex, lay, pend)
    ex.free_pairs(temps)
    return Operand(lay, g._dtype, keys)


nondiff("cumarg_grad")


def _cumarg(fn, input, dim):
    x = input if is_tensor(input) else as_tensor(input)
    res = CummaxResult if fn == "max" else CumminResult
    if x.ndim == 0:
        normalize_dim(dim, 1)
        v, i = apply("cumarg", x.reshape(1), fn, 0)
        return res(v.reshape(()), i.reshape(()))
    return res(*apply("cumarg", x, fn, normalize_dim(dim, x.ndim)))


@bind("cummax", prim="cumarg")
@via_float32
def cummax(input, dim):
    """Running maximum along ``dim``: ``(values, indices)``; on ties and NaN the index is
    the last one reaching the value, as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.cummax(st.tensor([1, 3, 3, 2], shards=2), 0).indices.tolist()
    [0, 1, 2, 2]
    """
    return _cumarg("max", input, dim)


@bind("cummin", prim="cumarg")
@via_float32
def cummin(input, dim):
    """Running minimum along ``dim``: ``(values, indices)`` (ties: the last index).

    Examples
    --------
    >>> import sharded as st
    >>> st.cummin(st.tensor([3, 1, 2, 0], shards=2), 0).values.tolist()
    [3, 1, 1, 0]
    """
    return _cumarg("min", input, dim)
