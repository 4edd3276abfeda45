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
"""

from __future__ import annotations

BLOCK = 1 << 17  # im2col elements per GEMM (1 MiB of float64): the copy stays in cache
DEVICE_BLOCK = 1 << 24  # on a GPU: big GEMMs, few launches (128 MiB of float64 at most)


def windows(xp, x, k, stride, dilation, out_hw):
    """The (n, C, OH, OW, kh, kw) view of the windows of a padded (n, C, H, W) block: a
    strided view (no copy), so a ``tensordot`` over it is im2col plus one GEMM."""
    s0, s1, s2, s3 = x.strides
    shape = x.shape[:2] + tuple(out_hw) + tuple(k)
    strides = (
        s0,
        s1,
        s2 * stride[0],
        s3 * stride[1],
        s2 * dilation[0],
        s3 * dilation[1],
    )
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def col2im(xp, cols, shape, stride, dilation):
    """The adjoint of :func:`windows`: a (n, C, H, W) array (``shape``) where every window
    entry of ``cols`` (n, C, OH, OW, kh, kw) is added back where it was read from."""
    out = xp.zeros(shape, dtype=cols.dtype)
    oh, ow, kh, kw = cols.shape[2:]
    if oh == 0 or ow == 0 or out.size == 0:
        return out
    sh, sw = stride
    for i in range(kh):
        r = i * dilation[0]
        for j in range(kw):
            c = j * dilation[1]
            out[:, :, r : r + sh * (oh - 1) + 1 : sh, c : c + sw * (ow - 1) + 1 : sw] += cols[
                :, :, :, :, i, j
            ]
    return out


def pad_block(xp, x, pads, value=0):
    """``x`` (n, C, H, W) padded by ``pads`` = ((top, bottom), (left, right)) with ``value``."""
    if not any(p for pp in pads for p in pp):
        return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple(tuple(p) for p in pads), constant_values=value)


def right_pad(n, k, s, p, d, out):
    """Padding after the end that the last of ``out`` windows reads (ceil_mode's overhang),
    so the kernel can take all windows from one padded block."""
    need = (out - 1) * s + d * (k - 1) + 1 if out > 0 else 0
    return max(0, need - n - p)


def fill(xp, pieces, places, shape, pads, value, dtype):
    """The (n, C, H, W) block of data ``shape`` padded by ``pads`` = ((top, bottom), (left,
    right)) with ``value``, its data laid from ``pieces`` (piece ``i`` at ``places[i]``, one
    ``(lo, hi)`` per dim of the data). A single piece that is the whole block is used as is."""
    (top, bottom), (left, right) = pads
    padded = top or bottom or left or right
    if len(pieces) == 1 and not padded and tuple(pieces[0].shape) == tuple(shape):
        return pieces[0]
    n, c, h, w = shape
    out = xp.empty((n, c, top + h + bottom, left + w + right), dtype=dtype)
    if padded:  # the padding only: the pieces tile the data
        out[:, :, :top] = value
        out[:, :, top + h :] = value
        out[:, :, top : top + h, :left] = value
        out[:, :, top : top + h, left + w :] = value
    for p, pl in zip(pieces, places):
        (n0, n1), (c0, c1), (r0, r1), (q0, q1) = pl
        out[n0:n1, c0:c1, top + r0 : top + r1, left + q0 : left + q1] = p
    return out


def take(xp, buf, org, lo, hw):
    """Rows and columns ``[lo, lo + hw)`` (input coordinates) of a (n, C, H, W) gradient
    buffer whose ``[0, 0]`` sits at ``org``; zero where the buffer does not reach."""
    a = [lo[i] - org[i] for i in range(2)]
    if all(0 <= a[i] and a[i] + hw[i] <= buf.shape[2 + i] for i in range(2)):
        return xp.ascontiguousarray(buf[:, :, a[0] : a[0] + hw[0], a[1] : a[1] + hw[1]])
    out = xp.zeros(buf.shape[:2] + tuple(hw), dtype=buf.dtype)
    s = [max(0, -a[i]) for i in range(2)]  # first row/column of out the buffer covers
    e = [min(hw[i], buf.shape[2 + i] - a[i]) for i in range(2)]
    if e[0] > s[0] and e[1] > s[1]:
        out[:, :, s[0] : e[0], s[1] : e[1]] = buf[
            :, :, a[0] + s[0] : a[0] + e[0], a[1] + s[1] : a[1] + e[1]
        ]
    return out


# ------------------------------------------------------------------ convolution GEMMs
def _blocks(xp, n, oh, per_row, min_rows=1):
    """(images, rows) slices of an (n, oh) grid of output rows, each about :data:`BLOCK`
    im2col elements (``per_row`` per output row; :data:`DEVICE_BLOCK` on a GPU): whole
    images while they fit, else rows (at least ``min_rows``)."""
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
    """The (G, Cg*kh*kw, nb*rb*OW) im2col block of the windows ``cols`` (n, C, OH, OW,
    kh, kw) of images ``ns`` and output rows ``rs``: one copy, in cache."""
    v = cols[ns, :, rs]
    nb, c, rb, ow, kh, kw = v.shape
    v = v.reshape(nb, groups, c // groups, rb, ow, kh, kw).transpose(1, 2, 5, 6, 0, 3, 4)
    return v.reshape(groups, (c // groups) * kh * kw, nb * rb * ow)


def conv_forward(xp, xpad, w, stride, dilation, groups, out_hw):
    """Cross-correlation of a padded (n, C, H, W) block with the (O, C/groups, kh, kw)
    weight: the (n, O, *out_hw) output, one batched GEMM per im2col block."""
    n = xpad.shape[0]
    o, cg, kh, kw = w.shape
    out = xp.empty((n, o) + tuple(out_hw), dtype=xpad.dtype)
    cols = windows(xp, xpad, (kh, kw), stride, dilation, out_hw)
    wm = w.reshape(groups, o // groups, cg * kh * kw)
    for ns, rs in _blocks(xp, n, out_hw[0], groups * cg * kh * kw * out_hw[1]):
        res = xp.matmul(wm, _im2col(xp, cols, ns, rs, groups))  # (G, Og, nb*rb*OW)
        nb, rb = ns.stop - ns.start, rs.stop - rs.start
        out[ns, :, rs] = xp.moveaxis(res.reshape(o, nb, rb, out_hw[1]), 0, 1)
    return out


def conv_grad_input(xp, g, w, stride, dilation, groups, hw):
    """The input gradient of windows ``g`` (n, O, OH, OW) over a block whose first window
    starts at ``[0, 0]``: a (n, C, *hw) buffer (``hw`` covers every window), each window's
    ``g @ W`` added where it was read. With stride 1 that is the correlation of ``g``,
    zero-padded by a window, with the flipped weight (:func:`conv_forward`'s GEMMs); with
    a stride, col2im of ``W.T @ g`` a block at a time."""
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    c, og = cg * groups, o // groups
    if tuple(stride) == (1, 1):
        t = [dilation[a] * (w.shape[2 + a] - 1) for a in range(2)]
        gpad = pad_block(xp, g, ((t[0], t[0]), (t[1], t[1])))
        wf = w.reshape(groups, og, cg, kh, kw).transpose(0, 2, 1, 3, 4)[..., ::-1, ::-1]
        return conv_forward(xp, gpad, wf.reshape(c, og, kh, kw), (1, 1), dilation, groups, hw)
    buf = xp.zeros((n, c) + tuple(hw), dtype=g.dtype)
    wt = w.reshape(groups, og, cg * kh * kw).transpose(0, 2, 1)  # (G, K, Og)
    (sh, sw), (dh, dw) = stride, dilation
    # at least 8 rows a block: kh*kw strided adds per block are the loop's cost here
    for ns, rs in _blocks(xp, n, oh, c * kh * kw * ow, min_rows=8):
        nb, rb = ns.stop - ns.start, rs.stop - rs.start
        gb = g[ns, :, rs].reshape(nb, groups, og, rb * ow).transpose(1, 2, 0, 3)
        d = xp.matmul(wt, gb.reshape(groups, og, nb * rb * ow))
        d = d.reshape(c, kh, kw, nb, rb, ow)
        for i in range(kh):
            r = rs.start * sh + i * dh
            for j in range(kw):
                q = j * dw
                part = xp.moveaxis(d[:, i, j], 0, 1)  # (nb, C, rb, OW)
                buf[ns, :, r : r + sh * (rb - 1) + 1 : sh, q : q + sw * (ow - 1) + 1 : sw] += part
    return buf


def conv_grad_weight(xp, xpad, g, k, stride, dilation, groups):
    """The weight gradient (O, C/groups, kh, kw) of windows ``g`` (n, O, OH, OW) over the
    padded block ``xpad``: ``g @ im2col.T`` summed block by block."""
    n, o, oh, ow = g.shape
    c = xpad.shape[1]
    cols = windows(xp, xpad, k, stride, dilation, (oh, ow))
    kk = (c // groups) * k[0] * k[1]
    dw = xp.zeros((groups, o // groups, kk), dtype=g.dtype)
    for ns, rs in _blocks(xp, n, oh, c * k[0] * k[1] * ow):
        nb, rb = ns.stop - ns.start, rs.stop - rs.start
        gb = g[ns, :, rs].reshape(nb, groups, o // groups, rb * ow).transpose(1, 2, 0, 3)
        gb = gb.reshape(groups, o // groups, nb * rb * ow)
        dw += xp.matmul(gb, _im2col(xp, cols, ns, rs, groups).transpose(0, 2, 1))
    return dw.reshape((o, c // groups) + tuple(k))
