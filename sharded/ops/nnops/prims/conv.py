"""Convolutions: ``conv1d``, ``conv2d`` and ``conv3d`` (``st.nn.functional``), torch's
cross-correlation with stride, padding (ints or ``'valid'``/``'same'``), dilation and groups.
One primitive, ``conv``, takes any number of spatial dims (a 1-D convolution runs as a 2-D one
over rows of height 1).

Each shard of the input convolves where it lives, with the weight replicated on the workers.
A split along N is local as it is. A split along a spatial dim is kept: each output shard
takes the windows centred from its input shard's first row on (for a 'same' convolution: the
same rows; with a stride, padding or dilation the nearest window: :meth:`~..plan.Win.cut`),
and its worker reads the rows of its neighbours that those windows reach (the halo) from
them, worker to worker. A split along the channels is resharded to a batch split first, and
so is a window longer than a spatial shard where the batch has an image per shard
(:func:`~..plan.window_layout`). The kernel lays its own rows, the halos and the zero
padding into one block and multiplies the weight with im2col blocks a few rows at a time
(:func:`~..kernels.conv_forward`).

The input's gradient is local the same way: each input shard reads the output-gradient rows
whose windows reach into it (col2im of ``g @ W``); the weight's is a partial sum per shard
over its output rows (with the forward's halo), summed across the workers by the reduction
tree (``sum(0)`` of a stack split one entry per shard).
"""

from __future__ import annotations

from .... import dtypes as D
from ....amp import lower_precision
from ....core.dataflow import Operand, align, fetch_regions, free_temps
from ....core.dispatch import apply, as_tensor, is_tensor, via_float32
from ....core.registry import kernel, nondiff, primitive, vjp
from ....errors import ArgumentError, DTypeError, ShapeError
from ....layout import Layout
from ...elementwise.prims.complex_ import complex as complex_
from ..kernels import conv_forward, conv_grad_input, conv_grad_weight, fill, take
from ..plan import (
    Win,
    gather_pieces,
    out_layout,
    submit_each,
    touching_regions,
    window_layout,
    window_regions,
)

__all__ = ["conv1d", "conv2d", "conv3d"]


# ---------------------------------------------------------------------------- conv
def _out_sp(sp, k, stride, pads, dilation):
    return tuple(
        (sp[i] + pads[i][0] + pads[i][1] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
        for i in range(len(k))
    )


def _wins(xshape, k, stride, pads, dilation):
    """The windows of each spatial dim (:class:`~..plan.Win`)."""
    out = _out_sp(xshape[2:], k, stride, pads, dilation)
    return tuple(
        Win(xshape[2 + a], k[a], stride[a], dilation[a], pads[a][0], pads[a][1], out[a])
        for a in range(len(k))
    )


def _whole(ex, t, lay):
    """``t`` whole on the worker of every shard of ``lay`` (a replicated weight: local)."""
    full = tuple((0, s) for s in t.shape)
    return fetch_regions(ex, t, [(w, full) for w, _, _ in lay.shards()])


def _input_blocks(ex, x, wins, oshape):
    """The output layout of windows ``wins`` over ``x`` and, per shard, the pieces of the
    input region its windows read, with the parameters :func:`_block` needs."""
    lay = x._layout
    out = out_layout(lay, oshape, (0,), wins)
    regs = window_regions(lay, out, wins, whole_channels=True)
    args, places, temps = gather_pieces(ex, x, [(w, reg) for w, reg, _ in regs])
    params = [
        {"places": pl, "shape": tuple(hi - lo for lo, hi in reg), "pads": pads}
        for (_, reg, pads), pl in zip(regs, places)
    ]
    return out, args, params, temps


def _block(xp, pieces, places, shape, pads, dtype):
    return fill(xp, pieces, places, shape, pads, 0, dtype)


@kernel(pooled=True)
def conv_block(xp, w, *pieces, places, shape, pads, stride, dilation, groups, out_sp, alloc=None):
    """Cross-correlation of one output block: the input region's ``pieces`` (own rows and
    halos) laid into one zero-padded block, times the (O, C/groups, *k) weight; the output
    in a block of the worker's pool where one fits (``alloc``: an iterative deconvolution's
    outputs are freed each iteration, and a fresh block costs its page faults again)."""
    xpad = _block(xp, pieces, places, shape, pads, w.dtype)
    return conv_forward(xp, xpad, w, stride, dilation, groups, out_sp, alloc)


def _conv_spec(x, w, stride, pads, dilation, groups):
    out = _out_sp(x.shape[2:], w.shape[2:], stride, pads, dilation)
    return (x.shape[0], w.shape[0]) + out, x.dtype


@primitive("conv", kernels=[conv_block], out_spec=_conv_spec, kind="linalg")
def _conv_plan(ex, x, w, stride, pads, dilation, groups):
    """Each output shard convolved on the worker of its input shard (replicated, or split
    along N or a spatial dim; not along C), from its own rows and its halo."""
    shape, _ = _conv_spec(x, w, stride, pads, dilation, groups)
    wins = _wins(x.shape, w.shape[2:], stride, pads, dilation)
    out, xargs, params, t1 = _input_blocks(ex, x, wins, shape)
    wargs, t2 = _whole(ex, w, out)
    common = {"stride": stride, "dilation": dilation, "groups": groups}
    for p, (_, _, osh) in zip(params, out.shards()):
        p.update(common, out_sp=tuple(osh[2:]))
    keys = submit_each(ex, "conv_block", out, [(a,) + b for a, b in zip(wargs, xargs)], params)
    free_temps(ex, t1 + t2)
    return Operand(out, x._dtype, keys)


@kernel
def conv_input_block(xp, w, *pieces, places, shape, stride, dilation, groups, org, lo, size):
    """The input's gradient over the block ``[lo, lo + size)``, from the output-gradient
    windows (``pieces`` of them) that reach into it, the first starting at ``org``."""
    nd = len(size)
    g = fill(xp, pieces, places, shape, ((0, 0),) * nd, 0, w.dtype)
    if not g.size:
        return xp.zeros((shape[0], w.shape[1] * groups) + tuple(size), dtype=w.dtype)
    cover = tuple((g.shape[2 + a] - 1) * stride[a] + dilation[a] * (w.shape[2 + a] - 1) + 1
                  for a in range(nd))  # fmt: skip
    buf = conv_grad_input(xp, g, w, stride, dilation, groups, cover)
    return take(xp, buf, org, lo, size)


@primitive("conv_grad_input", kernels=[conv_input_block], kind="linalg")
def _conv_grad_input_plan(ex, g, w, lay, stride, pads, dilation, groups):
    """The input's gradient laid out as the input (``lay``): each shard from the rows of
    the output gradient whose windows reach into it."""
    wins = _wins(lay.shape, w.shape[2:], stride, pads, dilation)
    touch = touching_regions(lay, wins)
    wanted, params = [], []
    for (wk, offs, shp), (spans, org) in zip(lay.shards(), touch):
        reg = [(offs[0], offs[0] + shp[0]), (0, w.shape[0])] + list(spans)
        wanted.append((wk, reg))
        params.append({"shape": tuple(hi - lo for lo, hi in reg), "org": org,
                       "lo": tuple(offs[2:]), "size": tuple(shp[2:])})  # fmt: skip
    gargs, places, t1 = gather_pieces(ex, g, wanted)
    wargs, t2 = _whole(ex, w, lay)
    for p, pl in zip(params, places):
        p.update(places=pl, stride=stride, dilation=dilation, groups=groups)
    args = [(a,) + b for a, b in zip(wargs, gargs)]
    keys = submit_each(ex, "conv_input_block", lay, args, params)
    free_temps(ex, t1 + t2)
    return Operand(lay, g._dtype, keys)


@kernel
def conv_weight_block(xp, g, *pieces, places, shape, pads, k, stride, dilation, groups, stack):
    """The weight's gradient from one output block ``g`` and the input region its windows
    read (``stack``: with a leading dim of 1, one entry of the per-shard partial sums)."""
    xpad = _block(xp, pieces, places, shape, pads, g.dtype)
    dw = conv_grad_weight(xp, xpad, g, k, stride, dilation, groups)
    return xp.ascontiguousarray(dw[None] if stack else dw)


@primitive("conv_grad_weight", kernels=[conv_weight_block], kind="linalg")
def _conv_grad_weight_plan(ex, x, g, wshape, stride, pads, dilation, groups):
    """The weight's gradient: whole on every worker for a replicated ``x``; else a stack of
    one partial sum per shard, split one entry per shard (the caller sums it)."""
    lay = x._layout
    oshape = (lay.shape[0], wshape[0]) + tuple(g.shape[2:])
    wins = _wins(lay.shape, wshape[2:], stride, pads, dilation)
    out, xargs, params, t1 = _input_blocks(ex, x, wins, oshape)
    gargs, t2 = align(ex, g, out)
    for p in params:
        p.update(k=tuple(wshape[2:]), stride=stride, dilation=dilation, groups=groups,
                 stack=not lay.is_replicated)  # fmt: skip
    args = [(a,) + b for a, b in zip(gargs, xargs)]
    keys = submit_each(ex, "conv_weight_block", out, args, params)
    free_temps(ex, t1 + t2)
    if lay.is_replicated:
        res = Layout.from_bounds(wshape, [(0, s) for s in wshape], lay.workers, replicated=True)
    else:
        n = len(lay.shards())
        shape = (n,) + tuple(wshape)
        res = Layout.from_bounds(
            shape, [tuple(range(n + 1))] + [(0, s) for s in wshape], lay.workers
        )
    return Operand(res, x._dtype, keys)


nondiff("conv_grad_input", "conv_grad_weight")


@vjp("conv", saves=(0, 1))
def _conv_vjp(gs, node):
    x, w, stride, pads, dilation, groups = node.args
    g = gs[0]
    gx = gw = None
    if x.requires_grad:
        gx = apply("conv_grad_input", g, w, x._layout, stride, pads, dilation, groups)
    if w.requires_grad:
        gw = apply("conv_grad_weight", x, g, tuple(w.shape), stride, pads, dilation, groups)
        if gw.ndim == w.ndim + 1:  # per-shard partial sums: the reduction tree adds them up
            gw = gw.sum(0)
    return (gx, gw, None, None, None, None)


# ---------------------------------------------------------------------------- public
def _tuple(v, n, name, op):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:  # torch expands a one-element list
            v = tuple(v) * n
        if len(v) != n:
            raise ArgumentError(
                f"{op}: expected {name} to be a single integer value or a list of {n} values "
                f"to match the convolution dimensions, but got {name}={list(v)}"
            )
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _padding(padding, k, dilation, stride, op):
    """((before, after), ...) per spatial dim; ``'same'`` pads ``d*(k-1)`` in all, the odd
    one after, as torch."""
    if isinstance(padding, str):
        if padding == "valid":
            return tuple((0, 0) for _ in k)
        if padding != "same":
            raise ArgumentError(f"Invalid padding string: {padding!r}")
        if any(s != 1 for s in stride):
            raise ArgumentError("padding='same' is not supported for strided convolutions")
        tot = [d * (n - 1) for d, n in zip(dilation, k)]
        return tuple((t // 2, t - t // 2) for t in tot)
    p = _tuple(padding, len(k), "padding", op)
    if any(i < 0 for i in p):
        raise ArgumentError("negative padding is not supported")
    return tuple((i, i) for i in p)


def operands(op, nd, input, weight):
    """``(input, weight)`` of an ``nd``-d convolution (or its transpose) as tensors, their
    ranks checked as torch does (an unbatched input has one dim less)."""
    x = input if is_tensor(input) else as_tensor(input)
    w = weight if is_tensor(weight) else as_tensor(weight)
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got "
            f"input of size: {list(x.shape)}"
        )
    if w.ndim != nd + 2:
        raise ShapeError(
            f"{op}: expected weight to be {nd + 2}-dimensional, but got weight of size "
            f"{list(w.shape)}"
        )
    return x, w


def _conv(op, nd, input, weight, bias, stride, padding, dilation, groups):
    """Checks (before anything is queued) and the reshaping of 1-D/unbatched calls onto the
    ``conv`` primitive (2-D or 3-D)."""
    x, w = operands(op, nd, input, weight)
    batched = x.ndim == nd + 2
    xs = list(x.shape) if batched else [1] + list(x.shape)
    stride = _tuple(stride, nd, "stride", op)
    dilation = _tuple(dilation, nd, "dilation", op)
    if any(s <= 0 for s in stride):
        raise ArgumentError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise ArgumentError("non-positive dilation is not supported")
    groups = int(groups)
    if groups <= 0:
        raise ArgumentError("non-positive groups is not supported")
    k = tuple(w.shape[2:])
    pads = _padding(padding, k, dilation, stride, op)
    if w.shape[0] < groups:
        raise ShapeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
            f"but got weight of size {list(w.shape)} instead"
        )
    if w.shape[0] % groups:
        raise ShapeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(w.shape)}] instead"
        )
    if xs[1] != w.shape[1] * groups:
        raise ShapeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input{xs} to "
            f"have {w.shape[1] * groups} channels, but got {xs[1]} channels instead"
        )
    if bias is not None:
        b = bias if is_tensor(bias) else as_tensor(bias)
        if b.ndim != 1 or b.shape[0] != w.shape[0]:
            raise ShapeError(
                f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with "
                f"{w.shape[0]} elements, but got bias of size {list(b.shape)} instead"
            )
    padded = [xs[2 + i] + sum(pads[i]) for i in range(nd)]
    eff = [dilation[i] * (k[i] - 1) + 1 for i in range(nd)]
    if any(p < e for p, e in zip(padded, eff)):
        raise ShapeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
            "actual input size"
        )
    if x.dtype != w.dtype or (bias is not None and b.dtype != x.dtype):
        other = w.dtype if x.dtype != w.dtype else b.dtype
        raise DTypeError(
            f"{op}: expected input, weight and bias to have the same dtype, but got "
            f"{x.dtype.name} and {other.name}"
        )
    if x.dtype == D.bool_:
        raise DTypeError(f"{op} is not implemented for {x.dtype.name} tensors")
    if x.dtype.is_complex:  # four real convolutions: (a + ib) * (w + iv), torch's answer
        return _complex_conv(op, nd, x, w, bias, stride, padding, dilation, groups)
    if not batched:
        x = x.unsqueeze(0)
    if nd == 1:  # a 1-D convolution is a 2-D one over rows of height 1
        x, w = x.unsqueeze(2), w.unsqueeze(2)
        stride, dilation, pads = (1,) + stride, (1,) + dilation, ((0, 0),) + pads
    want = window_layout(x.layout, _wins(x.shape, tuple(w.shape[2:]), stride, pads, dilation))
    if want is not None:  # channels split, or shards shorter than a window: batch split
        x = apply("reshard", x, want)
    out = apply("conv", x, w, stride, pads, dilation, groups)
    if bias is not None:
        out = out + b.reshape((-1,) + (1,) * (out.ndim - 2))
    if nd == 1:
        out = out.squeeze(2)
    return out if batched else out.squeeze(0)


def _complex_conv(op, nd, x, w, bias, stride, padding, dilation, groups):
    def real(a, v, c=None):
        return _conv(op, nd, a, v, c, stride, padding, dilation, groups)

    b = None if bias is None else (bias if is_tensor(bias) else as_tensor(bias))
    bre, bim = (None, None) if b is None else (b.real, b.imag)
    re = real(x.real, w.real, bre) - real(x.imag, w.imag)
    im = real(x.real, w.imag, bim) + real(x.imag, w.real)
    return complex_(re, im)


@lower_precision
@via_float32
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation of an (N, C, H, W) or (C, H, W) input with an
    (O, C/groups, kH, kW) weight, as ``torch.nn.functional.conv2d``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.).reshape(1, 1, 4, 4)
    >>> st.nn.functional.conv2d(x, st.ones(1, 1, 2, 2), stride=2).tolist()
    [[[[10.0, 18.0], [42.0, 50.0]]]]
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@lower_precision
@via_float32
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation of an (N, C, L) or (C, L) input with an (O, C/groups, k)
    weight, as ``torch.nn.functional.conv1d``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[[1., 2., 3., 4.]]])
    >>> st.nn.functional.conv1d(x, st.tensor([[[1., -1.]]]), padding="same").tolist()
    [[[-1.0, -1.0, -1.0, 4.0]]]
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@lower_precision
@via_float32
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation of an (N, C, D, H, W) or (C, D, H, W) input with an
    (O, C/groups, kD, kH, kW) weight, as ``torch.nn.functional.conv3d``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(8.).reshape(1, 1, 2, 2, 2)
    >>> st.nn.functional.conv3d(x, st.ones(1, 1, 2, 2, 2)).tolist()
    [[[[[28.0]]]]]
    """
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)
