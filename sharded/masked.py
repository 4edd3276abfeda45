"""``st.masked``: torch.masked's reductions and normalizations on plain tensors with a
boolean ``mask`` (``True`` keeps an element; ``None`` keeps all; a mask broadcasts to the
input). Each is a composite of existing ops: the masked-out elements are replaced with the
operation's identity (``0`` for sums, ``1`` for products, ``-inf``/``inf`` or the integer
extremes for max/min, ``nan`` for the median) and the plain op runs on the result, so the
values, dtypes, gradients and the fills of fully masked slices are torch's: ``amax`` gives
``-inf``, ``sum`` ``0``, ``prod`` ``1``, ``mean``/``var``/``std``/``median`` ``nan``,
``softmax``/``log_softmax``/``softmin`` ``nan`` (and ``0``/``-inf`` at masked-out elements of
a partly masked slice), ``norm`` ``0`` (``inf`` for ``ord=-inf``).

torch.masked's functions also take a ``MaskedTensor``; ``st.masked`` has no such type, so
``input`` (and ``other``) are sharded tensors and the mask is always the ``mask`` keyword.

Examples
--------
>>> import sharded as st
>>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], shards=2)
>>> m = st.tensor([[True, False, True], [False, False, False]])
>>> st.masked.sum(x, 1, mask=m).tolist()
[4.0, 0.0]
>>> st.masked.mean(x, 1, mask=m).tolist()
[2.0, nan]
"""

from __future__ import annotations

import math

from . import dtypes as D
from .core.dispatch import is_tensor
from .errors import ArgumentError, ArgumentTypeError, DimError, DTypeError, ShapeError
from .ops.creation.prims import tensor
from .ops.elementwise.prims.exp_log import logaddexp as _logaddexp
from .ops.elementwise.prims.selection import clamp_min, where
from .ops.elementwise.prims.unary import isnan, sqrt
from .ops.linalg.derived.norms import vector_norm
from .ops.order.prims.scan import cumprod as _cumprod
from .ops.order.prims.scan import cumsum as _cumsum
from .ops.order.prims.select import nanmedian
from .ops.reduce.derived.moments import log_softmax as _log_softmax
from .ops.reduce.derived.moments import logsumexp as _logsumexp
from .ops.reduce.derived.moments import softmax as _softmax
from .ops.reduce.prims import amax as _amax
from .ops.reduce.prims import amin as _amin
from .ops.reduce.prims import argmax as _argmax
from .ops.reduce.prims import argmin as _argmin
from .ops.reduce.prims import prod as _prod
from .ops.reduce.prims import sum as _sum
from .ops.shape.prims.reshape import broadcast_to

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]

_SMALL_INTS = ("bool", "uint8", "int8", "int16", "int32")


# --------------------------------------------------------------------------- helpers
def _check_input(fn, input):
    if not is_tensor(input):
        raise ArgumentTypeError(
            f"masked.{fn}: input must be a sharded tensor, got {type(input).__name__} "
            "(MaskedTensor inputs are not supported: pass the mask as mask=)"
        )


def _mask(fn, input, mask):
    """The boolean mask broadcast against ``input`` (None: keep all)."""
    if mask is None:
        return None
    if not is_tensor(mask):
        mask = tensor(mask)
    if mask.ndim > input.ndim:
        raise ShapeError(
            f"masked.{fn}: mask of shape {tuple(mask.shape)} has more dims than the input "
            f"of shape {tuple(input.shape)}"
        )
    for m, s in zip(reversed(tuple(mask.shape)), reversed(tuple(input.shape))):
        if m not in (1, s):
            raise ShapeError(
                f"masked.{fn}: mask of shape {tuple(mask.shape)} does not broadcast to the "
                f"input's shape {tuple(input.shape)}"
            )
    return mask if mask.dtype == D.bool_ else mask.to(D.bool_)


def _fill(input, mask, value):
    """``input`` with the masked-out elements set to ``value``."""
    return input if mask is None else where(mask, input, value)


def _dims(fn, dim, ndim):
    """torch.masked's canonical dims: None or () is all dims; sorted, non-negative."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = max(ndim, 1)
    out = []
    for d in dims:
        if not isinstance(d, int):
            raise ArgumentTypeError(f"masked.{fn}: dim must be int or tuple of ints, got {dim!r}")
        if not -n <= d < n:
            raise DimError(f"masked.{fn}: dim {d} out of range for a {ndim}-d input")
        if d % n in out:
            raise ArgumentError(f"masked.{fn}: dim {d} appears more than once in {dim!r}")
        out.append(d % n)
    return tuple(sorted(out))


def _dim1(fn, dim, ndim):
    return _dims(fn, dim, ndim)[0]


def _dtype(dtype, input):
    return input.dtype if dtype is None else D.as_dtype(dtype)


def _max_identity(input):
    dt = input.dtype
    return -math.inf if dt.is_floating_point or dt.is_complex else D.iinfo(dt).min


def _min_identity(input):
    dt = input.dtype
    return math.inf if dt.is_floating_point or dt.is_complex else D.iinfo(dt).max


def _int_sum_dtype(dtype, input):
    """torch's sum/prod default: small ints and bool accumulate in int64."""
    if dtype is not None:
        return D.as_dtype(dtype)
    return D.int64 if input.dtype.name in _SMALL_INTS else input.dtype


def _count(input, mask, dims, keepdim):
    """How many elements of each reduced slice the mask keeps (int64)."""
    if mask is None:  # a Python int broadcasts (a 0-d input's dim 0 counts its one element)
        return math.prod(input.shape[d] for d in dims if d < input.ndim)
    full = broadcast_to(mask, tuple(input.shape))
    return _sum(full, dims, keepdim, dtype=D.int64)


# --------------------------------------------------------------------------- reductions
def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the unmasked elements over ``dim`` (all dims when None); ``0`` where a slice
    is fully masked. Small integer and bool inputs sum in int64, like torch.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1, 2, 3], [4, 5, 6]])
    >>> st.masked.sum(x, 1, mask=st.tensor([True, False, True])).tolist()
    [4, 10]
    """
    _check_input("sum", input)
    m = _mask("sum", input, mask)
    dims = _dims("sum", dim, input.ndim)
    return _sum(_fill(input, m, 0), dims, bool(keepdim), dtype=_int_sum_dtype(dtype, input))


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the unmasked elements over ``dim``; ``1`` where a slice is fully masked.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.prod(x, 1, mask=st.tensor([True, False, True])).tolist()
    [3.0, 24.0]
    """
    _check_input("prod", input)
    m = _mask("prod", input, mask)
    dims = _dims("prod", dim, input.ndim)
    return _prod(_fill(input, m, 1), dims, bool(keepdim), dtype=_int_sum_dtype(dtype, input))


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along ``dim`` with the masked-out elements counted as ``0``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.0, 2.0, 3.0])
    >>> st.masked.cumsum(x, 0, mask=st.tensor([True, False, True])).tolist()
    [1.0, 1.0, 4.0]
    """
    _check_input("cumsum", input)
    m = _mask("cumsum", input, mask)
    d = _dim1("cumsum", dim, input.ndim)
    return _cumsum(_fill(input, m, 0), d, dtype=_dtype(dtype, input))


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along ``dim`` with the masked-out elements counted as ``1``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([2.0, 5.0, 3.0])
    >>> st.masked.cumprod(x, 0, mask=st.tensor([True, False, True])).tolist()
    [2.0, 2.0, 6.0]
    """
    _check_input("cumprod", input)
    m = _mask("cumprod", input, mask)
    d = _dim1("cumprod", dim, input.ndim)
    return _cumprod(_fill(input, m, 1), d, dtype=_dtype(dtype, input))


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Largest unmasked element over ``dim``; ``-inf`` (the dtype's minimum for integers)
    where a slice is fully masked.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.amax(x, 1, mask=st.tensor([[True, True, False], [False] * 3])).tolist()
    [2.0, -inf]
    """
    _check_input("amax", input)
    m = _mask("amax", input, mask)
    dims = _dims("amax", dim, input.ndim)
    out = _amax(_fill(input, m, _max_identity(input)), dims, bool(keepdim))
    return out.to(_dtype(dtype, input))


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Smallest unmasked element over ``dim``; ``inf`` (the dtype's maximum for integers)
    where a slice is fully masked.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.amin(x, 1, mask=st.tensor([[False, True, True], [False] * 3])).tolist()
    [2.0, inf]
    """
    _check_input("amin", input)
    m = _mask("amin", input, mask)
    dims = _dims("amin", dim, input.ndim)
    out = _amin(_fill(input, m, _min_identity(input)), dims, bool(keepdim))
    return out.to(_dtype(dtype, input))


def _arg(fn, op, identity, input, dim, keepdim, dtype, mask):
    _check_input(fn, input)
    m = _mask(fn, input, mask)
    if dim is not None:
        dim = _dim1(fn, dim, input.ndim)
    # torch casts the indices to dtype, which defaults to the input's (float in, float out)
    out = op(_fill(input, m, identity(input)), dim, bool(keepdim))
    return out.to(_dtype(dtype, input))


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest unmasked element along ``dim`` (of the flattened input when
    None), in ``dtype`` (the input's dtype by default, as torch); ``0`` where a slice is
    fully masked.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.argmax(x, 1, mask=st.tensor([True, True, False])).tolist()
    [1.0, 1.0]
    """
    return _arg("argmax", _argmax, _max_identity, input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest unmasked element along ``dim`` (see :func:`argmax`).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.argmin(x, 1, mask=st.tensor([False, True, True])).tolist()
    [1.0, 1.0]
    """
    return _arg("argmin", _argmin, _min_identity, input, dim, keepdim, dtype, mask)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """``log(sum(exp(x)))`` of the unmasked elements over ``dim``; ``-inf`` where a slice
    is fully masked.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.0, 5.0, 0.0], [1.0, 2.0, 3.0]], dtype=st.float64)
    >>> st.masked.logsumexp(x, 1, mask=st.tensor([[True, False, True], [False] * 3])).tolist()
    [0.6931471805599453, -inf]
    """
    _check_input("logsumexp", input)
    m = _mask("logsumexp", input, mask)
    dims = _dims("logsumexp", dim, input.ndim)
    out = _logsumexp(_fill(input, m, _max_identity(input)), dims, bool(keepdim))
    return out.to(_dtype(dtype, input))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the unmasked elements over ``dim``; ``nan`` where a slice is fully masked.
    The input (or ``dtype``) must be floating point or complex, as in torch.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.mean(x, 1, mask=st.tensor([True, False, True])).tolist()
    [2.0, 5.0]
    """
    _check_input("mean", input)
    dt = _dtype(dtype, input)
    if not (dt.is_floating_point or dt.is_complex):
        raise DTypeError(
            f"masked.mean: needs a floating point or complex dtype, got {dt} "
            f"({'dtype=' if dtype is not None else 'the input'}); pass dtype=st.float32"
        )
    m = _mask("mean", input, mask)
    dims = _dims("mean", dim, input.ndim)
    total = _sum(_fill(input, m, 0), dims, bool(keepdim), dtype=dt)
    return total / _count(input, m, dims, bool(keepdim))


def _std_var(fn, input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    _check_input(fn, input)
    if unbiased is not None and correction is not None:
        raise ArgumentError(f"masked.{fn}: give only one of unbiased and correction")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    dt = _dtype(dtype, input)
    if not (dt.is_floating_point or dt.is_complex):
        dt = D.float32 if dtype is None else dt
    compute = dt if (dt.is_floating_point or dt.is_complex) else D.float32
    m = _mask(fn, input, mask)
    dims = _dims(fn, dim, input.ndim)
    kd = bool(keepdim)
    count = _count(input, m, dims, True)
    mu = _sum(_fill(input, m, 0), dims, True, dtype=dt) / count
    x = input - mu
    sq = x * x.conj() if x.dtype.is_complex else x * x
    total = _sum(_fill(sq, m, 0), dims, kd, dtype=compute)
    if total.dtype.is_complex:
        total = total.real
    n = _count(input, m, dims, kd)
    if corr != 0:
        # torch clamps the divisor at 0: a slice of <= correction elements gives inf/nan
        n = clamp_min(n.to(total.dtype) - corr, 0.0) if is_tensor(n) else max(n - corr, 0.0)
    out = (total / n).to(dt)
    return sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Variance of the unmasked elements over ``dim`` (divisor ``count - correction``,
    ``correction=1`` by default, clamped at 0); ``nan`` where a slice is fully masked.
    Integer inputs give float32.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.var(x, 1, mask=st.tensor([True, False, True])).tolist()
    [2.0, 2.0]
    """
    return _std_var("var", input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Standard deviation of the unmasked elements over ``dim`` (see :func:`var`).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> st.masked.std(x, 1, correction=0, mask=st.tensor([True, False, True])).tolist()
    [1.0, 1.0]
    """
    return _std_var("std", input, dim, unbiased, correction, keepdim, dtype, mask, True)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median (the lower of the two middle values) of the unmasked elements along ``dim``;
    ``nan`` where a slice is fully masked. An integer input is ranked as float32 and its
    result cast back, which needs every slice to keep an element.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 9.0, 3.0, 4.0], [4.0, 5.0, 6.0, 7.0]])
    >>> st.masked.median(x, mask=st.tensor([True, False, True, True])).tolist()
    [3.0, 6.0]
    """
    _check_input("median", input)
    dt = _dtype(dtype, input)
    is_float = input.dtype.is_floating_point
    x = input if is_float else input.to(D.float32)
    m = _mask("median", input, mask)
    d = _dim1("median", dim, input.ndim)
    out = nanmedian(_fill(x, m, math.nan), d, bool(keepdim)).values
    if is_float:
        return out
    if bool(isnan(out).any().item()):
        raise ArgumentError(
            f"masked.median: an integer input ({input.dtype}) needs no fully masked slice "
            f"along dim {dim}"
        )
    return out.to(dt)


# --------------------------------------------------------------------------- norms
def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector ``ord``-norm of the unmasked elements over ``dim``; ``0`` where a slice is
    fully masked (``inf`` for ``ord=-inf``). Floating point or complex inputs only.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[3.0, 9.0, 4.0], [4.0, 5.0, 6.0]])
    >>> st.masked.norm(x, 2.0, 1, mask=st.tensor([[True, False, True], [False] * 3])).tolist()
    [5.0, 0.0]
    """
    _check_input("norm", input)
    if ord is None or isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ArgumentTypeError(f"masked.norm: ord must be a number, got {ord!r}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise DTypeError(f"masked.norm: needs a floating point or complex input, got {input.dtype}")
    m = _mask("norm", input, mask)
    dims = _dims("norm", dim, input.ndim)
    fill = math.inf if ord == -math.inf else 0
    return vector_norm(_fill(input, m, fill), ord, dims, bool(keepdim), dtype=_dtype(dtype, input))


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """``input`` (masked-out elements set to 0) divided by its masked ``ord``-norm along
    ``dim``, the norm clamped below at ``eps``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[3.0, 9.0, 4.0]], dtype=st.float64)
    >>> st.masked.normalize(x, 2.0, 1, mask=st.tensor([True, False, True])).tolist()
    [[0.6, 0.0, 0.8]]
    """
    _check_input("normalize", input)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    m = _mask("normalize", input, mask)
    return _fill(input, m, 0) / clamp_min(nrm, eps)


# --------------------------------------------------------------------------- softmax family
def _soft(fn, op, identity, input, dim, dtype, mask, negate=False):
    _check_input(fn, input)
    dt = _dtype(dtype, input)
    if not (dt.is_floating_point or dt.is_complex):
        raise DTypeError(
            f"masked.{fn}: needs a floating point dtype, got {dt}; pass dtype=st.float32"
        )
    m = _mask(fn, input, mask)
    d = _dim1(fn, dim, input.ndim)
    x = _fill(input, m, identity(input))
    return op(-x if negate else x, d, dtype=dt)


def softmax(input, dim, *, dtype=None, mask=None):
    """Softmax along ``dim`` over the unmasked elements: masked-out elements get ``0``, a
    fully masked slice ``nan``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.0, 7.0, 0.0]])
    >>> st.masked.softmax(x, 1, mask=st.tensor([True, False, True])).tolist()
    [[0.5, 0.0, 0.5]]
    """
    return _soft("softmax", _softmax, _max_identity, input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Log-softmax along ``dim`` over the unmasked elements: masked-out elements get
    ``-inf``, a fully masked slice ``nan``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.0, 7.0, 0.0]], dtype=st.float64)
    >>> st.masked.log_softmax(x, 1, mask=st.tensor([True, False, True])).tolist()
    [[-0.6931471805599453, -inf, -0.6931471805599453]]
    """
    return _soft("log_softmax", _log_softmax, _max_identity, input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):
    """Softmin (softmax of ``-input``) along ``dim`` over the unmasked elements: masked-out
    elements get ``0``, a fully masked slice ``nan``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.0, -7.0, 0.0]])
    >>> st.masked.softmin(x, 1, mask=st.tensor([True, False, True])).tolist()
    [[0.5, 0.0, 0.5]]
    """
    return _soft("softmin", _softmax, _min_identity, input, dim, dtype, mask, negate=True)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """``log(exp(input) + exp(other))`` with the masked-out elements of each operand taken
    as ``-inf`` (so a masked-out ``input`` element gives ``other``'s and vice versa).

    Examples
    --------
    >>> import sharded as st
    >>> a = st.tensor([1.0, 2.0])
    >>> b = st.tensor([3.0, 4.0])
    >>> st.masked.logaddexp(a, b, other_mask=st.tensor([False, False])).tolist()
    [1.0, 2.0]
    """
    _check_input("logaddexp", input)
    _check_input("logaddexp", other)
    a = _fill(input, _mask("logaddexp", input, input_mask), _max_identity(input))
    b = _fill(other, _mask("logaddexp", other, other_mask), _max_identity(other))
    return _logaddexp(a, b).to(_dtype(dtype, input))
