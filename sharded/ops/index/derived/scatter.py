"""torch's ``gather``, ``scatter``, ``scatter_add``, ``scatter_reduce`` and
``take_along_dim``, with their in-place and method forms, on the routed primitives
``route_gather``/``route_scatter`` of :mod:`sharded.ops.index.prims.routing` (reached by
name): indices are routed to the workers that own the rows they name, never read by the
driver.

Along a dim that is not split, every index block finds its points on its own worker and
nothing moves. Shapes, dtypes and dims are checked as torch checks them before anything
is queued; an out-of-range index raises :class:`~sharded.errors.IndexOutOfRange` after the
driver read the per-block counts (one wait), before anything is written.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, DimError, DTypeError, ShapeError
from ....layout import normalize_dim

__all__ = [
    "gather",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "take_along_dim",
]

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


# ------------------------------------------------------------------------ checks
def _index_dtype(index, op):
    if not is_tensor(index):
        raise DTypeError(f"{op}(): index must be a tensor, got {type(index).__name__}")
    # torch checks the dtype of a non-empty index only: an empty uint8 or bool index passes
    if index.dtype.name not in ("int64", "int32") and index.numel():
        raise DTypeError(f"{op}(): Expected dtype int32/int64 for index, got {index.dtype.name}")


def _check(op, x, dim, index, src=None):
    """torch's checks of gather/scatter operands; returns the normalised dim."""
    _index_dtype(index, op)
    nd = max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise DimError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    dim = dim % nd
    if index.ndim != x.ndim and index.numel():
        raise ShapeError(
            f"{op}(): Index tensor must have the same number of dimensions as input tensor "
            f"(index {list(index.shape)}, input {list(x.shape)})"
        )
    for d in range(index.ndim if index.numel() else 0):
        if (
            d != dim
            and index.shape[d] > x.shape[d]
            or src is not None
            and (index.shape[d] > src.shape[d])
        ):
            raise ShapeError(
                f"{op}(): Expected index {list(index.shape)} to be no larger than self "
                f"{list(x.shape)} apart from dimension {dim}"
                + (
                    f" and to be no larger size than src {list(src.shape)}"
                    if src is not None
                    else ""
                )
            )
    return dim


def _zero_of(t):
    """0 (an empty sum) that keeps ``t`` in the autograd graph: torch's results of empty
    gathers and scatters require grad, and their operands' grads are zeros."""
    return (t.reshape(-1)[:0] if t.numel() else t).sum()


def _cmap(nd, dim):
    return tuple(("i", 0) if d == dim else ("p", d) for d in range(nd))


def _src_block(src, index):
    """``src`` cut to the index's shape (torch reads only that corner of ``src``)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)].contiguous()


# ------------------------------------------------------------------------ public ops
@bind("gather")
def gather(input, dim, index, *, sparse_grad=False):
    """Values of ``input`` along ``dim`` at ``index`` (torch's ``gather``): ``out[i][j] =
    input[index[i][j]][j]`` for ``dim=0``. The result is laid out like ``index``; index
    blocks are routed to the workers owning the rows they name and the values routed back
    (the driver reads per-block counts: one wait). An out-of-range index raises
    :class:`~sharded.errors.IndexOutOfRange` naming it.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1, 2], [3, 4]])
    >>> st.gather(x, 1, st.tensor([[0, 0], [1, 0]])).tolist()
    [[1, 1], [4, 3]]
    """
    return _gather(input, dim, index, "gather")


def _gather(input, dim, index, op):
    """:func:`gather` whose errors name ``op`` (``take_along_dim`` routes through here)."""
    _index_dtype(index, op)
    if 0 in (input.ndim, index.ndim) and max(input.ndim, index.ndim) <= 1:
        # torch reads a 0-d input or index of gather as 1-d (its ensure_nonempty_dim):
        # torch.gather(torch.tensor(5.), 0, torch.tensor([0, 0])) is [5., 5.]
        out = _gather(input.reshape(-1), dim, index.reshape(-1), op)
        return out.reshape(index.shape)
    dim = _check(op, input, dim, index)
    if not index.numel():
        out = apply("full", index._layout, 0, input.dtype)
        # an empty sum keeps input in the graph (torch: out.requires_grad, input.grad zeros)
        return out + _zero_of(input) if input.requires_grad else out
    return apply("route_gather", input, (index,), _cmap(input.ndim, dim), op=op)


def _scatter_any(op, input, dim, index, src, value, reduce, include_self, inplace):
    nds = (input.ndim, index.ndim) + ((src.ndim,) if is_tensor(src) else ())
    if max(nds) <= 1 and 0 in nds:
        # torch reads 0-d operands of scatter as 1-d (its ensure_nonempty_dim), as for gather:
        # torch.tensor(1.).scatter_add(0, torch.tensor(0), torch.tensor(5.)) is tensor(6.)
        index, src = index.reshape(-1), src.reshape(-1) if is_tensor(src) else src
        if input.ndim == 0:
            flat = input.reshape(-1)
            out = _scatter_any(op, flat, dim, index, src, value, reduce, include_self, False)
            out = out.reshape(())
            return input.copy_(out) if inplace else out
    if is_tensor(src) and src.ndim != index.ndim and index.numel():
        raise ShapeError(
            f"{op}(): Index tensor must have the same number of dimensions as src tensor "
            f"(index {list(index.shape)}, src {list(src.shape)})"
        )
    dim = _check(op, input, dim, index, src if is_tensor(src) else None)
    if is_tensor(src) and src.dtype != input.dtype:
        raise DTypeError(
            f"{op}(): Expected self.dtype to be equal to src.dtype "
            f"(got {input.dtype.name} and {src.dtype.name})"
        )
    values = _src_block(src, index) if is_tensor(src) else D.check_int(value, input.dtype)
    target = input if inplace else None
    _reduce_dtype(op, reduce, input.dtype, not index.numel())
    if not index.numel():
        out = input if inplace else input.clone()
        if is_tensor(src) and src.requires_grad and not inplace:
            out = out - _zero_of(src)  # x - 0.0 is x (-0.0 too); src.grad zeros
        return out
    if inplace:
        apply(
            "route_scatter",
            input,
            (index,),
            _cmap(input.ndim, dim),
            values,
            reduce=reduce,
            include_self=include_self,
            op=op,
            target=input,
        )
        return input
    return apply(
        "route_scatter",
        input,
        (index,),
        _cmap(input.ndim, dim),
        values,
        reduce=reduce,
        include_self=include_self,
        op=op,
        target=target,
    )


def _reduce_dtype(op, reduce, dt, empty):
    """torch has no kernel for amax/amin of complex (checked when there is work) or mean of
    bool (always: its final division); a worker's would fail at the next read instead."""
    if (reduce in ("amax", "amin") and dt.is_complex and not empty) or (
        reduce == "mean" and dt.name == "bool"
    ):
        raise DTypeError(f'{op}(): reduce "{reduce}" is not implemented for {dt.name}')


def _legacy_reduce(reduce):
    if reduce is None:
        return None
    if reduce not in ("add", "multiply"):
        raise ArgumentError(f"reduce argument must be either add or multiply, got {reduce!r}")
    return "sum" if reduce == "add" else "prod"


def _split_src(src, value):
    if value is not None:
        return None, value
    if is_tensor(src):
        return src, None
    return None, src


@bind("scatter")
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``input`` with ``src`` (or the scalar ``value``) written at ``index`` along ``dim``
    (``reduce='add'|'multiply'`` combines instead); routed like :func:`gather`.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(3).scatter(0, st.tensor([2, 0]), st.tensor([5., 6.])).tolist()
    [6.0, 0.0, 5.0]
    """
    s, v = _split_src(src, value)
    return _scatter_any("scatter", input, dim, index, s, v, _legacy_reduce(reduce), True, False)


@bind("scatter_")
def scatter_(input, dim, index, src=None, value=None, *, reduce=None):
    """In-place :func:`scatter`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(3); _ = x.scatter_(0, st.tensor([1]), 7.0); x.tolist()
    [0.0, 7.0, 0.0]
    """
    s, v = _split_src(src, value)
    return _scatter_any("scatter", input, dim, index, s, v, _legacy_reduce(reduce), True, True)


@bind("scatter_add")
def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added at ``index`` along ``dim`` (repeats accumulate).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2).scatter_add(0, st.tensor([1, 1, 0]), st.tensor([1., 2., 3.])).tolist()
    [3.0, 3.0]
    """
    return _scatter_any("scatter_add", input, dim, index, src, None, "sum", True, False)


@bind("scatter_add_")
def scatter_add_(input, dim, index, src):
    """In-place :func:`scatter_add`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(2); _ = x.scatter_add_(0, st.tensor([0]), st.tensor([4.])); x.tolist()
    [5.0, 1.0]
    """
    return _scatter_any("scatter_add", input, dim, index, src, None, "sum", True, True)


def _reduce_arg(reduce):
    if reduce not in _REDUCES:
        raise ArgumentError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce!r}"
        )
    return reduce


@bind("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with ``src`` reduced into it at ``index`` along ``dim``: ``reduce`` one of
    ``sum prod mean amax amin``; ``include_self=False`` leaves the old values of the points
    written out of the reduction (integer ``mean`` rounds down, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([5., 5.])
    >>> x.scatter_reduce(0, st.tensor([0, 0]), st.tensor([1., 9.]), "amax").tolist()
    [9.0, 5.0]
    >>> x.scatter_reduce(0, st.tensor([0, 0]), st.tensor([1., 9.]), "mean",
    ...                  include_self=False).tolist()
    [5.0, 5.0]
    """
    r = _reduce_arg(reduce)
    return _scatter_any("scatter_reduce", input, dim, index, src, None, r, include_self, False)


@bind("scatter_reduce_")
def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):
    """In-place :func:`scatter_reduce`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1., 1.])
    >>> _ = x.scatter_reduce_(0, st.tensor([1, 1]), st.tensor([2., 3.]), "prod"); x.tolist()
    [1.0, 6.0]
    """
    r = _reduce_arg(reduce)
    return _scatter_any("scatter_reduce", input, dim, index, src, None, r, include_self, True)


@bind("take_along_dim")
def take_along_dim(input, indices, dim=None):
    """``input`` gathered along ``dim`` at ``indices`` broadcast against it (torch's
    ``take_along_dim``; ``dim=None`` reads the flattened input). With a ``dim``, an index in
    ``[-n, 0)`` counts from the end, as torch's (not with ``dim=None``, where torch refuses
    negatives too). An index outside ``[-n, n)`` raises
    :class:`~sharded.errors.IndexOutOfRange` naming the offending values (torch's CPU kernel
    does not check and returns whatever it reads).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[10, 30], [20, 5]])
    >>> st.take_along_dim(x, x.argmax(1, keepdim=True), 1).tolist()
    [[30], [20]]
    """
    _index_dtype(indices, "take_along_dim")
    if indices.dtype.name != "int64":  # torch: gather takes int32, take_along_dim doesn't
        raise DTypeError(
            f"take_along_dim(): dtype of indices should be int64 but got {indices.dtype.name}"
        )
    if dim is None:
        return _gather(input.reshape(-1), 0, indices.reshape(-1), "take_along_dim")
    nd = input.ndim
    dim = normalize_dim(dim, nd)
    if indices.ndim != nd:
        raise ShapeError(
            f"take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {nd} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    if not nd:  # torch's message for a 0-d input and index with a dim
        raise DimError("Dimension specified as 0 but tensor has no dimensions")
    shp_i, shp_x = list(input.shape), list(indices.shape)
    shp_i[dim], shp_x[dim] = indices.shape[dim], input.shape[dim]
    try:
        bi = tuple(np.broadcast_shapes(tuple(shp_i), tuple(indices.shape)))
        bx = tuple(np.broadcast_shapes(tuple(shp_x), tuple(input.shape)))
    except ValueError:
        raise ShapeError(
            f"take_along_dim(): shapes {list(input.shape)} and {list(indices.shape)} do not "
            f"broadcast apart from dim {dim}"
        ) from None
    n = input.shape[dim]
    if n:  # torch's take_along_dim with a dim wraps an index in [-n, 0); gather does not
        indices = indices + n * ((indices < 0) & (indices >= -n))
    idx = indices if tuple(indices.shape) == bi else indices.expand(*bi).contiguous()
    src = input if tuple(input.shape) == bx else input.expand(*bx).contiguous()
    return _gather(src, dim, idx, "take_along_dim")
