"""Creation functions with torch's names and dtype defaults, plus placement keywords.

Every function takes ``shards=`` (default: one per worker), ``dim=`` (the split dim, default 0)
or ``layout=st.Layout(...)``, and ``dtype=``, ``device=``, ``requires_grad=``. Shards are made
on their workers; only ``tensor``/``from_numpy`` ship data from the driver.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import dtypes as D
from .devices import workers_for
from .errors import ArgumentError
from .layout import Layout, resolve
from .ops import creation as C
from .runtime import session as _session
from .core.dispatch import apply
from .tensor import ShardedTensor


def _shape(size) -> tuple:
    """``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros([2, 3])`` all mean shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)) or (
            len(size) == 1 and hasattr(size[0], "__len__") and not isinstance(size[0], str)):
        size = tuple(size[0])
    for s in size:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise ArgumentError(f"size must be a sequence of ints, got {tuple(size)!r}")
        if s < 0:
            raise ArgumentError(f"negative dimension {s} in size {tuple(size)}")
    return tuple(int(s) for s in size)


def _layout(shape, shards=None, dim=None, layout=None, device="cpu") -> Layout:
    """Bind the placement keywords to the workers whose device matches ``device``."""
    ex = _session.current().executor
    ids = workers_for(ex, device)
    lay = resolve(shape, len(ids), shards=shards, dim=dim, layout=layout)
    if layout is not None and getattr(layout, "_req", None) is None:
        return lay  # an already bound layout names global workers
    if layout is not None and layout._req.get("workers") is not None:
        return resolve(shape, ex.num_workers, layout=layout)  # explicit global workers
    if len(ids) == ex.num_workers:
        return lay
    return lay.replace(workers=[ids[w] for w in lay.workers])


def _finish(t: ShardedTensor, requires_grad: bool) -> ShardedTensor:
    return t.requires_grad_(True) if requires_grad else t


def from_numpy(a, *, shards=None, dim=None, layout=None, device="cpu",
               requires_grad=False) -> ShardedTensor:
    """A sharded copy of NumPy array ``a`` (its dtype is kept).

    Examples
    --------
    >>> import numpy as np, sharded as st
    >>> st.from_numpy(np.arange(6.).reshape(3, 2), shards=3).sum().item()
    15.0
    """
    a = np.asarray(a)
    dt = D.from_numpy_dtype(a.dtype)
    lay = _layout(a.shape, shards, dim, layout, device)
    return _finish(apply("from_numpy", np.require(a, requirements="C"), lay, dt), requires_grad)


def tensor(data, *, dtype=None, shards=None, dim=None, layout=None, device="cpu",
           requires_grad=False) -> ShardedTensor:
    """A sharded tensor from nested lists, scalars or a NumPy array (always a copy).

    Python floats give the default dtype (float32), ints int64, bools bool.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([[1, 2], [3, 4]]).dtype
    sharded.int64
    """
    if isinstance(data, ShardedTensor):
        data = data.numpy()
    dt = D.as_dtype(dtype) if dtype is not None else D.infer_dtype(data)
    a = np.asarray(data, dtype=dt.np)
    return from_numpy(a, shards=shards, dim=dim, layout=layout, device=device,
                      requires_grad=requires_grad)


as_tensor = tensor


def _creator(name, kernel, default):
    def f(*size, dtype=None, shards=None, dim=None, layout=None, device="cpu",
          requires_grad=False, **kw):
        if "size" in kw:
            size = (kw.pop("size"),)
        if kw:
            raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kw)}")
        shape = _shape(size)
        dt = D.as_dtype(dtype) if dtype is not None else default()
        lay = _layout(shape, shards, dim, layout, device)
        return _finish(kernel(lay, dt), requires_grad)
    f.__name__ = name
    f.__doc__ = f"""A tensor of the given size filled by ``{name}`` (default dtype float32).

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}(2, 3, shards=2).shape
    sharded.Size([2, 3])
    """
    return f


_float = D.get_default_dtype
zeros = _creator("zeros", lambda lay, dt: apply("full", lay, 0, dt), _float)
ones = _creator("ones", lambda lay, dt: apply("full", lay, 1, dt), _float)
empty = _creator("empty", lambda lay, dt: apply("empty", lay, dt), _float)
rand = _creator("rand", lambda lay, dt: apply("random", lay, "uniform", dt), _float)
randn = _creator("randn", lambda lay, dt: apply("random", lay, "normal", dt), _float)


def full(size, fill_value, *, dtype=None, shards=None, dim=None, layout=None, device="cpu",
         requires_grad=False) -> ShardedTensor:
    """A tensor filled with ``fill_value``; its dtype follows the value (int -> int64).

    Examples
    --------
    >>> import sharded as st
    >>> st.full((2,), 7).tolist()
    [7, 7]
    """
    shape = _shape((size,) if isinstance(size, numbers.Integral) else (tuple(size),))
    dt = D.as_dtype(dtype) if dtype is not None else D.scalar_dtype(fill_value)
    lay = _layout(shape, shards, dim, layout, device)
    return _finish(apply("full", lay, fill_value, dt), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, shards=None, dim=None, layout=None,
           device="cpu", requires_grad=False) -> ShardedTensor:
    """Values ``start, start+step, ...`` below ``end``; int64 when all arguments are ints.

    Examples
    --------
    >>> import sharded as st
    >>> st.arange(2, 10, 4).tolist(), st.arange(2, 10, 4).dtype
    ([2, 6], sharded.int64)
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ArgumentError("arange(): step must be nonzero")
    n = max(0, math.ceil((end - start) / step))
    ints = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    dt = D.as_dtype(dtype) if dtype is not None else (D.int64 if ints else D.get_default_dtype())
    lay = _layout((n,), shards, dim, layout, device)
    return _finish(apply("arange", lay, start, step, dt), requires_grad)


def linspace(start, end, steps, *, dtype=None, shards=None, dim=None, layout=None,
             device="cpu", requires_grad=False) -> ShardedTensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Examples
    --------
    >>> import sharded as st
    >>> st.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    return _spaced(start, end, steps, None, dtype, shards, dim, layout, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, shards=None, dim=None, layout=None,
             device="cpu", requires_grad=False) -> ShardedTensor:
    """``base ** linspace(start, end, steps)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    return _spaced(start, end, steps, base, dtype, shards, dim, layout, device, requires_grad)


def _spaced(start, end, steps, base, dtype, shards, dim, layout, device, requires_grad):
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ArgumentError(f"number of steps must be a non-negative int, got {steps!r}")
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    lay = _layout((int(steps),), shards, dim, layout, device)
    return _finish(apply("linspace", lay, start, end, int(steps), dt, base), requires_grad)


def eye(n, m=None, *, dtype=None, shards=None, dim=None, layout=None, device="cpu",
        requires_grad=False) -> ShardedTensor:
    """The ``n x m`` identity matrix.

    Examples
    --------
    >>> import sharded as st
    >>> st.eye(3, shards=3).sum().item()
    3.0
    """
    shape = _shape((n, n if m is None else m))
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish(apply("eye", _layout(shape, shards, dim, layout, device), dt), requires_grad)


def randint(low, high=None, size=None, *, dtype=None, shards=None, dim=None, layout=None,
            device="cpu", requires_grad=False) -> ShardedTensor:
    """Integers uniform in ``[low, high)``: ``randint(high, size)`` or
    ``randint(low, high, size)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(0); int(st.randint(3, 5, (10,)).min().item()) >= 3
    True
    """
    if size is None:
        low, high, size = 0, low, high
    if size is None or high is None:
        raise ArgumentError("randint() needs high and size: randint(high, size) or "
                            "randint(low, high, size)")
    if high <= low:
        raise ArgumentError(f"randint(): low={low} must be below high={high}")
    shape = _shape((tuple(size),) if not isinstance(size, numbers.Integral) else (size,))
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    lay = _layout(shape, shards, dim, layout, device)
    return _finish(apply("random", lay, "integers", dt, int(low), int(high)), requires_grad)


def randperm(n, *, dtype=None, shards=None, dim=None, layout=None, device="cpu",
             requires_grad=False) -> ShardedTensor:
    """A random permutation of ``0 .. n-1`` (identical for any sharding).

    Examples
    --------
    >>> import sharded as st
    >>> sorted(st.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.int64
    lay = _layout(_shape((n,)), shards, dim, layout, device)
    return _finish(apply("randperm", lay, int(n), dt), requires_grad)


def _like(fn, name):
    def f(input, *args, dtype=None, shards=None, dim=None, layout=None, device=None,
          requires_grad=False):
        place = {"shards": shards, "dim": dim, "layout": layout}
        if all(v is None for v in place.values()):
            place = {"layout": input.layout}  # same shape: keep the input's layout
        return fn(input.shape, *args, dtype=dtype or input.dtype,
                  device=device or input.device, requires_grad=requires_grad, **place)
    f.__name__ = name
    f.__doc__ = f"""``{name[:-5]}`` with the shape, dtype and layout of ``input``.

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}(st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    return f


zeros_like = _like(zeros, "zeros_like")
ones_like = _like(ones, "ones_like")
empty_like = _like(empty, "empty_like")
rand_like = _like(rand, "rand_like")
randn_like = _like(randn, "randn_like")
full_like = _like(full, "full_like")


def manual_seed(seed: int) -> None:
    """Seed the generator: later random tensors are reproducible for any sharding.

    Examples
    --------
    >>> import sharded as st
    >>> st.manual_seed(1); a = st.rand(4, shards=1).tolist()
    >>> st.manual_seed(1); a == st.rand(4, shards=3).tolist()
    True
    """
    C.manual_seed(seed)


def initial_seed() -> int:
    """The seed of the generator."""
    return C.initial_seed()


__all__ = ["from_numpy", "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand",
           "randn", "randint", "randperm", "arange", "linspace", "logspace", "eye",
           "zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like",
           "manual_seed", "initial_seed"]
