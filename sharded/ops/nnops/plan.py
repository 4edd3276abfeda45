"""Planning shared by the convolution and pooling primitives (driver code): output sizes of
pooling windows, the layout rules of ops that work on (N, C, H, W) blocks and the submission
of one command per shard (the worker side is :mod:`.kernels`).
"""

from __future__ import annotations

from ...core.dataflow import even_bounds
from ...layout import Layout


def pool_out(n, k, s, p, d, ceil_mode):
    """torch's ``pooling_output_shape``: with ``ceil_mode`` the last window may hang over the
    right edge, but must start inside the input or its left padding."""
    num = n + 2 * p - d * (k - 1) - 1 + ((s - 1) if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def batch_layout(lay: Layout, keep=(0,)) -> Layout | None:
    """``None`` when ``lay`` is replicated or split only along the dims in ``keep`` (the work
    is then local); else the layout to reshard to: split along the batch dim over as many
    shards as before (one when N is 1), every other dim whole."""
    if lay.is_replicated or set(lay.split_dims) <= set(keep):
        return None
    n = lay.shape[0]
    b0 = even_bounds(n, lay.num_shards)
    bounds = [b0] + [(0, s) for s in lay.shape[1:]]
    return Layout.from_bounds(lay.shape, bounds, lay.workers[: len(b0) - 1])


def out_layout(lay: Layout, shape, keep=(0,)) -> Layout:
    """The layout of a result of ``shape`` computed shard by shard from an input laid out as
    ``lay``: the dims in ``keep`` keep their cuts, the others are whole."""
    if lay.is_replicated:
        return Layout.from_bounds(shape, [(0, s) for s in shape], lay.workers, replicated=True)
    bounds = [lay.bounds[d] if d in keep else (0, s) for d, s in enumerate(shape)]
    return Layout.from_bounds(shape, bounds, lay.workers)


def submit_local(ex, name, lay: Layout, args, params):
    """One ``name`` command per shard of ``lay`` (``args[s]``: that shard's arguments) making
    the same shard of the result; returns the keys."""
    keys = []
    for s, (w, _, _) in enumerate(lay.shards()):
        k = ex.new_key()
        ex.submit(w, name, tuple(args[s]), (k,), params, (name, s))
        keys.append(k)
    return keys
