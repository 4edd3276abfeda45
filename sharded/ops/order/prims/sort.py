"""Sorting: ``sort`` (values and indices), ``argsort`` and ``msort``.

Along a dim that no shard cuts, every shard sorts its own lines. Along the split dim of a 1-d
tensor the planner runs a **sample sort** that partitions first and sorts once
(:mod:`..plan.sample_sort`): a destination sorts its values alone (a plain sort, for ``msort``
and ``sort(...).values``), or its values with their global positions by one sort of packed
uint64 keys (:func:`..kernels.packed.packed_sort`, about a sort of the values plus two
gathers). An n-d tensor split along the sorted dim is moved to a layout split along another
dim (an all-to-all transpose), sorted locally, moved back. The gradient goes back through
the indices (``unpermute``, :mod:`.unpermute`).

``sort`` along the split dim of a 1-d tensor returns a :class:`SortResult` whose values and
indices are made when first read (see :func:`sort`): ``st.sort(x).values`` neither computes
nor moves indices.

Ties keep the original order (the index is the secondary key), so every sort here is stable;
NaN sorts as the largest value (first when descending), as in torch; ``-0.0`` and ``0.0`` are
equal (they keep their order).
"""

from __future__ import annotations

import collections
import operator
import threading

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand, align, free_temps, reshard
from ....core.dispatch import apply, as_tensor, is_tensor, session_of, via_float32, wrap
from ....core.registry import (
    NO_COMPLEX,
    bind,
    no_complex,
    nondiff,
    primitive,
    refuse_complex,
    vjp,
)
from ....errors import ArgumentTypeError, SessionClosed
from ....grad_mode import is_grad_enabled
from ....layout import Layout, normalize_dim
from ....runtime.commands import Key
from ..kernels.sort import (
    sort_finish,
    sort_local,
    sort_positions,
    sort_sample,
    sort_settle,
    sort_split,
    sort_values_local,
)
from ..plan import sample_sort as ss

__all__ = ["sort", "argsort", "msort"]


def _tensor(x):
    return x if is_tensor(x) else as_tensor(x)


def _sample_sorted(lay, dim):
    """Whether a sort along ``dim`` of a tensor laid out as ``lay`` is the sample sort."""
    return lay.ndim == 1 and not lay.is_replicated and lay.grid[0] > 1


# ---------------------------------------------------------------------------- planners
def _settle(ex, op, lay):
    """``op`` moved to ``lay`` (the rebalancing step), its own blocks freed. A block that
    already sits on its worker stays a view of it (no copy); only the boundary slices
    travel."""
    if op._layout == lay:
        return op
    args, temps = align(ex, op, lay)
    made = {(w, k) for w, k in temps}
    keys = []
    for s, ((w, _, shp), a) in enumerate(zip(lay.shards(), args)):
        if type(a) is Key and (w, a.key) in made:
            keys.append(a.key)  # assembled for us already: take it over
            continue
        k = ex.new_key()
        ex.submit(w, "reshape", (a,), (k,), {"shape": shp}, label=("settle", s))
        keys.append(k)
    free_temps(ex, [(w, k) for w, k in temps if k not in keys])
    free_temps(ex, [(w, k) for (w, _, _), k in zip(op._layout.shards(), op._keys)])
    return Operand(lay, op._dtype, keys)


def _whole_dim_layout(lay, dim, ex):
    """A layout of the same shape with ``dim`` whole, split along the largest other dim into
    one shard per kernel thread (``ex.num_slots``: each worker's shards sort at once)."""
    others = [d for d in range(lay.ndim) if d != dim]
    d2 = max(others, key=lambda d: lay.shape[d])
    k = max(1, min(ex.num_slots, lay.shape[d2]))
    return Layout(dim=d2, shards=k).bind(lay.shape, ex.num_workers)


def _local(ex, x, dim, descending):
    lay = x._layout
    vk, ik = [], []
    for j, (w, _, _) in enumerate(lay.shards()):
        v, i = ex.new_key(), ex.new_key()
        ex.submit(
            w,
            "sort_local",
            (Key(x._keys[j], None),),
            (v, i),
            {"dim": dim, "descending": descending},
            ("sort", j),
        )
        vk.append(v)
        ik.append(i)
    return Operand(lay, x._dtype, vk), Operand(lay, D.int64, ik)


def _sort_spec(x, dim, descending=False):
    return ((tuple(x.shape), x.dtype), (tuple(x.shape), D.int64))


@primitive(
    "sort",
    kernels=[sort_sample, sort_split, sort_positions, sort_finish, sort_settle, sort_local],
    out_spec=_sort_spec,
)
def _sort_plan(ex, x, dim, descending=False):
    """``(values, indices)`` of a stable sort along ``dim``, laid out like ``x``."""
    lay = x._layout
    if lay.is_replicated or lay.ndim == 0 or lay.grid[dim] == 1:
        return _local(ex, x, dim, descending)
    if lay.ndim == 1:
        return ss.sample_sort(ex, x, descending, "both")
    mid = _whole_dim_layout(lay, dim, ex)
    t = reshard(ex, x, mid)
    v, i = _local(ex, t, dim, descending)
    free_temps(ex, [(w, k) for (w, _, _), k in zip(mid.shards(), t._keys)])
    return _settle(ex, v, lay), _settle(ex, i, lay)


@vjp("sort", save_out=(1,))  # the indices: the gradient goes back to where each value was
def _sort_vjp(gs, node):
    x, dim = node.args[:2]
    idx = node.saved["out"][1]
    return (apply("unpermute", gs[0], idx, dim),) + (None,) * (len(node.args) - 1)


@primitive(
    "sort_values",
    kernels=[sort_values_local],
    out_spec=lambda x, dim, descending=False: (tuple(x.shape), x.dtype),
)
def _sort_values_plan(ex, x, dim, descending=False):
    """The values of ``sort`` alone (no indices: half the data to move and a plain sort of
    the values, not of value-index keys); laid out like ``x``."""
    lay = x._layout
    if _sample_sorted(lay, dim):
        return ss.sample_sort(ex, x, descending, "values")
    if lay.is_replicated or lay.ndim == 0 or lay.grid[dim] == 1:
        t, temps = x, []
    else:
        mid = _whole_dim_layout(lay, dim, ex)
        t = reshard(ex, x, mid)
        temps = [(w, k) for (w, _, _), k in zip(mid.shards(), t._keys)]
    keys = []
    for j, (w, _, _) in enumerate(t._layout.shards()):
        k = ex.new_key()
        params = {"dim": dim, "descending": descending}
        ex.submit(w, "sort_values_local", (Key(t._keys[j], None),), (k,), params, ("sort", j))
        keys.append(k)
    free_temps(ex, temps)
    return _settle(ex, Operand(t._layout, x._dtype, keys), lay)


nondiff("sort_values")  # msort takes the indexed sort when its input needs a gradient
no_complex("sort_values", label="msort")  # as sort: torch orders no complex numbers


# ------------------------------------------------------------------------ the result
_Sort = collections.namedtuple("sort", ["values", "indices"])


class SortResult(_Sort):
    """What ``sort`` returns: ``(values, indices)``, a namedtuple as torch's
    ``torch.return_types.sort`` (``r.values``, ``r[1]``, ``v, i = r``).

    Examples
    --------
    >>> import sharded as st
    >>> v, i = st.sort(st.tensor([2, 1]))
    >>> v.tolist(), i.tolist()
    ([1, 2], [1, 0])
    """

    __slots__ = ()


# torch's type name (``type(r).__name__``); pickling finds the class by its qualified name
SortResult.__name__ = "sort"


class _Pending:
    """Stands in the tuple's slots of a :class:`_LazySort` (read through its methods)."""

    def __repr__(self):
        return "<not yet computed: read it through the result>"


_PENDING = _Pending()


class _LazySort(SortResult):
    """A :class:`SortResult` of the sample sort whose values and indices are made on first
    read, from the groups :func:`..plan.sample_sort.split` left on the workers (a copy of the
    input: later changes to the input do not reach it). ``.values`` (or ``[0]``) makes the
    values alone; ``.indices`` the indices alone; unpacking, iterating or any other use of
    the tuple makes both at once. The groups are freed once both are made or the result is
    dropped."""

    # (a tuple subclass: its own attributes live in a __dict__; the slots hold _PENDING)

    def __new__(cls, sess, groups):
        self = super().__new__(cls, _PENDING, _PENDING)
        self._sess, self._groups, self._lock = sess, groups, threading.Lock()
        self._got: dict = {}
        return self

    def _make(self, names):
        with self._lock:
            todo = [n for n in names if n not in self._got]
            if todo:
                if self._sess.closed:
                    raise SessionClosed(
                        "this sort result belongs to a session that was shut down (st.shutdown() "
                        "freed its shards); sort again after st.init()"
                    )
                ex = self._sess.executor
                want = todo[0] if len(todo) == 1 else "both"
                got = ss.finish(ex, self._groups, want)
                got = got if isinstance(got, tuple) else (got,)
                self._got.update(zip(todo, wrap(got, self._sess)))
                if len(self._got) == 2:
                    ss.release(ex, self._groups)
            return tuple(self._got[n] for n in names)

    def __del__(self):
        g = getattr(self, "_groups", None)
        if g is not None and g.live and not self._sess.closed:
            ss.release(self._sess.executor, g)

    @property
    def values(self):
        return self._make(("values",))[0]

    @property
    def indices(self):
        return self._make(("indices",))[0]

    def _both(self) -> tuple:
        return self._make(_Sort._fields)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._both()[i]
        i = operator.index(i)
        if not -2 <= i < 2:
            raise IndexError("tuple index out of range")
        return self._make((_Sort._fields[i],))[0]

    def __iter__(self):
        return iter(self._both())

    def __reversed__(self):
        return reversed(self._both())

    def __contains__(self, o):
        return o in self._both()

    def __repr__(self):
        v, i = self._both()
        return f"sort(values={v!r}, indices={i!r})"

    def __eq__(self, o):
        return self._both() == o

    def __ne__(self, o):
        return self._both() != o

    def __hash__(self):
        return hash(self._both())

    def __add__(self, o):
        return self._both() + o

    def __radd__(self, o):
        return o + self._both()

    def __mul__(self, n):
        return self._both() * n

    __rmul__ = __mul__

    def __lt__(self, o):
        return self._both() < o

    def __le__(self, o):
        return self._both() <= o

    def __gt__(self, o):
        return self._both() > o

    def __ge__(self, o):
        return self._both() >= o

    def count(self, o):
        return self._both().count(o)

    def index(self, *args):
        return self._both().index(*args)

    def __reduce__(self):
        return (SortResult, self._both())

    def __copy__(self):
        return SortResult(*self._both())

    def __deepcopy__(self, memo):
        import copy

        return SortResult(*copy.deepcopy(self._both(), memo))


_LazySort.__name__ = "sort"


# ------------------------------------------------------------------------ public names
def _dim(x, dim):
    return normalize_dim(dim, x.ndim)  # a 0-d tensor takes dim 0 or -1 (torch)


@bind("sort", prim="sort")
def sort(input, dim=-1, descending=False, stable=False) -> SortResult:
    """Sort along ``dim``: ``(values, indices)`` (a namedtuple, as torch's).

    Every sort here is stable (``stable=True`` costs nothing extra): equal values keep their
    order; NaN is the largest value (first when ``descending``). Along the split dim of a
    1-d tensor this is a sample sort that reads a few samples and cut positions on the
    driver (two short waits); the result keeps ``input``'s layout.

    There, unless the sort is recorded for a gradient, the call groups the input by
    destination (a copy of it on the workers, plus a byte per element saying where each
    went: later changes to ``input`` do not reach the result) and the result makes what is
    read of it on first read: ``.values`` or ``[0]`` the values alone (a sort of the plain
    values: about half the time of both, half the data moved), ``.indices`` the indices
    alone, unpacking (``v, i = st.sort(x)``) or any other use of the tuple both in one
    pass. Reading the other one later sorts again from the kept groups, which are freed
    once both are read or the result is dropped.

    Examples
    --------
    >>> import sharded as st
    >>> r = st.sort(st.tensor([3., 1., 2.]), descending=True)
    >>> r.values.tolist(), r.indices.tolist()
    ([3.0, 2.0, 1.0], [0, 2, 1])
    >>> st.sort(st.tensor([3., float("nan"), 1., 3.], shards=2)).values.tolist()
    [1.0, 3.0, 3.0, nan]
    """
    # torch's parser: descending a bool, stable a bool or None (TypeError otherwise)
    if not isinstance(descending, (bool, np.bool_)) or not (
        stable is None or isinstance(stable, (bool, np.bool_))
    ):
        raise ArgumentTypeError(
            f"sort(): descending must be a bool and stable a bool or None, got {descending!r} "
            f"and {stable!r}"
        )
    x = _tensor(input)
    if x.dtype == D.bfloat16:  # NumPy's sort misplaces bfloat16 NaNs: float32 is exact here
        v, i = sort(x.float(), dim, descending, stable)
        return SortResult(v.to(D.bfloat16), i)
    d = _dim(x, dim)
    if _sample_sorted(x._layout, d) and not (x.requires_grad and is_grad_enabled()):
        sess = session_of((x,))
        if "sort" in NO_COMPLEX:
            refuse_complex("sort", (x,))
        groups = ss.split(sess.executor, x, bool(descending), index="codes")
        return _LazySort(sess, groups)
    v, i = apply("sort", x, d, bool(descending))
    return SortResult(v, i)


@bind("argsort", prim="sort")
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (``sort(...).indices``: along the split dim
    of a 1-d tensor the sorted values are not kept).

    Examples
    --------
    >>> import sharded as st
    >>> st.argsort(st.tensor([3, 1, 2])).tolist()
    [1, 2, 0]
    """
    return sort(input, dim, descending, stable).indices


@bind("msort", prim="sort")
@via_float32
def msort(input):
    """Values sorted along the first dim (``sort(input, dim=0).values``).

    Without a gradient to record, no indices are computed: along the split dim of a 1-d
    tensor each worker sorts its share of the plain values once.

    Examples
    --------
    >>> import sharded as st
    >>> st.msort(st.tensor([[3, 1], [1, 2]])).tolist()
    [[1, 1], [3, 2]]
    """
    x = _tensor(input)
    if x.requires_grad and is_grad_enabled():
        return sort(x, 0).values
    return apply("sort_values", x, 0, False)
