"""Randomness: the counter-based generator (manual_seed, rand, randn, randint, randperm...), sampling (multinomial, bernoulli) and the in-place samplers.

Fixed roles: ``prims`` (each primitive one block: kernels, rules, planner, VJP,
bound names), ``kernels`` (worker code only), ``plan`` (planning shared by the
family's primitives), ``derived`` (compositions of other ops). This ``__init__`` names
the family's top-level ``st`` functions (``__all__``).
"""

from . import derived  # noqa: F401  (registers its primitives)
from .prims import counter as _counter
from .prims import sampling as _sampling
from .prims.counter import *  # noqa: F403
from .prims.counter import fork_rng  # st.random.fork_rng (torch.random.fork_rng), not top-level  # noqa: F401
from .prims.sampling import *  # noqa: F403

__all__ = [*_counter.__all__, *_sampling.__all__]
