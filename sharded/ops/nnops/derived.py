"""Pooling over the last 1, 2 or 3 dims of (N, C, L), (N, C, H, W) and (N, C, D, H, W)
tensors (and unbatched ones), as ``torch.nn.functional``: ``max_pool1d/2d/3d`` (with
``return_indices``), ``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``,
``adaptive_max_pool1d/2d/3d``, and ``max_unpool1d/2d/3d``, their partial inverse.

Every window lies inside one image and one channel, so shards split along N or C pool where
they are (the primitives of :mod:`.prims.pool`, one per kind for any number of spatial
dims); max and average pooling keep a spatial split too, each shard reading the halo rows
its windows reach from its neighbours (:func:`.plan.window_layout` says when a batch split
is taken instead); the adaptive pools reshard such a split to a batch split first. The 1-D
forms are the 2-D ones over rows of height 1. Arguments are checked, with torch's messages,
before anything is queued."""

from __future__ import annotations

import math

from ... import dtypes as D
from ...core.dispatch import apply, as_tensor, is_tensor, via_float32
from ...errors import ArgumentError, DTypeError, IndexOutOfRange, ShapeError, UnsupportedDType
from ..creation.prims import zeros
from .kernels import right_pad
from .plan import Win, batch_layout, pool_out, window_layout

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


def _ints(v, n, name, op):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:  # torch expands a one-element tuple
            v = (v[0],) * n
        if len(v) != n:
            raise ArgumentError(f"{op}: {name} must either be a single int, or a tuple of {n} ints")
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _input(op, input, nd, reshard=True):
    """The input as a batched tensor (1-D: 2-D with rows of height 1; with ``reshard``,
    split at most along N and C), and whether it was batched."""
    x = input if is_tensor(input) else as_tensor(input)
    if x.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in x.shape[1 - (x.ndim == nd + 1) :]):
        raise ShapeError(
            f"{op}: non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input, "
            f"got shape {list(x.shape)}"
        )
    if x.dtype == D.bool_ or x.dtype.is_complex:
        raise DTypeError(f'"{op}" not implemented for {x.dtype.name!r}')
    batched = x.ndim == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    if nd == 1:
        x = x.unsqueeze(2)
    want = batch_layout(x.layout, keep=(0, 1)) if reshard else None
    if want is not None:  # rows or columns split: pool whole images where they are
        x = apply("reshard", x, want)
    return x, batched


def _placed(x, k, s, d, pads, out_sp):
    """``x`` where max/average pooling runs: as it is, or split along the batch where
    :func:`.plan.window_layout` says so."""
    wins = [Win(x.shape[2 + a], k[a], s[a], d[a], *pads[a], out_sp[a]) for a in range(len(k))]
    want = window_layout(x.layout, wins, keep=(0, 1))
    return x if want is None else apply("reshard", x, want)


def _output(t, batched, nd):
    if nd == 1:
        t = t.squeeze(2)
    return t if batched else t.squeeze(0)


def _window_args(op, nd, kernel_size, stride, padding, dilation):
    k = _ints(kernel_size, nd, "kernel_size", op)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else None
    s = s or _ints(stride, nd, "stride", op)
    p = _ints(padding, nd, "padding", op)
    d = _ints(dilation, nd, "dilation", op)
    if any(i <= 0 for i in k):
        raise ArgumentError(f"{op}: kernel_size must be greater than zero, but got {list(k)}")
    if any(i <= 0 for i in s):
        raise ArgumentError(f"{op}: stride should not be zero, but got {list(s)}")
    if any(i <= 0 for i in d):
        raise ArgumentError(f"{op}: dilation must be greater than zero, but got {list(d)}")
    for a in range(nd):
        if p[a] < 0 or p[a] > ((k[a] - 1) * d[a] + 1) // 2:
            raise ArgumentError(
                f"pad should be at most half of effective kernel size, but got pad={p[a]}, "
                f"kernel_size={k[a]} and dilation={d[a]}"
            )
        if p[a] > k[a] // 2:
            raise ArgumentError(
                f"pad should be smaller than or equal to half of kernel size, but got "
                f"pad={p[a]} and kernel_size={k[a]}"
            )
    if nd == 1:  # the 2-D primitives over rows of height 1
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    return k, s, p, d


def _out_sp(op, x, k, s, p, d, ceil_mode):
    sp = tuple(x.shape[2:])
    out = tuple(pool_out(sp[a], k[a], s[a], p[a], d[a], ceil_mode) for a in range(len(k)))
    if any(o < 1 for o in out):
        given, calc = (
            "x".join(map(str, (x.shape[1],) + sp)),
            "x".join(map(str, (x.shape[1],) + out)),
        )
        raise ShapeError(
            f"{op}: Given input size: ({given}). Calculated output size: ({calc}). Output size "
            "is too small"
        )
    return out


def _max_pool(op, nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d = _window_args(op, nd, kernel_size, stride, padding, dilation)
    x, batched = _input(op, input, nd, reshard=False)
    out_sp = _out_sp(op, x, k, s, p, d, ceil_mode)
    sp = tuple(x.shape[2:])
    pads = tuple((p[a], right_pad(sp[a], k[a], s[a], p[a], d[a], out_sp[a])) for a in range(len(k)))
    x = _placed(x, k, s, d, pads, out_sp)
    args = (k, s, pads, d, out_sp)
    out = _output(apply("max_pool", x, *args), batched, nd)
    if not return_indices:
        return out
    return out, _output(apply("max_pool_indices", x, *args), batched, nd)


@via_float32
def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling of an (N, C, H, W) or (C, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat H*W positions of the maxima).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.).reshape(1, 1, 4, 4)
    >>> st.nn.functional.max_pool2d(x, 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _max_pool(
        "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


@via_float32
def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-D max pooling of an (N, C, L) or (C, L) input.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.max_pool1d(st.tensor([[1., 3., 2., 5., 4.]]), 2, ceil_mode=True).tolist()
    [[3.0, 5.0, 4.0]]
    """
    return _max_pool(
        "max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def _avg_pool(op, nd, input, kernel_size, stride, padding, ceil_mode, cip, divisor_override):
    k, s, p, d = _window_args(op, nd, kernel_size, stride, padding, 1)
    if divisor_override is not None and divisor_override == 0:
        raise ArgumentError("divisor must be not zero")
    x, batched = _input(op, input, nd, reshard=False)
    out_sp = _out_sp(op, x, k, s, p, d, ceil_mode)
    sp = tuple(x.shape[2:])
    pads = tuple((p[a], right_pad(sp[a], k[a], s[a], p[a], 1, out_sp[a])) for a in range(len(k)))
    x = _placed(x, k, s, d, pads, out_sp)
    out = apply("avg_pool", x, k, s, p, out_sp, bool(cip), divisor_override)
    return _output(out, batched, nd)


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """2-D average pooling (the divisor counts the zero padding unless
    ``count_include_pad=False``; ``divisor_override`` replaces it).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.).reshape(1, 4, 4)
    >>> st.nn.functional.avg_pool2d(x, 2).tolist()
    [[[2.5, 4.5], [10.5, 12.5]]]
    """
    return _avg_pool(
        "avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override,
    )  # fmt: skip


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling of an (N, C, L) or (C, L) input.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.avg_pool1d(st.tensor([[1., 3., 2., 6.]]), 2).tolist()
    [[2.0, 4.0]]
    """
    return _avg_pool(
        "avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None
    )


def _adaptive_size(op, output_size, nd, x):
    """``output_size`` per spatial dim of the batched form (1-D: rows of height 1); ``None``
    entries keep the input's size."""
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            raise ArgumentError(f"{op}: output_size must be {nd} ints, got {list(output_size)}")
        size = tuple(output_size)
    else:
        size = (output_size,) * nd
    sp = tuple(x.shape[2:])[-nd:]
    size = tuple(sp[a] if v is None else int(v) for a, v in enumerate(size))
    if any(v < 0 for v in size):
        raise ArgumentError(f"{op}: elements of output_size must be greater than or equal to 0")
    return ((1,) + size) if nd == 1 else size


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (OH, OW): bin ``i`` covers rows
    ``floor(i*H/OH) .. ceil((i+1)*H/OH)`` (``None`` keeps a size).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.).reshape(1, 1, 4, 4)
    >>> st.nn.functional.adaptive_avg_pool2d(x, 1).tolist()
    [[[[7.5]]]]
    """
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed length.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.adaptive_avg_pool1d(st.tensor([[1., 2., 3.]]), 2).tolist()
    [[1.5, 2.5]]
    """
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def _adaptive_avg(op, nd, input, output_size):
    x, batched = _input(op, input, nd)
    if not x.dtype.is_floating_point:  # torch's NotImplementedError
        raise UnsupportedDType(f'"{op}" not implemented for {x.dtype.name!r}')
    size = _adaptive_size(op, output_size, nd, x)
    return _output(apply("adaptive_avg_pool", x, size), batched, nd)


def _adaptive_max(op, nd, input, output_size, return_indices):
    x, batched = _input(op, input, nd)
    size = _adaptive_size(op, output_size, nd, x)
    out = _output(apply("adaptive_max_pool", x, size), batched, nd)
    if not return_indices:
        return out
    return out, _output(apply("adaptive_max_pool_indices", x, size), batched, nd)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed (OH, OW) over torch's adaptive bins.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.).reshape(1, 4, 4)
    >>> st.nn.functional.adaptive_max_pool2d(x, 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed length over torch's adaptive bins.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.adaptive_max_pool1d(st.tensor([[1., 5., 2.]]), 2).tolist()
    [[5.0, 5.0]]
    """
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size):
    """torch's top-level ``adaptive_max_pool1d``: the maxima over torch's adaptive bins and
    their positions, always both (``st.adaptive_max_pool1d``; the ``nn.functional`` form
    returns the indices only with ``return_indices=True``).

    Examples
    --------
    >>> import sharded as st
    >>> values, indices = st.adaptive_max_pool1d(st.tensor([[1., 5., 2.]]), 2)
    >>> values.tolist(), indices.tolist()
    ([[5.0, 5.0]], [[1, 1]])
    """
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, True)


@via_float32
def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """3-D max pooling of an (N, C, D, H, W) or (C, D, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat D*H*W positions of the maxima).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.).reshape(1, 2, 2, 4)
    >>> st.nn.functional.max_pool3d(x, 2).tolist()
    [[[[13.0, 15.0]]]]
    """
    return _max_pool(
        "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """3-D average pooling of an (N, C, D, H, W) or (C, D, H, W) input (the divisor counts
    the zero padding unless ``count_include_pad=False``; ``divisor_override`` replaces it).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.).reshape(1, 2, 2, 4)
    >>> st.nn.functional.avg_pool3d(x, 2).tolist()
    [[[[6.5, 8.5]]]]
    """
    return _avg_pool(
        "avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override,
    )  # fmt: skip


def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (OD, OH, OW) over torch's adaptive bins (``None`` keeps a
    size).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(8.).reshape(1, 2, 2, 2)
    >>> st.nn.functional.adaptive_avg_pool3d(x, (1, None, 1)).tolist()
    [[[[2.5], [4.5]]]]
    """
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed (OD, OH, OW) over torch's adaptive bins (with
    ``return_indices`` also the flat D*H*W positions of the maxima).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(8.).reshape(1, 2, 2, 2)
    >>> st.nn.functional.adaptive_max_pool3d(x, 1, return_indices=True)[1].tolist()
    [[[[7]]]]
    """
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


# ---------------------------------------------------------------------------- max_unpool
def _unpool_size(x, k, s, p, output_size):
    """torch's ``_unpool_output_size``: the default spatial size, or ``output_size`` (spatial
    or with N and C) checked to lie strictly within one stride of it."""
    nd = len(k)
    if x.ndim < nd:
        raise ShapeError(f"max_unpool{nd}d: input of shape {list(x.shape)} has under {nd} dims")
    sp = tuple(x.shape[x.ndim - nd :])
    default = [(sp[d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nd)]
    if output_size is None:
        return tuple(default)
    size = list(output_size)
    if len(size) == nd + 2:
        size = size[2:]
    if len(size) != nd:
        raise ArgumentError(
            f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
            f"has a length of '{len(size)}'"
        )
    for d in range(nd):
        lo, hi = default[d] - s[d], default[d] + s[d]
        if not lo < size[d] < hi:
            raise ArgumentError(
                f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})'
            )
    return tuple(int(i) for i in size)


def _max_unpool(op, nd, input, indices, kernel_size, stride, padding, output_size):
    """Scatter ``input``'s values into zeros at ``indices`` (flat positions in each (n, c)
    image of the output), in torch's order of checks. A composition of ``scatter`` along
    the flattened spatial dim: a batch or channel split stays where it is, and the gradient
    is ``scatter``'s, a gather at the indices."""
    k = _ints(kernel_size, nd, "kernel_size", op)
    s = k if stride is None else _ints(stride, nd, "stride", op)
    p = _ints(padding, nd, "padding", op)
    x = input if is_tensor(input) else as_tensor(input)
    idx = indices if is_tensor(indices) else as_tensor(indices)
    out_sp = _unpool_size(x, k, s, p, output_size)
    if nd == 1:  # torch's 1-D form is the 2-D one over columns of width 1
        return _max_unpool(
            "max_unpool2d", 2, x.unsqueeze(-1), idx.unsqueeze(-1), k + (1,), s + (1,),
            p + (0,), out_sp + (1,),
        ).squeeze(-1)  # fmt: skip
    if idx.dtype != D.int64:
        raise DTypeError(f"elements in indices should be type int64 but got: {idx.dtype.name}")
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {x.ndim} dimensions."
        )
    if nd == 3 and any(i <= 0 for i in s):
        raise ArgumentError(f"strides should be greater than zero, but got stride: {list(s)}")
    if tuple(x.shape) != tuple(idx.shape):
        raise ShapeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(x.shape)}) but got indices tensor with shape: {list(idx.shape)}"
        )
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise ShapeError(
                f"{op}: Expected input to have non-zero size for non-batch dimensions, but got "
                f"{list(x.shape)} with dimension {d} being empty."
            )
    if not x.dtype.is_floating_point:
        raise UnsupportedDType(f'"{op}" not implemented for {x.dtype.name!r}')
    batched = x.ndim == nd + 2
    if not batched:
        x, idx = x.unsqueeze(0), idx.unsqueeze(0)
    n, c, size = x.shape[0], x.shape[1], math.prod(out_sp)
    if idx.numel():  # one read: torch's check of every index against the output's size
        lo, hi = (int(v.item()) for v in idx.aminmax())
        if lo < 0 or hi >= size:
            raise IndexOutOfRange(
                f"Found an invalid max index: {hi if hi >= size else lo} (output volumes are "
                f"of size {'x'.join(map(str, out_sp))})"
            )
    out = zeros(n, c, size, dtype=x.dtype, shards=x.layout.grid[0], dim=0)  # x's batch cuts
    out = out.scatter(2, idx.reshape(n, c, -1), x.reshape(n, c, -1)).reshape(n, c, *out_sp)
    return out if batched else out.squeeze(0)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool1d(..., return_indices=True)`` on an (N, C, L) or (C, L)
    input: each value goes to its index in an output of zeros, of length
    ``(L - 1) * stride + kernel_size - 2 * padding`` or ``output_size``.

    Examples
    --------
    >>> import sharded as st
    >>> F = st.nn.functional
    >>> out, idx = F.max_pool1d(st.tensor([[1., 3., 2., 5.]]), 2, return_indices=True)
    >>> F.max_unpool1d(out, idx, 2).tolist()
    [[0.0, 3.0, 0.0, 5.0]]
    """
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool2d(..., return_indices=True)`` on an (N, C, H, W) or
    (C, H, W) input: each value goes to its flat H*W index in an output of zeros (size from
    the pooling's arguments, or ``output_size``). Split batches or channels stay local.

    Examples
    --------
    >>> import sharded as st
    >>> F = st.nn.functional
    >>> out, idx = F.max_pool2d(st.arange(16.).reshape(1, 1, 4, 4), 2, return_indices=True)
    >>> F.max_unpool2d(out, idx, 2)[0, 0, :2].tolist()
    [[0.0, 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 7.0]]
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool3d(..., return_indices=True)`` on an (N, C, D, H, W) or
    (C, D, H, W) input: each value goes to its flat D*H*W index in an output of zeros.

    Examples
    --------
    >>> import sharded as st
    >>> F = st.nn.functional
    >>> out, idx = F.max_pool3d(st.arange(8.).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(out, idx, 2).flatten().tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    """
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)
