"""Stateless neural-network functions (``st.nn.functional``), derived from sharded ops."""

from __future__ import annotations

import math

from ..errors import ArgumentError, ShapeError
from ..ops.elementwise.prims.selection import clamp, where
from ..ops.elementwise.prims.special import erf
from ..ops.elementwise.prims.unary import exp, log1p, sigmoid, sqrt, tanh
from ..ops.elementwise.prims.unary import relu as _relu
from ..ops.index.prims.index_ops import index_select
from ..ops.nnops import derived as _pool
from ..ops.nnops.derived import *  # noqa: F403
from ..ops.nnops.prims import conv as _conv
from ..ops.nnops.prims.conv import *  # noqa: F403
from ..ops.random.prims.counter import rand_like
from ..ops.reduce.derived import moments as _F
from . import activation_fns, losses, shaping
from .activation_fns import *  # noqa: F403
from .losses import *  # noqa: F403
from .shaping import *  # noqa: F403

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "linear",
    "dropout",
    "dropout2d",
    "layer_norm",
    "batch_norm",
    "embedding",
    "gelu",
    "silu",
    "leaky_relu",
    "elu",
    "softplus",
    "relu6",
    "hardtanh",
    "logsigmoid",
    "relu_",
    "elu_",
    "leaky_relu_",
    "hardtanh_",
    *activation_fns.__all__,
    *losses.__all__,
    *_conv.__all__,
    *_pool.__all__,
    *shaping.__all__,
]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.linear(st.ones(2, 3), st.ones(4, 3)).shape
    sharded.Size([2, 4])
    """
    out = input @ weight.t()
    return out if bias is None else out + bias


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (identity unless ``training``). The mask comes from the counter-based generator
    (``st.rand_like``), so it is the same for any sharding of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0)
    >>> out = st.nn.functional.dropout(st.ones(1000), 0.5)
    >>> sorted(set(out.tolist()))
    [0.0, 2.0]
    >>> st.nn.functional.dropout(st.ones(3), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:  # torch: all zeros (and zero gradient), no division by 0
        out = input * 0.0
    else:
        keep = rand_like(input, requires_grad=False) >= p  # kept with probability 1 - p
        out = _src(input, inplace) * (keep.to(input.dtype) * (1.0 / (1.0 - p)))
    if inplace:
        return input.copy_(out)
    return out


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
    if input.ndim < 2:
        raise ShapeError(f"batch_norm: expected at least 2D input, got shape {list(input.shape)}")
    # statistics per channel (dim 1), over the batch and every spatial dim
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
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


def embedding(input, weight, padding_idx=None):
    """Rows ``weight[input]``: an (*, D) tensor for integer indices of shape (*). The
    gradient scatters back into the rows (none into ``padding_idx``'s row).

    Examples
    --------
    >>> import sharded as st
    >>> w = st.arange(6.).reshape(3, 2)
    >>> st.nn.functional.embedding(st.tensor([[2, 0]]), w).tolist()
    [[[4.0, 5.0], [0.0, 1.0]]]
    """
    if input.dtype.is_floating_point:
        raise ArgumentError(f"embedding: indices must be integers, got {input.dtype}")
    rows = index_select(weight, 0, input.reshape(-1))
    if padding_idx is not None:
        # torch: the padding row gets no gradient, so mask it out of the graph
        pad = padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx
        hit = (input.reshape(-1) == pad).unsqueeze(1)
        rows = where(hit, rows.detach(), rows)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))


def gelu(input, approximate="none"):
    """Gaussian error linear unit: ``x * Phi(x)`` exactly (``approximate='none'``, through
    the ``erf`` primitive) or torch's tanh approximation (``'tanh'``).

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 6) for v in st.nn.functional.gelu(st.tensor([-1.0, 1.0])).tolist()]
    [-0.158655, 0.841345]
    """
    if approximate == "none":
        return input * (0.5 * (1.0 + erf(input * (1.0 / math.sqrt(2.0)))))
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + tanh(inner))
    raise ArgumentError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (swish).

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.functional.silu(st.tensor(1.0)).item(), 6)
    0.731059
    """
    x = _src(input, inplace)
    out = x * sigmoid(x)
    return input.copy_(out) if inplace else out


def _implicit_dim(dim, input):
    """torch's legacy choice when ``dim`` is None: 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (torch's implicit choice when None), computed in ``dtype``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.softmax(st.zeros(1, 2), dim=-1).tolist()
    [[0.5, 0.5]]
    """
    return _F.softmax(input, _implicit_dim(dim, input), dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Log-softmax along ``dim`` (torch's implicit choice when None), computed in ``dtype``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.log_softmax(st.zeros(2), dim=0).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """
    return _F.log_softmax(input, _implicit_dim(dim, input), dtype=dtype)


def _inplace(input, out, inplace):
    return input.copy_(out) if inplace else out


def _src(input, inplace):
    """What an activation computes from: a copy when it will overwrite ``input`` in place,
    so the tensors its backward saved are not the ones it modifies (torch's in-place
    activations on a non-leaf keep their gradient)."""
    return input.clone() if inplace and input.requires_grad else input


def relu(input, inplace=False):
    """``max(x, 0)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.relu(st.tensor([-1., 2.])).tolist()
    [0.0, 2.0]
    """
    return _inplace(input, _relu(_src(input, inplace)), inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where positive, else ``negative_slope * x``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.leaky_relu(st.tensor([-2., 2.]), 0.5).tolist()
    [-1.0, 2.0]
    """
    x = _src(input, inplace)
    return _inplace(input, where(x > 0, x, x * negative_slope), inplace)


def elu(input, alpha=1.0, inplace=False):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.elu(st.tensor([0., 1.])).tolist()
    [0.0, 1.0]
    """
    x = _src(input, inplace)
    neg = (exp(clamp(x, max=0.0)) - 1) * alpha  # clamped: no overflow on the unused side
    return _inplace(input, where(x > 0, x, neg), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.functional.softplus(st.tensor(0.)).item(), 6)
    0.693147
    """
    bx = input * beta
    soft = log1p(exp(clamp(bx, max=threshold))) / beta
    return where(bx > threshold, input, soft)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(x, min_val, max_val)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.hardtanh(st.tensor([-3., 0.5, 3.])).tolist()
    [-1.0, 0.5, 1.0]
    """
    # torch's gradient is 1 strictly inside (min_val, max_val) only: 0 on the bounds
    x = _src(input, inplace)
    inside = (x > min_val) & (x < max_val)
    out = where(inside, x, clamp(x, min_val, max_val).detach())
    return _inplace(input, out, inplace)


def relu6(input, inplace=False):
    """``clamp(x, 0, 6)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.relu6(st.tensor([-1., 7.])).tolist()
    [0.0, 6.0]
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for any ``x``.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.functional.logsigmoid(st.tensor(-200.)).item(), 1)
    -200.0
    """
    # the branch at 0 is the one whose autograd gives torch's sigmoid(-0) = 1/2
    neg = input - log1p(exp(clamp(input, max=0.0)))
    pos = -log1p(exp(-clamp(input, min=0.0)))
    return where(input < 0, neg, pos)


def relu_(input):
    """In-place :func:`relu`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([-1., 1.]); _ = st.nn.functional.relu_(x); x.tolist()
    [0.0, 1.0]
    """
    return relu(input, True)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.]); _ = st.nn.functional.elu_(x); x.tolist()
    [1.0]
    """
    return elu(input, alpha, True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([-2.]); _ = st.nn.functional.leaky_relu_(x, 0.5); x.tolist()
    [-1.0]
    """
    return leaky_relu(input, negative_slope, True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([3.]); _ = st.nn.functional.hardtanh_(x); x.tolist()
    [1.0]
    """
    return hardtanh(input, min_val, max_val, True)


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
