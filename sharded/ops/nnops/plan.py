"""Planning shared by the convolution and pooling primitives (driver code): output sizes of
pooling windows, the layout rules of ops that work on (N, C, H, W) blocks, the halo plans of
sliding windows over spatially split inputs and the submission of one command per shard (the
worker side is :mod:`.kernels`).

Halos: a sliding-window op over an input split along H or W keeps those cuts. Each output
shard takes the windows centred from its input shard's first row on (:meth:`Win.cut`), and
its worker reads the input rows those windows span (:meth:`Win.span`): its own block plus a
few rows of its neighbours (the halo), fetched worker to worker as separate pieces
(:func:`gather_pieces`, the region exchange :mod:`~sharded.ops.order.prims.diff` uses) and
laid into one padded block by the kernel. A gradient goes the other way: each input shard
reads the output rows whose windows reach into it (:meth:`Win.touching`).
"""

from __future__ import annotations

from typing import NamedTuple

from ...core.dataflow import even_bounds, gather_regions
from ...layout import Layout


def pool_out(n, k, s, p, d, ceil_mode):
    """torch's ``pooling_output_shape``: with ``ceil_mode`` the last window may hang over the
    right edge, but must start inside the input or its left padding."""
    num = n + 2 * p - d * (k - 1) - 1 + ((s - 1) if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


class Win(NamedTuple):
    """The windows along one spatial dim: input length ``n``, kernel ``k``, stride ``s``,
    dilation ``d``, zero rows ``before``/``after`` the input (``after`` includes ceil_mode's
    overhang) and ``out`` windows; window ``i`` starts at input row ``i*s - before``.

    Examples
    --------
    >>> w = Win(n=8, k=3, s=1, d=1, before=1, after=1, out=8)  # a 'same' 3-tap window
    >>> w.cut(4), w.span(0, 4), w.touching(4, 8)
    (4, (0, 5, 1, 0), (3, 8))
    """

    n: int
    k: int
    s: int
    d: int
    before: int
    after: int
    out: int

    @property
    def reach(self) -> int:
        """Rows one window spans."""
        return self.d * (self.k - 1) + 1

    def cut(self, b: int) -> int:
        """The output row matching input cut ``b``: the first window centred at or after
        ``b`` (the same row for a 'same' convolution; the nearest one otherwise)."""
        num = 2 * (b + self.before) - (self.reach - 1)  # twice the centre's offset from b
        return min(max(-(-num // (2 * self.s)), 0), self.out)

    def span(self, o0: int, o1: int):
        """``(lo, hi, top, bottom)``: the input rows ``[lo, hi)`` windows ``[o0, o1)`` read
        and the padding rows before and after them (``o1 > o0``)."""
        start = o0 * self.s - self.before
        end = (o1 - 1) * self.s - self.before + self.reach
        lo, hi = min(max(start, 0), self.n), min(max(end, 0), self.n)
        if hi <= lo:  # the windows read padding only
            return lo, lo, end - start, 0
        return lo, hi, lo - start, end - hi

    def touching(self, a: int, b: int):
        """``(i0, i1)``: the windows that reach into input rows ``[a, b)``."""
        if b <= a:
            return 0, 0
        i0 = max(0, -(-(a + self.before - self.reach + 1) // self.s))
        i1 = min(self.out, (b - 1 + self.before) // self.s + 1)
        return i0, max(i0, i1)


def batch_layout(lay: Layout, keep=(0,)) -> Layout | None:
    """``None`` when ``lay`` is replicated or split only along the dims in ``keep`` (the work
    is then local); else the layout to reshard to: split along the batch dim over as many
    shards as before (one when N is 1), every other dim whole."""
    if lay.is_replicated or set(lay.split_dims) <= set(keep):
        return None
    n = lay.shape[0]
    b0 = even_bounds(n, lay.num_shards)
    bounds = [b0] + [(0, s) for s in lay.shape[1:]]
    return Layout.from_bounds(lay.shape, bounds, lay.workers[: len(b0) - 1])


def window_layout(lay: Layout, wins, keep=(0,)) -> Layout | None:
    """``None`` when a sliding-window op runs on ``lay`` where it is: split along the dims
    in ``keep`` and along H/W (each shard reads its halo from its neighbours); else
    :func:`batch_layout`'s layout. That is for a split along the channels of a
    convolution, and for a window longer than a shard of H or W where the batch has as
    many images as shards (a halo would then span several shards and read every row
    many times, while a batch split keeps the shards and needs no halo; with fewer
    images a batch split would leave workers idle, so the wide halos stay)."""
    if lay.is_replicated:
        return None
    for d in lay.split_dims:
        if d in keep:
            continue
        if d < 2:
            return batch_layout(lay, keep)
        short = any(0 < c < wins[d - 2].reach for c in lay.chunk_sizes(d))
        if short and lay.shape[0] >= lay.num_shards:
            return batch_layout(lay, keep)
    return None


def out_layout(lay: Layout, shape, keep=(0,), wins=None) -> Layout:
    """The layout of a result of ``shape`` computed shard by shard from an input laid out as
    ``lay``: the dims in ``keep`` keep their cuts, H and W (with ``wins``) their cuts mapped
    by :meth:`Win.cut`, the others are whole."""
    if lay.is_replicated:
        return Layout.from_bounds(shape, [(0, s) for s in shape], lay.workers, replicated=True)
    bounds = [lay.bounds[d] if d in keep else (0, s) for d, s in enumerate(shape)]
    if wins is not None:
        for a, win in enumerate(wins):
            b = lay.bounds[2 + a]
            bounds[2 + a] = (0,) + tuple(win.cut(c) for c in b[1:-1]) + (win.out,)
    return Layout.from_bounds(shape, bounds, lay.workers)


def window_regions(lay: Layout, out: Layout, wins, whole_channels):
    """Per shard of ``out`` (made from ``lay`` by :func:`out_layout`): ``(worker, region,
    pads)``, the input region its windows read (all channels with ``whole_channels``, else
    its own) and the padding around it, ``((top, bottom), (left, right))``."""
    res = []
    for (w, offs, shp), (_, oo, osh) in zip(lay.shards(), out.shards()):
        reg = [(offs[0], offs[0] + shp[0])]
        reg.append((0, lay.shape[1]) if whole_channels else (offs[1], offs[1] + shp[1]))
        pads = []
        for a, win in enumerate(wins):
            o0, o1 = oo[2 + a], oo[2 + a] + osh[2 + a]
            lo, hi, top, bottom = win.span(o0, o1) if o1 > o0 else (0, 0, 0, 0)
            reg.append((lo, hi))
            pads.append((top, bottom))
        res.append((w, reg, tuple(pads)))
    return res


def touching_regions(lay: Layout, wins):
    """Per shard of ``lay`` (an input's layout): the windows ``((i0, i1), (j0, j1))`` that
    reach into its block, and the input row and column where window ``(i0, j0)`` starts."""
    res = []
    for _, offs, shp in lay.shards():
        spans = tuple(w.touching(offs[2 + a], offs[2 + a] + shp[2 + a]) for a, w in enumerate(wins))
        org = tuple(sp[0] * w.s - w.before for sp, w in zip(spans, wins))
        res.append((spans, org))
    return res


def gather_pieces(ex, t, wanted):
    """``t``'s region ``wanted[i] = (worker, region)`` on that worker, as the pieces the
    shards of ``t`` hold (each a view where it is local, else one transfer; no assembly
    copy): returns ``(args, places, temps)``, ``args[i]`` the pieces' command arguments and
    ``places[i]`` where each lands in the region (``((lo, hi), ...)`` per dim)."""
    lay = t._layout
    flat, places = [], []
    for w, reg in wanted:
        here = []
        for _, _, dst in lay.overlaps(reg):
            sub = [(lo + d.start, lo + d.stop) for (lo, _), d in zip(reg, dst)]
            flat.append((w, sub))
            here.append(tuple((d.start, d.stop) for d in dst))
        places.append(tuple(here))
    got, temps = gather_regions(ex, t, flat) if flat else ([], [])
    args, i = [], 0
    for pl in places:
        args.append(tuple(got[i : i + len(pl)]))
        i += len(pl)
    return args, places, temps


def submit_each(ex, name, lay: Layout, args, params):
    """One ``name`` command per shard of ``lay`` with its own ``args[s]`` and ``params[s]``,
    making shard ``s`` of the result; returns the keys."""
    keys = []
    for s, (w, _, _) in enumerate(lay.shards()):
        k = ex.new_key()
        ex.submit(w, name, tuple(args[s]), (k,), params[s], (name, s))
        keys.append(k)
    return keys


def submit_local(ex, name, lay: Layout, args, params):
    """One ``name`` command per shard of ``lay`` (``args[s]``: that shard's arguments) making
    the same shard of the result; returns the keys."""
    return submit_each(ex, name, lay, args, [params] * len(lay.shards()))
