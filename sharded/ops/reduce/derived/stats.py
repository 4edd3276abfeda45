"""Derived statistics and distances: cov, corrcoef, cdist, dist, renorm and the trapezoid
rule (trapezoid, trapz, cumulative_trapezoid), each a composition of primitives (so their
gradients come from the primitives), following torch's own formulas step by step.
"""

from __future__ import annotations

import math
import numbers
import warnings

from .... import dtypes as D
from ....amp import keep_float32
from ....core.dispatch import is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ....layout import normalize_dim
from ...elementwise.prims.complex_ import complex as _complex
from ...elementwise.prims.selection import where
from ...linalg.derived.norms import vector_norm
from ...order.prims.scan import cumsum

__all__ = [
    "cov",
    "corrcoef",
    "cdist",
    "dist",
    "renorm",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
]


def _need_tensor(name, param, v):
    if not is_tensor(v):
        raise DTypeError(f"{name}(): argument '{param}' must be Tensor, not {type(v).__name__}")


# ------------------------------------------------------------------------------ cov
def _weights(kind, w, n, integral):
    if w.ndim > 1:
        raise ShapeError(f"cov(): expected {kind} to have one or fewer dimensions but got {w.ndim}")
    if w.numel() != n:
        raise ShapeError(
            f"cov(): expected {kind} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n}"
        )
    if integral and w.dtype.is_floating_point or w.dtype.is_complex:
        raise DTypeError(
            f"cov(): expected {kind} to have {'integral' if integral else 'floating point'} "
            f"dtype but got {kind} with {w.dtype.name} dtype"
        )
    if not integral and not w.dtype.is_floating_point:
        raise DTypeError(
            f"cov(): expected {kind} to have floating point dtype but got {w.dtype.name}"
        )
    if bool((w < 0).any().item()):  # torch checks the values (a read, before any command)
        raise ArgumentError(f"cov(): {kind} cannot be negative")
    return w


# torch's Correlation.cpp: avg = sum(w x) / sum(w); c = (x - avg) (w (x - avg))^H / norm
@bind("cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input`` (observations in the
    columns; a 1-D input is one variable), with frequency weights ``fweights`` (integers)
    and observation weights ``aweights`` (floats), as torch's.

    Examples
    --------
    >>> import sharded as st
    >>> st.cov(st.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    _need_tensor("cov", "input", input)
    x = input
    if x.ndim > 2:
        raise ShapeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with "
            f"{x.ndim} dimensions"
        )
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _weights("fweights", fweights, n, True)
    if aweights is not None:
        aw = _weights("aweights", aweights, n, False)
        w = aw if w is None else w * aw
    if w is None:
        wsum = float(n)
        avg = x.sum(1) / n  # no observations: 0 / 0, NaN as torch
    else:
        wsum = w.sum()
        avg = (x * w).sum(1) / wsum
    if w is not None and correction != 0:
        scale = (w * aweights).sum() / wsum if aweights is not None else 1
        norm = wsum - correction * scale
    else:
        norm = wsum - correction
    # torch reads one value to check it; a weighted norm stays a tensor, in the gradient
    # (d cov / d aweights goes through it too)
    if (norm.item() if is_tensor(norm) else norm) <= 0:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = 0.0
    d = x - avg.unsqueeze(1)
    dw = d if w is None else d * w
    c = d.matmul(dw.mT.conj() if d.dtype.is_complex else dw.mT)
    return (c / (norm if is_tensor(norm) else float(norm))).squeeze()


# corrcoef = cov / (std_i std_j), clipped to [-1, 1] (each part of a complex value)
@bind("corrcoef")
def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.corrcoef(st.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    s = (d.real if d.dtype.is_complex else d).sqrt()
    c = c / s.reshape(-1, 1) / s.reshape(1, -1)
    if c.dtype.is_complex:
        return _complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ----------------------------------------------------------------------- cdist, dist
_MODES = (
    "use_mm_for_euclid_dist_if_necessary",
    "use_mm_for_euclid_dist",
    "donot_use_mm_for_euclid_dist",
)


# cdist[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p over broadcast batch dims
@keep_float32
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between each row of ``x1`` (``B x P x M``) and each row of ``x2``
    (``B x R x M``), batch dims broadcast; ``p`` in ``[0, inf]``. ``compute_mode`` is
    accepted for torch's signature: the distances are always computed directly (exact, not
    through ``|a|^2 + |b|^2 - 2ab``).

    Examples
    --------
    >>> import sharded as st
    >>> st.cdist(st.tensor([[0., 0.], [3., 4.]]), st.tensor([[0., 0.]])).tolist()
    [[0.0], [5.0]]
    """
    _need_tensor("cdist", "x1", x1)
    _need_tensor("cdist", "x2", x2)
    if compute_mode not in _MODES:
        raise ArgumentError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise ShapeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
        if not t.dtype.is_floating_point:
            raise DTypeError(
                f"cdist only supports floating-point dtypes, {name} got: {t.dtype.name}"
            )
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if x1.dtype != x2.dtype:
        raise DTypeError(
            f"cdist: expected both inputs of one dtype, got {x1.dtype.name} and {x2.dtype.name}"
        )
    if not isinstance(p, numbers.Real) or p < 0:
        raise ArgumentError(f"cdist only supports non-negative p values, got {p}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p != math.inf:
        return vector_norm(diff, ord=p, dim=-1)
    # torch's cdist gives each tied maximum the whole gradient (max's own rule splits it):
    # the max, plus a term that is 0 in value and carries |diff|'s gradient where it ties
    a = diff.abs()
    top = a.detach().amax(-1, keepdim=True) if diff.shape[-1] else a.detach().sum(-1, True)
    tie = (a.detach() == top).to(a.dtype)
    return top.squeeze(-1) + ((a - a.detach()) * tie).sum(-1)


@bind("dist")
def dist(input, other, p=2):
    """``norm(input - other, p)`` (broadcast), a 0-d tensor; floating or complex only.

    Examples
    --------
    >>> import sharded as st
    >>> st.dist(st.tensor([3., 4.]), st.tensor([0., 0.])).item()
    5.0
    """
    _need_tensor("dist", "input", input)
    _need_tensor("dist", "other", other)
    return vector_norm(input - other, ord=p)


# --------------------------------------------------------------------------- renorm
def _renorm_check(x, p, dim, maxnorm):
    if x.ndim < 2:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    if p <= 0:
        raise ArgumentError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise ArgumentError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    return normalize_dim(dim, x.ndim)


# renorm: each slice along ``dim`` whose p-norm exceeds maxnorm scaled by maxnorm/(norm+1e-7)
@bind("renorm")
def renorm(input, p, dim, maxnorm):
    """Rescale each sub-tensor ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm``
    to norm ``maxnorm`` (torch's factor ``maxnorm / (norm + 1e-7)``).

    Examples
    --------
    >>> import sharded as st
    >>> st.renorm(st.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.0).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    _need_tensor("renorm", "input", input)
    d = _renorm_check(input, p, dim, maxnorm)
    norm = vector_norm(input, ord=p, dim=[i for i in range(input.ndim) if i != d], keepdim=True)
    return input * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


@bind("renorm_")
def renorm_(self, p, dim, maxnorm):
    """In-place :func:`renorm`."""
    return self.copy_(renorm(self, p, dim, maxnorm))


# ------------------------------------------------------------------------ trapezoid
def _samples(name, y, dim):
    _need_tensor(name, "y", y)
    if y.dtype == D.bool_:
        raise DTypeError(f"{name}: received a bool input for `y`, but bool is not supported")
    return normalize_dim(dim, y.ndim)


def _spacing(x, dx, d, y):
    """The widths ``x[i+1] - x[i]`` along ``d`` (a 1-D ``x`` laid along ``d``), or ``dx``."""
    if x is None:
        return 1.0 if dx is None else dx
    if dx is not None:
        raise ArgumentTypeError("trapezoid(): pass either x or dx, not both")
    if not is_tensor(x):
        raise ArgumentTypeError(
            f"trapezoid(): argument 'x' must be Tensor, not {type(x).__name__} (dx= for a "
            f"constant spacing)"
        )
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise ShapeError(
                f"trapezoid: There must be one `x` value for each sample point, got "
                f"{x.shape[0]} x values for {y.shape[d]} samples"
            )
        return x.diff().reshape([-1 if i == d else 1 for i in range(y.ndim)])
    return x.diff(dim=d - y.ndim)  # x broadcasts against y from the right


def _pieces(y, x, dx, d):
    n = y.shape[d]
    return (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * _spacing(x, dx, d, y) / 2


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Trapezoidal rule along ``dim``: sample points ``x`` (a tensor) or a constant spacing
    ``dx`` (default 1).

    Examples
    --------
    >>> import sharded as st
    >>> st.trapezoid(st.tensor([1., 2., 4.])).item()
    4.5
    >>> st.trapezoid(st.tensor([1., 2., 4.]), st.tensor([0., 1., 3.])).item()
    7.5
    """
    d = _samples("trapezoid", y, dim)
    if y.shape[d] == 0:  # no intervals: zeros of y's own dtype (torch's zeros(y.options()))
        _spacing(x, dx, d, y)
        return y.sum(d).to(y.dtype) * 0
    return _pieces(y, x, dx, d).sum(d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid` (torch's older name).

    Examples
    --------
    >>> import sharded as st
    >>> st.trapz(st.tensor([1., 2., 4.]), dx=2.0).item()
    9.0
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoidal integral along ``dim`` (one element fewer than ``y`` there).

    Examples
    --------
    >>> import sharded as st
    >>> st.cumulative_trapezoid(st.tensor([1., 2., 4.])).tolist()
    [1.5, 4.5]
    """
    d = _samples("cumulative_trapezoid", y, dim)
    if y.shape[d] == 0:
        _spacing(x, dx, d, y)
        return y * 1.0
    return cumsum(_pieces(y, x, dx, d), d)
