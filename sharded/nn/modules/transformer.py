"""Transformer layers and stacks, as torch's ``nn/modules/transformer.py``:
``TransformerEncoderLayer``, ``TransformerDecoderLayer``, ``TransformerEncoder``,
``TransformerDecoder`` and ``Transformer``, with torch's arguments and parameter names (a
torch ``state_dict`` as NumPy arrays loads with ``load_state_dict``)."""

from __future__ import annotations

import copy

import numpy as np

from ...autograd import no_grad
from ...dtypes import get_default_dtype
from ...errors import ArgumentError, ShapeError
from ...ops.creation.prims import tensor
from .. import functional as F
from .. import init
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module, Parameter
from .normalization import LayerNorm

__all__ = [
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerDecoder",
    "Transformer",
]


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise ArgumentError(f"activation should be relu/gelu or a callable, not {activation!r}")


def _clone(module):
    """An independent copy of ``module``: fresh shards for every parameter and buffer
    (torch's ``copy.deepcopy`` of a layer)."""
    new = copy.copy(module)
    d = new.__dict__
    for kind in ("_parameters", "_buffers", "_modules"):
        d[kind] = type(d[kind])()
    for name, p in module._parameters.items():
        d["_parameters"][name] = d[name] = (
            None if p is None else Parameter(p.detach().clone(), p.requires_grad)
        )
    for name, b in module._buffers.items():
        d["_buffers"][name] = d[name] = None if b is None else b.clone()
    for name, m in module._modules.items():
        d["_modules"][name] = d[name] = None if m is None else _clone(m)
    return new


def _causal(is_causal, mask, size):
    """torch's ``_detect_is_causal_mask``: an explicit hint wins, else whether ``mask`` is
    the square causal mask."""
    if is_causal is not None:
        return bool(is_causal)
    if mask is None or tuple(mask.shape) != (size, size):
        return False
    m, want = mask.numpy(), np.triu(np.ones((size, size), bool), 1)
    return m.dtype != bool and bool((np.isneginf(m) == want).all() and (m[~want] == 0).all())


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (``linear1``, activation, ``linear2``),
    each with dropout, a residual and a LayerNorm (``norm1``/``norm2``: after the residual,
    or before the block with ``norm_first``). Inputs (S, N, E), or (N, S, E) with
    ``batch_first``.

    Examples
    --------
    >>> import sharded as st
    >>> layer = st.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(st.randn(3, 5, 8)).shape
    sharded.Size([3, 5, 8])
    """

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation=F.relu,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention to ``memory`` (``multihead_attn``) and a
    feed-forward block, each with dropout, a residual and a LayerNorm (``norm1``-``norm3``,
    after the residual or, with ``norm_first``, before the block).

    Examples
    --------
    >>> import sharded as st
    >>> layer = st.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> layer(st.randn(4, 3, 8), st.randn(5, 3, 8)).shape
    sharded.Size([4, 3, 8])
    """

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation=F.relu,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1, self.dropout2, self.dropout3 = (Dropout(dropout) for _ in range(3))
        self.activation = _activation(activation)

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=False,
        memory_is_causal=False,
    ):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(
            x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        )
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (``layers.0`` ...), then ``norm`` if given.

    Examples
    --------
    >>> import sharded as st
    >>> layer = st.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    >>> enc = st.nn.TransformerEncoder(layer, num_layers=2)
    >>> len(enc.layers), enc(st.randn(5, 3, 8)).shape
    (2, sharded.Size([5, 3, 8]))
    """

    def __init__(
        self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True
    ):
        super().__init__()
        self.layers = ModuleList([_clone(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm
        # nested tensors are torch's fast path only: the arguments are accepted and kept
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        seq = src.shape[1 if getattr(self.layers[0].self_attn, "batch_first", False) else 0]
        causal = _causal(is_causal, mask, seq) if src.ndim == 3 else bool(is_causal)
        out = src
        for mod in self.layers:
            out = mod(
                out, src_mask=mask, is_causal=causal, src_key_padding_mask=src_key_padding_mask
            )
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, then ``norm`` if given.

    Examples
    --------
    >>> import sharded as st
    >>> layer = st.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> dec = st.nn.TransformerDecoder(layer, num_layers=2)
    >>> dec(st.randn(4, 3, 8), st.randn(5, 3, 8)).shape
    sharded.Size([4, 3, 8])
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([_clone(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        seq = tgt.shape[1 if getattr(self.layers[0].self_attn, "batch_first", False) else 0]
        causal = _causal(tgt_is_causal, tgt_mask, seq) if tgt.ndim == 3 else bool(tgt_is_causal)
        out = tgt
        for mod in self.layers:
            out = mod(
                out,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=causal,
                memory_is_causal=memory_is_causal,
            )
        return out if self.norm is None else self.norm(out)


class Transformer(Module):
    """An encoder of ``num_encoder_layers`` layers and a decoder of ``num_decoder_layers``,
    each stack closed by a LayerNorm (``encoder.norm``, ``decoder.norm``), torch's
    ``nn.Transformer``; weights of 2 or more dims start Glorot uniform.

    Examples
    --------
    >>> import sharded as st
    >>> model = st.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                           num_decoder_layers=1, dim_feedforward=16)
    >>> mask = st.nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(st.randn(5, 3, 8), st.randn(4, 3, 8), tgt_mask=mask).shape
    sharded.Size([4, 3, 8])
    >>> mask[0].tolist()
    [0.0, -inf, -inf, -inf]
    """

    def __init__(
        self,
        d_model=512,
        nhead=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        dim_feedforward=2048,
        dropout=0.1,
        activation=F.relu,
        custom_encoder=None,
        custom_decoder=None,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        layer = dict(
            dim_feedforward=dim_feedforward,
            dropout=dropout,
            activation=activation,
            layer_norm_eps=layer_norm_eps,
            batch_first=batch_first,
            norm_first=norm_first,
            bias=bias,
            **kw,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
            )
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        with no_grad():
            for p in self.parameters():
                if p.ndim > 1:
                    init.xavier_uniform_(p)

    def forward(
        self,
        src,
        tgt,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        src_is_causal=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        batched = src.ndim == 3
        b = 0 if self.batch_first else 1
        if batched and src.shape[b] != tgt.shape[b]:
            raise ShapeError(
                f"the batch number of src and tgt must be equal, got {src.shape[b]} and "
                f"{tgt.shape[b]}"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ShapeError(
                f"the feature number of src and tgt must be equal to d_model {self.d_model}, "
                f"got {src.shape[-1]} and {tgt.shape[-1]}"
            )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere (torch's).

        Examples
        --------
        >>> import sharded as st
        >>> st.nn.Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        m = np.triu(np.full((sz, sz), -np.inf), 1)
        return tensor(m, dtype=dtype or get_default_dtype(), device=device or "cpu")
