"""Sorting helpers of the worker kernels (:mod:`.sort`): torch's stable order by one sort of
packed uint64 keys (:func:`packed_sort`), and the plain value sort made bit-exact
(:func:`fix_ties`, :func:`reverse`).

A plain ``ndarray.sort`` (NumPy's quicksort) is the fastest sort of values but not stable,
and its vectorized kernels do not even keep the bits of values that compare equal yet differ
(``-0.0`` and ``0.0``; NaNs of other signs or payloads). Every other pair of equal values is
bit-identical, so a sort of the values alone is torch's stable sort once those two runs (the
zeros, the NaNs) are rewritten from the input in its order, which :func:`fix_ties` does.
"""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 16  # elements per pass of the key kernels: their temporaries stay in cache


def order_keys(xp, v, descending, out=None):
    """Order-preserving uint64 keys of ``v``: ascending keys give
    torch's order (NaN last, ``-0.0 == 0.0``), or its descending order (NaN first) with
    ``descending``. Chunk by chunk, so that no temporary is a fresh block of the input's
    size (a fresh block costs its page faults: more than the arithmetic here); ``out``: a
    uint64 block of ``v``'s length to write them to.

    Examples
    --------
    >>> k = order_keys(np, np.array([2.0, -0.0, float("nan"), -1.0, 0.0]), False)
    >>> np.argsort(k, kind="stable").tolist()
    [3, 1, 4, 0, 2]
    """
    k = xp.empty(v.size, dtype=xp.uint64) if out is None else out
    kind, bits = v.dtype.kind, 8 * v.dtype.itemsize
    for i in range(0, v.size, CHUNK):
        c, o = v[i : i + CHUNK], k[i : i + CHUNK]
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


def packed_sort(xp, v, descending, keys=None, out=None, positions=None):
    """``(v[perm], g[perm])`` for the stable sort permutation ``perm`` of ``v`` (torch's
    order) and the positions ``g`` of ``v``'s elements (``positions``, ascending; default
    ``0..n-1``), without a random gather: one sort of uint64 keys that pack the value's
    order key above its position, ``((key - min) >> s) << b | position`` with ``b`` bits
    for the positions, gives the positions in order, and a plain sort of the values (made
    bit-exact by :func:`fix_ties`) gives the values. When the keys' span needs more than
    ``64 - b`` bits, ``s`` low bits are dropped: equal values still sort by position, and
    the runs of equal truncated keys that hold different values (rare unless the values
    crowd within ``2^s`` ulps; the sorted values show them) are put in order by their full
    keys.

    ``keys`` (int64, ``v``'s length) receives the keys, then the sorted positions (returned
    as that block); ``out`` (``v``'s dtype and length) receives the sorted values; fresh
    blocks where not given. Nothing else of ``v``'s size is allocated (but in the crowded
    case).

    Examples
    --------
    >>> vals, perm = packed_sort(np, np.array([2.0, -0.0, float("nan"), 0.0]), False)
    >>> vals.tolist()[:3], perm.tolist()
    ([-0.0, 0.0, 2.0], [1, 3, 0, 2])
    >>> packed_sort(np, np.array([5, 3, 5]), True, positions=np.array([10, 20, 40]))[1]
    array([10, 40, 20])
    """
    n = v.size
    perm = xp.empty(n, dtype=xp.int64) if keys is None else keys
    out = xp.empty_like(v) if out is None else out
    g = positions
    out[...] = v
    if n < 2:
        perm[...] = 0 if g is None else g
        return out, perm
    k = order_keys(xp, v, descending, out=perm.view(xp.uint64))
    b = max(1, (n - 1 if g is None else int(g[-1])).bit_length())
    lo = k.min()
    s = max(0, int(k.max() - lo).bit_length() + b - 64)
    s_, b_, mask = np.uint64(s), np.uint64(b), np.uint64((1 << b) - 1)
    for i in range(0, n, CHUNK):
        o = k[i : i + CHUNK]
        o -= lo
        o >>= s_
        o <<= b_
        o |= (
            xp.arange(i, i + o.size, dtype=xp.uint64)
            if g is None
            else g[i : i + CHUNK].view(xp.uint64)
        )
    k.sort()
    out.sort()
    fix_ties(xp, out, [v], descending)
    bad = []  # neighbours with one truncated key and different values (s > 0 only)
    for i in range(0, n if s else 0, CHUNK):
        hi, val = k[i : i + CHUNK + 1] >> b_, out[i : i + CHUNK + 1]  # (and the next pair)
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
    if not bad:
        return out, perm
    if t.size > n // 4:  # crowded values: one stable sort of the full keys instead
        order = xp.argsort(order_keys(xp, v, descending), kind="stable")
        perm[...] = order if g is None else g[order]
        return out, perm
    pt = perm[t]  # the runs' positions; their values, found by position
    at = pt if g is None else xp.searchsorted(g, pt)
    fix = xp.lexsort((pt, order_keys(xp, v[at], descending), gid))  # run, key, position
    perm[t] = pt[fix]
    return out, perm


def stable_lines(xp, a, dim, descending):
    """Stable sort permutation of every line of ``a`` along ``dim`` (torch's order), by
    NumPy's stable argsort (a merge sort: several times slower than the packed sorts)."""
    if descending:  # the reverse of an ascending sort of the flipped block: ties keep order
        r = xp.flip(a, axis=dim)
        idx = xp.flip(xp.argsort(r, axis=dim, kind="stable"), axis=dim)
        return a.shape[dim] - 1 - idx
    return xp.argsort(a, axis=dim, kind="stable")


def packed_sort_lines(xp, a, descending, keys=None, out=None):
    """:func:`packed_sort` of every row of a C-contiguous 2-d block at once: the keys pack
    the column above the value's order key, one sort along the rows orders them all. A row
    whose truncated keys tie different values is sorted again by the stable argsort.
    ``keys``/``out``: blocks of ``a``'s shape (int64 / ``a``'s dtype) to use.

    Examples
    --------
    >>> vals, perm = packed_sort_lines(np, np.array([[2.0, 1.0, 2.0], [0.0, -1.0, 5.0]]), True)
    >>> vals.tolist(), perm.tolist()
    ([[2.0, 2.0, 1.0], [5.0, 0.0, -1.0]], [[0, 2, 1], [2, 0, 1]])
    """
    rows, n = a.shape
    perm = xp.empty(a.shape, dtype=xp.int64) if keys is None else keys
    out = xp.empty_like(a) if out is None else out
    if n < 2 or not rows:
        out[...] = a
        perm[...] = 0
        return out, perm
    flat = order_keys(xp, a.reshape(-1), descending, out=perm.reshape(-1).view(xp.uint64))
    b = (n - 1).bit_length()
    lo = flat.min()
    s = max(0, int(flat.max() - lo).bit_length() + b - 64)
    s_, b_, mask = np.uint64(s), np.uint64(b), np.uint64((1 << b) - 1)
    k, cols, step = flat.reshape(rows, n), xp.arange(n, dtype=xp.uint64), max(1, CHUNK // n)
    for r in range(0, rows, step):
        o = k[r : r + step]
        o -= lo
        o >>= s_
        o <<= b_
        o |= cols
    k.sort(axis=1)
    bad, src = [], a.reshape(-1)
    for r in range(0, rows, step):
        o = k[r : r + step]
        pos = (o & mask).view(xp.int64)
        pos += xp.arange(r * n, (r + o.shape[0]) * n, n, dtype=xp.int64)[:, None]
        val = xp.take(src, pos)  # (a flat gather: take_along_axis is slower)
        out[r : r + step] = val
        if s:
            hi = o >> b_
            d = (hi[:, 1:] == hi[:, :-1]) & (val[:, 1:] != val[:, :-1])
            if a.dtype.kind == "f":
                d &= ~(xp.isnan(val[:, 1:]) & xp.isnan(val[:, :-1]))
            bad.append(xp.flatnonzero(d.any(axis=1)) + r)
    k &= mask
    bad = xp.concatenate(bad) if bad else xp.zeros(0, dtype=xp.int64)
    if bad.size:  # (rows of values crowded within 2^s ulps)
        sub = a[bad]
        idx = stable_lines(xp, sub, 1, descending)
        perm[bad] = idx
        out[bad] = xp.take_along_axis(sub, idx, axis=1)
    return out, perm


def gather(xp, src, idx, out):
    """``out[:] = src[idx]`` chunk by chunk; ``out`` may be ``idx`` itself (each chunk of
    positions is read before it is overwritten)."""
    for i in range(0, idx.size, CHUNK):
        out[i : i + CHUNK] = xp.take(src, idx[i : i + CHUNK])
    return out


def reverse(xp, v):
    """Reverse 1-d ``v`` in place, chunk pairs swapped through a small temporary (``v[::-1]``
    into ``v`` would copy the whole block)."""
    n = v.size
    h = n // 2
    for i in range(0, h, CHUNK):
        j = min(h, i + CHUNK)
        t = v[i:j].copy()
        v[i:j] = v[n - j : n - i][::-1]
        v[n - j : n - i] = t[::-1]
    return v


def _mixed_zeros(xp, zeros):
    """Whether zeros (in input order) hold both signs."""
    s = xp.signbit(zeros)
    return zeros.size > 1 and bool(s.any()) and not bool(s.all())


def fix_ties(xp, v, pieces, descending):
    """Make a plain (unstable) sort of floats bit-identical to torch's stable sort.

    ``v`` holds the values of ``pieces`` (arrays in input order) sorted ascending (NaN
    last); with ``descending`` it is reversed here. The zeros and the NaNs, the only equal
    values whose bits may differ, are rewritten from the input, in its order, which is
    where a stable sort leaves ties in either direction: NumPy's vectorized sort may turn
    ``-0.0`` into ``0.0`` or back where both occur (it orders by min and max), and writes
    its own NaN back, not the input's.

    Examples
    --------
    >>> a = np.array([0.0, 1.0, -0.0, float("nan"), 0.0])
    >>> v = np.sort(a)
    >>> np.signbit(fix_ties(np, v, [a], False)).tolist()
    [False, True, False, False, False]
    """
    n = v.size
    if v.dtype.kind != "f" or n < 1:
        return reverse(xp, v) if descending else v
    nl = int(xp.searchsorted(v, v.dtype.type("nan")))
    zero = v.dtype.type(0)
    zl, zh = int(xp.searchsorted(v[:nl], zero)), int(xp.searchsorted(v[:nl], zero, "right"))
    todo = [(a, b, kind) for a, b, kind in ((zl, zh, "zero"), (nl, n, "nan")) if a < b]
    if descending:
        reverse(xp, v)
        todo = [(n - b, n - a, kind) for a, b, kind in todo]
    for a, b, kind in todo:
        pick = (lambda p: p[p == 0]) if kind == "zero" else (lambda p: p[xp.isnan(p)])
        got = [pick(p.reshape(-1)) for p in pieces]
        v[a:b] = xp.concatenate(got) if len(got) > 1 else got[0]
    return v


def tie_state(xp, a):
    """``(mixed, nan)`` of float block ``a``: whether a plain sort of its lines may differ
    from the stable one in more than the NaNs' bits (zeros of both signs occur, or NaNs of
    different bits), and one of its NaNs (length 0 or 1; :func:`fix_ties`).

    Examples
    --------
    >>> tie_state(np, np.array([[0.0, 1.0], [-0.0, 2.0]]))[0], tie_state(np, np.ones(3))[0]
    (True, False)
    """
    if a.dtype.kind != "f":
        return False, a[:0].reshape(-1)
    nans = a[xp.isnan(a)]
    u = nans.view(f"<u{a.dtype.itemsize}")
    mixed = _mixed_zeros(xp, a[a == 0]) or bool((u != u[:1]).any())
    return mixed, nans[:1]
