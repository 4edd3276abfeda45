"""Indexing: getitem/setitem machinery, index_select/gather/take, index_put, scatters.

- ``prims``: ``indexing`` (``x[key]``, ``x[key] = v``), ``routing`` (gather/scatter
  with indices routed worker to worker), ``masking`` (boolean masks), ``checks`` (value
  checks run on the workers), ``index_ops`` (``index_*``, ``masked_*``, ``nonzero``);
- ``kernels``: ``route`` (the worker kernels of ``routing``: bucketing by owner, picking,
  placing);
- ``derived``: ``scatter`` (gather, scatter, scatter_add, scatter_reduce, take_along_dim),
  ``scatter_extra`` (the view scatters, index_reduce, put), ``index_put``, ``unravel``
  (unravel_index), ``nonzero_static``.

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from .derived import index_put as _index_put
from .derived import nonzero_static as _nonzero_static
from .derived import scatter as _scatter
from .derived import scatter_extra as _scatter_extra
from .derived import unravel as _unravel
from .derived.index_put import *  # noqa: F403
from .derived.nonzero_static import *  # noqa: F403
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
    *_nonzero_static.__all__,
    *_scatter.__all__,
    *_scatter_extra.__all__,
    *_unravel.__all__,
]
