from sharded.tensor import ShardedTensor

def bartlett(
    M, *, sym=..., dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Bartlett (triangular) window ``1 - |2 n / N - 1|``."""

def blackman(
    M, *, sym=..., dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Blackman window: :func:`general_cosine` with ``a = [0.42, 0.5, 0.08]``."""

def cosine(
    M, *, sym=..., dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Cosine (sine) window ``sin(pi (n + 0.5) / M)`` (periodic: ``M + 1``)."""

def exponential(
    M,
    *,
    center=...,
    tau=...,
    sym=...,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Exponential (Poisson) window ``exp(-|n - center| / tau)``; ``center`` (periodic windows
    only) defaults to the middle."""

def gaussian(
    M,
    *,
    std=...,
    sym=...,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Gaussian window ``exp(-(n - c)^2 / (2 std^2))`` centred in the window."""

def general_cosine(
    M, *, a, sym=..., dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Generalised cosine window ``sum_i (-1)^i a[i] cos(2 pi i n / N)``."""

def general_hamming(
    M,
    *,
    alpha=...,
    sym=...,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Generalised Hamming window ``alpha - (1 - alpha) cos(2 pi n / N)``."""

def hamming(
    M, *, sym=..., dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Hamming window ``0.54 - 0.46 cos(2 pi n / N)``."""

def hann(
    M, *, sym=..., dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Hann window ``0.5 - 0.5 cos(2 pi n / N)``."""

def kaiser(
    M,
    *,
    beta=...,
    sym=...,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Kaiser window ``I0(sqrt(beta^2 - k^2)) / I0(beta)``, ``k`` from ``-beta`` to ``beta``."""

def nuttall(
    M, *, sym=..., dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Nuttall's minimum 4-term Blackman-Harris window (:func:`general_cosine`)."""
