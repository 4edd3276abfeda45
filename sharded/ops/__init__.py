"""The op families: one module per family, each primitive one block (kernels, rules,
planner, VJP, public names), registered in :mod:`sharded.core.registry`."""

from ..core import registry  # noqa: F401  (``sharded.ops.registry``: the table they fill)
from . import (  # noqa: F401
    arithmetic,
    count,
    creation,
    diff,
    einsum,
    elementwise,
    indexing,
    joining,
    linalg,
    logical,
    masking,
    matmul,
    random,
    reduce,
    reshape,
    scan,
    search,
    selection,
    unary,
    views,
)
