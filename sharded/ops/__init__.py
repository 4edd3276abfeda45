"""The op families: one module per family, each primitive one block (kernels, rules,
planner, VJP, public names), registered in :mod:`sharded.core.registry`."""

from ..core import registry  # noqa: F401  (``sharded.ops.registry``: the table they fill)
from . import (  # noqa: F401
    arithmetic,
    binary_math,
    checks,
    complex_,
    conv,
    count,
    creation,
    diff,
    einsum,
    elementwise,
    exp_log,
    fft,
    index_ops,
    index_put,
    indexing,
    joining,
    linalg,
    logical,
    masking,
    matmul,
    order,
    pool,
    pool_prims,
    random,
    reduce,
    reshape,
    rounding,
    routing,
    sampling,
    scan,
    scatter,
    search,
    selection,
    sets,
    sort,
    special,
    splitting,
    tile,
    triangular,
    trig,
    unary,
    views,
)

# The families whose ``__all__`` are top-level ``st`` functions (``sharded/__init__`` star-imports
# them; :mod:`sharded.array_api` gathers its ``st`` namespace from this one tuple). Left out:
# machinery (elementwise, indexing, masking, routing) and the sub-namespaces ``st.linalg``,
# ``st.fft``.
PUBLIC_FAMILIES = (
    arithmetic, binary_math, complex_, count, creation, diff, einsum, exp_log, index_ops,
    index_put, joining, logical, matmul, order, random, reduce, reshape, rounding, sampling, scan,
    scatter, search, selection, sets, sort, special, splitting, tile, triangular, trig, unary,
    views,
)  # fmt: skip
