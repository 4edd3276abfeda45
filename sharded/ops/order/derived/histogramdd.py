"""``histogramdd``: the histogram of the points of an (..., D) tensor over a D-dimensional
grid of bins.

Each dim's bin is a ``searchsorted`` of its coordinates among its edges; the D bin numbers
make one flat bin (or one past the last, for points outside the edges), and the counts (or
weights) are one ``scatter_add`` into the flat bins. Equal-width bins without ``range`` read
the data's per-dim min and max first (one driver wait), as ``histogram`` does. The input
may be split any way; the counts come back whole.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from ....core.dispatch import as_tensor, is_tensor
from ....errors import ArgumentError, DimError, DTypeError, ShapeError, UnsupportedDType
from ...creation.prims import linspace, zeros
from ...elementwise.prims.selection import where
from ..prims.search import searchsorted

__all__ = ["histogramdd"]

HistogramddResult = collections.namedtuple("histogramdd", ["hist", "bin_edges"])


def _tensor(t):
    return t if is_tensor(t) else as_tensor(t)


def _edges(x, bins, range, dims):
    """The D tensors of bin edges (torch's ``histogramdd_prepare_out`` and
    ``select_outer_bin_edges``)."""
    if is_tensor(bins) or (
        isinstance(bins, (list, tuple)) and bins and all(is_tensor(b) for b in bins)
    ):
        edges = list(bins) if not is_tensor(bins) else [bins]
        if len(edges) != dims:
            raise ShapeError(
                "histogramdd: The size of bins must be equal to the innermost dimension of "
                f"the input (got {len(edges)} bins for {dims} dims)"
            )
        for d, e in enumerate(edges):
            if e.dtype != x.dtype:
                raise DTypeError(
                    "torch.histogramdd: input tensor and bins tensors should have the same "
                    f"dtype, but got input with dtype {x.dtype.name} and bins for dimension "
                    f"{d} with dtype {e.dtype.name}"
                )
            if e.ndim != 1:
                raise ShapeError(
                    "torch.histogramdd: bins tensor should have one dimension, but got "
                    f"{e.ndim} dimensions in the bins tensor for dimension {d}"
                )
            if e.shape[0] < 2:
                raise ArgumentError(
                    f"torch.histogram(): bins must be > 0, but got {e.shape[0] - 1} for "
                    f"dimension {d}"
                )
        return edges
    counts = [bins] * dims if isinstance(bins, (int, np.integer)) else list(bins)
    if any(isinstance(b, bool) or not isinstance(b, (int, np.integer)) for b in counts):
        raise DTypeError(f"histogramdd(): bins must be an int, ints or tensors, got {bins!r}")
    if len(counts) != dims:
        raise ShapeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the "
            f"input (got {len(counts)} bin counts for {dims} dims)"
        )
    for d, b in enumerate(counts):
        if b + 1 <= 0:
            raise ArgumentError(
                "torch.histogramdd: bins tensor should have at least 1 element, but got "
                f"{b + 1} elements in the bins tensor for dimension {d}"
            )
        if b == 0:
            raise ArgumentError(f"torch.histogram(): bins must be > 0, but got 0 for dimension {d}")
    if range is not None:
        if len(range) != 2 * dims:
            raise ArgumentError(
                f"torch.histogramdd: for a {dims}-dimensional histogram range should have "
                f"{2 * dims} elements, but got {len(range)}"
            )
        lo, hi = [float(v) for v in range[::2]], [float(v) for v in range[1::2]]
    elif x.numel():
        lo, hi = x.amin(0).tolist(), x.amax(0).tolist()
    else:
        lo, hi = [0.0] * dims, [1.0] * dims  # torch's range of an empty input
    edges = []
    for d in np.arange(dims).tolist():
        a, b = lo[d], hi[d]
        if a > b:
            raise ArgumentError(
                f"torch.histogramdd: min should not exceed max, but got min {a:g} max {b:g} "
                f"for dimension {d}"
            )
        if not (np.isfinite(a) and np.isfinite(b)):
            raise ArgumentError(
                f"torch.histogramdd: dimension {d}'s range [{a:g}, {b:g}] is not finite"
            )
        if a == b:
            a, b = a - 0.5, b + 0.5
        edges.append(linspace(a, b, counts[d] + 1, dtype=x.dtype))
    return edges


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """Histogram of the points of ``input`` (..., D): ``(hist, bin_edges)`` with ``hist`` of
    shape (B0, ..., B(D-1)) in the input's dtype and ``bin_edges`` a tuple of D tensors, as
    ``torch.histogramdd``. ``bins``: an int (every dim), D ints (equal bins over ``range``,
    ``(min0, max0, min1, max1, ...)``, or the data's range) or D tensors of sorted edges.
    A point on a dim's last edge falls in its last bin; points outside are not counted.
    ``weight`` (the input's shape without its last dim) sums weights instead of counts;
    ``density`` divides by the total and the bins' volumes. No gradient (as torch's).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0.0, 1.0], [1.0, 1.5], [2.0, 0.0], [0.5, 2.0]], shards=2)
    >>> hist, edges = st.histogramdd(x, [2, 3])
    >>> hist.tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    >>> edges[0].tolist()
    [0.0, 1.0, 2.0]
    """
    x = _tensor(input)
    if x.ndim < 1:
        raise DimError("Dimension specified as -1 but tensor has no dimensions")
    if x.ndim < 2:
        raise ShapeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if not x.dtype.is_floating_point:
        raise UnsupportedDType(f'"histogramdd" not implemented for {x.dtype.name!r}')
    dims = x.shape[-1]
    pts = x.detach().reshape(-1, dims)
    w = None if weight is None else _tensor(weight).detach()
    if w is not None and tuple(w.shape) != tuple(x.shape[:-1]):
        raise ShapeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(x.shape)} and weight with shape {list(w.shape)}"
        )
    if w is not None and w.dtype != x.dtype:
        raise DTypeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({x.dtype.name}), and "
            f"weight({w.dtype.name})"
        )
    edges = _edges(pts, bins, range, dims)
    shape = [e.shape[0] - 1 for e in edges]
    total = math.prod(shape)
    flat, inside = None, None
    for d, e in enumerate(edges):
        col, e = pts[:, d], e.detach()
        n = shape[d]
        # bin i holds [e[i], e[i + 1]); the last edge belongs to the last bin
        b = (searchsorted(e, col, right=True) - 1).clamp(0, n - 1)
        ok = (col >= e[0]) & (col <= e[n])
        stride = math.prod(shape[d + 1 :])
        flat = b * stride if flat is None else flat + b * stride
        inside = ok if inside is None else inside & ok
    values = pts.new_ones(pts.shape[0]) if w is None else w.reshape(-1)
    hist = zeros(total + 1, dtype=x.dtype)  # the last bin collects the points outside
    if pts.shape[0]:
        hist = hist.scatter_add(0, where(inside, flat, total), values)
    hist = hist[:total].reshape(shape)
    if density:  # torch's order: by the total, then by each dim's bin widths
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            hist = hist / (e[1:] - e[:-1]).reshape(
                [-1 if a == d else 1 for a in np.arange(dims).tolist()]
            )
    return HistogramddResult(hist, tuple(edges))
