"""``x.storage()`` / ``x.untyped_storage()``: a read-only description of a tensor's sharded
storage, as the tutorials inspect torch's -- one entry per shard (worker, first global
position, elements, bytes), the total size, and ``tolist()`` for small tensors.

A view describes the storage of its base (as in torch, views share it). Reading values goes
through the base tensor (``tolist`` gathers; refused above ``TOLIST_LIMIT`` elements).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .core.registry import bind
from .errors import ArgumentError

__all__ = ["ShardStorage", "ShardedStorage"]

TOLIST_LIMIT = 1 << 20  # elements: above this, tolist() would flood the driver


@dataclasses.dataclass(frozen=True)
class ShardStorage:
    """One shard's storage: its worker, the row-major global position of its first element
    (``offset``), its block's index ``start`` and ``shape``, elements and bytes."""

    worker: int
    offset: int
    start: tuple
    shape: tuple
    elements: int
    nbytes: int


@dataclasses.dataclass(frozen=True, eq=False)
class ShardedStorage:
    """The storage of a sharded tensor (typed: elements; untyped: bytes)."""

    tensor: object  # the base tensor whose storage this is
    dtype: object
    untyped: bool
    shards: tuple

    def size(self) -> int:
        """Elements (bytes when untyped) of the whole storage, replicas counted once."""
        n = self.tensor.numel()
        return n * self.dtype.itemsize if self.untyped else n

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        """Bytes of the whole storage (one copy of each element)."""
        return self.tensor.numel() * self.dtype.itemsize

    def element_size(self) -> int:
        return 1 if self.untyped else self.dtype.itemsize

    def device(self):
        return self.tensor.device

    def tolist(self) -> list:
        """The values (bytes when untyped) in row-major order; refused for big tensors."""
        n = self.tensor.numel()
        if n > TOLIST_LIMIT:
            raise ArgumentError(
                f"storage.tolist() reads every element to the driver: {n} elements is more "
                f"than the limit of {TOLIST_LIMIT}"
            )
        a = np.ascontiguousarray(self.tensor.detach().numpy()).reshape(-1)
        return a.view(np.uint8).tolist() if self.untyped else a.tolist()

    def __repr__(self) -> str:
        kind = "UntypedStorage" if self.untyped else f"TypedStorage(dtype={self.dtype})"
        lines = [f"sharded.{kind} of size {self.size()} in {len(self.shards)} shards:"]
        for s in self.shards:
            lines.append(
                f"  worker {s.worker}: offset {s.offset}, shape {list(s.shape)}, "
                f"{s.elements} elements, {s.nbytes} bytes"
            )
        return "\n".join(lines)


def _describe(x, untyped: bool) -> ShardedStorage:
    base = x._base if getattr(x, "_base", None) is not None else x
    lay, item = base._layout, base.dtype.itemsize
    gshape = tuple(lay.shape)
    shards = []
    for w, offs, shp in lay.shards():
        n = math.prod(shp)
        flat = int(np.ravel_multi_index(offs, gshape)) if n and gshape else 0
        shards.append(ShardStorage(w, flat, tuple(offs), tuple(shp), n, n * item))
    return ShardedStorage(base, base.dtype, untyped, tuple(shards))


@bind("untyped_storage")
def untyped_storage(self) -> ShardedStorage:
    """The tensor's storage in bytes: per shard its worker, offset, elements and bytes.

    Examples
    --------
    >>> import sharded as st
    >>> s = st.zeros(4, shards=2).untyped_storage()
    >>> s.size(), [sh.nbytes for sh in s.shards]
    (16, [8, 8])
    """
    return _describe(self, True)


@bind("storage")
def storage(self) -> ShardedStorage:
    """The tensor's storage in elements (a view: its base's storage).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1, 2, 3], shards=3).storage().tolist()
    [1, 2, 3]
    """
    return _describe(self, False)
