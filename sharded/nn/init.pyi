from typing import Any

from sharded.tensor import ShardedTensor

def calculate_gain(nonlinearity, param=...) -> Any:
    """torch's recommended gain for ``nonlinearity``."""

def constant_(tensor, val) -> ShardedTensor:
    """Fill ``tensor`` with ``val``."""

def eye_(tensor) -> ShardedTensor:
    """Fill the 2-d ``tensor`` with the identity matrix."""

def kaiming_normal_(tensor, a=..., mode=..., nonlinearity=..., generator=...) -> ShardedTensor:
    """He normal: N(0, std²) with ``std = gain / sqrt(fan)``."""

def kaiming_uniform_(tensor, a=..., mode=..., nonlinearity=..., generator=...) -> ShardedTensor:
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``."""

def normal_(tensor, mean=..., std=..., generator=...) -> ShardedTensor:
    """Fill ``tensor`` from N(mean, std²)."""

def ones_(tensor) -> ShardedTensor:
    """Fill ``tensor`` with ones."""

def orthogonal_(tensor, gain=..., generator=...) -> ShardedTensor:
    """Fill ``tensor`` (viewed as ``shape[0]`` rows) with a (semi-)orthogonal matrix from the QR
    decomposition of a Gaussian one, times ``gain`` (torch's ``orthogonal_``)."""

def trunc_normal_(tensor, mean=..., std=..., a=..., b=..., generator=...) -> ShardedTensor:
    """Fill ``tensor`` from N(mean, std²) truncated to ``[a, b]`` (inverse-CDF sampling, as
    torch)."""

def uniform_(tensor, a=..., b=..., generator=...) -> ShardedTensor:
    """Fill ``tensor`` from U(a, b)."""

def xavier_normal_(tensor, gain=..., generator=...) -> ShardedTensor:
    """Glorot normal: N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""

def xavier_uniform_(tensor, gain=..., generator=...) -> ShardedTensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""

def zeros_(tensor) -> ShardedTensor:
    """Fill ``tensor`` with zeros."""
