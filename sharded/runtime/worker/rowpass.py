"""Row-streamed passes: ``X.T @ f(X @ w)`` in one pass over a tall block ``X``.

The gradient of a generalized linear model (logistic regression's ``X.T @ (sigmoid(X @ w) -
y)``, least squares' ``X.T @ (X @ w - y)``) reads ``X`` twice: once in ``X @ w`` and once in
``X.T @ r``. ``X`` is far larger than the cache (1M x 32 float64 is 256 MB) and both products
are matrix-vector products, so each is bound by memory bandwidth: the two passes are the
iteration's cost, the elementwise chain between them is small. Evaluated a row block at a
time (about :data:`BLOCK_BYTES` of ``X``), the block read by ``X[b] @ w`` is still in cache
when ``X[b].T @ r[b]`` reads it again: one pass over memory instead of two (logistic
regression's iteration, 1M x 32 float64 on 1 worker x 2 threads: 13.5 ms, against 20 ms for
NumPy's two passes and 19 ms for sharded's before).

A worker recognizes the pattern in its batch: a run of *heads* (``matmul`` of a stored 2-D
block ``X`` of at least :data:`MIN_ROWS` rows by a small whole operand ``w``), then the
elementwise chain (fusable kernels, as :mod:`.fusion` fuses, reached through the batch's
layout commands up to their syncs), the transposes of ``X`` (``permute`` views) and the
*tails* (``matmul`` or ``matmul_acc`` of ``X``'s transpose by a value the chain made from that
shard's head): one pass per shard, the shards on the worker's kernel pool. A value of the
pass that the batch frees before the end of the pass (the head's product, the chain's
temporaries) lives only a block at a time; the others are written whole, as unfused.

Anything else in between (another kind of command, a reduction, an operand of another
shape, a missing or poisoned block, a kernel that raises) leaves the batch to the usual
path, with the store untouched. Results: the head's rows and the chain are computed by the
same kernels on row blocks (a row's dot product is the same); the tail sums its row blocks'
partial products, so it differs from one product over all rows in rounding only, as a
product with another BLAS thread count does. ``st.init(fusion=False)`` turns it off with
fusion.

Examples
--------
>>> import numpy as np, sharded as st
>>> _ = st.init(executor="local", num_workers=1)
>>> X = st.from_numpy(np.ones((4, 3))); w = st.ones(3, dtype=st.float64)
>>> (X.T @ (X @ w - 1.0)).tolist()
[8.0, 8.0, 8.0]
>>> st.shutdown()
"""

from __future__ import annotations

import numpy as np

from ..commands import (
    Export,
    Free,
    Group,
    GroupFree,
    Kernel,
    Key,
    Keys,
    LayoutSync,
    Post,
    Ref,
    Tree,
)
from . import parallel

# bytes of X per block: two lanes' blocks stay in the shared L3 for their second read, and
# each block costs ~10 kernel calls of interpreter time, which the lanes share through one
# GIL (logistic regression, 1M x 32 on 1 worker x 2 threads: 0.26 s at 512 KiB, 0.16 s at
# 2 MiB, 0.14 s at 4 MiB, 0.15 s at 8 and 16 MiB)
BLOCK_BYTES = 1 << 22
MIN_ROWS = 1 << 14  # a shorter X is cheap to read twice (it may fit in cache whole)
MAX_W = 1 << 12  # elements of the small operand w (a vector or a few columns)
MAX_SCAN = 256  # commands looked at for the pattern before giving up


class _Shard:
    """One shard's pass: its block ``x``, its commands in batch order (``steps``: ``(kind,
    cmd)``, kind ``"head"``, ``"ew"`` (elementwise), ``"view"`` (a transpose of ``x``) or
    ``"tail"``)."""

    def __init__(self, x):
        self.x, self.steps = x, []


class _Pass:
    """A pattern found in a batch: the shards by head key, the frees met, the tails in
    batch order, where the batch goes on (``end``, layout commands ``done``) and the kernel
    commands it stands for."""

    def __init__(self):
        self.shards, self.frees, self.tails, self.owner = {}, [], [], {}
        self.end = self.done = self.count = 0


def run(w, cmds, i, layout, done, refs, errors):
    """Run the row-streamed pass starting at the head ``cmds[i]`` of ``w``'s batch, or return
    None (nothing ran, the store untouched). ``layout``/``done``: the batch's layout commands
    and how many of them ran. Returns ``(next command index, layout commands done)``."""
    if not w.fusion:  # (the batch turned fusion off)
        return None
    found = _find(w, cmds, i, layout, done, refs)
    if found is None:
        return None
    freed = {k for keys in found.frees for k in keys}
    freed |= freed_later(w, cmds, found.end, found.done, layout, set(found.owner) - freed)
    lanes = list(found.shards.values())
    before = w.commands_run
    try:
        if len(lanes) >= 2 and w.kernel_threads > 1 and not w._busy:
            got = parallel.run_lanes(w, lambda s: _pass(w, s, freed, refs), lanes, 0, True)
        else:
            got = [_pass(w, s, freed, refs) for s in lanes]
    except Exception:  # the usual path runs the commands again and records the error
        w.commands_run = before
        return None
    store, sums = w.store, {}
    for made, parts in got:
        store.update(made)
        sums.update(parts)
    for c in found.tails:  # (in batch order: an accumulator's first tail makes it)
        part, out = sums[id(c)], c.outs[0]
        if out in freed:
            continue
        if c.kernel == "matmul_acc":
            store[out] += part.astype(store[out].dtype, copy=False)
        else:
            store[out] = part
    finish(w, found.frees, before + found.count, found.count)
    return found.end, found.done


def finish(w, frees, run_to: int, count: int) -> None:
    """A pass's last steps on worker ``w``: the batch's ``frees`` it took, ``commands_run``
    set to ``run_to`` (each kernel command it stands for counted once) and the fusion
    counters advanced by ``count`` commands."""
    for keys in frees:
        w._free(keys)
    with w._count_lock:
        w.commands_run = run_to
        w.fused_runs += 1
        w.fused_commands += count


def _find(w, cmds, i, layout, done, refs):
    """The pattern from the head ``cmds[i]``: a :class:`_Pass`, or None."""
    store, kernels, n = w.store, w.kernels, len(cmds)
    found = _Pass()
    shards = found.shards
    # value key -> its head; transpose key -> its head; X's key -> its head
    owner, xt, xkey = found.owner, {}, {}
    accs = set()  # accumulators the pass's tails made
    j = i
    while j < n and type(cmds[j]) is Kernel and cmds[j].kernel == "matmul":
        x = _head(store, cmds[j], refs)
        if x is None:
            break
        head = cmds[j].outs[0]
        xkey[cmds[j].args[0].key] = head
        shards[head] = s = _Shard(x)
        s.steps.append(("head", cmds[j]))
        owner[head] = head
        j += 1
    if not shards:
        return None
    count, freed, pending, tailed = len(shards), set(), [], set()
    while len(tailed) < len(shards):
        if count > MAX_SCAN:
            return None
        if pending:
            c = pending.pop(0)
        elif j < n:
            c = cmds[j]
            j += 1
            if type(c) is LayoutSync:
                if c.upto > len(layout):
                    return None
                for lc in layout[done : c.upto]:
                    got = expand(w, lc)
                    if got is None:
                        return None
                    pending += got
                done = c.upto
                continue
        else:
            return None
        kind = type(c)
        if kind is Free:
            found.frees.append(c.keys)
            freed.update(c.keys)
            continue
        if kind is not Kernel or len(c.outs) != 1 or c.outs[0] in owner:
            return None
        if any(
            type(a) is Key and (a.key in freed or (a.slices is not None and a.key in owner))
            for a in c.args
        ):
            return None
        keys = [a.key for a in c.args if type(a) is Key]
        if c.kernel == "permute" and not c.inplace and len(keys) == 1 and keys[0] in xkey:
            if tuple((c.params or {}).get("axes", ())) != (1, 0):
                return None
            head = xkey[keys[0]]
            xt[c.outs[0]] = head
            shards[head].steps.append(("view", c))
        elif c.kernel in ("matmul", "matmul_acc"):
            head = _tail(store, c, owner, xt, shards, accs)
            if head is None or head in tailed:
                return None
            tailed.add(head)
            accs.add(c.outs[0])
            shards[head].steps.append(("tail", c))
            found.tails.append(c)
        elif getattr(kernels.get(c.kernel), "fusable", False) and not c.inplace:
            heads = {owner[k] for k in keys if k in owner}
            if len(heads) != 1:  # (an op on none of the pass's values, or on two shards')
                return None
            head = heads.pop()
            owner[c.outs[0]] = head
            shards[head].steps.append(("ew", c))
        else:
            return None
        count += 1
    if pending:  # (a sync's later commands are not part of the pass)
        return None
    found.end, found.done, found.count = j, done, count
    return found


def freed_later(w, cmds, end, done, layout, cands) -> set:
    """The keys in ``cands`` that the batch frees before anything reads them, from command
    ``end`` on (``done`` layout commands run): such values of a pass need not be written
    whole. The commands are read in the order they run, up to one that the scan cannot see
    into (a new layout, a program), which ends it."""
    got, pending, j = set(), [], end
    for _ in range(MAX_SCAN):
        if not cands:
            break
        if pending:
            c = pending.pop(0)
        elif j < len(cmds):
            c, j = cmds[j], j + 1
            if type(c) is LayoutSync:
                pending += layout[done : c.upto]
                done = c.upto
                continue
        else:
            break
        kind = type(c)
        if kind is Free:
            got.update(cands.intersection(c.keys))
            cands.difference_update(c.keys)
            continue
        if kind is GroupFree:
            keys = [c.start + s for s in w.mine(c.desc)]
        elif kind is Kernel:
            keys = [a.key for a in c.args if type(a) is Key] + list(c.outs)
        elif kind is Group:
            keys = [a.start + s for a in c.args if type(a) is Keys for s in w.mine(c.desc)]
            keys += [c.out + s for s in w.mine(c.desc)]
        elif kind is Tree and type(c.spec.start) is int:
            keys = [k for k in cands if k >= c.spec.start]  # (its inputs: from start on)
        elif kind in (Export, Post):
            keys = [c.key]
        else:
            break
        if kind is GroupFree:
            got.update(cands.intersection(keys))
        cands.difference_update(keys)
    return got


def _head(store, c, refs):
    """The block ``X`` of a head ``matmul(X, w)``, or None when ``c`` is not one."""
    if len(c.args) != 2 or c.inplace or (c.params or {}).get("stack"):
        return None
    a, b = c.args
    if type(a) is not Key or a.slices is not None:
        return None
    x = store.get(a.key)
    if type(b) is Key:  # (w here, or shipped from another worker: a ref of the batch)
        v = store.get(b.key) if b.slices is None else None
    else:
        v = refs[b.index] if type(b) is Ref and b.index < len(refs) else None
    if type(x) is not np.ndarray or type(v) is not np.ndarray:
        return None
    if x.ndim != 2 or x.shape[0] < MIN_ROWS or v.ndim not in (1, 2) or v.size > MAX_W:
        return None
    # (single and double precision only: bfloat16 and float16 products are rounded to the
    # block's dtype, so summing a tail's blocks would round once per block)
    if x.dtype.kind not in "fc" or x.dtype.itemsize < 4:
        return None
    return x


def _tail(store, c, owner, xt, shards, accs):
    """The head whose shard a tail ``matmul(X.T, r)`` / ``matmul_acc(acc, X.T, r)`` belongs
    to (``acc`` made by an earlier tail of the pass), or None."""
    acc = c.kernel == "matmul_acc"
    args = c.args[1:] if acc else c.args
    if len(args) != 2 or not all(type(a) is Key for a in args) or c.inplace != acc:
        return None
    if acc and (c.args[0] != Key(c.outs[0]) or c.outs[0] not in accs):
        return None
    if not acc and (c.params or {}).get("stack") not in (None, False, True):
        return None
    t, r = args[0].key, args[1].key
    head = owner.get(r)
    if head is None:
        return None
    if xt.get(t) != head:
        v, x = store.get(t), shards[head].x  # (a transpose made before: X.T out of a loop)
        if not (
            type(v) is np.ndarray
            and v.ndim == 2
            and v.T.shape == x.shape
            and v.T.strides == x.strides
            and _ptr(v) == _ptr(x)
        ):
            return None
        xt[t] = head
    return head


def _ptr(a) -> int:
    return a.__array_interface__["data"][0]


def expand(w, lc):
    """The per-shard commands of a layout command (no side effects), or None for a
    reduction or anything else that must run where it is."""
    kind = type(lc)
    if kind is Group:
        out = []
        for s in w.mine(lc.desc):
            a = tuple(Key(x.start + s) if type(x) is Keys else x for x in lc.args)
            out.append(Kernel(lc.kernel, a, (lc.out + s,), lc.params, (lc.label, s), lc.inplace))
        return out
    if kind is GroupFree:
        keys = [lc.start + s for s in w.mine(lc.desc)]
        return [Free(keys)] if keys else []
    return None


def _pass(w, shard, freed, refs):
    """One shard's pass over its row blocks: ``({key: value}, {id(tail): its sum})``, the
    values that outlive the pass (not in ``freed``) written whole."""
    xp, kernels, x = w.xp, w.kernels, shard.x
    n0 = x.shape[0]
    rows = max(64, BLOCK_BYTES // max(1, x.shape[1] * x.itemsize))
    steps, made, nds = [], {}, {}  # nds: the ndim of each value of the pass
    for kind, c in shard.steps:
        # (a tail's block products are plain ones: an accumulating tail adds their sum)
        fn, params = kernels["matmul" if kind == "tail" else c.kernel], c.params or {}
        if kind == "view":
            if c.outs[0] not in freed:
                made[c.outs[0]] = fn(xp, x, **params)
            continue
        if kind == "head":
            v = w._arg(c.args[1], refs)
            specs, nds[c.outs[0]] = [(3, None), (0, v)], v.ndim
        elif kind == "tail":
            specs = [(4, None), (1, c.args[-1].key)]
        else:
            specs, nds[c.outs[0]] = _specs(w, c.args, nds, refs, n0)
        steps.append((kind, c, fn, params, specs))
    vals, sums = {}, {}
    for lo in range(0, n0, rows):
        hi = min(n0, lo + rows)
        xb = x[lo:hi]
        for kind, c, fn, params, specs in steps:
            r = fn(xp, *[_val(t, v, lo, hi, xb, vals) for t, v in specs], **params)
            if kind == "tail":
                if lo == 0:
                    sums[id(c)] = r
                else:
                    sums[id(c)] += r
                continue
            out = c.outs[0]
            if r.ndim != nds[out] or r.shape[0] != hi - lo:
                raise ValueError(f"a block of {hi - lo} rows made {r.shape}")
            vals[out] = r
            if out not in freed:
                if lo == 0:  # (a recycled block where the pool has one: no page faults)
                    dims = (n0,) + r.shape[1:]
                    buf = w._take(dims, r.dtype)
                    made[out] = xp.empty(dims, r.dtype) if buf is None else buf
                made[out][lo:hi] = r
    return made, sums


def _specs(w, args, nds, refs, n0):
    """How each operand of an elementwise step enters a block, and the step's output ndim:
    ``(1, key)`` a value of the pass (``nds``: their ndims), ``(2, array)`` cut to the
    block's rows (as many dims as the pass's values and ``n0`` rows), ``(0, value)`` whole
    (a scalar, an operand of fewer dims or one row: broadcast against every row)."""
    nd = max(nds[a.key] for a in args if type(a) is Key and a.key in nds)
    out = []
    for a in args:
        if type(a) is Key and a.key in nds:
            out.append((1, a.key))
            continue
        v = w._arg(a, refs)
        if not isinstance(v, np.ndarray) or v.ndim < nd or (v.ndim == nd and v.shape[0] == 1):
            out.append((0, v))
        elif v.ndim == nd and v.shape[0] == n0:
            out.append((2, v))
        else:  # (it would broadcast the rows into another dim: not a row-wise op)
            raise ValueError(f"an operand of shape {v.shape} against {n0} rows")
    return out, nd


def _val(t, v, lo, hi, xb, vals):
    if t == 0:
        return v
    if t == 1:
        return vals[v]
    if t == 2:
        return v[lo:hi]
    return xb if t == 3 else xb.T
