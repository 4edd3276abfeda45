"""Counting: ``bincount``, ``histc``, ``histogram`` and ``count_nonzero``.

Every shard bins its own elements; the count vector is then reduce-scattered: it is cut into
one chunk per worker, and chunk ``c`` of every shard is summed pairwise across workers
(:func:`sharded.core.tree.combine_tree`) onto worker ``c``, so the result stays sharded and
no worker ever holds more than its chunks plus one transfer. The length of a ``bincount`` and
the range of a ``histc``/``histogram`` without one depend on the data: the planner reads the
global max/min first (a reduction, then a driver wait on two numbers).
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, even_bounds, free_temps, gather_regions
from ....core.dispatch import apply, as_tensor, is_tensor
from ....core.registry import bind, kernel, nondiff, primitive
from ....core.tree import combine_tree
from ....errors import ArgumentError, DTypeError, ShapeError, UnsupportedDType
from ....layout import Layout, normalize_dim
from ....runtime.commands import Key

__all__ = ["HistogramResult", "bincount", "count_nonzero", "histc", "histogram"]

HistogramResult = collections.namedtuple("histogram", ["hist", "bin_edges"])


@kernel
def bin_partial(xp, a, *extra, mode, lo, hi, dtype, weighted, params):
    """This block's counts (or weight sums) of bins ``[lo, hi)``.

    ``mode``: ``int`` (the values are the bins), ``linear`` (``bins`` equal bins over
    ``[min, max]``, torch's histc rule) or ``edges`` (bins between sorted edges, the last one
    closed; the edges come as the last extra argument).
    """
    x = a.ravel()
    w = extra[0].ravel() if weighted else None
    if mode == "int":
        b = x.astype(np.int64, copy=False)
        ok = xp.ones(x.shape, dtype=bool)
    elif mode == "linear":
        mn, mx, bins = params
        ok = (x >= mn) & (x <= mx)
        b = ((x - mn) * bins / (mx - mn)).astype(np.int64)  # NaN fails ``ok`` first
        b[b == bins] = bins - 1  # the max lands in the last bin
    else:
        edges = extra[-1]
        ok = (x >= edges[0]) & (x <= edges[-1])
        b = xp.searchsorted(edges, x, side="right") - 1
        b[x == edges[-1]] = len(edges) - 2
    ok &= (b >= lo) & (b < hi)
    out = xp.bincount(b[ok] - lo, weights=None if w is None else w[ok], minlength=hi - lo)
    return out.astype(dtype, copy=False)


def _count_plan(ex, x, weights, length, dtype, mode, params=None, edges=None):
    """Bin every shard of ``x`` and reduce-scatter the count vector of ``length`` bins."""
    lay = x._layout
    shards = lay.shards()[:1] if lay.is_replicated else lay.shards()
    nw = ex.num_workers
    cuts = even_bounds(length, nw)
    chunks = list(zip(cuts[:-1], cuts[1:])) or [(0, 0)]
    roots = [c % nw for c in range(len(chunks))]
    wargs = [None] * len(shards)
    temps = []
    if weights is not None:  # the weights' block of every shard of x, worker to worker
        wanted = [(w, [(o, o + n) for o, n in zip(offs, shp)]) for w, offs, shp in shards]
        wargs, temps = gather_regions(ex, weights, wanted)
    eargs = [None] * len(shards)
    if edges is not None:
        eargs, et = gather_regions(ex, edges, [(w, [(0, edges.shape[0])]) for w, _, _ in shards])
        temps += et
    parts = []
    for lo, hi in chunks:
        by_w = collections.OrderedDict()
        for s, (w, _, _) in enumerate(shards):
            extra = tuple(a for a in (wargs[s], eargs[s]) if a is not None)
            k = ex.new_key()
            p = {
                "mode": mode,
                "lo": lo,
                "hi": hi,
                "dtype": dtype.np_str,
                "weighted": weights is not None,
                "params": params,
            }
            ex.submit(w, "bin_partial", (Key(x._keys[s], None), *extra), (k,), p, ("count", s))
            by_w.setdefault(w, []).append(k)
        gp = []
        for w, ks in by_w.items():
            if len(ks) > 1:
                k = ex.new_key()
                ex.submit(
                    w,
                    "reduce_combine",
                    tuple(Key(kk, None) for kk in ks),
                    (k,),
                    {"fn": "sum"},
                    ("count", None),
                )
                ex.free(w, ks)
                ks = [k]
            gp.append((w, (ks[0],)))
        parts.append(gp)
    finals = combine_tree(ex, parts, roots, "reduce_combine", {"fn": "sum"}, 1, "count")
    free_temps(ex, temps)
    out = Layout.from_bounds((length,), [cuts if length else (0, 0)], roots)
    return Operand(out, dtype, [f[0] for f in finals])


def _spec_len(dtype_of):
    def spec(x, weights, length, *rest):
        return (length,), dtype_of(weights)

    return spec


def _bincount_dtype(weights):
    if weights is None:
        return D.int64
    return D.float32 if weights.dtype == D.float32 else D.float64  # torch's rule


@primitive(
    "bincount",
    kernels=[bin_partial, "reduce_combine", "copy_all"],
    out_spec=_spec_len(_bincount_dtype),
    kind="reduce",
)
def _bincount_plan(ex, x, weights, length):
    return _count_plan(ex, x, weights, length, _bincount_dtype(weights), "int")


def _histc_spec(x, weights, length, lo, hi):
    return (length,), x.dtype


def _histogram_spec(x, weights, edges):
    return (max(edges.shape[0] - 1, 0),), x.dtype


@primitive("histc", kernels=[bin_partial], out_spec=_histc_spec, kind="reduce")
def _histc_plan(ex, x, weights, length, lo, hi):
    return _count_plan(ex, x, None, length, x._dtype, "linear", (lo, hi, length))


@primitive("histogram_edges", kernels=[bin_partial], out_spec=_histogram_spec, kind="reduce")
def _histogram_plan(ex, x, weights, edges):
    n = max(edges.shape[0] - 1, 0)
    return _count_plan(ex, x, weights, n, x._dtype, "edges", edges=edges)


nondiff("bincount", "histc", "histogram_edges")  # counts: torch has no gradient either


def _tensor(t):
    return t if is_tensor(t) else as_tensor(t)


def _minmax(x):
    """The global min and max of ``x`` (two reductions, read by the driver)."""
    return float(x.amin().item()), float(x.amax().item())


@bind("bincount", prim="bincount")
def bincount(input, weights=None, minlength=0):
    """Count occurrences of each value of a 1-D non-negative integer tensor (``weights``:
    sum those instead). The length is ``max(max(input) + 1, minlength)``: the planner reads
    the global min and max first (a driver wait).

    Examples
    --------
    >>> import sharded as st
    >>> st.bincount(st.tensor([1, 1, 3], shards=2)).tolist()
    [0, 2, 0, 1]
    """
    x = _tensor(input)
    if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == D.bool_:
        raise UnsupportedDType(f'"bincount_cpu" not implemented for {x.dtype.name} tensors')
    if x.ndim != 1:
        raise ShapeError(
            f"bincount only supports 1-d non-negative integral inputs (got {x.ndim} dims)"
        )
    if isinstance(minlength, bool) or not isinstance(minlength, (int, np.integer)):
        raise DTypeError(f"bincount(): argument 'minlength' must be int, not {minlength!r}")
    if minlength < 0:
        raise ArgumentError(f"minlength should be >= 0, got {minlength!r}")
    w = None if weights is None else _tensor(weights)
    if w is not None and (w.ndim != 1 or w.shape[0] != x.shape[0]):
        raise ShapeError(
            f"weights should be 1-d and have the same length as input ({list(w.shape)} vs "
            f"{list(x.shape)})"
        )
    length = minlength
    if not x.shape[0]:  # torch: an empty input gives int64 zeros, weights or not
        return apply("bincount", x, None, length)
    mn, mx = _minmax(x)
    if mn < 0:
        raise ArgumentError(
            f"bincount only supports 1-d non-negative integral inputs (min is {int(mn)})"
        )
    length = max(length, int(mx) + 1)
    return apply("bincount", x, w, length)


def _float_only(x, name):
    if not x.dtype.is_floating_point:  # torch: bool fails in linspace, ints in the kernel
        kernel_name = "linspace_cpu" if x.dtype == D.bool_ else name
        raise UnsupportedDType(f'"{kernel_name}" not implemented for {x.dtype.name} tensors')


@bind("histc", prim="histc")
def histc(input, bins=100, min=0, max=0):
    """Histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both are
    equal; elements outside are ignored; the max lands in the last bin).

    Examples
    --------
    >>> import sharded as st
    >>> st.histc(st.tensor([1.0, 2.0, 1.0, 4.0], shards=2), bins=4, min=0, max=3).tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    x = _tensor(input)
    _float_only(x, "histogram_cpu")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise DTypeError(f"histc(): argument 'bins' must be int, not {bins!r}")
    if bins <= 0:
        raise ArgumentError(f"torch.histc: bins must be > 0, but got {bins!r}")
    lo, hi = float(min), float(max)
    if lo == hi and x.numel() > 0:
        lo, hi = _minmax(x)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ArgumentError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ArgumentError(f"torch.histc: max must be larger than min (min={lo}, max={hi})")
    return apply("histc", x, None, bins, lo, hi)


def histogram(input, bins, *, range=None, weight=None, density=False):
    """Histogram with ``bins`` equal bins (over ``range`` or the data's range) or between the
    given sorted edges: ``(hist, bin_edges)``. ``density`` divides by the total and the bin
    widths.

    Examples
    --------
    >>> import sharded as st
    >>> h = st.histogram(st.tensor([1.0, 2.0, 1.0, 4.0], shards=2), bins=4)
    >>> h.hist.tolist(), h.bin_edges.tolist()
    ([2.0, 1.0, 0.0, 1.0], [1.0, 1.75, 2.5, 3.25, 4.0])
    """
    x = _tensor(input)
    _float_only(x, "histogram_cpu")
    w = None if weight is None else _tensor(weight)
    if w is not None and tuple(w.shape) != tuple(x.shape):
        raise ShapeError(
            f"histogram(): weight should have the same shape as input ({list(w.shape)} vs "
            f"{list(x.shape)})"
        )
    if w is not None and w.dtype != x.dtype:
        raise UnsupportedDType(  # torch: RuntimeError
            f"histogram(): input ({x.dtype.name}) and weight ({w.dtype.name}) should have "
            "the same dtype"
        )
    if is_tensor(bins) and bins.dtype != x.dtype:
        raise UnsupportedDType(
            f"histogram(): input ({x.dtype.name}) and bins ({bins.dtype.name}) tensors should "
            "have the same dtype"
        )
    if is_tensor(bins) or isinstance(bins, (list, tuple, np.ndarray)):
        edges = _tensor(bins).to(x.dtype)
        if edges.ndim != 1:
            raise ShapeError(
                f"histogram(): bins tensor should have one dimension, got {edges.ndim}"
            )
        if edges.shape[0] < 2:
            raise ArgumentError(f"histogram(): bins must be > 0, but got {edges.shape[0] - 1}")
    else:
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
            raise DTypeError(f"histogram(): bins must be an int or a tensor, got {bins!r}")
        if bins <= 0:
            raise ArgumentError(f"histogram(): bins must be > 0, but got {bins!r}")
        if range is not None:
            lo, hi = (float(v) for v in range)
        elif x.numel():
            lo, hi = _minmax(x)
        else:
            lo, hi = 0.0, 1.0  # torch's range of an empty input
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ArgumentError(f"torch.histogram: range [{lo}, {hi}] is not finite")
        if lo > hi:
            raise ArgumentError(f"torch.histogram: min should not exceed max ({lo} > {hi})")
        if lo == hi:  # numpy's and torch's widening of an empty range
            lo, hi = lo - 0.5, hi + 0.5
        edges = as_tensor(np.linspace(lo, hi, bins + 1).astype(x.dtype.np), dtype=x.dtype)
    hist = apply("histogram_edges", x, w, edges)
    if density:
        n = edges.shape[0]
        widths = edges.narrow(0, 1, n - 1) - edges.narrow(0, 0, n - 1)
        hist = hist / (hist.sum() * widths)
    return HistogramResult(hist, edges)


bind("histogram")(histogram)


@bind("count_nonzero")
def count_nonzero(input, dim=None):
    """Number of non-zero elements (over all, a dim or a tuple of dims), int64.

    Examples
    --------
    >>> import sharded as st
    >>> st.count_nonzero(st.tensor([[0, 1], [2, 0]]), dim=0).tolist()
    [1, 1]
    """
    x = _tensor(input)
    if isinstance(dim, (tuple, list)):
        seen = [normalize_dim(d, max(x.ndim, 1)) for d in dim]
        for d in seen:
            if seen.count(d) > 1:
                raise ArgumentError(f"dim {d} appears multiple times in the list of dims {dim}")
    return (x != 0).sum(dim)
