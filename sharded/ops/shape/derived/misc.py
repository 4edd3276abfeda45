"""Derived combinatorics, membership and small torch conveniences: cartesian_prod,
combinations, isin, diagflat, scalar_tensor, unravel_index, ``Tensor.sum_to_size``, the
legacy top-level ``svd``/``qr``/``cholesky`` (thin wrappers of :mod:`sharded.linalg`),
dtype and size predicates, the casts ``cfloat``/``cdouble``/``char`` and the thread count.

Each is a composition of primitives (reached through public functions and tensor methods),
so gradients come from the primitives.
"""

from __future__ import annotations

import collections
import itertools
import numbers

import numpy as np

from .... import dtypes as D
from .... import linalg as LA
from ....core.dispatch import as_tensor, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, UnsupportedDType
from ....runtime.commands import Threads
from ....runtime.driver import session as _session
from ....runtime.worker import threads as _threads
from ...creation.prims import full_like, zeros
from ...creation.prims import tensor as _tensor_of
from ...elementwise import plan as E
from ...order.prims.search import searchsorted
from ...order.prims.sort import sort
from ..prims.joining import stack
from ..prims.triangular import diag, meshgrid
from .tile import take

__all__ = [
    "cartesian_prod",
    "combinations",
    "isin",
    "diagflat",
    "scalar_tensor",
    "unravel_index",
    "svd",
    "qr",
    "cholesky",
    "is_nonzero",
    "is_same_size",
    "is_signed",
    "get_device",
    "get_num_threads",
    "set_num_threads",
]


def _vector(name, t):
    if not is_tensor(t):
        raise DTypeError(f"{name}(): expected a Tensor, got {type(t).__name__}")
    if t.ndim != 1:
        raise ShapeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    return t


# -------------------------------------------------------------- cartesian_prod, combinations
# cartesian_prod = the ij-meshgrid of the vectors, each flattened, stacked as columns
def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors (one dtype), one row per combination; a single
    tensor is returned as it is.

    Examples
    --------
    >>> import sharded as st
    >>> st.cartesian_prod(st.tensor([1, 2]), st.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    ts = [_vector("cartesian_prod", t) for t in tensors]
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


# combinations = input gathered at the index tuples itertools lists (the index table has
# the output's size, built from the length alone: no value is read)
def combinations(input, r=2, with_replacement=False):
    """Length-``r`` combinations of the elements of a 1-D tensor, as rows (the order of
    Python's ``itertools.combinations``; with ``with_replacement``, of
    ``combinations_with_replacement``).

    Examples
    --------
    >>> import sharded as st
    >>> st.combinations(st.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    x = _vector("combinations", input)
    if not isinstance(r, numbers.Integral) or isinstance(r, bool):
        raise ArgumentTypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if r < 0:
        raise ArgumentError(f"Expect a non-negative number, but got {r}")
    if r == 0:  # torch: an empty vector, not a (1, 0) table
        return x[:0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return take(x, as_tensor(idx))


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


# --------------------------------------------------------------------- diagflat and co
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on diagonal ``offset``.

    Examples
    --------
    >>> import sharded as st
    >>> st.diagflat(st.tensor([[1, 2]]), 1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    x = input if is_tensor(input) else as_tensor(input)
    if x.numel() == 0 and offset:  # an all-zero |offset|-square, still connected to x
        n = abs(offset)
        return zeros((n, n), dtype=x.dtype) + x.sum().to(x.dtype) * 0
    return diag(x.reshape(-1), offset)


bind("diagflat")(diagflat)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):  # fmt: skip
    """A 0-d tensor holding the number ``s``, of ``dtype`` (default: the default float
    dtype, whatever the type of ``s``, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.scalar_tensor(3)
    tensor(3., shards=1)
    """
    if is_tensor(s):
        if s.numel() != 1:
            raise ShapeError(f"scalar_tensor(): expected a number, got a tensor of {s.numel()}")
        s = s.item()
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if isinstance(s, complex) and not dt.is_complex:
        raise DTypeError(f"value {s} cannot be converted to type {dt.name} without overflow")
    kw = {} if device is None else {"device": device}
    return _tensor_of(s, dtype=dt, requires_grad=requires_grad, **kw)


# unravel_index: coordinates from the last dim: c = i mod n (floor), i = i div n, as torch
def unravel_index(indices, shape):
    """The coordinates, one int64 tensor per dim of ``shape``, of flat ``indices`` into
    a C-ordered array of that shape (out-of-range indices wrap, as torch's arithmetic does).

    Examples
    --------
    >>> import sharded as st
    >>> [c.tolist() for c in st.unravel_index(st.tensor([4, 1]), (2, 3))]
    [[1, 0], [1, 1]]
    """
    idx = indices if is_tensor(indices) else as_tensor(indices)
    if D.category(idx.dtype) != 1:  # bool is category 0
        raise ArgumentTypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in shape):
        bad = next(type(n) for n in shape if not isinstance(n, numbers.Integral))
        raise ArgumentTypeError(f"expected 'shape' sequence to only contain ints, but got {bad}")
    if any(n < 0 for n in shape):
        raise ArgumentError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape:
        raise ArgumentError(f"unravel_index(): shape {shape} has no elements to index")
    idx = idx.to(D.int64)
    out = []
    for n in reversed(shape):
        out.append(idx % n)
        idx = idx // n
    return tuple(reversed(out))


@bind("sum_to_size")
def sum_to_size(self, *size):
    """Sum this tensor down to ``size`` (to which it must broadcast): the inverse of
    ``expand``.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, 3).sum_to_size(1, 3).tolist()
    [[2.0, 2.0, 2.0]]
    """
    if not size:
        raise ArgumentTypeError('sum_to_size() missing 1 required positional arguments: "size"')
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = tuple(size[0])
    shape, lead = tuple(self.shape), self.ndim - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise ShapeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if tuple(size) == shape:
        return self
    dims = list(range(lead)) + [
        lead + i for i, (s, n) in enumerate(zip(size, shape[lead:])) if s == 1 and n != 1
    ]
    return self.sum(dims, keepdim=True).reshape(size)


# ----------------------------------------------------------- legacy svd / qr / cholesky
SVDLegacy = collections.namedtuple("svd", ["U", "S", "V"])  # torch.return_types.svd
QRLegacy = collections.namedtuple("qr", ["Q", "R"])  # torch.return_types.qr


@bind("svd")
def svd(input, some=True, compute_uv=True):
    """torch's older SVD: ``(U, S, V)`` with ``input = U diag(S) V^H`` (``V``, not
    ``V^H``); ``some=False`` gives square ``U`` and ``V``; ``compute_uv=False`` gives zero
    ``U`` (m x m) and ``V`` (n x n), as torch.

    Examples
    --------
    >>> import sharded as st
    >>> st.svd(st.tensor([[3., 0.], [0., 2.]])).S.tolist()
    [3.0, 2.0]
    """
    if not compute_uv:
        s = LA.svdvals(input)
        m, n, batch = input.shape[-2], input.shape[-1], tuple(input.shape[:-2])
        return SVDLegacy(
            zeros(batch + (m, m), dtype=input.dtype), s, zeros(batch + (n, n), dtype=input.dtype)
        )
    u, s, vh = LA.svd(input, full_matrices=not some)
    return SVDLegacy(u, s, vh.mH)


@bind("qr")
def qr(input, some=True):
    """torch's older QR: ``(Q, R)``, reduced unless ``some=False`` (then ``Q`` is square).

    Examples
    --------
    >>> import sharded as st
    >>> [t.shape for t in st.qr(st.ones(3, 2))]
    [sharded.Size([3, 2]), sharded.Size([2, 2])]
    """
    q, r = LA.qr(input, "reduced" if some else "complete")
    return QRLegacy(q, r)


@bind("cholesky")
def cholesky(input, upper=False):
    """torch's older Cholesky: ``L`` (``upper=True``: ``U = L^H``) of positive-definite
    matrices.

    Examples
    --------
    >>> import sharded as st
    >>> st.cholesky(st.tensor([[4., 2.], [2., 2.]]), True).tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    return LA.cholesky(input, upper=upper)


# --------------------------------------------------------------------------- predicates
@bind("is_nonzero")
def is_nonzero(input):
    """Whether a one-element tensor is not zero (more or fewer elements: RuntimeError).

    Examples
    --------
    >>> import sharded as st
    >>> st.is_nonzero(st.tensor([0.0])), st.tensor([[2]]).is_nonzero()
    (False, True)
    """
    n = input.numel()
    if n != 1:
        raise ShapeError(
            f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
            f"is ambiguous"
        )
    return bool(input.item() != 0)


@bind("is_same_size")
def is_same_size(input, other):
    """Whether two tensors have the same shape.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2, 3).is_same_size(st.zeros(2, 3))
    True
    """
    if not is_tensor(other):
        raise DTypeError(
            f"is_same_size(): argument 'other' must be Tensor, not {type(other).__name__}"
        )
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    """Whether the dtype is signed (bool and uint8: False; floats and complex: True).

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1]).is_signed(), st.tensor([True]).is_signed()
    (True, False)
    """
    return input.is_signed()


@bind("get_device")
def get_device(self):
    """The CUDA ordinal of the tensor's device, -1 on the CPU (as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).get_device()
    -1
    """
    dev = str(self.device)
    return int(dev.split(":")[1]) if dev.startswith("cuda:") else 0 if dev == "cuda" else -1


# ------------------------------------------------------------------------------ threads
_THREADS = [None]  # the count set by set_num_threads (None: the BLAS's own)


def get_num_threads():
    """The number of threads each worker's BLAS uses: the last :func:`set_num_threads`, else
    this process's BLAS pool size.

    Examples
    --------
    >>> import sharded as st
    >>> st.get_num_threads() >= 1
    True
    """
    return _THREADS[0] or _threads.blas_threads() or 1


def set_num_threads(n):
    """Set the BLAS/OpenMP threads of every worker of the session (queued after the work
    before it) and of this process.

    Examples
    --------
    >>> import sharded as st
    >>> n = st.get_num_threads()
    >>> st.set_num_threads(1); st.get_num_threads()
    1
    >>> st.set_num_threads(n)
    """
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise ArgumentTypeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise ArgumentError(f"set_num_threads expects a positive integer, got {n}")
    _threads.set_threads(n)
    _THREADS[0] = int(n)
    if _session.is_initialized():
        ex = _session.current().executor
        ex.send({w: [Threads(int(n))] for w in range(ex.num_workers)})
