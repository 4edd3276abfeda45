"""Shapes and views: view/reshape/permute/expand, joining and splitting, tile/repeat,
triangular parts.

- ``prims``: ``views`` (permute, transpose...), ``reshape`` (view, reshape, squeeze,
  expand), ``joining`` (resharding, cat, stack, split, flip, roll, ``to``), ``triangular``
  (tril/triu, diagonals, meshgrid...);
- ``derived``: ``tile`` (repeat, tile, movedim, fliplr/flipud, the ``*stack`` family, take...),
  ``splitting`` (tensor_split, unfold, block_diag, diagflat), ``combinatorics``
  (cartesian_prod, combinations).

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from .derived import combinatorics as _combinatorics
from .derived import splitting as _splitting
from .derived import tile as _tile
from .derived.combinatorics import *  # noqa: F403
from .derived.splitting import *  # noqa: F403
from .derived.tile import *  # noqa: F403
from .prims import joining as _joining
from .prims import reshape as _reshape
from .prims import triangular as _triangular
from .prims import views as _views
from .prims.joining import *  # noqa: F403
from .prims.reshape import *  # noqa: F403
from .prims.triangular import *  # noqa: F403
from .prims.views import *  # noqa: F403

__all__ = [
    *_views.__all__,
    *_reshape.__all__,
    *_joining.__all__,
    *_triangular.__all__,
    *_tile.__all__,
    *_splitting.__all__,
    *_combinatorics.__all__,
]
