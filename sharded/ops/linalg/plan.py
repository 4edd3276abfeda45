"""How the matmul primitive is planned: the layout strategy is picked by a small cost model.

For ``a (..., n, k) @ b (..., k, m)`` (batch dims broadcast) the planner weighs:

blocks (SUMMA form)
    The output is cut into blocks: batch chunks (taken from the first operand split along a
    batch dim it does not broadcast), row chunks and column chunks. Block ``(i, j)`` is made
    on one worker as ``sum_t a[i, t] @ b[t, j]`` over the k panels ``t``: the union of both
    operands' cuts of k, so every panel is a slice of one shard of each. Local panels are
    multiplied where they lie (first, while the rest travel); other panels come worker to
    worker, each shipped once per worker that needs it and cut into pieces of at most the
    executor's transfer size. When every operand region a block gathers is thin (at most
    :data:`THIN_BYTES`: a vector, a few columns), it is gathered whole instead (an allgather of
    the thin operand, one copy per worker) and the block is one product over all of k: a
    row-split matrix times a split vector is one gemv per block, not a product per panel
    summed into the first. Candidate grids: a's row chunks x b's column chunks, a's rows x
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

A 1-D operand is planned as a one-row (``a``) or one-column (``b``) matrix (:class:`Vec`)
whose commands read the vector itself, and the unit dim is dropped from the output: no
reshaping commands around a vector product, and the block kernel is a gemv.

The cheapest candidate wins, cost = busiest worker's flops / :data:`FLOP_RATE` + bytes moved /
:data:`BYTE_RATE` + transfers * :data:`TRANSFER_COST` + bytes of the operand regions a plan
gathers into one block / :data:`COPY_RATE` (assembling a region copies it even when all its
pieces are local, as when one worker holds several shards); ties go to the first candidate
listed.
So row-split @ replicated is local; row-split @ row-split ships the other rows of ``b`` to each
worker; ``x.T @ g`` of row-sharded ``x`` and ``g`` (a weight gradient) is a k-split.
"""

from __future__ import annotations

import collections
import math

from ...core.dataflow import Operand, even_bounds, free_temps
from ...core.dataflow import gather_regions as gather
from ...core.tree import plan_reduce
from ...layout import Layout
from ...runtime.commands import Key, Transfer

FLOP_RATE = 2e10  # flops per second one worker is assumed to sustain
BYTE_RATE = 1e9  # bytes per second assumed between workers
TRANSFER_COST = 1e-3  # seconds of latency charged per transferred piece
COPY_RATE = 4e9  # bytes per second a worker assembles a gathered region at (local pieces too)
SMALL_RESULT = 1 << 20  # k-split results below this many bytes are summed into one block
THIN_BYTES = 4 << 20  # gathered regions up to this size are gathered whole (no k panels)


def _size(reg) -> int:
    return math.prod(max(0, hi - lo) for lo, hi in reg)


def held(lay, w, reg) -> int:
    """Elements of region ``reg`` of a tensor laid out as ``lay`` that worker ``w`` holds."""
    if _size(reg) == 0:
        return 0
    if lay.is_replicated:
        return _size(reg) if w in lay.workers else 0
    return sum(
        math.prod(d.stop - d.start for d in dst)
        for j, _, dst in lay.overlaps(reg)
        if lay.workers[j] == w
    )


def _one_local_piece(lay, w, reg) -> bool:
    """Whether worker ``w`` reads region ``reg`` in place: one shard it holds covers it."""
    if lay.is_replicated:
        return w in lay.workers
    pieces = lay.overlaps(reg)
    return (
        len(pieces) == 1
        and lay.workers[pieces[0][0]] == w
        and math.prod(d.stop - d.start for d in pieces[0][2]) == _size(reg)
    )


def _remote_pieces(lay, w, reg) -> int:
    """Pieces of region ``reg`` that worker ``w`` must receive."""
    if lay.is_replicated:
        return int(w not in lay.workers and _size(reg) > 0)
    return sum(lay.workers[j] != w for j, _, _ in lay.overlaps(reg))


# ------------------------------------------------------------------------------ geometry
class Vec:
    """A 1-D operand planned as a matrix: a one-row ``a`` (``unit = 0``) or a one-column ``b``
    (``unit = 1``). The planner reads its 2-D layout; :func:`_gather` drops the unit dim from
    the regions, so commands read the vector itself (no reshaping command)."""

    __slots__ = ("_layout", "_dtype", "_keys", "base", "unit")

    def __init__(self, t, unit: int):
        lay = t._layout
        one = ((0, 1),)
        shape = (1,) + lay.shape if unit == 0 else lay.shape + (1,)
        bounds = one + lay.bounds if unit == 0 else lay.bounds + one
        self._layout = Layout.from_bounds(shape, bounds, lay.workers, lay.is_replicated)
        self._dtype, self._keys, self.base, self.unit = t._dtype, t._keys, t, unit


def _gather(ex, t, wanted):
    """:func:`gather_regions` of an operand, a :class:`Vec` read through its vector."""
    if type(t) is Vec:
        wanted = [(w, [r for i, r in enumerate(reg) if i != t.unit]) for w, reg in wanted]
        t = t.base
    return gather(ex, t, wanted)


class _Geo:
    """Shapes of ``a (*Ba, n, k) @ b (*Bb, k, m)`` and the regions an output block needs."""

    def __init__(self, a, b):
        la, lb = a._layout, b._layout
        self.a, self.b = a, b
        self.n, self.k, self.m = la.shape[-2], la.shape[-1], lb.shape[-1]
        ba, bb = la.shape[:-2], lb.shape[:-2]
        self.nb = max(len(ba), len(bb))
        pad = lambda s: (1,) * (self.nb - len(s)) + tuple(s)  # noqa: E731
        self.batch = tuple(x if y == 1 else y for x, y in zip(pad(ba), pad(bb)))  # 0 wins
        self.shape = self.batch + (self.n, self.m)
        self.item = a._dtype.itemsize
        # output dims a vector operand does not have (its unit dim), dropped from the result
        self.drop = {d for d, t in ((self.nb, a), (self.nb + 1, b)) if type(t) is Vec}

    def squeeze(self, shape) -> tuple:
        """``shape`` (of an output block) less the dims that vectors do not have."""
        return tuple(n for i, n in enumerate(shape) if i not in self.drop)

    def out_layout(self, lay):
        """The result's layout: ``lay`` (of the matrix-shaped output) less the dropped dims."""
        if not self.drop:
            return lay
        return Layout.from_bounds(
            self.squeeze(lay.shape), self.squeeze(lay.bounds), lay.workers, lay.is_replicated
        )

    def _breg(self, lay, offs, shp):
        off = self.nb - (lay.ndim - 2)
        reg = []
        for i in range(lay.ndim - 2):
            lo, n = offs[i + off], shp[i + off]
            # a broadcast size-1 dim gives its one entry, or none to an empty output block
            # (a size-1 batch split into empty chunks)
            bcast = lay.shape[i] == 1 and self.batch[i + off] != 1
            reg.append((0, min(n, 1)) if bcast else (lo, lo + n))
        return reg

    def reg_a(self, offs, shp, kt):
        nb = self.nb
        return self._breg(self.a._layout, offs, shp) + [(offs[nb], offs[nb] + shp[nb]), kt]

    def reg_b(self, offs, shp, kt):
        nb = self.nb
        return self._breg(self.b._layout, offs, shp) + [
            kt,
            (offs[nb + 1], offs[nb + 1] + shp[nb + 1]),
        ]

    def batch_bounds(self):
        """Batch chunks of the first operand split along a batch dim it does not broadcast."""
        for t in (self.a, self.b):
            lay = t._layout
            if lay.is_replicated:
                continue
            off = self.nb - (lay.ndim - 2)
            own = [i + off for i in range(lay.ndim - 2) if lay.shape[i] == self.batch[i + off]]
            if any(lay.grid[i - off] > 1 for i in own):
                return [
                    lay.bounds[i - off] if i in own else (0, self.batch[i]) for i in range(self.nb)
                ]
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
    whole = g.k > 0 and _thin(g, out)
    panels = [full_k] if whole else g.k_cuts()
    moved, transfers, copied, flops, seen = 0, 0, 0, [0] * nw, set()
    for s, (w, offs, shp) in enumerate(out.shards()):
        for kt in panels:
            for t, reg in ((g.a, g.reg_a(offs, shp, kt)), (g.b, g.reg_b(offs, shp, kt))):
                if whole:  # one gathered copy per worker and region, its pieces each a transfer
                    if (w, t is g.a, tuple(reg)) in seen:
                        continue
                    seen.add((w, t is g.a, tuple(reg)))
                    transfers += _remote_pieces(t._layout, w, reg)
                else:
                    transfers += held(t._layout, w, reg) < _size(reg)
                if not _one_local_piece(t._layout, w, reg):  # assembled: a copy
                    copied += _size(reg)
                moved += _size(reg) - held(t._layout, w, reg)
        flops[w] += 2 * math.prod(shp) * g.k
    return _cost(max(flops), moved, transfers, copied, g.item), ("blocks", out, panels)


def _thin(g: _Geo, out) -> bool:
    """Whether every block of ``out`` reads its whole-k operand regions in place or gathers
    at most :data:`THIN_BYTES` of each (then each block is one product, no k panels)."""
    for w, offs, shp in out.shards():
        for t, reg in ((g.a, g.reg_a(offs, shp, (0, g.k))), (g.b, g.reg_b(offs, shp, (0, g.k)))):
            if _size(reg) * g.item > THIN_BYTES and not _one_local_piece(t._layout, w, reg):
                return False
    return True


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
    moved, transfers, copied, flops, used = 0, 0, 0, collections.Counter(), set()
    for w, offs, shp in lay.shards():
        kt = (offs[d], offs[d] + shp[d])
        reg = [kt, (0, g.m)] if src == "a" else [(0, g.n), kt]
        miss = _size(reg) - held(other._layout, w, reg)
        moved += miss
        transfers += miss > 0
        if not _one_local_piece(other._layout, w, reg):  # gathered: a copy
            copied += _size(reg)
        flops[w] += 2 * g.n * g.m * shp[d]
        used.add(w)
    moved += (len(used) - 1) * g.n * g.m
    transfers += len(used) - 1
    return _cost(max(flops.values()), moved, transfers, copied, g.item), ("ksplit", src)


def _cost(flops, moved, transfers, copied, item) -> float:
    """Seconds a plan is assumed to take (the module docstring): the busiest worker's
    ``flops``, elements ``moved`` between workers, ``transfers`` and elements ``copied``
    into gathered blocks, of ``item`` bytes each."""
    return (
        flops / FLOP_RATE
        + moved * item / BYTE_RATE
        + transfers * TRANSFER_COST
        + copied * item / COPY_RATE
    )


def choose(ex, a, b):
    """The cheapest plan for ``a @ b`` (see the module docstring): ``(geometry, plan)``.

    The plan is a pure function of the operands' layouts, the element size and the worker
    count, and weighing the candidates costs more driver time than queueing a small product
    (~0.3 ms), so plans are remembered (:data:`PLAN_CACHE` of them): an iterative solver's
    ``A @ p`` is planned once."""
    g = _Geo(a, b)
    key = (a._layout, b._layout, g.item, ex.num_workers)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _choose(ex, g)
        if len(_PLANS) >= PLAN_CACHE:  # forget the oldest (another thread may have)
            _PLANS.pop(next(iter(_PLANS), None), None)
        _PLANS[key] = plan
    return g, plan


PLAN_CACHE = 256
_PLANS: dict = {}  # (layout of a, layout of b, itemsize, workers) -> plan


def _choose(ex, g: _Geo):
    la, lb = g.a._layout, g.b._layout
    if la.is_replicated and lb.is_replicated:
        return ("replicated",)
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
    return cands[best][1]


# ------------------------------------------------------------------------------ execution
def run_blocks(ex, g, out, panels, dt) -> Operand:
    limit = ex.transfer_bytes
    shards = out.shards()
    # split each panel into pieces of at most ``limit`` bytes on either side
    per_block = []
    for w, offs, shp in shards:
        ps = []
        for lo, hi in panels:
            # only pieces that travel are cut (a local panel is one product); a panel within
            # the limit is not (no need to look where it lies)
            width = max(
                [
                    _size(r)
                    for t, r in (
                        (g.a, g.reg_a(offs, shp, (lo, hi))),
                        (g.b, g.reg_b(offs, shp, (lo, hi))),
                    )
                    if _size(r) * g.item > limit and held(t._layout, w, r) < _size(r)
                ],
                default=0,
            )
            cut = max(1, -(-width * g.item // limit))
            ps += [(lo + (hi - lo) * i // cut, lo + (hi - lo) * (i + 1) // cut) for i in range(cut)]
        per_block.append([p for p in ps if p[1] > p[0]])
    wa, wb = [], []
    for (w, offs, shp), ps in zip(shards, per_block):
        for kt in ps:
            wa.append((w, g.reg_a(offs, shp, kt)))
            wb.append((w, g.reg_b(offs, shp, kt)))
    aargs, ta = _gather(ex, g.a, wa)
    bargs, tb = _gather(ex, g.b, wb)
    keys, i = [], 0
    for s, ((w, _, shp), ps) in enumerate(zip(shards, per_block)):
        pairs = list(zip(aargs[i : i + len(ps)], bargs[i : i + len(ps)]))
        i += len(ps)
        # local panels first
        pairs.sort(key=lambda p: (type(p[0]) is Transfer) + (type(p[1]) is Transfer))
        k = ex.new_key()
        if not pairs:  # k == 0: the product of empty matrices is zeros
            params = {"shape": g.squeeze(shp), "value": 0, "dtype": dt.np_str}
            ex.submit(w, "full", (), (k,), params, ("matmul", s))
        for j, (pa, pb) in enumerate(pairs):
            if j == 0:
                ex.submit(w, "matmul", (pa, pb), (k,), {"out": dt.np_str}, ("matmul", s))
            else:
                ex.submit(
                    w,
                    "matmul_acc",
                    (Key(k, None), pa, pb),
                    (k,),
                    {"out": dt.np_str},
                    ("matmul", s),
                    inplace=True,
                )
        keys.append(k)
    free_temps(ex, ta + tb)
    return Operand(g.out_layout(out), dt, tuple(keys))


def run_ksplit(ex, g, src, dt) -> Operand:
    lay = (g.a if src == "a" else g.b)._layout
    keys = (g.a if src == "a" else g.b)._keys
    other = g.b if src == "a" else g.a
    d = 1 if src == "a" else 0
    wanted = []
    for w, offs, shp in lay.shards():
        kt = (offs[d], offs[d] + shp[d])
        wanted.append((w, [kt, (0, g.m)] if src == "a" else [(0, g.n), kt]))
    oargs, temps = _gather(ex, other, wanted)
    small = g.n * g.m * g.item < SMALL_RESULT
    # (worker, slot) -> key of a partial sum. A small result gets one partial per kernel
    # thread of a worker (its shards dealt round robin), made at once on its threads and
    # summed by the tree; a large one, one per worker, accumulated in place (no copies).
    part = collections.OrderedDict()
    dealt = collections.Counter()
    for s, ((w, _, _), oa) in enumerate(zip(lay.shards(), oargs)):
        mine = Key(keys[s], None)
        pa, pb = (mine, oa) if src == "a" else (oa, mine)
        slot = (w, dealt[w] % ex.workers[w].threads if small else 0)
        dealt[w] += 1
        if slot not in part:
            part[slot] = ex.new_key()
            params = {"out": dt.np_str, "stack": small}
            ex.submit(w, "matmul", (pa, pb), (part[slot],), params, ("matmul", s))
        else:
            ex.submit(
                w,
                "matmul_acc",
                (Key(part[slot], None), pa, pb),
                (part[slot],),
                {"out": dt.np_str},
                ("matmul", s),
                inplace=True,
            )
    free_temps(ex, temps)
    ws, pk = [w for w, _ in part], list(part.values())
    shape = g.squeeze((g.n, g.m))  # the result's (a vector's unit dim dropped)
    if small or not shape or shape[0] < len(ws):
        if not small:  # partials were made 2-D: give them the stack dim the tree expects
            pk2 = []
            for w, k in zip(ws, pk):
                k2 = ex.new_key()
                ex.submit(
                    w,
                    "reshape",
                    (Key(k, None),),
                    (k2,),
                    {"shape": (1,) + shape},
                    ("matmul", None),
                )
                ex.free(w, [k])
                pk2.append(k2)
            pk = pk2
        stack = Layout.from_bounds(
            (len(ws),) + shape, [tuple(range(len(ws) + 1))] + [(0, n) for n in shape], ws
        )
        res = plan_reduce(ex, Operand(stack, dt, pk), "sum", (0,), False, dt, label="matmul")[0]
        for w, k in zip(ws, pk):
            ex.free(w, [k])
        return res
    return reduce_scatter(ex, ws, pk, shape, dt, "matmul")


def reduce_scatter(ex, ws, keys, shape, dt, label) -> Operand:
    """Sum equal blocks of ``shape`` (``keys``, held by workers ``ws``) into chunks of the
    first dim, chunk ``r`` landing on ``ws[r]``: every piece moves once (no gather on one
    worker)."""
    n, row = shape[0], math.prod(shape[1:])
    rb = even_bounds(n, len(ws))
    targets = ws[: len(rb) - 1]
    req = collections.defaultdict(list)
    for r, wr in enumerate(targets):
        sl = (slice(rb[r], rb[r + 1]),)
        nbytes = (rb[r + 1] - rb[r]) * row * dt.itemsize
        for u, ku in zip(ws, keys):
            if u != wr:
                req[u].append((ku, sl, nbytes))
                ex.bytes_moved += nbytes
    handles = {w: iter(h) for w, h in ex.export(req).items()}
    out = []
    for r, wr in enumerate(targets):
        sl = (slice(rb[r], rb[r + 1]),)
        args = [Key(ku, sl) if u == wr else Transfer(next(handles[u])) for u, ku in zip(ws, keys)]
        k = ex.new_key()
        ex.submit(wr, "add_n", tuple(args), (k,), None, (label, r))
        out.append(k)
    for u, ku in zip(ws, keys):
        ex.free(u, [ku])
    bounds = [rb] + [(0, s) for s in shape[1:]]
    return Operand(Layout.from_bounds(shape, bounds, targets), dt, tuple(out))
