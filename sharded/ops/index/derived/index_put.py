"""torch's ``index_put``/``index_put_``, sharded: integer index tensors (bool masks too, with
``accumulate=True``) routed by the ``route_scatter`` primitive of
:mod:`sharded.ops.index.prims.routing` (reached by name); other keys take the indexing path
(``x[key] = values``).

Split from :mod:`sharded.ops.index.prims.index_ops` (the file limit); the index values are
never read by the driver except a bool mask's ``nonzero`` (one count per shard).
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, DTypeError, IndexOutOfRange, ShapeError

__all__ = ["index_put"]


# ------------------------------------------------------------------------ index_put
def _masks_as_indices(x, indices):
    """Bool mask tensors among integer index tensors replaced by their ``nonzero`` positions
    (one index tensor per mask dim), as torch does for ``index_put_(accumulate=True)``."""
    if not all(
        is_tensor(i) and i.ndim and i.dtype.name in ("bool", "int64", "int32") for i in indices
    ):
        return indices
    out, pos = [], 0
    for i in indices:
        if i.dtype != D.bool_:
            out.append(i)
            pos += 1
            continue
        if list(i.shape) != list(x.shape[pos : pos + i.ndim]):
            raise IndexOutOfRange(
                f"The shape of the mask {list(i.shape)} at index {pos} does not match the shape "
                f"of the indexed tensor {list(x.shape)} at index {pos}"
            )
        out += list(i.nonzero(as_tuple=True))
        pos += i.ndim
    return tuple(out)


def _same_dtype(x, values) -> None:
    """torch's check of index_put with integer indices or ``accumulate`` (a bool mask
    without ``accumulate`` casts the values, as ``x[mask] = v`` does)."""
    if values.dtype != x.dtype:
        raise DTypeError(
            f"Index put requires the source and destination dtypes match, got {x.dtype.name} "
            f"for the destination and {values.dtype.name} for the source."
        )


def _index_put(x, indices, values, accumulate, inplace):
    name = "index_put_" if inplace else "index_put"
    if not is_tensor(values):  # torch takes no scalar here (x[key] = 1.0 does: __setitem__)
        raise DTypeError(
            f"{name}(): argument 'values' must be Tensor, not {type(values).__name__} "
            f"(got {values!r})"
        )
    if not isinstance(indices, (tuple, list)):
        raise ArgumentError(f"{name}(): indices must be a tuple of tensors, got {indices!r}")
    indices = tuple(indices)
    if len(indices) > x.ndim:
        raise IndexOutOfRange(
            f"too many indices for tensor of dimension {x.ndim} (got {len(indices)})"
        )
    if accumulate or values.requires_grad:  # (the routed path is the differentiable one)
        _same_dtype(x, values)  # (before a mask's nonzero is queued)
        indices = _masks_as_indices(x, indices)
    ints = all(is_tensor(i) and i.dtype.name in ("int64", "int32") for i in indices)
    if not indices or not ints:  # bool masks, None or lists: the indexing path (reads them)
        if accumulate:
            raise ArgumentError("index_put(accumulate=True) needs integer index tensors")
        out = x if inplace else x.clone()
        out[indices] = values
        return out
    try:
        b = tuple(np.broadcast_shapes(*(tuple(i.shape) for i in indices)))
    except ValueError:
        raise ShapeError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + " ".join(str(list(i.shape)) for i in indices)
        ) from None
    k, nd = len(indices), x.ndim
    rest = tuple(x.shape[k:])
    shape = b + rest
    _same_dtype(x, values)
    if 0 in shape:
        out = x if inplace else x.clone()
        if values.requires_grad and not inplace:  # torch: values.grad zeros (x - 0.0 is x)
            out = out - (values.reshape(-1)[:0] if values.numel() else values).sum()
        return out
    idx = []
    for i in indices:
        i = i.expand(*b) if tuple(i.shape) != b else i
        i = i.reshape(b + (1,) * len(rest)).expand(*shape) if rest else i
        idx.append(i.contiguous())
    lay = idx[0]._layout
    idx = [idx[0]] + [i if i._layout == lay else i.reshard(layout=lay) for i in idx[1:]]
    try:
        np.broadcast_shapes(tuple(values.shape), shape)
    except ValueError:
        raise ShapeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
            f"broadcast to indexing result of shape {list(shape)}"
        ) from None
    if tuple(values.shape) != shape:
        values = values.expand(*shape).contiguous()
    if values._layout != lay:
        values = values.reshard(layout=lay)
    cmap = tuple(("i", d) if d < k else ("p", len(b) + d - k) for d in range(nd))
    reduce = "sum" if accumulate else None
    target = x if inplace else None
    out = apply(
        "route_scatter",
        x,
        tuple(idx),
        cmap,
        values,
        reduce=reduce,
        wrap=True,
        op="index_put",
        target=target,
    )
    return x if inplace else out


@bind("index_put")
def index_put(input, indices, values, accumulate=False):
    """``input`` with ``input[indices] = values`` (or ``+=`` with ``accumulate=True``, where
    repeated points accumulate), ``indices`` a tuple of integer tensors routed worker to
    worker (negative indices count from the end). Other keys (bool masks, ``None``) take the
    ``__setitem__`` path, which reads them on the driver. ``values`` must be a tensor, as in
    torch (:class:`~sharded.errors.DTypeError` otherwise; ``x[key] = 1.0`` takes scalars).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(3)
    >>> x.index_put((st.tensor([0, 0, -1]),), st.tensor(1.), accumulate=True).tolist()
    [2.0, 0.0, 1.0]
    """
    return _index_put(input, indices, values, accumulate, False)


@bind("index_put_")
def index_put_(input, indices, values, accumulate=False):
    """In-place :func:`index_put`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(2, 2); _ = x.index_put_((st.tensor([1]), st.tensor([0])), st.tensor(3.))
    >>> x.tolist()
    [[0.0, 0.0], [3.0, 0.0]]
    """
    return _index_put(input, indices, values, accumulate, True)
