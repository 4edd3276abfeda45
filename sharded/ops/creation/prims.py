"""Creation: tensors made on their workers from their offsets alone (random ones: the random
family, :mod:`sharded.ops.random`).

Every function takes ``shards=`` (default: one per worker; capped at the split dim's length,
so ``st.ones(10, shards=10**6)`` has 10 shards), ``dim=`` (the split dim, default 0) or
``layout=st.Layout(...)``, and ``dtype=``, ``device=``, ``requires_grad=``. Shards are made
where they live; only ``tensor``/``from_numpy`` ship data from the driver. Values never depend
on the layout: ``arange``/``linspace`` compute element ``i`` from ``i``. A tensor larger than
the session's workers can hold in all (``st.info()["memory_bytes"]``) raises
:class:`~sharded.errors.OutOfMemory` at the call (``st.zeros(10**15)``), before anything is
queued.

Each primitive below is one block: its worker kernel (named like the primitive), its planner
(one command per shard) and its public function. None has tensor inputs, so none has a VJP.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ... import dtypes as D
from ...core.dataflow import Operand
from ...core.dispatch import apply, is_tensor, like_kw, placement, size_of
from ...core.dispatch import as_tensor as _as_tensor
from ...core.registry import kernel, nondiff, primitive
from ...errors import ArgumentError, DTypeError, ValueOverflow
from ...runtime.commands import Const, Transfer

# Blocks above this size travel through the object store instead of inside the batch.
INLINE_BYTES = 1 << 16


def _each(ex, layout, kernel_name, params_of, dtype, label) -> Operand:
    """One command per shard of ``layout``: ``kernel_name`` with ``params_of(offsets,
    shape)`` makes the block from its position alone."""
    keys = []
    for s, (w, offs, shp) in enumerate(layout.shards()):
        k = ex.new_key()
        ex.submit(w, kernel_name, (), (k,), params_of(offs, shp), (label, s))
        keys.append(k)
    return Operand(layout, dtype, keys)


def _finish(t, requires_grad: bool):
    return t.requires_grad_(True) if requires_grad else t


def _dtype(dtype, default):
    return D.as_dtype(dtype) if dtype is not None else default


# ------------------------------------------------------------------------------ from_numpy
def _spec(layout, *args, **params):
    """``out_spec`` of the creation primitives: the layout's shape and the dtype argument."""
    dts = [a for a in (*args, *params.values()) if isinstance(a, D.DType)]
    return tuple(layout.shape), dts[0]


@primitive(
    "from_numpy",
    kernels=["copy"],
    kind="creation",
    out_spec=lambda arr, layout, dtype: (tuple(layout.shape), dtype),
)
def _plan_from_numpy(ex, arr: np.ndarray, layout, dtype) -> Operand:
    """Ship the blocks of a driver-side array to their workers (large blocks via put); the
    worker's ``copy`` kernel (core.dataflow) makes them owned and writable."""
    dt = dtype.np_str
    keys = []
    shared = None
    for s, (w, offs, shp) in enumerate(layout.shards()):
        if layout.is_replicated:
            if shared is None:  # one copy in the object store serves every worker
                shared = Transfer(ex.put(arr)) if arr.nbytes > INLINE_BYTES else Const(arr)
            arg = shared
        else:
            piece = np.asarray(arr[tuple(slice(o, o + n) for o, n in zip(offs, shp))])
            arg = Transfer(ex.put(piece)) if piece.nbytes > INLINE_BYTES else Const(piece)
        k = ex.new_key()
        ex.submit(w, "copy", (arg,), (k,), {"dtype": dt}, ("from_numpy", s))
        keys.append(k)
    return Operand(layout, dtype, keys)


def from_numpy(a, *, shards=None, dim=None, layout=None, device="cpu", requires_grad=False):
    """A sharded copy of NumPy array ``a`` (its dtype is kept).

    Examples
    --------
    >>> import numpy as np, sharded as st
    >>> st.from_numpy(np.arange(6.).reshape(3, 2), shards=3).sum().item()
    15.0
    """
    a = np.asarray(a)
    dt = D.from_numpy_dtype(a.dtype)
    lay = placement(a.shape, shards, dim, layout, device, dt)
    return _finish(apply("from_numpy", np.require(a, requirements="C"), lay, dt), requires_grad)


def tensor(
    data, *, dtype=None, shards=None, dim=None, layout=None, device="cpu", requires_grad=False
):
    """A sharded tensor from nested lists, scalars, a NumPy array or a tensor (always a copy).

    Python floats give the default dtype (float32), ints int64, bools bool.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([[1, 2], [3, 4]]).dtype
    sharded.int64
    """
    if is_tensor(data):  # a copy, as torch.tensor(t) makes one (as_tensor would not)
        data = data.detach().numpy()
    elif isinstance(data, (list, tuple)):
        _check_nested(data)  # NumPy's own error for ragged lists names no position
    if not is_tensor(data) and dtype is not None:  # Python ints wrap as torch (-3 -> 253)
        data = D.int_array(data, D.as_dtype(dtype))
    t = _as_tensor(data, dtype=dtype, shards=shards, dim=dim, layout=layout, device=device)
    return _finish(t, requires_grad)


def _check_nested(data, dim: int = 0) -> int | None:
    """Raise torch's error for nested sequences of unequal lengths; return the length of
    ``data`` (None for a scalar leaf)."""
    if isinstance(data, np.ndarray) or is_tensor(data):
        return data.shape[0] if data.ndim else None
    if not isinstance(data, (list, tuple)):
        return None
    lengths = [_check_nested(item, dim + 1) for item in data]
    for n in lengths[1:]:
        if n != lengths[0]:
            if n is None:
                msg = f"expected sequence of length {lengths[0]} at dim {dim + 1} (got a scalar)"
            elif lengths[0] is None:
                msg = f"expected a scalar at dim {dim + 1} (got a sequence of length {n})"
            else:
                msg = f"expected sequence of length {lengths[0]} at dim {dim + 1} (got {n})"
            raise ArgumentError(msg)
    return len(data)


as_tensor = tensor  # the public st.as_tensor always copies too


# ------------------------------------------------------------------------------ full
@kernel(name="full", pooled=True)
def full_kernel(xp, shape, value, dtype, alloc=None):
    """A block of ``value``; in a block of the worker's pool where one fits (``alloc``): a
    fresh block of 64 MB costs 5-170 ms of page faults on a VM, filling a mapped one ~5 ms.
    (``empty`` never takes a pooled block: its contents would be another tensor's.)"""
    buf = alloc(shape, dtype) if alloc is not None else None
    if buf is None:
        return xp.full(shape, value, dtype=dtype)
    buf.fill(value)
    return buf


@primitive("full", kernels=[full_kernel], kind="creation", out_spec=_spec)
def _plan_full(ex, layout, value, dtype) -> Operand:
    dt = dtype.np_str
    return _each(
        ex, layout, "full", lambda o, s: {"shape": s, "value": value, "dtype": dt}, dtype, "full"
    )


def full(
    size,
    fill_value,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """A tensor filled with ``fill_value``; its dtype follows the value (int -> int64).

    Examples
    --------
    >>> import sharded as st
    >>> st.full((2,), 7).tolist()
    [7, 7]
    """
    shape = size_of((size,) if isinstance(size, numbers.Integral) else (tuple(size),))
    if is_tensor(fill_value) and fill_value.ndim == 0:  # torch takes a 0-d tensor's number
        fill_value = fill_value.item()
    dt = _dtype(dtype, D.scalar_dtype(fill_value))
    if isinstance(fill_value, complex) and not dt.is_complex:  # torch: 1j into bool is True
        if fill_value.imag and dt != D.bool_:
            raise ValueOverflow(f"value {fill_value!r} cannot be converted to type {dt.name}")
        fill_value = bool(fill_value) if dt == D.bool_ else fill_value.real
    # -2 -> 254 for uint8; 300 raises for int8; 1e39 raises for float32 (torch checks too)
    fill_value = D.check_fill(fill_value, dt)
    lay = placement(shape, shards, dim, layout, device, dt)
    return _finish(apply("full", lay, fill_value, dt), requires_grad)


# ------------------------------------------------------------------------------ empty
@kernel(name="empty")
def empty_kernel(xp, shape, dtype):
    return xp.empty(shape, dtype=dtype)


@primitive("empty", kernels=[empty_kernel], kind="creation", out_spec=_spec)
def _plan_empty(ex, layout, dtype) -> Operand:
    dt = dtype.np_str
    return _each(ex, layout, "empty", lambda o, s: {"shape": s, "dtype": dt}, dtype, "empty")


def _creator(name, make):
    """``name(*size, dtype=..., ...)``: a tensor of ``size`` made by ``make(layout, dtype)``
    (``zeros``, ``ones``, ``empty`` share their argument handling)."""

    def f(
        *size,
        dtype=None,
        shards=None,
        dim=None,
        layout=None,
        device="cpu",
        requires_grad=False,
        **kw,
    ):
        if "size" in kw:
            size = (kw.pop("size"),)
        if kw:
            raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kw)}")
        shape = size_of(size)
        dt = _dtype(dtype, D.get_default_dtype())
        lay = placement(shape, shards, dim, layout, device, dt)
        return _finish(make(lay, dt), requires_grad)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""A tensor of the given size filled by ``{name}`` (default dtype float32).

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}(2, 3, shards=2).shape
    sharded.Size([2, 3])
    """
    return f


zeros = _creator("zeros", lambda lay, dt: apply("full", lay, 0, dt))
ones = _creator("ones", lambda lay, dt: apply("full", lay, 1, dt))
empty = _creator("empty", lambda lay, dt: apply("empty", lay, dt))


# ------------------------------------------------------------------------------ arange
@kernel(name="arange")
def arange_kernel(xp, start, step, first, count, dtype):
    """Elements ``first .. first+count-1`` of ``start + i*step`` (computed per index, so any
    shard yields exactly the values the whole range would)."""
    i = xp.arange(first, first + count, dtype=np.int64)
    if np.dtype(dtype).kind in "iub" and float(start).is_integer() and float(step).is_integer():
        return (int(start) + i * int(step)).astype(dtype)
    return (start + i * float(step)).astype(dtype)


@primitive("arange", kernels=[arange_kernel], kind="creation", out_spec=_spec)
def _plan_arange(ex, layout, start, step, dtype) -> Operand:
    dt = dtype.np_str
    return _each(
        ex,
        layout,
        "arange",
        lambda o, s: {"start": start, "step": step, "first": o[0], "count": s[0], "dtype": dt},
        dtype,
        "arange",
    )


def arange(
    start=None,
    end=None,
    step=1,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Values ``start, start+step, ...`` below ``end``; int64 when all arguments are ints.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(2, 10, 4).tolist(), st.arange(2, 10, 4).dtype
    ([2, 6], sharded.int64)
    """
    if end is None:  # arange(end); arange(end=4) and arange(start=1, end=4) also work
        if start is None:
            raise TypeError("arange() missing 1 required positional argument: 'end'")
        start, end = 0, start
    start, end, step = (
        v.item() if is_tensor(v) else v for v in (0 if start is None else start, end, step)
    )
    if step == 0:
        raise ArgumentError("arange(): step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise ArgumentError(f"arange(): unsupported range: {start} -> {end}")
    if (end - start) * step < 0:  # torch refuses a range that runs away from its end
        raise ArgumentError(
            f"arange(): upper bound and lower bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )
    n = max(0, math.ceil((end - start) / step))
    ints = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    dt = _dtype(dtype, D.int64 if ints else D.get_default_dtype())
    if dt.is_complex or dt == D.bool_:  # torch has no complex or bool arange kernel
        raise DTypeError(f"arange(): dtype {dt.name} is not supported, as in torch")
    if D.category(dt) == 1 and not ints:
        start, end, step, n = _int_range(start, end, step, n, dt)
    lay = placement((n,), shards, dim, layout, device, dt)
    return _finish(apply("arange", lay, start, step, dt), requires_grad)


def _int_range(start, end, step, n, dt):
    """torch's integer arange of float arguments: the values ``int(start) + i * int(step)``
    (truncated); for int64 the count too is of the truncated arguments
    (``arange(0.5, 5, 1.5)`` is ``[0, 1, 2, 3, 4]``), other integer dtypes keep the count
    of the exact ones (``[0, 1, 2]``)."""
    s, e, st = int(start), int(end), int(step)
    if dt == D.int64:
        if st == 0:
            raise ArgumentError(f"arange(): step must be nonzero (step {step} is 0 in int64)")
        num = e - s + st - (1 if st > 0 else -1)
        q = abs(num) // abs(st)  # C's division, truncated toward zero
        n = max(0, q if (num >= 0) == (st > 0) else -q)
    return s, e, st, n


# ------------------------------------------------------------------------------ linspace
@kernel(name="linspace")
def linspace_kernel(xp, start, stop, num, first, count, dtype, base=None):
    """Elements ``first..first+count-1`` of ``numpy.linspace(start, stop, num)`` (optionally
    ``base ** ...`` for logspace), computed in float64 (complex128) like NumPy."""
    i = xp.arange(first, first + count, dtype=np.float64)
    if isinstance(start, complex) or isinstance(stop, complex):
        i = i.astype(np.complex128)
    step = (stop - start) / (num - 1) if num > 1 else 0.0
    if np.dtype(dtype).kind in "iu":
        # torch's integer kernel: the first half counts up from start, the rest down from
        # stop, in float64, truncated
        y = xp.where(i < num // 2, start + i * step, stop - (num - 1 - i) * step)
        if num == 1:
            y = xp.full_like(i, start)
    else:
        y = start + i * step
        if num > 1 and first + count == num:
            y[-1:] = stop  # NumPy pins the last element to stop exactly
    if base is not None:
        y = xp.power(float(base), y)
    return y.astype(dtype)


@primitive("linspace", kernels=[linspace_kernel], kind="creation", out_spec=_spec)
def _plan_linspace(ex, layout, start, stop, num, dtype, base=None) -> Operand:
    dt = dtype.np_str
    return _each(
        ex,
        layout,
        "linspace",
        lambda o, s: {
            "start": complex(start) if isinstance(start, complex) else float(start),
            "stop": complex(stop) if isinstance(stop, complex) else float(stop),
            "num": num,
            "first": o[0],
            "count": s[0],
            "dtype": dt,
            "base": base,
        },
        dtype,
        "linspace",
    )


def linspace(
    start,
    end,
    steps,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Examples
    --------
    >>> import sharded as st
    >>> st.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    return _spaced(start, end, steps, None, dtype, shards, dim, layout, device, requires_grad)


def logspace(
    start,
    end,
    steps,
    base=10.0,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """``base ** linspace(start, end, steps)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    return _spaced(start, end, steps, base, dtype, shards, dim, layout, device, requires_grad)


def _spaced(start, end, steps, base, dtype, shards, dim, layout, device, requires_grad):
    start, end, steps = (v.item() if is_tensor(v) else v for v in (start, end, steps))
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
        raise DTypeError(f"steps must be an int, got {steps!r}")  # torch: TypeError
    if steps < 0:
        raise ArgumentError(f"number of steps must be non-negative, got {steps}")
    cplx = any(isinstance(v, complex) for v in (start, end))
    dt = _dtype(dtype, D.default_complex() if cplx else D.get_default_dtype())
    if dt == D.bool_ or (cplx and not dt.is_complex):  # torch: not implemented / unsafe cast
        raise DTypeError(f"linspace/logspace: dtype {dt.name} is not supported here")
    if D.category(dt) == 1:  # torch reads start and end in the integer dtype (truncated)
        start, end = int(start), int(end)
    lay = placement((int(steps),), shards, dim, layout, device, dt)
    return _finish(apply("linspace", lay, start, end, int(steps), dt, base), requires_grad)


# ------------------------------------------------------------------------------ eye
@kernel(name="eye")
def eye_kernel(xp, shape, offsets, dtype):
    r = xp.arange(offsets[0], offsets[0] + shape[0])[:, None]
    c = xp.arange(offsets[1], offsets[1] + shape[1])[None, :]
    return (r == c).astype(dtype)


@primitive("eye", kernels=[eye_kernel], kind="creation", out_spec=_spec)
def _plan_eye(ex, layout, dtype) -> Operand:
    dt = dtype.np_str
    return _each(
        ex, layout, "eye", lambda o, s: {"shape": s, "offsets": o, "dtype": dt}, dtype, "eye"
    )


def eye(
    n, m=None, *, dtype=None, shards=None, dim=None, layout=None, device="cpu", requires_grad=False
):
    """The ``n x m`` identity matrix.

    Examples
    --------
    >>> import sharded as st
    >>> st.eye(3, shards=3).sum().item()
    3.0
    """
    shape = size_of((n, n if m is None else m))
    dt = _dtype(dtype, D.get_default_dtype())
    return _finish(
        apply("eye", placement(shape, shards, dim, layout, device, dt), dt), requires_grad
    )


# Creation has no tensor inputs: nothing to differentiate (requires_grad= makes a leaf).
nondiff("from_numpy", "full", "empty", "arange", "linspace", "eye")


# ------------------------------------------------------------------------------ *_like


def zeros_like(
    input, *, dtype=None, shards=None, dim=None, layout=None, device=None, requires_grad=False
):
    """``zeros`` with the shape, dtype and layout of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros_like(st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    return zeros(input.shape, **like_kw(input, dtype, shards, dim, layout, device, requires_grad))


def ones_like(
    input, *, dtype=None, shards=None, dim=None, layout=None, device=None, requires_grad=False
):
    """``ones`` with the shape, dtype and layout of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones_like(st.zeros(2, 3, dtype=st.int32)).sum().item()
    6
    """
    return ones(input.shape, **like_kw(input, dtype, shards, dim, layout, device, requires_grad))


def empty_like(
    input, *, dtype=None, shards=None, dim=None, layout=None, device=None, requires_grad=False
):
    """``empty`` with the shape, dtype and layout of ``input`` (values are undefined).

    Examples
    --------
    >>> import sharded as st
    >>> st.empty_like(st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    return empty(input.shape, **like_kw(input, dtype, shards, dim, layout, device, requires_grad))


def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    """``full`` with the shape, dtype and layout of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.full_like(st.ones(2, 3), 7).tolist()
    [[7.0, 7.0, 7.0], [7.0, 7.0, 7.0]]
    """
    return full(
        input.shape,
        fill_value,
        **like_kw(input, dtype, shards, dim, layout, device, requires_grad),
    )


__all__ = [
    "from_numpy",
    "tensor",
    "as_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
]
