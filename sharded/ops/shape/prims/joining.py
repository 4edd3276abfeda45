"""Moving and joining: resharding, ``cat``/``stack``, ``split``/``chunk``/``unbind`` (with
``narrow``/``select``), ``flip``/``roll``, and the device and dtype moves (``to``, ``cuda``,
``cpu``, ``float``...).

``reshard`` copies a tensor into a new layout: blocks that already sit on the right worker are
copied locally, the rest travel worker to worker (never through the driver). ``cat`` along a
split dim concatenates the chunk lists (each input keeps its shards), along an unsplit dim it
keeps the first input's layout and concatenates shard by shard. ``split``/``chunk``/``unbind``
/``narrow``/``select`` are views (basic indexing); ``flip`` and ``roll`` make new tensors.
Kernels are registered by name in the workers' table; where a public function shares its
primitive's name (``cat``), it takes over the module attribute below the kernel's block.
"""

from __future__ import annotations

import itertools
import numbers

from .... import dtypes as D
from ....core import dataflow
from ....core.dataflow import Operand, align, free_temps
from ....core.dispatch import apply, as_tensor, is_tensor, placement
from ....core.registry import bind, kernel, primitive, vjp
from ....devices import matches, normalize, workers_for
from ....errors import ArgumentError, DimError, DTypeError, IndexOutOfRange, ShapeError
from ....layout import Layout, normalize_dim, resolve

__all__ = [
    "cat",
    "chunk",
    "flip",
    "narrow",
    "roll",
    "select",
    "split",
    "stack",
    "unbind",
    "concatenate",
    "concat",
]


# ----------------------------------------------------------------------------- reshard
@primitive("reshard", kernels=[dataflow.copy], out_spec=lambda t, layout: (tuple(t.shape), t.dtype))
def _reshard_plan(ex, t, layout: Layout) -> Operand:
    """A copy of ``t`` laid out as ``layout`` (a bound layout of the same shape), moved worker
    to worker (:func:`sharded.core.dataflow.reshard`, which planners call on their own
    intermediate operands)."""
    return dataflow.reshard(ex, t, layout)


@vjp("reshard")
def _reshard_vjp(gs, node):
    return (gs[0], None)  # the engine lays the gradient out like the input


@bind("reshard", prim="reshard")
def reshard(self, dim=None, shards=None, layout=None):
    """A copy laid out anew (``dim=``/``shards=``, or ``layout=``), moved worker to
    worker. ``shards`` defaults to one per kernel thread of the session (one per worker on
    workers of one thread; a worker owning a node's cores takes one per core), at most the
    split dim's length.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(4, 6, shards=2).reshard(dim=1, shards=3).layout.grid
    (1, 3)
    """
    ex = self._executor()
    if shards is None and layout is None:
        shards = ex.num_slots
    lay = resolve(self._layout.shape, ex.num_workers, shards=shards, dim=dim, layout=layout)
    return apply("reshard", self, lay)


@bind("replicate", prim="reshard")
def replicate(self):
    """A copy held whole by every worker.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(4, shards=2).replicate().layout.is_replicated
    True
    """
    return reshard(self, layout=Layout.replicated())


# ------------------------------------------------------------------ devices and dtypes
def to_device(x, device):
    """``x`` with every shard on a worker of ``device`` (``x`` itself if already there).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.ones(4)
    >>> x.to("cpu") is x
    True
    """
    ex = x._executor()
    dev = normalize(device)
    if all(matches(ex.workers[w].device, dev) for w in x.layout.workers):
        return x
    targets = workers_for(ex, dev)
    lay = x.layout
    n = len(lay.workers)
    workers = targets if lay.is_replicated else [targets[i % len(targets)] for i in range(n)]
    new = Layout.from_bounds(lay.shape, lay.bounds, workers, lay.is_replicated)
    return apply("reshard", x, new)


def _dtype_name(s: str) -> bool:
    """Whether ``s`` names a dtype (``"float64"``) rather than a device."""
    if s == "cpu" or s.startswith("cuda"):
        return False
    try:
        D.as_dtype(s)
    except DTypeError:
        return False
    return True


@bind("to")
def to(self, *args, **kwargs):
    """Convert dtype and/or device: ``x.to(st.float64)``, ``x.to("cuda")``,
    ``x.to("cuda:1", st.float16)``; returns ``x`` itself when nothing changes.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(3).to(st.float64).dtype
    sharded.float64
    """
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)  # torch's keywords; a copy here is always synchronous
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    # torch's positional form is to(device, dtype, non_blocking, copy): the bools after the
    # device/dtype/tensor are the flags, in that order, never a dtype
    flags = [a for a in args if isinstance(a, bool)]
    if len(flags) > 2:
        raise ArgumentError(f"to() takes at most 2 positional flags, got {flags}")
    if len(flags) == 2:
        copy = flags[1]
    for a in args:
        if isinstance(a, bool):
            continue
        if is_tensor(a):
            dtype = a.dtype
        elif isinstance(a, str):
            # torch reads every string as a device; dtype names ("float64") stay accepted,
            # anything else ("xla") is an unknown device, not an unknown dtype
            device, dtype = (None, a) if _dtype_name(a) else (a, dtype)
        else:
            dtype = a
    out = self
    if device is not None:
        out = to_device(out, device)
    if dtype is not None and D.as_dtype(dtype) != out._dtype:
        out = apply("astype", out, D.as_dtype(dtype))
    return out.clone() if copy and out is self else out


@bind("cuda")
def cuda(self, device=None):
    """The tensor on GPU workers (``device``: ``"cuda:N"`` or N; default: all GPUs)."""
    dev = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
    return self.to(dev)


@bind("cpu")
def cpu(self):
    """The tensor on CPU workers (itself if it is there already).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).cpu().device
    device(type='cpu')
    """
    return self.to("cpu")


@bind("type")
def type_name(self, dtype=None):
    """The type name (``"sharded.FloatTensor"``), or a copy converted to ``dtype``.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).type(), st.ones(2).type(st.int64).dtype
    ('sharded.FloatTensor', sharded.int64)
    """
    names = dict(float32="Float", float64="Double", float16="Half", int64="Long", int32="Int")
    names.update(int16="Short", int8="Char", uint8="Byte", bool="Bool")
    names.update(complex64="ComplexFloat", complex128="ComplexDouble", bfloat16="BFloat16")
    if dtype is None:
        return f"sharded.{names[self._dtype.name]}Tensor"
    if isinstance(dtype, str) and dtype.endswith("Tensor"):  # torch's "torch.DoubleTensor"
        by_name = {f"{p}.{v}Tensor": k for k, v in names.items() for p in ("torch", "sharded")}
        if dtype not in by_name:
            raise ArgumentError(f"invalid type: {dtype!r}")
        dtype = by_name[dtype]
    return self.to(dtype)


def _caster(name, dtype):
    def cast(self):
        return to(self, dtype)

    cast.__name__, cast.__doc__ = name, f"``x.to({dtype})``."
    return cast


for _name, _dt in {
    "float": D.float32,
    "double": D.float64,
    "half": D.float16,
    "bfloat16": D.bfloat16,
    "int": D.int32,
    "long": D.int64,
    "short": D.int16,
    "byte": D.uint8,
    "char": D.int8,
    "bool": D.bool_,
    "cfloat": D.complex64,
    "cdouble": D.complex128,
}.items():
    bind(_name)(_caster(_name, _dt))


# ----------------------------------------------------------------------------- cat
@kernel
def cat(xp, *blocks, axis):
    """The blocks concatenated along ``axis``."""
    return xp.concatenate(blocks, axis=axis)


@primitive(
    "cat",
    kernels=[cat, dataflow.copy],
    out_spec=lambda *ts, dim: (
        tuple(sum(t.shape[dim] for t in ts) if d == dim else n for d, n in enumerate(ts[0].shape)),
        ts[0].dtype,
    ),
)
def _cat_plan(ex, *ts, dim) -> Operand:
    """Concatenate along ``dim``. If any input is split along ``dim``, the result's chunks are
    the inputs' chunks in order (each copied where it lives, unsplit inputs as one chunk).
    If none is, the first input's layout, every shard the concatenation of the inputs'
    matching blocks."""
    first = ts[0]._layout
    d = dim
    sizes = [t._layout.shape[d] for t in ts]
    shape = list(first.shape)
    shape[d] = sum(sizes)
    dtype = ts[0]._dtype
    keys = []
    if all(t._layout.is_replicated or t._layout.grid[d] == 1 for t in ts):
        bounds = list(first.bounds)
        bounds[d] = (0, shape[d])
        out = Layout.from_bounds(shape, bounds, first.workers, first.is_replicated)
        per, temps = [], []
        for t, n in zip(ts, sizes):
            b = list(first.bounds)
            b[d] = (0, n)
            a, tt = align(
                ex,
                t,
                Layout.from_bounds(
                    [n if k == d else s for k, s in enumerate(first.shape)],
                    b,
                    first.workers,
                    first.is_replicated,
                ),
            )
            per.append(a)
            temps += tt
        for s, (w, _, _) in enumerate(out.shards()):
            k = ex.new_key()
            ex.submit(w, "cat", tuple(a[s] for a in per), (k,), {"axis": d}, ("cat", s))
            keys.append(k)
        free_temps(ex, temps)
        return Operand(out, dtype, keys)
    aligned, chunk_bounds, start = [], [0], 0
    for t, n in zip(ts, sizes):
        lay = t._layout
        b = list(first.bounds)
        b[d] = lay.bounds[d] if not lay.is_replicated else (0, n)
        grid = [len(x) - 1 for x in b]
        cnt = 1
        for g in grid:
            cnt *= g
        tshape = [n if k == d else s for k, s in enumerate(first.shape)]
        same = not lay.is_replicated and tuple(tuple(x) for x in b) == lay.bounds
        ws = lay.workers if same else [(i + start) % ex.num_workers for i in range(cnt)]
        target = Layout.from_bounds(tshape, b, ws)
        args, temps = align(ex, t, target)
        aligned.append((target, args, temps))
        for v in target.chunk_sizes(d):
            chunk_bounds.append(chunk_bounds[-1] + v)
        start += grid[d]
    bounds = list(first.bounds)
    bounds[d] = tuple(chunk_bounds)
    owner = [(i, k) for i, (tg, _, _) in enumerate(aligned) for k in range(tg.grid[d])]
    grid = [len(x) - 1 for x in bounds]
    workers, srcs = [], []
    for c in itertools.product(*(range(g) for g in grid)):
        i, k = owner[c[d]]
        tg, args, _ = aligned[i]
        j = tg.index(c[:d] + (k,) + c[d + 1 :])
        workers.append(tg.workers[j])
        srcs.append(args[j])
    out = Layout.from_bounds(shape, bounds, workers)
    for s, (w, a) in enumerate(zip(workers, srcs)):
        k = ex.new_key()
        ex.submit(w, "copy", (a,), (k,), None, ("cat", s))
        keys.append(k)
    for _, _, temps in aligned:
        free_temps(ex, temps)
    return Operand(out, dtype, keys)


@vjp("cat")
def _cat_vjp(gs, node):
    d = node.params["dim"]
    out, start = [], 0
    for t in node.args:
        n = t.shape[d]
        out.append(gs[0].narrow(d, start, n) if is_tensor(t) and t.requires_grad else None)
        start += n
    return tuple(out)


def cat(tensors, dim=0):
    """Concatenate along ``dim`` (dtypes promote as in torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.cat([st.zeros(2, 3), st.ones(1, 3)]).shape
    sharded.Size([3, 3])
    """
    ts = [t for t in tensors]
    if not ts:
        raise ArgumentError("cat() expects a non-empty list of tensors")
    ts = [t if is_tensor(t) else as_tensor(t) for t in ts]
    for i, t in enumerate(ts):
        if t.ndim == 0:
            raise ShapeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = D.promote_types(dt, t.dtype)
    # torch's legacy rule: a 1-d empty tensor (shape (0,)) is skipped, whatever the others'
    # shapes (it still takes part in the dtype promotion above)
    ts = [t for t in ts if tuple(t.shape) != (0,)] or ts
    ref = ts[0]
    d = normalize_dim(dim, ref.ndim)
    for i, t in enumerate(ts):
        if t.ndim != ref.ndim or any(
            a != b for k, (a, b) in enumerate(zip(t.shape, ref.shape)) if k != d
        ):
            raise ShapeError(
                f"cat(): sizes of tensors must match except in dimension {d}; "
                f"tensor 0 has shape {list(ref.shape)}, tensor {i} has "
                f"{list(t.shape)}"
            )
    ts = [t.to(dt) for t in ts]
    return apply("cat", *ts, dim=d)


def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim: ``cat`` of their ``unsqueeze(dim)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.stack([st.zeros(3), st.ones(3)], dim=1).shape
    sharded.Size([3, 2])
    """
    ts = [t if is_tensor(t) else as_tensor(t) for t in tensors]
    if not ts:
        raise ArgumentError("stack expects a non-empty list of tensors")
    for i, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise ShapeError(
                f"stack expects each tensor to be equal size, but got "
                f"{list(ts[0].shape)} at entry 0 and {list(t.shape)} at entry {i}"
            )
    d = normalize_dim(dim, ts[0].ndim + 1)
    return cat([t.unsqueeze(d) for t in ts], d)


# ------------------------------------------------------------------------ split and select
@bind("narrow")
def narrow(x, dim, start, length):
    """The slice ``start:start+length`` of ``dim`` (a view).

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(10).narrow(0, 2, 3).tolist()
    [2, 3, 4]
    """
    if x.ndim == 0:
        raise ArgumentError("narrow() cannot be applied to a 0-dim tensor.")
    if is_tensor(start):  # torch's Tensor overload takes a 0-d integer tensor only
        if start.ndim or D.category(start.dtype) != 1:
            raise ArgumentError(
                f"narrow(): start must be an 0-dim integral Tensor, got a {start.ndim}-dim "
                f"{start.dtype.name} tensor"
            )
        start = int(start.item())
    d = normalize_dim(dim, x.ndim)
    size = x.shape[d]
    # torch's bounds: a slice would silently clip (or wrap a negative stop) instead.
    if not -size <= start <= size:
        raise IndexOutOfRange(
            f"narrow(): start {start} out of range for dimension {d} with size {size} "
            f"(expected to be in range of [{-size}, {size}])"
        )
    if length < 0:
        raise ArgumentError(f"narrow(): length must be non-negative, got {length}")
    start = start + size if start < 0 else start
    if start + length > size:
        raise IndexOutOfRange(
            f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size})"
        )
    key = [slice(None)] * d + [slice(start, start + length)]
    return x[tuple(key)]


@bind("select")
def select(x, dim, index):
    """The sub-tensor at ``index`` of ``dim`` (a view without that dim).

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(6).view(2, 3).select(1, 2).tolist()
    [2, 5]
    """
    d = normalize_dim(dim, x.ndim)
    return x[(slice(None),) * d + (index,)]


@bind("split")
def split(x, split_size_or_sections=None, dim=0, *, split_size=None):
    """Views of consecutive pieces along ``dim``: pieces of a size, or of given sizes.

    Examples
    --------
    >>> import sharded as st
    >>> [p.tolist() for p in st.split(st.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    if split_size is not None:  # the method's keyword in torch: x.split(split_size=2)
        split_size_or_sections = split_size
    if x.ndim == 0:
        raise ArgumentError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, x.ndim)
    n = x.shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        size = int(split_size_or_sections)
        if size <= 0 and n:
            raise ArgumentError(f"split_size must be positive, got {size}")
        sizes = [min(size, n - i) for i in range(0, n, size)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ArgumentError(f"split sizes {sizes} do not add up to size {n} of dim {d}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, d, start, s))
        start += s
    return tuple(out)


@bind("chunk")
def chunk(x, chunks, dim=0):
    """Split into ``chunks`` views of ``ceil(n / chunks)`` along ``dim`` (fewer if it runs
    out, as ``torch.chunk``; an empty dim gives ``chunks`` empty views).

    Examples
    --------
    >>> import sharded as st
    >>> [p.tolist() for p in st.chunk(st.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    if x.ndim == 0:
        raise ArgumentError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise ArgumentError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x.shape[normalize_dim(dim, x.ndim)]
    if n == 0:  # torch: ``chunks`` empty pieces (a split of size 0 would give only one)
        return split(x, [0] * chunks, dim)
    return split(x, -(-n // chunks), dim)


@bind("unbind")
def unbind(x, dim=0):
    """All slices along ``dim``, each a view without that dim.

    Examples
    --------
    >>> import sharded as st
    >>> [r.tolist() for r in st.unbind(st.tensor([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    if x.ndim == 0:
        raise DimError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(dim, x.ndim)
    return tuple(select(x, d, i) for i in range(x.shape[d]))


@bind("__iter__")
def _iter(self):
    """Iterate over the rows (views), as ``unbind(0)``."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


# ----------------------------------------------------------------------- flip and roll
@bind("flip")
def flip(x, dims, *more):
    """A copy with the order of elements reversed along ``dims`` (``x.flip(0, 1)`` too).

    Examples
    --------
    >>> import sharded as st
    >>> st.flip(st.arange(4), [0]).tolist()
    [3, 2, 1, 0]
    """
    dims = (dims, *more) if more else [dims] if isinstance(dims, int) else list(dims)
    ds = {normalize_dim(d, x.ndim) for d in dims}
    if len(ds) != len(dims):  # torch refuses a dim named twice (-1 and 1 of 2-d too)
        raise ArgumentError(f"flip: a dim appears multiple times in the list of dims {dims}")
    key = tuple(slice(None, None, -1) if d in ds else slice(None) for d in range(x.ndim))
    return x[key].clone()


@bind("roll")
def roll(x, shifts, dims=None):
    """Rotate elements along ``dims`` by ``shifts`` (flattened when ``dims`` is None). The
    result keeps ``x``'s layout: every shard receives the (at most two) pieces that rotate
    into it, worker to worker.

    Examples
    --------
    >>> import sharded as st
    >>> st.roll(st.arange(5), 2).tolist()
    [3, 4, 0, 1, 2]
    """
    if dims is None:
        if not isinstance(shifts, numbers.Integral):
            if len(shifts) != 1:
                raise ArgumentError(f"roll: shifts {list(shifts)} need dims of the same length")
            shifts = shifts[0]
        return roll(x.flatten(), shifts, 0).reshape(x.shape)
    shifts = [shifts] if isinstance(shifts, numbers.Integral) else list(shifts)
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    if len(shifts) != len(dims):
        raise ArgumentError(f"roll: shifts {shifts} and dims {dims} must have the same length")
    out = x
    for s, d in zip(shifts, dims):
        if x.ndim == 0:  # torch: dims name nothing in a 0-d tensor (with dims=None it rolls)
            raise DimError(f"roll: Dimension specified as {d} but tensor has no dimensions")
        d = normalize_dim(d, x.ndim)
        n = x.shape[d]
        s = int(s) % n if n else 0
        if s:  # into a new tensor of x's layout: the two rotated pieces, worker to worker
            src, out = out, apply("empty", placement(tuple(x.shape), layout=x.layout), x.dtype)
            narrow(out, d, s, n - s).copy_(narrow(src, d, 0, n - s))
            narrow(out, d, 0, s).copy_(narrow(src, d, n - s, s))
    return out if out is not x else x.clone()


concatenate = concat = cat  # the Array API / NumPy name, and torch's alias
