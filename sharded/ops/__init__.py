"""The op registry and the per-primitive planners.

Planners turn an op on sharded operands into per-worker commands: they read operands through
``_layout``, ``_dtype`` and ``_keys`` and return :class:`~sharded.ops.registry.Result` objects
(layout, dtype, shard keys) that ``tensor.py`` wraps. They import neither Ray nor the tensor
class, so every rule here is testable on the in-process executor.
"""

from . import creation, elementwise, indexing, matmul, movement, reduce, views  # noqa: F401
