"""``multi_head_attention_forward``: the computation of ``nn.MultiheadAttention``, as torch's.

Inputs are sequence-first, (L, N, E) (or unbatched (L, E)). Masks follow torch's MHA
convention, the opposite of :func:`scaled_dot_product_attention`'s: a bool
``key_padding_mask`` or ``attn_mask`` is True where attention is *not* allowed; a float
one is added. With ``need_weights`` the attention weights are computed whole (they are
returned); without, the heads go through the blocked
:func:`~sharded.nn.functional.scaled_dot_product_attention`.
"""

from __future__ import annotations

import math

from .. import dtypes as D
from ..errors import ArgumentError, DTypeError, ShapeError
from ..ops.creation.prims import zeros
from ..ops.elementwise.prims.selection import where
from ..ops.shape.prims.joining import cat
from ._activation import softmax
from ._attention import scaled_dot_product_attention

__all__ = ["multi_head_attention_forward"]


def _canonical_mask(mask, name, dtype):
    """A bool mask (True = masked out) as a float one of ``dtype`` (-inf where True)."""
    if mask is None:
        return None
    if mask.dtype == D.bool_:
        return where(mask, float("-inf"), zeros(tuple(mask.shape), dtype=dtype))
    if not mask.dtype.is_floating_point:
        raise DTypeError(f"only bool and floating types of {name} are supported, got {mask.dtype}")
    return mask


def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-D) or not (2-D), with torch's rules."""
    if query.ndim not in (2, 3):
        raise ShapeError(
            f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
            "query tensor"
        )
    batched = query.ndim == 3
    want = query.ndim
    if key.ndim != want or value.ndim != want:
        raise ShapeError(
            f"For {'' if batched else 'un'}batched ({want}-D) `query`, expected `key` and "
            f"`value` to be {want}-D but found {key.ndim}-D and {value.ndim}-D tensors "
            "respectively"
        )
    if key_padding_mask is not None and key_padding_mask.ndim != want - 1:
        raise ShapeError(
            f"For {want}-D `query`, expected `key_padding_mask` to be `None` or {want - 1}-D "
            f"but found {key_padding_mask.ndim}-D tensor instead"
        )
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise ShapeError(
            f"expected `attn_mask` to be `None`, 2-D or 3-D but found {attn_mask.ndim}-D "
            "tensor instead"
        )
    if not batched and attn_mask is not None and attn_mask.ndim == 3:
        want_shape = (num_heads, query.shape[0], key.shape[0])
        if tuple(attn_mask.shape) != want_shape:
            raise ShapeError(
                f"Expected `attn_mask` shape to be {want_shape} but got {tuple(attn_mask.shape)}"
            )
    return batched


def _in_projection(query, key, value, w, b, separate):
    """q, k, v: each input through its third of the packed weight (or its own weight)."""
    E = query.shape[-1]
    ws = separate if separate is not None else tuple(w.chunk(3)) if w is not None else None
    if ws is None or any(x is None for x in ws):
        raise ArgumentError("multi_head_attention_forward: the in-projection weights are None")
    bs = tuple(b.chunk(3)) if b is not None else (None,) * 3
    out = []
    for x, wi, bi, name in zip((query, key, value), ws, bs, "qkv"):
        if tuple(wi.shape) != (E, x.shape[-1]):
            raise ShapeError(
                f"expecting {name}_proj_weight of shape {(E, x.shape[-1])}, got {tuple(wi.shape)}"
            )
        y = x @ wi.t()
        out.append(y if bi is None else y + bi)
    return out


def _pad1(t):
    """One more key: a zero column at the end of a mask (torch's ``pad(mask, (0, 1))``)."""
    return cat([t, zeros(tuple(t.shape[:-1]) + (1,), dtype=t.dtype)], -1)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """Multi-head attention of (L, N, E) ``query`` over (S, N, kdim) ``key`` and (S, N,
    vdim) ``value`` (or unbatched (L, E)...): returns ``(output, weights)``, ``weights``
    None unless ``need_weights`` (then (N, L, S) averaged over heads, or (N, H, L, S)).
    torch's function, argument for argument (see the module's doc for the masks).

    Examples
    --------
    >>> import sharded as st
    >>> E = 4
    >>> w, b = st.ones(3 * E, E) * 0.1, st.zeros(3 * E)
    >>> x = st.ones(3, 2, E)
    >>> out, weights = st.nn.functional.multi_head_attention_forward(
    ...     x, x, x, E, 2, w, b, None, None, False, 0.0, st.eye(E), None)
    >>> out.shape, weights.shape
    (sharded.Size([3, 2, 4]), sharded.Size([2, 3, 3]))
    >>> [round(v, 4) for v in weights[0, 0].tolist()]
    [0.3333, 0.3333, 0.3333]
    """
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise ArgumentError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone: scaled_dot_product_attention's causal mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise ShapeError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ArgumentError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if tuple(key.shape[:2]) != tuple(value.shape[:2]) or (
        not use_separate_proj_weight and tuple(key.shape) != tuple(value.shape)
    ):
        raise ShapeError(
            f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
        )
    sep = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, sep)
    if attn_mask is not None:
        want = (tgt_len, src_len) if attn_mask.ndim == 2 else (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise ShapeError(
                f"The shape of the {attn_mask.ndim}D attn_mask is {tuple(attn_mask.shape)}, "
                f"but should be {want}."
            )
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise ArgumentError("bias cannot be added to static key or static value")
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask = None if attn_mask is None else _pad1(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad1(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise ArgumentError("bias_k and bias_v must both be given or both be None")
    heads = bsz * num_heads
    q = q.reshape(tgt_len, heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], heads, head_dim).transpose(0, 1) if static_k is None else static_k
    v = v.reshape(v.shape[0], heads, head_dim).transpose(0, 1) if static_v is None else static_v
    for name, t in (("static_k", static_k), ("static_v", static_v)):
        if t is not None and (t.shape[0] != heads or t.shape[2] != head_dim):
            raise ShapeError(
                f"expecting {name} of shape ({heads}, *, {head_dim}), got {tuple(t.shape)}"
            )
    if add_zero_attn:
        k = cat([k, zeros((heads, 1, head_dim), dtype=k.dtype)], 1)
        v = cat([v, zeros((heads, 1, head_dim), dtype=v.dtype)], 1)
        attn_mask = None if attn_mask is None else _pad1(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad1(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise ShapeError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        from ._basic import dropout, linear

        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        weights = softmax(scores if attn_mask is None else attn_mask + scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    from ._basic import linear

    if attn_mask is not None:
        if attn_mask.shape[0] == 1:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    return (out if batched else out.squeeze(1)), None
