"""The public set functions ``unique`` and ``unique_consecutive`` (argument checks and the
choice of primitive: flattened values, slices on one worker, slices of a split tensor), and
``isin`` (a ``sort`` and a ``searchsorted`` of the test elements)."""

from __future__ import annotations

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor, via_float32
from ....core.registry import bind
from ....errors import ArgumentError, ArgumentTypeError, DimError, UnsupportedDType
from ....layout import normalize_dim
from ...creation.prims import full_like
from ...elementwise import plan as E
from ...shape.derived.tile import take
from ..prims import unique_flat, unique_rows, unique_runs  # noqa: F401  (the primitives bound here)
from ..prims.search import searchsorted
from ..prims.sort import sort

__all__ = ["unique", "unique_consecutive", "isin"]


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


def _keep(res, return_inverse, return_counts):
    """The results asked for: values alone, or a tuple with inverse and/or counts."""
    res = tuple(r for r, k in zip(res, (True, return_inverse, return_counts)) if k)
    return res if len(res) > 1 else res[0]


def _flat(x):
    """1-d ``x`` (the values of ``dim=None``), and the shape the inverse takes."""
    return (x if x.ndim == 1 else x.reshape(-1)), tuple(x.shape)


def _fill(res, inv, cnt):
    """``(values, inverse or None, counts or None)`` from the primitive's results."""
    got = iter(res)
    return next(got), inv and next(got), cnt and next(got)


def _check_dim(name, x, dim):
    """``dim`` normalized; refuses zero-sized dims other than ``dim`` (as torch, whose
    result would have no slices to compare)."""
    if x.ndim == 0:
        raise DimError(f"{name}: dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(dim, x.ndim)
    shape = tuple(x.shape)
    if any(n == 0 for i, n in enumerate(shape) if i != d):
        why = (
            "more than one dim is 0-sized"
            if shape[d] == 0
            else "there are 0-sized dims other than dim"
        )
        raise ArgumentError(
            f"{name}(dim={dim}) of shape {shape}: {why}, so {name} cannot be applied (as torch)"
        )
    return d


def _inverse_shape(res, shape, return_inverse):
    if return_inverse and tuple(res[1].shape) != shape:
        res = (res[0], res[1].reshape(shape), *res[2:])
    return res


@bind("unique", prim="unique")
@via_float32
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Unique values of the flattened ``input``, sorted (as torch on CPU, also for
    ``sorted=False``), with the inverse ids (shaped like ``input``) and counts if asked.

    NaNs are each their own value, as in torch. The result is sharded; the driver reads a
    few samples, cut positions and result sizes (short waits). With ``dim``, the unique
    slices along ``dim`` in lexicographic order, on any layout (see :mod:`..prims.unique_rows`).

    Examples
    --------
    >>> import sharded as st
    >>> v, inv, n = st.unique(st.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    >>> v.tolist(), inv.tolist(), n.tolist()
    ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    >>> st.unique(st.tensor([[1, 2], [0, 5], [1, 2]], shards=2), dim=0).tolist()
    [[0, 5], [1, 2]]
    """
    x = _tensor(input)
    inv, cnt = bool(return_inverse), bool(return_counts)
    if dim is None:
        f, shape = _flat(x)
        res = _fill(apply("unique", f, inv, cnt), inv, cnt)
        return _keep(_inverse_shape(res, shape, inv), inv, cnt)
    d = _check_dim("unique", x, dim)
    if x._layout.is_replicated or x._layout.num_shards == 1:
        return _keep(apply("unique_dim", x, d), inv, cnt)
    res = apply("unique_rows", x, d, inv, cnt)  # sample sort of the slices
    return _keep(_fill(res, inv, cnt), inv, cnt)


@bind("unique_consecutive", prim="unique_consecutive")
@via_float32
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements of the flattened ``input`` (or, with
    ``dim``, of equal consecutive slices along ``dim``); inverse ids (shaped like ``input``,
    or one per slice) and run lengths if asked. Any layout: runs that cross a shard border
    are joined.

    Examples
    --------
    >>> import sharded as st
    >>> v, n = st.unique_consecutive(st.tensor([1, 1, 2, 2, 1]), return_counts=True)
    >>> v.tolist(), n.tolist()
    ([1, 2, 1], [2, 2, 1])
    >>> x = st.tensor([[1, 2], [1, 2], [0, 5], [1, 2]], shards=2)
    >>> v, i = st.unique_consecutive(x, dim=0, return_inverse=True)
    >>> v.tolist(), i.tolist()
    ([[1, 2], [0, 5], [1, 2]], [0, 0, 1, 2])
    """
    x = _tensor(input)
    inv, cnt = bool(return_inverse), bool(return_counts)
    if dim is None:
        f, shape = _flat(x)
        res = apply("unique_consecutive", f, 0, inv, cnt)
        return _keep(_inverse_shape(_fill(res, inv, cnt), shape, inv), inv, cnt)
    d = _check_dim("unique_consecutive", x, dim)
    res = apply("unique_consecutive", x, d, inv, cnt)
    return _keep(_fill(res, inv, cnt), inv, cnt)


# ------------------------------------------------------------------------------- isin
# isin: each element's insertion point in the sorted test elements holds an equal value
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a
    number); the values compare in their promoted dtype, NaN is in nothing.

    Examples
    --------
    >>> import sharded as st
    >>> st.isin(st.tensor([1, 2, 3]), st.tensor([2, 5])).tolist()
    [False, True, False]
    """
    if not is_tensor(elements) and not is_tensor(test_elements):
        raise ArgumentTypeError(
            f"isin() received an invalid combination of arguments: got "
            f"({type(elements).__name__}, {type(test_elements).__name__}); one must be a Tensor"
        )
    dt = E.operand_dtypes((elements, test_elements))
    if dt == D.bool_ or dt.is_complex:
        raise UnsupportedDType(f"Unsupported input type encountered for isin(): {dt.name}")
    e = elements.to(dt) if is_tensor(elements) else as_tensor(elements, dtype=dt)
    t = test_elements.to(dt) if is_tensor(test_elements) else as_tensor(test_elements, dtype=dt)
    if t.numel() == 0:  # nothing to be in
        return full_like(e, bool(invert), dtype=D.bool_)
    s = sort(t.reshape(-1)).values
    pos = searchsorted(s, e).clamp(max=s.shape[0] - 1)
    hit = take(s, pos) == e
    return ~hit if invert else hit
