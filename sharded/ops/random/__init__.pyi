from sharded.tensor import ShardedTensor

def bernoulli(input, p=..., *, generator=...) -> ShardedTensor:
    """0/1 samples, 1 with probability ``input[i]`` (or ``p`` for every element), in the input's
    dtype."""

def get_rng_state() -> ShardedTensor:
    """The generator's state as a uint8 tensor (16 bytes: seed and counter, little-endian);
    ``set_rng_state`` of it replays the same draws."""

def initial_seed() -> int:
    """The seed of the generator (the last ``manual_seed``, else torch's default)."""

def manual_seed(seed: int) -> None:
    """Seed the generator: later random tensors are reproducible for any sharding."""

def multinomial(input, num_samples, replacement=..., *, generator=...) -> ShardedTensor:
    """``num_samples`` category indices per row of non-negative weights ``input`` (1-D or 2-D).
    Without replacement: the Gumbel top-k trick (the largest ``log w - log(-log u)``); with
    replacement: inverse-CDF search of uniforms in the rows' cumulative weights."""

def normal(
    mean,
    std=...,
    size=...,
    *,
    generator=...,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Normal samples: ``normal(mean_tensor, std_tensor_or_float)``, ``normal(mean_float,
    std_tensor)`` (the tensors broadcast, the result has their dtype) or ``normal(mean, std,
    size)``. As in torch, the gradient with respect to ``mean`` and ``std`` is zero."""

def poisson(input, generator=...) -> ShardedTensor:
    """Poisson samples with rates ``input`` (same shape and dtype), exact in distribution for
    every rate: CDF inversion below 10, Hoermann's PTRS rejection sampler from there on."""

def rand(
    *size,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    generator=...,
    **kw,
) -> ShardedTensor:
    """A tensor of the given size drawn by ``rand`` (default dtype float32), identical for every
    sharding after the same ``manual_seed``."""

def rand_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``rand`` with the shape, dtype and layout of ``input``."""

def randint(
    low=...,
    high=...,
    size=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    generator=...,
) -> ShardedTensor:
    """Integers uniform in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high,
    size)``."""

def randint_like(
    input,
    low=...,
    high=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """``randint`` with the shape, dtype and layout of ``input``: ``randint_like(x, high)`` or
    ``randint_like(x, low, high)``."""

def randn(
    *size,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    generator=...,
    **kw,
) -> ShardedTensor:
    """A tensor of the given size drawn by ``randn`` (default dtype float32), identical for
    every sharding after the same ``manual_seed``."""

def randn_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``randn`` with the shape, dtype and layout of ``input``."""

def randperm(
    n, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=..., generator=...
) -> ShardedTensor:
    """A random permutation of ``0 .. n-1`` (identical for any sharding)."""

def seed() -> int:
    """Seed the generator with a non-deterministic number and return it (torch's ``seed``)."""

def set_rng_state(new_state) -> None:
    """Restore a state returned by :func:`get_rng_state`."""
