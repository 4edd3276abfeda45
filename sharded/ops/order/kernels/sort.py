"""Worker kernels of ``sort``/``argsort``/``msort`` (:mod:`..prims.sort`): the sample sort's
sample, split, finish and settle steps and the local sort of whole lines.

Every block of the data's size comes from the worker's pool of freed blocks where one fits
(the kernels are ``pooled``): a fresh block costs a page fault per page, which here costs
more than the sort itself (about 0.1 s for the 32 MB of 4M float64). The sizes repeat from one
sort to the next: a source's groups and a settled shard have the input shard's size, a
destination's run the shard's size plus a fixed slack (:func:`run_capacity`).

A destination of the values-only sort sorts its values in place (NumPy's quicksort) and
rewrites the ties whose bits differ in input order (:func:`.packed.fix_ties`); with indices
it also sorts uint64 keys that pack an order-preserving value key above the global position
(:func:`.packed.packed_sort`): the positions come out in order, with no random gather, for
about twice a sort of the values. Complex ``value + 1j * index`` keys, which the splitters
use, sort about twice as slowly.
"""

from __future__ import annotations

import numpy as np

from ....core.registry import kernel
from ....core.registry import pooled_empty as block
from .packed import (
    CHUNK,
    fix_ties,
    order_keys,
    packed_sort,
    packed_sort_lines,
    stable_lines,
    tie_state,
)

__all__ = [
    "order_keys", "packed_sort", "run_capacity", "sort_sample", "sort_split", "sort_positions",
    "sort_finish", "sort_settle", "sort_local", "sort_values_local",
]  # fmt: skip

SPLIT_CHUNK = 1 << 18  # elements a source groups per pass: its temporaries stay small


def run_capacity(n: int) -> int:
    """Elements of the block a destination sorts its run in when the settled shard holds
    ``n``: the run's size varies a little with the sample (about 1 %), the block's does not,
    so the pool can hand the same block to the next sort.

    Examples
    --------
    >>> run_capacity(4_000_000)
    4251024
    """
    return n + n // 16 + 1024


def _records(dtype) -> bool:
    """64-bit integers are not exact in float64: their keys are (value, index) records."""
    return np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize == 8


def _keys_at(xp, a, g, sign):
    """Sort keys of values ``a`` at global positions ``g``: ``value + 1j * sign * index``
    (one lexicographic order gives values, then positions: stability, unique keys), or a
    (value, index) record for 64-bit integers. ``sign=-1`` makes the index descend among
    equal values (a descending sort is the reverse of that order)."""
    if _records(a.dtype):
        k = xp.empty(a.size, dtype=[("v", a.dtype.str), ("g", "<i8")])
        k["v"], k["g"] = a, g * sign
        return k
    k = xp.empty(a.size, dtype=xp.complex128)
    k.real = a
    k.imag = g
    if sign < 0:
        xp.negative(k.imag, out=k.imag)
    return k


@kernel
def sort_sample(xp, a, goff, sign, nsample):
    """Sorted keys of a random sample of a 1-d block (the driver picks splitters from them);
    the sample is seeded by the block's position, so a sort is reproducible."""
    a = a.reshape(-1)
    m = min(nsample, a.size)
    pos = np.sort(np.random.default_rng(goff).integers(0, a.size, m)) if m else np.arange(0)
    pos = xp.asarray(pos, dtype=xp.int64)
    return xp.sort(_keys_at(xp, a[pos], pos + goff, sign))


def _buckets(xp, a, split, goff, sign):
    """Destination of every element: the number of splitter keys <= its key. Compared on
    values first (a pass per splitter, cheaper than ``searchsorted`` for a few of them);
    only the elements equal to a splitter's value build their keys to break the tie."""
    sv = split["v"] if split.dtype.names else split.real
    if sv.size > 16:
        lo = xp.searchsorted(sv, a, side="left")
        top = xp.concatenate([sv, sv[-1:]])[lo]
        hit = top == a
        if a.dtype.kind in "fc":
            hit |= xp.isnan(top) & xp.isnan(a)
    else:
        lo = xp.zeros(a.shape, dtype=xp.uint8)
        hit = xp.zeros(a.shape, dtype=bool)
        for s in sv.tolist():
            if s != s:  # a NaN splitter: NaN ties with it, nothing is above it
                hit |= xp.isnan(a)
                continue
            lo += ~(a <= s)  # NaN counts as above every number, as it sorts
            hit |= a == s
    t = xp.flatnonzero(hit)
    if t.size:
        lo[t] = xp.searchsorted(split, _keys_at(xp, a[t], t + goff, sign), side="right")
    return lo


def _groups(xp, lo, p):
    """``(destination, positions)`` of a chunk's elements, positions ascending."""
    if p <= 8:  # a compare and a nonzero per destination: cheaper than sorting the ids
        return [(b, xp.flatnonzero(lo == b)) for b in range(p)]
    small = xp.uint8 if p <= 256 else xp.uint16 if p <= 65536 else xp.int64
    order = xp.argsort(lo.astype(small), kind="stable")  # a radix sort of the small ids
    ends = xp.cumsum(xp.bincount(lo, minlength=p)).tolist()
    return [(b, order[(ends[b - 1] if b else 0) : ends[b]]) for b in range(p)]


def _take(xp, src, idx, out):
    if xp is np:  # (mode="raise" would buffer the output)
        np.take(src, idx, out=out, mode="clip")
    else:
        out[...] = src[idx]


def _code_dtype(xp, p):
    return xp.uint8 if p <= 256 else xp.uint16 if p <= 65536 else xp.int64


@kernel(pooled=True)
def sort_split(xp, a, goff, sign, split, p, index, alloc=None):
    """A 1-d block grouped by destination (the range of sort keys each will hold), in
    position order inside a group, and the count per destination (read by the driver).
    ``index``: with the groups of their global positions (``True``), or with every
    element's destination in input order (``"codes"``: an eighth of the positions' bytes,
    from which :func:`sort_positions` makes them), else values only. Chunk by chunk: no
    temporary of the block's size."""
    a = a.reshape(-1)
    n = a.size
    los = [_buckets(xp, a[i : i + SPLIT_CHUNK], split, goff + i, sign)
           for i in range(0, n, SPLIT_CHUNK)]  # fmt: skip
    vals = block(xp, alloc, (n,), a.dtype)
    if index == "codes":
        codes = block(xp, alloc, (n,), _code_dtype(xp, p))
        for c, lo in enumerate(los):
            codes[c * SPLIT_CHUNK : (c + 1) * SPLIT_CHUNK] = lo
        counts = _place(xp, los, p, a, vals)
        return vals, codes, xp.asarray(counts)
    pos = block(xp, alloc, (n,), xp.int64) if index else None
    counts = _place(xp, los, p, a, vals, pos, goff)
    return (vals, pos, xp.asarray(counts)) if index else (vals, xp.asarray(counts))


def _place(xp, los, p, a, vals, pos=None, goff=0):
    """Write every chunk's elements of ``a`` (their destinations ``los``) into their groups
    of ``vals`` (and their global positions into ``pos``); returns the group sizes."""
    counts = np.zeros(p, dtype=np.int64)
    for lo in los:  # (a compare and a count per destination: bincount is slower for a few)
        if p <= 8:
            counts += [int(xp.count_nonzero(lo == b)) for b in range(p)]
        else:
            counts += xp.bincount(lo, minlength=p).tolist()
    cur = np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()
    for c, lo in enumerate(los):
        i = c * SPLIT_CHUNK
        for b, idx in _groups(xp, lo, p):
            m = int(idx.size)
            if not m:
                continue
            seg = slice(cur[b], cur[b] + m)
            if a is not None:
                _take(xp, a[i : i + SPLIT_CHUNK], idx, vals[seg])
            if pos is not None:
                xp.add(idx, goff + i, out=pos[seg])
            cur[b] += m
    return counts


@kernel(pooled=True)
def sort_positions(xp, codes, goff, p, alloc=None):
    """The position groups :func:`sort_split` would have made with ``index=True``, from its
    ``"codes"`` (every element's destination, in input order)."""
    n = codes.size
    los = [codes[i : i + SPLIT_CHUNK] for i in range(0, n, SPLIT_CHUNK)]
    pos = block(xp, alloc, (n,), xp.int64)
    _place(xp, los, p, None, None, pos, goff)
    return pos


@kernel(pooled=True)
def sort_finish(xp, *pieces, dtype, descending, index, cap=0, alloc=None):
    """This destination's sorted run from its pieces (in source order, each in position
    order), at the start of a block of ``cap`` elements (at least the run's; the driver reads
    the run's slice). Values only: the concatenated values sorted in place, ties whose bits
    differ rewritten in input order. With ``index`` (a piece of values, then of their global
    positions, and so on): a :func:`packed_sort` of the values and their positions; returns
    ``(values, indices, scratch, scratch)``: the two blocks the pieces were gathered in, for
    the driver to free (back to the pool: a block dropped inside a kernel goes back to the
    system)."""
    vals = pieces[0::2] if index else pieces
    n = sum(int(p.size) for p in vals)
    cap = max(cap, n)

    def concat(parts, dt):
        out = block(xp, alloc, (cap,), dt)
        o = 0
        for p in parts:
            out[o : o + p.size] = p.reshape(-1)
            o += p.size
        return out

    if not index:
        buf = concat(vals, dtype)
        buf[:n].sort()
        fix_ties(xp, buf[:n], vals, descending)
        return buf
    v, g = concat(vals, dtype), concat(pieces[1::2], xp.int64)
    out, perm = block(xp, alloc, (cap,), dtype), block(xp, alloc, (cap,), xp.int64)
    packed_sort(xp, v[:n], descending, keys=perm[:n], out=out[:n], positions=g[:n])
    return out, perm, v, g


@kernel(pooled=True)
def sort_settle(xp, *parts, n, dtype, alloc=None):
    """A settled shard of ``n`` elements: ``parts`` (slices of the destinations' runs, in
    order) copied into one block."""
    out = block(xp, alloc, (n,), dtype)
    o = 0
    for p in parts:
        out[o : o + p.size] = p
        o += p.size
    return out


@kernel(pooled=True)
def sort_local(xp, a, dim, descending, alloc=None):
    """Stable sort of every line of a block along ``dim`` (which the block holds whole): by
    packed uint64 keys (:func:`.packed.packed_sort`, per line at once for a block of many),
    or for a small block by the stable argsort."""
    if a.ndim == 0:
        return xp.array(a, copy=True), xp.zeros((), xp.int64)
    if a.size < CHUNK or a.shape[dim] < 2:
        idx = stable_lines(xp, a, dim, descending)
        return xp.take_along_axis(a, idx, axis=dim), idx.astype(xp.int64, copy=False)
    last = dim in (-1, a.ndim - 1)
    out, perm = block(xp, alloc, a.shape, a.dtype), block(xp, alloc, a.shape, xp.int64)
    if a.ndim == 1:
        return packed_sort(xp, a, descending, keys=perm, out=out)
    m = a if last else xp.moveaxis(a, dim, -1)
    lines = xp.ascontiguousarray(m).reshape(-1, m.shape[-1])
    if last:  # the results' blocks, seen as lines
        packed_sort_lines(
            xp, lines, descending, perm.reshape(lines.shape), out.reshape(lines.shape)
        )
        return out, perm
    v, i = packed_sort_lines(xp, lines, descending)
    out[...] = xp.moveaxis(v.reshape(m.shape), -1, dim)
    perm[...] = xp.moveaxis(i.reshape(m.shape), -1, dim)
    return out, perm


@kernel(pooled=True)
def sort_values_local(xp, a, dim, descending, alloc=None):
    """Every line of a block sorted along ``dim`` (held whole), values only: a plain sort in
    a copy; a float block whose equal values differ in bits sorts its lines stably (one
    line: the plain sort with :func:`.packed.fix_ties`)."""
    if a.ndim == 0:
        return xp.array(a, copy=True)
    out = block(xp, alloc, a.shape, a.dtype)
    if a.ndim == 1:
        out[...] = a
        out.sort()
        return fix_ties(xp, out, [a], descending)
    mixed, nan = tie_state(xp, a)
    if mixed:
        out[...] = xp.take_along_axis(a, stable_lines(xp, a, dim, descending), axis=dim)
        return out
    out[...] = a
    out.sort(axis=dim)
    if descending:
        out[...] = xp.flip(out, axis=dim)
    if nan.size:  # the input's own NaN (the sort may write another)
        out[xp.isnan(out)] = nan
    return out
