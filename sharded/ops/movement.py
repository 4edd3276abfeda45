"""Moving data between layouts: aligning an operand to a target layout, and resharding.

:func:`align` tells, for every shard of a target layout, where the matching block of an operand
comes from: the operand's own shard on the same worker (no bytes move), a slice of a local
replicated copy, or pieces exported by other workers and assembled on the target worker
(worker to worker; the driver only plans). Broadcast dimensions of size 1 are read whole.
"""

from __future__ import annotations

import collections

import numpy as np

from .. import dtypes as D
from ..core.dataflow import Operand as Result
from ..core.dataflow import align, fetch_regions, free_temps, region  # noqa: F401
from ..core.dispatch import apply, is_tensor
from ..core.registry import bind, primitive
from ..devices import matches, normalize, workers_for
from ..layout import Layout, resolve


@primitive("reshard")
def reshard(ex, t, layout: Layout) -> Result:
    """A copy of ``t`` laid out as ``layout`` (a bound layout of the same shape).

    Blocks that already sit on the right worker are copied locally; the rest travel worker
    to worker and are assembled where they land.
    """
    args, temps = align(ex, t, layout)
    keys = []
    dtype = t._dtype.np.str
    for s, ((w, _, shp), a) in enumerate(zip(layout.shards(), args)):
        if a[0] == "k" and any(w == tw and a[1] == tk for tw, tk in temps):
            keys.append(a[1])  # assembled for us already: take it over instead of copying
            continue
        k = ex.new_key()
        ex.submit(w, "copy", (a,), (k,), {"dtype": dtype}, label=("reshard", s))
        keys.append(k)
    free_temps(ex, [(w, k) for w, k in temps if k not in keys])
    return Result(layout, t._dtype, tuple(keys))


@primitive("squeeze_dims")
def squeeze_dims(ex, t, dims) -> Result:
    """Drop size-1 dimensions ``dims`` that are not split (a local reshape on every shard)."""
    lay = t._layout
    dims = set(dims)
    keep = [d for d in range(lay.ndim) if d not in dims]
    out = Layout.from_bounds([lay.shape[d] for d in keep], [lay.bounds[d] for d in keep],
                             lay.workers, lay.is_replicated)
    keys = []
    for s, ((w, _, shp), k) in enumerate(zip(out.shards(), t._keys)):
        nk = ex.new_key()
        ex.submit(w, "reshape", (("k", k, None),), (nk,), {"shape": shp}, ("squeeze", s))
        keys.append(nk)
    return Result(out, t._dtype, tuple(keys))


@primitive("cat")
def cat(ex, *ts, dim) -> Result:
    """Concatenate along ``dim``. If any input is split along ``dim``, the result's chunks are
    the inputs' chunks in order (each copied where it lives, unsplit inputs as one chunk).
    If none is, the first input's layout, every shard the concatenation of the inputs'
    matching blocks."""
    import itertools
    first = ts[0]._layout
    d = dim
    sizes = [t._layout.shape[d] for t in ts]
    shape = list(first.shape)
    shape[d] = sum(sizes)
    dtype = ts[0]._dtype
    keys = []
    if all(t._layout.is_replicated or t._layout.grid[d] == 1 for t in ts):
        bounds = list(first.bounds)
        bounds[d] = (0, shape[d])
        out = Layout.from_bounds(shape, bounds, first.workers, first.is_replicated)
        per, temps = [], []
        for t, n in zip(ts, sizes):
            b = list(first.bounds)
            b[d] = (0, n)
            a, tt = align(ex, t, Layout.from_bounds(
                [n if k == d else s for k, s in enumerate(first.shape)], b, first.workers,
                first.is_replicated))
            per.append(a)
            temps += tt
        for s, (w, _, _) in enumerate(out.shards()):
            k = ex.new_key()
            ex.submit(w, "concat", tuple(a[s] for a in per), (k,), {"axis": d}, ("cat", s))
            keys.append(k)
        free_temps(ex, temps)
        return Result(out, dtype, tuple(keys))
    aligned, chunk_bounds, start = [], [0], 0
    for t, n in zip(ts, sizes):
        lay = t._layout
        b = list(first.bounds)
        b[d] = lay.bounds[d] if not lay.is_replicated else (0, n)
        grid = [len(x) - 1 for x in b]
        cnt = 1
        for g in grid:
            cnt *= g
        tshape = [n if k == d else s for k, s in enumerate(first.shape)]
        same = (not lay.is_replicated and tuple(tuple(x) for x in b) == lay.bounds)
        ws = lay.workers if same else [(i + start) % ex.num_workers for i in range(cnt)]
        target = Layout.from_bounds(tshape, b, ws)
        args, temps = align(ex, t, target)
        aligned.append((target, args, temps))
        for v in target.chunk_sizes(d):
            chunk_bounds.append(chunk_bounds[-1] + v)
        start += grid[d]
    bounds = list(first.bounds)
    bounds[d] = tuple(chunk_bounds)
    owner = [(i, k) for i, (tg, _, _) in enumerate(aligned) for k in range(tg.grid[d])]
    grid = [len(x) - 1 for x in bounds]
    workers, srcs = [], []
    for c in itertools.product(*(range(g) for g in grid)):
        i, k = owner[c[d]]
        tg, args, _ = aligned[i]
        j = tg.index(c[:d] + (k,) + c[d + 1:])
        workers.append(tg.workers[j])
        srcs.append(args[j])
    out = Layout.from_bounds(shape, bounds, workers)
    for s, (w, a) in enumerate(zip(workers, srcs)):
        k = ex.new_key()
        ex.submit(w, "copy", (a,), (k,), None, ("cat", s))
        keys.append(k)
    for _, _, temps in aligned:
        free_temps(ex, temps)
    return Result(out, dtype, tuple(keys))


@primitive("scatter_add")
def scatter_add(ex, x, coords, values, target) -> Result:
    """Add ``values`` (a tensor of the coordinates' shape, split by rows as ``gather`` makes
    it) into ``x`` at ``coords`` in place; repeated coordinates accumulate. The inverse of a
    gather: each block of ``values`` sends every shard of ``x`` the points it owns."""
    from .indexing import _flat_start, _locate
    lay, vlay = x._layout, values._layout
    flat = [c.reshape(-1) for c in coords]
    if lay.is_replicated:
        src, local = np.zeros(flat[0].shape, np.int64), flat
    else:
        src, local = _locate(lay, flat)
    gshape = tuple(vlay.shape)
    req, plan = collections.defaultdict(list), []
    for r, (vw, offs, shp) in enumerate(vlay.shards()):
        lo, n = _flat_start(offs, gshape), int(np.prod(shp))
        s_r = src[lo:lo + n]
        for j in np.unique(s_r):
            sel = np.nonzero(s_r == j)[0]
            lc = tuple(c[lo:lo + n][sel] for c in local)
            pick = np.unravel_index(sel, shp)  # the points, in the values block's coords
            for jj in (range(len(lay.workers)) if lay.is_replicated else [int(j)]):
                w = lay.shards()[jj][0]
                if w == vw:
                    plan.append((jj, w, ("k", values._keys[r], pick), lc))
                else:
                    req[vw].append((values._keys[r], pick))
                    ex.bytes_moved += len(sel) * values._dtype.itemsize
                    plan.append((jj, w, vw, lc))
    handles = {w: iter(h) for w, h in ex.export(req).items()} if req else {}
    for jj, w, arg, lc in plan:
        a = arg if isinstance(arg, tuple) else ("x", next(handles[arg]))
        ex.submit(w, "add_points", (("k", x._keys[jj], None), a), (x._keys[jj],),
                  {"coords": [lc]}, ("scatter_add", jj), inplace=True)
    return Result(lay, x._dtype, x._keys)


@primitive("mask_scatter")
def mask_scatter(ex, x, mask, values, target) -> Result:
    """``x[mask] = values`` in place where ``values`` is the result of ``x[mask]`` on the same
    layout (one block per shard, on the same worker): the inverse of a mask selection."""
    lay = x._layout
    nd = mask._layout.ndim
    lead = Layout.from_bounds(lay.shape[:nd], lay.bounds[:nd], lay.workers, lay.is_replicated)
    margs, temps = align(ex, mask, lead)
    for s, ((w, _, _), a) in enumerate(zip(lay.shards(), margs)):
        ex.submit(w, "put_mask", (("k", x._keys[s], None), a, ("k", values._keys[s], None)),
                  (x._keys[s],), None, ("mask_scatter", s), inplace=True)
    free_temps(ex, temps)
    return Result(lay, x._dtype, x._keys)


# ------------------------------------------------------------------ devices and dtypes
def to_device(x, device):
    """``x`` with every shard on a worker of ``device`` (``x`` itself if already there).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(4)
    >>> x.to("cpu") is x
    True
    """
    ex = x._executor()
    dev = normalize(device)
    if all(matches(ex.workers[w].device, dev) for w in x.layout.workers):
        return x
    targets = workers_for(ex, dev)
    lay = x.layout
    n = len(lay.workers)
    workers = targets if lay.is_replicated else [targets[i % len(targets)] for i in range(n)]
    new = Layout.from_bounds(lay.shape, lay.bounds, workers, lay.is_replicated)
    return apply("reshard", x, new)


@bind("to")
def to(self, *args, **kwargs):
    """Convert dtype and/or device: ``x.to(st.float64)``, ``x.to("cuda")``,
    ``x.to("cuda:1", st.float16)``; returns ``x`` itself when nothing changes.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(3).to(st.float64).dtype
    sharded.float64
    """
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if is_tensor(a):
            dtype = a.dtype
        elif isinstance(a, str) and (a == "cpu" or a.startswith("cuda")):
            device = a
        else:
            dtype = a
    out = self
    if device is not None:
        out = to_device(out, device)
    if dtype is not None and D.as_dtype(dtype) != out._dtype:
        out = apply("astype", out, D.as_dtype(dtype))
    return out

@bind("cuda")
def cuda(self, device=None):
    """The tensor on GPU workers (``device``: ``"cuda:N"`` or N; default: all GPUs)."""
    dev = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int)
                                         else device)
    return self.to(dev)

@bind("cpu")
def cpu(self):
    """The tensor on CPU workers (itself if it is there already)."""
    return self.to("cpu")

@bind("type")
def type_name(self, dtype=None):
    """The type name (``"sharded.FloatTensor"``), or a copy converted to ``dtype``."""
    if dtype is None:
        names = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool"}
        return f"sharded.{names[self._dtype.name]}Tensor"
    return self.to(dtype)

def _caster(name, dtype):
    def cast(self):
        return to(self, dtype)
    cast.__name__, cast.__doc__ = name, f"``x.to({dtype})``."
    return cast


for _name, _dt in {"float": D.float32, "double": D.float64, "half": D.float16,
                   "int": D.int32, "long": D.int64, "short": D.int16, "byte": D.uint8,
                   "bool": D.bool_}.items():
    bind(_name)(_caster(_name, _dt))


# ------------------------------------------------------------------ layout
@bind("reshard")
def reshard_tensor(self, dim=None, shards=None, layout=None):
    """A copy laid out anew (``dim=``/``shards=``, or ``layout=``), moved worker to
    worker.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(4, 6, shards=2).reshard(dim=1, shards=3).layout.grid
    (1, 3)
    """
    ex = self._executor()
    lay = resolve(self._layout.shape, ex.num_workers, shards=shards, dim=dim, layout=layout)
    return apply("reshard", self, lay)

@bind("replicate")
def replicate(self):
    """A copy held whole by every worker."""
    from .layout import Layout
    return reshard_tensor(self, layout=Layout.replicated())
