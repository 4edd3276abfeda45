"""Per-shard kernels: pure functions ``f(xp, *arrays, **params)`` run inside workers.

No Ray and no driver state here; ``xp`` is NumPy or CuPy, so every kernel runs on CPU and GPU
shards alike. Commands name kernels by string (cheap to ship in batches); :data:`KERNELS` maps
the names to the functions.
"""

from __future__ import annotations

import numpy as np

from .core.registry import kernel as _register


def kernel(name: str, pooled=False):
    """Register a kernel under ``name``."""
    return _register(name=name, pooled=pooled)


def _cast(xp, a, dtype):
    if dtype is None or not hasattr(a, "dtype") or a.dtype == dtype:
        return a
    return a.astype(dtype)


# ------------------------------------------------------------------------------ creation
@kernel("matmul")
def matmul(xp, a, b, out=None, stack=False):
    """Block product (BLAS through NumPy / cuBLAS through CuPy); ``stack`` adds a leading
    dim of 1 (a partial product, one entry of a stack that is summed afterwards)."""
    r = _cast(xp, xp.matmul(_cast(xp, a, out), _cast(xp, b, out)), out)
    return r[None] if stack else r
from . import kernels_linalg  # noqa: E402,F401
