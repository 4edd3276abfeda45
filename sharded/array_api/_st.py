"""``ST``: sharded's public op functions in one namespace, gathered from the modules that
``sharded/__init__`` star-imports (the namespace package may not import ``sharded`` itself,
which imports it: that would be a cycle)."""

from __future__ import annotations

from types import SimpleNamespace

from .. import functional
from ..ops import (
    arithmetic,
    binary_math,
    complex_,
    count,
    creation,
    diff,
    einsum,
    exp_log,
    index_ops,
    joining,
    logical,
    matmul,
    order,
    reduce,
    reshape,
    rounding,
    sampling,
    scan,
    scatter,
    search,
    selection,
    sets,
    sort,
    tile,
    triangular,
    trig,
    unary,
    views,
)

_MODULES = (
    functional, arithmetic, binary_math, complex_, count, creation, diff, einsum, exp_log,
    index_ops, joining, logical, matmul, order, reduce, reshape, rounding, sampling, scan,
    scatter, search, selection, sets, sort, tile, triangular, trig, unary, views,
)  # fmt: skip

ST = SimpleNamespace(**{n: getattr(m, n) for m in _MODULES for n in m.__all__})
