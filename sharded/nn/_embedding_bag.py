"""``embedding_bag`` and ``bilinear`` of ``st.nn.functional``.

``embedding_bag`` lays the bags out as a padded (bags, longest bag) matrix of positions into
``input`` (the offsets are read on the driver: they fix the output's shape), looks the rows
up with ``embedding`` and reduces each bag with a mask; ``bilinear`` is one matmul and a
sum. Both are compositions of sharded ops: they run on any layout of their operands and
their gradients are those ops' gradients (the max of a bag sends it to the row that won).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..core.dispatch import as_tensor, is_tensor
from ..errors import ArgumentError, IndexDTypeError, ShapeError, UnsupportedArgument
from ..ops.creation.prims import zeros
from ..ops.elementwise.prims.selection import where
from ..ops.index.prims.index_ops import index_select

__all__ = ["embedding_bag", "bilinear"]


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _bag_positions(offsets, numel, include_last_offset):
    """(bags, longest) positions into the flat input and the mask of the real ones."""
    offs = [int(o) for o in offsets.tolist()]
    if offs and offs[0] != 0:
        raise ArgumentError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {offs[0]}"
        )
    ends = offs[1:] if include_last_offset else offs[1:] + [numel]
    starts = offs[:-1] if include_last_offset else offs
    for i, (a, b) in enumerate(zip(starts, ends)):
        if a > b or b > numel:
            raise ArgumentError(
                f"offsets[{i}]={a} and the bag's end {b} do not make a bag of an input of "
                f"{numel} indices: offsets must be non-decreasing and at most {numel}"
            )
    lens = np.array([b - a for a, b in zip(starts, ends)], dtype=np.int64)
    width = max(int(lens.max()) if len(lens) else 0, 1)
    cols = np.arange(width)
    valid = cols[None, :] < lens[:, None]
    pos = np.where(valid, np.array(starts, dtype=np.int64)[:, None] + cols[None, :], 0)
    return pos, valid


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """Sums, means or maxima of bags of embeddings, as ``torch.nn.functional.embedding_bag``.

    ``input`` is a (B, N) tensor of indices (B bags of N) or a 1-D one cut into bags at
    ``offsets`` (bag ``i`` starts at ``offsets[i]``; with ``include_last_offset`` the last
    offset ends the last bag). ``per_sample_weights`` scales each looked-up row (``sum``
    only); rows of ``padding_idx`` are left out of every bag (and of a mean's count). An
    empty bag gives zeros. ``max_norm`` rescales the looked-up rows in place first (as
    :func:`embedding`); ``scale_grad_by_freq`` divides each row's gradient by its count in
    ``input`` (``sum``/``mean``; torch 2.13's own bag backward scales by a miscounted
    frequency, see the guide's differences); ``sparse=True`` keeps a dense gradient. Returns
    the (B, D) reductions.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.arange(8.).reshape(4, 2)
    >>> st.nn.functional.embedding_bag(st.tensor([[0, 2], [1, 3]]), w, mode="sum").tolist()
    [[4.0, 6.0], [8.0, 10.0]]
    >>> x, offs = st.tensor([0, 1, 3]), st.tensor([0, 1])
    >>> st.nn.functional.embedding_bag(x, w, offs, mode="max").tolist()
    [[0.0, 1.0], [6.0, 7.0]]
    """
    from ._basic import embedding, renorm_rows, scale_by_freq

    input, weight = _t(input), _t(weight)
    if mode not in ("sum", "mean", "max"):
        raise ArgumentError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if scale_grad_by_freq and mode == "max":
        raise ArgumentError("max mode does not support scaling the gradient by the frequency")
    if weight.ndim != 2:
        raise ShapeError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.dtype not in (D.int64, D.int32):
        raise IndexDTypeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype.name} instead"
        )
    if per_sample_weights is not None:
        per_sample_weights = _t(per_sample_weights)
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ShapeError(
                f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is "
                f"not None, then it must have the same shape as the input "
                f"({list(input.shape)})"
            )
        if mode != "sum":
            raise UnsupportedArgument(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}')"
            )
    n_rows = weight.shape[0]
    if max_norm is not None and input.numel():
        renorm_rows(weight, input, max_norm, norm_type)
    if padding_idx is not None:
        if not -n_rows <= padding_idx < n_rows:
            raise ArgumentError(
                f"padding_idx must be within the number of embeddings {n_rows}, got {padding_idx}"
            )
        padding_idx %= n_rows
    if input.ndim == 2:
        if offsets is not None:
            raise ArgumentError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets).__name__}"
            )
        ids, psw = input, per_sample_weights
        valid = None
        if input.shape[1] == 0:  # bags of nothing: zeros
            return zeros(input.shape[0], weight.shape[1], dtype=weight.dtype)
    elif input.ndim == 1:
        if offsets is None:
            raise ArgumentError("offsets has to be a 1D Tensor but got None")
        offsets = _t(offsets)
        if offsets.ndim != 1:
            raise ShapeError(f"offsets has to be a 1D Tensor, got {offsets.ndim} dimensions")
        pos, valid = _bag_positions(offsets, input.shape[0], include_last_offset)
        if input.shape[0] == 0:
            return zeros(pos.shape[0], weight.shape[1], dtype=weight.dtype)
        flat = as_tensor(pos.reshape(-1))
        ids = index_select(input, 0, flat).reshape(pos.shape)
        psw = None
        if per_sample_weights is not None:
            psw = index_select(per_sample_weights, 0, flat).reshape(pos.shape)
    else:
        raise ShapeError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    keep = None if valid is None else as_tensor(valid)
    if padding_idx is not None:
        real = ids != padding_idx
        keep = real if keep is None else keep & real
    rows = embedding(ids, weight)  # (bags, longest, D)
    if scale_grad_by_freq and weight.requires_grad:
        rows = scale_by_freq(rows, ids, input, n_rows)
    if psw is not None:
        rows = rows * psw.unsqueeze(-1)
    if mode == "max":
        if keep is None:
            return rows.max(1).values
        picked = where(keep.unsqueeze(-1), rows, float("-inf")).max(1).values
        return where(keep.any(1).unsqueeze(-1), picked, 0.0)
    if keep is not None:  # where(), not a product: an inf in a left-out row stays out
        rows = where(keep.unsqueeze(-1), rows, 0.0)
    total = rows.sum(1)
    if mode == "sum":
        return total
    count = ids.shape[1] if keep is None else keep.sum(1).clamp_min(1).unsqueeze(-1)
    return total / count


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``, as
    ``torch.nn.functional.bilinear``.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.tensor([[[1., 0.], [0., 2.]]])
    >>> st.nn.functional.bilinear(st.tensor([[1., 1.]]), st.tensor([[3., 4.]]), w).tolist()
    [[11.0]]
    """
    x1, x2, w = _t(input1), _t(input2), _t(weight)
    if x1.ndim != x2.ndim:
        raise ShapeError(f"bilinear(): input dimensions do not match: got {x1.ndim} and {x2.ndim}")
    if tuple(x1.shape[:-1]) != tuple(x2.shape[:-1]):
        raise ShapeError(
            "bilinear(): input batch dimensions do not match: got "
            f"{list(x1.shape[:-1])} and {list(x2.shape[:-1])}"
        )
    if w.ndim != 3:
        raise ShapeError(f"bilinear(): weight must be 3-dimensional, got size {list(w.shape)}")
    out, n1, n2 = w.shape
    if x1.shape[-1] != n1:
        raise ShapeError(
            f"bilinear(): input1 size does not match weight size: got {x1.shape[-1]} but "
            f"expected {n1}"
        )
    if x2.shape[-1] != n2:
        raise ShapeError(
            f"bilinear(): input2 size does not match weight size: got {x2.shape[-1]} but "
            f"expected {n2}"
        )
    if bias is not None:
        bias = _t(bias)
        if bias.ndim != 1 or bias.shape[0] != out:
            raise ShapeError(
                f"bilinear(): bias size does not match weight size: got {list(bias.shape)} "
                f"but expected [{out}]"
            )
    # (..., n1) @ (n1, out * n2): each output's row of x1 W_o, then its dot with x2
    t = x1 @ w.permute(1, 0, 2).reshape(n1, out * n2)
    y = (t.reshape(*x1.shape[:-1], out, n2) * x2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias
