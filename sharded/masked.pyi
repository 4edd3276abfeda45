from typing import overload

from sharded.tensor import ShardedTensor

def amax(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Largest unmasked element over ``dim``; ``-inf`` (the dtype's minimum for integers) where
    a slice is fully masked."""

def amin(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Smallest unmasked element over ``dim``; ``inf`` (the dtype's maximum for integers) where
    a slice is fully masked."""

def argmax(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Index of the largest unmasked element along ``dim`` (of the flattened input when None),
    in ``dtype`` (the input's dtype by default, as torch); ``0`` where a slice is fully
    masked."""

def argmin(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Index of the smallest unmasked element along ``dim`` (see :func:`argmax`)."""

def cumprod(input, dim, *, dtype=..., mask=...) -> ShardedTensor:
    """Cumulative product along ``dim`` with the masked-out elements counted as ``1``."""

def cumsum(input, dim, *, dtype=..., mask=...) -> ShardedTensor:
    """Cumulative sum along ``dim`` with the masked-out elements counted as ``0``."""

def log_softmax(input, dim, *, dtype=..., mask=...) -> ShardedTensor:
    """Log-softmax along ``dim`` over the unmasked elements: masked-out elements get ``-inf``, a
    fully masked slice ``nan``."""

def logaddexp(input, other, *, dtype=..., input_mask=..., other_mask=...) -> ShardedTensor:
    """``log(exp(input) + exp(other))`` with the masked-out elements of each operand taken as
    ``-inf`` (so a masked-out ``input`` element gives ``other``'s and vice versa)."""

def logsumexp(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """``log(sum(exp(x)))`` of the unmasked elements over ``dim``; ``-inf`` where a slice is
    fully masked."""

def mean(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Mean of the unmasked elements over ``dim``; ``nan`` where a slice is fully masked. The
    input (or ``dtype``) must be floating point or complex, as in torch."""

@overload
def median(input, dim: None = ..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Median (the lower of the two middle values) of the unmasked elements along ``dim``;
    ``nan`` where a slice is fully masked. An integer input is ranked as float32 and its
    result cast back, which needs every slice to keep an element."""

@overload
def median(input, dim: int, *, keepdim=..., dtype=..., mask=...) -> None:
    """Median (the lower of the two middle values) of the unmasked elements along ``dim``;
    ``nan`` where a slice is fully masked. An integer input is ranked as float32 and its
    result cast back, which needs every slice to keep an element."""

def norm(input, ord=..., dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Vector ``ord``-norm of the unmasked elements over ``dim``; ``0`` where a slice is fully
    masked (``inf`` for ``ord=-inf``). Floating point or complex inputs only."""

def normalize(input, ord, dim, *, eps=..., dtype=..., mask=...) -> ShardedTensor:
    """``input`` (masked-out elements set to 0) divided by its masked ``ord``-norm along
    ``dim``, the norm clamped below at ``eps``."""

def prod(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Product of the unmasked elements over ``dim``; ``1`` where a slice is fully masked."""

def softmax(input, dim, *, dtype=..., mask=...) -> ShardedTensor:
    """Softmax along ``dim`` over the unmasked elements: masked-out elements get ``0``, a fully
    masked slice ``nan``."""

def softmin(input, dim, *, dtype=..., mask=...) -> ShardedTensor:
    """Softmin (softmax of ``-input``) along ``dim`` over the unmasked elements: masked-out
    elements get ``0``, a fully masked slice ``nan``."""

def std(
    input, dim=..., unbiased=..., *, correction=..., keepdim=..., dtype=..., mask=...
) -> ShardedTensor:
    """Standard deviation of the unmasked elements over ``dim`` (see :func:`var`)."""

def sum(input, dim=..., *, keepdim=..., dtype=..., mask=...) -> ShardedTensor:
    """Sum of the unmasked elements over ``dim`` (all dims when None); ``0`` where a slice is
    fully masked. Small integer and bool inputs sum in int64, like torch."""

def var(
    input, dim=..., unbiased=..., *, correction=..., keepdim=..., dtype=..., mask=...
) -> ShardedTensor:
    """Variance of the unmasked elements over ``dim`` (divisor ``count - correction``,
    ``correction=1`` by default, clamped at 0); ``nan`` where a slice is fully masked.
    Integer inputs give float32."""
