"""Creation: tensor/zeros/ones/full/arange/linspace/eye/empty and the *_like forms.

- ``prims``: the creation primitives (``from_numpy``, ``tensor``, ``zeros``, ``full``,
  ``arange``, ``linspace``, ``eye``... and the ``*_like`` forms), each block made where it lives;
- ``derived``: ``scalar_tensor`` and the ``Tensor.new_*`` methods.

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from . import derived as _derived
from . import prims as _prims
from .derived import *  # noqa: F403
from .prims import *  # noqa: F403

__all__ = [*_prims.__all__, *_derived.__all__]
