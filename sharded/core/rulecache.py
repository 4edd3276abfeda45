"""What a dtype rule decided, remembered by what the rule looks at.

A rule of :data:`PURE` maps operands to dtypes by their dtypes, whether each tensor is 0-d,
each Python scalar's type and the default dtype only (torch's promotion never reads a
value). Operands with the same :func:`signature` get the same answer, so an op repeated in a
loop pays one dict lookup instead of the promotion; the elementwise planner keys its plan
cache by the signature too.
"""

from __future__ import annotations

from .. import dtypes as D
from ..tensor import ShardedTensor
from .dataflow import Operand

PY_SCALARS = frozenset((bool, int, float, complex))
PURE: set = set()  # the dtype rules that look at operand dtypes and scalar types only
_RULES: dict = {}  # signature(...) -> a rule's answer, for cached_rule


def signature(rule, operands, target=None):
    """What a pure rule looks at, as a dict key: the rule, the default dtype, the in-place
    target's dtype, each tensor's dtype and whether it is 0-d, each scalar's type. None
    when the rule is not pure or an operand is something else (a NumPy array): decided each
    time. Dtypes enter by name (a string hashes in C, a DType in Python).

    Examples
    --------
    >>> import sharded as st
    >>> from sharded.ops.elementwise.plan import promote
    >>> x = st.ones(2, dtype=st.int32)
    >>> signature(promote, (x, 2)) == signature(promote, (x, 7))
    True
    >>> signature(promote, (x, 2)) == signature(promote, (x, 2.0))
    False
    """
    if rule not in PURE:
        return None
    sig = [rule, D._default_float.name, None if target is None else target._dtype.name]
    for o in operands:
        t = type(o)
        if t in PY_SCALARS or o is None:
            sig.append(t)
        elif t is ShardedTensor or t is Operand or hasattr(o, "_layout"):
            sig.append(o._dtype.name)  # (a string, then a bool: no nested tuple)
            sig.append(not o._layout.shape)
        else:
            return None
    return tuple(sig)


def cached_rule(rule, operands):
    """``rule(operands)``, remembered for the rules of :data:`PURE` by :func:`signature`.

    Examples
    --------
    >>> import sharded as st
    >>> from sharded.ops.elementwise.plan import promote
    >>> cached_rule(promote, (st.ones(2, dtype=st.int32), 2.5))
    (sharded.float32, sharded.float32)
    """
    sig = signature(rule, operands)
    if sig is None:
        return rule(operands)
    hit = _RULES.get(sig)
    if hit is None:
        hit = rule(operands)  # a rule that raises caches nothing
        if len(_RULES) > 4096:
            _RULES.clear()
        _RULES[sig] = hit
    return hit
