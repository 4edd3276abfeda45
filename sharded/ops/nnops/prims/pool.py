"""The pooling primitives over (N, C, H, W) blocks (max, average, adaptive average and
adaptive max; their indices and gradients); the public functions are in :mod:`.pool`.

Every window lies inside one image and one channel, so shards split along N or C pool where
they are; a split along H or W is resharded to a batch split first. The 1-D forms are the 2-D
ones over rows of height 1. Gradients are local too: col2im of the pooled gradient spread
over its windows (max: onto each window's first maximum, NaN wins, as torch).
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, align, free_temps
from ....core.dispatch import apply
from ....core.registry import kernel, nondiff, primitive, vjp
from ....runtime.commands import Key
from ..kernels import col2im, crop, pad_block, right_pad, windows
from ..plan import out_layout, submit_local

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


# ---------------------------------------------------------------------------- max pool
def _max_windows(xp, x, k, stride, pads, dilation, out_hw):
    """(n, C, OH, OW, kh*kw) windows of ``x`` padded with the lowest value."""
    xpad = pad_block(xp, x, pads, _lowest(xp, x.dtype))
    cols = windows(xp, xpad, k, stride, dilation, out_hw)
    return cols.reshape(cols.shape[:4] + (k[0] * k[1],))  # explicit: blocks may be empty


def _argmax(xp, win):
    """torch's choice in each window: the first maximum, but the last NaN (a NaN replaces
    the running maximum whenever one is met)."""
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


@kernel
def max_pool2d_block(xp, x, k, stride, pads, dilation, out_hw):
    """Window maxima (NaN propagates)."""
    win = _max_windows(xp, x, k, stride, pads, dilation, out_hw)
    if win.shape[-1] == 0 or win.size == 0:
        return xp.zeros(win.shape[:4], x.dtype)
    return xp.ascontiguousarray(xp.take_along_axis(win, _argmax(xp, win)[..., None], -1)[..., 0])


@kernel
def max_pool2d_index(xp, x, k, stride, pads, dilation, out_hw):
    """Flat (H*W) positions of the window maxima, int64 as torch."""
    win = _max_windows(xp, x, k, stride, pads, dilation, out_hw)
    am = _argmax(xp, win) if win.size else xp.zeros(win.shape[:4], np.int64)
    i, j = am // k[1], am % k[1]
    oh = xp.arange(out_hw[0]).reshape(-1, 1)
    ow = xp.arange(out_hw[1]).reshape(1, -1)
    r = oh * stride[0] - pads[0][0] + i * dilation[0]
    c = ow * stride[1] - pads[1][0] + j * dilation[1]
    return (r * x.shape[3] + c).astype(np.int64)


def _pool_spec(x, k, stride, pads, dilation, out_hw):
    return tuple(x.shape[:2]) + tuple(out_hw), x.dtype


@primitive("max_pool2d", kernels=[max_pool2d_block], out_spec=_pool_spec, kind="pool")
def _max_pool2d_plan(ex, x, k, stride, pads, dilation, out_hw):
    shape, dt = _pool_spec(x, k, stride, pads, dilation, out_hw)
    params = {"k": k, "stride": stride, "pads": pads, "dilation": dilation, "out_hw": out_hw}
    return _local(ex, "max_pool2d_block", x, shape, x._dtype, params)


@primitive("max_pool2d_indices", kernels=[max_pool2d_index], kind="pool")
def _max_pool2d_indices_plan(ex, x, k, stride, pads, dilation, out_hw):
    shape, _ = _pool_spec(x, k, stride, pads, dilation, out_hw)
    params = {"k": k, "stride": stride, "pads": pads, "dilation": dilation, "out_hw": out_hw}
    return _local(ex, "max_pool2d_index", x, shape, D.int64, params)


@kernel
def max_pool2d_grad_block(xp, g, x, k, stride, pads, dilation, out_hw):
    """Each output gradient added onto its window's chosen maximum."""
    win = _max_windows(xp, x, k, stride, pads, dilation, out_hw)
    kk = k[0] * k[1]
    hot = _onto(xp, win, g)
    cols = hot.reshape(hot.shape[:4] + tuple(k)) if kk else hot
    n, c, h, w = x.shape
    shape = (n, c, h + pads[0][0] + pads[0][1], w + pads[1][0] + pads[1][1])
    return xp.ascontiguousarray(crop(col2im(xp, cols, shape, stride, dilation), pads, (h, w)))


@primitive("max_pool2d_grad", kernels=[max_pool2d_grad_block], kind="pool")
def _max_pool2d_grad_plan(ex, g, x, k, stride, pads, dilation, out_hw):
    lay = x._layout
    glay = out_layout(lay, tuple(lay.shape[:2]) + tuple(out_hw), KEEP)
    params = {"k": k, "stride": stride, "pads": pads, "dilation": dilation, "out_hw": out_hw}
    return _local(ex, "max_pool2d_grad_block", x, lay.shape, g._dtype, params, (g, glay))


nondiff("max_pool2d_indices", "max_pool2d_grad")


@vjp("max_pool2d", saves=(0,))
def _max_pool2d_vjp(gs, node):
    return (apply("max_pool2d_grad", gs[0], *node.args),) + (None,) * 5


# ---------------------------------------------------------------------------- avg pool
def _divisor(xp, hw, k, stride, pad, out_hw, count_include_pad, divisor_override):
    """(OH, OW) divisors as torch: the window clipped to the padded input, or to the input
    itself without ``count_include_pad``."""
    if divisor_override:
        return xp.full(tuple(out_hw), float(divisor_override))
    sizes = []
    for a in range(2):
        start = np.arange(out_hw[a]) * stride[a] - pad[a]
        end = np.minimum(start + k[a], hw[a] + pad[a])
        size = end - start
        if not count_include_pad:
            size = np.minimum(end, hw[a]) - np.maximum(start, 0)
        sizes.append(size.astype(np.float64))
    return xp.asarray(np.outer(sizes[0], sizes[1]))


@kernel
def avg_pool2d_block(xp, x, k, stride, pad, out_hw, count_include_pad, divisor_override):
    """Window sums over the divisors (integers truncate, as torch's integer division)."""
    pads = tuple((pad[a], right_pad(x.shape[2 + a], k[a], stride[a], pad[a], 1, out_hw[a]))
                 for a in range(2))  # fmt: skip
    cols = windows(xp, pad_block(xp, x, pads), k, stride, (1, 1), out_hw)
    div = _divisor(xp, x.shape[2:], k, stride, pad, out_hw, count_include_pad, divisor_override)
    if x.dtype.kind == "f":
        return xp.ascontiguousarray(cols.sum(axis=(4, 5)) / div.astype(x.dtype))
    s = cols.sum(axis=(4, 5), dtype=np.int64)
    q = xp.abs(s) // div.astype(np.int64)
    return (xp.sign(s) * q).astype(x.dtype)


def _avg_spec(x, k, stride, pad, out_hw, cip, dov):
    return tuple(x.shape[:2]) + tuple(out_hw), x.dtype


@primitive("avg_pool2d", kernels=[avg_pool2d_block], out_spec=_avg_spec, kind="pool")
def _avg_pool2d_plan(ex, x, k, stride, pad, out_hw, count_include_pad, divisor_override):
    params = {"k": k, "stride": stride, "pad": pad, "out_hw": out_hw}
    params.update(count_include_pad=count_include_pad, divisor_override=divisor_override)
    shape = tuple(x.shape[:2]) + tuple(out_hw)
    return _local(ex, "avg_pool2d_block", x, shape, x._dtype, params)


@kernel
def avg_pool2d_grad_block(xp, g, hw, k, stride, pad, out_hw, count_include_pad, divisor_override):
    """Each output gradient over its divisor, spread evenly over its window."""
    div = _divisor(xp, hw, k, stride, pad, out_hw, count_include_pad, divisor_override)
    share = (g / div.astype(g.dtype))[..., None, None]
    cols = xp.broadcast_to(share, g.shape + tuple(k))
    pads = tuple((pad[a], right_pad(hw[a], k[a], stride[a], pad[a], 1, out_hw[a])) for a in (0, 1))
    shape = g.shape[:2] + tuple(hw[a] + sum(pads[a]) for a in (0, 1))
    return xp.ascontiguousarray(crop(col2im(xp, cols, shape, stride, (1, 1)), pads, hw))


@primitive("avg_pool2d_grad", kernels=[avg_pool2d_grad_block], kind="pool")
def _avg_pool2d_grad_plan(ex, g, lay, k, stride, pad, out_hw, count_include_pad, divisor_override):
    glay = out_layout(lay, tuple(lay.shape[:2]) + tuple(out_hw), KEEP)
    params = {"hw": tuple(lay.shape[2:]), "k": k, "stride": stride, "pad": pad, "out_hw": out_hw}
    params.update(count_include_pad=count_include_pad, divisor_override=divisor_override)
    return _local(ex, "avg_pool2d_grad_block", lay, lay.shape, g._dtype, params, (g, glay))


nondiff("avg_pool2d_grad")


@vjp("avg_pool2d")
def _avg_pool2d_vjp(gs, node):
    x, *rest = node.args
    return (apply("avg_pool2d_grad", gs[0], x._layout, *rest),) + (None,) * 6


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
def adaptive_avg_block(xp, x, out_hw, grad=False):
    """Adaptive means as two small products (separable bins); with ``grad``, their
    transposes (``x`` is then the output gradient and ``out_hw`` the input's size)."""
    if grad:  # the forward's (g's size x input's size) matrices, transposed
        ah = _avg_matrix(xp, out_hw[0], x.shape[2], x.dtype).T
        aw = _avg_matrix(xp, out_hw[1], x.shape[3], x.dtype).T
    else:
        ah = _avg_matrix(xp, x.shape[2], out_hw[0], x.dtype)
        aw = _avg_matrix(xp, x.shape[3], out_hw[1], x.dtype)
    y = xp.matmul(xp.matmul(ah, x), aw.T)
    return xp.ascontiguousarray(y.astype(x.dtype, copy=False))


def _adaptive_spec(x, out_hw):
    return tuple(x.shape[:2]) + tuple(out_hw), x.dtype


@primitive("adaptive_avg_pool2d", kernels=[adaptive_avg_block], out_spec=_adaptive_spec,
           kind="pool")  # fmt: skip
def _adaptive_avg_plan(ex, x, out_hw):
    shape = tuple(x.shape[:2]) + tuple(out_hw)
    return _local(ex, "adaptive_avg_block", x, shape, x._dtype, {"out_hw": out_hw})


@primitive("adaptive_avg_pool2d_grad", kernels=["adaptive_avg_block"], kind="pool")
def _adaptive_avg_grad_plan(ex, g, lay):
    out_hw = tuple(lay.shape[2:])
    glay = out_layout(lay, tuple(lay.shape[:2]) + tuple(g.shape[2:]), KEEP)
    params = {"out_hw": out_hw, "grad": True}
    return _local(ex, "adaptive_avg_block", lay, lay.shape, g._dtype, params, (g, glay))


nondiff("adaptive_avg_pool2d_grad")


@vjp("adaptive_avg_pool2d")
def _adaptive_avg_vjp(gs, node):
    return (apply("adaptive_avg_pool2d_grad", gs[0], node.args[0]._layout), None)


@kernel
def adaptive_max_block(xp, x, out_hw, what="values", g=None):
    """Adaptive maxima (``what``: ``"values"``, ``"indices"`` (flat H*W, int64) or
    ``"grad"``: ``g`` added onto each bin's maximum), one bin at a time."""
    n, c, h, w = x.shape
    out = xp.zeros(x.shape if what == "grad" else (n, c) + tuple(out_hw),
                   np.int64 if what == "indices" else x.dtype)  # fmt: skip
    for i, (r0, r1) in enumerate(_bins(h, out_hw[0])):
        for j, (c0, c1) in enumerate(_bins(w, out_hw[1])):
            win = x[:, :, r0:r1, c0:c1].reshape(n, c, (r1 - r0) * (c1 - c0))
            am = _argmax(xp, win) if win.size else xp.zeros((n, c), np.int64)
            if what == "values":
                out[:, :, i, j] = xp.take_along_axis(win, am[..., None], -1)[..., 0]
            elif what == "indices":
                out[:, :, i, j] = (r0 + am // (c1 - c0)) * w + c0 + am % (c1 - c0)
            else:
                hot = _onto(xp, win, g[:, :, i, j], am)
                out[:, :, r0:r1, c0:c1] += hot.reshape(n, c, r1 - r0, c1 - c0)
    return out


@primitive("adaptive_max_pool2d", kernels=[adaptive_max_block], out_spec=_adaptive_spec,
           kind="pool")  # fmt: skip
def _adaptive_max_plan(ex, x, out_hw):
    shape = tuple(x.shape[:2]) + tuple(out_hw)
    return _local(ex, "adaptive_max_block", x, shape, x._dtype, {"out_hw": out_hw})


@primitive("adaptive_max_pool2d_indices", kernels=["adaptive_max_block"], kind="pool")
def _adaptive_max_indices_plan(ex, x, out_hw):
    shape = tuple(x.shape[:2]) + tuple(out_hw)
    params = {"out_hw": out_hw, "what": "indices"}
    return _local(ex, "adaptive_max_block", x, shape, D.int64, params)


@kernel
def adaptive_max_grad_block(xp, g, x, out_hw):
    """The adaptive max's input gradient (``g`` onto each bin's maximum)."""
    return adaptive_max_block(xp, x, out_hw, "grad", g)


@primitive("adaptive_max_pool2d_grad", kernels=[adaptive_max_grad_block], kind="pool")
def _adaptive_max_grad_plan(ex, g, x, out_hw):
    lay = x._layout
    glay = out_layout(lay, tuple(lay.shape[:2]) + tuple(out_hw), KEEP)
    params = {"out_hw": out_hw}
    return _local(ex, "adaptive_max_grad_block", x, lay.shape, g._dtype, params, (g, glay))


nondiff("adaptive_max_pool2d_indices", "adaptive_max_pool2d_grad")


@vjp("adaptive_max_pool2d", saves=(0,))
def _adaptive_max_vjp(gs, node):
    return (apply("adaptive_max_pool2d_grad", gs[0], *node.args), None)
