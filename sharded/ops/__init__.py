"""The op families, one package each, with fixed roles:

- ``prims`` (a module or a package): each primitive one block: its kernel(s), pure shape,
  dtype and layout rules, planner, VJP and the names it binds;
- ``kernels``: worker code only (kernels and the pure functions they call);
- ``plan``: driver-side planning shared by the family's primitives;
- ``derived``: ops composed of other ops (no rules or gradients of their own);
- the family's ``__init__`` names its top-level ``st`` functions (``__all__``, the union of
  its modules').

``FAMILIES`` is the one list of them: ``sharded`` star-imports this package, whose
``__all__`` is every family's top-level names, and :mod:`sharded.array_api` builds its
namespace from the same list.
"""

from ..core import (
    registry,  # noqa: F401  (the table the families fill)
    toplevel,
)

# A family's prims import only core/ and their own family; derived ops may import other
# families' modules, never in a cycle (a family's __init__ star-imports its modules, so a
# cycle through two families' derived modules would meet a half-loaded module).
# ``sharded/__init__`` imports this package before anything else.
from . import creation, elementwise, fft, index, linalg, nnops, order, random, reduce, shape

FAMILIES = (creation, elementwise, fft, index, linalg, nnops, order, random, reduce, shape)
__all__ = [n for f in FAMILIES for n in f.__all__]

from .creation import *  # noqa: E402, F403
from .elementwise import *  # noqa: E402, F403
from .fft import *  # noqa: E402, F403
from .index import *  # noqa: E402, F403
from .linalg import *  # noqa: E402, F403
from .nnops import *  # noqa: E402, F403
from .order import *  # noqa: E402, F403
from .random import *  # noqa: E402, F403
from .reduce import *  # noqa: E402, F403
from .shape import *  # noqa: E402, F403

# torch's calling rules (``out=``, tensor-only arguments) on the exported names only: methods,
# operators, the families' calls among themselves and the Array API keep the plain functions.
toplevel.wrap_all(globals(), __all__, elementwise.__all__)
