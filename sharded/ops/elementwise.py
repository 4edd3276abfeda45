"""Elementwise primitives: one shared planner, one table of kernels and dtype rules.

Output layout rule: the output takes the layout of the first operand that is sharded and has
the output's full shape (so ``x + y`` on equal layouts, and ``x + row``, stay local); failing
that, the largest sharded operand's chunking on its non-broadcast dims; an all-replicated op
stays replicated. Every other operand is aligned to that layout (:func:`movement.align`):
replicated operands and broadcast rows are read locally, mismatched layouts travel worker to
worker. Python scalars and small NumPy arrays ride in the command itself.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ArgumentError, DTypeError, ShapeError
from ..layout import Layout
from ..core.dataflow import align, free_temps, region
from ..core.dataflow import Operand as Result
from ..core.registry import primitive


def is_tensor(o) -> bool:
    return hasattr(o, "_layout")


def broadcast_shapes(*shapes):
    """numpy/torch broadcasting of ``shapes``; :class:`ShapeError` names them if they clash.

    Examples
    --------
    >>> broadcast_shapes((2, 1), (2,))
    (2, 2)
    """
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ShapeError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                             f"broadcast together (dimension {i}: sizes {sorted(sizes)})")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _shape(o):
    if is_tensor(o):
        return o._layout.shape
    return np.shape(o) if isinstance(o, np.ndarray) else ()


def operand_dtypes(operands):
    """torch's result type over tensors, NumPy arrays (as tensors) and Python scalars."""
    dims, zero, scalars = [], [], []
    for o in operands:
        if o is None:
            continue
        if is_tensor(o):
            (dims if o._layout.ndim else zero).append(o._dtype)
        elif isinstance(o, np.ndarray):
            (dims if o.ndim else zero).append(D.from_numpy_dtype(o.dtype))
        elif isinstance(o, (bool, int, float, np.bool_, np.integer, np.floating)):
            scalars.append(o)
        else:
            raise DTypeError(f"unsupported operand {o!r} of type {type(o).__name__}")
    return D.result_type(dims, zero, scalars)


def out_layout(shape, tensors, num_workers: int) -> Layout:
    """The output layout of an elementwise op (see the module docstring)."""
    sharded = [t for t in tensors if not t._layout.is_replicated]
    for t in sharded:
        if t._layout.shape == shape:
            return t._layout
    if not sharded:
        ws = tensors[0]._layout.workers
        return Layout.from_bounds(shape, [(0, n) for n in shape], ws, replicated=True)
    best = max(sharded, key=lambda t: np.prod(t._layout.shape))
    lay = best._layout
    off = len(shape) - lay.ndim
    bounds = [(0, n) for n in shape]
    for i in range(lay.ndim):
        if lay.shape[i] == shape[i + off]:
            bounds[i + off] = lay.bounds[i]
    grid = tuple(len(b) - 1 for b in bounds)
    n = int(np.prod(grid))
    if grid[off:] == lay.grid and n == len(lay.workers):
        return Layout.from_bounds(shape, bounds, lay.workers)
    return Layout.from_bounds(shape, bounds, [i % num_workers for i in range(n)])


def _const_args(arr, layout: Layout):
    """Per-shard pieces of a NumPy operand: each worker receives only the blocks it needs,
    and equal pieces (a broadcast row) are one object, so a batch pickles them once."""
    off = layout.ndim - arr.ndim
    out, seen = [], {}
    for _, offs, shp in layout.shards():
        bounds = region(arr, offs, shp, off)
        if bounds not in seen:
            seen[bounds] = ("c", arr[tuple(slice(lo, hi) for lo, hi in bounds)])
        out.append(seen[bounds])
    return out


def plan(ex, kernel, operands, params, out_dtype, label, target=None) -> Result:
    """Queue ``kernel`` on every output shard; ``target`` makes it in-place on that tensor."""
    tensors = [o for o in operands if is_tensor(o)]
    shape = broadcast_shapes(*[_shape(o) for o in operands if o is not None])
    if target is not None:
        if shape != target._layout.shape:
            raise ShapeError(f"output with shape {target._layout.shape} doesn't match the "
                             f"broadcast shape {shape}")
        layout, keys = target._layout, target._keys
    else:
        layout = out_layout(shape, tensors, ex.num_workers)
        keys = tuple(ex.new_key() for _ in layout.shards())
    per_op, temps = [], []
    nshards = len(keys)
    for o in operands:
        if is_tensor(o):
            a, t = align(ex, o, layout)
            per_op.append(a)
            temps += t
        elif isinstance(o, np.ndarray) and o.ndim:
            per_op.append(_const_args(o, layout))
        else:
            per_op.append((("c", o),) * nshards)
    inplace = target is not None
    for s, (w, _, _) in enumerate(layout.shards()):
        ex.submit(w, kernel, tuple(a[s] for a in per_op), (keys[s],), params, (label, s),
                  inplace)
    if temps:
        free_temps(ex, temps)
    return Result(layout, out_dtype, keys)


# ----------------------------------------------------------------------------- dtype rules
def _promote(ops):
    rt = operand_dtypes(ops)
    return rt, rt


def _floating(ops):
    rt = operand_dtypes(ops)
    rt = rt if rt.is_floating_point else D.get_default_dtype()
    return rt, rt


def _compare(ops):
    return operand_dtypes(ops), D.bool_


def _logical(ops):
    return None, D.bool_


def _bitwise(ops):
    rt = operand_dtypes(ops)
    if rt.is_floating_point:
        raise DTypeError(f"bitwise ops are only defined for bool and integer dtypes, got {rt}")
    return rt, rt


def _negate(ops):
    rt = operand_dtypes(ops)
    if rt == D.bool_:
        raise DTypeError("negation (-) of a bool tensor is not supported; use ~ or "
                         "logical_not() instead")
    return rt, rt


def _where(ops):
    cond = ops[0]
    cdt = cond._dtype if is_tensor(cond) else D.from_numpy_dtype(np.asarray(cond).dtype)
    if cdt != D.bool_:
        raise DTypeError(f"where() expects a bool condition, got {cdt}")
    rt = operand_dtypes(ops[1:])
    return rt, rt


# name: (kernel, numpy ufunc, dtype rule)
SPECS = {
    "add": ("ufunc", "add", _promote),
    "sub": ("ufunc", "subtract", _promote),
    "mul": ("ufunc", "multiply", _promote),
    "div": ("ufunc", "divide", _floating),
    "floor_divide": ("ufunc", "floor_divide", _promote),
    "remainder": ("ufunc", "remainder", _promote),
    "pow": ("ufunc", "power", _promote),
    "maximum": ("ufunc", "maximum", _promote),
    "minimum": ("ufunc", "minimum", _promote),
    "neg": ("ufunc", "negative", _negate),
    "abs": ("ufunc", "absolute", _promote),
    "exp": ("ufunc", "exp", _floating),
    "log": ("ufunc", "log", _floating),
    "log1p": ("ufunc", "log1p", _floating),
    "sqrt": ("ufunc", "sqrt", _floating),
    "sin": ("ufunc", "sin", _floating),
    "cos": ("ufunc", "cos", _floating),
    "tanh": ("ufunc", "tanh", _floating),
    "sigmoid": ("sigmoid", None, _floating),
    "relu": ("relu", None, _promote),
    "relu_grad": ("relu_grad", None, _promote),
    "eq": ("ufunc", "equal", _compare),
    "ne": ("ufunc", "not_equal", _compare),
    "lt": ("ufunc", "less", _compare),
    "le": ("ufunc", "less_equal", _compare),
    "gt": ("ufunc", "greater", _compare),
    "ge": ("ufunc", "greater_equal", _compare),
    "logical_and": ("ufunc", "logical_and", _logical),
    "logical_or": ("ufunc", "logical_or", _logical),
    "logical_xor": ("ufunc", "logical_xor", _logical),
    "logical_not": ("ufunc", "logical_not", _logical),
    "isnan": ("ufunc", "isnan", _logical),
    "isfinite": ("ufunc", "isfinite", _logical),
    "bitwise_and": ("ufunc", "bitwise_and", _bitwise),
    "bitwise_or": ("ufunc", "bitwise_or", _bitwise),
    "bitwise_xor": ("ufunc", "bitwise_xor", _bitwise),
    "bitwise_not": ("ufunc", "invert", _bitwise),
    "clamp": ("clamp", None, _promote),
    "where": ("where", None, _where),
}


def _make(name, kernel, fn, rule):
    def impl(ex, *operands, target=None):
        cast, out = rule(operands)
        if target is not None:
            tdt = target._dtype
            if D.category(out) > D.category(tdt):
                raise DTypeError(f"result type {out.name} of {name}_ can't be cast to the "
                                 f"in-place output's dtype {tdt.name}")
            out = tdt
        if name == "pow" and D.category(cast) == 1:
            e = operands[1]
            if isinstance(e, (int, np.integer)) and not isinstance(e, bool) and e < 0:
                raise ArgumentError(f"integers to negative integer powers are not allowed "
                                    f"(exponent {e} on a {cast.name} tensor)")
        params = {"cast": None if cast is None else cast.np.str, "out": out.np.str}
        if fn is not None:
            params["fn"] = fn
        return plan(ex, kernel, operands, params, out, name, target)
    impl.__name__ = name
    impl.__doc__ = f"Elementwise ``{name}`` planner (kernel ``{kernel}``, {rule.__name__[1:]})."
    return primitive(name, kind="elementwise")(impl)


for _name, (_k, _fn, _rule) in SPECS.items():
    _make(_name, _k, _fn, _rule)


@primitive("astype", kind="elementwise")
def astype(ex, x, dtype) -> Result:
    """``x`` converted to ``dtype`` (a copy, laid out like ``x``)."""
    return plan(ex, "astype", (x,), {"out": dtype.np.str}, dtype, "to")


@primitive("fill_", kind="elementwise")
def fill_(ex, x, value, target) -> Result:
    """Write ``value`` (a scalar or a broadcastable tensor) into ``target`` in place, converted
    to its dtype (``fill_``, ``copy_``)."""
    dt = target._dtype.np.str
    return plan(ex, "where", (True, value, x), {"cast": dt, "out": dt}, target._dtype, "fill_",
                target=target)
