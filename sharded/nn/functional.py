"""Stateless neural-network functions (``st.nn.functional``), derived from sharded ops.

Laid out as torch's ``nn/functional.py``, one public namespace; to keep files short, this
module defines the linear, dropout, normalization, embedding, one-hot, padding and distance
functions itself and imports the rest: the activations from :mod:`._activation`, the losses
from :mod:`._loss`, and the convolutions and pooling from the ``nnops`` op family.
"""

from __future__ import annotations

from .. import dtypes as D
from ..core.dispatch import apply
from ..errors import ArgumentError, DTypeError, ShapeError
from ..layout import normalize_dim
from ..linalg import vector_norm
from ..ops.creation.prims import arange

# clamp, erf, exp and log1p are unused here: they stay names of this namespace (as they were
# when the activations were defined in it)
from ..ops.elementwise.prims.selection import clamp, where  # noqa: F401
from ..ops.elementwise.prims.special import erf  # noqa: F401
from ..ops.elementwise.prims.unary import exp, log1p, sigmoid, sqrt, tanh  # noqa: F401
from ..ops.nnops import derived as _pool
from ..ops.nnops.derived import *  # noqa: F403
from ..ops.nnops.prims import conv as _conv
from ..ops.nnops.prims.conv import *  # noqa: F403
from ..ops.random.prims.counter import rand_like
from ..ops.shape.derived.tile import broadcast_tensors
from . import (
    _activation,
    _attention,
    _convolution,
    _ctc,
    _embedding_bag,
    _fractional,
    _loss,
    _loss_extra,
    _loss_margin,
    _multihead,
    _nn_extra,
    _normalization,
    _sampling,
    _upsampling,
)
from ._activation import *  # noqa: F403
from ._attention import *  # noqa: F403
from ._basic import _source_rows, dropout, embedding, linear, pad  # noqa: F401
from ._convolution import *  # noqa: F403
from ._ctc import *  # noqa: F403
from ._embedding_bag import *  # noqa: F403
from ._fractional import *  # noqa: F403
from ._loss import *  # noqa: F403
from ._loss_extra import *  # noqa: F403
from ._loss_margin import *  # noqa: F403
from ._multihead import *  # noqa: F403
from ._nn_extra import *  # noqa: F403
from ._normalization import *  # noqa: F403
from ._sampling import *  # noqa: F403
from ._upsampling import *  # noqa: F403

__all__ = [
    "sigmoid",
    "tanh",
    "linear",
    "dropout",
    "dropout2d",
    "layer_norm",
    "batch_norm",
    "embedding",
    "one_hot",
    "pad",
    "normalize",
    "cosine_similarity",
    *_activation.__all__,
    *_attention.__all__,
    *_multihead.__all__,
    *_normalization.__all__,
    *_loss.__all__,
    *_loss_extra.__all__,
    *_loss_margin.__all__,
    *_nn_extra.__all__,
    *_ctc.__all__,
    *_upsampling.__all__,
    *_sampling.__all__,
    *_conv.__all__,
    *_convolution.__all__,
    *_embedding_bag.__all__,
    *_fractional.__all__,
    *_pool.__all__,
]


def _norm_dims(input, normalized_shape):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k :]) != shape or input.ndim < k:
        raise ShapeError(
            f"layer_norm: normalized_shape {list(shape)} does not match the trailing dims of "
            f"input of shape {list(input.shape)}"
        )
    return tuple(range(input.ndim - k, input.ndim))


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (one draw per entry of all but the last two dims) with
    probability ``p`` and scale the rest by ``1 / (1 - p)`` (identity unless ``training``).

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> out = st.nn.functional.dropout2d(st.ones(1, 50, 2, 2))
    >>> rows = out.reshape(50, 4).tolist()  # a channel is one draw: all 0 or all 2
    >>> all(len(set(r)) == 1 for r in rows), sorted({r[0] for r in rows})
    (True, [0.0, 2.0])
    """
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        raise ShapeError(
            f"dropout2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
            f"{list(input.shape)}"
        )
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        # one draw per channel: laid out like the input's (N, C) corner, broadcast over H, W
        keep = rand_like(input[..., :1, :1], requires_grad=False) >= p
        out = input * (keep.to(input.dtype) * (1.0 / (1.0 - p)))
    if inplace:
        return input.copy_(out)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` dims: ``(x - mean) / sqrt(var +
    eps) * weight + bias`` with the biased variance (torch's ``layer_norm``).

    Examples
    --------
    >>> import sharded as st
    >>> y = st.nn.functional.layer_norm(st.tensor([[1., 2., 3.]]), (3,))
    >>> [round(v, 4) for v in y[0].tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    dims = _norm_dims(input, normalized_shape)
    mu = input.mean(dims, keepdim=True)
    d = input - mu
    var = (d * d).mean(dims, keepdim=True)
    out = d / sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Normalize each channel (dim 1) of an (N, C, *) input by its batch
    statistics when ``training`` (then the running statistics, if given, are updated in
    place: ``running = (1 - momentum) * running + momentum * batch``, with the unbiased
    batch variance), else by ``running_mean``/``running_var`` (torch's ``batch_norm``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1., 10.], [3., 30.]])
    >>> st.nn.functional.batch_norm(x, None, None, training=True, eps=0.0).tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    if input.numel() == 0 and input.ndim >= 1:
        # torch returns an empty input as it is (any statistics, running ones untouched)
        return input * 1
    if input.ndim < 2:
        raise ShapeError(f"batch_norm: expected at least 2D input, got shape {list(input.shape)}")
    # statistics per channel (dim 1), over the batch and every spatial dim
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training:
        count = input.numel() // input.shape[1]
        if count == 1:
            raise ArgumentError(
                "Expected more than 1 value per channel when training, got input size "
                f"{list(input.shape)}"
            )
        mean = input.mean(dims, keepdim=True)
        d = input - mean
        var = (d * d).mean(dims, keepdim=True)
        if running_mean is not None:
            # why no grad: the running statistics are buffers, not part of the graph
            m = mean.detach().reshape(-1)
            running_mean.mul_(1 - momentum).add_(m, alpha=momentum)
        if running_var is not None:
            unbiased = var.detach().reshape(-1) * (count / (count - 1))
            running_var.mul_(1 - momentum).add_(unbiased, alpha=momentum)
    else:
        if running_mean is None or running_var is None:
            raise ArgumentError("batch_norm: running_mean and running_var are needed in eval")
        d = input - running_mean.reshape(shape)
        var = running_var.reshape(shape)
    out = d / sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def torch_dropout(input, p, train):
    """``torch.dropout(input, p, train)``: :func:`dropout` with torch's top-level
    signature (``st.dropout``; ``p`` and ``train`` are required).

    Examples
    --------
    >>> import sharded as st
    >>> st.dropout(st.ones(3), 0.5, False).tolist()
    [1.0, 1.0, 1.0]
    """
    return dropout(input, p, train)


def torch_dropout_(input, p, train):
    """``torch.dropout_(input, p, train)``: in-place ``st.dropout``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(2); _ = st.dropout_(x, 1.0, True); x.tolist()
    [0.0, 0.0]
    """
    return dropout(input, p, train, True)


def one_hot(tensor_, num_classes=-1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)``, 1 at each index and 0
    elsewhere; ``num_classes=-1`` takes ``max + 1``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.one_hot(st.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    x = tensor_
    if x.dtype != D.int64:
        raise DTypeError(f"one_hot is only applicable to index tensor, got {x.dtype}")
    if num_classes == -1:
        if x.numel() == 0:
            raise ArgumentError("Can not infer total number of classes from empty tensor.")
        num_classes = int(x.max().item()) + 1
    # with a given num_classes the workers check the values (no read: one_hot can be traced);
    # one out of range raises at the next read, an IndexError
    x = apply("check_indices", x, 0, num_classes, None, "Class value")
    return (x.unsqueeze(-1) == arange(num_classes)).to(D.int64)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.normalize(st.tensor([[3., 4.]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    if out is not None:
        raise ArgumentError("normalize: out= is not supported")
    norm = vector_norm(input, p, normalize_dim(dim, input.ndim), keepdim=True)
    return input / norm.clamp_min(eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``, each norm
    clamped at ``eps``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.cosine_similarity(st.tensor([[1., 0.]]), st.tensor([[1., 1.]])).tolist()
    [0.7071067690849304]
    """
    if x1.ndim != x2.ndim and min(x1.ndim, x2.ndim) == 0:
        raise ShapeError("cosine_similarity: 0-d inputs are not supported")
    d = normalize_dim(dim, max(x1.ndim, x2.ndim))
    # the norms are of the broadcast operands, as torch's: a size-1 dim of x2 that x1
    # stretches along ``dim`` counts once per element of x1 there (else the cosine tops 1)
    x1, x2 = broadcast_tensors(x1, x2)
    n1, n2 = (_floor(vector_norm(x, 2, d, keepdim=True), eps) for x in (x1, x2))
    return ((x1 / n1) * (x2 / n2)).sum(d)


def _floor(norm, eps):
    """``norm`` clamped at ``eps`` in value only: torch clamps in place without recording
    it, so the gradient still flows through the norm."""
    return norm + (norm.clamp_min(eps) - norm).detach()
