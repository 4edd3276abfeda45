"""Shape functions built from views, reshapes, expands, flips and concatenation:
``repeat``, ``tile``, ``repeat_interleave``, ``movedim``/``moveaxis``, ``unflatten``,
``rot90``, ``fliplr``/``flipud``, ``broadcast_tensors``, ``atleast_*d``, ``view_as``,
``type_as``, the ``*stack`` family and ``take``. Each is a composition of differentiable
primitives, so none needs a VJP of its own and each runs where the primitives it uses run (a
split dim is handled by them). Also the predicates ``is_same_size`` (of the shapes) and
``get_device`` (of the device).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, DimError, DTypeError, ShapeError
from ....layout import broadcast_shapes as layout_broadcast_shapes
from ....layout import normalize_dim
from ....tensor import Size

__all__ = [
    "tile",
    "repeat_interleave",
    "movedim",
    "moveaxis",
    "unflatten",
    "rot90",
    "fliplr",
    "flipud",
    "broadcast_tensors",
    "broadcast_shapes",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "hstack",
    "vstack",
    "row_stack",
    "ravel",
    "dstack",
    "column_stack",
    "take",
    "is_same_size",
    "get_device",
]


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _sizes(args, name):
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean ``(2, 3)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for a in args:
        if isinstance(a, bool) or not isinstance(a, numbers.Integral):
            raise ArgumentError(f"{name}: sizes must be ints, got {args!r}")
    return tuple(int(a) for a in args)


# ------------------------------------------------------------------------ repeat and tile
@bind("repeat")
def repeat(self, *sizes, repeats=None):
    """Tile the tensor ``sizes[i]`` times along dim ``i`` (extra leading sizes add dims).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1, 2], shards=2).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    reps = _sizes(sizes if repeats is None else (repeats,), "repeat")  # torch's repeats=
    if len(reps) < self.ndim:
        raise ArgumentError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            f"of tensor ({len(reps)} < {self.ndim})"
        )
    if any(r < 0 for r in reps):
        raise ArgumentError(f"Trying to create tensor with negative dimension: repeats {reps}")
    shape = (1,) * (len(reps) - self.ndim) + tuple(self.shape)
    # (r0, s0, r1, s1, ...) broadcast from (1, s0, 1, s1, ...), then merged pairwise
    inter = self.reshape(*[v for s in shape for v in (1, s)]) if shape else self
    big = inter.expand(*[v for r, s in zip(reps, shape) for v in (r, s)]) if shape else inter
    # always a new tensor, as torch (the reshape of an expand is one, not so of a no-op)
    return big.reshape(*[r * s for r, s in zip(reps, shape)]).clone()


@bind("tile")
def tile(input, dims, *more):
    """``repeat`` with ``dims`` padded by leading ones when shorter than the tensor's rank.

    Examples
    --------
    >>> import sharded as st
    >>> st.tile(st.tensor([[1, 2]]), (2,)).tolist()
    [[1, 2, 1, 2]]
    """
    x = _t(input)
    reps = _sizes((dims, *more) if more else (dims,), "tile")  # x.tile(2, 3) too
    reps = (1,) * (x.ndim - len(reps)) + reps
    return repeat(x, *reps)


@bind("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (an int, or a tensor with one count per element
    along ``dim``) along ``dim`` (the flattened tensor when ``dim`` is None). With a tensor
    alone, ``repeat_interleave(r)`` repeats ``arange(len(r))``.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1, 2], shards=2).repeat_interleave(2).tolist()
    [1, 1, 2, 2]
    """
    if repeats is None:  # repeat_interleave(repeats): indices repeated
        r = _t(input)
        return repeat_interleave(apply("arange", r.layout, 0, 1, D.int64), r, 0)
    x = _t(input)
    if dim is None:
        x, d = x.reshape(-1), 0
    elif x.ndim == 0:  # torch refuses every dim of a 0-d input here
        raise DimError(f"repeat_interleave: dim {dim} is out of range for a 0-d tensor")
    else:
        d = normalize_dim(dim, x.ndim)
    n = x.shape[d]
    if is_tensor(repeats) and repeats.numel() != 1:
        if repeats.ndim != 1 or repeats.shape[0] != n:
            raise ShapeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{repeats.shape[0] if repeats.ndim else 1} and input.size({d}) = {n}"
            )
        counts = np.asarray(repeats.numpy())  # the output's size depends on them (torch syncs)
        if counts.dtype.kind not in "iu":
            raise ArgumentError(f"repeats must be an integer tensor, got {repeats.dtype}")
        if (counts < 0).any():
            raise ArgumentError(f"Repeats must be non-negative, got {counts.tolist()}")
        idx = as_tensor(np.repeat(np.arange(n), counts), dtype=D.int64)
        out = x.index_select(d, idx)
    else:
        r = int(repeats.item()) if is_tensor(repeats) else repeats
        if isinstance(r, bool) or not isinstance(r, numbers.Integral):
            raise ArgumentError(f"repeats must be an int or a tensor, got {repeats!r}")
        if r < 0:
            raise ArgumentError(f"Repeats must be non-negative, got {r}")
        shape = list(x.shape)
        big = shape[: d + 1] + [int(r)] + shape[d + 1 :]
        out = x.unsqueeze(d + 1).expand(*big).reshape(*shape[:d], n * r, *shape[d + 1 :])
        out = out.clone()  # a new tensor even for r == 1, as torch
    if output_size is not None and out.shape[d] != output_size:
        raise ShapeError(
            f"repeat_interleave: output_size={output_size} but the result has {out.shape[d]}"
        )
    return out


# ------------------------------------------------------------------------ dims moved
@bind("movedim", "moveaxis")
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination``; the others keep their order.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 3, 4).movedim(0, -1).shape
    sharded.Size([3, 4, 2])
    """
    x = _t(input)
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise ArgumentError(
            "movedim: Invalid source or destination dims: source "
            f"({src} dims) should contain the same number of dims as destination ({dst} dims)"
        )
    s = [normalize_dim(v, x.ndim) for v in src]
    t = [normalize_dim(v, x.ndim) for v in dst]
    for name, v in (("source", s), ("destination", t)):
        if len(set(v)) != len(v):
            raise ArgumentError(f"movedim: repeated dim in `{name}` ({v})")
    order = [None] * max(x.ndim, 1)  # a 0-d tensor: dims 0 / -1 name the one "dim"
    for a, b in zip(s, t):
        order[b] = a
    rest = iter(d for d in range(x.ndim) if d not in s)
    order = [o if o is not None else next(rest) for o in order]
    return x.permute(*order) if x.ndim else x


moveaxis = movedim


@bind("unflatten")
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one entry may be -1).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 6, shards=2).unflatten(1, (2, 3)).shape
    sharded.Size([2, 2, 3])
    """
    x = _t(input)
    d = normalize_dim(dim, x.ndim)
    sz = list(_sizes((sizes,), "unflatten"))
    if not sz:
        raise ArgumentError("unflatten: sizes must be non-empty")
    n = x.shape[d]
    if sz.count(-1) > 1:
        raise ArgumentError(f"unflatten: only one dimension can be inferred, got {tuple(sz)}")
    if -1 in sz:
        known = math.prod(v for v in sz if v != -1)
        if known == 0 or n % known:
            raise ShapeError(f"unflatten: sizes {tuple(sz)} cannot split dim {d} of size {n}")
        sz[sz.index(-1)] = n // known
    if math.prod(sz) != n:
        raise ShapeError(
            f"unflatten: Provided sizes {sz} don't multiply up to the size of dim {d} ({n}) "
            "in the input tensor"
        )
    return x.reshape(*x.shape[:d], *sz, *x.shape[d + 1 :])


@bind("rot90")
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first towards the
    second).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([[1, 2], [3, 4]], shards=2).rot90().tolist()
    [[2, 4], [1, 3]]
    """
    x = _t(input)
    if len(dims) != 2:
        raise ArgumentError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise ArgumentError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = normalize_dim(dims[0], x.ndim), normalize_dim(dims[1], x.ndim)
    if d0 == d1:
        raise ArgumentError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k = k % 4
    if k == 1:
        return x.flip(d1).transpose(d0, d1)
    if k == 2:
        return x.flip((d0, d1))
    if k == 3:
        return x.flip(d0).transpose(d0, d1)
    return x.clone()


# ------------------------------------------------------------------------ broadcasting
@bind("fliplr")
def fliplr(x):
    """Reverse dim 1 (a copy); ``x`` must be at least 2-d, as ``torch.fliplr``.

    Examples
    --------
    >>> import sharded as st
    >>> st.fliplr(st.tensor([[1, 2, 3]])).tolist()
    [[3, 2, 1]]
    """
    if x.ndim < 2:
        raise ArgumentError(f"fliplr: Input must be >= 2-d, got a {x.ndim}-d tensor")
    return x.flip(1)


@bind("flipud")
def flipud(x):
    """Reverse dim 0 (a copy); ``x`` must be at least 1-d, as ``torch.flipud``.

    Examples
    --------
    >>> import sharded as st
    >>> st.flipud(st.tensor([1, 2, 3])).tolist()
    [3, 2, 1]
    """
    if x.ndim < 1:
        raise ArgumentError("flipud: Input must be >= 1-d, got a 0-d tensor")
    return x.flip(0)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views).

    Examples
    --------
    >>> import sharded as st
    >>> a, b = st.broadcast_tensors(st.ones(2, 1), st.zeros(3))
    >>> a.shape, b.shape
    (sharded.Size([2, 3]), sharded.Size([2, 3]))
    """
    ts = [_t(t) for t in tensors]
    try:
        shape = tuple(np.broadcast_shapes(*(tuple(t.shape) for t in ts)))
    except ValueError:
        raise ShapeError(
            f"broadcast_tensors: shapes {[tuple(t.shape) for t in ts]} do not broadcast"
        ) from None
    return tuple(t.expand(*shape) for t in ts)


def broadcast_shapes(*shapes):
    """The shape that ``shapes`` broadcast to (ints are 1-d shapes), as
    ``torch.broadcast_shapes``; :class:`ShapeError` if they do not.

    Examples
    --------
    >>> import sharded as st
    >>> st.broadcast_shapes((2, 1), (3,))
    sharded.Size([2, 3])
    """
    shp = [(s,) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    for s in shp:
        if any(v < 0 for v in s):
            raise ArgumentError(f"broadcast_shapes: negative size in shape {s}")
    return Size(layout_broadcast_shapes(*shp, what="broadcast_shapes: "))


def _atleast(n, tensors):
    single = len(tensors) == 1 and not isinstance(tensors[0], (list, tuple))
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in ts:
        t = _t(t)
        if t.ndim < n:
            # torch: a vector becomes (1, n) in 2-D and (1, n, 1) in 3-D; a matrix (r, c, 1)
            shape = {0: (1,) * n, 1: (1, t.numel(), 1)[:n] if n > 1 else (t.numel(),)}.get(
                t.ndim, tuple(t.shape) + (1,)
            )
            t = t.reshape(*shape)
        out.append(t)
    return out[0] if single else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a scalar becomes shape (1,)).

    Examples
    --------
    >>> import sharded as st
    >>> st.atleast_1d(st.tensor(3.0)).shape
    sharded.Size([1])
    """
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (a vector becomes a row).

    Examples
    --------
    >>> import sharded as st
    >>> st.atleast_2d(st.ones(3)).shape
    sharded.Size([1, 3])
    """
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims (a vector ``n`` becomes (1, n, 1), a matrix gets a
    trailing dim).

    Examples
    --------
    >>> import sharded as st
    >>> st.atleast_3d(st.ones(2, 3)).shape
    sharded.Size([2, 3, 1])
    """
    return _atleast(3, tensors)


@bind("view_as")
def view_as(self, other):
    """``self.view(other.shape)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(6).view_as(st.zeros(2, 3)).shape
    sharded.Size([2, 3])
    """
    return self.view(*other.shape)


@bind("reshape_as")
def reshape_as(self, other):
    """``self.reshape(other.shape)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(6).reshape_as(st.zeros(3, 2)).shape
    sharded.Size([3, 2])
    """
    return self.reshape(*other.shape)


@bind("is_same_size")
def is_same_size(input, other):
    """Whether two tensors have the same shape.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, 3).is_same_size(st.zeros(2, 3))
    True
    """
    if not is_tensor(other):
        raise DTypeError(
            f"is_same_size(): argument 'other' must be Tensor, not {type(other).__name__}"
        )
    return tuple(input.shape) == tuple(other.shape)


@bind("ravel")
def ravel(input):
    """The tensor flattened to 1-d (a view when possible), as ``torch.ravel``.

    Examples
    --------
    >>> import sharded as st
    >>> st.ravel(st.zeros(2, 3)).shape
    sharded.Size([6])
    """
    return _t(input).reshape(-1)


@bind("type_as")
def type_as(self, other):
    """``self`` converted to ``other``'s dtype.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1, 2]).type_as(st.zeros(1)).dtype
    sharded.float32
    """
    return self.to(other.dtype)


@bind("get_device")
def get_device(self):
    """The CUDA ordinal of the tensor's device, -1 on the CPU (as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).get_device()
    -1
    """
    dev = str(self.device)
    return int(dev.split(":")[1]) if dev.startswith("cuda:") else 0 if dev == "cuda" else -1


# ------------------------------------------------------------------------ stacking
def _stack(name, tensors, dim, prep):
    ts = list(tensors)
    if not ts:
        raise ArgumentError(f"{name} expects a non-empty TensorList")
    ts = [prep(_t(t)) for t in ts]
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = D.promote_types(dt, t.dtype)
    # torch.cat's rules: a 1-d empty tensor is skipped, the others match but along ``dim``
    ts = [t.to(dt) for t in ts if tuple(t.shape) != (0,)] or [ts[0].to(dt)]
    d = normalize_dim(dim, ts[0].ndim)
    for i, t in enumerate(ts):
        if t.ndim != ts[0].ndim or any(
            a != b for k, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if k != d
        ):
            raise ShapeError(
                f"{name}: sizes of tensors must match except in dimension {d}; got "
                f"{list(ts[0].shape)} and {list(t.shape)} (tensor {i})"
            )
    return apply("cat", *ts, dim=d) if len(ts) > 1 else ts[0].clone()


def hstack(tensors):
    """Concatenate along dim 1 (dim 0 for vectors).

    Examples
    --------
    >>> import sharded as st
    >>> st.hstack([st.tensor([1, 2]), st.tensor([3])]).tolist()
    [1, 2, 3]
    """
    ts = [atleast_1d(_t(t)) for t in tensors]
    return _stack("hstack", ts, 0 if ts and ts[0].ndim == 1 else 1, lambda t: t)


def vstack(tensors):
    """Concatenate along dim 0 after :func:`atleast_2d` (vectors become rows).

    Examples
    --------
    >>> import sharded as st
    >>> st.vstack([st.tensor([1, 2]), st.tensor([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    return _stack("vstack", tensors, 0, atleast_2d)


row_stack = vstack  # torch's alias


def dstack(tensors):
    """Concatenate along dim 2 after :func:`atleast_3d`.

    Examples
    --------
    >>> import sharded as st
    >>> st.dstack([st.tensor([1, 2]), st.tensor([3, 4])]).shape
    sharded.Size([1, 2, 2])
    """
    return _stack("dstack", tensors, 2, atleast_3d)


def column_stack(tensors):
    """Concatenate along dim 1, vectors (and scalars) as columns.

    Examples
    --------
    >>> import sharded as st
    >>> st.column_stack([st.tensor([1, 2]), st.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """

    def col(t):
        return t.reshape(t.numel(), 1) if t.ndim <= 1 else t

    return _stack("column_stack", tensors, 1, col)


# ------------------------------------------------------------------------ take
@bind("take")
def take(input, index):
    """Elements of the flattened ``input`` at ``index`` (any shape; negative indices count
    from the end), read through the routed gather.

    Examples
    --------
    >>> import sharded as st
    >>> st.take(st.tensor([[1, 2], [3, 4]], shards=2), st.tensor([0, 3])).tolist()
    [1, 4]
    """
    x, idx = _t(input), _t(index)
    if idx.dtype != D.int64:  # torch refuses int32 too
        raise DTypeError(f"take(): Expected a long tensor for index, but got {idx.dtype.name}")
    return x.reshape(-1)[idx.reshape(-1)].reshape(*idx.shape)
