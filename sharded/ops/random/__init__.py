"""Randomness: the counter-based generator (manual_seed, rand, randn, randint,
randperm...), sampling (multinomial, bernoulli) and the in-place samplers.

- ``prims``: ``counter`` (the generator and the seed state), ``sampling`` (normal,
  bernoulli, multinomial, poisson);
- ``derived``: the in-place samplers (``random_``, ``exponential_``... tensor methods
  only).

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from . import derived  # noqa: F401  (registers its primitives)
from .prims import counter as _counter
from .prims import sampling as _sampling
from .prims.counter import *  # noqa: F403
from .prims.counter import fork_rng  # st.random.fork_rng (torch.random.fork_rng), not top-level  # noqa: F401
from .prims.sampling import *  # noqa: F403

__all__ = [*_counter.__all__, *_sampling.__all__]
