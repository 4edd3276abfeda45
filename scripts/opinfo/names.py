"""Which OpInfo entries count, and the sharded callable each one names.

An OpInfo's ``name`` is torch's public spelling: ``"abs"`` is ``torch.abs`` (or the tensor
method when torch has no function of that name, ``"contiguous"``), ``"linalg.svd"`` is
``torch.linalg.svd``. sharded mirrors that namespace (``st.abs``, ``st.linalg.svd``,
``st.nn.functional.conv1d``, ``ShardedTensor.contiguous``), so the same path is looked up there.
"""

from __future__ import annotations

import types

import torch

import sharded as st
from sharded.tensor import ShardedTensor

# Ops whose values are random or uninitialized: only dtype and shape are compared.
RANDOM_MARKS = (
    "rand",
    "empty",
    "dropout",
    "bernoulli",
    "normal",
    "uniform",
    "cauchy",
    "exponential",
    "geometric",
    "multinomial",
    "rrelu",
    "fractional_max_pool",
    "resize_",
    "lowrank",
)
# "exponential" also names a window: signal.windows.exponential is deterministic.
NOT_RANDOM = ("signal.windows.exponential", "special.log_ndtr")


def is_random(name: str, sample=None) -> bool:
    """True where outputs cannot be compared value by value: a random or uninitialized op, or
    an attention sample with dropout (``dropout_p > 0``; multi-head attention in training)."""
    if name not in NOT_RANDOM and any(m in name for m in RANDOM_MARKS):
        return True
    if sample is None:
        return False
    if name == "nn.functional.scaled_dot_product_attention":
        return sample.kwargs.get("dropout_p", 0.0) > 0
    if name == "nn.functional.multi_head_attention_forward":
        return bool(sample.kwargs.get("training")) and sample.args[9] > 0
    return False


# Answers torch leaves unspecified or that differ on purpose (scripts/docs/docs/guide/torch.md):
# counted apart as "known", never as agreement. op -> (dtypes or None, placement or None,
# start(s) of the failure message, reason).
KNOWN = {
    "view": (None, "split", "ViewError", "view never moves data between workers (torch.md)"),
    "view_as": (None, "split", "ViewError", "view never moves data between workers (torch.md)"),
    "qr": (None, None, "wrong: [", "R's diagonal made non-negative (torch.md)"),
    "linalg.qr": (None, None, "wrong: [", "R's diagonal made non-negative (torch.md)"),
    "linalg.eig": (None, None, "wrong: [1]", "eigenvectors are unique only up to a phase"),
    "linalg.eigh": (None, None, "wrong: [1]", "eigenvectors are unique only up to a sign"),
    "linalg.svd": (
        None,
        None,
        ("wrong: [0]", "wrong: [2]"),
        "singular vectors are unique up to a sign",
    ),
    "svd": (None, None, ("wrong: [0]", "wrong: [2]"), "singular vectors are unique up to a sign"),
}
# Index outputs among equal values: torch's order is unspecified, sharded's sort is stable.
TIES = ("topk", "kthvalue", "sort", "msort", "mode", "median", "nanmedian", "argsort")


def known(name: str, dtype: str, placement: str, msg: str, sample) -> str | None:
    """The reason a failure is a known, documented difference, or None."""
    if name in KNOWN:
        dtypes, where, start, reason = KNOWN[name]
        if (dtypes is None or dtype in dtypes) and where in (None, placement):
            return reason if msg.startswith(start) else None
    if name in TIES and dtype in ("int64", "bool") and not sample.kwargs.get("stable"):
        start = "wrong: " if name == "argsort" else "wrong: [1]"
        if msg.startswith(start):
            return "order of equal values' indices (torch's is unspecified; sharded's stable)"
    return None


def _walk(root, path: str):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def is_public(info) -> bool:
    """The OpInfo names a public torch op (the denominator of the names figure).

    Left out: ``_``-prefixed names (dunders included), ``*_copy`` variants, the CUDA-only
    ``jiterator_*`` tests, ``sparse.*``, and aten-internal entries (a ``torch.*`` spelled name,
    an op that is an ``OpOverload``, or a name that is neither a torch function nor a tensor
    attribute, such as ``max_pool2d_with_indices_backward``).
    """
    name = info.name
    if name.startswith(("_", "jiterator", "sparse.", "torch.")) or name.endswith("_copy"):
        return False
    if isinstance(info.op, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return False
    return torch_function(name) is not None or hasattr(torch.Tensor, name)


def torch_function(name: str):
    """torch's function of that name (``torch.X``, ``torch.nn.functional.X``...), or None.

    A dtype (``torch.bool``, ``torch.float``) is not a function: those names are methods.
    """
    obj = _walk(torch, name)
    if obj is None or isinstance(obj, torch.dtype) or not callable(obj):
        return None
    return obj


def sharded_target(name: str):
    """What sharded has under torch's name: ``("function", f)``, ``("method", name)`` or None.

    A name torch has as a function must be a function of sharded's (``st.X``); a name torch
    has only as a tensor method or property must be an attribute of ``ShardedTensor``.
    """
    if torch_function(name) is not None:
        obj = _walk(st, name)
        if obj is not None and callable(obj) and not isinstance(obj, st.dtype):
            return ("function", obj)
        return None
    if hasattr(ShardedTensor, name):
        return ("method", name)
    return None


def transplant(fn):
    """A copy of a Python function from torch's test suite that calls sharded, or None.

    Many OpInfos wrap their op in a lambda (``lambda x: x.mT``, ``lambda t, eq:
    torch.einsum(eq, t)``); running that lambda with ``torch`` and ``F`` bound to sharded's
    modules calls sharded exactly as the OpInfo calls torch.
    """
    if not isinstance(fn, types.FunctionType) or not fn.__module__.startswith("torch.testing"):
        return None
    scope = dict(fn.__globals__)
    scope.update(torch=st, F=st.nn.functional)
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def caller(info):
    """A function ``call(input, *args, **kwargs)`` running the OpInfo's op on sharded, or None
    when sharded has no op under torch's name."""
    target = sharded_target(info.name)
    if target is None:
        return None
    lam = transplant(info.op)
    if lam is not None:
        return lam
    kind, obj = target
    if kind == "function":
        return obj
    attr = getattr(torch.Tensor, info.name)
    if not callable(attr):  # a property: x.T, x.mH
        return lambda x, *a, **k: getattr(x, info.name)
    if info.name.startswith("__"):
        # torch's op is the unbound ``Tensor.__radd__``: called with a number as self (an
        # error sample) it raises, where ``getattr(2, "__radd__")`` is int's own method
        unbound = getattr(ShardedTensor, info.name)
        return lambda x, *a, **k: unbound(x, *a, **k)
    return lambda x, *a, **k: getattr(x, info.name)(*a, **k)
