"""Elementwise functions of the Array API namespace, over sharded's elementwise primitives.

The primitives keep torch's dtype rules; the wrappers here make the operands agree with the
standard's first: two arrays promote by their dtypes alone (torch lets a 0-d tensor only raise
the category, so ``int8[3] + int64[()]`` would stay int8), and a Python scalar may stand on
either side.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes as D
from ..errors import DTypeError
from ..tensor import ShardedTensor
from ._dtypes import promote, result_type, scalar_fits
from ._st import ST as F


def _cast(x, dt):
    return x if x.dtype == dt else x.to(dt)


def _scalar_array(s, like):
    """A Python scalar as a 0-d array next to ``like`` (its dtype where the kinds agree); a
    float past that dtype's range becomes inf, as NumPy's and torch's casts round it (``full``
    itself refuses such a fill value, as torch's does)."""
    dt = result_type(like, s)
    if isinstance(s, builtins.float) and dt.is_floating_point:
        s = s if builtins.abs(s) <= float(D.finfo_np(dt.np).max) else math.copysign(math.inf, s)
    return F.full((), s, dtype=dt, device=like.device)


def _scalar(s, like, numbers):
    """Python scalar ``s`` as the operand next to array ``like``: as it is when ``numbers``
    (the function takes Python numbers) and it fits ``like``'s dtype, since torch's promotion
    then keeps that dtype as the standard does (and the number rides in the command); else a
    0-d array of the standard's result dtype (one more op)."""
    if numbers and scalar_fits(like.dtype, s) and _as_is(s, like.dtype):
        return s
    return _scalar_array(s, like)


def _as_is(s, dt):
    """Whether Python scalar ``s`` gives the same result as a 0-d array of ``dt``: a bool
    only next to bool (torch refuses ``x - True``; as 1 it subtracts), an int inside an
    integer ``dt`` (``full`` refuses one outside, where a kernel would wrap it) and inside
    int64, a finite float inside ``dt``'s range (``full`` makes it inf)."""
    kind = dt.np.kind
    if isinstance(s, builtins.bool):
        return kind == "b"
    if isinstance(s, builtins.int):
        info = np.iinfo(dt.np if kind in "iu" else np.int64)
        return info.min <= s <= info.max
    if isinstance(s, builtins.float):
        return not math.isfinite(s) or builtins.abs(s) <= float(D.finfo_np(dt.np).max)
    return True


def prepare(x1, x2, numbers=False):
    """Both operands in the standard's common dtype: arrays, or a Python scalar as it is
    where ``numbers`` allows (see :func:`_scalar`), else as a 0-d array."""
    t1, t2 = isinstance(x1, ShardedTensor), isinstance(x2, ShardedTensor)
    if t1 and t2:
        if x1.dtype != x2.dtype and (x1.ndim == 0 or x2.ndim == 0):
            dt = promote(x1.dtype, x2.dtype)
            return _cast(x1, dt), _cast(x2, dt)
        return x1, x2
    if t2:
        return _scalar(x1, x2, numbers), x2
    if t1:
        return x1, _scalar(x2, x1, numbers)
    raise DTypeError(f"at least one operand must be an array, got {x1!r} and {x2!r}")


# torch has no Number overload of these: a Python scalar operand becomes a 0-d array
_TENSORS_ONLY = {
    "atan2", "hypot", "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
    "nextafter",
}  # fmt: skip


def _binary(st_fn, name, doc_example):
    numbers = name not in _TENSORS_ONLY

    def fn(x1, x2, /):
        a, b = prepare(x1, x2, numbers)
        return st_fn(a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"``{name}(x1, x2)`` elementwise, with the standard's type promotion.\n\n"
        "Examples\n--------\n>>> from sharded import array_api as xp\n"
        f">>> {doc_example}\n"
    )
    return fn


def _unary(st_fn, name, doc_example):
    def fn(x, /):
        return st_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"``{name}(x)`` elementwise.\n\n"
        "Examples\n--------\n>>> from sharded import array_api as xp\n"
        f">>> {doc_example}\n"
    )
    return fn


_A = "xp.asarray([1.0, 4.0])"
_I = "xp.asarray([3, 5])"
_B = "xp.asarray([True, False])"

_UNARY = {
    "abs": ("abs", "xp.abs(xp.asarray([-1.5, 2.0])).tolist()\n[1.5, 2.0]"),
    "acos": ("acos", f"xp.acos({_A} / 4).tolist()[1]\n0.0"),
    "acosh": ("acosh", f"xp.acosh({_A}).tolist()[0]\n0.0"),
    "asin": ("asin", f"xp.asin({_A} * 0).tolist()\n[0.0, 0.0]"),
    "asinh": ("asinh", f"xp.asinh({_A} * 0).tolist()\n[0.0, 0.0]"),
    "atan": ("atan", f"xp.atan({_A} * 0).tolist()\n[0.0, 0.0]"),
    "atanh": ("atanh", f"xp.atanh({_A} * 0).tolist()\n[0.0, 0.0]"),
    "bitwise_invert": ("bitwise_not", f"xp.bitwise_invert({_I}).tolist()\n[-4, -6]"),
    "ceil": ("ceil", "xp.ceil(xp.asarray([1.2, -1.2])).tolist()\n[2.0, -1.0]"),
    "cos": ("cos", f"xp.cos({_A} * 0).tolist()\n[1.0, 1.0]"),
    "cosh": ("cosh", f"xp.cosh({_A} * 0).tolist()\n[1.0, 1.0]"),
    "exp": ("exp", f"xp.exp({_A} * 0).tolist()\n[1.0, 1.0]"),
    "floor": ("floor", "xp.floor(xp.asarray([1.2, -1.2])).tolist()\n[1.0, -2.0]"),
    "isfinite": ("isfinite", f"xp.isfinite({_A}).tolist()\n[True, True]"),
    "isinf": ("isinf", f"xp.isinf({_A}).tolist()\n[False, False]"),
    "isnan": ("isnan", f"xp.isnan({_A}).tolist()\n[False, False]"),
    "log": ("log", f"xp.log({_A}).tolist()[0]\n0.0"),
    "log1p": ("log1p", f"xp.log1p({_A} * 0).tolist()\n[0.0, 0.0]"),
    "log2": ("log2", f"xp.log2({_A}).tolist()\n[0.0, 2.0]"),
    "log10": ("log10", f"xp.log10({_A}).tolist()[0]\n0.0"),
    "logical_not": ("logical_not", f"xp.logical_not({_B}).tolist()\n[False, True]"),
    "negative": ("neg", f"xp.negative({_I}).tolist()\n[-3, -5]"),
    "positive": ("positive", f"xp.positive({_I}).tolist()\n[3, 5]"),
    "reciprocal": ("reciprocal", f"xp.reciprocal({_A}).tolist()\n[1.0, 0.25]"),
    "round": ("round", "xp.round(xp.asarray([0.5, 1.5])).tolist()\n[0.0, 2.0]"),
    "signbit": ("signbit", "xp.signbit(xp.asarray([-0.0, 1.0])).tolist()\n[True, False]"),
    "sin": ("sin", f"xp.sin({_A} * 0).tolist()\n[0.0, 0.0]"),
    "sinh": ("sinh", f"xp.sinh({_A} * 0).tolist()\n[0.0, 0.0]"),
    "square": ("square", f"xp.square({_I}).tolist()\n[9, 25]"),
    "sqrt": ("sqrt", f"xp.sqrt({_A}).tolist()\n[1.0, 2.0]"),
    "tan": ("tan", f"xp.tan({_A} * 0).tolist()\n[0.0, 0.0]"),
    "tanh": ("tanh", f"xp.tanh({_A} * 0).tolist()\n[0.0, 0.0]"),
    "trunc": ("trunc", "xp.trunc(xp.asarray([1.7, -1.7])).tolist()\n[1.0, -1.0]"),
}

_BINARY = {
    "add": ("add", f"xp.add({_I}, 1).tolist()\n[4, 6]"),
    "atan2": ("atan2", f"xp.atan2({_A} * 0, {_A}).tolist()\n[0.0, 0.0]"),
    "bitwise_and": ("bitwise_and", f"xp.bitwise_and({_I}, 6).tolist()\n[2, 4]"),
    "bitwise_left_shift": (
        "bitwise_left_shift",
        f"xp.bitwise_left_shift({_I}, 1).tolist()\n[6, 10]",
    ),
    "bitwise_or": ("bitwise_or", f"xp.bitwise_or({_I}, 8).tolist()\n[11, 13]"),
    "bitwise_right_shift": (
        "bitwise_right_shift",
        f"xp.bitwise_right_shift({_I}, 1).tolist()\n[1, 2]",
    ),
    "bitwise_xor": ("bitwise_xor", f"xp.bitwise_xor({_I}, 1).tolist()\n[2, 4]"),
    "copysign": ("copysign", f"xp.copysign({_A}, -1.0).tolist()\n[-1.0, -4.0]"),
    "divide": ("div", f"xp.divide({_A}, 2.0).tolist()\n[0.5, 2.0]"),
    "equal": ("eq", f"xp.equal({_I}, 3).tolist()\n[True, False]"),
    "greater": ("gt", f"xp.greater({_I}, 3).tolist()\n[False, True]"),
    "greater_equal": ("ge", f"xp.greater_equal({_I}, 3).tolist()\n[True, True]"),
    "hypot": ("hypot", "xp.hypot(xp.asarray([3.0]), 4.0).tolist()\n[5.0]"),
    "less": ("lt", f"xp.less({_I}, 5).tolist()\n[True, False]"),
    "less_equal": ("le", f"xp.less_equal({_I}, 3).tolist()\n[True, False]"),
    "logaddexp": ("logaddexp", "xp.logaddexp(xp.asarray([0.0]), 0.0).tolist()[0] > 0.69\nTrue"),
    "logical_and": ("logical_and", f"xp.logical_and({_B}, True).tolist()\n[True, False]"),
    "logical_or": ("logical_or", f"xp.logical_or({_B}, False).tolist()\n[True, False]"),
    "logical_xor": ("logical_xor", f"xp.logical_xor({_B}, True).tolist()\n[False, True]"),
    "maximum": ("maximum", f"xp.maximum({_I}, xp.asarray(4)).tolist()\n[4, 5]"),
    "minimum": ("minimum", f"xp.minimum({_I}, xp.asarray(4)).tolist()\n[3, 4]"),
    "multiply": ("mul", f"xp.multiply({_I}, 2).tolist()\n[6, 10]"),
    "nextafter": ("nextafter", f"(xp.nextafter({_A}, 2.0) > {_A}).tolist()\n[True, False]"),
    "not_equal": ("ne", f"xp.not_equal({_I}, 3).tolist()\n[False, True]"),
    "pow": ("pow", f"xp.pow({_I}, 2).tolist()\n[9, 25]"),
    "remainder": ("remainder", f"xp.remainder({_I}, -2).tolist()\n[-1, -1]"),
    "subtract": ("sub", f"xp.subtract({_I}, 1).tolist()\n[2, 4]"),
}

for _name, (_st, _ex) in _UNARY.items():
    globals()[_name] = _unary(getattr(F, _st), _name, _ex)
for _name, (_st, _ex) in _BINARY.items():
    globals()[_name] = _binary(getattr(F, _st), _name, _ex)


def _complex_op(name, x):
    """sharded's ``name`` for a complex ``x`` (complex ops arrive with the complex dtypes)."""
    fn = getattr(F, name, None)
    if fn is None:
        raise DTypeError(f"{name}() of a {x.dtype.name} array is not supported by this sharded")
    return fn(x)


def sign(x, /):
    """The sign of each element (-1, 0 or 1; NaN stays NaN, which torch maps to 0; for complex
    ``x / |x|``, 0 at 0).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.sign(xp.asarray([-2.0, 0.0, float("nan")])).tolist()
    [-1.0, 0.0, nan]
    """
    if x.dtype.np.kind == "c":
        return F.sgn(x)  # x / |x|, 0 at 0
    out = F.sign(x)
    if x.dtype.np.kind == "f":
        out = F.where(F.isnan(x), x, out)
    return out


def expm1(x, /):
    """``exp(x) - 1``, accurate near 0; complex values follow the standard's special cases
    (C99's: ``+inf + 0j -> +inf + 0j``, ``-inf + inf j -> -1 + 0j``...) where torch, like
    NumPy, gives NaN parts.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.expm1(xp.asarray([0.0, 1e-10], dtype=xp.float64)).tolist()
    [0.0, 1.00000000005e-10]
    """
    if x.dtype.np.kind != "c":
        return F.expm1(x)
    re, im = F.real(x), F.imag(x)
    # exp(x) cos(y) - 1 = expm1(x) cos(y) - 2 sin(y/2)^2 keeps the small values
    out_re = F.expm1(re) * F.cos(im) - 2 * F.sin(im / 2) ** 2 + 0.0  # -0 -> +0 at 0
    out_im = F.where(im == 0, im, F.exp(re) * F.sin(im))
    neg, pos = re == -math.inf, (re == math.inf) & ~F.isfinite(im)
    out_re = F.where(neg, -1.0, F.where(pos, math.inf, out_re))
    out_im = F.where(neg & ~F.isfinite(im), 0.0, F.where(pos, math.nan, out_im))
    return F.complex(out_re, out_im)


def floor_divide(x1, x2, /):
    """``floor(x1 / x2)``; with an infinite operand the standard wants ``x1 / x2`` rounded
    (``inf // 2`` is ``inf``, ``1 // -inf`` is ``-0``) where torch gives NaN and ``-1``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.floor_divide(xp.asarray([7.0, float("inf")]), 2.0).tolist()
    [3.0, inf]
    """
    a, b = prepare(x1, x2, numbers=True)
    out = F.floor_divide(a, b)
    if out.dtype.np.kind == "f":
        inf = [F.isinf(o) for o in (a, b) if isinstance(o, ShardedTensor) or math.isinf(o)]
        if inf:  # a finite Python scalar adds no infinity
            out = F.where(inf[0] if len(inf) == 1 else inf[0] | inf[1], F.div(a, b), out)
    return out


def conj(x, /):
    """The complex conjugate (a copy of ``x`` for real dtypes).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.conj(xp.asarray([1.0, -2.0])).tolist()
    [1.0, -2.0]
    """
    return _complex_op("conj", x) if x.dtype.np.kind == "c" else x.clone()


def real(x, /):
    """The real part (a copy of ``x`` for real dtypes).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.real(xp.asarray([1.5])).tolist()
    [1.5]
    """
    return _complex_op("real", x) if x.dtype.np.kind == "c" else x.clone()


def imag(x, /):
    """The imaginary part (zeros for real dtypes).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.imag(xp.asarray([1.5])).tolist()
    [0.0]
    """
    return _complex_op("imag", x) if x.dtype.np.kind == "c" else F.zeros_like(x)


def clip(x, /, min=None, max=None):
    """Clamp ``x`` to ``[min, max]``; the result keeps ``x``'s dtype (the bounds take no part
    in promotion) and has the broadcast shape of ``x`` and array bounds.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.clip(xp.asarray([1, 5, 9]), 2, 6).tolist()
    [2, 5, 6]
    """
    out = x
    kind = x.dtype.np.kind
    for bound, fn, side in ((min, F.maximum, "min"), (max, F.minimum, "max")):
        if bound is None:
            continue
        if isinstance(bound, ShardedTensor):
            out = fn(out, _cast(bound, x.dtype))
            continue
        if kind in "iu" and isinstance(bound, builtins.float):
            bound = math.floor(bound) if fn is F.minimum else math.ceil(bound)
        if scalar_fits(x.dtype, bound):  # clamp takes the number itself: no 0-d array
            out = F.clamp(out, **{side: bound})
        else:
            out = fn(out, F.full((), bound, dtype=x.dtype, device=x.device))
    if out is x:
        out = x.clone()
    return out


__all__ = (
    list(_UNARY) + list(_BINARY) + ["conj", "real", "imag", "clip", "sign", "expm1", "floor_divide"]
)
