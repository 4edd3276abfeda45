"""Reductions and statistics: sum/prod/max/min/any/all/argmax, mean/var/std, softmax, cov/cdist/trapezoid.

Fixed roles: ``prims`` (each primitive one block: kernels, rules, planner, VJP,
bound names), ``kernels`` (worker code only), ``plan`` (planning shared by the
family's primitives), ``derived`` (compositions of other ops). This ``__init__`` names
the family's top-level ``st`` functions (``__all__``).
"""

from . import prims as _prims
from .derived import moments as _moments
from .derived import stats as _stats
from .derived.moments import *  # noqa: F403
from .derived.stats import *  # noqa: F403
from .prims import *  # noqa: F403

__all__ = [*_prims.__all__, *_moments.__all__, *_stats.__all__]
