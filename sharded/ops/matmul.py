"""The matmul primitive: the layout strategy is picked by a small cost model.

For ``a (..., n, k) @ b (..., k, m)`` (batch dims broadcast) the planner weighs:

blocks (SUMMA form)
    The output is cut into blocks: batch chunks (taken from the first operand split along a
    batch dim it does not broadcast), row chunks and column chunks. Block ``(i, j)`` is made
    on one worker as ``sum_t a[i, t] @ b[t, j]`` over the k panels ``t``: the union of both
    operands' cuts of k, so every panel is a slice of one shard of each. Local panels are
    multiplied where they lie (first, while the rest travel); other panels come worker to
    worker, each shipped once per worker that needs it and cut into pieces of at most the
    executor's transfer size. Candidate grids: a's row chunks x b's column chunks, a's rows x
    whole, whole x b's columns, and even row or column chunks over all workers (which
    reshards a badly split operand first). A block goes to the worker that already holds most
    of its inputs, with at most ceil(blocks / workers) blocks per worker.
k-split
    2-D only, when a's columns (or b's rows) are split and the other dim is not: each worker
    multiplies its k chunk by the matching slice of the other operand and the partial
    products are summed: by the reduction tree into one block when the result is small
    (< :data:`SMALL_RESULT` bytes), else reduce-scattered into row chunks, one per worker.
replicated
    Both operands replicated: every worker computes the whole product (replicated output).

The cheapest candidate wins, cost = busiest worker's flops / :data:`FLOP_RATE` + bytes moved /
:data:`BYTE_RATE` + transfers * :data:`TRANSFER_COST`; ties go to the first candidate listed.
So row-split @ replicated is local; row-split @ row-split ships the other rows of ``b`` to each
worker; ``x.T @ g`` of row-sharded ``x`` and ``g`` (a weight gradient) is a k-split.
"""

from __future__ import annotations

import collections
import math

from .. import dtypes as D
from ..core.dataflow import Operand, even_bounds, free_temps
from ..core.dataflow import gather_regions as gather
from ..core.dispatch import apply, as_tensor, is_tensor
from ..core.registry import bind, kernel, primitive, vjp
from ..core.tree import plan_reduce
from ..errors import ShapeError
from ..layout import Layout

__all__ = [
    "bmm",
    "dot",
    "inner",
    "matmul",
    "mm",
    "mv",
    "outer",
    "vdot",
]

FLOP_RATE = 2e10  # flops per second one worker is assumed to sustain
BYTE_RATE = 1e9  # bytes per second assumed between workers
TRANSFER_COST = 1e-3  # seconds of latency charged per transferred piece
SMALL_RESULT = 1 << 20  # k-split results below this many bytes are summed into one block


def _size(reg) -> int:
    return math.prod(max(0, hi - lo) for lo, hi in reg)


def held(lay, w, reg) -> int:
    """Elements of region ``reg`` of a tensor laid out as ``lay`` that worker ``w`` holds."""
    if _size(reg) == 0:
        return 0
    if lay.is_replicated:
        return _size(reg) if w in lay.workers else 0
    return sum(math.prod(d.stop - d.start for d in dst) for j, _, dst in lay.overlaps(reg)
               if lay.workers[j] == w)


# ------------------------------------------------------------------------------ geometry
class _Geo:
    """Shapes of ``a (*Ba, n, k) @ b (*Bb, k, m)`` and the regions an output block needs."""

    def __init__(self, a, b):
        la, lb = a._layout, b._layout
        self.a, self.b = a, b
        self.n, self.k, self.m = la.shape[-2], la.shape[-1], lb.shape[-1]
        ba, bb = la.shape[:-2], lb.shape[:-2]
        self.nb = max(len(ba), len(bb))
        pad = lambda s: (1,) * (self.nb - len(s)) + tuple(s)  # noqa: E731
        self.batch = tuple(max(x, y) for x, y in zip(pad(ba), pad(bb)))
        self.shape = self.batch + (self.n, self.m)
        self.item = a._dtype.itemsize

    def _breg(self, lay, offs, shp):
        off = self.nb - (lay.ndim - 2)
        return [(0, 1) if lay.shape[i] == 1 else (offs[i + off], offs[i + off] + shp[i + off])
                for i in range(lay.ndim - 2)]

    def reg_a(self, offs, shp, kt):
        nb = self.nb
        return self._breg(self.a._layout, offs, shp) + [(offs[nb], offs[nb] + shp[nb]), kt]

    def reg_b(self, offs, shp, kt):
        nb = self.nb
        return self._breg(self.b._layout, offs, shp) + [
            kt, (offs[nb + 1], offs[nb + 1] + shp[nb + 1])]

    def batch_bounds(self):
        """Batch chunks of the first operand split along a batch dim it does not broadcast."""
        for t in (self.a, self.b):
            lay = t._layout
            if lay.is_replicated:
                continue
            off = self.nb - (lay.ndim - 2)
            own = [i + off for i in range(lay.ndim - 2) if lay.shape[i] == self.batch[i + off]]
            if any(lay.grid[i - off] > 1 for i in own):
                return [lay.bounds[i - off] if i in own else (0, self.batch[i])
                        for i in range(self.nb)]
        return [(0, s) for s in self.batch]

    def k_cuts(self):
        cuts = {0, self.k}
        for t, d in ((self.a, -1), (self.b, -2)):
            if not t._layout.is_replicated:
                cuts |= set(t._layout.bounds[d])
        c = sorted(cuts)
        return [(lo, hi) for lo, hi in zip(c, c[1:]) if hi > lo]


# ------------------------------------------------------------------------------ candidates
def _blocks_plan(ex, g: _Geo, bounds):
    """Placement and cost of computing the output blocked as ``bounds``."""
    nw = ex.num_workers
    out = Layout.from_bounds(g.shape, bounds, [0] * math.prod(len(b) - 1 for b in bounds))
    la, lb = g.a._layout, g.b._layout
    full_k = (0, g.k)
    aff = []
    for _, offs, shp in out.shards():
        ra, rb = g.reg_a(offs, shp, full_k), g.reg_b(offs, shp, full_k)
        aff.append([held(la, w, ra) + held(lb, w, rb) for w in range(nw)])
    workers = _place(aff, nw)
    out = out.replace(workers=workers)
    panels = g.k_cuts()
    moved, transfers, flops = 0, 0, [0] * nw
    for s, (w, offs, shp) in enumerate(out.shards()):
        for kt in panels:
            for t, reg in ((g.a, g.reg_a(offs, shp, kt)), (g.b, g.reg_b(offs, shp, kt))):
                miss = _size(reg) - held(t._layout, w, reg)
                moved += miss
                transfers += miss > 0
        flops[w] += 2 * math.prod(shp) * g.k
    cost = max(flops) / FLOP_RATE + moved * g.item / BYTE_RATE + transfers * TRANSFER_COST
    return cost, ("blocks", out, panels)


def _place(aff, nw):
    """Each block to the worker holding most of its inputs, at most ceil(blocks/nw) each."""
    cap = -(-len(aff) // nw)
    load, out = [0] * nw, [0] * len(aff)
    for s in sorted(range(len(aff)), key=lambda i: -max(aff[i])):
        w = max(range(nw), key=lambda v: (load[v] < cap, aff[s][v], -load[v]))
        out[s] = w
        load[w] += 1
    return out


def _ksplit_plan(ex, g: _Geo, src):
    """Cost of the k-split with the k chunks of ``src`` ('a' or 'b') staying in place."""
    lay = (g.a if src == "a" else g.b)._layout
    other = g.b if src == "a" else g.a
    d = 1 if src == "a" else 0
    moved, transfers, flops, used = 0, 0, collections.Counter(), set()
    for w, offs, shp in lay.shards():
        kt = (offs[d], offs[d] + shp[d])
        reg = [kt, (0, g.m)] if src == "a" else [(0, g.n), kt]
        miss = _size(reg) - held(other._layout, w, reg)
        moved += miss
        transfers += miss > 0
        flops[w] += 2 * g.n * g.m * shp[d]
        used.add(w)
    moved += (len(used) - 1) * g.n * g.m
    transfers += len(used) - 1
    cost = max(flops.values()) / FLOP_RATE + moved * g.item / BYTE_RATE + \
        transfers * TRANSFER_COST
    return cost, ("ksplit", src)


def choose(ex, a, b):
    """The cheapest plan for ``a @ b`` (see the module docstring)."""
    g = _Geo(a, b)
    la, lb = a._layout, b._layout
    if la.is_replicated and lb.is_replicated:
        return g, ("replicated",)
    nw = ex.num_workers
    rows_a = (0, g.n) if la.is_replicated else la.bounds[-2]
    cols_b = (0, g.m) if lb.is_replicated else lb.bounds[-1]
    bb = g.batch_bounds()
    grids = [(rows_a, cols_b), (rows_a, (0, g.m)), ((0, g.n), cols_b)]
    if all(b == (0, s) for b, s in zip(bb, g.batch)):  # unsplit batch: spread rows or cols
        grids += [(even_bounds(g.n, nw), (0, g.m)), ((0, g.n), even_bounds(g.m, nw))]
    cands = [_blocks_plan(ex, g, bb + [r, c]) for r, c in dict.fromkeys(grids)]
    if g.nb == 0:
        if not la.is_replicated and la.grid == (1, la.grid[1]) and la.grid[1] > 1:
            cands.append(_ksplit_plan(ex, g, "a"))
        if not lb.is_replicated and lb.grid == (lb.grid[0], 1) and lb.grid[0] > 1:
            cands.append(_ksplit_plan(ex, g, "b"))
    best = min(range(len(cands)), key=lambda i: (cands[i][0], i))
    return g, cands[best][1]


# ------------------------------------------------------------------------------ kernels
def _cast(a, dtype):
    if dtype is None or not hasattr(a, "dtype") or a.dtype == dtype:
        return a
    return a.astype(dtype)


# the public ``matmul`` below takes this name in the module; the kernel stays registered
@kernel
def matmul(xp, a, b, out=None, stack=False):
    """Block product (BLAS through NumPy / cuBLAS through CuPy); ``stack`` adds a leading
    dim of 1 (a partial product, one entry of a stack that is summed afterwards)."""
    r = _cast(xp.matmul(_cast(a, out), _cast(b, out)), out)
    return r[None] if stack else r


@kernel
def matmul_acc(xp, c, a, b, out=None):
    """``c += a @ b`` in place (one more k panel of a blocked product), in row chunks so the
    temporary product stays small (recycled, not page-faulted afresh)."""
    a, b = _cast(a, out), _cast(b, out)
    if c.ndim != 2 or a.ndim != 2:
        c += _cast(xp.matmul(a, b), c.dtype)
        return c
    step = max(64, (1 << 24) // max(1, c.shape[1] * c.itemsize))
    for r in range(0, c.shape[0], step):
        c[r:r + step] += _cast(a[r:r + step] @ b, c.dtype)
    return c


@kernel
def add_n(xp, *parts):
    """The sum of equally shaped blocks, in a fresh array (a reduce-scatter's last step)."""
    out = xp.array(parts[0], copy=True)
    for p in parts[1:]:
        out += p
    return out


# ------------------------------------------------------------------------------ execution
def _run_blocks(ex, g, out, panels, dt) -> Operand:
    limit = ex.transfer_bytes
    shards = out.shards()
    # split each panel into pieces of at most ``limit`` bytes on either side
    per_block = []
    for w, offs, shp in shards:
        ps = []
        for lo, hi in panels:
            # only pieces that travel are cut (a local panel is one product)
            width = max([_size(r) for t, r in ((g.a, g.reg_a(offs, shp, (lo, hi))),
                                               (g.b, g.reg_b(offs, shp, (lo, hi))))
                         if held(t._layout, w, r) < _size(r)], default=0)
            cut = max(1, -(-width * g.item // limit))
            ps += [(lo + (hi - lo) * i // cut, lo + (hi - lo) * (i + 1) // cut) for i in range(cut)]
        per_block.append([p for p in ps if p[1] > p[0]])
    wa, wb = [], []
    for (w, offs, shp), ps in zip(shards, per_block):
        for kt in ps:
            wa.append((w, g.reg_a(offs, shp, kt)))
            wb.append((w, g.reg_b(offs, shp, kt)))
    aargs, ta = gather(ex, g.a, wa)
    bargs, tb = gather(ex, g.b, wb)
    keys, i = [], 0
    for s, ((w, _, shp), ps) in enumerate(zip(shards, per_block)):
        pairs = list(zip(aargs[i:i + len(ps)], bargs[i:i + len(ps)]))
        i += len(ps)
        pairs.sort(key=lambda p: (p[0][0] == "x") + (p[1][0] == "x"))  # local panels first
        k = ex.new_key()
        if not pairs:  # k == 0: the product of empty matrices is zeros
            ex.submit(w, "full", (), (k,), {"shape": shp, "value": 0, "dtype": dt.np.str},
                      ("matmul", s))
        for j, (pa, pb) in enumerate(pairs):
            if j == 0:
                ex.submit(w, "matmul", (pa, pb), (k,), {"out": dt.np.str}, ("matmul", s))
            else:
                ex.submit(w, "matmul_acc", (("k", k, None), pa, pb), (k,), {"out": dt.np.str},
                          ("matmul", s), inplace=True)
        keys.append(k)
    free_temps(ex, ta + tb)
    return Operand(out, dt, tuple(keys))


def _run_ksplit(ex, g, src, dt) -> Operand:
    lay = (g.a if src == "a" else g.b)._layout
    keys = (g.a if src == "a" else g.b)._keys
    other = g.b if src == "a" else g.a
    d = 1 if src == "a" else 0
    wanted = []
    for w, offs, shp in lay.shards():
        kt = (offs[d], offs[d] + shp[d])
        wanted.append((w, [kt, (0, g.m)] if src == "a" else [(0, g.n), kt]))
    oargs, temps = gather(ex, other, wanted)
    small = g.n * g.m * g.item < SMALL_RESULT
    part = collections.OrderedDict()  # worker -> key of its partial sum
    for s, ((w, _, _), oa) in enumerate(zip(lay.shards(), oargs)):
        mine = ("k", keys[s], None)
        pa, pb = (mine, oa) if src == "a" else (oa, mine)
        if w not in part:
            part[w] = ex.new_key()
            ex.submit(w, "matmul", (pa, pb), (part[w],), {"out": dt.np.str, "stack": small},
                      ("matmul", s))
        else:
            ex.submit(w, "matmul_acc", (("k", part[w], None), pa, pb), (part[w],),
                      {"out": dt.np.str}, ("matmul", s), inplace=True)
    free_temps(ex, temps)
    ws, pk = list(part), list(part.values())
    if small or g.n < len(ws):
        if not small:  # partials were made 2-D: give them the stack dim the tree expects
            pk2 = []
            for w, k in zip(ws, pk):
                k2 = ex.new_key()
                ex.submit(w, "reshape", (("k", k, None),), (k2,), {"shape": (1, g.n, g.m)},
                          ("matmul", None))
                ex.free(w, [k])
                pk2.append(k2)
            pk = pk2
        stack = Layout.from_bounds((len(ws), g.n, g.m),
                                   [tuple(range(len(ws) + 1)), (0, g.n), (0, g.m)], ws)
        res = plan_reduce(ex, Operand(stack, dt, pk), "sum", (0,), False, dt, label="matmul")[0]
        for w, k in zip(ws, pk):
            ex.free(w, [k])
        return res
    return reduce_scatter(ex, ws, pk, g.n, g.m, dt, "matmul")


def reduce_scatter(ex, ws, keys, n, m, dt, label) -> Operand:
    """Sum equal-shaped (n, m) blocks ``keys`` held by workers ``ws`` into row chunks, chunk
    ``r`` landing on ``ws[r]``: every piece moves once (no gather on one worker)."""
    rb = even_bounds(n, len(ws))
    targets = ws[:len(rb) - 1]
    req = collections.defaultdict(list)
    for r, wr in enumerate(targets):
        sl = (slice(rb[r], rb[r + 1]), slice(None))
        nbytes = (rb[r + 1] - rb[r]) * m * dt.itemsize
        for u, ku in zip(ws, keys):
            if u != wr:
                req[u].append((ku, sl, nbytes))
                ex.bytes_moved += nbytes
    handles = {w: iter(h) for w, h in ex.export(req).items()}
    out = []
    for r, wr in enumerate(targets):
        sl = (slice(rb[r], rb[r + 1]), slice(None))
        args = [("k", ku, sl) if u == wr else ("x", next(handles[u])) for u, ku in zip(ws, keys)]
        k = ex.new_key()
        ex.submit(wr, "add_n", tuple(args), (k,), None, (label, r))
        out.append(k)
    for u, ku in zip(ws, keys):
        ex.free(u, [ku])
    return Operand(Layout.from_bounds((n, m), [rb, (0, m)], targets), dt, tuple(out))


@primitive("matmul", kind="linalg", kernels=[matmul, matmul_acc, add_n])
def plan_matmul(ex, a, b, out_dtype) -> Operand:
    """``a @ b`` for operands of at least 2 dims whose batch dims broadcast (the caller
    handles 1-D operands, dtypes and shape checks); the strategy is :func:`choose`'s."""
    g, plan = choose(ex, a, b)
    if plan[0] == "replicated":
        lay = a._layout
        out = Layout.from_bounds(g.shape, [(0, s) for s in g.shape], lay.workers,
                                 replicated=True)
        return _run_blocks(ex, g, out, g.k_cuts() or [], out_dtype)
    if plan[0] == "ksplit":
        return _run_ksplit(ex, g, plan[1], out_dtype)
    return _run_blocks(ex, g, plan[1], plan[2], out_dtype)


def _unbroadcast(g, a):
    """``g`` summed back to the shape of operand ``a`` (None if ``a`` needs no gradient)."""
    if not (is_tensor(a) and a.requires_grad):
        return None
    shape = tuple(a.shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    return (g.sum(dims, keepdim=True) if dims else g).reshape(shape)


@vjp("matmul", saves=(0, 1))
def matmul_vjp(gs, node):
    a, b, _ = node.args
    g = gs[0]
    # d(a @ b) = da @ b + a @ db; a's gradient is row-split like a, b's (a weight) is the
    # k-split product a^T g: partial products summed across the workers by the tree
    return (_unbroadcast(g @ b.mT, a), _unbroadcast(a.mT @ g, b), None)


# ------------------------------------------------------------------------------ public
def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _dims(s) -> str:
    return "x".join(map(str, s))


def _batch_shape(sa, sb):
    """The broadcast batch shape; :class:`ShapeError` names both shapes if they clash."""
    nd = max(len(sa), len(sb))
    out = []
    for i in range(nd):
        sizes = {s[i - nd + len(s)] for s in (sa, sb) if i - nd + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ShapeError(f"shapes {tuple(sa)} and {tuple(sb)} cannot be broadcast together "
                             f"(dimension {i}: sizes {sorted(sizes)})")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


@bind("matmul", "__matmul__", "__rmatmul__", prim="matmul")
def matmul(input, other):
    """Matrix product with torch's rules for 1-D and batched (broadcast) operands.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.arange(6.).reshape(3, 2)
    >>> (a @ st.tensor([[1.], [1.]])).tolist()
    [[1.0], [5.0], [9.0]]
    """
    a, b = _t(input), _t(other)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are "
                         f"{a.ndim}D and {b.ndim}D")
    dt = D.promote_types(a.dtype, b.dtype)
    a, b = a.to(dt), b.to(dt)
    squeeze = []
    if a.ndim == 1:
        a = a.unsqueeze(0)
        squeeze.append(-2)
    if b.ndim == 1:
        b = b.unsqueeze(1)
        squeeze.append(-1)
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied "
                         f"({_dims(a.shape)} and {_dims(b.shape)})")
    _batch_shape(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    out = apply("matmul", a, b, dt)
    for d in squeeze:
        out = out.squeeze(d)
    return out


@bind("mm", prim="matmul")
def mm(input, mat2):
    """Product of two 2-D tensors.

    Examples
    --------
    >>> import sharded as st
    >>> st.mm(st.eye(2), st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    if _t(input).ndim != 2 or _t(mat2).ndim != 2:
        raise ShapeError(f"mm expects 2-D tensors, got {_t(input).ndim}-D and {_t(mat2).ndim}-D")
    return matmul(input, mat2)


@bind("bmm", prim="matmul")
def bmm(input, mat2):
    """Batched product of two 3-D tensors with equal batch sizes.

    Examples
    --------
    >>> import sharded as st
    >>> st.bmm(st.ones(4, 2, 3), st.ones(4, 3, 5)).shape
    sharded.Size([4, 2, 5])
    """
    a, b = _t(input), _t(mat2)
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm expects 3-D tensors with equal batch sizes, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


@bind("mv", prim="matmul")
def mv(input, vec):
    """Matrix-vector product.

    Examples
    --------
    >>> import sharded as st
    >>> st.mv(st.eye(2), st.tensor([1., 2.])).tolist()
    [1.0, 2.0]
    """
    if _t(input).ndim != 2 or _t(vec).ndim != 1:
        raise ShapeError(f"mv expects a 2-D and a 1-D tensor, got {_t(input).ndim}-D and "
                         f"{_t(vec).ndim}-D")
    return matmul(input, vec)


@bind("dot", "vdot", prim="matmul")
def dot(input, other):
    """Inner product of two 1-D tensors (a 0-d tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.dot(st.tensor([1., 2.]), st.tensor([3., 4.])).item()
    11.0
    """
    a, b = _t(input), _t(other)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ShapeError(f"dot expects two 1-D tensors of equal size, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


vdot = dot  # real dtypes only: no conjugation to do


@bind("inner", prim="matmul")
def inner(input, other):
    """Sum of products over the last dim of both: one matmul of the flattened free dims.

    Examples
    --------
    >>> import sharded as st
    >>> st.linalg.inner(st.ones(2, 3), st.ones(4, 3)).shape
    sharded.Size([2, 4])
    """
    a, b = _t(input), _t(other)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"tensordot: contracted dims [{a.ndim - 1}] of {tuple(a.shape)} and "
                         f"[{b.ndim - 1}] of {tuple(b.shape)} do not match")
    k = a.shape[-1]
    fa, fb = list(a.shape[:-1]), list(b.shape[:-1])
    # as tensordot over the last dims: b's contracted dim moved first
    am = a.permute(list(range(a.ndim))).reshape(math.prod(fa), k)
    bm = b.permute([b.ndim - 1] + list(range(b.ndim - 1))).reshape(k, math.prod(fb))
    return (am @ bm).reshape(fa + fb)


@bind("outer", "ger", prim="matmul")
def outer(input, vec2):
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``.

    Examples
    --------
    >>> import sharded as st
    >>> st.outer(st.tensor([1, 2]), st.tensor([1, 10])).tolist()
    [[1, 10], [2, 20]]
    """
    a, b = _t(input), _t(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer expects two 1-D tensors, got {a.ndim}-D and {b.ndim}-D")
    return a.unsqueeze(1) * b.unsqueeze(0)


ger = outer
