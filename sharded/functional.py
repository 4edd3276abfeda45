"""Torch-named functions on ShardedTensors: elementwise ops, reductions and derived ops.

Each function is a thin call of a primitive (``tensor.apply``); derived ops say in one line
what they compute from primitives and need no gradient rule of their own.
"""

from __future__ import annotations

import builtins
import collections
import math

import numpy as np

from . import dtypes as D
from .errors import ArgumentError, DTypeError
from .layout import normalize_dim
from .core.dispatch import apply
from .tensor import ShardedTensor

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def _operand(o):
    """Tensors, scalars and NumPy arrays pass through; lists become NumPy arrays."""
    if isinstance(o, ShardedTensor) or isinstance(o, np.ndarray):
        return o
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, _SCALARS):
        return o
    if isinstance(o, (list, tuple)):
        return np.asarray(o)
    raise DTypeError(f"unsupported operand {o!r} of type {type(o).__name__}")


def _ew(name, *operands):
    ops = [_operand(o) for o in operands]
    if not builtins.any(isinstance(o, ShardedTensor) for o in ops):
        from .ops.creation import tensor
        ops[0] = tensor(ops[0])
    return apply(name, *ops)


def _inplace(name, x, *operands):
    apply(name, *[_operand(o) for o in (x,) + operands], target=x)
    return x


# ---------------------------------------------------------------------------- arithmetic
def add(input, other, *, alpha=1):
    """``input + alpha * other`` with broadcasting.

    Examples
    --------
    >>> import sharded as st
    >>> st.add(st.tensor([[1], [2]]), st.tensor([1, 2])).sum().item()
    12
    """
    return _ew("add", input, other if alpha == 1 else mul(other, alpha))


def sub(input, other, *, alpha=1):
    """``input - alpha * other``.

    Examples
    --------
    >>> import sharded as st
    >>> st.sub(st.tensor([3, 4]), 1).tolist()
    [2, 3]
    """
    return _ew("sub", input, other if alpha == 1 else mul(other, alpha))


def mul(input, other):
    """Elementwise product.

    Examples
    --------
    >>> import sharded as st
    >>> st.mul(st.tensor([1., 2.]), 3).tolist()
    [3.0, 6.0]
    """
    return _ew("mul", input, other)


def div(input, other, *, rounding_mode=None):
    """True division (integers give the default float dtype); ``rounding_mode="floor"``
    floors.

    Examples
    --------
    >>> import sharded as st
    >>> st.div(st.tensor([1, 3]), 2).tolist()
    [0.5, 1.5]
    """
    if rounding_mode is None:
        return _ew("div", input, other)
    if rounding_mode == "floor":
        return _ew("floor_divide", input, other)
    raise ArgumentError(f"rounding_mode must be None or 'floor', got {rounding_mode!r}")


def floor_divide(input, other):
    """``input // other`` (floor, like torch and Python)."""
    return _ew("floor_divide", input, other)


def remainder(input, other):
    """``input % other`` with the sign of ``other`` (Python semantics, as torch)."""
    return _ew("remainder", input, other)


def pow(input, exponent):
    """``input ** exponent``.

    Examples
    --------
    >>> import sharded as st
    >>> st.pow(st.tensor([2, 3]), 2).tolist()
    [4, 9]
    """
    return _ew("pow", input, exponent)


def maximum(input, other):
    """Elementwise maximum (NaN propagates)."""
    return _ew("maximum", input, other)


def minimum(input, other):
    """Elementwise minimum (NaN propagates)."""
    return _ew("minimum", input, other)


def clamp(input, min=None, max=None):
    """Clamp into ``[min, max]`` (either may be a tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.clamp(st.tensor([-1., 0.5, 2.]), min=0, max=1).tolist()
    [0.0, 0.5, 1.0]
    """
    if min is None and max is None:
        raise ArgumentError("clamp(): at least one of 'min' or 'max' must not be None")
    ops = [_operand(o) if o is not None else None for o in (input, min, max)]
    return apply("clamp", *ops)


clip = clamp


def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1., -2.])
    >>> st.where(x > 0, x, 0.).tolist()
    [1.0, 0.0]
    """
    return _ew("where", condition, input, other)


def _unary(name, doc):
    def f(input):
        return _ew(name, input)
    f.__name__ = name
    f.__doc__ = f"""{doc}

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}(st.tensor([1.0, 4.0])).shape
    sharded.Size([2])
    """
    return f


neg = _unary("neg", "``-input``.")
negative = neg
abs = _unary("abs", "Absolute value.")
exp = _unary("exp", "``e ** input``.")
log = _unary("log", "Natural logarithm.")
log1p = _unary("log1p", "``log(1 + input)``, accurate for small inputs.")
sqrt = _unary("sqrt", "Square root.")
sin = _unary("sin", "Sine.")
cos = _unary("cos", "Cosine.")
tanh = _unary("tanh", "Hyperbolic tangent.")
sigmoid = _unary("sigmoid", "``1 / (1 + exp(-input))``.")
relu = _unary("relu", "``max(input, 0)``.")
isnan = _unary("isnan", "True where the element is NaN.")
isfinite = _unary("isfinite", "True where the element is neither inf nor NaN.")
logical_not = _unary("logical_not", "Elementwise logical NOT.")
bitwise_not = _unary("bitwise_not", "Bitwise NOT (logical NOT on bool).")


def _binary(name, doc):
    def f(input, other):
        return _ew(name, input, other)
    f.__name__ = name
    f.__doc__ = f"""{doc}

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}(st.tensor([True, False]), st.tensor([True, True])).dtype
    sharded.bool
    """
    return f


logical_and = _binary("logical_and", "Elementwise logical AND.")
logical_or = _binary("logical_or", "Elementwise logical OR.")
logical_xor = _binary("logical_xor", "Elementwise logical XOR.")
bitwise_and = _binary("bitwise_and", "Bitwise AND (logical on bool).")
bitwise_or = _binary("bitwise_or", "Bitwise OR (logical on bool).")
bitwise_xor = _binary("bitwise_xor", "Bitwise XOR (logical on bool).")
eq = _binary("eq", "``input == other``.")
ne = _binary("ne", "``input != other``.")
lt = _binary("lt", "``input < other``.")
le = _binary("le", "``input <= other``.")
gt = _binary("gt", "``input > other``.")
ge = _binary("ge", "``input >= other``.")


# ---------------------------------------------------------------------------- reductions
MaxResult = collections.namedtuple("max", ["values", "indices"])
MinResult = collections.namedtuple("min", ["values", "indices"])


def _tensor(x):
    if isinstance(x, ShardedTensor):
        return x
    from .ops.creation import tensor
    return tensor(x)


def _dims(x, dim, axis=None, empty_means_all=True):
    """Normalise ``dim=``/``axis=`` to a sorted tuple of dims (``None``: all of them)."""
    if axis is not None:
        if dim is not None:
            raise ArgumentError("give dim= or axis=, not both")
        dim = axis
    nd = x.ndim
    if dim is None or (empty_means_all and isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(nd))
    ds = [dim] if isinstance(dim, int) else list(dim)
    out = tuple(sorted(normalize_dim(d, nd) for d in ds))
    if len(set(out)) != len(out):
        raise ArgumentError(f"dim {tuple(ds)} appears multiple times in the list of dims")
    return out


def _count(x, dims) -> int:
    return math.prod(x.shape[d] for d in dims)


def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Sum over all elements, one dim or a tuple of dims.

    Integer and bool inputs sum in int64, like torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.sum(st.ones(2, 3), dim=1).tolist()
    [3.0, 3.0]
    """
    x = _tensor(input)
    return apply("sum", x, _dims(x, dim, axis), keepdim,
                 None if dtype is None else D.as_dtype(dtype))


def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Product of elements (over all, one dim or a tuple of dims).

    Examples
    --------
    >>> import sharded as st
    >>> st.prod(st.tensor([1, 2, 3, 4])).item()
    24
    """
    x = _tensor(input)
    return apply("prod", x, _dims(x, dim, axis), keepdim,
                 None if dtype is None else D.as_dtype(dtype))


def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Arithmetic mean; floating inputs only (or give ``dtype=``), like torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.mean(st.tensor([1., 2., 3., 4.])).item()
    2.5
    """
    x = _tensor(input)
    dt = D.as_dtype(dtype) if dtype is not None else x.dtype
    if not dt.is_floating_point:
        raise DTypeError(f"mean(): could not infer output dtype. Input dtype must be a "
                         f"floating point dtype (or pass dtype=). Got: {x.dtype.name}")
    dims = _dims(x, dim, axis)
    # mean = sum / count
    return apply("sum", x, dims, keepdim, dt) / _count(x, dims)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Variance with ``correction`` (default 1, Bessel's) over the given dims.

    Examples
    --------
    >>> import sharded as st
    >>> st.var(st.tensor([1., 2., 3., 4.])).item()
    1.6666666269302368
    """
    x = _tensor(input)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"var(): input dtype should be floating point, got {x.dtype.name}")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = _dims(x, dim, axis)
    # var = sum((x - mean)^2) / (n - correction), two passes for stability
    d = x - mean(x, dims, keepdim=True)
    return sum(d * d, dims, keepdim) / builtins.max(_count(x, dims) - correction, 0)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Standard deviation: ``sqrt(var(...))``.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.std(st.tensor([2., 4.])).item(), 4)
    1.4142
    """
    return sqrt(var(input, dim, unbiased, keepdim, correction=correction, axis=axis))


def amax(input, dim=(), keepdim=False):
    """Maximum over all elements, a dim or a tuple of dims (values only).

    Examples
    --------
    >>> import sharded as st
    >>> st.amax(st.tensor([[1, 5], [3, 2]]), dim=0).tolist()
    [3, 5]
    """
    x = _tensor(input)
    return apply("amax", x, _dims(x, dim), keepdim)


def amin(input, dim=(), keepdim=False):
    """Minimum over all elements, a dim or a tuple of dims (values only)."""
    x = _tensor(input)
    return apply("amin", x, _dims(x, dim), keepdim)


def _maxmin(name, input, dim, keepdim, other):
    x = _tensor(input)
    if isinstance(dim, ShardedTensor):
        dim, other = None, dim
    if other is not None:
        return maximum(x, other) if name == "max" else minimum(x, other)
    if dim is None:
        return apply("a" + name, x, tuple(range(x.ndim)), keepdim)
    vals, idx = apply(f"{name}_dim", x, normalize_dim(dim, x.ndim), keepdim)
    return (MaxResult if name == "max" else MinResult)(vals, idx)


def max(input, dim=None, keepdim=False, *, other=None):
    """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)`` along ``dim``;
    ``max(x, y)``: elementwise maximum.

    Examples
    --------
    >>> import sharded as st
    >>> st.max(st.tensor([[1, 5], [3, 2]]), dim=1).indices.tolist()
    [1, 0]
    """
    return _maxmin("max", input, dim, keepdim, other)


def min(input, dim=None, keepdim=False, *, other=None):
    """Like :func:`max`, for the minimum."""
    return _maxmin("min", input, dim, keepdim, other)


def argmax(input, dim=None, keepdim=False):
    """Index of the maximum (into the flattened tensor when ``dim`` is None).

    Examples
    --------
    >>> import sharded as st
    >>> st.argmax(st.tensor([[1, 5], [7, 2]])).item()
    2
    """
    x = _tensor(input)
    return apply("argmax", x, None if dim is None else normalize_dim(dim, x.ndim), keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the minimum (into the flattened tensor when ``dim`` is None)."""
    x = _tensor(input)
    return apply("argmin", x, None if dim is None else normalize_dim(dim, x.ndim), keepdim)


def all(input, dim=None, keepdim=False):
    """True if every element is non-zero.

    Examples
    --------
    >>> import sharded as st
    >>> st.all(st.tensor([1, 0])).item()
    False
    """
    x = _tensor(input)
    return apply("all", x, _dims(x, dim), keepdim)


def any(input, dim=None, keepdim=False):
    """True if any element is non-zero."""
    x = _tensor(input)
    return apply("any", x, _dims(x, dim), keepdim)


def logsumexp(input, dim=None, keepdim=False):
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.logsumexp(st.tensor([1000., 1000.]), dim=0).item(), 3)
    1000.693
    """
    x = _tensor(input)
    if not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    dims = _dims(x, dim)
    m = amax(x, dims, keepdim=True)
    m = where(isfinite(m), m, 0.0)  # all -inf (or inf) rows must not give nan
    # lse = m + log(sum(exp(x - m)))
    out = log(sum(exp(x - m), dims, keepdim=True)) + m
    return out if keepdim else apply("squeeze_dims", out, dims)


def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max for stability.

    Examples
    --------
    >>> import sharded as st
    >>> st.softmax(st.tensor([1000., 1000.]), dim=0).tolist()
    [0.5, 0.5]
    """
    x = _tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    elif not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    d = (normalize_dim(dim, x.ndim),)
    e = exp(x - amax(x, d, keepdim=True))
    return e / sum(e, d, keepdim=True)


def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x, dim)``: log-probabilities without overflow.

    Examples
    --------
    >>> import sharded as st
    >>> st.log_softmax(st.tensor([0., 0.]), dim=0).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """
    x = _tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    return x - logsumexp(x, dim, keepdim=True)
