"""Parameter initialisation in place (``st.nn.init``), with torch's fan and gain rules.

Random fills draw from the counter-based generator, so after ``st.manual_seed`` a tensor
gets the same values for any sharding.
"""

from __future__ import annotations

import math

from ..autograd import no_grad
from ..errors import ArgumentError, ShapeError
from ..linalg import qr
from ..ops.creation.prims import eye
from ..ops.elementwise.prims.special import erfinv
from ..ops.random.prims.counter import rand_like, randn, randn_like

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "zeros_",
    "ones_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "trunc_normal_",
    "eye_",
    "orthogonal_",
]


def calculate_gain(nonlinearity, param=None):
    """torch's recommended gain for ``nonlinearity``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.calculate_gain("tanh"), round(st.nn.init.calculate_gain("relu"), 6)
    (1.6666666666666667, 1.414214)
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")  # fmt: skip
    if nonlinearity in linear:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ArgumentError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ArgumentError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor):
    if tensor.ndim < 2:
        raise ShapeError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(shape {list(tensor.shape)})"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


_calculate_fan_in_and_fan_out = _fans  # torch's private name, which some code calls


def _no_generator(generator):
    if generator is not None:
        raise ArgumentError("generator= is not supported: use st.manual_seed")


def _fill(tensor, values):
    with no_grad():
        tensor.copy_(values)
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` from U(a, b).

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.init.uniform_(st.empty(100), -2.0, -1.0)
    >>> -2.0 <= w.min().item() and w.max().item() < -1.0
    True
    """
    _no_generator(generator)
    return _fill(tensor, rand_like(tensor) * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` from N(mean, std²).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.normal_(st.empty(3), std=0.0).tolist()
    [0.0, 0.0, 0.0]
    """
    _no_generator(generator)
    return _fill(tensor, randn_like(tensor) * std + mean)


def constant_(tensor, val):
    """Fill ``tensor`` with ``val``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.constant_(st.empty(2), 0.5).tolist()
    [0.5, 0.5]
    """
    with no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor):
    """Fill ``tensor`` with zeros.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.zeros_(st.ones(2)).tolist()
    [0.0, 0.0]
    """
    return constant_(tensor, 0)


def ones_(tensor):
    """Fill ``tensor`` with ones.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.ones_(st.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return constant_(tensor, 1)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.init.xavier_uniform_(st.empty(30, 20))
    >>> w.abs().max().item() <= (6 / 50) ** 0.5
    True
    """
    fan_in, fan_out = _fans(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.xavier_normal_(st.empty(30, 20)).shape
    sharded.Size([30, 20])
    """
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ArgumentError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        raise ShapeError(f"Initializing zero-element tensors is a no-op (shape {tensor.shape})")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.init.kaiming_uniform_(st.empty(8, 6), a=5 ** 0.5)
    >>> w.abs().max().item() <= 1 / 6 ** 0.5  # Linear's default bound
    True
    """
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std²) with ``std = gain / sqrt(fan)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.kaiming_normal_(st.empty(8, 6), mode="fan_out").shape
    sharded.Size([8, 6])
    """
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill ``tensor`` from N(mean, std²) truncated to ``[a, b]`` (inverse-CDF sampling,
    as torch).

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.init.trunc_normal_(st.empty(1000), std=1.0, a=-0.5, b=0.5)
    >>> -0.5 <= w.min().item() and w.max().item() <= 0.5
    True
    """
    _no_generator(generator)

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    u = rand_like(tensor) * (2 * hi - 2 * lo) + (2 * lo - 1)  # U(2 lo - 1, 2 hi - 1)
    return _fill(tensor, (erfinv(u) * (std * math.sqrt(2.0)) + mean).clamp(a, b))


def eye_(tensor):
    """Fill the 2-d ``tensor`` with the identity matrix.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.init.eye_(st.empty(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.ndim != 2:
        raise ShapeError(f"Only tensors with 2 dimensions are supported, got {tensor.ndim}")
    return _fill(tensor, eye(*tensor.shape, dtype=tensor.dtype))


def orthogonal_(tensor, gain=1, generator=None):
    """Fill ``tensor`` (viewed as ``shape[0]`` rows) with a (semi-)orthogonal matrix from
    the QR decomposition of a Gaussian one, times ``gain`` (torch's ``orthogonal_``).

    Examples
    --------
    >>> import sharded as st
    >>> q = st.nn.init.orthogonal_(st.empty(3, 5, dtype=st.float64))
    >>> bool(((q @ q.t()) - st.eye(3, dtype=st.float64)).abs().max() < 1e-12)
    True
    """
    _no_generator(generator)
    if tensor.ndim < 2:
        raise ShapeError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor  # torch: a no-op
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = randn(rows, cols, dtype=tensor.dtype)
    if rows < cols:
        flat = flat.t()
    q, r = qr(flat)
    q = q * r.diagonal().sign()  # make the decomposition unique, as torch
    if rows < cols:
        q = q.t()
    return _fill(tensor, (q * gain).reshape(tensor.shape))
