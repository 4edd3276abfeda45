"""Comparison, logical and bitwise primitives: eq, ne, lt, le, gt, ge, logical_and/or/xor/not
and bitwise_and/or/xor/not, with their operators (``<``, ``==``, ``&``, ``|``, ``^``, ``~``).

None of them is differentiable (their results are bools or integers): each group is marked
``nondiff`` right under its definitions. Each primitive is one call of the family's factory
:func:`..plan.define`: its kernel (named like the primitive, over a NumPy ufunc), the shared
planner with its dtype rule, and the public function with the names it binds. Comparisons
promote the operands and return bool; logical ops read truth values; bitwise ops take bool
and integer dtypes only.
"""

from __future__ import annotations

from ....core.registry import nondiff
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


_XY = "st.tensor([1, 2, 3]), 2"  # the comparison examples
_PQ = "st.tensor([True, False]), st.tensor([True, True])"  # the logical/bitwise examples
_BOTH = ("input", "other")  # torch's logical ops refuse Python numbers (a TypeError)

# ----------------------------------------------------------------------- comparisons
eq = E.define(
    "eq",
    "equal",
    E.compare,
    "``input == other``.",
    _XY,
    "[False, True, False]",
    nargs=2,
    operators=("__eq__",),
)
ne = E.define(
    "ne",
    "not_equal",
    E.compare,
    "``input != other``.",
    _XY,
    "[True, False, True]",
    nargs=2,
    aliases=("not_equal",),
    operators=("__ne__",),
)
lt = E.define(
    "lt",
    "less",
    E.compare,
    "``input < other``.",
    _XY,
    "[True, False, False]",
    nargs=2,
    aliases=("less",),
    operators=("__lt__",),
)
le = E.define(
    "le",
    "less_equal",
    E.compare,
    "``input <= other``.",
    _XY,
    "[True, True, False]",
    nargs=2,
    aliases=("less_equal",),
    operators=("__le__",),
)
gt = E.define(
    "gt",
    "greater",
    E.compare,
    "``input > other``.",
    _XY,
    "[False, False, True]",
    nargs=2,
    aliases=("greater",),
    operators=("__gt__",),
)
ge = E.define(
    "ge",
    "greater_equal",
    E.compare,
    "``input >= other``.",
    _XY,
    "[False, True, True]",
    nargs=2,
    aliases=("greater_equal",),
    operators=("__ge__",),
)
nondiff("eq", "ne", "lt", "le", "gt", "ge")  # bool results: no gradient

# torch's alias names of the comparisons
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge

# ---------------------------------------------------------------------------- logical
logical_and = E.define(
    "logical_and",
    "logical_and",
    E.logical,
    "Elementwise logical AND.",
    _PQ,
    "[True, False]",
    nargs=2,
    tensors=_BOTH,
)
logical_or = E.define(
    "logical_or",
    "logical_or",
    E.logical,
    "Elementwise logical OR.",
    _PQ,
    "[True, True]",
    nargs=2,
    tensors=_BOTH,
)
logical_xor = E.define(
    "logical_xor",
    "logical_xor",
    E.logical,
    "Elementwise logical XOR.",
    _PQ,
    "[False, True]",
    nargs=2,
    tensors=_BOTH,
)
logical_not = E.define(
    "logical_not",
    "logical_not",
    E.logical,
    "Elementwise logical NOT.",
    "st.tensor([1.0, 0.0])",
    "[False, True]",
)
nondiff("logical_and", "logical_or", "logical_xor", "logical_not")  # bool results

# ---------------------------------------------------------------------------- bitwise
bitwise_and = E.define(
    "bitwise_and",
    "bitwise_and",
    E.bitwise,
    "Bitwise AND (logical on bool).",
    _PQ,
    "[True, False]",
    nargs=2,
    operators=("__and__", "__rand__"),
)
bitwise_or = E.define(
    "bitwise_or",
    "bitwise_or",
    E.bitwise,
    "Bitwise OR (logical on bool).",
    _PQ,
    "[True, True]",
    nargs=2,
    operators=("__or__", "__ror__"),
)
bitwise_xor = E.define(
    "bitwise_xor",
    "bitwise_xor",
    E.bitwise,
    "Bitwise XOR (logical on bool).",
    _PQ,
    "[False, True]",
    nargs=2,
    operators=("__xor__", "__rxor__"),
)
bitwise_not = E.define(
    "bitwise_not",
    "invert",
    E.bitwise,
    "Bitwise NOT (logical NOT on bool).",
    "st.tensor([0, 5])",
    "[-1, -6]",
    operators=("__invert__",),
)
nondiff("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")  # integer results
