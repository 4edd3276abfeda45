"""Dispatch: the one point where a primitive runs on tensors (``apply``).

``apply(name, *args, **params)`` finds the session of the tensor arguments, checks in-place
targets, runs the primitive's planner, wraps the :class:`~sharded.core.dataflow.Operand`
records it returns into tensors, bumps version counters of in-place targets and lets autograd
record the op. Operands of every primitive are tensors, Python scalars, NumPy arrays or
planner-specific values; :func:`operand` and :func:`as_tensor` turn user values into those.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .. import dtypes as D
from ..devices import workers_for
from ..errors import ArgumentError, DTypeError, OutOfMemory, SessionClosed
from ..layout import Layout, resolve
from ..runtime.driver import session as _session
from ..tensor import ShardedTensor, check_not_published
from .dataflow import Operand
from .registry import NO_COMPLEX, PRIMITIVES, refuse_complex

_SCALARS = (bool, int, float, complex, np.bool_, np.integer, np.floating, np.complexfloating)


def wrap(res, session):
    """Turn planner results (an Operand or a tuple of them) into tensors."""
    if isinstance(res, Operand):  # (its slots, not its properties: once per op)
        return ShardedTensor(session, res._layout, res._dtype, res._keys)
    return tuple(wrap(r, session) for r in res)


def session_of(args):
    """The session of the tensor arguments (all must share it and be alive)."""
    sess = None
    for a in args:
        if isinstance(a, ShardedTensor):
            s = a._storage.session
            if s.executor.closed:  # (Session.closed, inline: once per op)
                raise SessionClosed(
                    f"this tensor (shape {tuple(a.shape)}, {a.dtype.name}) belongs to a session "
                    "that was shut down (st.shutdown() freed its shards); create it again "
                    "after st.init()"
                )
            if sess is not None and s is not sess:
                raise SessionClosed(
                    f"tensors from two different sessions cannot be combined (a tensor of shape "
                    f"{tuple(a.shape)} with one of another session)"
                )
            sess = s
    return sess or _session.current()


class _Hooks:
    """Set by ``autograd`` (which sits above the op families): records ops for backward."""

    check_inplace = None  # (name, target) -> None; raises for a leaf that requires grad
    record = None  # (name, args, params, out, target) -> None


hooks = _Hooks()

# When true, every op whose primitive has an ``out_spec`` checks the planner's result against
# it (the test suites turn this on, so the pure rules and the planners cannot drift apart).
CHECK_SPECS = False


def _check_spec(prim, args, params, out):
    spec = prim.out_spec(*args, **params)
    specs = spec if isinstance(spec[0], tuple) and isinstance(spec[1], tuple) else (spec,)
    outs = out if isinstance(out, tuple) else (out,)
    got = [(tuple(o.shape), o.dtype) for o in outs]
    want = [(tuple(s), dt) for s, dt in specs]
    if got != want:
        raise AssertionError(f"{prim.name}: planner made {got}, out_spec says {want}")


def apply(name, *args, **params):
    """Run primitive ``name`` on ``args`` and wrap what it returns (autograd records here,
    in-place ops bump version counters here)."""
    sess = session_of(args)
    target = params.get("target")
    prim = PRIMITIVES[name]
    if target is not None:
        if target._readonly:
            check_not_published(target)
            raise ArgumentError(
                "unsupported operation: more than one element of the written-"
                "to tensor refers to a single memory location (an expanded "
                "view); clone() it first"
            )
        if hooks.check_inplace is not None:
            hooks.check_inplace(name, target)
    if name in NO_COMPLEX:
        refuse_complex(name, args)
    res = prim.plan(sess.executor, *args, **params)
    if target is not None:  # in place: the shards already belong to ``target``
        target._vc[0] += 1
        out = target
    else:
        # (one output, the usual case: the tensor made here, without a call of wrap)
        out = (
            ShardedTensor(sess, res._layout, res._dtype, res._keys)
            if type(res) is Operand
            else wrap(res, sess)
        )
        if prim.kind == "view":  # how to make this view again
            out._view_chain = args[0]._view_chain + ((name, args[1:], params),)
    if CHECK_SPECS and prim.out_spec is not None:
        _check_spec(prim, args, params, out)
    if hooks.record is not None:
        hooks.record(name, args, params, out, target)
    return out


def record_composite(name, args, params, out):
    """Record ``out`` (computed from ``args`` without recording its primitives) as one
    autograd node of the composite ``name`` (:func:`~.registry.composite`)."""
    if hooks.record is not None:
        hooks.record(name, args, params, out, None)
    return out


# ------------------------------------------------------------------ user values -> operands
def is_tensor(o) -> bool:
    return isinstance(o, ShardedTensor)


def operand(o):
    """Tensors, scalars and NumPy arrays pass through (NumPy scalars become Python ones);
    lists and tuples become NumPy arrays; anything else is a :class:`DTypeError`."""
    if isinstance(o, (ShardedTensor, np.ndarray)):
        return o
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, _SCALARS):
        return o
    if isinstance(o, (list, tuple)):
        return np.asarray(o)
    raise DTypeError(f"unsupported operand {o!r} of type {type(o).__name__}")


def size_of(size) -> tuple:
    """``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros([2, 3])`` all mean shape (2, 3)."""
    if (
        len(size) == 1
        and isinstance(size[0], (tuple, list))
        or (len(size) == 1 and hasattr(size[0], "__len__") and not isinstance(size[0], str))
    ):
        size = tuple(size[0])
    for s in size:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            # a TypeError, as torch's "argument 'size' must be tuple of ints"
            raise DTypeError(f"size must be a sequence of ints, got {tuple(size)!r}")
        if s < 0:
            raise ArgumentError(f"negative dimension {s} in size {tuple(size)}")
    return tuple(int(s) for s in size)


def placement(shape, shards=None, dim=None, layout=None, device="cpu", dtype=None) -> Layout:
    """Bind the placement keywords (``shards=``, ``dim=``, ``layout=``, ``device=``) of a new
    tensor of ``shape`` to the current session's workers of that device.

    Without ``shards=`` and ``layout=`` the tensor is split into at most one shard per
    worker thread (``WorkerInfo.threads``) and only into shards of at least the session's
    ``min_shard_bytes`` (``dtype`` gives the
    element size; 8 bytes if None); a tensor too small for two such shards lives whole on
    one worker, the next one in round robin. ``shards=`` is capped at the split dim's length.

    A tensor larger than the workers' memory in all (``dtype`` None counts one byte an
    element) raises :class:`~sharded.errors.OutOfMemory` here, before anything is queued.
    """
    sess = _session.current()
    ex = sess.executor
    cap = ex.memory_bytes
    if cap is not None:  # (a product and a compare: creation is hot in benchmarks)
        nbytes = math.prod(shape) * (1 if dtype is None else dtype.itemsize)
        if nbytes > cap:
            dt = "" if dtype is None else f" and dtype {dtype.name}"
            raise OutOfMemory(nbytes, cap, f"a tensor of shape {tuple(shape)}{dt}")
    ids = workers_for(ex, device)
    if shards is None and layout is None:
        workers = ex.workers
        slots = sum([workers[i].threads for i in ids])  # one shard per kernel thread
        k = default_shards(shape, dtype, slots, sess.min_shard_bytes, dim)
        if k == 1:
            lay = resolve(shape, 1, shards=1, dim=dim)
            return lay.replace(workers=[ids[sess.next_worker(len(ids))]])
        if k != len(ids):
            shards = k
    req = getattr(layout, "_req", None)
    if req is not None and req.get("workers") is not None:
        # explicit global workers (of any device: a mixed CPU and GPU tensor), not indices
        # into this device's workers
        return resolve(shape, ex.num_workers, layout=layout)
    lay = resolve(shape, len(ids), shards=shards, dim=dim, layout=layout)
    if layout is not None and req is None:
        return lay  # an already bound layout names global workers
    if len(ids) == ex.num_workers:
        return lay
    return lay.replace(workers=[ids[w] for w in lay.workers])


def default_shards(shape, dtype, num_workers: int, min_shard_bytes: int, dim=None) -> int:
    """How many shards a default placement makes: one per worker (``num_workers`` counts
    the kernel threads of the workers: a worker on 8 threads takes 8 shards), no more than
    the split dim has entries, and none smaller than ``min_shard_bytes``.

    Examples
    --------
    >>> default_shards((2, 3), None, 4, 1 << 20), default_shards((1 << 20,), None, 4, 1 << 20)
    (1, 4)
    >>> default_shards((3 << 17,), None, 4, 1 << 20), default_shards((2, 3), None, 4, 0)
    (3, 2)
    """
    if not shape:
        return 1
    d = 0 if dim is None else dim  # a bad dim gets one shard here and its error in resolve
    n = shape[d] if isinstance(d, int) and -len(shape) <= d < len(shape) else 1
    k = max(1, min(num_workers, n))
    if min_shard_bytes > 0:
        itemsize = 8 if dtype is None else dtype.itemsize
        k = max(1, min(k, math.prod(shape) * itemsize // min_shard_bytes))
    return k


def like_kw(input, dtype, shards, dim, layout, device, requires_grad) -> dict:
    """Keywords of a ``*_like`` call: the input's dtype, device and own layout unless given
    (same shape, so the input's layout fits)."""
    place = {"shards": shards, "dim": dim, "layout": layout}
    if all(v is None for v in place.values()):
        place = {"layout": input.layout}
    return {
        "dtype": dtype or input.dtype,
        "device": device or input.device,
        "requires_grad": requires_grad,
        **place,
    }


def as_tensor(data, dtype=None, shards=None, dim=None, layout=None, device="cpu"):
    """``data`` (a tensor: itself; nested lists, scalars, NumPy arrays: a sharded copy) as a
    tensor. Python floats give the default dtype, ints int64, bools bool (torch's rules)."""
    if isinstance(data, ShardedTensor):
        return data if dtype is None or D.as_dtype(dtype) == data.dtype else data.to(dtype)
    dt = D.as_dtype(dtype) if dtype is not None else D.infer_dtype(data)
    a = np.asarray(data, dtype=dt.np)
    lay = placement(a.shape, shards, dim, layout, device, dt)
    return apply("from_numpy", np.require(a, requirements="C"), lay, dt)


# ------------------------------------------------------------------ helpers of the VJPs
def needs(a) -> bool:
    """Whether ``a`` is a tensor that requires a gradient."""
    return is_tensor(a) and a.requires_grad


def unbroadcast(g, a):
    """``g`` summed back to the shape of operand ``a`` (None if ``a`` needs no gradient)."""
    if not needs(a):
        return None
    shape = tuple(a.shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    return (g.sum(dims, keepdim=True) if dims else g).reshape(shape)


# ------------------------------------------------------------------ bfloat16 via float32
def via_float32(fn):
    """Run ``fn`` on bfloat16 tensors as torch's CPU kernels do: its bfloat16 tensor
    arguments upcast to float32, the float32 results rounded back to bfloat16 once, at the
    end. For reductions, softmax and products (NumPy would accumulate in bfloat16 itself,
    rounding at every step). A ``dtype=`` given, or another floating operand, leaves ``fn``
    alone.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1.0, 2.0], dtype=st.bfloat16).sum().dtype
    sharded.bfloat16
    """

    @functools.wraps(fn)
    def run(*args, **kwargs):
        for a in args:  # no bfloat16 tensor (the usual call): straight through, no sets built
            if isinstance(a, ShardedTensor) and a._dtype.name == "bfloat16":
                break
        else:
            return fn(*args, **kwargs)
        tensors = [a for a in args if isinstance(a, ShardedTensor)]
        floats = {a.dtype for a in tensors if D.category(a.dtype) >= 2}
        if floats != {D.bfloat16} or kwargs.get("dtype") is not None:
            return fn(*args, **kwargs)
        up = [a.to(D.float32) if isinstance(a, ShardedTensor) and a.dtype == D.bfloat16 else a
              for a in args]  # fmt: skip
        return _round_bf16(fn(*up, **kwargs))

    return run


def _round_bf16(r):
    if isinstance(r, ShardedTensor):
        return r.to(D.bfloat16) if r.dtype == D.float32 else r
    if isinstance(r, tuple):  # var_mean's pair; named tuples (max's values, indices) too
        parts = [_round_bf16(v) for v in r]
        return type(r)(*parts) if hasattr(r, "_fields") else tuple(parts)
    return r
