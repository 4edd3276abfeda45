"""``diff``: forward differences along any dim, the split one included.

Each shard computes the differences of its own rows and reads one halo row -- the first row
after its block, from whichever shard holds it -- worker to worker; the output keeps the
input's cuts (each shard keeps its starting row). The gradient reads one row before the
block the same way.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps, gather_regions
from ....core.dispatch import apply, as_tensor, is_tensor
from ....core.registry import bind, kernel, nondiff, primitive, vjp
from ....errors import ArgumentError, DTypeError, ShapeError
from ....layout import Layout, normalize_dim
from ....runtime.commands import Key

__all__ = ["diff"]


# ---------------------------------------------------------------------------------- diff
def _diff_layout(lay: Layout, d: int, m: int) -> Layout:
    """``lay`` with dim ``d`` cut to ``m`` rows: each shard keeps its starting row."""
    shape = lay.shape[:d] + (m,) + lay.shape[d + 1 :]
    if lay.is_replicated:
        return Layout.from_bounds(shape, [(0, n) for n in shape], lay.workers, replicated=True)
    bounds = list(lay.bounds)
    bounds[d] = tuple(min(b, m) for b in bounds[d])
    return Layout.from_bounds(shape, bounds, lay.workers)


@kernel
def diff_block(xp, a, halo, axis):
    """Differences of consecutive rows of a block along ``axis``, with ``halo`` (the next
    block's first row, or an empty array) after its last row."""
    n = a.shape[axis] - 1 + halo.shape[axis]
    shape = list(a.shape)
    shape[axis] = max(n, 0)
    out = xp.empty(shape, dtype=a.dtype)
    op = xp.logical_xor if a.dtype == np.bool_ else xp.subtract

    def rows(arr, lo, hi):
        sl = [slice(None)] * arr.ndim
        sl[axis] = slice(lo, hi)
        return arr[tuple(sl)]

    k = a.shape[axis]
    if k > 1:
        op(rows(a, 1, k), rows(a, 0, k - 1), out=rows(out, 0, k - 1))
    if halo.shape[axis] and k:
        op(halo, rows(a, k - 1, k), out=rows(out, k - 1, k))
    return out


def _diff_spec(x, dim):
    shape = list(x.shape)
    shape[dim] = max(shape[dim] - 1, 0)
    return tuple(shape), x.dtype


@primitive("diff1", kernels=[diff_block], out_spec=_diff_spec, kind="scan")
def _diff1_plan(ex, x, dim):
    """One step of ``diff`` along ``dim``: each shard reads one halo row from the next."""
    lay = x._layout
    n = lay.shape[dim]
    out = _diff_layout(lay, dim, max(n - 1, 0))
    shards = lay.shards()
    wanted = []
    for w, offs, shp in shards:
        hi = offs[dim] + shp[dim]
        reg = [(o, o + m) for o, m in zip(offs, shp)]
        reg[dim] = (hi, hi + 1) if (hi < n and shp[dim] and not lay.is_replicated) else (hi, hi)
        wanted.append((w, reg))
    hargs, temps = gather_regions(ex, x, wanted)
    keys = []
    for s, (w, _, _) in enumerate(shards):
        k = ex.new_key()
        ex.submit(
            w, "diff_block", (Key(x._keys[s], None), hargs[s]), (k,), {"axis": dim}, ("diff", s)
        )
        keys.append(k)
    free_temps(ex, temps)
    return Operand(out, x._dtype, keys)


@kernel
def diff_grad_block(xp, g, axis, a, lo, hi, n):
    """Rows ``[lo, hi)`` of the gradient of a one-step diff over ``n`` rows, from the rows
    ``[a, ...)`` of the output gradient ``g``: ``gx[j] = g[j-1] - g[j]`` (0 outside)."""
    gm = xp.moveaxis(g, axis, 0)
    out = xp.zeros((hi - lo,) + gm.shape[1:], dtype=g.dtype)
    m = n - 1  # rows of g
    # + g[j-1] for j in [max(lo,1), min(hi, m+1))
    s0, s1 = max(lo, 1), min(hi, m + 1)
    if s1 > s0:
        out[s0 - lo : s1 - lo] += gm[s0 - 1 - a : s1 - 1 - a]
    # - g[j] for j in [lo, min(hi, m))
    t1 = min(hi, m)
    if t1 > lo:
        out[: t1 - lo] -= gm[lo - a : t1 - a]
    return xp.ascontiguousarray(xp.moveaxis(out, 0, axis))


@primitive("diff1_grad", kernels=[diff_grad_block], kind="scan")
def _diff1_grad_plan(ex, g, lay, dim):
    """The gradient of ``diff1`` laid out as the input (``lay``): each shard reads the
    output-gradient rows from one before its own to its last."""
    n = lay.shape[dim]
    shards = lay.shards()
    wanted, params = [], []
    for w, offs, shp in shards:
        lo, hi = (0, n) if lay.is_replicated else (offs[dim], offs[dim] + shp[dim])
        a, b = max(lo - 1, 0), min(hi, n - 1)
        reg = [(o, o + m) for o, m in zip(offs, shp)]
        reg[dim] = (a, max(a, b)) if hi > lo else (a, a)
        wanted.append((w, reg))
        params.append({"axis": dim, "a": a, "lo": lo, "hi": hi, "n": n})
    gargs, temps = gather_regions(ex, g, wanted)
    keys = []
    for s, (w, _, _) in enumerate(shards):
        k = ex.new_key()
        ex.submit(w, "diff_grad_block", (gargs[s],), (k,), params[s], ("diff_grad", s))
        keys.append(k)
    free_temps(ex, temps)
    return Operand(lay, g._dtype, keys)


nondiff("diff1_grad")


@vjp("diff1")
def _diff1_vjp(gs, node):
    x, d = node.args
    return (apply("diff1_grad", gs[0], x._layout, d), None)


@bind("diff")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """``n``-th forward difference along ``dim`` (``prepend``/``append`` are concatenated
    first; bool tensors use xor, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.diff(st.tensor([1, 3, 6, 10], shards=2)).tolist()
    [2, 3, 4]
    """
    x = input if is_tensor(input) else as_tensor(input)
    if x.ndim == 0:
        raise ArgumentError("diff expects input to be at least one-dimensional")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise DTypeError(f"diff(): argument 'n' must be int, not {n!r}")
    if n < 0:
        raise ArgumentError(f"order must be non-negative but got {n!r}")
    d = normalize_dim(dim, x.ndim)
    parts = []
    for name, t in (("prepend", prepend), (None, x), ("append", append)):
        if t is None:
            continue
        if name is not None:
            if isinstance(t, (bool, int, float, complex)):
                raise DTypeError(
                    f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}"
                )
            t = t if is_tensor(t) else as_tensor(t)
            if t.ndim != x.ndim:
                raise ShapeError(
                    f"diff expects prepend or append to be the same dimension as input "
                    f"({name} has {t.ndim} dims, input {x.ndim})"
                )
            other = [s for i, s in enumerate(t.shape) if i != d]
            if other != [s for i, s in enumerate(x.shape) if i != d]:
                raise ShapeError(
                    f"diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension ({name} {list(t.shape)}, "
                    f"input {list(x.shape)}, dim {d})"
                )
        parts.append(t)
    if n == 0:  # torch checks prepend/append, then returns a copy of input without them
        return x.clone()
    dt = parts[0].dtype
    for t in parts[1:]:  # torch concatenates first: the parts promote as in cat
        dt = D.promote_types(dt, t.dtype)
    parts = [t if t.dtype == dt else t.to(dt) for t in parts]
    if len(parts) > 1:
        x = apply("cat", *parts, dim=d)
    for _ in range(min(n, x.shape[d])):  # past the length every step is empty
        x = apply("diff1", x, d)
    return x
