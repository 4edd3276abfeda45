"""Worker code shared by the convolution (:mod:`.prims.conv`) and pooling (:mod:`.prims.pool`)
kernels: the sliding-window view (im2col without a copy), its adjoint (col2im), the padded
block laid out from gathered pieces (own rows and halos), the window of a gradient buffer a
shard keeps, the overhang padding of the last window, and the convolution's GEMMs. Pure
functions of ``xp`` arrays; no primitives live here (the driver side is :mod:`.plan`).

The convolution multiplies the weight with im2col blocks of about :data:`BLOCK` elements:
a copy of the windows of a few rows (or images) at a time, so the copy stays in cache and
one GEMM per block does the work (a whole-image im2col writes ``kh*kw`` times the image to
memory first: 25x for a 5x5 kernel). Measured on one core against a sum of shifted
multiply-adds (one per tap) and a per-tap GEMM: the blocked im2col was the fastest for one
channel (1600x1600, 5x5: 14 ms, shifted multiply-adds 24-33 ms, whole im2col 90-140 ms) and
for 16->16 channels (4x16x64x64, 3x3: 2.6 ms, per-tap GEMMs 2.9 ms, whole im2col 6 ms).
A block costs about 25 us of the interpreter besides its copy and GEMM, and the kernel
threads of one worker share a GIL: blocks of 4 MiB rather than 1 MiB took two threads'
convolutions of two 800x1600 halves (5x5) from 14-25 ms to 8-9 ms, one thread's from 8
to 6.5 ms; 16 MiB blocks were slower again (out of cache).
"""

from __future__ import annotations

import itertools
import math

BLOCK = 1 << 19  # im2col elements per GEMM (4 MiB of float64): the copy stays in L3
DEVICE_BLOCK = 1 << 24  # on a GPU: big GEMMs, few launches (128 MiB of float64 at most)


def windows(xp, x, k, stride, dilation, out_sp):
    """The (n, C, *out_sp, *k) view of the windows of a padded (n, C, *spatial) block: a
    strided view (no copy), so a ``tensordot`` over it is im2col plus one GEMM."""
    sp = x.strides[2:]
    shape = x.shape[:2] + tuple(out_sp) + tuple(k)
    strides = (
        x.strides[:2]
        + tuple(s * t for s, t in zip(sp, stride))
        + tuple(s * d for s, d in zip(sp, dilation))
    )
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def tap_slices(k, stride, dilation, out_sp):
    """``(t, index)`` for each tap of a window (``t`` row-major over ``k``): the index of a
    padded (n, C, *spatial) block that every window reads at that tap, an (n, C, *out_sp)
    strided slice."""
    for t, tap in enumerate(itertools.product(*(range(i) for i in k))):
        idx = tuple(
            slice(i * d, i * d + s * (o - 1) + 1, s)
            for i, d, s, o in zip(tap, dilation, stride, out_sp)
        )
        yield t, (slice(None), slice(None)) + idx


def col2im(xp, cols, shape, stride, dilation):
    """The adjoint of :func:`windows`: a (n, C, *spatial) array (``shape``) where every
    window entry of ``cols`` (n, C, *out_sp, *k) is added back where it was read from."""
    out = xp.zeros(shape, dtype=cols.dtype)
    nd = len(shape) - 2
    out_sp, k = cols.shape[2 : 2 + nd], cols.shape[2 + nd :]
    if 0 in out_sp or out.size == 0:
        return out
    flat = cols.reshape(cols.shape[: 2 + nd] + (-1,))
    for t, idx in tap_slices(k, stride, dilation, out_sp):
        out[idx] += flat[..., t]
    return out


def pad_block(xp, x, pads, value=0):
    """``x`` (n, C, *spatial) padded by ``pads`` = ((before, after), ...) with ``value``."""
    if not any(p for pp in pads for p in pp):
        return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple(tuple(p) for p in pads), constant_values=value)


def right_pad(n, k, s, p, d, out):
    """Padding after the end that the last of ``out`` windows reads (ceil_mode's overhang),
    so the kernel can take all windows from one padded block."""
    need = (out - 1) * s + d * (k - 1) + 1 if out > 0 else 0
    return max(0, need - n - p)


def fill(xp, pieces, places, shape, pads, value, dtype):
    """The (n, C, *spatial) block of data ``shape`` padded by ``pads`` = ((before, after),
    ...) with ``value``, its data laid from ``pieces`` (piece ``i`` at ``places[i]``, one
    ``(lo, hi)`` per dim of the data). A single piece that is the whole block is used as is."""
    padded = any(p for pp in pads for p in pp)
    if len(pieces) == 1 and not padded and tuple(pieces[0].shape) == tuple(shape):
        return pieces[0]
    before = tuple(p[0] for p in pads)
    full = tuple(shape[:2]) + tuple(b + m + a for m, (b, a) in zip(shape[2:], pads))
    out = xp.empty(full, dtype=dtype)
    for a, ((b, e), m) in enumerate(zip(pads, shape[2:])):  # the padding slabs of each dim
        lead = (slice(None),) * (2 + a)
        out[lead + (slice(0, b),)] = value
        out[lead + (slice(b + m, None),)] = value
    for p, pl in zip(pieces, places):
        off = (0, 0) + before
        out[tuple(slice(o + lo, o + hi) for o, (lo, hi) in zip(off, pl))] = p
    return out


def take(xp, buf, org, lo, size):
    """The block ``[lo, lo + size)`` (input coordinates, per spatial dim) of a (n, C,
    *spatial) gradient buffer whose origin sits at ``org``; zero where the buffer does not
    reach."""
    nd = len(size)
    a = [lo[i] - org[i] for i in range(nd)]
    if all(0 <= a[i] and a[i] + size[i] <= buf.shape[2 + i] for i in range(nd)):
        return xp.ascontiguousarray(buf[(..., *(slice(a[i], a[i] + size[i]) for i in range(nd)))])
    out = xp.zeros(buf.shape[:2] + tuple(size), dtype=buf.dtype)
    s = [max(0, -a[i]) for i in range(nd)]  # the first entry of out the buffer covers
    e = [min(size[i], buf.shape[2 + i] - a[i]) for i in range(nd)]
    if all(e[i] > s[i] for i in range(nd)):
        src = tuple(slice(a[i] + s[i], a[i] + e[i]) for i in range(nd))
        out[(..., *(slice(s[i], e[i]) for i in range(nd)))] = buf[(..., *src)]
    return out


# ------------------------------------------------------------------ convolution GEMMs
def _blocks(xp, n, oh, per_row, min_rows=1):
    """(images, rows) slices of an (n, oh) grid of output rows (the first spatial dim),
    each about :data:`BLOCK` im2col elements (``per_row`` per output row; :data:`DEVICE_BLOCK`
    on a GPU): whole images while they fit, else rows (at least ``min_rows``)."""
    if n == 0 or oh == 0 or per_row == 0:
        return
    block = BLOCK if xp.__name__ == "numpy" else DEVICE_BLOCK
    if per_row * oh <= block:
        nb = max(1, block // (per_row * oh))
        for a in range(0, n, nb):
            yield slice(a, min(n, a + nb)), slice(0, oh)
        return
    rb = max(min_rows, block // per_row)
    for a in range(n):
        for r in range(0, oh, rb):
            yield slice(a, a + 1), slice(r, min(oh, r + rb))


def _im2col(xp, cols, ns, rs, groups):
    """The (G, Cg*prod(k), nb*rb*prod(rest)) im2col block of the windows ``cols`` (n, C,
    *out_sp, *k) of images ``ns`` and output rows ``rs``: one copy, in cache."""
    v = cols[ns, :, rs]
    nd = (v.ndim - 2) // 2
    nb, c = v.shape[:2]
    out_sp, k = v.shape[2 : 2 + nd], v.shape[2 + nd :]
    v = v.reshape((nb, groups, c // groups) + out_sp + k)
    kax = tuple(range(3 + nd, 3 + 2 * nd))
    v = v.transpose((1, 2) + kax + (0,) + tuple(range(3, 3 + nd)))
    return v.reshape(groups, (c // groups) * math.prod(k), nb * math.prod(out_sp))


def conv_forward(xp, xpad, w, stride, dilation, groups, out_sp, alloc=None):
    """Cross-correlation of a padded (n, C, *spatial) block with the (O, C/groups, *k)
    weight: the (n, O, *out_sp) output (in ``alloc``'s block where it gives one), one
    batched GEMM per im2col block."""
    n = xpad.shape[0]
    o, cg, k = w.shape[0], w.shape[1], tuple(w.shape[2:])
    shape = (n, o) + tuple(out_sp)
    out = alloc(shape, xpad.dtype) if alloc is not None else None
    out = xp.empty(shape, dtype=xpad.dtype) if out is None else out
    cols = windows(xp, xpad, k, stride, dilation, out_sp)
    kk = cg * math.prod(k)
    wm = w.reshape(groups, o // groups, kk)
    rest = tuple(out_sp[1:])
    for ns, rs in _blocks(xp, n, out_sp[0], groups * kk * math.prod(rest)):
        res = xp.matmul(wm, _im2col(xp, cols, ns, rs, groups))  # (G, Og, nb*rb*rest)
        nb, rb = ns.stop - ns.start, rs.stop - rs.start
        out[ns, :, rs] = xp.moveaxis(res.reshape((o, nb, rb) + rest), 0, 1)
    return out


def conv_grad_input(xp, g, w, stride, dilation, groups, size):
    """The input gradient of windows ``g`` (n, O, *out_sp) over a block whose first window
    starts at its origin: a (n, C, *size) buffer (``size`` covers every window), each
    window's ``g @ W`` added where it was read. With stride 1 that is the correlation of
    ``g``, zero-padded by a window, with the flipped weight (:func:`conv_forward`'s GEMMs);
    with a stride, col2im of ``W.T @ g`` a block at a time."""
    n, o = g.shape[:2]
    out_sp, nd = tuple(g.shape[2:]), g.ndim - 2
    cg, k = w.shape[1], tuple(w.shape[2:])
    c, og = cg * groups, o // groups
    if all(s == 1 for s in stride):
        t = [dilation[a] * (k[a] - 1) for a in range(nd)]
        gpad = pad_block(xp, g, tuple((i, i) for i in t))
        wf = w.reshape((groups, og, cg) + k).swapaxes(1, 2)
        wf = wf[(..., *(slice(None, None, -1),) * nd)]
        return conv_forward(xp, gpad, wf.reshape((c, og) + k), stride, dilation, groups, size)
    buf = xp.zeros((n, c) + tuple(size), dtype=g.dtype)
    kk = cg * math.prod(k)
    wt = w.reshape(groups, og, kk).transpose(0, 2, 1)  # (G, K, Og)
    rest = out_sp[1:]
    # at least 8 rows a block: prod(k) strided adds per block are the loop's cost here
    for ns, rs in _blocks(xp, n, out_sp[0], c * math.prod(k) * math.prod(rest), min_rows=8):
        nb, rb = ns.stop - ns.start, rs.stop - rs.start
        gb = g[ns, :, rs].reshape(nb, groups, og, -1).transpose(1, 2, 0, 3)
        d = xp.matmul(wt, gb.reshape(groups, og, -1))  # (G, K, nb*rb*rest)
        d = d.reshape((c, math.prod(k), nb, rb) + rest)
        view = buf[ns, :, rs.start * stride[0] :]
        for t, idx in tap_slices(k, stride, dilation, (rb,) + rest):
            view[idx] += xp.moveaxis(d[:, t], 0, 1)  # (nb, C, rb, *rest)
    return buf


def conv_grad_weight(xp, xpad, g, k, stride, dilation, groups):
    """The weight gradient (O, C/groups, *k) of windows ``g`` (n, O, *out_sp) over the
    padded block ``xpad``: ``g @ im2col.T`` summed block by block."""
    n, o = g.shape[:2]
    out_sp = tuple(g.shape[2:])
    c = xpad.shape[1]
    cols = windows(xp, xpad, k, stride, dilation, out_sp)
    kk = (c // groups) * math.prod(k)
    dw = xp.zeros((groups, o // groups, kk), dtype=g.dtype)
    for ns, rs in _blocks(xp, n, out_sp[0], c * math.prod(k) * math.prod(out_sp[1:])):
        nb = ns.stop - ns.start
        gb = g[ns, :, rs].reshape(nb, groups, o // groups, -1).transpose(1, 2, 0, 3)
        gb = gb.reshape(groups, o // groups, -1)
        dw += xp.matmul(gb, _im2col(xp, cols, ns, rs, groups).transpose(0, 2, 1))
    return dw.reshape((o, c // groups) + tuple(k))
