"""Transposed convolutions and sliding-block functions of ``st.nn.functional``:
``conv_transpose1d``/``conv_transpose2d``/``conv_transpose3d``, ``unfold`` (im2col) and
``fold`` (col2im).

A transposed convolution is the convolution of the input spread out by the stride (zeros
between its samples), padded by ``dilation * (kernel - 1) - padding`` (a negative amount
crops), with the weight's in/out channels swapped per group and its kernel flipped.
``unfold`` is a grouped convolution with a one-hot weight (one output channel per kernel
position) and ``fold``, its adjoint, the transposed one. All are compositions of sharded ops
(``conv2d``/``conv3d`` included), so they run on any layout the convolution takes and their
gradients are those ops' gradients.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as D
from ..amp import lower_precision
from ..core.dispatch import as_tensor, is_tensor, via_float32
from ..errors import ArgumentError, DTypeError, ShapeError
from ..ops.creation.prims import full
from ..ops.elementwise.prims.complex_ import complex as complex_
from ..ops.nnops.prims.conv import conv2d, conv3d, operands
from ..ops.shape.prims.joining import cat

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold"]


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _tuple(v, n, name, op):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            v = tuple(v) * n
        if len(v) != n:
            raise ArgumentError(f"{op}: expected {name} to be an int or {n} ints, got {list(v)}")
        vals = tuple(v)
    else:
        vals = (v,) * n
    for i in vals:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise ArgumentError(f"{op}: expected {name} to be ints, got {v!r}")
    return tuple(int(i) for i in vals)


def _spread(x, d, s):
    """``x`` with ``s - 1`` zeros between its samples along ``d``."""
    if s == 1 or x.shape[d] == 0:
        return x
    n = x.shape[d]
    shape = list(x.shape)
    shape.insert(d + 1, s - 1)
    zeros = full(shape, 0, dtype=x.dtype)
    y = cat([x.unsqueeze(d + 1), zeros], d + 1)
    return y.flatten(d, d + 1).narrow(d, 0, (n - 1) * s + 1)


def _transposed(x, w, bias, stride, pads, output_padding, groups, dilation):
    """The transposed convolution of a batched (N, C, *spatial) ``x`` (2 or 3 spatial dims)
    with a (C, O/groups, *k) ``w``; ``pads`` and ``output_padding`` per spatial dim."""
    from ._basic import pad

    nd = x.ndim - 2
    amounts = []
    for a in range(nd):
        d = 2 + a
        x = _spread(x, d, stride[a])
        q = dilation[a] * (w.shape[d] - 1) - pads[a]
        amounts = [q, q + output_padding[a]] + amounts  # F.pad lists the last dim first
    if any(amounts):
        x = pad(x, amounts)
    c, o_g = w.shape[0], w.shape[1]
    k = tuple(w.shape[2:])
    wt = w.reshape(groups, c // groups, o_g, *k).transpose(1, 2)
    wt = wt.reshape(groups * o_g, c // groups, *k)
    conv = conv2d if nd == 2 else conv3d
    return conv(x, wt.flip(*range(2, 2 + nd)), bias, 1, 0, dilation, groups)


def _conv_transpose(op, nd, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):  # fmt: skip
    x, w = operands(op, nd, input, weight)
    if isinstance(padding, str):
        raise ArgumentError(f"{op}: padding must be an int or a tuple of ints, got {padding!r}")
    stride = _tuple(stride, nd, "stride", op)
    pads = _tuple(padding, nd, "padding", op)
    opad = _tuple(output_padding, nd, "output_padding", op)
    dilation = _tuple(dilation, nd, "dilation", op)
    groups = int(groups)
    if any(s <= 0 for s in stride):
        raise ArgumentError(f"{op}: non-positive stride is not supported, got {list(stride)}")
    if any(d <= 0 for d in dilation):
        raise ArgumentError(f"{op}: non-positive dilation is not supported, got {list(dilation)}")
    if any(p < 0 for p in pads) or any(p < 0 for p in opad):
        raise ArgumentError(f"{op}: negative padding is not supported, got {list(pads)}")
    if groups <= 0:
        raise ArgumentError(f"{op}: non-positive groups is not supported, got {groups}")
    if any(p >= max(s, d) for p, s, d in zip(opad, stride, dilation)):
        raise ArgumentError(
            f"{op}: output padding must be smaller than either stride or dilation, but got "
            f"output_padding={list(opad)}, stride={list(stride)}, dilation={list(dilation)}"
        )
    batched = x.ndim == nd + 2
    cin = x.shape[1] if batched else x.shape[0]
    if w.shape[0] % groups:
        raise ShapeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(w.shape)} instead"
        )
    if cin != w.shape[0]:
        raise ShapeError(
            f"Given transposed=1, weight of size {list(w.shape)}, expected input "
            f"{list(x.shape)} to have {w.shape[0]} channels, but got {cin} channels instead"
        )
    cout = w.shape[1] * groups
    if bias is not None:
        bias = _t(bias)
        if bias.ndim != 1 or bias.shape[0] != cout:
            raise ShapeError(
                f"Given transposed=1, weight of size {list(w.shape)}, expected bias to be "
                f"1-dimensional with {cout} elements, but got bias of size {list(bias.shape)}"
            )
    if x.dtype != w.dtype or (bias is not None and bias.dtype != x.dtype):
        other = w.dtype if x.dtype != w.dtype else bias.dtype
        raise DTypeError(
            f"{op}: expected input, weight and bias to have the same dtype, but got "
            f"{x.dtype.name} and {other.name}"
        )
    if x.dtype == D.bool_:  # complex: the convolutions below take it
        raise DTypeError(f"{op} is not implemented for {x.dtype.name} tensors")
    spatial = x.shape[-nd:]
    outs = [(n - 1) * s - 2 * p + d * (k - 1) + op_ + 1 for n, s, p, d, k, op_
            in zip(spatial, stride, pads, dilation, w.shape[2:], opad)]  # fmt: skip
    if any(o <= 0 for o in outs):
        raise ShapeError(
            f"{op}: input of size {list(x.shape)} gives a non-positive output size {outs}"
        )
    if not batched:
        x = x.unsqueeze(0)
    if nd == 1:  # a 1-D transposed convolution is a 2-D one over rows of height 1
        x, w = x.unsqueeze(2), w.unsqueeze(2)
        stride, pads, opad, dilation = (1,) + stride, (0,) + pads, (0,) + opad, (1,) + dilation
    out = _transposed(x, w, bias, stride, pads, opad, groups, dilation)
    if nd == 1:
        out = out.squeeze(2)
    return out if batched else out.squeeze(0)


@lower_precision
@via_float32
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):  # fmt: skip
    """2-D transposed convolution ("deconvolution") of an (N, C, H, W) or (C, H, W) input
    with a (C, O/groups, kH, kW) weight, as ``torch.nn.functional.conv_transpose2d``: the
    output is ``(H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1`` high.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[[[1., 2.], [3., 4.]]]])
    >>> st.nn.functional.conv_transpose2d(x, st.ones(1, 1, 2, 2), stride=2).tolist()[0][0]
    [[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 4.0, 4.0], [3.0, 3.0, 4.0, 4.0]]
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)  # fmt: skip


@lower_precision
@via_float32
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):  # fmt: skip
    """3-D transposed convolution of an (N, C, D, H, W) or (C, D, H, W) input with a
    (C, O/groups, kD, kH, kW) weight, as ``torch.nn.functional.conv_transpose3d``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(1, 1, 1, 1, 2)
    >>> st.nn.functional.conv_transpose3d(x, st.ones(1, 1, 1, 1, 2)).tolist()
    [[[[[1.0, 2.0, 1.0]]]]]
    """
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)  # fmt: skip


@lower_precision
@via_float32
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):  # fmt: skip
    """1-D transposed convolution of an (N, C, L) or (C, L) input with a (C, O/groups, k)
    weight, as ``torch.nn.functional.conv_transpose1d``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[[1., 2., 3.]]])
    >>> st.nn.functional.conv_transpose1d(x, st.tensor([[[1., 10.]]])).tolist()
    [[[1.0, 12.0, 23.0, 30.0]]]
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)  # fmt: skip


def _block_args(op, kernel_size, dilation, padding, stride):
    k = _tuple(kernel_size, 2, "kernel_size", op)
    d = _tuple(dilation, 2, "dilation", op)
    p = _tuple(padding, 2, "padding", op)
    s = _tuple(stride, 2, "stride", op)
    if any(v <= 0 for v in k + d + s):
        raise ArgumentError(
            f"{op}: kernel_size, dilation and stride must be greater than zero, but got "
            f"kernel_size={list(k)}, dilation={list(d)}, stride={list(s)}"
        )
    if any(v < 0 for v in p):
        raise ArgumentError(f"{op}: padding must be non-negative, but got padding={list(p)}")
    return k, d, p, s


def _one_hot_weight(c, k, dtype):
    """(c kH kW, 1, kH, kW): output channel ``ci * kH kW + m`` picks kernel position ``m``
    of input channel ``ci`` (a grouped convolution, groups = c)."""
    m = k[0] * k[1]
    eye = np.tile(np.eye(m).reshape(m, 1, k[0], k[1]), (c, 1, 1, 1))
    return as_tensor(eye.astype(dtype.np))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks (im2col): (N, C, H, W) or (C, H, W) to (N, C kH kW, L), one
    column per block position, as ``torch.nn.functional.unfold``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(9.).reshape(1, 1, 3, 3)
    >>> st.nn.functional.unfold(x, 2).tolist()
    [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
    """
    x = _t(input)
    if x.ndim not in (3, 4):
        raise ShapeError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {x.ndim}D) for unfold"
        )
    k, d, p, s = _block_args("unfold", kernel_size, dilation, padding, stride)
    batched = x.ndim == 4
    if not batched:
        x = x.unsqueeze(0)
    n, c, h, w = x.shape
    blocks = [(v + 2 * pp - dd * (kk - 1) - 1) // ss + 1
              for v, pp, dd, kk, ss in zip((h, w), p, d, k, s)]  # fmt: skip
    if any(b <= 0 for b in blocks):
        raise ShapeError(
            f"Given input with spatial size ({h}, {w}), kernel_size={list(k)}, "
            f"dilation={list(d)}, padding={list(p)}, calculated shape of the array of sliding "
            f"blocks as {blocks}, but its components must be at least one."
        )
    if x.dtype == D.bool_:  # torch has a bool im2col: a 0/1 copy is exact in float32
        out = unfold(x.to(D.float32), k, d, p, s).to(D.bool_)
        return out if batched else out.squeeze(0)
    if x.dtype.is_complex:  # a copy of each part (the convolutions take real inputs)
        out = complex_(*(unfold(part, k, d, p, s) for part in (x.real, x.imag)))
        return out if batched else out.squeeze(0)
    if not x.dtype.is_floating_point:
        raise DTypeError(f'"im2col" not implemented for {x.dtype.name!r}')
    out = conv2d(x, _one_hot_weight(c, k, x.dtype), None, s, p, d, c)
    out = out.reshape(n, c * k[0] * k[1], blocks[0] * blocks[1])
    return out if batched else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding blocks into a tensor (col2im, summing where blocks overlap):
    (N, C kH kW, L) or (C kH kW, L) to (N, C, H, W), the adjoint of :func:`unfold`.

    Examples
    --------
    >>> import sharded as st
    >>> cols = st.ones(1, 4, 4)
    >>> st.nn.functional.fold(cols, (3, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    x = _t(input)
    if x.ndim not in (2, 3):
        raise ShapeError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {x.ndim}D) for fold"
        )
    size = _tuple(output_size, 2, "output_size", "fold")
    k, d, p, s = _block_args("fold", kernel_size, dilation, padding, stride)
    batched = x.ndim == 3
    if not batched:
        x = x.unsqueeze(0)
    n, ckk, L = x.shape
    kk = k[0] * k[1]
    if ckk % kk:
        raise ShapeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={ckk} and kernel_size={tuple(k)}"
        )
    blocks = [(v + 2 * pp - dd * (kk_ - 1) - 1) // ss + 1
              for v, pp, dd, kk_, ss in zip(size, p, d, k, s)]  # fmt: skip
    if any(b <= 0 for b in blocks) or blocks[0] * blocks[1] != L:
        raise ShapeError(
            f"Given output_size={tuple(size)}, kernel_size={tuple(k)}, dilation={tuple(d)}, "
            f"padding={tuple(p)}, stride={tuple(s)}, expected size of input's dimension 2 to "
            f"match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size(2)={L}."
        )
    if not x.dtype.is_floating_point:
        raise DTypeError(f'"col2im" not implemented for {x.dtype.name!r}')
    c = ckk // kk
    cols = x.reshape(n, ckk, blocks[0], blocks[1])
    # the blocks reach (b - 1) s - 2 p + d (k - 1) + 1 rows: the rest of output_size is
    # zeros past the last block (fewer than a stride of them), as output_padding
    reach = [(b - 1) * ss - 2 * pp + dd * (kk_ - 1) + 1
             for b, ss, pp, dd, kk_ in zip(blocks, s, p, d, k)]  # fmt: skip
    extra = tuple(v - r for v, r in zip(size, reach))
    out = _transposed(cols, _one_hot_weight(c, k, x.dtype), None, s, p, extra, c, d)
    return out if batched else out.squeeze(0)
