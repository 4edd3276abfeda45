"""The registry: one record per primitive, defined in one block of its op-family module.

A :class:`Primitive` holds everything about one op: its kernel(s) (pure
``f(xp, *arrays, **params)`` run inside workers, named like the primitive), its pure rule
(``out_spec``: shapes and dtypes of the result), its planner (``plan(ex, *args,
**params)``: submits commands, chooses the output layout and returns :class:`Operand`
records), its VJP (or :data:`NONDIFF`), and the public names it binds on
:class:`~sharded.tensor.ShardedTensor`. A family module defines a primitive JAX-style: the
planner, then its rules right under it::

    @primitive("mul", kernels=[mul_kernel], vjp=..., saves=(0, 1))
    def mul_plan(ex, a, b, target=None): ...

Elementwise primitives come from one factory, :func:`sharded.ops.elementwise.plan.define`,
whose planner counts as defined in the module that calls it. Kernels that only serve planners
(assembling a block, a combine step) are registered with :func:`kernel` and belong to the
module that submits them. Workers find kernels by name in the one kernel table
(:data:`sharded.runtime.worker.core.KERNELS`), which this module fills.
"""

from __future__ import annotations

import numpy as np

from ..errors import DTypeError, UnsupportedDType
from ..runtime.worker.core import KERNELS
from ..tensor import ShardedTensor

NONDIFF = "non-differentiable"  # an explicit VJP decision: no gradient flows through this op


class Primitive:
    """One primitive: name, planner, kernels, rules, VJP and bound names (see module doc)."""

    __slots__ = (
        "name",
        "plan",
        "kernels",
        "out_spec",
        "vjp",
        "saves",
        "save_out",
        "kind",
        "names",
    )

    def __init__(
        self,
        name,
        plan,
        kernels=(),
        out_spec=None,
        vjp=None,
        saves=(),
        save_out=False,
        kind="op",
    ):
        self.name, self.plan, self.kind = name, plan, kind
        self.kernels = tuple(k if isinstance(k, str) else k.kernel_name for k in kernels)
        self.out_spec = out_spec
        self.vjp, self.saves, self.save_out = vjp, tuple(saves), save_out
        self.names: list = []

    @property
    def impl(self):
        """The planner (the name tools and older code use)."""
        return self.plan

    @property
    def differentiable(self) -> bool:
        return self.vjp is not NONDIFF

    def def_vjp(self, fn=None, *, saves=None, save_out=None):
        """Attach the VJP ``fn(grads, node) -> one gradient per input`` (a decorator).

        ``saves``: positions of inputs whose values the rule reads (their versions are checked
        at backward); ``save_out``: whether it reads the outputs (``node.saved["out"]``; a tuple
        of output positions saves only those, the others are None).
        """

        def deco(f):
            self.vjp = f
            if saves is not None:
                self.saves = tuple(saves)
            if save_out is not None:
                self.save_out = save_out
            return f

        return deco(fn) if fn is not None else deco

    def __repr__(self):
        return f"Primitive({self.name!r}, kernels={self.kernels}, kind={self.kind!r})"


def pooled_empty(xp, alloc, shape, dtype):
    """A block of ``shape``/``dtype`` (contents undefined) for a ``pooled`` kernel: from the
    worker's pool of freed blocks (``alloc``) when one fits, else fresh. A fresh block costs
    a page fault per page touched (on a VM, more than a pass of arithmetic over it; and the
    kernel threads of one worker take theirs one at a time); a pooled one is mapped already.

    Examples
    --------
    >>> import numpy as np
    >>> pooled_empty(np, None, (2, 3), np.float64).shape
    (2, 3)
    """
    got = alloc(tuple(shape), dtype) if alloc is not None else None
    return xp.empty(shape, dtype=dtype) if got is None else got


PRIMITIVES: dict[str, Primitive] = {}
COMPOSITES: dict[str, Primitive] = {}  # composed functions with a VJP of their own (composite)


def kernel(fn=None, *, name=None, pooled=False, fusable=False):
    """Register a worker kernel under its function name (or ``name``).

    ``pooled`` kernels accept ``alloc=`` (a recycled output block from the worker's pool).
    ``fusable`` kernels are elementwise with a result dtype that does not depend on values:
    the worker may run a chain of them block by block (:mod:`sharded.runtime.worker.fusion`).
    """

    def deco(f):
        key = name or f.__name__
        if key in KERNELS and KERNELS[key] is not f:
            raise KeyError(
                f"kernel {key!r} is defined twice ({KERNELS[key].__module__} and {f.__module__})"
            )
        f.pooled, f.fusable, f.kernel_name = pooled, fusable, key
        KERNELS[key] = f
        return f

    return deco(fn) if fn is not None else deco


def primitive(
    name,
    *,
    kernels=(),
    out_spec=None,
    vjp=None,
    saves=(),
    save_out=False,
    kind="op",
):
    """Register the decorated planner as primitive ``name`` (returns the planner; the record
    is ``PRIMITIVES[name]``, whose ``def_vjp`` attaches a gradient rule).

    ``kernels`` lists the kernels its commands run: kernel functions (registered under their
    name unless ``@kernel`` registered them already) or names of registered kernels.
    """

    def deco(plan):
        if name in PRIMITIVES:
            raise KeyError(f"primitive {name!r} is defined twice")
        for k in kernels:  # a function not yet registered registers under its own name
            if not isinstance(k, str) and getattr(k, "kernel_name", None) is None:
                kernel(k)
            elif isinstance(k, str) and k not in KERNELS:
                raise KeyError(f"primitive {name!r} names unknown kernel {k!r}")
        PRIMITIVES[name] = Primitive(name, plan, kernels, out_spec, vjp, saves, save_out, kind)
        return plan

    return deco


def vjp(*names, saves=(), save_out=False):
    """Attach the decorated function as the VJP of the primitives ``names`` (defined above
    it in the same module)."""

    def deco(fn):
        for n in names:
            (PRIMITIVES.get(n) or COMPOSITES[n]).def_vjp(fn, saves=saves, save_out=save_out)
        return fn

    return deco


def composite(name):
    """Register the decorated function as the composite ``name``: a function composed of
    primitives (run without recording them) that records one autograd node of its own with
    :func:`~sharded.core.dispatch.record_composite`; its VJP attaches with :func:`vjp`, as
    a primitive's. For compositions whose gradient is not the function's: ``pinv`` through
    the SVD has none at repeated singular values (a singular matrix), where torch's formula
    for the pseudo-inverse has one. The record's ``plan`` is the function itself, which
    ``apply`` never runs (it is kept apart from :data:`PRIMITIVES`, in :data:`COMPOSITES`)."""

    def deco(fn):
        if name in PRIMITIVES or name in COMPOSITES:
            raise KeyError(f"primitive {name!r} is defined twice")
        COMPOSITES[name] = Primitive(name, fn, kind="composite")
        return fn

    return deco


def nondiff(*names) -> None:
    """Mark primitives as non-differentiable (comparisons, argmax...)."""
    for n in names:
        PRIMITIVES[n].vjp = NONDIFF


# Primitives torch refuses for complex operands (orderings, rounding, clamps...): name -> what
# torch calls the op in its message. ``dispatch.apply`` checks it before anything is queued.
NO_COMPLEX: dict[str, str] = {}


def no_complex(*names, label=None) -> None:
    """Mark primitives ``names`` as refusing complex operands (``label``: the op's name in
    the error, default the primitive's)."""
    for n in names:
        NO_COMPLEX[n] = label or n


def refuse_complex(name, args) -> None:
    """Raise :class:`~sharded.errors.UnsupportedDType` if primitive ``name`` (marked with
    :func:`no_complex`) got a complex tensor, NumPy array or Python number."""
    for a in args:
        dt = getattr(a, "dtype", None)
        kind = None if dt is None else getattr(dt, "np", dt).kind
        if isinstance(a, complex) or kind == "c":
            what = dt.name if isinstance(a, ShardedTensor) else type(a).__name__
            raise UnsupportedDType(  # torch: NotImplementedError "..." not implemented for complex
                f"{NO_COMPLEX[name]} is not supported for complex inputs (got {what})"
            )


# ------------------------------------------------------------------------ public names
_OPERAND = (ShardedTensor, np.ndarray, bool, int, float, complex, np.generic)
_REFLECTED = {
    "__radd__",
    "__rsub__",
    "__rmul__",
    "__rtruediv__",
    "__rfloordiv__",
    "__rmod__",
    "__rpow__",
    "__rand__",
    "__ror__",
    "__rxor__",
    "__rlshift__",
    "__rrshift__",
    "__rmatmul__",
}
_BINARY = {
    "__add__",
    "__sub__",
    "__mul__",
    "__truediv__",
    "__floordiv__",
    "__mod__",
    "__pow__",
    "__and__",
    "__or__",
    "__xor__",
    "__lshift__",
    "__rshift__",
    "__matmul__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__eq__",
    "__ne__",
}


def _operator(fn, reflected, dunder):
    def op(self, other):
        if not isinstance(other, _OPERAND):
            return NotImplemented
        if not isinstance(self, ShardedTensor):
            # only an unbound call (``ShardedTensor.__radd__(3, t)``) gets here: torch's
            # descriptor refuses a non-tensor self with a TypeError
            raise DTypeError(
                f"{dunder}: self must be a ShardedTensor, got {type(self).__name__} {self!r}"
            )
        return fn(other, self) if reflected else fn(self, other)

    op.__name__, op.__doc__ = fn.__name__, fn.__doc__
    return op


def bind(*names, prim=None):
    """Bind the decorated function as ``ShardedTensor`` methods/operators ``names``.

    A plain name is a method (``x.add(y)`` is ``add(x, y)``); a binary dunder is an operator
    that returns ``NotImplemented`` for foreign operands, reflected for ``__r*__``. ``prim``
    records the names on that primitive (so the registry lists what each one binds).

    Examples
    --------
    >>> from sharded.core.registry import bind
    >>> @bind("twice")
    ... def twice(x):
    ...     return x * 2
    >>> import sharded as st
    >>> st.tensor([1, 2]).twice().tolist()
    [2, 4]
    """

    def deco(fn):
        for n in names:
            if n in _BINARY or n in _REFLECTED:
                setattr(ShardedTensor, n, _operator(fn, n in _REFLECTED, n))
            else:
                setattr(ShardedTensor, n, fn)
        if prim is not None:
            PRIMITIVES[prim].names.extend(names)
        return fn

    return deco
