"""Neural-network building blocks: Parameter, Module, layers and losses.

Data parallelism is the default pattern: layers create their parameters *replicated* on every
worker, inputs are row-sharded, so the forward pass is local on every shard, and backward
all-reduces each parameter's gradient across the workers (see ``sharded.autograd``).

Laid out as torch's ``nn``: the classes in :mod:`.modules` (one module per kind), the
functions in :mod:`.functional`, and :mod:`.init` and :mod:`.utils`.
"""

from . import functional, init, modules, utils
from .modules import *  # noqa: F403

__all__ = ["functional", "init", "utils", *modules.__all__]
