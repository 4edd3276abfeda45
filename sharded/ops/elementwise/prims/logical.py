"""Comparison, logical and bitwise primitives: eq, ne, lt, le, gt, ge, logical_and/or/xor/not
and bitwise_and/or/xor/not, with their operators (``<``, ``==``, ``&``, ``|``, ``^``, ``~``).

None of them is differentiable (their results are bools or integers): each is marked
``nondiff`` right under its planner. Each primitive is one block: its kernel (named like the
primitive, over a NumPy ufunc), its planner (the shared elementwise rule of
:mod:`.elementwise`, the one op module this family imports) and the public function with the
names it binds. Comparisons promote the operands and return bool; logical ops read truth
values; bitwise ops take bool and integer dtypes only.
"""

from __future__ import annotations

from ....core.registry import bind, nondiff
from .. import plan as E

__all__ = [
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "eq",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "le",
    "less",
    "less_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lt",
    "ne",
    "not_equal",
]


def _primitive(name, fn, rule):
    """Register nondiff primitive ``name``: kernel ``xp.<fn>``, the shared planner with
    ``rule``."""

    def plan(ex, *operands, target=None):
        return E.plan_rule(ex, name, rule, operands, target)

    E.register(name, fn, rule, plan)
    nondiff(name)  # bool or integer results: no gradient flows through


def _binary(name, fn, rule, doc, example, result, operators=(), aliases=(), tensors=()):
    """Primitive ``name`` and its public function (method ``x.name(y)``, ``aliases`` and
    ``operators``; ``x.name_(y)`` in place). ``tensors`` names the parameters where torch
    refuses Python numbers (``logical_and(x, 2)`` is a TypeError)."""
    _primitive(name, fn, rule)

    def f(input, other):
        E.require_tensors(name, (input, other), tensors)
        return E.call(name, input, other)

    def f_(self, other):
        E.require_tensors(name + "_", (self, other), tensors)
        return E.call_(name, self, other)

    f_.__name__ = f_.__qualname__ = name + "_"
    f_.__doc__ = f"In-place ``{name}`` (the result cast to this tensor's dtype); returns it."
    bind(name + "_", *(a + "_" for a in aliases), prim=name)(f_)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{doc}

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}({example}).tolist()
    {result}
    """
    return bind(name, *aliases, *operators, prim=name)(f)


def _unary(name, fn, rule, doc, example, result, operators=()):
    """Primitive ``name`` and its public function (method ``x.name()`` and ``operators``)."""
    _primitive(name, fn, rule)

    def f(input):
        return E.call(name, input)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{doc}

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}({example}).tolist()
    {result}
    """
    bind(name + "_", prim=name)(E.inplace_unary(name))
    return bind(name, *operators, prim=name)(f)


_XY = "st.tensor([1, 2, 3]), 2"  # the comparison examples
_PQ = "st.tensor([True, False]), st.tensor([True, True])"  # the logical/bitwise examples

# ----------------------------------------------------------------------- comparisons
eq = _binary(
    "eq", "equal", E.compare, "``input == other``.", _XY, "[False, True, False]", ("__eq__",)
)
ne = _binary(
    "ne",
    "not_equal",
    E.compare,
    "``input != other``.",
    _XY,
    "[True, False, True]",
    ("__ne__",),
    ("not_equal",),
)
lt = _binary(
    "lt",
    "less",
    E.compare,
    "``input < other``.",
    _XY,
    "[True, False, False]",
    ("__lt__",),
    ("less",),
)
le = _binary(
    "le",
    "less_equal",
    E.compare,
    "``input <= other``.",
    _XY,
    "[True, True, False]",
    ("__le__",),
    ("less_equal",),
)
gt = _binary(
    "gt",
    "greater",
    E.compare,
    "``input > other``.",
    _XY,
    "[False, False, True]",
    ("__gt__",),
    ("greater",),
)
ge = _binary(
    "ge",
    "greater_equal",
    E.compare,
    "``input >= other``.",
    _XY,
    "[False, True, True]",
    ("__ge__",),
    ("greater_equal",),
)

# torch's alias names of the comparisons
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge

# ---------------------------------------------------------------------------- logical
logical_and = _binary(
    "logical_and",
    "logical_and",
    E.logical,
    "Elementwise logical AND.",
    _PQ,
    "[True, False]",
    tensors=("input", "other"),
)
logical_or = _binary(
    "logical_or",
    "logical_or",
    E.logical,
    "Elementwise logical OR.",
    _PQ,
    "[True, True]",
    tensors=("input", "other"),
)
logical_xor = _binary(
    "logical_xor",
    "logical_xor",
    E.logical,
    "Elementwise logical XOR.",
    _PQ,
    "[False, True]",
    tensors=("input", "other"),
)
logical_not = _unary(
    "logical_not",
    "logical_not",
    E.logical,
    "Elementwise logical NOT.",
    "st.tensor([1.0, 0.0])",
    "[False, True]",
)

# ---------------------------------------------------------------------------- bitwise
bitwise_and = _binary(
    "bitwise_and",
    "bitwise_and",
    E.bitwise,
    "Bitwise AND (logical on bool).",
    _PQ,
    "[True, False]",
    ("__and__", "__rand__"),
)
bitwise_or = _binary(
    "bitwise_or",
    "bitwise_or",
    E.bitwise,
    "Bitwise OR (logical on bool).",
    _PQ,
    "[True, True]",
    ("__or__", "__ror__"),
)
bitwise_xor = _binary(
    "bitwise_xor",
    "bitwise_xor",
    E.bitwise,
    "Bitwise XOR (logical on bool).",
    _PQ,
    "[False, True]",
    ("__xor__", "__rxor__"),
)
bitwise_not = _unary(
    "bitwise_not",
    "invert",
    E.bitwise,
    "Bitwise NOT (logical NOT on bool).",
    "st.tensor([0, 5])",
    "[-1, -6]",
    ("__invert__",),
)
