"""``unravel_index``: flat indices to coordinates, by integer arithmetic on the index tensor
(``%`` and ``//`` from the last dim), so it runs where the indices are and reads nothing.
"""

from __future__ import annotations

import numbers

from .... import dtypes as D
from ....core.dispatch import as_tensor, is_tensor
from ....errors import ArgumentError, ArgumentTypeError

__all__ = ["unravel_index"]


# unravel_index: coordinates from the last dim: c = i mod n (floor), i = i div n, as torch
def unravel_index(indices, shape):
    """The coordinates, one int64 tensor per dim of ``shape``, of flat ``indices`` into
    a C-ordered array of that shape (out-of-range indices wrap, as torch's arithmetic does).

    Examples
    --------
    >>> import sharded as st
    >>> [c.tolist() for c in st.unravel_index(st.tensor([4, 1]), (2, 3))]
    [[1, 0], [1, 1]]
    """
    idx = indices if is_tensor(indices) else as_tensor(indices)
    if D.category(idx.dtype) != 1:  # bool is category 0
        raise ArgumentTypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in shape):
        bad = next(type(n) for n in shape if not isinstance(n, numbers.Integral))
        raise ArgumentTypeError(f"expected 'shape' sequence to only contain ints, but got {bad}")
    if any(n < 0 for n in shape):
        raise ArgumentError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape:
        raise ArgumentError(f"unravel_index(): shape {shape} has no elements to index")
    idx = idx.to(D.int64)
    out = []
    for n in reversed(shape):
        out.append(idx % n)
        idx = idx // n
    return tuple(reversed(out))
