"""Creation: tensor/zeros/ones/full/arange/linspace/eye/empty, the *_like forms and windows.

- ``prims``: the creation primitives (``from_numpy``, ``tensor``, ``zeros``, ``full``,
  ``arange``, ``linspace``, ``eye``... and the ``*_like`` forms), each block made where it lives;
- ``derived``: ``scalars`` (``scalar_tensor`` and the ``Tensor.new_*`` methods), ``windows``
  (``hann_window``, ``hamming_window``, ``blackman_window``, ``bartlett_window``,
  ``kaiser_window``) and ``signal_windows`` (the ``st.signal.windows`` namespace's functions,
  not top-level names).

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from . import prims as _prims
from .derived import scalars as _scalars
from .derived import windows as _windows
from .derived.scalars import *  # noqa: F403
from .derived.windows import *  # noqa: F403
from .prims import *  # noqa: F403

__all__ = [*_prims.__all__, *_scalars.__all__, *_windows.__all__]
