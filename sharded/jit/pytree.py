"""Nested arguments and results of a jitted function (:mod:`sharded.jit.api`), and the structural
equality that compares two traces (:mod:`sharded.jit.recorder`)."""

from __future__ import annotations

import numpy as np

from ..tensor import ShardedTensor

__all__ = ["flatten", "unflatten", "same"]


def flatten(obj):
    """Leaves (tensors and constants) of nested tuples/lists/dicts, and the structure.
    (Module-level recursion: a recursive closure would be a reference cycle that keeps
    the tensors alive until the garbage collector runs.)

    Examples
    --------
    >>> leaves, tree = flatten(((1, [2]), {"a": 3}))
    >>> leaves, unflatten(tree, [4, 5, 6])
    ([1, 2, 3], ((4, [5]), {'a': 6}))
    """
    leaves = []
    return leaves, _walk(obj, leaves)


def _walk(o, leaves):
    if isinstance(o, ShardedTensor):
        leaves.append(o)
        return None
    if type(o) in (tuple, list):
        return (type(o), tuple(_walk(v, leaves) for v in o))
    if type(o) is dict:
        return (dict, tuple(o), tuple(_walk(v, leaves) for v in o.values()))
    leaves.append(o)
    return None


def unflatten(tree, leaves):
    """The nested value of structure ``tree`` (from :func:`flatten`) holding ``leaves``.

    Examples
    --------
    >>> unflatten(flatten([1, (2,)])[1], "ab")
    ['a', ('b',)]
    """
    return _build(tree, iter(leaves))


def _build(t, it):
    if t is None:
        return next(it)
    if t[0] is dict:
        return {k: _build(v, it) for k, v in zip(t[1], t[2])}
    return t[0]([_build(v, it) for v in t[1]])


def same(a, b) -> bool:
    """Structural equality that handles NumPy arrays, NaN constants and objects without
    ``==``.

    Examples
    --------
    >>> same((np.arange(2), float("nan")), (np.arange(2), float("nan"))), same(1, 1.0)
    (True, False)
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and a != a:
        return b != b
    try:
        return bool(a == b)
    except Exception:  # objects whose == is not a bool
        return False
