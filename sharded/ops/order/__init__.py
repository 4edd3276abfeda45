"""Data-dependent order: sort, top-k/k-th value/median/quantile/mode, scans, searches,
counts, diff, unique.

- ``prims``: ``sort`` (and ``unpermute``, its gradient), ``select`` (topk, kthvalue,
  median, quantile, mode), ``scan`` (cumsum, cummax...), ``search`` (searchsorted,
  bucketize), ``count`` (bincount, histc...), ``diff``, and the ``unique`` primitives
  (``unique_flat``, ``unique_rows``, ``unique_runs``);
- ``kernels``: worker kernels of ``sort``, ``select``, ``mode`` and ``scan``;
- ``plan``: the driver's set-op exchange, selection rounds and split ``mode``, and
  (``plan.sample_sort``) the two stages of the sample sort (``sort`` along a split dim);
- ``derived``: ``sets`` (unique, unique_consecutive, isin), ``gradient`` (finite
  differences) and ``histogramdd``.

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from .derived import gradient as _gradient
from .derived import histogramdd as _histogramdd
from .derived import sets as _sets
from .derived.gradient import *  # noqa: F403
from .derived.histogramdd import *  # noqa: F403
from .derived.sets import *  # noqa: F403
from .prims import count as _count
from .prims import diff as _diff
from .prims import scan as _scan
from .prims import search as _search
from .prims import select as _select
from .prims import sort as _sort
from .prims import unpermute as _unpermute  # noqa: F401 (registers the sort's gradient)
from .prims.count import *  # noqa: F403
from .prims.diff import *  # noqa: F403
from .prims.scan import *  # noqa: F403
from .prims.search import *  # noqa: F403
from .prims.select import *  # noqa: F403
from .prims.sort import *  # noqa: F403

__all__ = [
    *_count.__all__,
    *_diff.__all__,
    *_select.__all__,
    *_scan.__all__,
    *_search.__all__,
    *_sort.__all__,
    *_sets.__all__,
    *_gradient.__all__,
    *_histogramdd.__all__,
]
