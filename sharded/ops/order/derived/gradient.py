"""``gradient``: torch's finite-difference estimate of a function's partial derivatives.

Second-order central differences inside, one- or two-sided second-order differences at the
edges, with a uniform spacing or the coordinates of the samples along each dim. Composed from
``narrow``, ``cat`` and elementwise ops, so it runs on any layout (a split dim included) and
its gradient comes from theirs.
"""

from __future__ import annotations

import numbers

from ....core.dispatch import as_tensor, is_tensor
from ....errors import ArgumentError, DTypeError, ShapeError
from ....layout import normalize_dim
from ...shape.prims.joining import cat

__all__ = ["gradient"]


def _sl(x, d, start, stop=None):
    """``x[..., start:stop]`` along ``d`` (Python slice bounds, negatives from the end)."""
    n = x.shape[d]
    lo, hi, _ = slice(start, stop).indices(n)
    return x.narrow(d, lo, max(hi - lo, 0))


def _uniform(x, d, h, edge_order):
    center = (_sl(x, d, 2) - _sl(x, d, 0, -2)) / h / 2
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h
    else:
        first = (_sl(x, d, 0, 1) * -1.5 + _sl(x, d, 1, 2) * 2 - _sl(x, d, 2, 3) * 0.5) / h
        last = (_sl(x, d, -3, -2) * 0.5 + _sl(x, d, -2, -1) * -2 + _sl(x, d, -1) * 1.5) / h
    return cat([first, center, last], d)


def _coordinates(x, d, coords, edge_order):
    if coords.ndim != 1:
        raise ShapeError(
            "torch.gradient expected each element of spacing to have one dimension, but got "
            f"an element with {coords.ndim} dimensions!"
        )
    shape = [1] * x.ndim
    shape[d] = -1
    dx = coords.diff()
    h1, h2 = dx[:-1], dx[1:]
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _sl(x, d, 0, -2) + b * _sl(x, d, 1, -1) + c * _sl(x, d, 2)
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / dx[0]
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / dx[-1]
    else:
        p, q = dx[0], dx[1]
        first = (
            -(2.0 * p + q) / (p * (p + q)) * _sl(x, d, 0, 1)
            + (p + q) / (p * q) * _sl(x, d, 1, 2)
            - p / (q * (p + q)) * _sl(x, d, 2, 3)
        )
        p, q = dx[-1], dx[-2]  # the last step and the one before it
        last = (
            p / (q * (p + q)) * _sl(x, d, -3, -2)
            - (p + q) / (p * q) * _sl(x, d, -2, -1)
            + (2 * p + q) / (p * (p + q)) * _sl(x, d, -1)
        )
    return cat([first, center, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimate the gradient of the function sampled by ``input`` along each dim of ``dim``
    (all by default) as ``torch.gradient``: central differences inside, ``edge_order`` 1 or
    2 differences at the ends. ``spacing`` is a number (the step of every dim), a list of
    numbers (one per dim), or a list of 1-D tensors (the sample coordinates along each dim).

    Returns a tuple with one tensor per dim.

    Examples
    --------
    >>> import sharded as st
    >>> st.gradient(st.tensor([1., 4., 9., 16.]))[0].tolist()
    [3.0, 4.0, 6.0, 7.0]
    >>> st.gradient(st.tensor([1., 4., 9., 16.]), spacing=2., edge_order=2)[0].tolist()
    [1.0, 2.0, 3.0, 4.0]
    >>> st.gradient(st.tensor([0., 1., 4.]), spacing=[st.tensor([0., 1., 3.])])[0].tolist()
    [1.0, 1.1666667461395264, 1.5]
    """
    x = input if is_tensor(input) else as_tensor(input)
    if spacing is None:  # torch's own default: unit steps
        spacing = 1
    if x.dtype.name == "uint8":
        raise DTypeError("torch.gradient does not support uint8 input.")
    if x.dtype.name == "bool":
        raise DTypeError("torch.gradient does not support bool input.")
    if dim is None:
        dims = list(range(x.ndim))
    elif isinstance(dim, numbers.Integral):
        dims = [int(dim)]
    else:
        dims = [int(d) for d in dim]
    dims = [normalize_dim(d, x.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise ArgumentError(f"torch.gradient: dim {dims} appears multiple times in the list")
    scalar = isinstance(spacing, numbers.Number) or (is_tensor(spacing) and spacing.ndim == 0)
    if scalar:
        steps = [spacing] * len(dims)
    else:
        steps = list(spacing)
        if len(steps) != len(dims):
            if dim is None:
                raise ArgumentError(
                    "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                    f"length equal to 'self.dim() = {x.ndim}', since dim argument was not "
                    f"given, but got a list of length {len(steps)}"
                )
            raise ArgumentError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                "and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(steps)} and a dim argument of length {len(dims)}."
            )
    if edge_order not in (1, 2):
        raise ArgumentError(
            f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}"
        )
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise ShapeError(
                "torch.gradient expected each dimension size to be at least edge_order+1, "
                f"got size {x.shape[d]} at dim {d} for edge_order={edge_order}"
            )
    out = []
    for d, h in zip(dims, steps):
        if is_tensor(h) and h.ndim:
            out.append(_coordinates(x, d, h, edge_order))
        else:
            out.append(_uniform(x, d, h.item() if is_tensor(h) else h, edge_order))
    return tuple(out)
