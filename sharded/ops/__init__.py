"""The op families, one package each with fixed roles (see each family's ``__init__``).

``FAMILIES`` is the one list of them: ``sharded`` star-imports this package, whose
``__all__`` is every family's top-level names, and :mod:`sharded.array_api` builds its
namespace from the same list.
"""

from ..core import registry  # noqa: F401  (the table the families fill)

# A family's prims import only core/ and their own family; derived ops may import other
# families' modules, never in a cycle (a family's __init__ star-imports its modules, so a
# cycle through two families' derived modules would meet a half-loaded module).
# ``sharded/__init__`` imports this package before anything else.
from . import creation, elementwise, fft, index, linalg, nnops, order, random, reduce, shape

FAMILIES = (creation, elementwise, fft, index, linalg, nnops, order, random, reduce, shape)
__all__ = [n for f in FAMILIES for n in f.__all__]

from .creation import *  # noqa: E402, F403
from .elementwise import *  # noqa: E402, F403
from .index import *  # noqa: E402, F403
from .linalg import *  # noqa: E402, F403
from .nnops import *  # noqa: E402, F403
from .order import *  # noqa: E402, F403
from .random import *  # noqa: E402, F403
from .reduce import *  # noqa: E402, F403
from .shape import *  # noqa: E402, F403
