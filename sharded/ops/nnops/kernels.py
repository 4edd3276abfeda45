"""Worker code shared by the convolution (:mod:`.prims.conv`) and pooling (:mod:`.prims.pool`)
kernels: the sliding-window view (im2col without a copy), its adjoint (col2im), padding and
cropping of (N, C, H, W) blocks, and the overhang padding of the last window. Pure functions
of ``xp`` arrays; no primitives live here (the driver side is :mod:`.plan`).
"""

from __future__ import annotations


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


def crop(a, pads, hw):
    """The inverse of :func:`pad_block` for a gradient: the (H, W) = ``hw`` interior."""
    (t, _), (left, _) = pads
    return a[:, :, t : t + hw[0], left : left + hw[1]]


def right_pad(n, k, s, p, d, out):
    """Padding after the end that the last of ``out`` windows reads (ceil_mode's overhang),
    so the kernel can take all windows from one padded block."""
    need = (out - 1) * s + d * (k - 1) + 1 if out > 0 else 0
    return max(0, need - n - p)
