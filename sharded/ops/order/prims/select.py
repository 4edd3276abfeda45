"""Selection and order statistics: topk, kthvalue, median, nanmedian, quantile, nanquantile
and mode, none of which sorts the tensor.

Along a dim that is not split every shard answers for its own rows (one kernel, nothing
moves). Along the split dim, with ``P`` pieces per row:

- **topk** (local candidates + a small merge): every piece computes its local top
  ``min(k, n_local)`` with global indices (a partition of order keys, linear time; a long
  line with a small ``k`` first keeps only the elements past a cut guessed from a strided
  sample, one compare over the block, and falls back when the cut keeps too few); the candidates
  of each row group combine pairwise across workers in the reduction tree
  (:func:`sharded.core.tree.combine_tree`), so one worker per output block holds at most
  ``2 k`` candidates per row. No driver wait.
- **kthvalue, median, nanmedian, quantile, nanquantile** (distributed radix selection on
  order-preserving int64 keys, see :mod:`..kernels.select`; the rounds are
  :func:`..plan.radix_select`): round 0 reads per-row statistics of every piece (valid
  count, min and max key, first NaN); the driver turns them into the ranks to select
  (torch's lower median, quantile positions ``q (n - 1)``). Each later round every piece
  counts its keys inside each target's current key interval by bins of
  ``(key - lo) >> shift`` (up to 4,096 bins, fewer when many targets) and the driver reads
  only these counts, keeps the bin holding the rank and narrows the interval; 64-bit keys
  need at most six rounds, typically two or three. When at most a few thousand candidates
  remain (or the interval is one key: ties), every piece extracts its candidates ordered by
  (key, index), they travel to the worker of the row group's first piece, which picks the
  rank and interpolates (quantile). The driver waits once per round on counts; it never sees
  tensor values.
- **mode** along the split dim (value counts): every piece counts its values per row; the
  ``(value, count, last index)`` records go, split by a hash of the value, to the row
  group's workers, which add them up and keep their best per row; the per-row bests combine
  in the reduction tree. No driver wait, nothing gathered whole.

Results land on the worker of each row group's first piece, like a reduction. Gradients of
the selected values go to the selected indices (a scatter through the indexing family's
``scatter_add``; the indices, output-sized, are read by the driver to plan it); quantile's
gradient goes to the two neighbours with the interpolation weights.
"""

from __future__ import annotations

import collections

import numpy as np

from .... import dtypes as D
from ....amp import keep_float32
from ....core.dataflow import Operand
from ....core.dispatch import apply, as_tensor, is_tensor, placement, via_float32
from ....core.registry import bind, no_complex, primitive, vjp
from ....core.tree import combine_tree, reduce_groups, reduce_layout
from ....errors import ArgumentError, ArgumentTypeError, DimError, UnsupportedDType
from ....layout import Layout, normalize_dim
from ....runtime.commands import Key
from ..kernels import mode as MK
from ..kernels import select as K
from ..plan import radix_select, split_mode

__all__ = [
    "kthvalue",
    "median",
    "mode",
    "nanmedian",
    "nanquantile",
    "quantile",
    "topk",
]

TopK = collections.namedtuple("topk", ["values", "indices"])
KthValue = collections.namedtuple("kthvalue", ["values", "indices"])
Median = collections.namedtuple("median", ["values", "indices"])
NanMedian = collections.namedtuple("nanmedian", ["values", "indices"])
Mode = collections.namedtuple("mode", ["values", "indices"])

CANDIDATES = 4096  # a target's candidates are extracted once at most this many remain


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


def _dim(x, dim):
    if x.ndim == 0:
        if dim not in (0, -1):
            raise DimError(
                f"Dimension out of range (expected to be in range of [-1, 0], got {dim})"
            )
        return 0
    return normalize_dim(dim, x.ndim)


def _check_k(name, k):
    """``k`` as torch's parser takes it: an int or a one-element integer tensor
    (``TypeError`` otherwise, bools and floats too)."""
    if is_tensor(k) and k.numel() == 1 and k.dtype.np.kind in "iu":
        k = int(k.item())  # a read of one element, as torch's parser does
    if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name}(): argument 'k' must be int, not {type(k).__name__}")
    return int(k)


def _no_bool(name, x, kernel, reached=True):
    """torch has no CPU kernel of these for bool (``NotImplementedError``) where ``reached``
    (its 0-d kthvalue and empty median() return before the kernel)."""
    if x.dtype == D.bool_ and reached:
        raise UnsupportedDType(f"{name}(): \"{kernel}\" not implemented for 'Bool'")


def _nonempty(name, x, d):
    """torch's IndexError for a reduction along a dim of size 0."""
    if x.ndim and x.shape[d] == 0:
        raise DimError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _split(lay, d) -> bool:
    return not lay.is_replicated and len(lay.bounds[d]) > 2


def _layout_with(lay, d, size, roots=None):
    """``lay`` with dim ``d`` replaced by one block of ``size`` (on ``roots`` when given)."""
    if roots is None:
        roots = [w for w, _, _ in lay.shards()] if not lay.is_replicated else lay.workers
    shape = list(lay.shape)
    shape[d] = size
    bounds = [b if i != d else (0, size) for i, b in enumerate(lay.bounds)]
    return Layout.from_bounds(shape, bounds, roots, replicated=lay.is_replicated)


def _scatter_grad(x, g, idx, d):
    """A zero tensor like ``x`` with ``g`` added at index ``idx`` along ``d`` (``g`` and
    ``idx`` shaped alike, with ``d`` kept)."""
    ii = np.asarray(idx.numpy(), np.int64)  # output-sized: planning data, not the tensor
    coords = list(np.indices(ii.shape, sparse=False))
    coords[d] = ii
    coords = tuple(c.reshape(-1) for c in coords)
    z = apply("full", x._layout, 0, g.dtype)
    vals = g.reshape(-1)
    if vals._layout.is_replicated:  # every replica would add its copy: send one
        vals = vals.reshard(dim=0, shards=1)
    apply("scatter_add", z, coords, vals, target=z)
    return z


# ------------------------------------------------------------------------------- topk
def _topk_spec(x, k, dim, largest=True, sorted=True):
    shape = list(x.shape)
    shape[dim] = k
    return (tuple(shape), x.dtype), (tuple(shape), D.int64)


@primitive("topk", kernels=[K.topk_chunk, K.topk_merge], out_spec=_topk_spec, kind="reduce")
def _topk_plan(ex, x, k, dim, largest=True, sorted=True):
    """Local top-k of every piece; along a split dim, a tree merge of the candidates."""
    lay, shards = x._layout, x._layout.shards()
    if not _split(lay, dim):
        out = _layout_with(lay, dim, k)
        vk, ik = [], []
        for s, (w, offs, _) in enumerate(shards):
            v, i = ex.new_key(), ex.new_key()
            params = {"k": k, "axis": dim, "largest": largest, "offset": 0, "sort": sorted}
            ex.submit(w, "topk_chunk", (Key(x._keys[s], None),), (v, i), params, ("topk", s))
            vk.append(v)
            ik.append(i)
        return Operand(out, x._dtype, vk), Operand(out, D.int64, ik)
    parts, roots = [], []
    for members in reduce_groups(lay, (dim,)).values():
        roots.append(shards[members[0]][0])
        by_w = collections.OrderedDict()
        for s in members:
            w, offs, _ = shards[s]
            kk = (ex.new_key(), ex.new_key())
            params = {"k": k, "axis": dim, "largest": largest, "offset": offs[dim], "sort": False}
            ex.submit(w, "topk_chunk", (Key(x._keys[s], None),), kk, params, ("topk", s))
            by_w.setdefault(w, []).append(kk)
        gp = []
        for w, ks in by_w.items():  # one partial per worker before the tree
            if len(ks) > 1:
                kk = (ex.new_key(), ex.new_key())
                args = tuple(Key(a, None) for p in ks for a in p)
                params = {"k": k, "axis": dim, "largest": largest}
                ex.submit(w, "topk_merge", args, kk, params, ("topk", None))
                ex.free(w, [a for p in ks for a in p])
                ks = [kk]
            gp.append((w, ks[0]))
        parts.append(gp)
    finals = combine_tree(
        ex, parts, roots, "topk_merge", {"k": k, "axis": dim, "largest": largest}, 2, "topk"
    )
    out = _layout_with(reduce_layout(lay, (dim,), True, roots), dim, k)
    return (
        Operand(out, x._dtype, [f[0] for f in finals]),
        Operand(out, D.int64, [f[1] for f in finals]),
    )


@vjp("topk", save_out=(1,))
def _topk_vjp(gs, node):
    x, k, dim = node.args[:3]
    return (_scatter_grad(x, gs[0], node.saved["out"][1], dim),) + (None,) * (len(node.args) - 1)


@bind("topk", prim="topk")
@via_float32
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their
    indices, as ``(values, indices)``. NaN counts as larger than every number (torch).

    Along a split dim each shard finds its own top ``k`` and the candidates merge in a tree:
    linear time, nothing sorted but the ``k`` results.

    Examples
    --------
    >>> import sharded as st
    >>> st.topk(st.tensor([1., 5., 3., 4.], shards=2), 2).indices.tolist()
    [1, 3]
    """
    x = _tensor(input)
    d = _dim(x, dim)
    n = x.shape[d] if x.ndim else 1
    k = _check_k("topk", k)
    if not 0 <= k <= n:
        raise ArgumentError(f"topk(): selected index k={k} out of range for dim {d} of size {n}")
    if x.dtype == D.bool_:
        raise UnsupportedDType("topk does not support bool dtypes on CPU (as torch)")
    if x.ndim == 0:  # torch: the element itself, 0-d, for k 0 and 1 alike
        v, i = apply("topk", x.reshape(1), 1, 0, bool(largest), bool(sorted))
        return TopK(v.reshape(()), i.reshape(()))
    return TopK(*apply("topk", x, int(k), d, bool(largest), bool(sorted)))


# --------------------------------------------------------------- distributed selection
def _out_shape(lay_shape, d, keepdim, q):
    shape = [n if i != d else 1 for i, n in enumerate(lay_shape) if keepdim or i != d]
    return ((q,) if q is not None else ()) + tuple(shape)


def _select(ex, x, d, keepdim, kind, arg, quantile, qn):
    """Planner body shared by the pick selections and quantile: Operands of the results."""
    lay, shards = x._layout, x._layout.shards()
    nout = 4 if quantile else 2
    dts = [x._dtype, D.int64, D.int64, x._dtype][:nout]
    base = reduce_layout(lay, (d,), keepdim)
    if not _split(lay, d):
        out = base
        keys = [[] for _ in range(nout)]
        for s, ((w, _, _), (_, _, oshp)) in enumerate(zip(shards, out.shards())):
            ks = tuple(ex.new_key() for _ in range(nout))
            oshape = ((qn,) if qn else ()) + tuple(oshp)
            params = {"axis": d, "kind": kind, "arg": arg, "oshape": oshape, "quantile": quantile}
            ex.submit(w, "select_local", (Key(x._keys[s], None),), ks, params, (kind, s))
            for i, k in enumerate(ks):
                keys[i].append(k)
    else:
        groups = list(reduce_groups(lay, (d,)).values())
        roots = [shards[m[0]][0] for m in groups]
        out = reduce_layout(lay, (d,), keepdim, roots)
        finals = radix_select(ex, x, d, groups, kind, arg, CANDIDATES)
        keys = [[] for _ in range(nout)]
        for (root, spec, ranks, args, ext), (_, _, oshp) in zip(finals, out.shards()):
            ks = tuple(ex.new_key() for _ in range(nout))
            oshape = ((qn,) if qn else ()) + tuple(oshp)
            params = {"ranks": ranks, "spec": spec, "oshape": oshape, "quantile": quantile}
            ex.submit(root, "select_finish", tuple(args), ks, params, (kind, None))
            for w, eks in ext:
                ex.free(w, eks)
            for i, k in enumerate(ks):
                keys[i].append(k)
    if qn:
        out = Layout.from_bounds(
            (qn,) + out.shape, ((0, qn),) + out.bounds, out.workers, out.is_replicated
        )
    return tuple(Operand(out, dt, ks) for dt, ks in zip(dts, keys))


def _select_spec(x, dim, keepdim, kind, arg):
    shape = _out_shape(x.shape, dim, keepdim, None)
    return (shape, x.dtype), (shape, D.int64)


@primitive(
    "select",
    kernels=[K.select_local, K.select_stats, K.select_hist, K.select_extract, K.select_finish],
    out_spec=_select_spec,
    kind="reduce",
)
def _select_plan(ex, x, dim, keepdim, kind, arg):
    """``(values, indices)`` of the ``kind`` order statistic along ``dim`` (``kth``,
    ``median``, ``nanmedian``)."""
    return _select(ex, x, dim, keepdim, kind, arg, False, None)


no_complex("select", label="kthvalue/median/nanmedian")  # torch: "not implemented for Complex"


@vjp("select", save_out=(0, 1))
def _select_vjp(gs, node):
    x, dim, keepdim, _, arg = node.args
    if arg == "even":  # median() of all elements: torch spreads the gradient evenly over
        v = node.saved["out"][0]  # the elements equal to it (every NaN when it is NaN)
        mask = (x == v) | (x.isnan() & v.isnan())
        return (mask * (gs[0] / mask.sum()), None, None, None, None)
    g, idx = gs[0], node.saved["out"][1]
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return (_scatter_grad(x, g, idx, dim),) + (None,) * (len(node.args) - 1)


def _pick(x, dim, keepdim, kind, arg, result):
    if x.ndim == 0:
        v, i = apply("select", x.reshape(1), 0, False, kind, arg)
        return result(v, i)
    return result(*apply("select", x, dim, bool(keepdim), kind, arg))


@bind("kthvalue", prim="select")
@via_float32
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` (1-based) and its index, as ``(values,
    indices)``; NaN counts as the largest value.

    Along a split dim: distributed radix selection (a few driver waits on bin counts, see the
    module docstring); no sort.

    Examples
    --------
    >>> import sharded as st
    >>> st.kthvalue(st.tensor([4., 1., 3., 2.], shards=2), 2).values.item()
    2.0
    """
    x = _tensor(input)
    d = _dim(x, dim)
    n = x.shape[d] if x.ndim else 1
    k = _check_k("kthvalue", k)
    _nonempty("kthvalue", x, d)
    if not 1 <= k <= n:
        raise ArgumentError(
            f"kthvalue(): selected number k={k} out of range for dimension {d} of size {n}"
        )
    _no_bool("kthvalue", x, "kthvalue_cpu", x.ndim > 0)
    return _pick(x, d, keepdim, "kth", int(k), KthValue)


def _median(name, kind, result, input, dim, keepdim):
    x = _tensor(input)
    if dim is None:
        _no_bool(name, x, "median_cpu", x.numel() > 0)
        if x.numel() == 0:
            return apply("full", Layout.replicated().bind((), 1), float("nan"), x.dtype)
        return apply("select", x.reshape(-1), 0, False, kind, "even")[0]
    d = _dim(x, dim)
    _nonempty(name, x, d)
    _no_bool(name, x, "median_out")
    return _pick(x, d, keepdim, kind, None, result)


@bind("median", prim="select")
@via_float32
def median(input, dim=None, keepdim=False):
    """torch's *lower* median: of all elements (a 0-d tensor) or along ``dim`` as
    ``(values, indices)``. A NaN in a row makes its median NaN (see :func:`nanmedian`).

    Examples
    --------
    >>> import sharded as st
    >>> st.median(st.tensor([4., 1., 3., 2.], shards=2)).item()
    2.0
    """
    return _median("median", "median", Median, input, dim, keepdim)


@bind("nanmedian", prim="select")
@via_float32
def nanmedian(input, dim=None, keepdim=False):
    """Like :func:`median`, ignoring NaN (an all-NaN row gives NaN).

    Examples
    --------
    >>> import sharded as st
    >>> st.nanmedian(st.tensor([float("nan"), 1., 3.], shards=2)).item()
    1.0
    """
    return _median("nanmedian", "nanmedian", NanMedian, input, dim, keepdim)


# --------------------------------------------------------------------------- quantile
_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_spec(x, qs, scalar, dim, keepdim, interp, ignore):
    shape = _out_shape(x.shape, dim, keepdim, None if scalar else len(qs))
    return tuple((shape, dt) for dt in (x.dtype, D.int64, D.int64, x.dtype))


@primitive(
    "quantile",
    kernels=["select_local", "select_stats", "select_hist", "select_extract", "select_finish"],
    out_spec=_quantile_spec,
    kind="reduce",
)
def _quantile_plan(ex, x, qs, scalar, dim, keepdim, interp, ignore):
    """``(values, lower index, upper index, upper weight)`` of the quantiles ``qs``."""
    res = _select(ex, x, dim, keepdim, "quantile", (qs, interp, ignore), True, len(qs))
    if scalar:  # one q: no leading q dim (a reshape on each worker)
        out = Layout.from_bounds(
            res[0].layout.shape[1:],
            res[0].layout.bounds[1:],
            res[0].layout.workers,
            res[0].layout.is_replicated,
        )
        fixed = []
        for r in res:
            ks = []
            for (w, _, shp), k in zip(out.shards(), r.keys):
                nk = ex.new_key()
                ex.submit(w, "reshape", (Key(k, None),), (nk,), {"shape": shp})
                ex.free(w, [k])
                ks.append(nk)
            fixed.append(Operand(out, r.dtype, ks))
        res = tuple(fixed)
    return res


@vjp("quantile", save_out=(1, 2, 3))
def _quantile_vjp(gs, node):
    x, qs, scalar, dim, keepdim = node.args[:5]
    _, ilo, ihi, w = node.saved["out"]
    g = gs[0]
    outs = [(g, ilo, ihi, w)] if scalar else [(g[j], ilo[j], ihi[j], w[j]) for j in range(len(qs))]
    z = None
    for g, ilo, ihi, w in outs:  # one q at a time (q is short)
        if not keepdim:
            g, ilo, ihi, w = (t.unsqueeze(dim) for t in (g, ilo, ihi, w))
        part = _scatter_grad(x, g * (1 - w), ilo, dim) + _scatter_grad(x, g * w, ihi, dim)
        z = part if z is None else z + part
    return (z,) + (None,) * (len(node.args) - 1)


def _quantile(name, input, q, dim, keepdim, interpolation, ignore):
    x = _tensor(input)
    if isinstance(q, (list, tuple)):  # torch's parser: a float or a tensor
        raise ArgumentTypeError(f"{name}() q must be a float or a tensor, got {type(q).__name__}")
    # torch's checks, in its order, all RuntimeError
    if x.numel() == 0:
        raise ArgumentError(f"{name}() input tensor must be non-empty, got {x.shape}")
    qnd = q.ndim if is_tensor(q) else np.ndim(q)
    if qnd > 1:
        raise ArgumentError(f"{name}() q must be a scalar or 1D tensor, got {qnd} dims")
    if not x.dtype.is_floating_point or x.dtype in (D.float16, D.bfloat16):
        raise UnsupportedDType(
            f"{name}() input tensor must be either float or double dtype, got {x.dtype}"
        )
    if is_tensor(q) and q.dtype != x.dtype:
        raise UnsupportedDType(
            f"{name}() q tensor must be same dtype as the input tensor ({x.dtype}), got {q.dtype}"
        )
    scalar = qnd == 0  # a float or a 0-d tensor: no leading q dim
    qa = np.asarray(q.detach().numpy() if is_tensor(q) else q, dtype=np.float64).reshape(-1)
    if ((qa < 0) | (qa > 1)).any():
        raise ArgumentError(f"{name}() q values must be in the range [0, 1], got {qa.tolist()}")
    if interpolation not in _INTERP:
        raise ArgumentError(
            f"{name}() interpolation must be one of {', '.join(_INTERP)}. Got {interpolation!r}"
        )
    shape = tuple(x.shape)
    if dim is None:
        x2, d = x.reshape(-1), 0
    else:
        x2, d = x, _dim(x, dim)
    keep = bool(keepdim) and dim is not None and x.ndim > 0  # a 0-d input stays 0-d (torch)
    if x2.ndim == 0:
        x2 = x2.reshape(1)
    qs = tuple(float(v) for v in qa)
    if not qs:  # an empty q: an empty result (torch), nothing to select
        out = _out_shape(x2.shape, d, keep, 0) if dim is not None else (0,)
        return apply("full", placement(out), 0, x.dtype)
    v = apply("quantile", x2, qs, scalar, d, keep, interpolation, ignore)[0]
    if dim is None and keepdim:
        v = v.reshape(((len(qs),) if not scalar else ()) + (1,) * len(shape))
    if is_tensor(q) and q.requires_grad and interpolation == "linear":
        v = v + _q_term(name, x.detach(), q, v, dim, keepdim, ignore)
    return v


def _q_term(name, x, q, v, dim, keepdim, ignore):
    """A zero whose gradient with respect to ``q`` is torch's for a linear quantile: the
    interpolation's slope ``(x[ceil r] - x[floor r]) (n - 1)`` at the rank ``r = q (n - 1)``
    (``n`` counts the non-NaN values for nanquantile); 0 where a row holding NaN fixes the
    rank, as torch's."""
    qd = q.detach()
    lo, hi = (_quantile(name, x, qd, dim, keepdim, m, ignore) for m in ("lower", "higher"))
    if ignore:
        n = (x == x).sum(dim, keepdim=bool(keepdim) and dim is not None)
    else:
        n = x.numel() if dim is None else x.shape[_dim(x, dim)]
    slope = (hi - lo) * (n - 1)
    slope = apply("where", slope.isfinite(), slope, 0.0)
    if q.ndim:  # a 1-d q runs along the result's leading dim
        q, qd = (t.reshape((-1,) + (1,) * (v.ndim - 1)) for t in (q, qd))
    return (q - qd) * slope


@bind("quantile", prim="quantile")
@keep_float32
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles (a float or a 1-D tensor, in ``[0, 1]``) along ``dim`` (all
    elements when None), torch's five ``interpolation`` modes; a 1-D ``q`` adds a leading
    dim. Rows holding NaN give NaN (see :func:`nanquantile`).

    Examples
    --------
    >>> import sharded as st
    >>> st.quantile(st.tensor([1., 2., 3., 4.], shards=2), 0.5).item()
    2.5
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@bind("nanquantile", prim="quantile")
@keep_float32
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """Like :func:`quantile`, ignoring NaN.

    Examples
    --------
    >>> import sharded as st
    >>> st.nanquantile(st.tensor([1., float("nan"), 3.], shards=2), 0.5).item()
    2.0
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ------------------------------------------------------------------------------- mode
def _mode_spec(x, dim, keepdim):
    shape = _out_shape(x.shape, dim, keepdim, None)
    return (shape, x.dtype), (shape, D.int64)


@primitive(
    "mode",
    kernels=[MK.mode_local, MK.mode_count, MK.mode_agg, MK.mode_merge, MK.mode_out],
    out_spec=_mode_spec,
    kind="reduce",
)
def _mode_plan(ex, x, dim, keepdim):
    """torch's mode along ``dim``: per shard when the dim is whole there; along a split dim
    by value counts (see :func:`..plan.split_mode`)."""
    lay = x._layout
    if _split(lay, dim):
        return split_mode(ex, x, dim, keepdim)
    out = reduce_layout(lay, (dim,), keepdim)
    vk, ik = [], []
    for s, (w, _, oshp) in enumerate(out.shards()):
        v, i = ex.new_key(), ex.new_key()
        params = {"axis": dim, "oshape": tuple(oshp)}
        ex.submit(w, "mode_local", (Key(x._keys[s], None),), (v, i), params, ("mode", s))
        vk.append(v)
        ik.append(i)
    return Operand(out, x._dtype, vk), Operand(out, D.int64, ik)


@vjp("mode", save_out=(1,))
def _mode_vjp(gs, node):
    x, dim, keepdim = node.args
    g, idx = gs[0], node.saved["out"][1]
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return (_scatter_grad(x, g, idx, dim), None, None)


@bind("mode", prim="mode")
@via_float32
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest on ties) and the index of its last
    occurrence, as ``(values, indices)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.mode(st.tensor([3, 1, 3, 2, 1]), 0).values.item()
    1
    """
    x = _tensor(input)
    d = _dim(x, dim)
    if x.ndim == 0:
        v, i = apply("mode", x.reshape(1), 0, False)
        return Mode(v, i)
    _nonempty("mode", x, d)
    return Mode(*apply("mode", x, d, bool(keepdim)))
