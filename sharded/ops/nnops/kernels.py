"""Helpers shared by the convolution (:mod:`.conv`) and pooling (:mod:`.pool`) families: the
sliding-window view (im2col without a copy), its adjoint (col2im), output-size arithmetic and
the layout rules of ops that work on (N, C, H, W) blocks. Pure functions of ``xp`` arrays and
layouts; no primitives live here.
"""

from __future__ import annotations

from ...core.dataflow import even_bounds
from ...layout import Layout


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


def pool_out(n, k, s, p, d, ceil_mode):
    """torch's ``pooling_output_shape``: with ``ceil_mode`` the last window may hang over the
    right edge, but must start inside the input or its left padding."""
    num = n + 2 * p - d * (k - 1) - 1 + ((s - 1) if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def right_pad(n, k, s, p, d, out):
    """Padding after the end that the last of ``out`` windows reads (ceil_mode's overhang),
    so the kernel can take all windows from one padded block."""
    need = (out - 1) * s + d * (k - 1) + 1 if out > 0 else 0
    return max(0, need - n - p)


def batch_layout(lay: Layout, keep=(0,)) -> Layout | None:
    """``None`` when ``lay`` is replicated or split only along the dims in ``keep`` (the work
    is then local); else the layout to reshard to: split along the batch dim over as many
    shards as before (one when N is 1), every other dim whole."""
    if lay.is_replicated or set(lay.split_dims) <= set(keep):
        return None
    n = lay.shape[0]
    b0 = even_bounds(n, lay.num_shards)
    bounds = [b0] + [(0, s) for s in lay.shape[1:]]
    return Layout.from_bounds(lay.shape, bounds, lay.workers[: len(b0) - 1])


def out_layout(lay: Layout, shape, keep=(0,)) -> Layout:
    """The layout of a result of ``shape`` computed shard by shard from an input laid out as
    ``lay``: the dims in ``keep`` keep their cuts, the others are whole."""
    if lay.is_replicated:
        return Layout.from_bounds(shape, [(0, s) for s in shape], lay.workers, replicated=True)
    bounds = [lay.bounds[d] if d in keep else (0, s) for d, s in enumerate(shape)]
    return Layout.from_bounds(shape, bounds, lay.workers)


def submit_local(ex, name, lay: Layout, args, params):
    """One ``name`` command per shard of ``lay`` (``args[s]``: that shard's arguments) making
    the same shard of the result; returns the keys."""
    keys = []
    for s, (w, _, _) in enumerate(lay.shards()):
        k = ex.new_key()
        ex.submit(w, name, tuple(args[s]), (k,), params, (name, s))
        keys.append(k)
    return keys
