"""Indexing: getitem/setitem machinery, index_select/gather/take, index_put, scatters.

Fixed roles: ``prims`` (each primitive one block: kernels, rules, planner, VJP,
bound names), ``kernels`` (worker code only), ``plan`` (planning shared by the
family's primitives), ``derived`` (compositions of other ops). This ``__init__`` names
the family's top-level ``st`` functions (``__all__``).
"""

from .derived import index_put as _index_put
from .derived import scatter as _scatter
from .derived import scatter_extra as _scatter_extra
from .derived import unravel as _unravel
from .derived.index_put import *  # noqa: F403
from .derived.scatter import *  # noqa: F403
from .derived.scatter_extra import *  # noqa: F403
from .derived.unravel import *  # noqa: F403
from .prims import (
    checks,  # noqa: F401  (registers its primitives)
    indexing,  # noqa: F401  (registers its primitives)
    masking,  # noqa: F401  (registers its primitives)
    routing,  # noqa: F401  (registers its primitives)
)
from .prims import index_ops as _index_ops
from .prims.index_ops import *  # noqa: F403

__all__ = [
    *_index_ops.__all__,
    *_index_put.__all__,
    *_scatter.__all__,
    *_scatter_extra.__all__,
    *_unravel.__all__,
]
