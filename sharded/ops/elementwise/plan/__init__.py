"""Shared machinery of the elementwise family: the planner, broadcasting, dtype rules, the
kernel factories and :func:`define`, the one factory its primitives are made with (JAX's
``standard_unop``: a primitive is a call, its VJP right under it).

This module defines no primitive. Every elementwise primitive plans the same way, so the
planner is written once here; :func:`define` records the module that calls it as the
planner's place, so a primitive, its planner and its VJP sit in one block of its module.

Output layout rule: the output takes the layout of the first operand that is sharded and has
the output's full shape (so ``x + y`` on equal layouts, and ``x + row``, stay local); failing
that, the largest sharded operand's chunking on its non-broadcast dims; an all-replicated op
stays replicated. Every other operand is aligned to that layout (:func:`~sharded.core.
dataflow.align`): replicated operands and broadcast rows are read locally, mismatched layouts
travel worker to worker; an operand whose row cuts are a few rows off the output's (the
shifted slices of a stencil) reads those rows as a halo beside its local rows instead of an
assembled copy (:mod:`.halo`). Python scalars and small NumPy arrays ride in the command
itself.
"""

from __future__ import annotations

import sys

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, free_temps, region
from ....core.dispatch import apply, as_tensor, is_tensor, operand
from ....core.registry import bind, kernel, primitive
from ....core.rulecache import PURE as _PURE  # (the prims modules add their rules as E._PURE)
from ....core.rulecache import PY_SCALARS as _PY_SCALARS
from ....core.rulecache import cached_rule as _cached_rule  # noqa: F401  (E._cached_rule)
from ....core.rulecache import signature as _signature
from ....errors import DTypeError, ShapeError, UnsupportedDType
from ....layout import Layout, broadcast_shapes
from ....runtime.commands import Const, Keys
from ....tensor import ShardedTensor
from . import halo


def _sharded(o) -> bool:
    """A tensor or an :class:`Operand` (planners also run on internal operands)."""
    return hasattr(o, "_layout")


def _shape(o):
    if _sharded(o):
        return o._layout.shape
    return np.shape(o) if isinstance(o, np.ndarray) else ()


def operand_dtypes(operands):
    """torch's result type over tensors, NumPy arrays (as tensors) and Python scalars.

    Examples
    --------
    >>> operand_dtypes([np.ones(2, np.int32), 2.5]).name
    'float32'
    """
    dims, zero, scalars = [], [], []
    for o in operands:
        if o is None:
            continue
        if _sharded(o):
            (dims if o._layout.ndim else zero).append(o._dtype)
        elif isinstance(o, np.ndarray):
            (dims if o.ndim else zero).append(D.from_numpy_dtype(o.dtype))
        elif isinstance(o, (bool, int, float, complex, np.bool_, np.number)):
            scalars.append(o)
        else:
            raise DTypeError(f"unsupported operand {o!r} of type {type(o).__name__}")
    return D.result_type(dims, zero, scalars)


def out_layout(shape, tensors, num_workers: int) -> Layout:
    """The output layout of an elementwise op (see the module docstring).

    Examples
    --------
    >>> from sharded.core.dataflow import Operand
    >>> lay = Layout.from_bounds((4, 2), [(0, 2, 4), (0, 2)], [0, 1])
    >>> out_layout((4, 2), [Operand(lay, None, (1, 2))], 2) is lay
    True
    """
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
            seen[bounds] = Const(arr[tuple(slice(lo, hi) for lo, hi in bounds)])
        out.append(seen[bounds])
    return out


def _local(o, layout) -> bool:
    """Whether operand ``o`` needs no per-shard argument: a scalar, or a tensor with the
    output's layout whose keys are a range (shard ``s`` has key ``start + s``)."""
    if not _sharded(o):
        return not isinstance(o, np.ndarray) or not o.ndim
    return isinstance(o._keys, range) and (o._layout is layout or o._layout == layout)


def _one_layout(operands, target):
    """``(layout, args)`` when every operand is a Python scalar or a tensor of one sharded
    layout whose keys are a range (and ``target``, if any, has it too): the usual op, which
    needs no broadcasting, no layout rule and no per-shard argument; ``args`` are the
    command's operands (``Const`` of a scalar, ``Keys`` of a tensor). None otherwise."""
    layout = None
    args = []
    for o in operands:
        if type(o) in _PY_SCALARS:
            args.append(_CONST((o,)))
            continue
        lay = getattr(o, "_layout", None)
        if lay is None:
            return None
        keys = o._keys
        if type(keys) is not range:
            return None
        if layout is None:
            layout = lay
        elif lay is not layout and lay != layout:
            return None
        args.append(_KEYS((keys.start,)))
    if layout is None or layout.is_replicated:
        return None
    if target is not None and (target._layout is not layout or type(target._keys) is not range):
        return None
    return layout, tuple(args)


# (the records built from their fields' tuples: the per-op path of every op)
_CONST, _KEYS = Const.make, Keys.make


def plan(ex, kernel, operands, params, out_dtype, label, target=None) -> Operand:
    """Queue ``kernel`` on every output shard; ``target`` makes it in-place on that tensor."""
    one = _one_layout(operands, target)
    if one is not None:  # one command names the whole layout
        layout, args = one
        keys = target._keys if target is not None else ex.new_keys(len(layout.workers))
        ex.submit_group(layout, kernel, args, keys.start, params, label, target is not None)
        return Operand(layout, out_dtype, keys)
    tensors = [o for o in operands if _sharded(o)]
    shape = broadcast_shapes(*[_shape(o) for o in operands if o is not None])
    if target is not None:
        if shape != target._layout.shape:
            raise ShapeError(
                f"output with shape {target._layout.shape} doesn't match the "
                f"broadcast shape {shape}"
            )
        layout, keys = target._layout, target._keys
    else:
        layout = out_layout(shape, tensors, ex.num_workers)
        keys = ex.new_keys(len(layout.shards()))
    inplace = target is not None
    if isinstance(keys, range) and all(_local(o, layout) for o in operands):
        # every operand already sits shard for shard: one command names the whole layout
        args = tuple(Keys(o._keys.start) if _sharded(o) else Const(o) for o in operands)
        ex.submit_group(layout, kernel, args, keys.start, params, label, inplace)
        return Operand(layout, out_dtype, keys)
    per_op, temps = [], []
    nshards = len(keys)
    for o in operands:
        if _sharded(o):
            # (an operand a few rows off the output's cuts reads a halo, not a copy)
            a, t = halo.halo_args(ex, o, layout)
            per_op.append(a)
            temps += t
        elif isinstance(o, np.ndarray) and o.ndim:
            per_op.append(_const_args(o, layout))
        else:
            per_op.append((Const(o),) * nshards)
    for s, (w, _, shp) in enumerate(layout.shards()):
        args = tuple(a[s] for a in per_op)
        halo.submit(ex, w, kernel, args, keys[s], shp, params, (label, s), inplace)
    if temps:
        free_temps(ex, temps)
    return Operand(layout, out_dtype, keys)


def spec(rule):
    """The ``out_spec`` of an elementwise primitive with dtype ``rule``: the broadcast shape
    of the operands and the rule's result dtype (an in-place op keeps its target's dtype).

    Examples
    --------
    >>> import numpy as np
    >>> spec(promote)(np.zeros((2, 1), np.int64), 1.5)
    ((2, 1), sharded.float32)
    """

    def out_spec(*operands, target=None, **params):
        shape = broadcast_shapes(*[_shape(o) for o in operands if o is not None])
        return shape, target._dtype if target is not None else rule(operands)[1]

    out_spec.__name__ = f"spec_{rule.__name__}"
    return out_spec


def plan_rule(ex, name, rule, operands, target=None, check=None) -> Operand:
    """Plan primitive ``name`` (kernel ``name``) with dtype ``rule``: the body every
    elementwise planner shares (``target``: in place, the result must fit its dtype;
    ``check(operands, cast)`` may raise for values the op rejects).

    What the dtype rule decides (compute and result dtypes, the kernel's params, whether
    Python ints wrap) is remembered by what it looks at (:mod:`~sharded.core.rulecache`): an
    op repeated in a loop pays one dict lookup for it."""
    key = _signature(rule, operands, target)
    hit = _PLANS.get(key) if key is not None else None
    if hit is None:
        hit = _decide(name, rule, operands, target, key is not None)  # (a raise caches nothing)
        if key is not None:
            if len(_PLANS) > 4096:
                _PLANS.clear()
            _PLANS[key] = hit
    cast, out, params, wraps = hit
    if check is not None:
        check(operands, cast)
    if wraps:  # Python ints wrap into an integer cast dtype, as torch (uint8 > -1)
        operands = tuple([D.wrap_int(o, cast) for o in operands])
    return plan(ex, name, operands, params, out, name, target)


def _decide(name, rule, operands, target, cached):
    """``(cast, out, params, wraps)`` of :func:`plan_rule` (``cached``: the operands are
    tensors, Python scalars and None only)."""
    cast, out = rule(operands)
    if target is not None:
        tdt = target._dtype
        if D.category(out) > D.category(tdt):
            raise DTypeError(
                f"result type {out.name} of {name}_ can't be cast to the "
                f"in-place output's dtype {tdt.name}"
            )
        out = tdt
    wraps = cast is not None and cast.np.kind in "iu"
    if wraps and cached:  # (only a Python scalar can wrap)
        wraps = any(type(o) in _PY_SCALARS for o in operands)
    params = _PARAMS.get((cast, out))
    if params is None:  # one dict per dtype pair: commands share it (a batch pickles it once)
        params = _PARAMS[cast, out] = {
            "cast": None if cast is None else cast.np_str,
            "out": out.np_str,
        }
    return cast, out, params, wraps


_PARAMS: dict = {}  # (cast, out) -> the kernel's params (never changed: shared by commands)
_PLANS: dict = {}  # _signature(...) -> plan_rule's (cast, out, params, wraps)


# ----------------------------------------------------------------------------- dtype rules
# A rule maps the operands to ``(cast, out)``: the dtype the kernel computes in (None: the
# operands' own) and the result dtype.
def promote(ops):
    """torch's promotion: compute in and return the result type."""
    rt = operand_dtypes(ops)
    return rt, rt


def floating(ops):
    """Like :func:`promote`, integers and bools giving the default float dtype (complex
    stays complex)."""
    rt = operand_dtypes(ops)
    rt = rt if D.category(rt) >= 2 else D.get_default_dtype()
    return rt, rt


def compare(ops):
    """Compare in the promoted dtype, return bool."""
    return operand_dtypes(ops), D.bool_


def real_part(ops):
    """Compute in the promoted dtype, return its real type (``abs``, ``angle`` of complex)."""
    rt = operand_dtypes(ops)
    return rt, D.to_real(rt)


def logical(ops):
    """Truth values of the operands as they are, return bool."""
    return None, D.bool_


def bitwise(ops):
    """Bool and integer dtypes only (promoted)."""
    rt = operand_dtypes(ops)
    if D.category(rt) >= 2:
        # torch: "bitwise_and_cpu" not implemented for 'Float' (a NotImplementedError)
        raise UnsupportedDType(
            f"bitwise ops are only defined for bool and integer dtypes, got {rt}"
        )
    return rt, rt


_PURE.update((promote, floating, compare, real_part, logical, bitwise))

_KINDS = {
    "nonbool": ("bool", lambda d: d != D.bool_),
    "float": ("non-floating-point", lambda d: d.is_floating_point),
    "inexact": ("non-floating-point, non-complex", lambda d: d.is_floating_point or d.is_complex),
    "int": ("non-integer", lambda d: D.category(d) == 1),
}


def only(name, kinds):
    """:func:`promote` for op ``name`` restricted to ``kinds`` (``"nonbool"``: torch's floor
    or fmod; ``"float"``: frac, hypot; ``"int"``: gcd, shifts); other result types raise.

    Examples
    --------
    >>> only("gcd", "int")([np.ones(2, np.int32), 2])[1].name
    'int32'
    """
    what, ok = _KINDS[kinds]

    def rule(ops):
        rt = operand_dtypes(ops)
        if not ok(rt):
            # torch: "floor_cpu" not implemented for 'Bool' (a NotImplementedError)
            raise UnsupportedDType(f"{name} is not implemented for {what} dtype {rt.name}")
        return rt, rt

    rule.__name__ = f"only_{kinds}"
    _PURE.add(rule)
    return rule


# ------------------------------------------------------------------------------ kernels
def cast(xp, a, dtype):
    """``a`` as ``dtype`` (Python scalars and arrays of that dtype as they are).

    A Python number meeting bfloat16 is rounded to a bfloat16 scalar, as torch rounds it:
    NumPy would otherwise promote the ml_dtypes array to float32 (no weak scalars for it).
    """
    if dtype is None:
        return a
    dt = getattr(a, "dtype", None)
    if dt is None:
        if isinstance(a, (float, int)) and D.is_bf16(dtype):  # bool is an int
            return np.asarray(a, dtype=dtype)[()]
        return a
    return a if dt == dtype else a.astype(dtype)


_DTYPES: dict = {}  # a kernel's dtype parameter (a name, as shipped) -> its NumPy dtype


def as_dtype(d):
    """``np.dtype(d)``, cached by ``d`` (None stays None): comparing a dtype to a name parses
    the name each time, a third of a small block's kernel time.

    Examples
    --------
    >>> as_dtype("<f4"), as_dtype(None)
    (dtype('float32'), None)
    """
    if d is None:
        return None
    got = _DTYPES.get(d)
    if got is None:
        got = _DTYPES[d] = np.dtype(d)
    return got


def ufunc_kernel(name, fn):
    """The kernel of primitive ``name``: ``xp.<fn>(*arrays)`` computed in dtype ``cast`` and
    returned as dtype ``out`` (registered under ``name``, using the worker's buffer pool).

    Python scalars stay Python scalars, so NumPy's weak scalar typing keeps the array's dtype.
    ``alloc(shape, dtype)`` may offer a recycled output block (the worker's buffer pool).
    """

    def k(xp, *arrays, cast=None, out=None, alloc=None):
        # (dtypes by identity first: a tiny block's kernel is mostly this bookkeeping)
        cast = _DTYPES.get(cast) or as_dtype(cast)
        out = _DTYPES.get(out) or as_dtype(out)
        if cast is None:
            args = arrays
        else:
            args = [a if getattr(a, "dtype", None) is cast else _cast(xp, a, cast) for a in arrays]
        f = getattr(xp, fn)
        if alloc is not None and out is not None:
            shapes = [a.shape for a in args if hasattr(a, "shape")]
            # (equal shapes, the usual case, without NumPy's broadcast_shapes: a quarter of
            # a small block's kernel time)
            if not shapes:
                shape = ()
            elif shapes.count(shapes[0]) == len(shapes):
                shape = shapes[0]
            else:
                shape = np.broadcast_shapes(*shapes)
            buf = alloc(shape, out) if shape else None
            if buf is not None:
                try:
                    return f(*args, out=buf)
                except TypeError:  # the ufunc's natural dtype differs from ``out``
                    pass
        r = f(*args)
        if type(r) is np.ndarray and r.dtype is out and r.flags.c_contiguous:
            return r
        return result(xp, r, out)

    k.__name__ = k.__qualname__ = name
    k.__doc__ = f"Kernel of ``{name}``: ``xp.{fn}`` computed in ``cast``, returned as ``out``."
    # A ufunc is elementwise and its dtype depends on ``cast``/``out`` only: a run of these
    # kernels may be evaluated block by block in the worker (sharded.runtime.worker.fusion).
    return kernel(k, pooled=True, fusable=True)


def result(xp, r, dtype):
    """A kernel's output block: ``r`` as ``dtype`` and C-contiguous (a ufunc over a transposed
    view keeps its memory order, and the store's later in-place reshapes need C order)."""
    r = cast(xp, r, dtype)
    return xp.ascontiguousarray(r) if hasattr(r, "flags") and not r.flags.c_contiguous else r


_cast = cast  # inside kernels the keyword ``cast`` (a dtype) hides the function


def named_kernel(name, pooled=False):
    """Register the decorated function as the kernel of primitive ``name`` (the module
    attribute of that name is the public function, so the kernel's own name differs);
    ``pooled``: it takes ``alloc=`` (see :func:`sharded.core.registry.kernel`)."""

    def deco(f):
        f.__name__ = f.__qualname__ = name
        return kernel(f, pooled=pooled)

    return deco


# ------------------------------------------------------------------- public functions
def call(name, *operands):
    """Run elementwise primitive ``name`` on user values (at least one becomes a tensor)."""
    tensor = False
    for o in operands:  # the usual call: tensors and Python scalars, as they are
        t = type(o)
        if t is ShardedTensor:
            tensor = True
        elif t not in _PY_SCALARS:
            break
    else:
        if tensor:
            return apply(name, *operands)
    ops = [o if type(o) in _PASS else operand(o) for o in operands]
    if not any(is_tensor(o) for o in ops):
        ops[0] = as_tensor(ops[0])
    return apply(name, *ops)


_PASS = _PY_SCALARS | {ShardedTensor}  # operands ``operand()`` returns as they are


def call_(name, x, *operands):
    """Run primitive ``name`` in place on ``x`` (the ``name_`` methods); returns ``x``."""
    apply(name, *[operand(o) for o in (x,) + operands], target=x)
    return x


def inplace_unary(name):
    """The in-place method ``name_`` of a unary primitive (bind it in the family module)."""

    def op(self):
        apply(name, self, target=self)
        return self

    op.__name__ = op.__qualname__ = name + "_"
    op.__doc__ = f"""In-place ``{name}``: writes into this tensor's shards and returns it.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([0.5, 2.0])
    >>> x.{name}_() is x
    True
    """
    return op


_SCALARS = (bool, int, float, complex, np.generic)


def require_tensors(name, operands, params) -> None:
    """torch's check for ops that have no Number overload (``fmax``, ``gcd``...): a Python or
    NumPy scalar among ``operands`` (named ``params``) raises :class:`DTypeError`.

    Examples
    --------
    >>> require_tensors("fmax", (np.ones(2), 2.0), ("input", "other"))
    Traceback (most recent call last):
    ...
    sharded.errors.DTypeError: fmax(): argument 'other' (position 2) must be a tensor, not float 2.0
    """
    for i, (o, p) in enumerate(zip(operands, params)):
        if isinstance(o, _SCALARS):
            raise DTypeError(
                f"{name}(): argument '{p}' (position {i + 1}) must be a tensor, "
                f"not {type(o).__name__} {o!r}"
            )


# ------------------------------------------------------------------------- the factory
def define(
    name,
    kernel,
    rule,
    doc=None,
    example=None,
    result=None,
    *,
    check=None,
    nargs=1,
    aliases=(),
    operators=(),
    inplace=True,
    tensors=(),
):
    """Define elementwise primitive ``name`` in one call (JAX's ``standard_unop``): kernel,
    planner and ``out_spec``; with a ``doc``, also its public function and methods.

    ``kernel`` is a registered kernel or the name of an ``xp`` ufunc (:func:`ufunc_kernel`),
    ``rule`` the dtype rule, ``check(operands, cast)`` may raise before anything is queued.
    With ``doc`` it returns the public function of ``nargs`` (1 or 2) operands, whose
    docstring is ``doc`` and the example ``st.<name>(<example>).tolist()`` giving ``result``,
    bound as the method ``x.name(...)``, ``aliases`` (methods too) and ``operators``
    (dunders); ``x.name_(...)`` and the aliases' ``_`` forms write in place unless
    ``inplace`` is False. ``tensors`` names the parameters where torch refuses Python numbers
    (:func:`require_tensors`). Without ``doc``: None.

    The calling module is recorded once, here: the planner's ``__module__``, and its code's
    file and first line, are the call's, so the registry test and the architecture check
    find the planner where the primitive is defined, beside its VJP (a traceback through it
    names that line too); the public function's ``__module__`` is the caller's as well, so
    its example runs among that module's doctests.

    Examples
    --------
    >>> from sharded.core.registry import PRIMITIVES
    >>> PRIMITIVES["exp"].plan.__module__
    'sharded.ops.elementwise.prims.unary'
    """
    caller = sys._getframe(1)
    module = caller.f_globals["__name__"]
    k = ufunc_kernel(name, kernel) if isinstance(kernel, str) else kernel
    plan = _at_call(
        caller, name, lambda ex, *ops, target=None: plan_rule(ex, name, rule, ops, target, check)
    )
    plan.__module__ = module
    plan.__doc__ = f"Elementwise ``{name}`` planner ({rule.__name__})."
    primitive(name, kernels=[k], out_spec=spec(rule), kind="elementwise")(plan)
    if doc is None:
        return None
    f = _function(name, nargs, tensors)
    f.__module__ = module
    f.__doc__ = f"""{doc}

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}({example}).tolist()
    {result}
    """
    bind(name, *aliases, *operators, prim=name)(f)
    if inplace:
        op = inplace_unary(name) if nargs == 1 else _inplace_binary(name, tensors)
        bind(name + "_", *(a + "_" for a in aliases), prim=name)(op)
    return f


def _at_call(frame, name, fn):
    """One-line function ``fn`` named ``name`` and placed at the line that ``frame`` runs:
    its code's file, first line (each of its instructions is on that line) and name."""
    fn.__code__ = fn.__code__.replace(
        co_filename=frame.f_code.co_filename, co_firstlineno=frame.f_lineno, co_name=name
    )
    fn.__name__ = fn.__qualname__ = name
    return fn


def _function(name, nargs, tensors):
    """The public function ``name(input)`` or ``name(input, other)`` of the primitive."""
    if nargs == 1:

        def f(input):
            if tensors:
                require_tensors(name, (input,), tensors)
            return call(name, input)

    else:

        def f(input, other):
            if tensors:
                require_tensors(name, (input, other), tensors)
            return call(name, input, other)

    f.__name__ = f.__qualname__ = name
    return f


def _inplace_binary(name, tensors):
    """The in-place method ``x.name_(other)`` of a binary primitive."""

    def op(self, other):
        if tensors:
            require_tensors(name + "_", (self, other), tensors)
        return call_(name, self, other)

    op.__name__ = op.__qualname__ = name + "_"
    op.__doc__ = (
        f"In-place ``{name}``: writes into this tensor's shards (the result cast to its dtype) "
        "and returns it."
    )
    return op


# --------------------------------------------------------------------------- gradients
def zeros_like_grad(g):
    """A zero gradient shaped like ``g``: the VJP of a piecewise-constant op (``g * 0`` would
    turn an infinite ``g`` into NaN).

    Examples
    --------
    >>> import sharded as st
    >>> zeros_like_grad(st.tensor([float("inf"), 1.0])).tolist()
    [0.0, 0.0]
    """
    return apply("full", g._layout, 0, g._dtype)
