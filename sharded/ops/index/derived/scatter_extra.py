"""torch's out-of-place view scatters (``select_scatter``, ``slice_scatter``,
``diagonal_scatter``), ``index_reduce``, ``put`` and ``Tensor.fill_diagonal_``.

Each is a ``scatter``/``scatter_reduce`` (reached as tensor methods: op families do not
import each other) with an index built from the operands' shapes, never from their data:
the routed scatter gives torch's gradients for free (zeros where ``input`` was overwritten,
the gathered gradient for ``src``). ``clone() + view.copy_(src)`` would give the right
values but leave the overwritten part of ``input`` in the gradient, so it is not used.
``fill_diagonal_`` is a ``where`` on a mask computed elementwise from small per-dim ranges.
"""

from __future__ import annotations

import math

import numpy as np

from .... import dtypes as D
from ....core.dispatch import as_tensor, is_tensor
from ....core.registry import bind
from ....errors import (
    ArgumentError,
    DimError,
    DTypeError,
    IndexDTypeError,
    IndexOutOfRange,
    ShapeError,
    UnsupportedDType,
)
from ....layout import normalize_dim

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "index_reduce", "put"]


def _src_check(src, want):
    if not is_tensor(src):
        raise DTypeError(f"src must be a tensor, got {type(src).__name__}")
    if tuple(src.shape) != tuple(want):
        raise ShapeError(
            "expected src to have a size equal to the slice of self. "
            f"src size = {list(src.shape)}, slice size = {list(want)}"
        )


def _dim_of(op, input, dim):
    if input.ndim == 0:
        raise DimError(f"{op}() cannot be applied to a 0-dim tensor.")
    return normalize_dim(dim, input.ndim)


def _positions(pos, dim, src):
    """An int64 index of ``src``'s shape holding ``pos[k]`` at position ``k`` along ``dim``
    (``pos`` is as long as ``src``'s dim: shape metadata, not data)."""
    shape = [1] * src.ndim
    shape[dim] = len(pos)
    idx = as_tensor(np.asarray(pos, dtype=np.int64)).reshape(shape)
    return idx.expand(*src.shape).contiguous()


def _scatter_at(input, src, dim, pos):
    """``input`` with ``src`` written at ``pos`` along ``dim`` (src cast to input's dtype,
    as torch's copy_ casts)."""
    if src.dtype != input.dtype:
        src = src.to(input.dtype)
    return input.scatter(dim, _positions(pos, dim, src), src)


@bind("select_scatter")
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written at ``input.select(dim, index)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.select_scatter(st.zeros(2, 2), st.ones(2), 0, 0).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    dim = _dim_of("select", input, dim)
    n = input.shape[dim]
    if not -n <= index < n:
        raise IndexOutOfRange(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} "
            f"at dimension {dim}"
        )
    want = tuple(s for d, s in enumerate(input.shape) if d != dim)
    _src_check(src, want)
    return _scatter_at(input, src.unsqueeze(dim), dim, [index % n])


@bind("slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written at ``input[..., start:end:step, ...]``
    (``step`` positive, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.slice_scatter(st.zeros(4), st.ones(2), start=1, step=2).tolist()
    [0.0, 1.0, 0.0, 1.0]
    """
    dim = _dim_of("slice", input, dim)
    if step <= 0:
        raise ArgumentError(f"slice step must be positive, got {step}")
    pos = range(*slice(start, end, step).indices(input.shape[dim]))
    want = list(input.shape)
    want[dim] = len(pos)
    _src_check(src, want)
    return _scatter_at(input, src, dim, list(pos))


@bind("diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written at ``input.diagonal(offset, dim1, dim2)``
    (the diagonal's dim last in ``src``, as ``diagonal`` returns it).

    Examples
    --------
    >>> import sharded as st
    >>> st.diagonal_scatter(st.zeros(2, 3), st.tensor([1., 2.]), 1).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """
    d1, d2 = normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim)
    if d1 == d2:
        raise ArgumentError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = input.shape[d1], input.shape[d2]
    r0, c0 = max(-offset, 0), max(offset, 0)
    size = max(min(n1 - r0, n2 - c0), 0)
    batch = [s for d, s in enumerate(input.shape) if d not in (d1, d2)]
    _src_check(src, batch + [size])
    # the two dims last and flattened: the diagonal is a strided run of that flat dim
    x = input.movedim((d1, d2), (-2, -1))
    flat = x.reshape(*batch, n1 * n2)
    pos = [(r0 + i) * n2 + c0 + i for i in range(size)]
    out = _scatter_at(flat, src, flat.ndim - 1, pos)
    return out.reshape(x.shape).movedim((-2, -1), (d1, d2))


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce(input, dim, index, source, reduce, include_self, inplace):
    if reduce not in _INDEX_REDUCES:
        raise ArgumentError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    if not is_tensor(index) or index.dtype.name not in ("int64", "int32"):
        raise IndexDTypeError("index_reduce_(): Expected dtype int32/int64 for index")
    if index.ndim > 1:
        raise DimError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} "
            f"with size: {list(index.shape)}"
        )
    if input.dtype.is_complex:  # torch: not implemented (bool mean fails in scatter_reduce)
        raise UnsupportedDType(f'"index_reduce" not implemented for {input.dtype.name}')
    nd = max(input.ndim, 1)
    dim = normalize_dim(dim, nd)
    src_shape = tuple(source.shape) if source.ndim else (1,)
    self_shape = tuple(input.shape) if input.ndim else (1,)
    if source.ndim != input.ndim or any(
        a != b for d, (a, b) in enumerate(zip(src_shape, self_shape)) if d != dim
    ):
        raise ShapeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(input.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    if index.numel() != src_shape[dim]:
        raise ShapeError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim): ({src_shape[dim]}), for dim: {dim}"
        )
    if source.dtype != input.dtype:
        raise DTypeError(
            f"index_reduce_(): self ({input.dtype.name}) and source ({source.dtype.name}) "
            "must have the same scalar type"
        )
    shape = [1] * len(src_shape)
    shape[dim] = index.numel()
    idx = index.to(D.int64).reshape(shape).expand(*src_shape).contiguous()
    x = input.reshape(self_shape)
    out = x.scatter_reduce(dim, idx, source.reshape(src_shape), reduce, include_self=include_self)
    out = out.reshape(input.shape)
    return input.copy_(out) if inplace else out


@bind("index_reduce")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with the slices of ``source`` reduced into ``input.select(dim, index[i])``
    (``reduce`` one of ``prod mean amax amin``; ``include_self=False`` leaves the old values
    of the slices written out; integer ``mean`` rounds down, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1., 2.], [3., 4.]])
    >>> x.index_reduce(0, st.tensor([1, 1]), st.tensor([[2., 2.], [5., 0.]]), "amax").tolist()
    [[1.0, 2.0], [5.0, 4.0]]
    """
    return _index_reduce(input, dim, index, source, reduce, include_self, False)


@bind("index_reduce_")
def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    """In-place :func:`index_reduce`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(3)
    >>> _ = x.index_reduce_(0, st.tensor([2]), st.tensor([4.]), "prod"); x.tolist()
    [1.0, 1.0, 4.0]
    """
    return _index_reduce(input, dim, index, source, reduce, include_self, True)


def _put(input, index, source, accumulate):
    if not is_tensor(index) or index.dtype.name != "int64":
        got = index.dtype.name if is_tensor(index) else type(index).__name__
        raise IndexDTypeError(f"put_(): Expected a long tensor for index, but got {got}")
    if source.dtype != input.dtype:
        raise DTypeError(
            "put_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {input.dtype.name} and source.dtype = {source.dtype.name}"
        )
    if source.numel() != index.numel():  # torch: an IndexError
        raise IndexOutOfRange(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    n = input.numel()
    if not n and index.numel():
        raise IndexOutOfRange("put_(): Tried to put elements into an empty tensor")
    idx = index.reshape(-1)
    if idx.numel():
        idx = idx + (idx < 0).to(D.int64) * n  # torch wraps negative flat indices once
    flat, src = input.reshape(-1), source.reshape(-1)
    if accumulate:
        out = flat.scatter_add(0, idx, src)
    else:
        out = flat.scatter(0, idx, src)
    return out.reshape(input.shape)


@bind("put")
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written at the flat (row-major) positions
    ``index`` (negative ones count from the end; ``accumulate`` adds instead).

    Examples
    --------
    >>> import sharded as st
    >>> st.put(st.zeros(2, 2), st.tensor([0, -1]), st.tensor([1., 2.])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    return _put(input, index, source, accumulate)


@bind("put_")
def put_(input, index, source, accumulate=False):
    """In-place :func:`put`.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(3); _ = x.put_(st.tensor([1, 1]), st.tensor([2., 3.]), True); x.tolist()
    [0.0, 5.0, 0.0]
    """
    return input.copy_(_put(input, index, source, accumulate))


@bind("fill_diagonal_")
def fill_diagonal_(input, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal, in place (all dims equal when more than
    two; ``wrap`` restarts the diagonal every ``cols + 1`` rows of a tall matrix).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(3, 2).fill_diagonal_(1.0, wrap=True).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """
    if input.ndim < 2:
        raise ShapeError("dimensions must larger than 1")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise ShapeError(
            f"all dimensions of input must be of equal length, got {list(input.shape)}"
        )
    if not input.numel():
        return input
    # flat position p is on the diagonal iff p % step == 0 and p < end (step = the sum of
    # the row-major strides); torch's wrap only continues a 2-d diagonal past its square
    strides = [math.prod(input.shape[d + 1 :]) for d in range(input.ndim)]
    step = sum(strides)
    numel = input.numel()
    end = numel if (wrap or input.ndim > 2) else min(numel, min(input.shape[:2]) * step)
    flat = None
    for d, (n, s) in enumerate(zip(input.shape, strides)):
        shape = [1] * input.ndim
        shape[d] = n
        part = as_tensor(np.arange(n, dtype=np.int64) * s).reshape(shape)
        flat = part if flat is None else flat + part
    on = ((flat % step) == 0) & (flat < end)
    return input.copy_(input.masked_fill(on, fill_value))
