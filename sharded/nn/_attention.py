"""``scaled_dot_product_attention``: attention computed block by block along the keys.

The scores of a query against ``BLOCK`` keys at a time are reduced into a running maximum,
a running sum of exponentials and a running weighted sum of values (the online softmax),
so a long sequence's full ``L x S`` score matrix never exists at once. Backward recomputes
each block's scores from the saved output and log-sum-exp (one autograd node for the whole
attention, whose rule walks the same blocks) instead of keeping every block's
probabilities alive. Every step is a sharded op, so inputs split along the batch or the
sequence dims work as they are.

Inputs cut alike along batch dims only take fused kernels instead (each worker runs the
online softmax over its own shards, a chunk of query rows at a time; see ``local_attention``
in :mod:`sharded.ops.nnops.prims.ring`). Inputs split along the sequence dim (-2) only take
ring attention
(:mod:`sharded.ops.nnops.prims.ring`): each worker keeps its queries and the key/value
shards visit the workers in turn, so no worker holds the whole sequence's keys and values.

With ``dropout_p > 0`` the probabilities are computed whole (the dropout mask has to be
the one backward sees, which the composed ops' own graph keeps).
"""

from __future__ import annotations

import math

import numpy as np

from .. import autograd as _ag
from ..amp import lower_precision
from ..core.dispatch import apply, unbroadcast, via_float32
from ..errors import ArgumentError, DTypeError, ShapeError
from ..grad_mode import is_grad_enabled, no_grad
from ..layout import Layout
from ..ops.creation.prims import arange
from ..ops.elementwise.prims.selection import where
from ..ops.elementwise.prims.unary import exp, log
from ..ops.shape.prims.joining import cat
from ..tensor import ShardedTensor

__all__ = ["scaled_dot_product_attention"]

# keys per block of the online softmax: a block's scores are (..., L, BLOCK)
BLOCK = 512

_INF = float("inf")


def _check(q, k, v, attn_mask, dropout_p, is_causal, enable_gqa):
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise ShapeError(
            "scaled_dot_product_attention: expected query, key and value to be at least 2 "
            f"dimensional, got shapes {list(q.shape)}, {list(k.shape)}, {list(v.shape)}"
        )
    if not q.dtype == k.dtype == v.dtype or not q.dtype.is_floating_point:
        raise DTypeError(
            "scaled_dot_product_attention: expected query, key and value to have the same "
            f"floating dtype, got {q.dtype}, {k.dtype} and {v.dtype}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ShapeError(
            f"scaled_dot_product_attention: query's embedding size {q.shape[-1]} differs from "
            f"key's {k.shape[-1]} (shapes {list(q.shape)} and {list(k.shape)})"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ShapeError(
            f"scaled_dot_product_attention: key has {k.shape[-2]} positions and value "
            f"{v.shape[-2]} (shapes {list(k.shape)} and {list(v.shape)})"
        )
    if not 0.0 <= dropout_p <= 1.0:
        raise ArgumentError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if is_causal and attn_mask is not None:
        raise ArgumentError(
            "scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True"
        )
    if attn_mask is not None and not (
        attn_mask.dtype.name == "bool" or attn_mask.dtype.is_floating_point
    ):
        raise DTypeError(
            f"scaled_dot_product_attention: expected attn_mask dtype to be bool or floating, "
            f"got {attn_mask.dtype}"
        )
    if enable_gqa and q.ndim >= 3:
        hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
        if hq % hk or hq % hv:
            raise ShapeError(
                f"scaled_dot_product_attention: number of heads in key ({hk}) and value ({hv}) "
                f"must divide the number of heads in query ({hq})"
            )


def _batch_shape(*ts):
    try:
        return np.broadcast_shapes(*(tuple(t.shape[:-2]) for t in ts))
    except ValueError:
        raise ShapeError(
            "scaled_dot_product_attention: the batch dims of query, key and value do not "
            f"broadcast: shapes {[list(t.shape) for t in ts]}"
        ) from None


def _kv(q, t, j0, j1):
    """Keys or values ``j0:j1``; for queries split along L, a copy on every worker (each
    query shard needs every key: the block travels to the queries, which stay put)."""
    block = t.narrow(-2, j0, j1 - j0)
    if q.ndim - 2 in q.layout.split_dims and not block.layout.is_replicated:
        block = block.reshard(layout=Layout.replicated())
    return block


def _scores(q, k, j0, j1, mask, is_causal, scale):
    """The scaled, masked scores of every query against keys ``j0:j1``: (..., L, j1 - j0)."""
    s = (q @ _kv(q, k, j0, j1).transpose(-2, -1)) * scale
    if mask is not None:
        mj = mask if mask.shape[-1] == 1 else mask.narrow(-1, j0, j1 - j0)
        s = where(mj, s, -_INF) if mask.dtype.name == "bool" else s + mj
    if is_causal:  # torch's causal mask: tril(ones(L, S)), aligned at the top left
        keep = arange(j0, j1).unsqueeze(0) <= arange(q.shape[-2]).unsqueeze(1)
        s = where(keep, s, -_INF)
    return s


def _blocks(S):
    n = BLOCK if S > BLOCK else max(S, 1)
    return [(j, min(j + n, S)) for j in range(0, S, n)]


def _ring(q, k, v, mask):
    """Whether ring attention applies: query, key and value split along dim -2 only (the
    query in two shards or more), key and value cut alike, a mask bool or of their dtype."""
    seq = (q.ndim - 2,)
    lays = [t.layout for t in (q, k, v)]
    if any(lay.is_replicated or lay.split_dims != seq for lay in lays):
        return False
    kl, vl = lays[1:]
    if kl.bounds[:-1] != vl.bounds[:-1] or kl.workers != vl.workers:
        return False
    if q.dtype.is_complex:
        return False
    return mask is None or (
        mask.ndim <= q.ndim and (mask.dtype.name == "bool" or mask.dtype == q.dtype)
    )


def _local(q, k, v, mask):
    """Whether every worker has the keys its queries need: query, key and value cut alike
    along batch dims only (not the last two) into two shards or more, no mask (the fused kernels of
    :mod:`~sharded.ops.nnops.prims.ring` then run on each worker's own shards)."""
    if mask is not None or q.dtype.is_complex:
        return False
    lays = [t.layout for t in (q, k, v)]
    nb = q.ndim - 2
    if any(lay.is_replicated or any(d >= nb for d in lay.split_dims) for lay in lays):
        return False
    if not lays[0].split_dims:  # one shard: the composed blocks (a worker's BLAS is its own)
        return False
    ql = lays[0]
    return all(lay.bounds[:nb] == ql.bounds[:nb] and lay.workers == ql.workers for lay in lays)


def _forward(q, k, v, mask, is_causal, scale):
    """Output and log-sum-exp (+inf on rows where every key is masked) by the online
    softmax over key blocks. Fully masked rows give 0, as torch's safe softmax."""
    m = total = acc = None
    for j0, j1 in _blocks(k.shape[-2]):
        s = _scores(q, k, j0, j1, mask, is_causal, scale)
        bm = s.amax(-1, keepdim=True)
        m_new = bm if m is None else m.maximum(bm)
        safe = where(m_new == -_INF, 0.0, m_new)  # exp(-inf - -inf) would be nan
        p = exp(s - safe)
        pv = p @ _kv(q, v, j0, j1)
        if m is None:
            total, acc = p.sum(-1, keepdim=True), pv
        else:
            alpha = exp(m - safe)  # rescales what was summed under the old maximum
            total = total * alpha + p.sum(-1, keepdim=True)
            acc = acc * alpha + pv
        m = m_new
    empty = total == 0
    out = acc / where(empty, 1.0, total)
    lse = where(empty, _INF, where(m == -_INF, 0.0, m) + log(where(empty, 1.0, total)))
    return out, lse


def _relse(q, k, mask, is_causal, scale, lse):
    """The log-sum-exp again, differentiably: ``lse + log(sum(exp(s - lse)))`` has the
    saved value and the gradient of the scores (the shift by a constant changes neither)."""
    empty = lse == _INF
    shift = where(empty, 0.0, lse)
    total = None
    for j0, j1 in _blocks(k.shape[-2]):
        t = exp(_scores(q, k, j0, j1, mask, is_causal, scale) - shift).sum(-1, keepdim=True)
        total = t if total is None else total + t
    return where(empty, _INF, shift + log(where(empty, 1.0, total)))


def _sdpa_vjp(gs, node):
    """Flash-attention backward: each block's probabilities from the saved log-sum-exp."""
    q, k, v, mask = node.args
    scale, is_causal = node.params["scale"], node.params["is_causal"]
    (out,), (lse,) = node.saved["out"], node.saved["lse"]
    if is_grad_enabled():  # create_graph: the log-sum-exp as a function of q, k (and mask)
        lse = _relse(q, k, mask, is_causal, scale, lse)
    g = gs[0]
    want_mask = isinstance(mask, ShardedTensor) and mask.requires_grad
    fused = node.params.get("ring")  # "ring" or "local": the fused kernels' backward
    if fused and not is_grad_enabled() and not want_mask:
        if g.layout != out.layout:
            g = g.reshard(layout=out.layout)
        dq, dk, dv = apply(
            f"{fused}_attention_backward", q, k, v, mask, out, lse, g, scale, is_causal
        )
        return dq, dk, dv, None
    delta = (g * out).sum(-1, keepdim=True)  # rowsum(dP * P) = rowsum(dO * O)
    dq, dks, dvs, dms = None, [], [], []
    for j0, j1 in _blocks(k.shape[-2]):
        p = exp(_scores(q, k, j0, j1, mask, is_causal, scale) - lse)
        vj, kj = _kv(q, v, j0, j1), _kv(q, k, j0, j1)
        dvs.append(p.transpose(-2, -1) @ g)
        ds = p * (g @ vj.transpose(-2, -1) - delta)
        dqj = (ds @ kj) * scale
        dq = dqj if dq is None else dq + dqj
        dks.append((ds.transpose(-2, -1) @ q) * scale)
        if want_mask:
            dms.append(ds)
    dk, dv = (cat(d, -2) if len(d) > 1 else d[0] for d in (dks, dvs))
    dm = None
    if want_mask:
        dm = cat(dms, -1) if len(dms) > 1 else dms[0]
        dm = unbroadcast(dm, mask)
    return dq, dk, dv, dm


_ag._ENGINE_RULES["scaled_dot_product_attention"] = _sdpa_vjp


def _record(q, k, v, mask, out, lse, scale, is_causal, ring=None):
    """One autograd node for the whole attention (its rule is :func:`_sdpa_vjp`)."""
    args = tuple(_ag._snapshot(a) for a in (q, k, v, mask))
    saved = {"out": (_ag._alias(out),), "lse": (lse,)}
    params = {"scale": scale, "is_causal": is_causal, "ring": ring}
    node = _ag.Node("scaled_dot_product_attention", args, params, saved, 1, (0, 1, 2))
    out.requires_grad, out.grad_fn, out._out_index = True, node, 0


def _materialized(q, k, v, mask, dropout_p, is_causal, scale):
    """Attention with dropout: whole probabilities, differentiated through the ops."""
    from ._basic import dropout

    s = _scores(q, k, 0, k.shape[-2], mask, is_causal, scale)
    m = s.amax(-1, keepdim=True)
    p = exp(s - where(m == -_INF, 0.0, m))
    total = p.sum(-1, keepdim=True)
    attn = p / where(total == 0, 1.0, total)
    return dropout(attn, dropout_p) @ v


@lower_precision
@via_float32
def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    """``softmax(query @ key.T * scale + mask) @ value`` over (..., L, E), (..., S, E) and
    (..., S, Ev) inputs whose batch dims broadcast, as torch's.

    ``attn_mask`` broadcasts to (..., L, S): a bool mask keeps the scores where True, a
    float one is added. ``is_causal`` keeps key ``j`` for query ``i`` when ``j <= i``
    (top-left aligned). ``scale`` defaults to ``1 / sqrt(E)``; ``enable_gqa`` repeats the
    key and value heads (dim -3) to the query's number of heads. A query whose keys are all
    masked gets zeros. Computed in blocks of ``BLOCK`` keys with an online softmax (see
    the module's doc).

    Examples
    --------
    >>> import sharded as st
    >>> F = st.nn.functional
    >>> q = k = st.zeros(1, 2, 2)  # equal scores: the mean of the values each query sees
    >>> v = st.tensor([[[1., 2.], [3., 4.]]])
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
    [[[1.0, 2.0], [2.0, 3.0]]]
    >>> keep = st.tensor([[False, True], [False, True]])
    >>> F.scaled_dot_product_attention(q, k, v, attn_mask=keep).tolist()
    [[[3.0, 4.0], [3.0, 4.0]]]
    """
    q, k, v, mask = query, key, value, attn_mask
    _check(q, k, v, mask, dropout_p, is_causal, enable_gqa)
    if enable_gqa and q.ndim >= 3:
        if k.shape[-3] != q.shape[-3]:
            k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
        if v.shape[-3] != q.shape[-3]:
            v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)
    L, S = q.shape[-2], k.shape[-2]
    batch = _batch_shape(q, k, v)
    if mask is not None:
        try:
            np.broadcast_shapes(tuple(mask.shape), tuple(batch) + (L, S))
        except ValueError:
            raise ShapeError(
                f"scaled_dot_product_attention: attn_mask of shape {list(mask.shape)} does "
                f"not broadcast to the scores' shape {list(batch) + [L, S]}"
            ) from None
    # one batch shape for all three: the node's rule then needs no broadcasting
    # (expand's own gradient sums back to a smaller input)
    q, k, v = (
        t if tuple(t.shape[:-2]) == batch else t.expand(*batch, *t.shape[-2:]) for t in (q, k, v)
    )
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if S == 0:  # no keys: every query is fully masked, zeros (and zero gradients) as torch
        return q.sum(-1, keepdim=True) * 0.0 + v.sum(-2, keepdim=True) * 0.0
    if dropout_p > 0.0:
        return _materialized(q, k, v, mask, dropout_p, is_causal, scale)
    ring = "ring" if _ring(q, k, v, mask) else "local" if _local(q, k, v, mask) else None
    with no_grad():
        if ring:
            out, lse = apply(f"{ring}_attention", q, k, v, mask, scale, is_causal)
        else:
            out, lse = _forward(q, k, v, mask, is_causal, scale)
    ins = (q, k, v) + ((mask,) if mask is not None and mask.dtype.is_floating_point else ())
    if is_grad_enabled() and any(t.requires_grad for t in ins):
        _record(q, k, v, mask, out, lse, scale, is_causal, ring)
    return out
