from collections.abc import Iterator
from typing import Any

from typing_extensions import Self

from sharded.nn import functional as functional
from sharded.nn import init as init
from sharded.nn import utils as utils
from sharded.tensor import ShardedTensor

class Module:
    """Base class of layers and models: assign Parameters and Modules as attributes."""

    def __call__(self, *args, **kwargs) -> ShardedTensor: ...
    def __delattr__(self, name) -> None: ...
    def __init__(self) -> None: ...
    def __repr__(self) -> str: ...
    def __setattr__(self, name, value) -> None: ...
    def add_module(self, name, module) -> None:
        """Register child ``module`` under ``name``."""
    def apply(self, fn) -> Self:
        """Call ``fn`` on every submodule (children first) and on ``self``; returns ``self``."""
    def buffers(self, recurse=...) -> Iterator[Any]: ...
    def children(self) -> Iterator[Any]: ...
    def double(self) -> Any: ...
    def eval(self) -> Any: ...
    def extra_repr(self) -> str: ...
    def float(self) -> Any: ...
    def forward(self, *args, **kwargs) -> ShardedTensor: ...
    def get_buffer(self, target) -> Any:
        """The buffer at dotted path ``target``."""
    def get_parameter(self, target) -> Any:
        """The parameter at dotted path ``target``."""
    def get_submodule(self, target) -> Any:
        """The submodule at dotted path ``target`` (``""`` is ``self``)."""
    def half(self) -> Any: ...
    def load_state_dict(self, state_dict, strict=...) -> Any:
        """Copy ``state_dict``'s tensors into the parameters of the same names, in place (each
        keeps its own layout, device and dtype). Returns ``(missing_keys, unexpected_keys)``;
        with ``strict`` either is a :class:`StateDictError`, and so is a shape mismatch
        always, raised before any parameter changes."""
    def modules(self) -> Iterator[Any]: ...
    def named_buffers(self, prefix=..., recurse=...) -> Iterator[Any]:
        """``(name, buffer)`` pairs, dotted names as in ``state_dict``."""
    def named_children(self) -> Iterator[Any]: ...
    def named_modules(self, memo=..., prefix=...) -> Iterator[Any]: ...
    def named_parameters(self, prefix=..., recurse=...) -> Iterator[Any]: ...
    def parameters(self, recurse=...) -> Iterator[Any]: ...
    def register_buffer(self, name, tensor, persistent=...) -> None:
        """Register ``tensor`` (or None) as buffer ``name``: state that is not a parameter, such
        as BatchNorm's running statistics; it follows ``to()`` and, when ``persistent``,
        appears in ``state_dict``."""
    def register_module(self, name, module) -> None:
        """Alias of :meth:`add_module` (torch's)."""
    def register_parameter(self, name, param) -> None:
        """Register ``param`` (a :class:`Parameter` or None) under ``name``."""
    def requires_grad_(self, requires_grad=...) -> Self:
        """Set ``requires_grad`` of every parameter (freeze with ``False``); returns ``self``."""
    def state_dict(self, destination=..., prefix=..., keep_vars=...) -> Any:
        """Every parameter, then every persistent buffer, by dotted name, in registration order
        (torch's ``state_dict``): detached tensors sharing the parameters' shards unless
        ``keep_vars``."""
    def to(self, *args, **kwargs) -> Any:
        """Convert every parameter (and gradient) and buffer in place, e.g.
        ``model.to(st.float64)`` or ``model.to("cuda")``. As in torch, a dtype applies to
        floating-point tensors only (an integer counter stays integer)."""
    def train(self, mode=...) -> Self: ...
    def zero_grad(self, set_to_none=...) -> None: ...

class AvgPool1d(Module):
    """1-D average pooling."""

    kernel_size: Any
    stride: Any
    padding: Any
    ceil_mode: Any
    count_include_pad: Any
    def __init__(
        self, kernel_size, stride=..., padding=..., ceil_mode=..., count_include_pad=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Bilinear(Module):
    """``y = x1^T A x2 + b`` with ``A`` (out, in1, in2) and ``b`` (out,) initialised uniformly
    in ``±1/sqrt(in1_features)`` (torch's default), replicated."""

    in1_features: Any
    in2_features: Any
    out_features: Any
    weight: Any
    bias: Any
    def __init__(
        self, in1_features, in2_features, out_features, bias=..., device=..., dtype=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input1, input2) -> ShardedTensor: ...

class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    alpha: Any
    inplace: Any
    def __init__(self, alpha=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class ChannelShuffle(Module):
    """(N, C, *) with its channels seen as (groups, C / groups) and transposed."""

    groups: Any
    def __init__(self, groups) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``."""

    dim: Any
    eps: Any
    def __init__(self, dim=..., eps=...) -> None: ...
    def forward(self, x1, x2) -> ShardedTensor: ...

class ELU(Module):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""

    alpha: Any
    inplace: Any
    def __init__(self, alpha=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``, initialised from
    N(0, 1) (the ``padding_idx`` row zero, and it gets no gradient)."""

    num_embeddings: Any
    embedding_dim: Any
    padding_idx: Any
    max_norm: Any
    norm_type: Any
    scale_grad_by_freq: Any
    sparse: Any
    weight: Any
    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=...,
        max_norm=...,
        norm_type=...,
        scale_grad_by_freq=...,
        sparse=...,
        _weight=...,
        _freeze=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...
    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=...,
        padding_idx=...,
        max_norm=...,
        norm_type=...,
        scale_grad_by_freq=...,
        sparse=...,
    ) -> Any:
        """An Embedding whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""

class EmbeddingBag(Module):
    """Sums, means or maxima (``mode``) of bags of rows of a ``num_embeddings`` by
    ``embedding_dim`` table initialised from N(0, 1) (the ``padding_idx`` row zero);
    ``forward(input, offsets=None, per_sample_weights=None)`` as ``F.embedding_bag``."""

    num_embeddings: Any
    embedding_dim: Any
    mode: Any
    include_last_offset: Any
    padding_idx: Any
    max_norm: Any
    norm_type: Any
    scale_grad_by_freq: Any
    sparse: Any
    weight: Any
    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        max_norm=...,
        norm_type=...,
        scale_grad_by_freq=...,
        mode=...,
        sparse=...,
        _weight=...,
        include_last_offset=...,
        padding_idx=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, offsets=..., per_sample_weights=...) -> ShardedTensor: ...
    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=...,
        max_norm=...,
        norm_type=...,
        scale_grad_by_freq=...,
        mode=...,
        sparse=...,
        include_last_offset=...,
        padding_idx=...,
    ) -> Any:
        """An EmbeddingBag whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""

class Flatten(Module):
    """``input.flatten(start_dim, end_dim)``, by default keeping the batch dim."""

    start_dim: Any
    end_dim: Any
    def __init__(self, start_dim=..., end_dim=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Fold(Module):
    """Combine sliding blocks (N, C kH kW, L) into (N, C, *output_size), summing overlaps."""

    output_size: Any
    kernel_size: Any
    dilation: Any
    padding: Any
    stride: Any
    def __init__(self, output_size, kernel_size, dilation=..., padding=..., stride=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class GELU(Module):
    """Gaussian error linear unit, exact (``approximate='none'``) or tanh-approximated."""

    approximate: Any
    def __init__(self, approximate=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class GLU(Module):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves of ``dim``."""

    dim: Any
    def __init__(self, dim=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class GroupNorm(Module):
    """Normalize (N, C, *) inputs over groups of ``num_channels // num_groups`` channels, then
    scale and shift each channel by ``weight`` (ones) and ``bias`` (zeros) when ``affine``."""

    num_groups: Any
    num_channels: Any
    eps: Any
    affine: Any
    weight: Any
    bias: Any
    def __init__(
        self, num_groups, num_channels, eps=..., affine=..., device=..., dtype=..., *, bias=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0."""

    lambd: Any
    def __init__(self, lambd=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Hardtanh(Module):
    """``clamp(x, min_val, max_val)`` (``min_value``/``max_value`` are torch's deprecated
    spellings)."""

    min_val: Any
    max_val: Any
    inplace: Any
    def __init__(
        self, min_val=..., max_val=..., inplace=..., min_value=..., max_value=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as in torch)."""

    def __init__(self, *args, **kwargs) -> None: ...
    def forward(self, input) -> ShardedTensor: ...

class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims, then scale by ``weight`` (ones)
    and shift by ``bias`` (zeros) when ``elementwise_affine``."""

    normalized_shape: Any
    eps: Any
    elementwise_affine: Any
    weight: Any
    bias: Any
    def __init__(
        self, normalized_shape, eps=..., elementwise_affine=..., bias=..., device=..., dtype=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class LeakyReLU(Module):
    """``x`` where positive, else ``negative_slope * x``."""

    negative_slope: Any
    inplace: Any
    def __init__(self, negative_slope=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Linear(Module):
    """``y = x @ W.T + b`` with ``W`` (out, in) and ``b`` (out,) initialised uniformly in
    ``±1/sqrt(in_features)`` (torch's default), replicated on every worker unless ``layout=``
    says otherwise."""

    in_features: Any
    out_features: Any
    weight: Any
    bias: Any
    def __init__(
        self, in_features, out_features, bias=..., device=..., dtype=..., layout=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, x) -> ShardedTensor: ...

class LocalResponseNorm(Module):
    """Each channel divided by ``(k + alpha / size * sum of x² over size neighbouring channels)
    ** beta`` (see :func:`sharded.nn.functional.local_response_norm`)."""

    size: Any
    alpha: Any
    beta: Any
    k: Any
    def __init__(self, size, alpha=..., beta=..., k=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class LogSoftmax(Module):
    """Log of the softmax along ``dim`` (stable)."""

    dim: Any
    def __init__(self, dim=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class ModuleDict(Module):
    """An ordered dict of modules whose parameters the owner sees."""

    def __contains__(self, key) -> bool: ...
    def __delitem__(self, key) -> None: ...
    def __getitem__(self, key) -> Any: ...
    def __init__(self, modules=...) -> None: ...
    def __iter__(self) -> Any: ...
    def __len__(self) -> int: ...
    def __setitem__(self, key, module) -> None: ...
    def clear(self) -> None: ...
    def forward(self, *args, **kwargs) -> ShardedTensor: ...
    def items(self) -> Any: ...
    def keys(self) -> Any: ...
    def pop(self, key) -> Any: ...
    def update(self, modules) -> None: ...
    def values(self) -> Any: ...

class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads over ``embed_dim`` features, with torch's parameters:
    ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E,), or
    ``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` when ``kdim`` or ``vdim`` differ
    from ``embed_dim``; ``out_proj`` (a Linear); ``bias_k``/``bias_v`` (1, 1, E) with
    ``add_bias_kv``. Inputs are (L, N, E), or (N, L, E) with ``batch_first``, or unbatched
    (L, E). ``forward`` returns ``(output, weights)`` as torch's (``weights`` None unless
    ``need_weights``); see :func:`~sharded.nn.functional.multi_head_attention_forward` for
    the masks."""

    embed_dim: Any
    num_heads: Any
    dropout: Any
    kdim: Any
    vdim: Any
    batch_first: Any
    add_zero_attn: Any
    head_dim: Any
    in_proj_weight: Any
    q_proj_weight: Any
    k_proj_weight: Any
    v_proj_weight: Any
    in_proj_bias: Any
    out_proj: Any
    bias_k: Any
    bias_v: Any
    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=...,
        bias=...,
        add_bias_kv=...,
        add_zero_attn=...,
        kdim=...,
        vdim=...,
        batch_first=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=...,
        need_weights=...,
        attn_mask=...,
        average_attn_weights=...,
        is_causal=...,
    ) -> ShardedTensor: ...

class PReLU(Module):
    """Leaky ReLU with a learned slope: one shared (``num_parameters=1``) or one per channel
    (dim 1), initialised to ``init`` and replicated on every worker."""

    num_parameters: Any
    init: Any
    weight: Any
    def __init__(self, num_parameters=..., init=..., device=..., dtype=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...
    def reset_parameters(self) -> None: ...

class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dim."""

    norm: Any
    eps: Any
    keepdim: Any
    def __init__(self, p=..., eps=..., keepdim=...) -> None: ...
    def forward(self, x1, x2) -> ShardedTensor: ...

class Parameter(ShardedTensor):
    """A tensor that a :class:`Module` registers as a parameter (a leaf requiring grad). It
    shares the shards of ``data``."""

    def __init__(self, data=..., requires_grad=...) -> None: ...
    def __repr__(self) -> str: ...

class ParameterDict(Module):
    """An ordered dict of parameters that the owner sees (plain tensors are wrapped)."""

    def __contains__(self, key) -> bool: ...
    def __delitem__(self, key) -> None: ...
    def __getitem__(self, key) -> Any: ...
    def __init__(self, parameters=...) -> None: ...
    def __iter__(self) -> Any: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...
    def __setitem__(self, key, value) -> None: ...
    def clear(self) -> None: ...
    def forward(self, *args, **kwargs) -> ShardedTensor: ...
    def get(self, key, default=...) -> Any: ...
    def items(self) -> Any: ...
    def keys(self) -> Any: ...
    def pop(self, key) -> Any: ...
    def update(self, parameters) -> None: ...
    def values(self) -> Any: ...

class ParameterList(Module):
    """A list of parameters that the owner sees (plain tensors are wrapped in Parameters)."""

    def __getitem__(self, i) -> Any: ...
    def __iadd__(self, values) -> Any: ...
    def __init__(self, values=...) -> None: ...
    def __iter__(self) -> Any: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...
    def __setitem__(self, i, value) -> None: ...
    def append(self, value) -> Self: ...
    def extend(self, values) -> Self: ...
    def extra_repr(self) -> Any: ...
    def forward(self, *args, **kwargs) -> ShardedTensor: ...

class PixelShuffle(Module):
    """(*, C r², H, W) to (*, C, H r, W r) with ``r = upscale_factor``."""

    upscale_factor: Any
    def __init__(self, upscale_factor) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class PixelUnshuffle(Module):
    """(*, C, H r, W r) to (*, C r², H, W) with ``r = downscale_factor``."""

    downscale_factor: Any
    def __init__(self, downscale_factor) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims, scaled by
    ``weight`` (ones) when ``elementwise_affine``; ``eps`` None is the input dtype's machine
    epsilon."""

    normalized_shape: Any
    eps: Any
    elementwise_affine: Any
    weight: Any
    def __init__(
        self, normalized_shape, eps=..., elementwise_affine=..., device=..., dtype=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, x) -> ShardedTensor: ...

class RNNBase(Module):
    """The stack of recurrent layers behind ``RNN``, ``LSTM`` and ``GRU`` (``mode`` is
    ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``); parameters are replicated on
    every worker and drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch's."""

    mode: Any
    input_size: Any
    hidden_size: Any
    num_layers: Any
    bias: Any
    batch_first: Any
    dropout: Any
    bidirectional: Any
    proj_size: Any
    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=...,
        bias=...,
        batch_first=...,
        dropout=...,
        bidirectional=...,
        proj_size=...,
        device=...,
        dtype=...,
    ) -> None: ...
    @property
    def all_weights(self) -> Any:
        """The parameters per layer and direction, in torch's order."""
    def extra_repr(self) -> Any: ...
    def flatten_parameters(self) -> None:
        """Nothing to do: the weights are separate tensors already (torch packs them for cuDNN)."""
    def forward(self, input, hx=...) -> ShardedTensor:
        """``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``) for ``input`` of shape ``(T, B,
        input_size)`` (``(B, T, input_size)`` when ``batch_first``), ``(T, input_size)``
        unbatched, or a ``PackedSequence`` (then ``output`` is one too)."""
    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

class RNNCellBase(Module):
    """One step of a recurrent layer (``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``,
    torch's names); ``num_chunks`` gates."""

    input_size: Any
    hidden_size: Any
    bias: Any
    weight_ih: Any
    weight_hh: Any
    bias_ih: Any
    bias_hh: Any
    def __init__(
        self, input_size, hidden_size, bias, num_chunks, device=..., dtype=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, hx=...) -> ShardedTensor: ...
    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn in ``[lower, upper]`` while training, their mean in
    eval."""

    lower: Any
    upper: Any
    inplace: Any
    def __init__(self, lower=..., upper=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, x) -> ShardedTensor: ...

class Softmax(Module):
    """Softmax along ``dim``."""

    dim: Any
    def __init__(self, dim=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input."""

    def __init__(self, *args, **kwargs) -> None: ...
    def forward(self, input) -> ShardedTensor: ...

class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    dim: Any
    def __init__(self, dim=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Softplus(Module):
    """``log(1 + exp(beta x)) / beta`` (linear above ``threshold``)."""

    beta: Any
    threshold: Any
    def __init__(self, beta=..., threshold=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Softshrink(Module):
    """``x`` shrunk towards 0 by ``lambd`` (0 inside ``[-lambd, lambd]``)."""

    lambd: Any
    def __init__(self, lambd=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, x) -> ShardedTensor: ...

class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    threshold: Any
    value: Any
    inplace: Any
    def __init__(self, threshold, value, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Transformer(Module):
    """An encoder of ``num_encoder_layers`` layers and a decoder of ``num_decoder_layers``, each
    stack closed by a LayerNorm (``encoder.norm``, ``decoder.norm``), torch's
    ``nn.Transformer``; weights of 2 or more dims start Glorot uniform."""

    encoder: Any
    decoder: Any
    d_model: Any
    nhead: Any
    batch_first: Any
    def __init__(
        self,
        d_model=...,
        nhead=...,
        num_encoder_layers=...,
        num_decoder_layers=...,
        dim_feedforward=...,
        dropout=...,
        activation=...,
        custom_encoder=...,
        custom_decoder=...,
        layer_norm_eps=...,
        batch_first=...,
        norm_first=...,
        bias=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def forward(
        self,
        src,
        tgt,
        src_mask=...,
        tgt_mask=...,
        memory_mask=...,
        src_key_padding_mask=...,
        tgt_key_padding_mask=...,
        memory_key_padding_mask=...,
        src_is_causal=...,
        tgt_is_causal=...,
        memory_is_causal=...,
    ) -> ShardedTensor: ...
    @staticmethod
    def generate_square_subsequent_mask(sz, device=..., dtype=...) -> Any:
        """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere (torch's)."""

class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, then ``norm`` if given."""

    layers: Any
    num_layers: Any
    norm: Any
    def __init__(self, decoder_layer, num_layers, norm=...) -> None: ...
    def forward(
        self,
        tgt,
        memory,
        tgt_mask=...,
        memory_mask=...,
        tgt_key_padding_mask=...,
        memory_key_padding_mask=...,
        tgt_is_causal=...,
        memory_is_causal=...,
    ) -> ShardedTensor: ...

class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention to ``memory`` (``multihead_attn``) and a
    feed-forward block, each with dropout, a residual and a LayerNorm (``norm1``-``norm3``,
    after the residual or, with ``norm_first``, before the block)."""

    self_attn: Any
    multihead_attn: Any
    linear1: Any
    dropout: Any
    linear2: Any
    norm_first: Any
    norm1: Any
    norm2: Any
    norm3: Any
    dropout1: Any
    dropout2: Any
    dropout3: Any
    activation: Any
    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=...,
        dropout=...,
        activation=...,
        layer_norm_eps=...,
        batch_first=...,
        norm_first=...,
        bias=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def forward(
        self,
        tgt,
        memory,
        tgt_mask=...,
        memory_mask=...,
        tgt_key_padding_mask=...,
        memory_key_padding_mask=...,
        tgt_is_causal=...,
        memory_is_causal=...,
    ) -> ShardedTensor: ...

class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (``layers.0`` ...), then ``norm`` if given."""

    layers: Any
    num_layers: Any
    norm: Any
    enable_nested_tensor: Any
    mask_check: Any
    def __init__(
        self, encoder_layer, num_layers, norm=..., enable_nested_tensor=..., mask_check=...
    ) -> None: ...
    def forward(self, src, mask=..., src_key_padding_mask=..., is_causal=...) -> ShardedTensor: ...

class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (``linear1``, activation, ``linear2``), each
    with dropout, a residual and a LayerNorm (``norm1``/``norm2``: after the residual, or
    before the block with ``norm_first``). Inputs (S, N, E), or (N, S, E) with
    ``batch_first``."""

    self_attn: Any
    linear1: Any
    dropout: Any
    linear2: Any
    norm_first: Any
    norm1: Any
    norm2: Any
    dropout1: Any
    dropout2: Any
    activation: Any
    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=...,
        dropout=...,
        activation=...,
        layer_norm_eps=...,
        batch_first=...,
        norm_first=...,
        bias=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def forward(
        self, src, src_mask=..., src_key_padding_mask=..., is_causal=...
    ) -> ShardedTensor: ...

class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size`` (one entry may be -1)."""

    dim: Any
    unflattened_size: Any
    def __init__(self, dim, unflattened_size) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Unfold(Module):
    """Extract sliding blocks: (N, C, H, W) to (N, C kH kW, L)."""

    kernel_size: Any
    dilation: Any
    padding: Any
    stride: Any
    def __init__(self, kernel_size, dilation=..., padding=..., stride=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Upsample(Module):
    """Resize to ``size`` or by ``scale_factor`` with ``F.interpolate``'s modes."""

    name: Any
    size: Any
    scale_factor: Any
    mode: Any
    align_corners: Any
    recompute_scale_factor: Any
    def __init__(
        self, size=..., scale_factor=..., mode=..., align_corners=..., recompute_scale_factor=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AdaptiveAvgPool1d(Module):
    """Average pooling to a fixed length."""

    output_size: Any
    return_indices: Any
    def __init__(self, output_size) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed (H, W) (``None`` keeps a size)."""

    output_size: Any
    return_indices: Any
    def __init__(self, output_size) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AdaptiveAvgPool3d(Module):
    """Average pooling to a fixed (D, H, W) (``None`` keeps a size)."""

    output_size: Any
    return_indices: Any
    def __init__(self, output_size) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AdaptiveMaxPool1d(Module):
    """Max pooling to a fixed length."""

    output_size: Any
    return_indices: Any
    def __init__(self, output_size, return_indices=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed (H, W)."""

    output_size: Any
    return_indices: Any
    def __init__(self, output_size, return_indices=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AdaptiveMaxPool3d(Module):
    """Max pooling to a fixed (D, H, W)."""

    output_size: Any
    return_indices: Any
    def __init__(self, output_size, return_indices=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AlphaDropout(Module):
    """Alpha dropout for self-normalizing (selu) networks while training: dropped elements take
    selu's negative saturation and an affine map keeps the mean and variance."""

    p: Any
    inplace: Any
    def __init__(self, p=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AvgPool2d(Module):
    """2-D average pooling."""

    kernel_size: Any
    stride: Any
    padding: Any
    ceil_mode: Any
    count_include_pad: Any
    divisor_override: Any
    def __init__(
        self,
        kernel_size,
        stride=...,
        padding=...,
        ceil_mode=...,
        count_include_pad=...,
        divisor_override=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class AvgPool3d(Module):
    """3-D average pooling (``count_include_pad``, ``divisor_override`` as 2-D)."""

    kernel_size: Any
    stride: Any
    padding: Any
    ceil_mode: Any
    count_include_pad: Any
    divisor_override: Any
    def __init__(
        self,
        kernel_size,
        stride=...,
        padding=...,
        ceil_mode=...,
        count_include_pad=...,
        divisor_override=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class BCEWithLogitsLoss(Module):
    """Binary cross entropy of logits (stable), with ``weight`` and ``pos_weight``."""

    reduction: Any
    def __init__(
        self, weight=..., size_average=..., reduce=..., reduction=..., pos_weight=...
    ) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class BatchNorm1d(Module):
    """Batch normalization of (N, C) or (N, C, L) inputs over each channel. Training uses the
    batch statistics and updates ``running_mean``/``running_var`` (exponential average with
    ``momentum``, or the cumulative average when ``momentum=None``) and
    ``num_batches_tracked``; ``eval()`` uses the running statistics."""

    num_features: Any
    eps: Any
    momentum: Any
    affine: Any
    track_running_stats: Any
    weight: Any
    bias: Any
    def __init__(
        self,
        num_features,
        eps=...,
        momentum=...,
        affine=...,
        track_running_stats=...,
        device=...,
        dtype=...,
        *,
        bias=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...
    def reset_running_stats(self) -> None: ...

class CTCLoss(Module):
    """Connectionist temporal classification loss of (T, N, C) log-probabilities;
    ``forward(log_probs, targets, input_lengths, target_lengths)``."""

    blank: Any
    zero_infinity: Any
    reduction: Any
    def __init__(self, blank=..., reduction=..., zero_infinity=...) -> None: ...
    def forward(self, log_probs, targets, input_lengths, target_lengths) -> ShardedTensor: ...

class Conv1d(Module):
    """1-D convolution layer: weight (out, in/groups, k), bias (out,)."""

    in_channels: Any
    out_channels: Any
    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    groups: Any
    padding_mode: Any
    transposed: Any
    output_padding: Any
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=...,
        padding=...,
        dilation=...,
        groups=...,
        bias=...,
        padding_mode=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Conv2d(Module):
    """2-D convolution layer: weight (out, in/groups, kH, kW) and bias (out,) initialised
    uniformly in ``+-1/sqrt(in/groups * kH * kW)`` (torch's default), replicated."""

    in_channels: Any
    out_channels: Any
    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    groups: Any
    padding_mode: Any
    transposed: Any
    output_padding: Any
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=...,
        padding=...,
        dilation=...,
        groups=...,
        bias=...,
        padding_mode=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Conv3d(Module):
    """3-D convolution layer: weight (out, in/groups, kD, kH, kW) and bias (out,), initialised
    as torch's, replicated; ``padding_mode`` 'zeros', 'reflect', 'replicate' or 'circular'."""

    in_channels: Any
    out_channels: Any
    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    groups: Any
    padding_mode: Any
    transposed: Any
    output_padding: Any
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=...,
        padding=...,
        dilation=...,
        groups=...,
        bias=...,
        padding_mode=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class CosineEmbeddingLoss(Module):
    """``1 - cos(x1, x2)`` for ``target`` 1, ``max(0, cos(x1, x2) - margin)`` for -1."""

    margin: Any
    reduction: Any
    def __init__(self, margin=..., size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input1, input2, target) -> ShardedTensor: ...

class Dropout(Module):
    """Zero elements with probability ``p`` while training, scaling the rest by ``1 / (1 - p)``;
    the identity in ``eval()`` mode. Masks are counter-based: the same for any sharding after
    ``st.manual_seed``."""

    p: Any
    inplace: Any
    def __init__(self, p=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Dropout2d(Module):
    """Zero whole channels (the last two dims together) with probability ``p`` while training,
    scaling the rest by ``1 / (1 - p)`` (the arguments and checks of
    :class:`~sharded.nn.Dropout`)."""

    p: Any
    inplace: Any
    def __init__(self, p=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Dropout3d(Module):
    """Zero whole channels (the last three dims together) of (C, D, H, W) or (N, C, D, H, W)
    inputs with probability ``p`` while training, scaling the rest by ``1 / (1 - p)``."""

    p: Any
    inplace: Any
    def __init__(self, p=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class FeatureAlphaDropout(Module):
    """:class:`AlphaDropout` of whole channels (one draw per (N, C) entry)."""

    p: Any
    inplace: Any
    def __init__(self, p=..., inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class FractionalMaxPool2d(Module):
    """2-D fractional max pooling (see ``st.nn.functional.fractional_max_pool2d``): windows of
    ``kernel_size`` at pseudo-random starts, to ``output_size`` or ``output_ratio`` (in (0,
    1)) of the input's size; ``_random_samples`` (a buffer) fixes the starts."""

    kernel_size: Any
    return_indices: Any
    output_size: Any
    output_ratio: Any
    def __init__(
        self,
        kernel_size,
        output_size=...,
        output_ratio=...,
        return_indices=...,
        _random_samples=...,
    ) -> None: ...
    def forward(self, input) -> ShardedTensor: ...

class FractionalMaxPool3d(Module):
    """3-D fractional max pooling (see ``st.nn.functional.fractional_max_pool3d``)."""

    kernel_size: Any
    return_indices: Any
    output_size: Any
    output_ratio: Any
    def __init__(
        self,
        kernel_size,
        output_size=...,
        output_ratio=...,
        return_indices=...,
        _random_samples=...,
    ) -> None: ...
    def forward(self, input) -> ShardedTensor: ...

class GRU(RNNBase):
    """Gated recurrent unit: gates ``r, z, n`` (torch's order), ``n = tanh(x W_in^T + b_in + r *
    (h W_hn^T + b_hn))``, ``h_t = (1 - z) * n + z * h_{t-1}``."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=...,
        bias=...,
        batch_first=...,
        dropout=...,
        bidirectional=...,
        device=...,
        dtype=...,
    ) -> None: ...

class GRUCell(RNNCellBase):
    """One step of :class:`GRU`."""

    def __init__(self, input_size, hidden_size, bias=..., device=..., dtype=...) -> None: ...

class GaussianNLLLoss(Module):
    """Gaussian negative log likelihood with predicted variances ``var``."""

    full: Any
    eps: Any
    reduction: Any
    def __init__(self, *, full=..., eps=..., reduction=...) -> None: ...
    def forward(self, input, target, var) -> ShardedTensor: ...

class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``."""

    inplace: Any
    def __init__(self, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Hardswish(Module):
    """``x * relu6(x + 3) / 6``."""

    inplace: Any
    def __init__(self, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class HingeEmbeddingLoss(Module):
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``."""

    margin: Any
    reduction: Any
    def __init__(self, margin=..., size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class HuberLoss(Module):
    """Huber loss with threshold ``delta``."""

    delta: Any
    reduction: Any
    def __init__(self, reduction=..., delta=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class InstanceNorm1d(Module):
    """Normalize each channel of each sample of (N, C, L) or unbatched (C, L) inputs over L;
    ``affine`` (default False) adds per-channel ``weight`` and ``bias``;
    ``track_running_stats`` (default False) keeps running statistics for ``eval()``, as
    torch's."""

    num_features: Any
    eps: Any
    momentum: Any
    affine: Any
    track_running_stats: Any
    weight: Any
    bias: Any
    def __init__(
        self,
        num_features,
        eps=...,
        momentum=...,
        affine=...,
        track_running_stats=...,
        device=...,
        dtype=...,
        *,
        bias=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...
    def reset_running_stats(self) -> None: ...

class KLDivLoss(Module):
    """KL divergence of log-probabilities ``input`` from ``target`` (``log_target``: the target
    is given as log-probabilities too)."""

    log_target: Any
    reduction: Any
    def __init__(self, size_average=..., reduce=..., reduction=..., log_target=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class L1Loss(Module):
    """Mean absolute error."""

    reduction: Any
    def __init__(self, size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class LSTM(RNNBase):
    """Long short-term memory: gates ``i, f, g, o`` (in that order in the weights, as torch's),
    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (times ``W_hr^T`` when ``proj_size
    > 0``); returns ``(output, (h_n, c_n))``."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=...,
        bias=...,
        batch_first=...,
        dropout=...,
        bidirectional=...,
        proj_size=...,
        device=...,
        dtype=...,
    ) -> None: ...

class LSTMCell(RNNCellBase):
    """One step of :class:`LSTM`; ``hx`` is ``(h, c)`` and so is the result."""

    def __init__(self, input_size, hidden_size, bias=..., device=..., dtype=...) -> None: ...

class LogSigmoid(Module):
    """``log(sigmoid(x))``, stable."""

    def __init__(self, *args, **kwargs) -> None: ...
    def forward(self, input) -> ShardedTensor: ...

class MSELoss(Module):
    """Mean squared error (``reduction`` 'mean', 'sum' or 'none')."""

    reduction: Any
    def __init__(self, size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class MarginRankingLoss(Module):
    """``max(0, -target * (x1 - x2) + margin)``."""

    margin: Any
    reduction: Any
    def __init__(self, margin=..., size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input1, input2, target) -> ShardedTensor: ...

class MaxPool1d(Module):
    """1-D max pooling."""

    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    return_indices: Any
    ceil_mode: Any
    def __init__(
        self, kernel_size, stride=..., padding=..., dilation=..., return_indices=..., ceil_mode=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class MaxPool2d(Module):
    """2-D max pooling (``stride`` defaults to ``kernel_size``)."""

    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    return_indices: Any
    ceil_mode: Any
    def __init__(
        self, kernel_size, stride=..., padding=..., dilation=..., return_indices=..., ceil_mode=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class MaxPool3d(Module):
    """3-D max pooling (``stride`` defaults to ``kernel_size``)."""

    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    return_indices: Any
    ceil_mode: Any
    def __init__(
        self, kernel_size, stride=..., padding=..., dilation=..., return_indices=..., ceil_mode=...
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class MaxUnpool1d(Module):
    """Partial inverse of ``MaxPool1d``: the values at the pooling's indices, zeros elsewhere."""

    kernel_size: Any
    stride: Any
    padding: Any
    def __init__(self, kernel_size, stride=..., padding=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, indices, output_size=...) -> ShardedTensor: ...

class MaxUnpool2d(Module):
    """Partial inverse of ``MaxPool2d``: the values at the pooling's indices, zeros elsewhere
    (``output_size`` of ``forward`` picks among the sizes a pooling could have come from)."""

    kernel_size: Any
    stride: Any
    padding: Any
    def __init__(self, kernel_size, stride=..., padding=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, indices, output_size=...) -> ShardedTensor: ...

class MaxUnpool3d(Module):
    """Partial inverse of ``MaxPool3d``: the values at the pooling's indices, zeros elsewhere."""

    kernel_size: Any
    stride: Any
    padding: Any
    def __init__(self, kernel_size, stride=..., padding=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, indices, output_size=...) -> ShardedTensor: ...

class Mish(Module):
    """``x * tanh(softplus(x))``."""

    inplace: Any
    def __init__(self, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class ModuleList(Module):
    """A list of modules whose parameters the owner sees (indexing, ``append``, ``extend``,
    ``insert``, ``len``, iteration, slicing)."""

    def __delitem__(self, i) -> None: ...
    def __getitem__(self, i) -> Any: ...
    def __iadd__(self, modules) -> Any: ...
    def __init__(self, modules=...) -> None: ...
    def __iter__(self) -> Any: ...
    def __len__(self) -> int: ...
    def __setitem__(self, i, module) -> None: ...
    def append(self, module) -> Self: ...
    def extend(self, modules) -> Self: ...
    def forward(self, *args, **kwargs) -> ShardedTensor: ...
    def insert(self, index, module) -> None: ...
    def pop(self, key=...) -> Any: ...

class MultiLabelMarginLoss(Module):
    """Multi-label hinge loss; each target row lists its classes, ended by -1."""

    reduction: Any
    def __init__(self, size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class PoissonNLLLoss(Module):
    """Poisson negative log likelihood (``log_input``, ``full``, ``eps`` as torch's)."""

    log_input: Any
    full: Any
    eps: Any
    reduction: Any
    def __init__(
        self, log_input=..., full=..., size_average=..., eps=..., reduce=..., reduction=...
    ) -> None: ...
    def forward(self, log_input, target) -> ShardedTensor: ...

class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` with ``act`` the
    ``nonlinearity`` (``'tanh'`` or ``'relu'``); torch's arguments and results."""

    nonlinearity: Any
    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=...,
        nonlinearity=...,
        bias=...,
        batch_first=...,
        dropout=...,
        bidirectional=...,
        device=...,
        dtype=...,
    ) -> None: ...

class RNNCell(RNNCellBase):
    """One step of :class:`RNN`: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""

    nonlinearity: Any
    def __init__(
        self, input_size, hidden_size, bias=..., nonlinearity=..., device=..., dtype=...
    ) -> None: ...

class ReLU(Module):
    """``max(x, 0)``."""

    inplace: Any
    def __init__(self, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class ReLU6(Hardtanh):
    """``clamp(x, 0, 6)``."""

    def __init__(self, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...

class SELU(Module):
    """Scaled ELU with torch's fixed constants."""

    inplace: Any
    def __init__(self, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class Sequential(Module):
    """Modules applied in order (also built from an ordered dict of named modules)."""

    def __delitem__(self, i) -> None: ...
    def __getitem__(self, i) -> Any: ...
    def __init__(self, *modules) -> None: ...
    def __iter__(self) -> Any: ...
    def __len__(self) -> int: ...
    def __setitem__(self, i, module) -> None: ...
    def append(self, module) -> Self: ...
    def extend(self, modules) -> Self: ...
    def forward(self, input) -> ShardedTensor: ...
    def insert(self, index, module) -> None: ...
    def pop(self, key=...) -> Any: ...

class SiLU(Module):
    """``x * sigmoid(x)``."""

    inplace: Any
    def __init__(self, inplace=...) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input) -> ShardedTensor: ...

class SmoothL1Loss(Module):
    """Smooth L1 loss with threshold ``beta``."""

    beta: Any
    reduction: Any
    def __init__(self, size_average=..., reduce=..., reduction=..., beta=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class SoftMarginLoss(Module):
    """Two-class logistic loss ``log(1 + exp(-y x))``."""

    reduction: Any
    def __init__(self, size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class Softsign(Module):
    """``x / (1 + |x|)``."""

    def __init__(self, *args, **kwargs) -> None: ...
    def forward(self, input) -> ShardedTensor: ...

class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def __init__(self, *args, **kwargs) -> None: ...
    def forward(self, input) -> ShardedTensor: ...

class TripletMarginLoss(Module):
    """``max(0, margin + d(a, p) - d(a, n))`` with the pairwise ``p``-norm distance."""

    margin: Any
    p: Any
    eps: Any
    swap: Any
    reduction: Any
    def __init__(
        self, margin=..., p=..., eps=..., swap=..., size_average=..., reduce=..., reduction=...
    ) -> None: ...
    def forward(self, anchor, positive, negative) -> ShardedTensor: ...

class TripletMarginWithDistanceLoss(Module):
    """``max(0, margin + d(a, p) - d(a, n))`` with any distance function ``d`` (default the
    pairwise 2-norm distance)."""

    distance_function: Any
    margin: Any
    swap: Any
    reduction: Any
    def __init__(self, *, distance_function=..., margin=..., swap=..., reduction=...) -> None: ...
    def forward(self, anchor, positive, negative) -> ShardedTensor: ...

class UpsamplingBilinear2d(Upsample):
    """``Upsample`` in mode ``bilinear`` with ``align_corners=True`` (deprecated in torch)."""

    def __init__(self, size=..., scale_factor=...) -> None: ...

class UpsamplingNearest2d(Upsample):
    """``Upsample`` in mode ``nearest`` (deprecated in torch)."""

    def __init__(self, size=..., scale_factor=...) -> None: ...

class BCELoss(Module):
    """Binary cross entropy of probabilities."""

    reduction: Any
    def __init__(self, weight=..., size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class BatchNorm2d(BatchNorm1d):
    """Batch normalization of (N, C, H, W) inputs over each channel (statistics over N, H and
    W); otherwise as :class:`BatchNorm1d`."""

class ConvTranspose1d(Module):
    """1-D transposed convolution layer: weight (in, out/groups, k), bias (out,)."""

    in_channels: Any
    out_channels: Any
    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    groups: Any
    padding_mode: Any
    transposed: Any
    output_padding: Any
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=...,
        padding=...,
        output_padding=...,
        groups=...,
        bias=...,
        dilation=...,
        padding_mode=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, output_size=...) -> ShardedTensor: ...

class ConvTranspose2d(Module):
    """2-D transposed convolution layer: weight (in, out/groups, kH, kW), bias (out,),
    initialised as torch's; ``forward(input, output_size=None)``."""

    in_channels: Any
    out_channels: Any
    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    groups: Any
    padding_mode: Any
    transposed: Any
    output_padding: Any
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=...,
        padding=...,
        output_padding=...,
        groups=...,
        bias=...,
        dilation=...,
        padding_mode=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, output_size=...) -> ShardedTensor: ...

class ConvTranspose3d(Module):
    """3-D transposed convolution layer: weight (in, out/groups, kD, kH, kW), bias (out,);
    ``forward(input, output_size=None)``."""

    in_channels: Any
    out_channels: Any
    kernel_size: Any
    stride: Any
    padding: Any
    dilation: Any
    groups: Any
    padding_mode: Any
    transposed: Any
    output_padding: Any
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=...,
        padding=...,
        output_padding=...,
        groups=...,
        bias=...,
        dilation=...,
        padding_mode=...,
        device=...,
        dtype=...,
    ) -> None: ...
    def extra_repr(self) -> Any: ...
    def forward(self, input, output_size=...) -> ShardedTensor: ...

class CrossEntropyLoss(Module):
    """Cross entropy of logits against class indices or probabilities (stable), with ``weight``,
    ``ignore_index``, ``label_smoothing`` and ``reduction`` as torch's."""

    ignore_index: Any
    label_smoothing: Any
    reduction: Any
    def __init__(
        self,
        weight=...,
        size_average=...,
        ignore_index=...,
        reduce=...,
        reduction=...,
        label_smoothing=...,
    ) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class InstanceNorm2d(InstanceNorm1d):
    """Instance normalization of (N, C, H, W) or unbatched (C, H, W) inputs over H and W;
    otherwise as :class:`InstanceNorm1d`."""

class InstanceNorm3d(InstanceNorm1d):
    """Instance normalization of (N, C, D, H, W) or unbatched (C, D, H, W) inputs; otherwise as
    :class:`InstanceNorm1d`."""

class MultiLabelSoftMarginLoss(Module):
    """Multi-label one-versus-all logistic loss, averaged over the classes."""

    reduction: Any
    def __init__(self, weight=..., size_average=..., reduce=..., reduction=...) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class MultiMarginLoss(Module):
    """Multi-class hinge loss ``sum_{i != y} w[y] max(0, margin - x[y] + x[i]) ** p / C``."""

    p: Any
    margin: Any
    reduction: Any
    def __init__(
        self, p=..., margin=..., weight=..., size_average=..., reduce=..., reduction=...
    ) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...

class NLLLoss(Module):
    """Negative log likelihood of log-probabilities at class indices."""

    ignore_index: Any
    reduction: Any
    def __init__(
        self, weight=..., size_average=..., ignore_index=..., reduce=..., reduction=...
    ) -> None: ...
    def forward(self, input, target) -> ShardedTensor: ...
