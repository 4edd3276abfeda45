"""Reductions and statistics: sum/prod/max/min/any/all/argmax, mean/var/std, softmax,
cov/cdist/trapezoid.

- ``prims``: the reduction primitives (sum, prod, amax, amin, all, any, max/min,
  argmax/argmin), local then combined in a tree;
- ``derived``: ``moments`` (mean, var, std, nansum, logsumexp, softmax..., sum_to_size),
  ``stats`` (cov, corrcoef, cdist, dist, renorm, trapezoid).

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from . import prims as _prims
from .derived import moments as _moments
from .derived import stats as _stats
from .derived.moments import *  # noqa: F403
from .derived.stats import *  # noqa: F403
from .prims import *  # noqa: F403

__all__ = [*_prims.__all__, *_moments.__all__, *_stats.__all__]
