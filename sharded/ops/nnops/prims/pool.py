"""The pooling primitives over (N, C, *spatial) blocks, one per kind for any number of
spatial dims (max, average, adaptive average and adaptive max; their indices and
gradients); the public functions are in :mod:`..derived`.

Every window lies inside one image and one channel, so shards split along N or C pool where
they are. Max and average pooling keep a split along a spatial dim too, as the convolution
does (:mod:`.conv`): each output shard takes the windows centred from its input shard's
first row on and reads the halo rows they reach from its neighbours (a window longer than a
shard may take a batch split instead: :func:`~..plan.window_layout`); the adaptive pools
reshard every spatial split to a batch split first. The 1-D forms are the 2-D ones over rows
of height 1. Gradients are local too: col2im of the pooled gradient spread over its windows
(max: onto each window's first maximum, NaN wins, as torch), each input shard from the
windows that reach into it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, align, free_temps
from ....core.dispatch import apply
from ....core.registry import kernel, nondiff, primitive, vjp
from ....runtime.commands import Key
from ..kernels import col2im, fill, right_pad, take, tap_slices
from ..plan import (
    Win,
    gather_pieces,
    out_layout,
    submit_each,
    submit_local,
    touching_regions,
    window_regions,
)

__all__: list[str] = []

KEEP = (0, 1)  # batch and channel cuts stay where they are


def _lowest(xp, dtype):
    return -xp.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


def _local(ex, name, x, shape, dtype, params, extra=None):
    """``name`` on every shard of ``x`` (split along N/C or replicated), giving a result of
    ``shape`` cut the same way; ``extra`` = (tensor, its layout) is aligned shard by shard
    and passed first (an output gradient)."""
    lay = x if not hasattr(x, "_layout") else x._layout
    out = out_layout(lay, shape, KEEP)
    if extra is None:
        args = [(Key(k, None),) for k in x._keys]
        temps = []
    else:
        t, tlay = extra
        targs, temps = align(ex, t, tlay)
        src = [] if lay is x else [Key(k, None) for k in x._keys]
        args = [(targs[s],) + ((src[s],) if src else ()) for s in range(len(lay.shards()))]
    keys = submit_local(ex, name, lay, args, params)
    free_temps(ex, temps)
    return Operand(out, dtype, keys)


def _wins(sp, k, stride, pads, dilation, out_sp):
    return tuple(
        Win(sp[a], k[a], stride[a], dilation[a], pads[a][0], pads[a][1], out_sp[a])
        for a in range(len(k))
    )


def _windowed(ex, name, x, wins, dtype, params, extra=None):
    """``name`` on every output shard of windows ``wins`` over ``x``: its input region
    (own rows and halos, as pieces) with the padding around it (``"pads"``), where each
    output block starts (``"o0"``, output coordinates) and its size (``"out_sp"``)."""
    lay = x._layout
    shape = tuple(lay.shape[:2]) + tuple(w.out for w in wins)
    out = out_layout(lay, shape, KEEP, wins)
    regs = window_regions(lay, out, wins, whole_channels=False)
    args, places, temps = gather_pieces(ex, x, [(w, reg) for w, reg, _ in regs])
    plist = []
    for (_, reg, pads), pl, (_, oo, osh) in zip(regs, places, out.shards()):
        p = dict(params, places=pl, shape=tuple(hi - lo for lo, hi in reg), pads=pads,
                 dtype=x._dtype.np_str, o0=tuple(oo[2:]), out_sp=tuple(osh[2:]))  # fmt: skip
        plist.append(p)
    keys = submit_each(ex, name, out, args, plist)
    free_temps(ex, temps)
    return Operand(out, dtype, keys)


def _touching(ex, name, g, x, lay, wins, params):
    """``name`` on every shard of ``lay`` (an input's layout), from the windows that reach
    into its block: their output gradient ``g`` and (with ``x``) the input region they read;
    parameters ``org`` (where the first window starts), ``lo``/``size`` (the block)."""
    touch = touching_regions(lay, wins)
    gwant, xwant, plist = [], [], []
    for (wk, offs, shp), (spans, org) in zip(lay.shards(), touch):
        nc = [(offs[0], offs[0] + shp[0]), (offs[1], offs[1] + shp[1])]
        greg = nc + list(spans)
        gwant.append((wk, greg))
        p = dict(params, gshape=tuple(hi - lo for lo, hi in greg), org=org,
                 lo=tuple(offs[2:]), size=tuple(shp[2:]), dtype=g._dtype.np_str)  # fmt: skip
        if x is not None:
            xreg, pads = list(nc), []
            for (i0, i1), win in zip(spans, wins):
                lo, hi, top, bottom = win.span(i0, i1) if i1 > i0 else (0, 0, 0, 0)
                xreg.append((lo, hi))
                pads.append((top, bottom))
            xwant.append((wk, xreg))
            p.update(shape=tuple(hi - lo for lo, hi in xreg), pads=tuple(pads))
        plist.append(p)
    gargs, gplaces, temps = gather_pieces(ex, g, gwant)
    if x is not None:
        xargs, xplaces, t2 = gather_pieces(ex, x, xwant)
        temps += t2
    for s, p in enumerate(plist):
        p["gplaces"] = gplaces[s]
        if x is not None:
            p["places"] = xplaces[s]
    args = [gargs[s] + (xargs[s] if x is not None else ()) for s in range(len(plist))]
    keys = submit_each(ex, name, lay, args, plist)
    free_temps(ex, temps)
    return Operand(lay, g._dtype, keys)


# ---------------------------------------------------------------------------- max pool
def _taps(xpad, k, stride, dilation, out_sp):
    """``(t, view)`` for each of the ``prod(k)`` taps: the (n, C, *out_sp) strided view of
    what every window reads at tap ``t`` (row-major in the window). One window's taps land
    on distinct elements of a view, so a view can be added to in place."""
    if 0 in tuple(out_sp):
        return
    for t, idx in tap_slices(k, stride, dilation, out_sp):
        yield t, xpad[idx]


def _running_max(xp, xpad, k, stride, dilation, out_sp, index=False):
    """Window maxima of a block padded with the lowest value, one tap at a time (no
    ``prod(k)`` copy of the block); with ``index``, also each window's tap of torch's choice:
    the first maximum, but the last NaN (a NaN replaces the running maximum whenever one is
    met). The tap numbers are kept by arithmetic (``am -= upd * (am - t)``): several times
    faster than a masked copy."""
    best = xp.zeros(xpad.shape[:2] + tuple(out_sp), dtype=xpad.dtype)
    am = xp.zeros(best.shape, dtype=np.int32) if index else None
    nan = index and xpad.dtype.kind == "f" and bool(xp.isnan(xpad).any())
    upd = xp.empty(best.shape, dtype=bool) if index else None
    for t, tap in _taps(xpad, k, stride, dilation, out_sp):
        if t == 0:
            best[...] = tap
            continue
        if index:
            xp.greater(tap, best, out=upd)
            am -= upd * (am - t)
            if nan:
                xp.isnan(tap, out=upd)
                am -= upd * (am - t)
        xp.maximum(best, tap, out=best)  # NaN propagates
    return best, am


def _argmax(xp, win):
    """torch's choice in each window (along the last axis): the first maximum, but the last
    NaN."""
    am = xp.argmax(win, axis=-1)
    if win.dtype.kind == "f":
        nan = xp.isnan(win)
        last = win.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        am = xp.where(nan.any(axis=-1), last, am)
    return am


def _onto(xp, win, g, am=None):
    """``g`` placed on each window's chosen maximum, zeros elsewhere (a one-hot product:
    no ``put_along_axis``, which not every array module has)."""
    if not win.size:
        return xp.zeros(win.shape, g.dtype)
    am = _argmax(xp, win) if am is None else am
    hot = xp.arange(win.shape[-1]) == am[..., None]
    return xp.where(hot, g[..., None], xp.zeros((), g.dtype))  # a NaN gradient stays put


def _padded_max(xp, pieces, places, shape, pads, dtype):
    return fill(xp, pieces, places, shape, pads, _lowest(xp, np.dtype(dtype)), dtype)


@kernel
def max_pool_block(xp, *pieces, places, shape, pads, dtype, k, stride, dilation, o0, out_sp):
    """Window maxima of one output block (NaN propagates), from its input region's pieces."""
    xpad = _padded_max(xp, pieces, places, shape, pads, dtype)
    return _running_max(xp, xpad, k, stride, dilation, out_sp)[0]


@kernel
def max_pool_index(xp, *pieces, places, shape, pads, dtype, k, stride, dilation, o0, out_sp,
                   before, sizes):  # fmt: skip
    """Flat positions (over the spatial dims) of the window maxima, int64 as torch
    (``before``: the input's padding before each spatial dim; ``sizes``: the input's)."""
    xpad = _padded_max(xp, pieces, places, shape, pads, dtype)
    am = _running_max(xp, xpad, k, stride, dilation, out_sp, index=True)[1].astype(np.int64)
    nd, flat = len(k), 0
    for a in range(nd):
        tap = (am // math.prod(k[a + 1 :])) % k[a]  # the window's tap along dim a
        at = [1] * nd
        at[a] = out_sp[a]
        start = (o0[a] + xp.arange(out_sp[a])) * stride[a] - before[a]
        flat = flat * sizes[a] + start.reshape(at) + tap * dilation[a]
    return flat.astype(np.int64)


def _pool_spec(x, k, stride, pads, dilation, out_sp):
    return tuple(x.shape[:2]) + tuple(out_sp), x.dtype


@primitive("max_pool", kernels=[max_pool_block], out_spec=_pool_spec, kind="pool")
def _max_pool_plan(ex, x, k, stride, pads, dilation, out_sp):
    wins = _wins(x.shape[2:], k, stride, pads, dilation, out_sp)
    params = {"k": k, "stride": stride, "dilation": dilation}
    return _windowed(ex, "max_pool_block", x, wins, x._dtype, params)


@primitive("max_pool_indices", kernels=[max_pool_index], kind="pool")
def _max_pool_indices_plan(ex, x, k, stride, pads, dilation, out_sp):
    wins = _wins(x.shape[2:], k, stride, pads, dilation, out_sp)
    params = {"k": k, "stride": stride, "dilation": dilation, "sizes": tuple(x.shape[2:])}
    params["before"] = tuple(p[0] for p in pads)
    return _windowed(ex, "max_pool_index", x, wins, D.int64, params)


@kernel
def max_pool_grad_block(xp, *pieces, gplaces, gshape, places, shape, pads, dtype, k, stride,
                        dilation, org, lo, size):  # fmt: skip
    """The input gradient over the block ``[lo, lo + size)``: each output gradient of the
    windows reaching into it (``pieces``: theirs, then the input region they read) added
    onto its window's chosen maximum, tap by tap."""
    ng = len(gplaces)
    g = fill(xp, pieces[:ng], gplaces, gshape, ((0, 0),) * len(k), 0, dtype)
    xpad = _padded_max(xp, pieces[ng:], places, shape, pads, dtype)
    am = _running_max(xp, xpad, k, stride, dilation, gshape[2:], index=True)[1]
    buf = xp.zeros(xpad.shape, dtype=g.dtype)
    zero = xp.zeros((), g.dtype)
    for t, view in _taps(buf, k, stride, dilation, gshape[2:]):
        view += xp.where(am == t, g, zero)  # a NaN gradient stays on its maximum
    return take(xp, buf, org, lo, size)


@primitive("max_pool_grad", kernels=[max_pool_grad_block], kind="pool")
def _max_pool_grad_plan(ex, g, x, k, stride, pads, dilation, out_sp):
    wins = _wins(x.shape[2:], k, stride, pads, dilation, out_sp)
    params = {"k": k, "stride": stride, "dilation": dilation}
    return _touching(ex, "max_pool_grad_block", g, x, x._layout, wins, params)


nondiff("max_pool_indices", "max_pool_grad")


@vjp("max_pool", saves=(0,))
def _max_pool_vjp(gs, node):
    return (apply("max_pool_grad", gs[0], *node.args),) + (None,) * 5


# ---------------------------------------------------------------------------- avg pool
def _divisor(xp, sp, k, stride, pad, o0, out_sp, count_include_pad, divisor_override):
    """The (*out_sp) divisors of the windows from ``o0`` on, as torch: the window clipped to
    the padded input, or to the input itself without ``count_include_pad``."""
    if divisor_override:
        return xp.full(tuple(out_sp), float(divisor_override))
    div = np.ones(())
    for a in range(len(k)):
        start = (o0[a] + np.arange(out_sp[a])) * stride[a] - pad[a]
        end = np.minimum(start + k[a], sp[a] + pad[a])
        size = end - start
        if not count_include_pad:
            size = np.minimum(end, sp[a]) - np.maximum(start, 0)
        div = np.multiply.outer(div, size.astype(np.float64))
    return xp.asarray(div)


def _avg_params(wins, k, stride, pad, cip, dov):
    return {"k": k, "stride": stride, "pad": pad, "in_sp": tuple(w.n for w in wins),
            "count_include_pad": cip, "divisor_override": dov}  # fmt: skip


@kernel
def avg_pool_block(xp, *pieces, places, shape, pads, dtype, k, stride, pad, in_sp, o0, out_sp,
                   count_include_pad, divisor_override):  # fmt: skip
    """Window sums over the divisors (integers truncate, as torch's integer division) of
    one output block, from its input region's pieces."""
    xpad = fill(xp, pieces, places, shape, pads, 0, dtype)
    div = _divisor(xp, in_sp, k, stride, pad, o0, out_sp, count_include_pad, divisor_override)
    flt = xpad.dtype.kind == "f"
    acc = np.promote_types(xpad.dtype, np.float32) if flt else np.int64  # half sums in float
    s = xp.zeros(xpad.shape[:2] + tuple(out_sp), dtype=acc)
    for _, tap in _taps(xpad, k, stride, (1,) * len(k), out_sp):  # no prod(k) copy
        s += tap
    if flt:
        return (s / div.astype(acc)).astype(xpad.dtype, copy=False)
    d = div.astype(np.int64)  # a divisor_override may be negative: truncate toward zero
    q = xp.abs(s) // xp.abs(d)
    return (xp.sign(s) * xp.sign(d) * q).astype(xpad.dtype)


def _avg_spec(x, k, stride, pad, out_sp, cip, dov):
    return tuple(x.shape[:2]) + tuple(out_sp), x.dtype


def _avg_wins(sp, k, stride, pad, out_sp):
    """The windows of an average pool: its overhang (ceil_mode) as padding after."""
    nd = len(k)
    after = [right_pad(sp[a], k[a], stride[a], pad[a], 1, out_sp[a]) for a in range(nd)]
    return tuple(Win(sp[a], k[a], stride[a], 1, pad[a], after[a], out_sp[a]) for a in range(nd))


@primitive("avg_pool", kernels=[avg_pool_block], out_spec=_avg_spec, kind="pool")
def _avg_pool_plan(ex, x, k, stride, pad, out_sp, count_include_pad, divisor_override):
    wins = _avg_wins(x.shape[2:], k, stride, pad, out_sp)
    params = _avg_params(wins, k, stride, pad, count_include_pad, divisor_override)
    return _windowed(ex, "avg_pool_block", x, wins, x._dtype, params)


@kernel
def avg_pool_grad_block(xp, *pieces, gplaces, gshape, dtype, k, stride, pad, in_sp,
                        count_include_pad, divisor_override, org, lo, size):  # fmt: skip
    """The input gradient over the block ``[lo, lo + size)``: each output gradient of the
    windows reaching into it over its divisor, spread evenly over its window."""
    nd = len(k)
    g = fill(xp, pieces, gplaces, gshape, ((0, 0),) * nd, 0, dtype)
    out_sp = gshape[2:]
    o0 = tuple((org[a] + pad[a]) // stride[a] for a in range(nd))
    div = _divisor(xp, in_sp, k, stride, pad, o0, out_sp, count_include_pad, divisor_override)
    share = (g / div.astype(g.dtype))[(..., *(None,) * nd)]
    cols = xp.broadcast_to(share, g.shape + tuple(k))
    cover = tuple(max(0, (out_sp[a] - 1) * stride[a] + k[a]) for a in range(nd))
    buf = col2im(xp, cols, g.shape[:2] + cover, stride, (1,) * nd)
    return take(xp, buf, org, lo, size)


@primitive("avg_pool_grad", kernels=[avg_pool_grad_block], kind="pool")
def _avg_pool_grad_plan(ex, g, lay, k, stride, pad, out_sp, count_include_pad, divisor_override):
    wins = _avg_wins(lay.shape[2:], k, stride, pad, out_sp)
    params = _avg_params(wins, k, stride, pad, count_include_pad, divisor_override)
    return _touching(ex, "avg_pool_grad_block", g, None, lay, wins, params)


nondiff("avg_pool_grad")


@vjp("avg_pool")
def _avg_pool_vjp(gs, node):
    x, *rest = node.args
    return (apply("avg_pool_grad", gs[0], x._layout, *rest),) + (None,) * 6


# ---------------------------------------------------------------------------- adaptive
def _bins(n, m):
    """torch's adaptive windows: ``[floor(i*n/m), ceil((i+1)*n/m))`` for each of ``m`` bins."""
    return [((i * n) // m, -((-(i + 1) * n) // m)) for i in range(m)]


def _avg_matrix(xp, n, m, dtype):
    a = np.zeros((m, n))
    for i, (lo, hi) in enumerate(_bins(n, m)):
        a[i, lo:hi] = 1.0 / (hi - lo)
    return xp.asarray(a.astype(dtype))


@kernel
def adaptive_avg_block(xp, x, out_sp, grad=False):
    """Adaptive means as one small product per spatial dim (separable bins); with
    ``grad``, their transposes (``x`` is then the output gradient and ``out_sp`` the
    input's size)."""
    y = x
    for a in range(len(out_sp)):
        n, m = (out_sp[a], x.shape[2 + a]) if grad else (x.shape[2 + a], out_sp[a])
        mat = _avg_matrix(xp, n, m, x.dtype)  # (m, n): the forward's (n -> m), or its transpose
        y = xp.matmul(xp.moveaxis(y, 2 + a, -1), mat if grad else mat.T)
        y = xp.moveaxis(y, -1, 2 + a)
    return xp.ascontiguousarray(y.astype(x.dtype, copy=False))


def _adaptive_spec(x, out_sp):
    return tuple(x.shape[:2]) + tuple(out_sp), x.dtype


@primitive("adaptive_avg_pool", kernels=[adaptive_avg_block], out_spec=_adaptive_spec,
           kind="pool")  # fmt: skip
def _adaptive_avg_plan(ex, x, out_sp):
    shape = tuple(x.shape[:2]) + tuple(out_sp)
    return _local(ex, "adaptive_avg_block", x, shape, x._dtype, {"out_sp": out_sp})


@primitive("adaptive_avg_pool_grad", kernels=["adaptive_avg_block"], kind="pool")
def _adaptive_avg_grad_plan(ex, g, lay):
    out_sp = tuple(lay.shape[2:])
    glay = out_layout(lay, tuple(lay.shape[:2]) + tuple(g.shape[2:]), KEEP)
    params = {"out_sp": out_sp, "grad": True}
    return _local(ex, "adaptive_avg_block", lay, lay.shape, g._dtype, params, (g, glay))


nondiff("adaptive_avg_pool_grad")


@vjp("adaptive_avg_pool")
def _adaptive_avg_vjp(gs, node):
    return (apply("adaptive_avg_pool_grad", gs[0], node.args[0]._layout), None)


@kernel
def adaptive_max_block(xp, x, out_sp, what="values", g=None):
    """Adaptive maxima (``what``: ``"values"``, ``"indices"`` (flat over the spatial dims,
    int64) or ``"grad"``: ``g`` added onto each bin's maximum), one bin at a time."""
    n, c, sp = x.shape[0], x.shape[1], tuple(x.shape[2:])
    out = xp.zeros(x.shape if what == "grad" else (n, c) + tuple(out_sp),
                   np.int64 if what == "indices" else x.dtype)  # fmt: skip
    bins = [list(enumerate(_bins(sp[a], out_sp[a]))) for a in range(len(sp))]
    for cell in itertools.product(*bins):
        at = (slice(None), slice(None)) + tuple(i for i, _ in cell)
        box = (slice(None), slice(None)) + tuple(slice(lo, hi) for _, (lo, hi) in cell)
        dims = tuple(hi - lo for _, (lo, hi) in cell)
        win = x[box].reshape(n, c, math.prod(dims))
        am = _argmax(xp, win) if win.size else xp.zeros((n, c), np.int64)
        if what == "values":
            out[at] = xp.take_along_axis(win, am[..., None], -1)[..., 0]
        elif what == "indices":
            flat = 0
            for a, (_, (lo, _)) in enumerate(cell):
                flat = flat * sp[a] + lo + (am // math.prod(dims[a + 1 :])) % dims[a]
            out[at] = flat
        else:
            out[box] += _onto(xp, win, g[at], am).reshape((n, c) + dims)
    return out


@primitive("adaptive_max_pool", kernels=[adaptive_max_block], out_spec=_adaptive_spec,
           kind="pool")  # fmt: skip
def _adaptive_max_plan(ex, x, out_sp):
    shape = tuple(x.shape[:2]) + tuple(out_sp)
    return _local(ex, "adaptive_max_block", x, shape, x._dtype, {"out_sp": out_sp})


@primitive("adaptive_max_pool_indices", kernels=["adaptive_max_block"], kind="pool")
def _adaptive_max_indices_plan(ex, x, out_sp):
    shape = tuple(x.shape[:2]) + tuple(out_sp)
    params = {"out_sp": out_sp, "what": "indices"}
    return _local(ex, "adaptive_max_block", x, shape, D.int64, params)


@kernel
def adaptive_max_grad_block(xp, g, x, out_sp):
    """The adaptive max's input gradient (``g`` onto each bin's maximum)."""
    return adaptive_max_block(xp, x, out_sp, "grad", g)


@primitive("adaptive_max_pool_grad", kernels=[adaptive_max_grad_block], kind="pool")
def _adaptive_max_grad_plan(ex, g, x, out_sp):
    lay = x._layout
    glay = out_layout(lay, tuple(lay.shape[:2]) + tuple(out_sp), KEEP)
    params = {"out_sp": out_sp}
    return _local(ex, "adaptive_max_grad_block", x, lay.shape, g._dtype, params, (g, glay))


nondiff("adaptive_max_pool_indices", "adaptive_max_pool_grad")


@vjp("adaptive_max_pool", saves=(0,))
def _adaptive_max_vjp(gs, node):
    return (apply("adaptive_max_pool_grad", gs[0], *node.args), None)
