"""More of ``st.nn.functional``: ``local_response_norm``, ``pdist``, ``channel_shuffle``,
``alpha_dropout``, ``feature_alpha_dropout`` and ``dropout3d``, and the top-level forms
torch also has (``st.pdist``, ``st.channel_shuffle``, ``st.alpha_dropout``,
``st.feature_alpha_dropout``, ``st.constant_pad_nd``).

Each is composed from sharded ops, so gradients come from the ops' VJPs; the dropout masks
are counter-based draws (the same for any sharding after ``st.manual_seed``).
"""

from __future__ import annotations

import math

from ..errors import ArgumentError, DTypeError, ShapeError
from ..linalg import vector_norm
from ..ops.creation.prims import zeros
from ..ops.random.prims.counter import rand_like
from ..ops.shape.prims.joining import cat
from ..ops.shape.prims.triangular import triu_indices
from ._basic import pad

__all__ = [
    "local_response_norm",
    "pdist",
    "channel_shuffle",
    "alpha_dropout",
    "feature_alpha_dropout",
    "dropout3d",
]

_SELU_ALPHA = 1.7580993408473766  # -selu's negative saturation (scale * alpha), torch's


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each channel (dim 1) by ``(k + alpha / size * sum of x² over the size
    neighbouring channels) ** beta``, the window running from ``c - size // 2`` to
    ``c + (size - 1) // 2`` (zeros past the ends).

    Examples
    --------
    >>> import sharded as st
    >>> out = st.nn.functional.local_response_norm(st.ones(1, 3, 1), 2, alpha=1.0, beta=1.0)
    >>> out.flatten().tolist()
    [0.6666666865348816, 0.5, 0.5]
    """
    if input.ndim < 3:
        raise ShapeError(
            f"local_response_norm: expected 3D or higher dimensionality input (got "
            f"{input.ndim} dimensions)"
        )
    if size <= 0:
        raise ArgumentError(f"local_response_norm: size must be positive, got {size}")
    c = input.shape[1]
    sq = input * input
    shape = list(sq.shape)
    before, after = shape.copy(), shape.copy()
    before[1], after[1] = size // 2, (size - 1) // 2
    padded = cat([zeros(before, dtype=sq.dtype), sq, zeros(after, dtype=sq.dtype)], 1)
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    div = (total * (alpha / size) + k) ** beta
    return input / div


def pdist(input, p=2):
    """The ``p``-norm distances between every pair of rows ``i < j`` of an (N, M) input,
    in row-major order of the pairs: ``N (N - 1) / 2`` values.

    Examples
    --------
    >>> import sharded as st
    >>> st.pdist(st.tensor([[0., 0.], [3., 4.], [0., 1.]])).tolist()
    [5.0, 1.0, 4.242640495300293]
    """
    if input.ndim != 2:
        raise ShapeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise DTypeError(f"pdist only supports floating-point dtypes, got {input.dtype}")
    if p < 0:
        raise ArgumentError(f"pdist only supports non-negative p values, got {p}")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1)
    diff = input.index_select(0, i) - input.index_select(0, j)
    return vector_norm(diff, p, -1)


def channel_shuffle(input, groups):
    """(N, C, *) with the channels regrouped: seen as (groups, C / groups), transposed.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(4.).reshape(1, 4, 1)
    >>> st.nn.functional.channel_shuffle(x, 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    if input.ndim <= 2:
        raise ShapeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise ArgumentError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = input.shape[1]
    if c % groups:
        raise ArgumentError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    n, rest = input.shape[0], tuple(input.shape[2:])
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def _check_p(p):
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"dropout probability has to be between 0 and 1, but got {p}")


def _alpha(input, keep_like, p, inplace):
    """torch's alpha dropout: kept values scaled by ``a``, dropped ones set to selu's
    saturation, both shifted so that zero-mean unit-variance inputs keep those moments."""
    if p == 1.0:
        out = input * 0.0
    else:
        keep = (rand_like(keep_like, requires_grad=False) >= p).to(input.dtype)
        a = 1.0 / math.sqrt((_SELU_ALPHA**2 * p + 1) * (1 - p))
        b = (keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        out = input * (keep * a) + b
    return input.copy_(out) if inplace else out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for self-normalizing (selu) networks: dropped elements take selu's negative
    saturation and an affine map keeps the mean and variance (identity unless
    ``training``, which defaults to False as in torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.alpha_dropout(st.ones(2), 0.5).tolist()
    [1.0, 1.0]
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _alpha(input, input, p, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` of whole channels: one draw per (N, C) entry, shared along
    the remaining dims.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> out = st.nn.functional.feature_alpha_dropout(st.ones(1, 50, 3), 0.5, True)
    >>> all(len(set(r)) == 1 for r in out[0].tolist())
    True
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    if input.ndim < 2:
        raise ShapeError("Feature dropout requires at least 2 dimensions in the input")
    corner = input[(slice(None), slice(None)) + (slice(0, 1),) * (input.ndim - 2)]
    return _alpha(input, corner, p, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (one draw per entry of all but the last three dims) of a
    (C, D, H, W) or (N, C, D, H, W) input with probability ``p``, scaling the rest by
    ``1 / (1 - p)`` (identity unless ``training``).

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> out = st.nn.functional.dropout3d(st.ones(1, 50, 2, 1, 2))
    >>> sorted({v for r in out.reshape(50, 4).tolist() for v in r})
    [0.0, 2.0]
    """
    _check_p(p)
    if input.ndim not in (4, 5):
        raise ShapeError(
            "dropout3d: expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, got shape "
            f"{list(input.shape)}"
        )
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        keep = rand_like(input[..., :1, :1, :1], requires_grad=False) >= p
        out = input * (keep.to(input.dtype) * (1.0 / (1.0 - p)))
    return input.copy_(out) if inplace else out


def torch_alpha_dropout(input, p, train):
    """``torch.alpha_dropout(input, p, train)``: :func:`alpha_dropout` with torch's
    top-level signature (``st.alpha_dropout``; ``p`` and ``train`` are required).

    Examples
    --------
    >>> import sharded as st
    >>> st.alpha_dropout(st.ones(2), 0.5, False).tolist()
    [1.0, 1.0]
    """
    return alpha_dropout(input, p, train)


def torch_feature_alpha_dropout(input, p, train):
    """``torch.feature_alpha_dropout(input, p, train)``: :func:`feature_alpha_dropout`
    with torch's top-level signature (``st.feature_alpha_dropout``).

    Examples
    --------
    >>> import sharded as st
    >>> st.feature_alpha_dropout(st.ones(1, 2), 0.5, False).tolist()
    [[1.0, 1.0]]
    """
    return feature_alpha_dropout(input, p, train)


def constant_pad_nd(input, pad_, value=0):
    """``torch.constant_pad_nd``: pad (or, with negative amounts, crop) the last
    ``len(pad) // 2`` dims with ``value``, ``pad = (left_last, right_last, left_prev, ...)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.constant_pad_nd(st.tensor([[1., 2.]]), (1, -1), 7.).tolist()
    [[7.0, 1.0]]
    """
    if len(pad_) % 2:
        raise ArgumentError(f"Length of pad must be even but instead it equals {len(pad_)}")
    if len(pad_) // 2 > input.ndim:
        raise ArgumentError(
            "Length of pad should be no more than twice the number of dimensions of the input. "
            f"Pad length is {len(pad_)} while the input has {input.ndim} dimensions."
        )
    for k in range(len(pad_) // 2):
        d = input.ndim - 1 - k
        if input.shape[d] + pad_[2 * k] + pad_[2 * k + 1] < 0:
            raise ArgumentError(
                f"constant_pad_nd: padding {list(pad_)} leaves dim {d} of size "
                f"{input.shape[d]} with a negative size"
            )
    return pad(input, pad_, "constant", value)
