"""Moving OpInfo samples to sharded and comparing sharded's answers with torch's.

A sample is first frozen (every torch tensor becomes a :class:`Frozen` NumPy copy), before
torch runs it (an in-place op would change it); the frozen sample is then made into sharded
tensors, whole or split into two shards along dim 0.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import torch

import sharded as st
from sharded.tensor import ShardedTensor


class Unconvertible(Exception):
    """A sample holds something sharded has no counterpart for (a complex32 or meta tensor)."""


class Mismatch(AssertionError):
    """sharded's answer differs from torch's; the message says where."""


class Frozen:
    """A NumPy copy of a torch tensor, with its autograd flag and identity (for gradients)."""

    def __init__(self, t: torch.Tensor):
        if t.device.type != "cpu" or t.layout != torch.strided:
            raise Unconvertible(f"a {t.device.type} {t.layout} tensor")
        if t.dtype == torch.complex32 or t.is_quantized:
            raise Unconvertible(f"a {t.dtype} tensor")
        try:
            if t.dtype == torch.bfloat16:  # exact through float32 (ml_dtypes' bfloat16)
                self.array = t.detach().float().numpy().astype(ml_dtypes.bfloat16)
            else:
                self.array = t.detach().resolve_conj().resolve_neg().numpy().copy()
        except (TypeError, ValueError) as e:  # NumPy holds at most 64 dims
            raise Unconvertible(f"a tensor of shape {tuple(t.shape)}: {e}") from None
        self.requires_grad = t.requires_grad
        self.source = t


def tree_map(obj, fn):
    """``fn`` applied to every leaf of nested lists, tuples and dicts (a namedtuple or other
    tuple subclass comes back a plain tuple: its constructor may not take the items)."""
    if isinstance(obj, dict):
        return {k: tree_map(v, fn) for k, v in obj.items()}
    if isinstance(obj, list):
        return [tree_map(v, fn) for v in obj]
    if isinstance(obj, tuple) and not isinstance(obj, torch.Size):
        return tuple(tree_map(v, fn) for v in obj)
    return fn(obj)


def leaves(obj) -> list:
    """Every leaf of a nested structure, in order."""
    out: list = []
    tree_map(obj, out.append)
    return out


def _freeze_leaf(x):
    if isinstance(x, torch.Tensor):
        return Frozen(x)
    if isinstance(x, torch.dtype):
        name = str(x).removeprefix("torch.")
        if not hasattr(st, name):
            raise Unconvertible(f"dtype {x}")
        return getattr(st, name)
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, (torch.memory_format, torch.Generator)):
        raise Unconvertible(f"argument {x!r}")
    if callable(x) and (getattr(x, "__module__", None) or "").startswith("torch"):
        # a torch function passed as an argument (a distance_function): sharded's namesake
        name = getattr(x, "__name__", "")
        for home in (st.nn.functional, st):
            if callable(getattr(home, name, None)):
                return getattr(home, name)
        raise Unconvertible(f"the torch function {name or x!r}")
    return x


def freeze(sample) -> tuple:
    """``(input, args, kwargs)`` of a SampleInput with tensors frozen (NumPy copies)."""
    return tree_map((sample.input, tuple(sample.args), dict(sample.kwargs)), _freeze_leaf)


def splittable(frozen) -> bool:
    """Whether a split placement differs from the whole one (some tensor has 2+ rows)."""
    return any(
        isinstance(f, Frozen) and f.array.ndim and f.array.shape[0] >= 2 for f in leaves(frozen)
    )


def to_sharded(frozen, split: bool, grad: bool = False):
    """The frozen sample as sharded tensors; ``split`` cuts each into 2 shards on dim 0 (where
    it has 2+ rows); ``grad`` keeps torch's ``requires_grad`` flags. Returns ``(sample, pairs)``
    with ``pairs`` the (torch leaf, sharded leaf) of every tensor that requires grad."""
    pairs = []
    made: dict = {}  # one sharded tensor per torch tensor, so aliasing is kept

    def make(x):
        if not isinstance(x, Frozen):
            return x
        if id(x.source) in made:
            return made[id(x.source)]
        cut = split and x.array.ndim and x.array.shape[0] >= 2
        rg = grad and x.requires_grad and x.array.dtype.kind in "fc"
        t = st.tensor(x.array, shards=2 if cut else None, requires_grad=bool(rg))
        if rg:
            pairs.append((x.source, t))
        made[id(x.source)] = t
        return t

    return tree_map(frozen, make), pairs


def to_numpy_tree(obj):
    """A result of sharded as NumPy arrays and Python values (reads the workers)."""

    def leaf(x):
        if isinstance(x, ShardedTensor):
            return ("tensor", str(x.dtype).removeprefix("sharded."), x.numpy())
        return x

    return tree_map(obj, leaf)


def _close(actual: np.ndarray, expected: torch.Tensor, where: str, values: bool):
    actual = np.array(actual, order="C")  # (ascontiguousarray makes 0-d 1-d)
    if actual.dtype.name == "bfloat16":  # ml_dtypes' bfloat16, which torch cannot take
        a = torch.from_numpy(actual.astype(np.float32)).to(torch.bfloat16)
    else:
        a = torch.from_numpy(actual)
    if a.shape != expected.shape:
        raise Mismatch(f"{where}shape {tuple(a.shape)} != torch's {tuple(expected.shape)}")
    if not values:
        return
    expected = expected.detach().resolve_conj().resolve_neg()
    try:
        torch.testing.assert_close(a, expected, equal_nan=True, check_dtype=False)
    except AssertionError as e:
        lines = [s.strip() for s in str(e).splitlines() if s.strip()]
        raise Mismatch(where + "; ".join(lines[:3])) from None


def compare(actual, expected, values: bool = True, where: str = ""):
    """Raise :class:`Mismatch` unless sharded's ``actual`` (from :func:`to_numpy_tree`) is
    torch's ``expected``: same structure, dtypes, shapes and (with ``values``) values within
    torch's default tolerance of the dtype, NaN where torch has NaN."""
    if isinstance(expected, torch.Tensor):
        if not (isinstance(actual, tuple) and len(actual) == 3 and actual[0] == "tensor"):
            raise Mismatch(f"{where}{type(actual).__name__} where torch returns a tensor")
        _, dtype, arr = actual
        want = str(expected.dtype).removeprefix("torch.")
        if dtype != want:
            raise Mismatch(f"{where}dtype {dtype} != torch's {want}")
        return _close(arr, expected, where, values)
    if isinstance(expected, (list, tuple)) and not isinstance(expected, torch.Size):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            raise Mismatch(f"{where}{_brief(actual)} where torch returns {len(expected)} items")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(a, e, values, f"{where}[{i}] ")
        return
    if isinstance(actual, tuple) and len(actual) == 3 and actual[0] == "tensor":
        if actual[2].ndim == 0 and isinstance(expected, (bool, int, float, complex)):
            actual = actual[2].item()  # a 0-d tensor where torch gives a number: same value
        else:
            raise Mismatch(f"{where}a tensor where torch returns {type(expected).__name__}")
    if isinstance(expected, torch.Size):
        expected = tuple(expected)
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        if (math.isnan(expected) and math.isnan(actual)) or math.isclose(
            actual, expected, rel_tol=1e-6, abs_tol=1e-6
        ):
            return
    if values and actual != expected:
        raise Mismatch(f"{where}{actual!r} != torch's {expected!r}")


def _brief(x) -> str:
    return f"{len(x)} items" if isinstance(x, (list, tuple)) else type(x).__name__


# float32 results that miss torch's default tolerance may still be as accurate as torch's
# own: a matmul, convolution or attention sums in another order than torch's kernel, and
# both carry float32 rounding of about the same size. Such a run agrees "to rounding" when
# sharded's largest error against torch's float64 answer is at most ROUNDING times torch's
# own float32 error (or within the default tolerance of it); the figure is reported apart.
ROUNDING = 2.0
WIDER = {torch.float32: torch.float64, torch.complex64: torch.complex128}


def widened(x):
    """A sample leaf in double precision (float32/complex64 tensors and dtypes widened)."""
    if isinstance(x, torch.dtype):
        return WIDER.get(x, x)
    return x.to(WIDER[x.dtype]) if x.dtype in WIDER else x


def _tensor_triples(actual, expected, wide):
    """``(sharded array, torch's tensor, torch's float64 tensor)`` of every tensor leaf."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(wide, torch.Tensor):
            raise Mismatch("torch's float64 answer has another structure")
        return [(np.asarray(actual[2]), expected, wide)]
    if isinstance(expected, (list, tuple)) and not isinstance(expected, torch.Size):
        if not isinstance(wide, (list, tuple)) or len(wide) != len(expected):
            raise Mismatch("torch's float64 answer has another structure")
        return [t for a, e, w in zip(actual, expected, wide) for t in _tensor_triples(a, e, w)]
    return []


def rounding_only(actual, expected, wide) -> str:
    """Why sharded's float32 ``actual`` (which missed the default tolerance) agrees with
    torch's ``expected`` to rounding, given torch's answer in float64 ``wide``; raises
    :class:`Mismatch` when it does not (a larger error than torch's own)."""
    worst = (0.0, 0.0)
    for arr, exp, w in _tensor_triples(actual, expected, wide):
        truth = (
            w.detach()
            .resolve_conj()
            .resolve_neg()
            .to(torch.complex128 if w.is_complex() else torch.float64)
            .numpy()
        )
        if arr.shape != truth.shape:
            raise Mismatch("shape differs")
        fin = np.isfinite(truth)
        mine = np.abs(arr.astype(truth.dtype) - truth)[fin]
        theirs = np.abs(exp.detach().resolve_conj().numpy().astype(truth.dtype) - truth)[fin]
        e_s = float(mine.max(initial=0.0))
        e_t = float(theirs.max(initial=0.0))
        scale = float(np.abs(truth[fin]).max(initial=0.0))
        floor = 1e-5 + 1.3e-6 * scale  # torch's float32 tolerance at the answer's scale
        if e_t > 1e-3 * max(scale, 1.0):  # not an approximation of each other: a sign, a phase
            raise Mismatch(f"torch's float32 and float64 answers differ by {e_t:.2g}")
        if e_s > max(ROUNDING * e_t, floor):
            raise Mismatch(f"error {e_s:.2g} against torch's float64 answer (torch's: {e_t:.2g})")
        worst = max(worst, (e_s, e_t))
    return f"float32 rounding: error {worst[0]:.2g} against float64 (torch's {worst[1]:.2g})"
