"""Convolution and pooling primitives (the layers are in :mod:`sharded.nn`).

Fixed roles: ``prims`` (each primitive one block: kernels, rules, planner, VJP,
bound names), ``kernels`` (worker code only), ``plan`` (planning shared by the
family's primitives), ``derived`` (compositions of other ops). This ``__init__`` names
the family's top-level ``st`` functions (``__all__``).
"""

from . import derived  # noqa: F401  (registers its primitives)
from .derived import adaptive_avg_pool1d, avg_pool1d, max_pool1d, max_pool2d
from .prims import (
    conv,  # noqa: F401  (registers its primitives)
    pool,  # noqa: F401  (registers its primitives)
)
from .prims.conv import conv1d, conv2d

__all__ = ["conv1d", "conv2d", "adaptive_avg_pool1d", "avg_pool1d", "max_pool1d", "max_pool2d"]
