"""Elementwise selection and conversion primitives: clamp (clip), where, astype and fill_
(with zero_ and copy_), with their methods and in-place methods.

Each primitive is one block: its kernel (named like the primitive), its planner (over the
shared elementwise planner of :mod:`..plan`), its VJP and the public function with the names it
binds.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, is_tensor, needs, operand, unbroadcast
from ....core.registry import bind, primitive, vjp
from ....errors import ArgumentError, UnsupportedDType
from ....tensor import check_not_published
from .. import plan as E

__all__ = ["clamp", "clamp_max", "clamp_min", "clip", "fill", "where"]


# ---------------------------------------------------------------------------- clamp
@E.named_kernel("clamp")
def _clamp_kernel(xp, a, lo=None, hi=None, cast=None, out=None):
    a = E.cast(xp, a, cast)
    if lo is not None:
        a = xp.maximum(a, E.cast(xp, lo, cast))
    if hi is not None:
        a = xp.minimum(a, E.cast(xp, hi, cast))
    return E.result(xp, a, out)


def _clamp_rule(ops):
    """:func:`~.elementwise.promote`, refusing a bool result as torch does ("clamp_cpu" is
    not implemented for 'Bool') unless the one bound given is a tensor: torch then runs
    ``clamp_min``/``clamp_max`` (maximum/minimum), which take bools."""
    rt = E.operand_dtypes(ops)
    bounds = [b for b in ops[1:] if b is not None]
    if rt == D.bool_ and not (len(bounds) == 1 and not isinstance(bounds[0], _SCALARS)):
        names = [b if isinstance(b, _SCALARS) else E.operand_dtypes([b]).name for b in bounds]
        raise UnsupportedDType(  # torch: NotImplementedError
            f"clamp is not implemented for dtype bool (a bool input with bounds {names})"
        )
    return rt, rt


_SCALARS = (bool, int, float, complex, np.generic)


@primitive(
    "clamp",
    kernels=[_clamp_kernel],
    out_spec=E.spec(_clamp_rule),
    kind="elementwise",
)
def _clamp_plan(ex, a, lo=None, hi=None, target=None):
    """Elementwise ``clamp`` planner (bounds may be None, scalars or tensors; promote)."""
    return E.plan_rule(ex, "clamp", _clamp_rule, (a, lo, hi), target)


@vjp("clamp", saves=(0, 1, 2))
def _clamp_vjp(gs, node):
    """torch's rule: ``input`` gets the gradient where ``min <= input <= max``, ``min`` where
    ``input < min < max``, ``max`` where ``input > max`` or ``max < min`` (every element is
    ``max`` there); each summed back to its operand's shape (a bound may broadcast ``input``)."""
    a, lo, hi = node.args
    g = gs[0]
    keep = to_lo = to_hi = None
    if lo is not None:
        keep, to_lo = a >= lo, a < lo
    if hi is not None:
        below, to_hi = a <= hi, a > hi
        keep = below if keep is None else keep & below
    if lo is not None and hi is not None:
        to_lo, to_hi = to_lo & (lo < hi), to_hi | (hi < lo)
    return (
        unbroadcast(where(keep, g, 0.0), a),
        unbroadcast(where(to_lo, g, 0.0), lo) if needs(lo) else None,
        unbroadcast(where(to_hi, g, 0.0), hi) if needs(hi) else None,
    )


def _bounds(ops):
    """Python int bounds converted as torch converts them: -3 wraps to 253 for uint8, 300
    raises :class:`~sharded.errors.ValueOverflow` (c10's overflow check)."""
    rt = E.operand_dtypes(ops)
    return [ops[0]] + [D.check_int(b, rt) for b in ops[1:]]


@bind("clamp", "clip", prim="clamp")
def clamp(input, min=None, max=None):
    """Clamp into ``[min, max]`` (either may be a tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.clamp(st.tensor([-1., 0.5, 2.]), min=0, max=1).tolist()
    [0.0, 0.5, 1.0]
    """
    if min is None and max is None:
        raise ArgumentError("clamp(): at least one of 'min' or 'max' must not be None")
    ops = [operand(o) if o is not None else None for o in (input, min, max)]
    return apply("clamp", *_bounds(ops))


clip = clamp


@bind("clamp_", "clip_", prim="clamp")
def clamp_(self, min=None, max=None):
    """In-place :func:`clamp`.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([-1., 2.]).clamp_(min=0).tolist()
    [0.0, 2.0]
    """
    if min is None and max is None:
        raise ArgumentError("clamp_(): at least one of 'min' or 'max' must not be None")
    ops = [operand(o) if o is not None else None for o in (self, min, max)]
    apply("clamp", *_bounds(ops), target=self)
    return self


@bind("clamp_min", prim="clamp")
def clamp_min(input, min):
    """:func:`clamp` with a lower bound only (torch's ``clamp_min``).

    Examples
    --------
    >>> import sharded as st
    >>> st.clamp_min(st.tensor([-1., 2.]), 0).tolist()
    [0.0, 2.0]
    """
    return clamp(input, min=min)


@bind("clamp_max", prim="clamp")
def clamp_max(input, max):
    """:func:`clamp` with an upper bound only (torch's ``clamp_max``).

    Examples
    --------
    >>> import sharded as st
    >>> st.clamp_max(st.tensor([-1., 2.]), 0).tolist()
    [-1.0, 0.0]
    """
    return clamp(input, max=max)


@bind("clamp_min_", prim="clamp")
def clamp_min_(self, min):
    """In-place :func:`clamp_min`.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([-1., 2.]).clamp_min_(0).tolist()
    [0.0, 2.0]
    """
    return clamp_(self, min=min)


@bind("clamp_max_", prim="clamp")
def clamp_max_(self, max):
    """In-place :func:`clamp_max`.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([-1., 2.]).clamp_max_(0).tolist()
    [-1.0, 0.0]
    """
    return clamp_(self, max=max)


# ---------------------------------------------------------------------------- where
@E.named_kernel("where", pooled=True)
def _where_kernel(xp, cond, a, b, cast=None, out=None, alloc=None):
    """``where`` of one block; a large result goes into a block of the worker's pool where
    one fits (``b`` copied in, then ``a`` where ``cond`` holds: the same values, each cast
    once, as ``xp.where``'s result cast to ``out``)."""
    a, b = E.cast(xp, a, cast), E.cast(xp, b, cast)
    buf = None
    # (only where both paths convert alike: a bool condition, every array already of the
    # result's dtype; a Python scalar then becomes that dtype either way)
    if (
        alloc is not None
        and out is not None
        and getattr(cond, "dtype", None) == np.bool_
        and all(getattr(v, "dtype", out) == out for v in (a, b))
    ):
        shape = np.broadcast_shapes(*(np.shape(v) for v in (cond, a, b)))
        buf = alloc(shape, out)  # (a small block: the pool declines it)
    if buf is None:
        return E.result(xp, xp.where(cond, a, b), out)
    xp.copyto(buf, b, casting="unsafe")
    xp.copyto(buf, a, casting="unsafe", where=cond)
    return buf


def _where_rule(ops):
    cond = ops[0]
    cdt = cond._dtype if is_tensor(cond) else D.from_numpy_dtype(np.asarray(cond).dtype)
    if cdt != D.bool_:
        # torch: RuntimeError "where expected condition to be a boolean tensor"
        raise UnsupportedDType(f"where() expects a bool condition, got {cdt}")
    rt = E.operand_dtypes(ops[1:])
    return rt, rt


@primitive(
    "where",
    kernels=[_where_kernel],
    out_spec=E.spec(_where_rule),
    kind="elementwise",
)
def _where_plan(ex, cond, a, b, target=None):
    """Elementwise ``where`` planner (a bool condition; the values promote)."""
    return E.plan_rule(ex, "where", _where_rule, (cond, a, b), target)


@vjp("where", saves=(0,))
def _where_vjp(gs, node):
    c, a, b = node.args
    g = gs[0]
    return (
        None,
        unbroadcast(where(c, g, 0.0), a) if needs(a) else None,
        unbroadcast(where(c, 0.0, g), b) if needs(b) else None,
    )


def where(condition, input=None, other=None):
    """``input`` where ``condition`` is true, else ``other``; ``where(condition)`` alone is
    ``condition.nonzero(as_tuple=True)`` (as torch).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1., -2.])
    >>> st.where(x > 0, x, 0.).tolist()
    [1.0, 0.0]
    >>> [t.tolist() for t in st.where(x > 0)]
    [[0]]
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)  # the nonzero family's method, by name
    if input is None or other is None:
        raise ArgumentError("where() takes a condition alone or a condition, input and other")
    return E.call("where", condition, input, other)


@bind("where", prim="where")
def _where_method(self, condition, other):
    """``x.where(cond, y)`` is ``st.where(cond, x, y)``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1., -2.])
    >>> x.where(x > 0, 7.).tolist()
    [1.0, 7.0]
    """
    return where(condition, self, other)


# --------------------------------------------------------------------------- astype
@E.named_kernel("astype", pooled=True)
def _astype_kernel(xp, a, out, alloc=None):
    """``a`` converted to ``out``, into a block of the worker's pool where one fits."""
    buf = alloc(a.shape, out) if alloc is not None and a.size >= 1 << 16 else None
    if buf is None:
        return a.astype(out, copy=True)
    xp.copyto(buf, a, casting="unsafe")  # (the same conversion as astype's)
    return buf


@primitive(
    "astype",
    kernels=[_astype_kernel],
    out_spec=lambda x, dtype: (x.shape, dtype),
    kind="elementwise",
)
def _astype_plan(ex, x, dtype):
    """``x`` converted to ``dtype`` (a copy, laid out like ``x``; ``x.to(dtype)``)."""
    return E.plan(ex, "astype", (x,), {"out": dtype.np_str}, dtype, "astype")


@vjp("astype")
def _astype_vjp(gs, node):
    return (gs[0].to(node.args[0].dtype), None)


# ---------------------------------------------------------------------------- fill_
@E.named_kernel("fill_")
def _fill_kernel(xp, value, a, cast=None, out=None):
    """``value`` broadcast over ``a``'s block, in ``a``'s dtype.

    ``a`` is the in-place target's block (``fill_`` is always in place): an array value of
    the target's dtype is copied straight into it (one pass; NumPy's assignment buffers
    overlapping memory, so ``x[1:].copy_(x[:-1])`` reads before it writes) and ``a`` is
    returned, so the worker stores nothing more.
    """
    v = E.cast(xp, value, cast)
    if (
        xp is np
        and isinstance(v, np.ndarray)
        and isinstance(a, np.ndarray)
        and a.flags.writeable
        and v.dtype == a.dtype == out
    ):
        a[...] = v
        return a
    return E.cast(xp, xp.where(True, v, E.cast(xp, a, cast)), out)


@primitive(
    "fill_",
    kernels=[_fill_kernel],
    out_spec=E.spec(E.promote),
    kind="elementwise",
)
def _fill_plan(ex, x, value, target):
    """Write ``value`` (a scalar or a broadcastable tensor) into ``target`` in place, converted
    to its dtype (``fill_``, ``copy_``)."""
    dt = target._dtype.np_str
    return E.plan(
        ex, "fill_", (value, x), {"cast": dt, "out": dt}, target._dtype, "fill_", target=target
    )


@vjp("fill_")
def _fill_vjp(gs, node):
    x, value = node.args
    g = gs[0]
    return (apply("full", g._layout, 0, g._dtype) if needs(x) else None, unbroadcast(g, value))


@bind("fill_", prim="fill_")
def fill_(self, value):
    """Set every element to ``value`` (a number or a one-element tensor). As in torch, a
    number may fill an expanded view (``st.zeros(1).expand(3).fill_(7)``).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(3).fill_(2).tolist()
    [2.0, 2.0, 2.0]
    """
    if is_tensor(value) and value.ndim:
        raise ArgumentError(
            f"fill_ only supports 0-dimension value tensors, got one with {value.ndim} dimensions"
        )
    check_not_published(self)  # a published snapshot is never written, not even this way
    if not is_tensor(value):  # torch refuses 300 for int8 and 1e39 for float32 before writing
        value = D.check_fill(value, self._dtype)
    if self._readonly and not is_tensor(value):
        # torch fills an expanded view with a number: write each shared element once
        self[tuple(slice(0, 1) if s == 0 else slice(None) for s in self.stride())].fill_(value)
        return self
    return apply("fill_", self, operand(value), target=self)


def fill(input, value):
    """A new tensor of ``input``'s shape, dtype and layout with every element ``value`` (a
    number or a one-element tensor), as ``torch.fill``: the out-of-place ``fill_``, so the
    gradient is zero for ``input`` and the summed output gradient for a tensor ``value``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(3)
    >>> st.fill(x, 2).tolist(), x.tolist()
    ([2.0, 2.0, 2.0], [0.0, 0.0, 0.0])
    """
    if is_tensor(value) and value.ndim:
        raise ArgumentError(
            "fill only supports 0-dimension value tensors, got one with "
            f"{value.ndim} dimensions (shape {list(value.shape)})"
        )
    return fill_(input.clone(), value)


@bind("zero_", prim="fill_")
def zero_(self):
    """Set every element to zero, in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).zero_().tolist()
    [0.0, 0.0]
    """
    return fill_(self, 0)


@bind("copy_", prim="fill_")
def copy_(self, src):
    """Copy ``src`` (broadcastable; converted to this dtype) into this tensor, in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 2).copy_(st.tensor([1., 2.])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    return apply("fill_", self, operand(src), target=self)
