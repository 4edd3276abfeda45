"""Activation functions of ``st.nn.functional`` (torch's non-linear activations: relu,
leaky_relu, elu, softplus, hardtanh, relu6, logsigmoid, gelu, silu, softmax, log_softmax,
threshold, selu, celu, prelu, rrelu, the shrinks, mish, hardswish, hardsigmoid, softsign,
tanhshrink, glu, softmin) and their in-place forms, derived from sharded ops;
``st.nn.functional`` re-exports them.

Each is a ``where`` of branches whose autograd gives torch's gradient, kinks included: the
branch a ``where`` picks at a kink is the one torch's backward formula uses there (e.g.
``x <= 0`` takes the negative branch of selu/celu, hardsigmoid's gradient is 0 at +-3).
"""

from __future__ import annotations

import math

from .. import dtypes as D
from ..amp import lower_precision
from ..core.dispatch import via_float32
from ..core.registry import bind
from ..errors import ArgumentError, ShapeError, UnsupportedDType
from ..layout import normalize_dim
from ..ops.elementwise.prims.selection import clamp, where
from ..ops.elementwise.prims.special import erf
from ..ops.elementwise.prims.unary import exp, log1p, sigmoid, tanh
from ..ops.elementwise.prims.unary import relu as _relu
from ..ops.random.prims.counter import rand_like
from ..ops.reduce.derived import moments as _F

__all__ = [
    "relu",
    "softmax",
    "log_softmax",
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
    "threshold",
    "threshold_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "prelu",
    "rrelu",
    "rrelu_",
    "hardshrink",
    "softshrink",
    "mish",
    "hardswish",
    "hardsigmoid",
    "softsign",
    "tanhshrink",
    "glu",
    "softmin",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _floating(name, input):
    """torch has no integer kernel for these (NotImplementedError)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise UnsupportedDType(f'"{name}" not implemented for {input.dtype.name}')


def _out(input, out, inplace):
    return input.copy_(out) if inplace else out


def _src(input, inplace):
    """A copy to compute from when ``input`` will be overwritten and is in a graph: the
    backward must not save the tensor it modifies (torch's in-place forms keep gradients)."""
    return input.clone() if inplace and input.requires_grad else input


def _implicit_dim(dim, input):
    """torch's legacy choice when ``dim`` is None: 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1


@via_float32  # one rounding at the end, as torch's fused kernel (not one per step)
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
    if x.dtype == D.bfloat16:  # in float32, rounded once, as torch's fused kernel
        out = silu(x.float()).to(D.bfloat16)
    else:
        out = x * sigmoid(x)
    return _out(input, out, inplace)


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


def relu(input, inplace=False):
    """``max(x, 0)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.relu(st.tensor([-1., 2.])).tolist()
    [0.0, 2.0]
    """
    return _out(input, _relu(_src(input, inplace)), inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where positive, else ``negative_slope * x``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.leaky_relu(st.tensor([-2., 2.]), 0.5).tolist()
    [-1.0, 2.0]
    """
    x = _src(input, inplace)
    return _out(input, where(x > 0, x, x * negative_slope), inplace)


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
    return _out(input, where(x > 0, x, neg), inplace)


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
    """``clamp(x, min_val, max_val)``, in an integer input's dtype (bounds truncated) as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.hardtanh(st.tensor([-3., 0.5, 3.])).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min_val > max_val:  # torch's F.hardtanh checks; its hardtanh_ does not
        raise ArgumentError(f"min_val cannot be greater than max_val ({min_val} > {max_val})")
    return _hardtanh(input, min_val, max_val, inplace)


def _hardtanh(input, min_val, max_val, inplace):
    dt = input.dtype
    if dt == D.bool_ or (dt.np.kind == "u" and min(min_val, max_val) < 0):
        raise UnsupportedDType(
            f"hardtanh of {dt.name} with limits ({min_val}, {max_val}): torch takes no bool "
            f"input, and no negative limit for an unsigned one"
        )
    if D.category(dt) == 1:  # bounds in x's dtype: clamp(int64, -2.5, 2.5) would be float
        lo, hi = (int(D.check_int(v, dt)) for v in (min_val, max_val))
        return _out(input, clamp(input, lo, hi), inplace)
    # torch's gradient is 1 strictly inside (min_val, max_val) only: 0 on the bounds
    x = _src(input, inplace)
    inside = (x > min_val) & (x < max_val)
    out = where(inside, x, clamp(x, min_val, max_val).detach())
    return _out(input, out, inplace)


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
    return _hardtanh(input, min_val, max_val, True)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.threshold(st.tensor([0.5, 1.0, 2.0]), 1.0, -9.0).tolist()
    [-9.0, -9.0, 2.0]
    """
    if input.dtype.name == "bool":
        raise UnsupportedDType('"threshold" not implemented for bool')
    x = _src(input, inplace)
    return _out(input, where(x > threshold, x, value).to(input.dtype), inplace)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([0., 3.]); _ = st.nn.functional.threshold_(x, 1., 5.); x.tolist()
    [5.0, 3.0]
    """
    return _threshold(input, threshold, value, True)


def _elu(input, alpha, scale, input_scale):
    """torch's elu family: ``scale * x`` where ``x > 0`` else ``scale * alpha * (exp(x *
    input_scale) - 1)`` (the negative branch at 0, as torch's backward)."""
    neg = (exp(clamp(input, max=0.0) * input_scale) - 1) * (alpha * scale)
    return where(input > 0, input * scale, neg)


def selu(input, inplace=False):
    """Scaled ELU with torch's fixed ``alpha`` and ``scale`` (self-normalizing).

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.nn.functional.selu(st.tensor([-1., 1.])).tolist()]
    [-1.1113, 1.0507]
    """
    _floating("elu", input)
    return _out(input, _elu(_src(input, inplace), _SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


_threshold = threshold


def selu_(input):
    """In-place :func:`selu`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([0.]); _ = st.nn.functional.selu_(x); x.tolist()
    [0.0]
    """
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.nn.functional.celu(st.tensor([-1., 1.]), 2.0).tolist()]
    [-0.7869, 1.0]
    """
    if alpha == 0:
        raise ArgumentError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _floating("elu", input)
    return _out(input, _elu(_src(input, inplace), alpha, 1.0, 1.0 / alpha), inplace)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([2.]); _ = st.nn.functional.celu_(x); x.tolist()
    [2.0]
    """
    return celu(input, alpha, True)


@bind("prelu")
@lower_precision
def prelu(input, weight):
    """``x`` where positive, else ``weight * x``; ``weight`` holds one slope or one per
    channel (dim 1; a 1-d input has one channel).

    Examples
    --------
    >>> import sharded as st
    >>> st.prelu(st.tensor([[-1., 2.], [-3., 4.]]), st.tensor([0.5, 0.25])).tolist()
    [[-0.5, 2.0], [-1.5, 4.0]]
    """
    if weight.ndim > 1:
        raise ShapeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    if weight.dtype != input.dtype:
        raise UnsupportedDType(
            f"prelu: Type promoting not supported. Got {input.dtype.name} and {weight.dtype.name}"
        )
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() == 1:
        w = weight.reshape(())
    elif weight.numel() == channels:
        w = weight.reshape((channels,) + (1,) * (input.ndim - 2))
    else:
        raise ShapeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{weight.numel()} and channel size = {channels}."
        )
    return where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU whose negative slope is drawn uniformly from ``[lower, upper]`` per
    element when ``training`` (from the counter-based generator), else ``(lower + upper)
    / 2``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.rrelu(st.tensor([-2., 2.]), 0.25, 0.75).tolist()
    [-1.0, 2.0]
    """
    if lower > upper:
        raise ArgumentError(
            f"Lower bound should be less than or equal to the upper bound ({lower} > {upper})"
        )
    _floating("rrelu_with_noise", input)
    if training:
        slope = rand_like(input, requires_grad=False) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    x = _src(input, inplace)
    return _out(input, where(x > 0, x, x * slope), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([-4.]); _ = st.nn.functional.rrelu_(x, 0.5, 0.5); x.tolist()
    [-2.0]
    """
    return rrelu(input, lower, upper, training, True)


@bind("hardshrink")
def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0.

    Examples
    --------
    >>> import sharded as st
    >>> st.hardshrink(st.tensor([-1., 0.5, 0.7])).tolist()
    [-1.0, 0.0, 0.699999988079071]
    """
    _floating("hardshrink", input)
    return where((input > lambd) | (input < -lambd), input, 0.0)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.softshrink(st.tensor([-2., 0.25, 2.])).tolist()
    [-1.5, 0.0, 1.5]
    """
    if lambd < 0:
        raise ArgumentError(f"lambda must be greater or equal to 0, but found to be {lambd}")
    _floating("softshrink", input)
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))


def _softplus(input):
    """``log(1 + exp(x))``, and ``x`` itself above 20 (finite gradient for large x)."""
    return where(input > 20.0, input, exp(clamp(input, max=20.0)).log1p())


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.functional.mish(st.tensor(1.0)).item(), 6)
    0.865098
    """
    _floating("mish", input)
    x = _src(input, inplace)
    return _out(input, x * tanh(_softplus(x)), inplace)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (torch's gradient: 0 up to -3, ``x / 3 + 1/2`` inside, 1
    from 3).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.hardswish(st.tensor([-4., 0., 1., 4.])).tolist()
    [-0.0, 0.0, 0.6666666865348816, 4.0]
    """
    _floating("hardswish", input)
    x = _src(input, inplace)
    mid = x * (x + 3.0) * (1.0 / 6.0)
    out = where(x <= -3.0, x * 0.0, where(x >= 3.0, x, mid))
    return _out(input, out, inplace)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6`` (gradient ``1/6`` strictly inside ``(-3, 3)``, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.hardsigmoid(st.tensor([-4., 0., 4.])).tolist()
    [0.0, 0.5, 1.0]
    """
    _floating("hardsigmoid", input)
    x = _src(input, inplace)
    inside = (x > -3.0) & (x < 3.0)
    out = where(inside, x * (1.0 / 6.0) + 0.5, where(x >= 3.0, 1.0, 0.0))
    return _out(input, out.to(input.dtype), inplace)


def softsign(input):
    """``x / (1 + |x|)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.softsign(st.tensor([-1., 3.])).tolist()
    [-0.5, 0.75]
    """
    return input / (input.abs() + 1)


def tanhshrink(input):
    """``x - tanh(x)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.tanhshrink(st.tensor([0.])).tolist()
    [0.0]
    """
    return input - tanh(input)


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.glu(st.tensor([3., 0.])).tolist()
    [1.5]
    """
    if input.ndim == 0:
        raise ShapeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if n % 2:
        raise ShapeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.narrow(d, 0, n // 2), input.narrow(d, n // 2, n // 2)
    return a * sigmoid(b)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)`` along ``dim`` (torch's implicit choice when None), in ``dtype``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.softmin(st.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    dim = _implicit_dim(dim, input)
    if dtype is None:
        _floating("softmax", input)
    x = input if dtype is None else input.to(dtype)
    return _F.softmax(-x, dim)
