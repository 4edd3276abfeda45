"""``nonzero_static``: ``nonzero`` with a fixed number of rows, for shapes known in advance
(truncated, or padded with ``fill_value``)."""

from __future__ import annotations

import numbers

from ....core.dispatch import as_tensor, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, ArgumentTypeError
from ...creation.prims import full
from ...shape.prims.joining import cat
from ..prims.index_ops import nonzero

__all__ = ["nonzero_static"]


def _int(v, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(
            f"nonzero_static(): argument '{name}' must be int, not {type(v).__name__}"
        )
    return int(v)


@bind("nonzero_static")
def nonzero_static(input, *, size, fill_value=-1):
    """The ``(size, ndim)`` int64 indices of the first ``size`` non-zero elements of
    ``input`` in C order, as ``torch.nonzero_static``: ``nonzero``'s rows cut to ``size``,
    or padded with rows of ``fill_value``. ``nonzero`` reads one count per shard.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[0, 1, 0], [2, 0, 3]], shards=2)
    >>> st.nonzero_static(x, size=2).tolist()
    [[0, 1], [1, 0]]
    >>> x.nonzero_static(size=4, fill_value=-7).tolist()
    [[0, 1], [1, 0], [1, 2], [-7, -7]]
    """
    x = input if is_tensor(input) else as_tensor(input)
    size, fill_value = _int(size, "size"), _int(fill_value, "fill_value")
    if size < 0:
        raise ArgumentError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    if x.ndim == 0:  # torch: (size, 0), whatever the value
        return full((size, 0), fill_value)
    nz = nonzero(x)
    n = nz.shape[0]
    if n >= size:
        return nz[:size]
    return cat([nz, full((size - n, x.ndim), fill_value)])
