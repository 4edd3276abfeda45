"""Combinatorics of 1-D tensors: ``cartesian_prod`` (a meshgrid stacked as columns) and
``combinations`` (the input gathered at the index tuples of Python's ``itertools``).

Each is a composition of primitives (``meshgrid``, ``stack``, ``take``), so gradients come
from the primitives; no value is read by the driver.
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np

from ....core.dispatch import as_tensor, is_tensor
from ....errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..prims.joining import stack
from ..prims.triangular import meshgrid
from .tile import take

__all__ = ["cartesian_prod", "combinations"]


def _vector(name, t):
    if not is_tensor(t):
        raise DTypeError(f"{name}(): expected a Tensor, got {type(t).__name__}")
    if t.ndim != 1:
        raise ShapeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    return t


# -------------------------------------------------------------- cartesian_prod, combinations
# cartesian_prod = the ij-meshgrid of the vectors, each flattened, stacked as columns
def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors (one dtype), one row per combination; a single
    tensor is returned as it is.

    Examples
    --------
    >>> import sharded as st
    >>> st.cartesian_prod(st.tensor([1, 2]), st.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    ts = [_vector("cartesian_prod", t) for t in tensors]
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


# combinations = input gathered at the index tuples itertools lists (the index table has
# the output's size, built from the length alone: no value is read)
def combinations(input, r=2, with_replacement=False):
    """Length-``r`` combinations of the elements of a 1-D tensor, as rows (the order of
    Python's ``itertools.combinations``; with ``with_replacement``, of
    ``combinations_with_replacement``).

    Examples
    --------
    >>> import sharded as st
    >>> st.combinations(st.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    x = _vector("combinations", input)
    if not isinstance(r, numbers.Integral) or isinstance(r, bool):
        raise ArgumentTypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if r < 0:
        raise ArgumentError(f"Expect a non-negative number, but got {r}")
    if r == 0:  # torch: an empty vector, not a (1, 0) table
        return x[:0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return take(x, as_tensor(idx))
