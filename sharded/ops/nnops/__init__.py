"""Convolution and pooling primitives (the layers are in :mod:`sharded.nn`).

- ``prims``: ``conv`` (conv1d/2d/3d and their gradients), ``pool`` (max, average and
  adaptive pooling over (N, C, *spatial) blocks), ``ring`` (ring attention: attention
  over query/key/value split along the sequence, key/value blocks visiting the workers);
- ``kernels``: the worker code they share (sliding windows, col2im, padding);
- ``plan``: the driver code they share (output sizes, block layouts, per-shard submission);
- ``derived``: torch's ``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d``, ``adaptive_*_pool1d/2d/3d``.

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from . import derived  # noqa: F401  (registers its primitives)
from .derived import adaptive_avg_pool1d, avg_pool1d, max_pool1d, max_pool2d, max_pool3d
from .derived import adaptive_max_pool1d_with_indices as adaptive_max_pool1d
from .prims import (
    conv,  # noqa: F401  (registers its primitives)
    pool,  # noqa: F401  (registers its primitives)
    ring,  # noqa: F401  (registers its primitives)
)
from .prims.conv import conv1d, conv2d, conv3d

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "avg_pool1d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
]
