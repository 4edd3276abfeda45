"""Sets: ``unique`` and ``unique_consecutive`` (values, inverse ids, counts), of the flattened
input or of slices along a dim, on any layout, never gathered on one worker or the driver.

* ``exchange.py``: the routing the set ops share: the sample-sort exchange of unique values
  or rows (samples -> splitters -> pieces worker to worker -> merges), ids routed back to
  their source shards, row comparisons in blocks, the small layout moves.
* ``flat.py``: ``unique`` of 1-d values (``dim=None``).
* ``rows.py``: ``unique(dim=)``: slices along a dim, sorted lexicographically.
* ``consecutive.py``: ``unique_consecutive``, runs joined across shard borders.
* ``api.py``: the public functions and methods.

This package is the family's namespace: the ``st`` functions are its ``__all__``.
"""

from __future__ import annotations

from . import consecutive, exchange, flat, rows  # noqa: F401  (their primitives register)
from .api import unique, unique_consecutive

__all__ = ["unique", "unique_consecutive"]
