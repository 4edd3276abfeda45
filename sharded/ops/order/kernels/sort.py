"""Worker kernels of ``sort``/``argsort``/``msort`` (:mod:`..prims.sort`): the sample sort's
sample, split and finish steps and the local sort of whole lines.

A destination of the sample sort orders its values and their global positions with one
sort of uint64 keys (:func:`packed_sort`: an order-preserving value key above the
position), about as fast as a sort of the values alone; complex ``value + 1j * index``
keys, which the splitters still use, sort about twice as slowly.
"""

from __future__ import annotations

import numpy as np

from ....core.registry import kernel


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


@kernel
def sort_split(xp, a, goff, sign, split, p, index):
    """A 1-d block grouped by destination (the range of sort keys each will hold), in
    position order inside a group, and the count per destination (read by the driver).
    ``index``: the groups are values and their global positions, else values only."""
    a = a.reshape(-1)
    lo = _buckets(xp, a, split, goff, sign)
    counts = xp.bincount(lo, minlength=p).astype(xp.int64)
    out = (xp.empty_like(a),) + ((xp.empty(a.size, dtype=xp.int64),) if index else ())
    if p > 8:  # a radix sort of the small group ids, then one gather
        small = xp.uint8 if p <= 256 else xp.uint16 if p <= 65536 else xp.int64
        order = xp.argsort(lo.astype(small), kind="stable")
        xp.take(a, order, out=out[0])
        if index:
            xp.add(order, goff, out=out[1])
    else:  # a compress per destination: cheaper than sorting the ids for a few of them
        off = 0
        for b, c in enumerate(counts.tolist()):
            if c:
                m = lo == b
                seg = slice(off, off + c)
                out[0][seg] = a[m]
                if index:
                    out[1][seg] = xp.flatnonzero(m)
                    out[1][seg] += goff
                off += c
    return (*out, counts)


_CHUNK = 1 << 16  # elements per pass of the key kernels: their temporaries stay in cache


def order_keys(xp, v, descending):
    """Order-preserving uint64 keys of ``v``: ascending keys give
    torch's order (NaN last, ``-0.0 == 0.0``), or its descending order (NaN first) with
    ``descending``. Chunk by chunk, so that no temporary is a fresh block of the input's
    size (a fresh block costs its page faults: more than the arithmetic here).

    Examples
    --------
    >>> k = order_keys(np, np.array([2.0, -0.0, float("nan"), -1.0, 0.0]), False)
    >>> np.argsort(k, kind="stable").tolist()
    [3, 1, 4, 0, 2]
    """
    k = xp.empty(v.size, dtype=xp.uint64)
    kind, bits = v.dtype.kind, 8 * v.dtype.itemsize
    for i in range(0, v.size, _CHUNK):
        c, o = v[i : i + _CHUNK], k[i : i + _CHUNK]
        if kind == "f":
            w = c + c.dtype.type(0)  # -0.0 + 0.0 is +0.0: one key for both zeros
            o[...] = w.view(f"<u{c.dtype.itemsize}")
            m = o >> np.uint64(bits - 1)  # 1 for negatives: flip all bits, else the sign bit
            xp.negative(m, out=m)
            m >>= np.uint64(64 - bits)
            m |= np.uint64(1 << (bits - 1))
            o ^= m
            o[xp.isnan(w)] = np.uint64((1 << bits) - 1)
        elif kind == "i":
            o[...] = c.astype(xp.int64).view(xp.uint64)
            o ^= np.uint64(1 << 63)
        else:  # bool, unsigned
            o[...] = c
        if descending:
            xp.invert(o, out=o)
    return k


def packed_sort(xp, v, descending):
    """``(v[perm], perm)`` for the stable sort permutation ``perm`` of ``v`` (torch's
    order), by one sort of uint64 keys that pack the value's order key above its position:
    ``((key - min) >> s) << b | position``, ``b`` bits for the position. When the keys'
    span needs more than ``64 - b`` bits, ``s`` low bits are dropped: equal values still
    sort by position, and the runs of equal truncated keys that hold different values
    (rare unless the values crowd within ``2^s`` ulps) are put in order by their full keys.
    Three blocks of the input's length are allocated: the keys (then ``perm``) and ``v[perm]``.
    """
    n = v.size
    if n < 2:
        return xp.array(v, copy=True), xp.zeros(n, dtype=xp.int64)
    k = order_keys(xp, v, descending)
    b = (n - 1).bit_length()
    lo = k.min()
    s = max(0, int(k.max() - lo).bit_length() + b - 64)
    s_, b_, mask = np.uint64(s), np.uint64(b), np.uint64((1 << b) - 1)
    for i in range(0, n, _CHUNK):
        o = k[i : i + _CHUNK]
        o -= lo
        o >>= s_
        o <<= b_
        o |= xp.arange(i, i + o.size, dtype=xp.uint64)
    k.sort()
    out = xp.empty_like(v)
    bad = []  # neighbours with one truncated key and different values (s > 0 only)
    for i in range(0, n, _CHUNK):
        o = k[i : i + _CHUNK + 1]  # one more: the pair across the chunk's end
        pos = (o & mask).view(xp.int64)
        val = xp.take(v, pos)
        out[i : i + _CHUNK] = val[:_CHUNK]
        if s:
            hi = o >> b_
            d = (hi[1:] == hi[:-1]) & (val[1:] != val[:-1])
            if v.dtype.kind == "f":  # NaNs share one key: in position order already
                d &= ~(xp.isnan(val[1:]) & xp.isnan(val[:-1]))
            if d.any():
                bad.append(xp.flatnonzero(d) + i)
    if bad:  # the runs of those truncated keys: k is sorted, so two searches find each
        h = xp.unique(k[xp.concatenate(bad)] >> b_)
        a = xp.searchsorted(k, h << b_)
        e = xp.searchsorted(k, (h << b_) | mask, side="right")
        gid = xp.repeat(xp.arange(h.size), e - a)  # each member's run
        t = xp.arange(gid.size) - xp.repeat(xp.cumsum(e - a) - (e - a) - a, e - a)
    k &= mask
    perm = k.view(xp.int64)
    if not bad:
        return out, perm
    if t.size > n // 4:  # crowded values: one stable sort of the full keys instead
        perm = xp.argsort(order_keys(xp, v, descending), kind="stable").astype(xp.int64)
        return xp.take(v, perm), perm
    pt = perm[t]
    fix = xp.lexsort((pt, order_keys(xp, v[pt], descending), gid))  # run, key, position
    perm[t] = pt[fix]
    out[t] = v[perm[t]]
    return out, perm


@kernel
def sort_finish(xp, *pieces, dtype, descending, index):
    """This destination's sorted run from its pieces (in source order, each in position
    order): a sort of the concatenated values (values only), or with ``index`` (a piece of
    values, then of their global positions, and so on) a :func:`packed_sort` of the values,
    whose position order is the global index order, and a gather of the positions."""
    if not pieces:
        v = xp.empty(0, dtype=dtype)
        return (v, xp.empty(0, dtype=xp.int64)) if index else v
    if index:
        v = xp.concatenate(pieces[0::2]) if len(pieces) > 2 else pieces[0]
        g = xp.concatenate(pieces[1::2]) if len(pieces) > 2 else pieces[1]
        out, perm = packed_sort(xp, v, descending)
        return out, xp.take(g, perm)
    k = xp.concatenate(pieces) if len(pieces) > 1 else xp.array(pieces[0], copy=True)
    k.sort()
    return xp.ascontiguousarray(k[::-1]) if descending else k


@kernel
def sort_local(xp, a, dim, descending):
    """Stable sort of every line of a block along ``dim`` (which the block holds whole)."""
    if a.ndim == 0:
        return xp.array(a, copy=True), xp.zeros((), xp.int64)
    if a.ndim == 1 and a.size >= _CHUNK:  # one long line: a uint64 sort, not a stable argsort
        return packed_sort(xp, a, descending)
    if descending:  # the reverse of an ascending sort of the flipped block: ties keep order
        r = xp.flip(a, axis=dim)
        idx = xp.flip(xp.argsort(r, axis=dim, kind="stable"), axis=dim)
        idx = a.shape[dim] - 1 - idx
    else:
        idx = xp.argsort(a, axis=dim, kind="stable")
    return xp.take_along_axis(a, idx, axis=dim), idx.astype(xp.int64)
