"""Creation: tensor/zeros/ones/full/arange/linspace/eye/empty and the *_like forms.

Fixed roles: ``prims`` (each primitive one block: kernels, rules, planner, VJP,
bound names), ``kernels`` (worker code only), ``plan`` (planning shared by the
family's primitives), ``derived`` (compositions of other ops). This ``__init__`` names
the family's top-level ``st`` functions (``__all__``).
"""

from . import derived as _derived
from . import prims as _prims
from .derived import *  # noqa: F403
from .prims import *  # noqa: F403

__all__ = [*_prims.__all__, *_derived.__all__]
