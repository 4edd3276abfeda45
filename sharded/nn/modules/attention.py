"""``MultiheadAttention`` (torch keeps it in ``nn/modules/activation.py``, which
re-exports it from here)."""

from __future__ import annotations

from ...autograd import no_grad
from ...errors import ArgumentError
from ...ops.creation.prims import empty
from .. import functional as F
from .. import init
from .linear import Linear
from .module import Module, Parameter
from .utils import _rep

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads over ``embed_dim`` features, with torch's
    parameters: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E,), or
    ``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` when ``kdim`` or ``vdim``
    differ from ``embed_dim``; ``out_proj`` (a Linear); ``bias_k``/``bias_v`` (1, 1, E)
    with ``add_bias_kv``. Inputs are (L, N, E), or (N, L, E) with ``batch_first``, or
    unbatched (L, E). ``forward`` returns ``(output, weights)`` as torch's (``weights``
    None unless ``need_weights``); see
    :func:`~sharded.nn.functional.multi_head_attention_forward` for the masks.

    Examples
    --------
    >>> import sharded as st
    >>> mha = st.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = st.randn(3, 5, 8)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (sharded.Size([3, 5, 8]), sharded.Size([3, 5, 5]))
    >>> sorted(n for n, _ in mha.named_parameters())
    ['in_proj_bias', 'in_proj_weight', 'out_proj.bias', 'out_proj.weight']
    """

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ArgumentError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first, self.add_zero_attn = batch_first, add_zero_attn
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ArgumentError(f"embed_dim {embed_dim} must be divisible by num_heads {num_heads}")

        def param(*shape):
            return Parameter(_rep(empty, shape, dtype, device))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k, self.bias_v = param(1, 1, embed_dim), param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """torch's initialisation: Glorot uniform weights, zero biases, Glorot normal
        ``bias_k``/``bias_v``."""
        with no_grad():
            if self._qkv_same_embed_dim:
                init.xavier_uniform_(self.in_proj_weight)
            else:
                for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                    init.xavier_uniform_(w)
            if self.in_proj_bias is not None:
                init.constant_(self.in_proj_bias, 0.0)
                init.constant_(self.out_proj.bias, 0.0)
            for b in (self.bias_k, self.bias_v):
                if b is not None:
                    init.xavier_normal_(b)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
