"""Ring attention: ``scaled_dot_product_attention`` over inputs split along the sequence.

Query, key and value split along dim -2 (and only there) are computed shard-parallel: every
worker keeps its query rows and a running (maximum, sum of exponentials, weighted sum of
values) per row, and the key/value shards visit the workers one step at a time. At step
``r`` the query shard ``s`` reads key/value shard ``(s + r) % n`` from its owner and folds
its scores into the online softmax, so each worker sends one block and receives one per
step (a ring), and its commands read only its own shards and the one visiting block: no
worker ever gathers the whole sequence's keys and values. A block visits in ``PIECES``
pieces along the sequence, one piece a step, so a worker holds one piece of another's keys
and values at a time (they come mapped from Ray's object store; they count in a traced
peak all the same, :meth:`~sharded.runtime.worker.core.Worker.run_mapped`). (An owner's
export of a step is queued after its own step before, so pieces come round at the pace of
the ring.) Inside a piece the scores are computed ``ROWS`` query rows at a time, so their
temporaries stay small. Causal attention skips the pieces that lie entirely above the
diagonal (no transfer, no compute) and, within a piece, the keys past each turn's last row.

Backward walks the same ring, piece by piece, each query shard's own block last: each step
recomputes the piece's probabilities from the saved log-sum-exp (in tiles of ``COLS`` keys,
so a tile's shares of the key/value gradients are small too), adds into the worker's query
gradient, and adds the piece's key/value gradients into the sums that travel with the
piece: the sums of a piece of block ``b`` start at its first visitor, go from visitor to
visitor (each step hands them over before any worker starts the step, so a worker drops the
sums it passed on before it makes the next ones) and end at ``b``'s owner, which visits it
last and joins its pieces' sums into ``b``'s gradients. A piece's sums exist once, where
the piece is; no worker holds partial sums of another's block waiting to be summed. Every
step makes its results in fresh blocks (the runtime's recovery replays steps whose inputs
must be as they were), taken where they fit from the worker's pool of the blocks that the
op's earlier steps freed. Per worker the backward then holds the output, the query gradient
and the next one, one piece's key/value sums and the next ones, a visiting key/value piece
and a few tiles: at L = 4096, d = 64, 8 heads, batch 4 float32 over 2 workers, 1.76 times
its inputs at its peak, received pieces counted (2.13 times with whole blocks visiting).
The public function and the autograd node are in :mod:`sharded.nn._attention`, whose rule
calls ``ring_attention_backward``.
"""

from __future__ import annotations

import math

from ....core.dataflow import Operand, free_temps, gather_regions, region
from ....core.registry import kernel, nondiff, pooled_empty, primitive
from ....layout import Layout
from ....runtime.commands import Key

__all__: list[str] = []

_INF = float("inf")

# query rows per turn inside a block: the scores' temporaries are (..., ROWS, block keys)
ROWS = 256
# elements of one chunk's scores (8 MiB of float32): their few temporaries stay small. At
# L = 4096, 8 heads, 2 batch rows a worker (32 query rows a turn, whole-block backward
# shares) the batch-split step held 1.76x its inputs in 3.96 s; 16 MiB held 2.01x, 4 MiB
# 1.63x but took 6.1 s (16-row GEMMs). In (256 rows, COLS keys) backward tiles: 1.19x, 3.3 s
SCORES = 1 << 21
# key rows per tile of the backward: a tile's shares of the key and value gradients are
# (..., COLS, Ev), not the whole block's
COLS = 256
# pieces a key/value block visits in, along the sequence: a worker holds one piece of the
# visiting block and one piece's traveling gradient sums at a time. At L = 4096, d = 64,
# 8 heads, batch 4, 2 workers, counting the received blocks, a worker's peak was 2.13x its
# inputs whole, 1.88x in 2 pieces, 1.76x in 4, with no time measurably lost (each piece is
# one more step's worth of fresh query-gradient and softmax-state blocks)
PIECES = 4


def _block_scores(xp, q, k, mask, scale, causal, i0, j0):
    """Scaled, masked scores of query rows ``i0:`` against key rows ``j0:`` (global)."""
    s = q @ k.swapaxes(-1, -2)
    s *= scale  # in place: the scores are the one big temporary
    if mask is not None:
        s = xp.where(mask, s, -_INF) if mask.dtype == bool else s + mask
    if causal:  # torch's tril(ones(L, S)): key j for query i when j <= i
        rows = xp.arange(i0, i0 + q.shape[-2])[:, None]
        keep = xp.arange(j0, j0 + k.shape[-2])[None, :] <= rows
        s = xp.where(keep, s, -_INF)
    return s


def _block(xp, alloc, shape, dtype, like=None):
    """Zeros of ``shape`` (or a copy of ``like``) in a block of the worker's pool of freed
    blocks (``alloc``) when one fits, else fresh: the op's steps free blocks of the sizes
    the next ones make, which the pool keeps (a fresh block next to them would be memory
    held twice, and its page faults)."""
    got = pooled_empty(xp, alloc, shape, dtype)
    got[...] = 0 if like is None else like
    return got


# ---------------------------------------------------------------------- ring_attention
def _chunks(xp, q, k, mask, causal, i0, j0, rows):
    """``(a, z, n, mask block)``: query rows ``a:z`` of a block in turns of ``rows`` (the
    scores' temporaries stay small) and the ``n`` first keys they can see (causal: the
    keys past the chunk's last row are skipped, not computed and masked)."""
    L, S = q.shape[-2], k.shape[-2]
    # fewer rows for many heads or long blocks: a score chunk stays near SCORES elements
    rows = max(16, min(rows, SCORES // max(1, math.prod(q.shape[:-2]) * S)))
    for a in range(0, L, rows):
        z = min(L, a + rows)
        n = max(0, min(S, i0 + z - j0)) if causal else S
        mc = mask
        if mask is not None:
            mc = mc if mc.shape[-2] == 1 else mc[..., a:z, :]
            mc = mc if mc.shape[-1] == 1 else mc[..., :n]
        yield a, z, n, mc


@kernel(pooled=True)
def ring_attn_step(
    xp, q, k, v, *rest, scale, causal, i0, j0, rows, has_state, has_mask, alloc=None
):
    """One ring step of the online softmax: state ``(m, l, acc)`` after keys ``k``."""
    mask = rest[-1] if has_mask else None
    per_row = q.shape[:-1] + (1,)
    if has_state:
        m, total = (xp.array(x, copy=True) for x in rest[:2])
        acc = _block(xp, alloc, rest[2].shape, q.dtype, rest[2])
    else:
        m = xp.full(per_row, -_INF, dtype=q.dtype)
        total = xp.zeros(per_row, dtype=q.dtype)
        acc = _block(xp, alloc, q.shape[:-1] + v.shape[-1:], q.dtype)
    for a, z, n, mc in _chunks(xp, q, k, mask, causal, i0, j0, rows):
        if n == 0:
            continue
        s = _block_scores(xp, q[..., a:z, :], k[..., :n, :], mc, scale, causal, i0 + a, j0)
        old = m[..., a:z, :]
        new = xp.maximum(old, s.max(-1, keepdims=True))
        safe = xp.where(new == -_INF, 0.0, new)  # exp(-inf - -inf) would be nan
        s -= safe
        p = xp.exp(s, out=s)  # the scores' buffer becomes the probabilities
        alpha = xp.exp(old - safe)  # rescales what was summed under the old maximum
        total[..., a:z, :] = total[..., a:z, :] * alpha + p.sum(-1, keepdims=True)
        acc[..., a:z, :] = acc[..., a:z, :] * alpha + p @ v[..., :n, :]
        m[..., a:z, :] = new
    return m, total, acc


@kernel(pooled=True)
def ring_attn_finish(xp, m, total, acc, alloc=None):
    """Output and log-sum-exp (+inf where every key was masked: the output is 0 there)."""
    empty = total == 0
    total = xp.where(empty, 1.0, total)
    lse = xp.where(empty, _INF, xp.where(m == -_INF, 0.0, m) + xp.log(total))
    got = alloc(acc.shape, acc.dtype) if alloc is not None else None
    return xp.divide(acc, total, out=got), lse.astype(acc.dtype)


def _pieces(j0, j1) -> list:
    """Key rows ``j0:j1`` of a block in ``PIECES`` pieces along the sequence (none empty)."""
    n = max(1, min(PIECES, j1 - j0))
    cuts = [j0 + (j1 - j0) * i // n for i in range(n + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def _blocks(q, k, is_causal, first=0):
    """``(s, w, i0, i1, [(t, (b, p), j0, j1), ...])`` per query shard: its ring of key
    blocks in pieces, piece ``p`` of block ``b = (s + first + r) % n`` at step ``t = r *
    PIECES + p``, causal ones above the diagonal left out (their steps stay empty, so that
    shards cut alike visit each piece in turn)."""
    qs, ks = q._layout.shards(), k._layout.shards()
    n = len(ks)
    out = []
    for s, (w, offs, shp) in enumerate(qs):
        i0, i1 = offs[-2], offs[-2] + shp[-2]
        ring = []
        for r in range(n):
            b = (s + first + r) % n
            for p, (j0, j1) in enumerate(_pieces(ks[b][1][-2], ks[b][1][-2] + ks[b][2][-2])):
                if not (is_causal and j0 > i1 - 1):
                    ring.append((r * PIECES + p, (b, p), j0, j1))
        out.append((s, w, i0, i1, ring))
    return out


def _last(lay: Layout, n: int) -> Layout:
    """``lay`` with its last dim (unsplit) of size ``n``."""
    return lay.replace(shape=lay.shape[:-1] + (n,), bounds=lay.bounds[:-1] + ((0, n),))


def _mask_arg(ex, mask, wanted, nd, temps):
    """The mask's block for every ``(worker, query rows, key rows)`` in ``wanted``."""
    if mask is None:
        return [[] for _ in wanted]
    lay = mask._layout
    regs = []
    for w, (i0, i1), (j0, j1), batch in wanted:
        offs = (0,) * (nd - 2) + (i0, j0)
        shp = tuple(batch) + (i1 - i0, j1 - j0)
        regs.append((w, region(lay, offs, shp, nd - lay.ndim)))
    args, t = gather_regions(ex, mask, regs)
    temps += t
    return [[a] for a in args]


def _step_wants(k, rings):
    """Per ring step: the ``(query shard, piece)`` pairs and k regions they read."""
    shards = k._layout.shards()
    steps = []
    for t in range(len(shards) * PIECES):
        pairs = [(s, w, i0, i1, e[1:]) for s, w, i0, i1, ring in rings for e in ring if e[0] == t]
        regs = []
        for _, w, _, _, ((b, _), j0, j1) in pairs:
            reg = [(o, o + m) for o, m in zip(*shards[b][1:])]
            regs.append((w, reg[:-2] + [(j0, j1)] + reg[-1:]))
        if pairs:
            steps.append((pairs, regs))
    return steps


def _spec(q, k, v, mask, scale, is_causal):
    shp = tuple(q.shape)
    return (shp[:-1] + (v.shape[-1],), q.dtype), (shp[:-1] + (1,), q.dtype)


@primitive("ring_attention", kernels=[ring_attn_step, ring_attn_finish], out_spec=_spec)
def _ring_attention_plan(ex, q, k, v, mask, scale, is_causal):
    """Each query shard's online softmax over the key/value shards as they come round."""
    nd = len(q._layout.shape)
    batch = q._layout.shape[:-2]
    rings = _blocks(q, k, is_causal)
    state = {s: None for s, *_ in rings}
    params = {"scale": scale, "causal": is_causal, "rows": ROWS, "has_mask": mask is not None}
    for pairs, regs in _step_wants(k, rings):
        temps = []
        ka, t1 = gather_regions(ex, k, regs)
        va, t2 = gather_regions(
            ex, v, [(w, reg[:-1] + [(0, v._layout.shape[-1])]) for w, reg in regs]
        )
        ma = _mask_arg(
            ex,
            mask,
            [(w, (i0, i1), (j0, j1), batch) for _, w, i0, i1, (_, j0, j1) in pairs],
            nd,
            temps,
        )
        for n, (s, w, i0, i1, (b, j0, j1)) in enumerate(pairs):
            old = state[s]
            outs = (ex.new_key(), ex.new_key(), ex.new_key())
            st_args = [Key(x, None) for x in old] if old else []
            p = dict(params, i0=i0, j0=j0, has_state=old is not None)
            qa = Key(q._keys[s], None)
            ex.submit(
                w,
                "ring_attn_step",
                [qa, ka[n], va[n], *st_args, *ma[n]],
                outs,
                p,
                ("ring_attention", s),
            )
            if old:
                ex.free(w, list(old))
            state[s] = outs
        free_temps(ex, t1 + t2 + temps)
    out = Operand(_last(q._layout, v._layout.shape[-1]), q._dtype, ex.new_keys(len(rings)))
    lse = Operand(_last(q._layout, 1), q._dtype, ex.new_keys(len(rings)))
    for s, w, *_ in rings:
        ex.submit(
            w,
            "ring_attn_finish",
            [Key(x, None) for x in state[s]],
            (out._keys[s], lse._keys[s]),
            {},
            ("ring_attention", s),
        )
        ex.free(w, list(state[s]))
    return out, lse


# the attention node of sharded.nn._attention differentiates it (ring_attention_backward)
nondiff("ring_attention")


# ------------------------------------------------------------- ring_attention_backward
def _tiles(xp, q, k, mask, causal, i0, j0, rows, cols):
    """``(a, z, c, e, mask tile)``: query rows ``a:z`` against keys ``c:e`` of a block, in
    tiles whose scores stay near ``SCORES`` elements and whose shares of the key and value
    gradients are ``cols`` rows, not the whole block's (causal: keys past the rows' last
    skipped)."""
    L, S = q.shape[-2], k.shape[-2]
    cols = max(1, min(cols, S))
    rows = max(16, min(rows, SCORES // max(1, math.prod(q.shape[:-2]) * cols)))
    for a in range(0, L, rows):
        z = min(L, a + rows)
        n = max(0, min(S, i0 + z - j0)) if causal else S
        for c in range(0, n, cols):
            e = min(n, c + cols)
            mc = mask
            if mask is not None:
                mc = mc if mc.shape[-2] == 1 else mc[..., a:z, :]
                mc = mc if mc.shape[-1] == 1 else mc[..., c:e]
            yield a, z, c, e, mc


@kernel(pooled=True)
def ring_attn_grad_step(
    xp,
    q,
    k,
    v,
    g,
    out,
    lse,
    *rest,
    scale,
    causal,
    i0,
    j0,
    rows,
    cols,
    has_dq,
    has_acc,
    has_mask,
    alloc=None,
):
    """One backward ring step: the query gradient so far plus this block's share, and the
    block's key and value gradients so far (summed by the workers it visited before, in
    ``rest`` when ``has_acc``) plus this query shard's share, all in fresh arrays."""
    rest = list(rest)
    dq = _block(xp, alloc, q.shape, q.dtype, rest.pop(0) if has_dq else None)
    dk, dv = (_block(xp, alloc, t.shape, q.dtype, rest.pop(0) if has_acc else None) for t in (k, v))
    mask = rest[0] if has_mask else None
    last = None
    for a, z, c, e, mc in _tiles(xp, q, k, mask, causal, i0, j0, rows, cols):
        qc, gc, kc, vc = q[..., a:z, :], g[..., a:z, :], k[..., c:e, :], v[..., c:e, :]
        if a != last:  # rowsum(dP * P) = rowsum(dO * O), a row chunk at a time
            delta, last = (gc * out[..., a:z, :]).sum(-1, keepdims=True), a
        s = _block_scores(xp, qc, kc, mc, scale, causal, i0 + a, j0 + c)
        s -= lse[..., a:z, :]
        p = xp.exp(s, out=s)  # the probabilities, from the saved log-sum-exp
        dv[..., c:e, :] += p.swapaxes(-1, -2) @ gc
        ds = gc @ vc.swapaxes(-1, -2)
        ds -= delta
        ds *= p
        ds *= scale  # once here rather than on both products below
        dq[..., a:z, :] += ds @ kc
        dk[..., c:e, :] += ds.swapaxes(-1, -2) @ qc
    return dq, dk, dv


@kernel(pooled=True)
def ring_join(xp, like, *parts, rows, have, alloc=None):
    """A block's key or value gradient (shaped as ``like``, its key or value shard) from its
    pieces' sums: rows ``rows[i]`` from the next of ``parts`` when ``have[i]``, else zeros
    (a piece no query attends to)."""
    out = pooled_empty(xp, alloc, like.shape, like.dtype)
    parts = iter(parts)
    for (a, z), h in zip(rows, have):
        out[..., a:z, :] = next(parts) if h else 0
    return out


def _bspec(q, k, v, mask, out, lse, g, scale, is_causal):
    return tuple((tuple(t.shape), t.dtype) for t in (q, k, v))


@primitive(
    "ring_attention_backward",
    kernels=[ring_attn_grad_step, ring_join],
    out_spec=_bspec,
)
def _ring_attention_backward_plan(ex, q, k, v, mask, out, lse, g, scale, is_causal):
    """The forward's ring again, each query shard's own block last: a piece's key/value
    gradient sums travel with it and end on its block's owner, which joins the pieces."""
    nd = len(q._layout.shape)
    batch = q._layout.shape[:-2]
    rings = _blocks(q, k, is_causal, first=1)
    dq = {s: None for s, *_ in rings}
    sums = {}  # per piece (b, p): (holder, dk key, dv key)
    params = {
        "scale": scale, "causal": is_causal, "rows": ROWS, "cols": COLS,
        "has_mask": mask is not None,
    }  # fmt: skip
    for pairs, regs in _step_wants(k, rings):
        temps = []
        ka, t1 = gather_regions(ex, k, regs)
        va, t2 = gather_regions(
            ex, v, [(w, reg[:-1] + [(0, v._layout.shape[-1])]) for w, reg in regs]
        )
        ma = _mask_arg(
            ex,
            mask,
            [(w, (i0, i1), (j0, j1), batch) for _, w, i0, i1, (_, j0, j1) in pairs],
            nd,
            temps,
        )
        # the sums this step moves are handed over before any of the step's kernels is
        # queued: a holder drops them before it makes the next piece's (a piece that two
        # query shards visit in one step, cut unlike the keys, goes from one to the next)
        first = {b: n for n, (*_, (b, _, _)) in reversed(list(enumerate(pairs)))}
        shapes = {n: _piece_shapes(k, v, *pairs[n][-1]) for n in first.values()}
        accs = {n: _take_sums(ex, shapes[n], sums.get(b), pairs[n][1]) for b, n in first.items()}
        for n, (s, w, i0, i1, (b, j0, j1)) in enumerate(pairs):
            acc = accs[n] if n in accs else _take_sums(ex, shapes[first[b]], sums.get(b), w)
            outs = (ex.new_key(), ex.new_key(), ex.new_key())
            own = [Key(x._keys[s], None) for x in (q, g, out, lse)]
            extra = [Key(dq[s], None)] if dq[s] is not None else []
            p = dict(params, i0=i0, j0=j0, has_dq=dq[s] is not None, has_acc=bool(acc))
            ex.submit(
                w,
                "ring_attn_grad_step",
                [own[0], ka[n], va[n], *own[1:], *extra, *acc, *ma[n]],
                outs,
                p,
                ("ring_attention_backward", s),
            )
            if dq[s] is not None:
                ex.free(w, [dq[s]])
            held = sums.get(b)
            if held is not None and held[0] == w:  # (moved ones went at the handover)
                ex.free(w, list(held[1:]))
            dq[s] = outs[0]
            sums[b] = (w, outs[1], outs[2])
        free_temps(ex, t1 + t2 + temps)
    grads = [[], []]
    for b, (owner, offs, shp) in enumerate(k._layout.shards()):
        cuts = _pieces(offs[-2], offs[-2] + shp[-2])
        held = [sums.get((b, p)) for p in range(len(cuts))]
        if len(cuts) == 1 and held[0] is not None and held[0][0] == owner:
            for ks, key in zip(grads, held[0][1:]):  # the owner visited it last: done
                ks.append(key)
            continue
        # the pieces' sums join in a fresh block on the owner (zeros: a piece that no query
        # attends to, causal or keys past L); moved ones are dropped at the handover
        parts = [
            _take_sums(ex, _piece_shapes(k, v, (b, p), j0, j1), h, owner)
            for p, (h, (j0, j1)) in enumerate(zip(held, cuts))
        ]
        jp = {"rows": [(j0 - offs[-2], j1 - offs[-2]) for j0, j1 in cuts]}
        jp["have"] = [bool(x) for x in parts]
        for i, (t, keys) in enumerate(zip((k, v), grads)):
            keys.append(ex.new_key())
            args = [Key(t._keys[b], None)] + [x[i] for x in parts if x]
            ex.submit(owner, "ring_join", args, (keys[-1],), jp, ("ring_attention_backward", b))
        mine = [key for h in held if h is not None and h[0] == owner for key in h[1:]]
        if mine:
            ex.free(owner, mine)
    return (
        Operand(q._layout, q._dtype, [dq[s] for s, *_ in rings]),
        Operand(k._layout, k._dtype, grads[0]),
        Operand(v._layout, v._dtype, grads[1]),
    )


def _piece_shapes(k, v, piece, j0, j1) -> list:
    """``(shape, dtype)`` of piece ``(b, p)``'s key and value gradient sums (rows j0:j1)."""
    shp = k._layout.shards()[piece[0]][2]
    rows = shp[:-2] + (j1 - j0,)
    return [(rows + shp[-1:], k._dtype), (rows + (v._layout.shape[-1],), v._dtype)]


def _take_sums(ex, shapes, held, w) -> list:
    """Command arguments on worker ``w`` for a piece's key and value gradient sums ``held =
    (holder, dk key, dv key)`` (none before the piece's first visit), shaped and typed as
    ``shapes``. A sum that moves is dropped on its holder as soon as it is handed over,
    before the holder's next step: a piece's sums exist once, at the worker that has the
    piece now."""
    if held is None:
        return []
    holder, *keys = held
    if holder == w:
        return [Key(x, None) for x in keys]
    args = []
    for (shp, dt), key in zip(shapes, keys):
        whole = [(0, m) for m in shp]
        one = Operand(Layout.from_bounds(shp, whole, (holder,)), dt, (key,))
        got, temps = gather_regions(ex, one, [(w, whole)])
        args += got
        free_temps(ex, temps)
    ex.free(holder, keys)
    return args


nondiff("ring_attention_backward")  # create_graph takes the composed form (_attention)


# ------------------------------------------------------------- batch-split attention
# Query, key and value cut alike along batch dims only: every worker has all the keys its
# queries need, so one ring step on its own shards is the whole attention (the kernels
# above, no transfers), in row chunks whose scores stay small.
def _local_params(q, scale, is_causal):
    return {"scale": scale, "causal": is_causal, "rows": ROWS, "has_mask": False}


def _local_grad_params(q, scale, is_causal):
    return dict(_local_params(q, scale, is_causal), cols=COLS, has_acc=False)


@primitive("local_attention", kernels=[ring_attn_step, ring_attn_finish], out_spec=_spec)
def _local_attention_plan(ex, q, k, v, mask, scale, is_causal):
    """Each worker's online softmax over its own key/value shards."""
    shards = q._layout.shards()
    out = Operand(_last(q._layout, v._layout.shape[-1]), q._dtype, ex.new_keys(len(shards)))
    lse = Operand(_last(q._layout, 1), q._dtype, ex.new_keys(len(shards)))
    p = dict(_local_params(q, scale, is_causal), i0=0, j0=0, has_state=False)
    for s, (w, _, _) in enumerate(shards):
        state = (ex.new_key(), ex.new_key(), ex.new_key())
        ins = [Key(t._keys[s], None) for t in (q, k, v)]
        ex.submit(w, "ring_attn_step", ins, state, p, ("local_attention", s))
        ex.submit(
            w,
            "ring_attn_finish",
            [Key(x, None) for x in state],
            (out._keys[s], lse._keys[s]),
            {},
            ("local_attention", s),
        )
        ex.free(w, list(state))
    return out, lse


nondiff("local_attention")


@primitive("local_attention_backward", kernels=[ring_attn_grad_step], out_spec=_bspec)
def _local_attention_backward_plan(ex, q, k, v, mask, out, lse, g, scale, is_causal):
    """Each worker's query, key and value gradients from its own shards."""
    shards = q._layout.shards()
    grads = [ex.new_keys(len(shards)) for _ in range(3)]
    p = dict(_local_grad_params(q, scale, is_causal), i0=0, j0=0, has_dq=False)
    for s, (w, _, _) in enumerate(shards):
        ins = [Key(t._keys[s], None) for t in (q, k, v, g, out, lse)]
        outs = tuple(keys[s] for keys in grads)
        ex.submit(w, "ring_attn_grad_step", ins, outs, p, ("local_attention_backward", s))
    return tuple(Operand(t._layout, t._dtype, keys) for t, keys in zip((q, k, v), grads))


nondiff("local_attention_backward")
