from typing import Any, Literal, overload

from sharded.tensor import ShardedTensor

def adaptive_avg_pool1d(input, output_size) -> ShardedTensor:
    """Average pooling to a fixed length."""

def adaptive_avg_pool2d(input, output_size) -> ShardedTensor:
    """Average pooling to a fixed (OH, OW): bin ``i`` covers rows ``floor(i*H/OH) ..
    ceil((i+1)*H/OH)`` (``None`` keeps a size)."""

def adaptive_avg_pool3d(input, output_size) -> ShardedTensor:
    """Average pooling to a fixed (OD, OH, OW) over torch's adaptive bins (``None`` keeps a
    size)."""

def adaptive_max_pool1d(input, output_size, return_indices=...) -> ShardedTensor:
    """Max pooling to a fixed length over torch's adaptive bins."""

def adaptive_max_pool2d(input, output_size, return_indices=...) -> ShardedTensor:
    """Max pooling to a fixed (OH, OW) over torch's adaptive bins."""

def adaptive_max_pool3d(input, output_size, return_indices=...) -> ShardedTensor:
    """Max pooling to a fixed (OD, OH, OW) over torch's adaptive bins (with ``return_indices``
    also the flat D*H*W positions of the maxima)."""

def affine_grid(theta, size, align_corners=...) -> Any:
    """The sampling grid of a batch of affine maps, for ``grid_sample``: (N, H, W, 2) from
    ``theta`` (N, 2, 3) and ``size`` (N, C, H, W), or (N, D, H, W, 3) from (N, 3, 4) and (N,
    C, D, H, W), as ``torch.nn.functional.affine_grid`` (``align_corners=None`` is ``False``,
    with torch's warning)."""

def alpha_dropout(input, p=..., training=..., inplace=...) -> ShardedTensor:
    """Dropout for self-normalizing (selu) networks: dropped elements take selu's negative
    saturation and an affine map keeps the mean and variance (identity unless ``training``,
    which defaults to False as in torch)."""

def avg_pool1d(
    input, kernel_size, stride=..., padding=..., ceil_mode=..., count_include_pad=...
) -> ShardedTensor:
    """1-D average pooling of an (N, C, L) or (C, L) input."""

def avg_pool2d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    ceil_mode=...,
    count_include_pad=...,
    divisor_override=...,
) -> ShardedTensor:
    """2-D average pooling (the divisor counts the zero padding unless
    ``count_include_pad=False``; ``divisor_override`` replaces it)."""

def avg_pool3d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    ceil_mode=...,
    count_include_pad=...,
    divisor_override=...,
) -> ShardedTensor:
    """3-D average pooling of an (N, C, D, H, W) or (C, D, H, W) input (the divisor counts the
    zero padding unless ``count_include_pad=False``; ``divisor_override`` replaces it)."""

def batch_norm(
    input, running_mean, running_var, weight=..., bias=..., training=..., momentum=..., eps=...
) -> ShardedTensor:
    """Normalize each channel (dim 1) of an (N, C, *) input by its batch statistics when
    ``training`` (then the running statistics, if given, are updated in place: ``running = (1
    - momentum) * running + momentum * batch``, with the unbiased batch variance), else by
    ``running_mean``/``running_var`` (torch's ``batch_norm``)."""

def bilinear(input1, input2, weight, bias=...) -> Any:
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``, as
    ``torch.nn.functional.bilinear``."""

def binary_cross_entropy(
    input, target, weight=..., size_average=..., reduce=..., reduction=...
) -> ShardedTensor:
    """``-weight (t log x + (1 - t) log(1 - x))`` for probabilities ``input``, each log clamped
    at -100 as torch does (so x = 0 or 1 gives a finite loss)."""

def binary_cross_entropy_with_logits(
    input, target, weight=..., size_average=..., reduce=..., reduction=..., pos_weight=...
) -> ShardedTensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from the logits, with
    ``pos_weight`` scaling the positive term (torch's formula)."""

def celu(input, alpha=..., inplace=...) -> ShardedTensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

def celu_(input, alpha=...) -> ShardedTensor:
    """In-place :func:`celu`."""

def channel_shuffle(input, groups) -> ShardedTensor:
    """(N, C, *) with the channels regrouped: seen as (groups, C / groups), transposed."""

def conv1d(
    input, weight, bias=..., stride=..., padding=..., dilation=..., groups=...
) -> ShardedTensor:
    """1-D cross-correlation of an (N, C, L) or (C, L) input with an (O, C/groups, k) weight, as
    ``torch.nn.functional.conv1d``."""

def conv2d(
    input, weight, bias=..., stride=..., padding=..., dilation=..., groups=...
) -> ShardedTensor:
    """2-D cross-correlation of an (N, C, H, W) or (C, H, W) input with an (O, C/groups, kH, kW)
    weight, as ``torch.nn.functional.conv2d``."""

def conv3d(
    input, weight, bias=..., stride=..., padding=..., dilation=..., groups=...
) -> ShardedTensor:
    """3-D cross-correlation of an (N, C, D, H, W) or (C, D, H, W) input with an (O, C/groups,
    kD, kH, kW) weight, as ``torch.nn.functional.conv3d``."""

def conv_transpose1d(
    input, weight, bias=..., stride=..., padding=..., output_padding=..., groups=..., dilation=...
) -> ShardedTensor:
    """1-D transposed convolution of an (N, C, L) or (C, L) input with a (C, O/groups, k)
    weight, as ``torch.nn.functional.conv_transpose1d``."""

def conv_transpose2d(
    input, weight, bias=..., stride=..., padding=..., output_padding=..., groups=..., dilation=...
) -> ShardedTensor:
    """2-D transposed convolution ("deconvolution") of an (N, C, H, W) or (C, H, W) input with a
    (C, O/groups, kH, kW) weight, as ``torch.nn.functional.conv_transpose2d``: the output is
    ``(H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1`` high."""

def conv_transpose3d(
    input, weight, bias=..., stride=..., padding=..., output_padding=..., groups=..., dilation=...
) -> ShardedTensor:
    """3-D transposed convolution of an (N, C, D, H, W) or (C, D, H, W) input with a (C,
    O/groups, kD, kH, kW) weight, as ``torch.nn.functional.conv_transpose3d``."""

def cosine_embedding_loss(
    input1, input2, target, margin=..., size_average=..., reduce=..., reduction=...
) -> Any:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (cosine along the last dim of (N, D) or (D,) inputs)."""

def cosine_similarity(x1, x2, dim=..., eps=...) -> ShardedTensor:
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``, each norm
    clamped at ``eps``."""

def cross_entropy(
    input,
    target,
    weight=...,
    size_average=...,
    ignore_index=...,
    reduce=...,
    reduction=...,
    label_smoothing=...,
) -> ShardedTensor:
    """Cross entropy of logits ``input`` (N, C, ...) or (C,) against class indices or class
    probabilities (a float target of the input's shape), computed through ``log_softmax`` so
    it is stable for any logits; ``weight``, ``ignore_index``, ``label_smoothing`` and
    ``reduction`` as torch's."""

def ctc_loss(
    log_probs, targets, input_lengths, target_lengths, blank=..., reduction=..., zero_infinity=...
) -> Any:
    """The CTC loss of (T, N, C) or (T, C) log-probabilities against targets, as
    ``torch.nn.functional.ctc_loss``: ``-log`` of the summed probability of every alignment
    of each target (padded (N, S) or concatenated 1-D, with ``target_lengths``) to the first
    ``input_lengths`` steps, blanks between repeats. ``reduction='mean'`` divides each loss
    by its target length, then averages."""

def dropout(input, p=..., training=..., inplace=...) -> ShardedTensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (identity
    unless ``training``). The mask comes from the counter-based generator (``st.rand_like``),
    so it is the same for any sharding of ``input``."""

def dropout2d(input, p=..., training=..., inplace=...) -> ShardedTensor:
    """Zero whole channels (one draw per entry of all but the last two dims) with probability
    ``p`` and scale the rest by ``1 / (1 - p)`` (identity unless ``training``)."""

def dropout3d(input, p=..., training=..., inplace=...) -> ShardedTensor:
    """Zero whole channels (one draw per entry of all but the last three dims) of a (C, D, H, W)
    or (N, C, D, H, W) input with probability ``p``, scaling the rest by ``1 / (1 - p)``
    (identity unless ``training``)."""

def elu(input, alpha=..., inplace=...) -> ShardedTensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""

def elu_(input, alpha=...) -> ShardedTensor:
    """In-place :func:`elu`."""

def embedding(
    input, weight, padding_idx=..., max_norm=..., norm_type=..., scale_grad_by_freq=..., sparse=...
) -> ShardedTensor:
    """Rows ``weight[input]``: an (*, D) tensor for integer indices of shape (*). The gradient
    scatters back into the rows (none into ``padding_idx``'s row). With a replicated
    ``weight`` (a layer's default) the result is laid out like ``input``. ``max_norm`` first
    rescales, in place, the looked-up rows whose norm exceeds it (:func:`renorm_rows`);
    ``scale_grad_by_freq`` divides each row's gradient by how often the row occurs in
    ``input``. ``sparse=True`` is accepted and gives the same values, but the weight's
    gradient stays dense (sharded has no sparse tensors)."""

def embedding_bag(
    input,
    weight,
    offsets=...,
    max_norm=...,
    norm_type=...,
    scale_grad_by_freq=...,
    mode=...,
    sparse=...,
    per_sample_weights=...,
    include_last_offset=...,
    padding_idx=...,
) -> ShardedTensor:
    """Sums, means or maxima of bags of embeddings, as ``torch.nn.functional.embedding_bag``."""

def feature_alpha_dropout(input, p=..., training=..., inplace=...) -> ShardedTensor:
    """:func:`alpha_dropout` of whole channels: one draw per (N, C) entry, shared along the
    remaining dims."""

def fold(input, output_size, kernel_size, dilation=..., padding=..., stride=...) -> ShardedTensor:
    """Combine sliding blocks into a tensor (col2im, summing where blocks overlap): (N, C kH kW,
    L) or (C kH kW, L) to (N, C, H, W), the adjoint of :func:`unfold`."""

def fractional_max_pool2d(
    input, kernel_size, output_size=..., output_ratio=..., return_indices=..., _random_samples=...
) -> ShardedTensor:
    """2-D fractional max pooling of an (N, C, H, W) or (C, H, W) input to ``output_size`` (or
    ``output_ratio`` times the input's H and W): windows of ``kernel_size`` at pseudo-random
    increasing starts drawn from ``_random_samples`` (N, C, 2), uniform in [0, 1), drawn from
    sharded's generator when not given. Given the samples, the result and the flat H*W
    ``indices`` (``return_indices=True``) are torch's. A batch or channel split stays local;
    differentiable (the gradient goes to each window's winner)."""

def fractional_max_pool3d(
    input, kernel_size, output_size=..., output_ratio=..., return_indices=..., _random_samples=...
) -> ShardedTensor:
    """3-D fractional max pooling of an (N, C, T, H, W) or (C, T, H, W) input, as
    :func:`fractional_max_pool2d` with ``_random_samples`` (N, C, 3) and flat T*H*W
    ``indices``."""

def gaussian_nll_loss(input, target, var, full=..., eps=..., reduction=...) -> ShardedTensor:
    """Gaussian negative log likelihood ``0.5 (log(var) + (input - target)² / var)`` (plus ``0.5
    log(2π)`` when ``full``), ``var`` clamped at ``eps`` as torch does: without touching its
    gradient. ``var`` has the input's shape, or one dim fewer, or a 1 in one dim (one
    variance shared along it), or is a float."""

def gelu(input, approximate=...) -> ShardedTensor:
    """Gaussian error linear unit: ``x * Phi(x)`` exactly (``approximate='none'``, through the
    ``erf`` primitive) or torch's tanh approximation (``'tanh'``)."""

def glu(input, dim=...) -> ShardedTensor:
    """Gated linear unit: ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``dim``."""

def grid_sample(input, grid, mode=..., padding_mode=..., align_corners=...) -> ShardedTensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the points of ``grid`` (N, Ho, Wo, 2)
    or (N, Do, Ho, Wo, 3), given as (x, y[, z]) in [-1, 1], as
    ``torch.nn.functional.grid_sample``: ``mode`` 'bilinear', 'nearest' or 'bicubic' (4-D
    only), ``padding_mode`` 'zeros', 'border' or 'reflection' for points outside,
    ``align_corners`` (``None`` is ``False``, with torch's warning). A composition of
    elementwise ops on the grid and one ``gather`` of the input: a batch split stays local;
    gradients flow to the input and the grid as torch's."""

def group_norm(input, num_groups, weight=..., bias=..., eps=...) -> ShardedTensor:
    """Normalize an (N, C, *) input over each group of ``C // num_groups`` channels (and every
    spatial position), then scale and shift per channel (torch's ``group_norm``)."""

def hardshrink(input, lambd=...) -> ShardedTensor:
    """``x`` where ``|x| > lambd``, else 0."""

def hardsigmoid(input, inplace=...) -> ShardedTensor:
    """``relu6(x + 3) / 6`` (gradient ``1/6`` strictly inside ``(-3, 3)``, as torch)."""

def hardswish(input, inplace=...) -> ShardedTensor:
    """``x * relu6(x + 3) / 6`` (torch's gradient: 0 up to -3, ``x / 3 + 1/2`` inside, 1 from
    3)."""

def hardtanh(input, min_val=..., max_val=..., inplace=...) -> ShardedTensor:
    """``clamp(x, min_val, max_val)``, in an integer input's dtype (bounds truncated) as torch."""

def hardtanh_(input, min_val=..., max_val=...) -> ShardedTensor:
    """In-place :func:`hardtanh`."""

def hinge_embedding_loss(
    input, target, margin=..., size_average=..., reduce=..., reduction=...
) -> ShardedTensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``
    (torch's formula: the first term wherever ``target != -1``, the second wherever ``target
    != 1``), reduced by ``reduction``."""

def huber_loss(input, target, reduction=..., delta=..., weight=...) -> ShardedTensor:
    """``0.5 d²`` where ``|d| < delta``, else ``delta (|d| - delta / 2)``, ``d = input -
    target``."""

def instance_norm(
    input,
    running_mean=...,
    running_var=...,
    weight=...,
    bias=...,
    use_input_stats=...,
    momentum=...,
    eps=...,
) -> ShardedTensor:
    """Normalize each channel of each sample of an (N, C, *) input over its spatial dims (with
    ``use_input_stats``; the running statistics, if given, are then updated in place with the
    batch's mean of the per-instance mean and unbiased variance), or by
    ``running_mean``/``running_var`` (torch's ``instance_norm``)."""

def interpolate(
    input,
    size=...,
    scale_factor=...,
    mode=...,
    align_corners=...,
    recompute_scale_factor=...,
    antialias=...,
) -> ShardedTensor:
    """Resize the spatial dims of an (N, C, d1[, d2[, d3]]) input to ``size`` or by
    ``scale_factor``, as ``torch.nn.functional.interpolate``."""

def kl_div(
    input, target, size_average=..., reduce=..., reduction=..., log_target=...
) -> ShardedTensor:
    """Pointwise KL divergence ``target * (log(target) - input)`` for log-probabilities
    ``input`` (0 where ``target`` is 0), or ``exp(target) * (target - input)`` with
    ``log_target``; ``reduction='batchmean'`` divides the sum by the batch size."""

def l1_loss(input, target, size_average=..., reduce=..., reduction=...) -> ShardedTensor:
    """Mean absolute error ``|input - target|``, reduced by ``reduction``."""

def layer_norm(input, normalized_shape, weight=..., bias=..., eps=...) -> ShardedTensor:
    """Normalize over the trailing ``normalized_shape`` dims: ``(x - mean) / sqrt(var + eps) *
    weight + bias`` with the biased variance (torch's ``layer_norm``)."""

def leaky_relu(input, negative_slope=..., inplace=...) -> ShardedTensor:
    """``x`` where positive, else ``negative_slope * x``."""

def leaky_relu_(input, negative_slope=...) -> ShardedTensor:
    """In-place :func:`leaky_relu`."""

def linear(input, weight, bias=...) -> ShardedTensor:
    """``input @ weight.T + bias``."""

def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=...,
    weight=...,
    reduction=...,
    ignore_index=...,
    label_smoothing=...,
    options=...,
) -> ShardedTensor:
    """:func:`cross_entropy` of the logits ``linear(input, linear_weight, linear_bias)``, as
    ``torch.nn.functional.linear_cross_entropy``: ``input`` (in,) or (N, in),
    ``linear_weight`` (C, in) or (C, d_1, ..., d_K, in) for a K-dimensional loss (logits (N,
    C, d_1, ..., d_K)); ``ignore_index=None`` means -100 for class indices and may not be
    given with class probabilities. ``options`` (torch's chunking strategy) is accepted and
    not needed: the logits are computed sharded as ``input`` is (split along N, each worker
    holds its rows' logits only), and the gradient is that of the composition."""

def local_response_norm(input, size, alpha=..., beta=..., k=...) -> ShardedTensor:
    """Divide each channel (dim 1) by ``(k + alpha / size * sum of x² over the size neighbouring
    channels) ** beta``, the window running from ``c - size // 2`` to ``c + (size - 1) // 2``
    (zeros past the ends)."""

def log_softmax(input, dim=..., _stacklevel=..., dtype=...) -> ShardedTensor:
    """Log-softmax along ``dim`` (torch's implicit choice when None), computed in ``dtype``."""

def logsigmoid(input) -> ShardedTensor:
    """``log(sigmoid(x)) = -softplus(-x)``, stable for any ``x``."""

def margin_ranking_loss(
    input1, input2, target, margin=..., size_average=..., reduce=..., reduction=...
) -> Any:
    """``max(0, -target * (input1 - input2) + margin)``, reduced by ``reduction``."""

@overload
def max_pool1d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    return_indices: Literal[False] = ...,
) -> ShardedTensor:
    """1-D max pooling of an (N, C, L) or (C, L) input."""

@overload
def max_pool1d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    *,
    return_indices: Literal[True],
) -> tuple[ShardedTensor, ...]:
    """1-D max pooling of an (N, C, L) or (C, L) input."""

@overload
def max_pool2d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    return_indices: Literal[False] = ...,
) -> ShardedTensor:
    """2-D max pooling of an (N, C, H, W) or (C, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat H*W positions of the maxima)."""

@overload
def max_pool2d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    *,
    return_indices: Literal[True],
) -> tuple[ShardedTensor, ...]:
    """2-D max pooling of an (N, C, H, W) or (C, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat H*W positions of the maxima)."""

@overload
def max_pool3d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    return_indices: Literal[False] = ...,
) -> ShardedTensor:
    """3-D max pooling of an (N, C, D, H, W) or (C, D, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat D*H*W positions of the maxima)."""

@overload
def max_pool3d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    *,
    return_indices: Literal[True],
) -> tuple[ShardedTensor, ...]:
    """3-D max pooling of an (N, C, D, H, W) or (C, D, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat D*H*W positions of the maxima)."""

def max_unpool1d(
    input, indices, kernel_size, stride=..., padding=..., output_size=...
) -> ShardedTensor:
    """Partial inverse of ``max_pool1d(..., return_indices=True)`` on an (N, C, L) or (C, L)
    input: each value goes to its index in an output of zeros, of length ``(L - 1) * stride +
    kernel_size - 2 * padding`` or ``output_size``."""

def max_unpool2d(
    input, indices, kernel_size, stride=..., padding=..., output_size=...
) -> ShardedTensor:
    """Partial inverse of ``max_pool2d(..., return_indices=True)`` on an (N, C, H, W) or (C, H,
    W) input: each value goes to its flat H*W index in an output of zeros (size from the
    pooling's arguments, or ``output_size``). Split batches or channels stay local."""

def max_unpool3d(
    input, indices, kernel_size, stride=..., padding=..., output_size=...
) -> ShardedTensor:
    """Partial inverse of ``max_pool3d(..., return_indices=True)`` on an (N, C, D, H, W) or (C,
    D, H, W) input: each value goes to its flat D*H*W index in an output of zeros."""

def mish(input, inplace=...) -> ShardedTensor:
    """``x * tanh(softplus(x))``."""

def mse_loss(
    input, target, size_average=..., reduce=..., reduction=..., weight=...
) -> ShardedTensor:
    """Mean squared error ``(input - target) ** 2``, reduced by ``reduction``."""

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
    training=...,
    key_padding_mask=...,
    need_weights=...,
    attn_mask=...,
    use_separate_proj_weight=...,
    q_proj_weight=...,
    k_proj_weight=...,
    v_proj_weight=...,
    static_k=...,
    static_v=...,
    average_attn_weights=...,
    is_causal=...,
) -> Any:
    """Multi-head attention of (L, N, E) ``query`` over (S, N, kdim) ``key`` and (S, N, vdim)
    ``value`` (or unbatched (L, E)...): returns ``(output, weights)``, ``weights`` None
    unless ``need_weights`` (then (N, L, S) averaged over heads, or (N, H, L, S)). torch's
    function, argument for argument (see the module's doc for the masks)."""

def multi_margin_loss(
    input, target, p=..., margin=..., weight=..., size_average=..., reduce=..., reduction=...
) -> ShardedTensor:
    """Multi-class hinge loss of (N, C) or (C,) scores and int64 class targets: ``sum_{i != y}
    w[y] max(0, margin - x[y] + x[i]) ** p / C`` per sample (``p`` 1 or 2)."""

def multilabel_margin_loss(
    input, target, size_average=..., reduce=..., reduction=...
) -> ShardedTensor:
    """Multi-label hinge loss of (N, C) or (C,) scores: each row of the int64 ``target`` lists
    its classes, ended by the first -1; the loss is ``sum_j sum_{i not a target} max(0, 1 -
    (x[y_j] - x[i])) / C`` per sample."""

def multilabel_soft_margin_loss(
    input, target, weight=..., size_average=..., reduce=..., reduction=...
) -> ShardedTensor:
    """``-(t log σ(x) + (1 - t) log σ(-x))`` (times ``weight``) averaged over the classes (the
    last dim), then reduced over the samples by ``reduction``."""

def nll_loss(
    input, target, weight=..., size_average=..., ignore_index=..., reduce=..., reduction=...
) -> ShardedTensor:
    """Negative log likelihood of log-probabilities ``input`` (N, C, ...) or (C,) at class
    indices ``target``: ``-weight[y] * input[n, y]``; ``mean`` divides by the summed weights
    of the targets that are not ``ignore_index``."""

def normalize(input, p=..., dim=..., eps=..., out=...) -> ShardedTensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""

def one_hot(tensor_, num_classes=...) -> Any:
    """An int64 tensor of shape ``tensor.shape + (num_classes,)``, 1 at each index and 0
    elsewhere; ``num_classes=-1`` takes ``max + 1``."""

def pad(input, pad, mode=..., value=...) -> ShardedTensor:
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev, ...)``
    (negative amounts crop); ``mode`` 'constant' (with ``value``, default 0), 'reflect',
    'replicate' or 'circular', as torch's ``F.pad``."""

def pairwise_distance(x1, x2, p=..., eps=..., keepdim=...) -> ShardedTensor:
    """``||x1 - x2 + eps||_p`` along the last dim (torch's ``pairwise_distance``)."""

def pdist(input, p=...) -> ShardedTensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of an (N, M) input, in
    row-major order of the pairs: ``N (N - 1) / 2`` values."""

def pixel_shuffle(input, upscale_factor) -> ShardedTensor:
    """Rearrange (*, C r², H, W) into (*, C, H r, W r): each group of r² channels becomes an
    r-by-r block of pixels."""

def pixel_unshuffle(input, downscale_factor) -> ShardedTensor:
    """Rearrange (*, C, H r, W r) into (*, C r², H, W), the inverse of :func:`pixel_shuffle`."""

def poisson_nll_loss(
    input, target, log_input=..., full=..., size_average=..., eps=..., reduce=..., reduction=...
) -> ShardedTensor:
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's approximation of
    ``log(target!)`` where ``target > 1``."""

def prelu(input, weight) -> ShardedTensor:
    """``x`` where positive, else ``weight * x``; ``weight`` holds one slope or one per channel
    (dim 1; a 1-d input has one channel)."""

def relu(input, inplace=...) -> ShardedTensor:
    """``max(x, 0)``."""

def relu6(input, inplace=...) -> ShardedTensor:
    """``clamp(x, 0, 6)``."""

def relu_(input) -> ShardedTensor:
    """In-place :func:`relu`."""

def rms_norm(input, normalized_shape, weight=..., eps=...) -> ShardedTensor:
    """``input / sqrt(mean(input**2) + eps) * weight`` over the trailing ``normalized_shape``
    dims; ``eps`` None is the machine epsilon of ``input``'s dtype (torch's ``rms_norm``)."""

def rrelu(input, lower=..., upper=..., training=..., inplace=...) -> ShardedTensor:
    """Leaky ReLU whose negative slope is drawn uniformly from ``[lower, upper]`` per element
    when ``training`` (from the counter-based generator), else ``(lower + upper) / 2``."""

def rrelu_(input, lower=..., upper=..., training=...) -> ShardedTensor:
    """In-place :func:`rrelu`."""

def scaled_dot_product_attention(
    query, key, value, attn_mask=..., dropout_p=..., is_causal=..., scale=..., enable_gqa=...
) -> Any:
    """``softmax(query @ key.T * scale + mask) @ value`` over (..., L, E), (..., S, E) and (...,
    S, Ev) inputs whose batch dims broadcast, as torch's."""

def selu(input, inplace=...) -> ShardedTensor:
    """Scaled ELU with torch's fixed ``alpha`` and ``scale`` (self-normalizing)."""

def selu_(input) -> ShardedTensor:
    """In-place :func:`selu`."""

def sigmoid(input) -> ShardedTensor:
    """``1 / (1 + exp(-input))``."""

def silu(input, inplace=...) -> ShardedTensor:
    """``x * sigmoid(x)`` (swish)."""

def smooth_l1_loss(
    input, target, size_average=..., reduce=..., reduction=..., beta=...
) -> ShardedTensor:
    """``0.5 d² / beta`` where ``|d| < beta``, else ``|d| - beta / 2`` (the L1 loss for
    ``beta=0``)."""

def soft_margin_loss(input, target, size_average=..., reduce=..., reduction=...) -> ShardedTensor:
    """The two-class logistic loss ``log(1 + exp(-target * input))``, reduced by ``reduction``
    (targets are 1 or -1)."""

def softmax(input, dim=..., _stacklevel=..., dtype=...) -> ShardedTensor:
    """Softmax along ``dim`` (torch's implicit choice when None), computed in ``dtype``."""

def softmin(input, dim=..., _stacklevel=..., dtype=...) -> ShardedTensor:
    """``softmax(-x)`` along ``dim`` (torch's implicit choice when None), in ``dtype``."""

def softplus(input, beta=..., threshold=...) -> ShardedTensor:
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""

def softshrink(input, lambd=...) -> ShardedTensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""

def softsign(input) -> ShardedTensor:
    """``x / (1 + |x|)``."""

def tanh(input) -> ShardedTensor:
    """Hyperbolic tangent."""

def tanhshrink(input) -> ShardedTensor:
    """``x - tanh(x)``."""

def threshold(input, threshold, value, inplace=...) -> ShardedTensor:
    """``x`` where ``x > threshold``, else ``value``."""

def threshold_(input, threshold, value) -> ShardedTensor:
    """In-place :func:`threshold`."""

def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=...,
    p=...,
    eps=...,
    swap=...,
    size_average=...,
    reduce=...,
    reduction=...,
) -> Any:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the pairwise
    ``p``-norm distance (``swap``: the smaller of d(a, n) and d(p, n))."""

def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=..., margin=..., swap=..., reduction=...
) -> Any:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` any function of
    two tensors (default :func:`pairwise_distance`); ``swap`` takes the smaller of d(a, n)
    and d(p, n)."""

def unfold(input, kernel_size, dilation=..., padding=..., stride=...) -> ShardedTensor:
    """Extract sliding blocks (im2col): (N, C, H, W) or (C, H, W) to (N, C kH kW, L), one column
    per block position, as ``torch.nn.functional.unfold``."""

def upsample(input, size=..., scale_factor=..., mode=..., align_corners=...) -> ShardedTensor:
    """Deprecated alias of :func:`interpolate` (torch's ``upsample``)."""

def upsample_bilinear(input, size=..., scale_factor=...) -> ShardedTensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""

def upsample_nearest(input, size=..., scale_factor=...) -> ShardedTensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
