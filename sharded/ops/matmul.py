"""The matmul primitive and its layout rule.

Output layout rule, for ``a (..., n, k) @ b (..., k, m)``:

* ``a`` not split along ``k``: the output keeps ``a``'s chunking of its batch and row dims and
  holds ``m`` whole; every output shard multiplies its ``a`` block by the matching batch of
  ``b``, aligned to it like an elementwise operand (a replicated ``b`` -- a weight -- is read
  locally, so ``rows @ replicated`` moves nothing).
* 2-D ``a`` split along ``k``: ``b`` is aligned to the same ``k`` chunks, every worker
  multiplies its pair of blocks, and the partial products are summed by the reduction tree;
  the result is one shard on the first block's worker. This is how ``x.T @ grad`` of a
  row-sharded ``x`` aggregates a weight gradient without the driver.
"""

from __future__ import annotations

from ..layout import Layout
from .movement import align, fetch_regions, free_temps
from .reduce import plan_reduce
from .registry import Result, primitive


class _Partials:
    """A stack of per-worker partial products, seen as a tensor for the reduction planner."""

    def __init__(self, layout, dtype, keys):
        self._layout, self._dtype, self._keys = layout, dtype, keys


def _k_split(ex, a, b, out_dtype) -> Result:
    la = a._layout
    n, kk = la.shape
    m = b._layout.shape[1]
    kb = la.bounds[1]
    target = Layout.from_bounds((kk, m), [kb, (0, m)], [la.workers[la.index((0, c))]
                                                        for c in range(len(kb) - 1)])
    bargs, temps = align(ex, b, target)
    if la.grid[0] != 1:
        raise ValueError("k-split matmul expects a's rows whole")
    keys, ws = [], []
    for c in range(len(kb) - 1):
        s = la.index((0, c))
        w = la.workers[s]
        k = ex.new_key()
        ex.submit(w, "matmul", (("k", a._keys[s], None), bargs[c]), (k,),
                  {"out": out_dtype.np.str, "stack": True}, ("matmul", s))
        keys.append(k)
        ws.append(w)
    free_temps(ex, temps)
    g = len(keys)
    stack = Layout.from_bounds((g, n, m), [tuple(range(g + 1)), (0, n), (0, m)], ws)
    parts = _Partials(stack, out_dtype, tuple(keys))
    res = plan_reduce(ex, parts, "sum", (0,), False, out_dtype, label="matmul")[0]
    for w, k in zip(ws, keys):
        ex.free(w, [k])
    return res


@primitive("matmul", kind="linalg")
def matmul(ex, a, b, out_dtype) -> Result:
    """``a @ b`` for tensors of at least 2 dims (the caller handles 1-D operands, checks
    shapes and reshards ``a`` so that a split ``k`` only occurs in the 2-D case)."""
    la, lb = a._layout, b._layout
    if la.ndim == 2 and lb.ndim == 2 and not la.is_replicated and la.grid[1] > 1:
        return _k_split(ex, a, b, out_dtype)
    batch_a, batch_b = la.shape[:-2], lb.shape[:-2]
    nb = max(len(batch_a), len(batch_b))
    if len(batch_a) != nb:
        raise ValueError("matmul planner expects a to carry the full batch shape")
    m = lb.shape[-1]
    shape = la.shape[:-1] + (m,)
    bounds = list(la.bounds[:-1]) + [(0, m)]
    out = Layout.from_bounds(shape, bounds, la.workers, la.is_replicated)
    # b's block for an output shard: its batch slice (broadcast), all of k and m
    off = nb - len(batch_b)
    wanted = []
    for w, offs, shp in out.shards():
        reg = [(0, 1) if lb.shape[i] == 1 else (offs[i + off], offs[i + off] + shp[i + off])
               for i in range(len(batch_b))]
        wanted.append((w, reg + [(0, lb.shape[-2]), (0, m)]))
    bargs, temps = fetch_regions(ex, b, wanted)
    keys = []
    for s, (w, _, _) in enumerate(out.shards()):
        k = ex.new_key()
        ex.submit(w, "matmul", (("k", a._keys[s], None), bargs[s]), (k,),
                  {"out": out_dtype.np.str}, ("matmul", s))
        keys.append(k)
    free_temps(ex, temps)
    return Result(out, out_dtype, tuple(keys))
