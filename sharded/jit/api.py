"""``st.jit``: trace a function once, then replay its worker commands without re-planning.

An eager op costs ~30-70 us of driver time (dispatch, planner, tensor wrapping, autograd
recording, finalizers) before its one command per layout is queued. A jitted function pays it
only while being traced; later calls re-issue the recorded executor commands with their keys
remapped, and the executor ships them as it ships eager ones (one batch per worker per flush).

How it works (the choices)
--------------------------
* **Trace = an eager call with a recorder.** While ``fn`` runs, ``executor.recorder`` is told
  every ``submit_group``/``submit_tree``/``submit``/``free_group``/``free``/``export`` call
  (a reduction is one tree command, its input and output keys remapped like the others'),
  so the traced call
  itself computes the real results. Keys made during the call (``[k0, k1)`` of the executor's
  counter) are *fresh* and are stored as offsets; keys of the input tensors are stored as
  (input, shard); every other key is *captured* (parameters, optimizer state, closures) and
  kept as is.
* **Reads refuse.** ``item()``, ``bool()``, ``numpy()``, printing, or an op whose plan needs
  values (``nonzero``, ``sort``, ``unique``, checked ``linalg``) makes the executor read while
  tracing: that raises :class:`~sharded.errors.TraceError` naming the function, the read and
  the user's line; with ``fallback=True`` the call finishes eagerly instead, with a warning,
  and the function stays eager.
* **Replay only what repeats.** Python state that changes between calls is baked into a
  trace (a Python counter in a constant, state tensors rebound instead of updated in place,
  a ``.grad`` accumulated across calls; the optimizers keep their step count as a tensor
  once traced, see :mod:`sharded.optim.capture`). So a signature replays
  only once two consecutive traces are *equal* (same commands, constants, captured keys and
  side effects); the first call of a training step (which creates the optimizer's state)
  differs from the second, so the second and third calls are traced and the fourth replays.
  After :data:`MAX_TRACES` traces that never agree the function raises ``TraceError`` (or runs
  eagerly with a warning under ``fallback=True``).
* **Random numbers.** A draw (``rand``, ``randn``, a dropout mask) records its counter as an
  offset from the generator's state when the call began, so a replay draws exactly the
  numbers an eager call would and moves the generator on as far; a function that calls
  ``manual_seed`` itself leaves the state it sets.
* **Side effects.** ``.grad`` of a tensor that requires grad (a parameter or an input) that
  the call rebinds is rebound by a replay to the replay's own tensor; version counters bumped
  by in-place ops are bumped by a replay too. A tensor made by the call that survives it in
  other Python state (``self.cache = y``) makes the trace unusable (it differs per call or
  cannot be rebound); tensors that only the returned outputs' autograd graph keeps are freed
  at the end of a replay.
* **Guards.** A signature is the shapes, dtypes, layouts, strides, ``requires_grad`` and
  aliasing of the tensor arguments, the other arguments' values (floats by their bits: -0.0
  is not 0.0), the grad mode and the session; a new one traces again (up to
  :data:`MAX_SIGNATURES` per function). A replay also checks that every captured tensor
  is still alive (a rebound global traces again).
* **Python values are constants.** What the function reads besides its arguments (a learning
  rate a scheduler changes, a global flag) is baked into its trace, as in
  ``torch.jit.trace``: pass such values as arguments (they are part of the signature) or call
  ``f.reset()`` after changing them.
* **Autograd.** ``backward()`` and ``opt.step()`` inside the function are recorded like any
  op; outputs of a replay carry no autograd graph (call ``backward`` inside the function).
  A signature whose traced outputs carry a graph a later ``backward`` could use (not freed by
  a backward inside the call: a forward under grad mode) is run eagerly instead of replayed.
* **One command per worker.** A program without transfers is shipped once to every worker
  it involves (a ``ProgDef(id, per-shard commands)``, keys as symbols); a replay then
  queues a ``Prog(id, first fresh key, input keys)`` per worker. The worker compiled the
  program when it was defined (:mod:`sharded.runtime.worker.program`: kernels, key slots and fusion
  windows resolved once), so a call is a tight loop over its commands (fused elementwise
  runs included): the driver's cost of a replay no longer grows with the number of ops, the
  worker's is little more than its kernels'. A reduction within workers (along a dim that
  is not split) is part of it. The program is dropped from the workers with the jitted
  function.
* **Transfers.** A program with exports or reduction trees across workers (pieces moved
  between workers: a gradient summed over row shards, matmul of differently split operands)
  is replayed from the driver instead: its recorded executor calls are re-issued with the
  keys remapped and the new export handles substituted, still without planning, in *waves*
  (:mod:`sharded.jit.schedule`): every command as early as its dependencies allow, the
  exports of a wave merged into one call per worker.
* **Errors** of replayed commands surface at the next read, as eager ones do.
* **One thread.** A trace records every command the session queues meanwhile: do not run
  other ops from another thread while a jitted function is being traced.
"""

from __future__ import annotations

import functools
import gc
import types
import warnings

from .. import dtypes as D
from ..autograd import is_grad_enabled
from ..errors import TraceError
from ..runtime.driver import session as _session
from ..tensor import ShardedTensor
from .pytree import flatten
from .recorder import Recorder

MAX_TRACES = 4  # traces of one signature before giving up
MAX_SIGNATURES = 8  # signatures cached per function (oldest dropped)

__all__ = ["jit"]


def jit(fn=None, *, fallback: bool = False):
    """Compile ``fn`` (tensors in, tensors out) into a replayable program of worker commands.

    The first calls for a signature (shapes, dtypes, layouts of the tensor arguments) run
    eagerly while recording; once two consecutive recordings agree, later calls replay the
    commands without planning, so a chain of tiny ops costs a few microseconds per op.

    Parameters
    ----------
    fn : callable
        Takes tensors, nested tuples/lists/dicts of them and hashable constants (positionally
        or by keyword); returns the same kinds of values.
    fallback : bool
        If the function reads a tensor's value while traced (``if x.sum() > 0:``), finish
        the call eagerly with a warning and keep calling it eagerly, instead of raising
        :class:`~sharded.errors.TraceError`.

    Returns
    -------
    callable
        The jitted function (``.stats`` counts traces, replays and eager calls).

    Examples
    --------
    >>> import sharded as st
    >>> f = st.jit(lambda x, y: (x * 2 + y).sum(dim=0))
    >>> x, y = st.ones(4, 2, shards=2), st.ones(4, 2, shards=2)
    >>> [f(x, y).tolist() for _ in range(3)][-1]
    [12.0, 12.0]
    >>> f.stats["replays"]
    1
    """
    if fn is None:
        return functools.partial(jit, fallback=fallback)
    return Jitted(fn, fallback)


class Jitted:
    """A function with its traces (one entry per signature)."""

    def __init__(self, fn, fallback: bool):
        if not callable(fn):
            raise TypeError(f"st.jit: expected a function or module, got {type(fn).__name__}")
        # first: it copies fn.__dict__ (a module's attributes), which must not shadow ours
        functools.update_wrapper(self, fn)
        self.fn, self.fallback = fn, fallback
        self.name = getattr(fn, "__name__", None) or type(fn).__name__
        self.entries: dict = {}
        self.eager = False
        self.stats = {"traces": 0, "replays": 0, "eager": 0}

    def why(self) -> list:
        """Why each signature's last trace could not be replayed yet (empty strings for
        signatures that replay): what differed between two traces, or what a trace kept.

        Examples
        --------
        >>> import sharded as st
        >>> f = st.jit(lambda x: x * 2)
        >>> _ = f(st.ones(2)); f.why()
        ['first trace']
        """
        return ["" if e.program is not None else e.why for e in self.entries.values()]

    def reset(self) -> None:
        """Forget every trace (after changing Python state the function reads): the next
        calls trace again.

        Examples
        --------
        >>> import sharded as st
        >>> f = st.jit(lambda x: x + 1)
        >>> f.reset(); f.entries
        {}
        """
        self.entries.clear()
        self.eager = False

    def __get__(self, obj, objtype=None):
        """As a method decorator: bound to the instance (a hashable argument)."""
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args, **kwargs):
        leaves, tree = flatten((args, kwargs))
        tensors = [x for x in leaves if isinstance(x, ShardedTensor)]
        sess = tensors[0]._storage.session if tensors else _session.current()
        ex = sess.executor
        sig = None
        if not self.eager and ex.recorder is None:
            sig = _signature(leaves, tree, sess)
        if sig is None:  # eager: nested in a trace, marked eager, or unhashable arguments
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        entry = self.entries.get(sig)
        if entry is not None and entry.graph:  # outputs with a graph: eager, as in torch
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        if entry is not None and entry.program is not None:
            if entry.program.alive():
                self.stats["replays"] += 1
                return entry.program.replay(ex, sess, tensors)
            entry = None  # a captured tensor died (a rebound global): start over
        if entry is None:
            self.entries.pop(sig, None)
            if len(self.entries) >= MAX_SIGNATURES:
                self.entries.pop(next(iter(self.entries)))
            entry = self.entries[sig] = _Entry()
        if entry.traces >= MAX_TRACES:
            msg = (
                f"st.jit: '{self.name}' gave a different program on each of its last "
                f"{entry.traces} calls ({entry.why}); it depends on Python state that changes "
                "between calls and cannot be replayed"
            )
            if not self.fallback:
                raise TraceError(msg + "; use st.jit(fn, fallback=True) to run it eagerly")
            warnings.warn(msg + "; running it eagerly", stacklevel=2)
            self.eager = True
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        return self._trace(entry, ex, sess, args, kwargs, tensors)

    def _trace(self, entry, ex, sess, args, kwargs, tensors):
        # cyclic garbage from before the call would count as live tensors, whose storage the
        # program then guards; collected later, it would fail a replay's guard (a retrace)
        gc.collect()
        rec = Recorder(self, ex, tensors)
        ex.recorder = rec
        # tensors kept whole go to workers in round robin: every trace starts the turn at
        # worker 0, so that two calls place them alike and their programs can agree
        turn, sess._next = sess._next, 0
        try:
            out = self.fn(*args, **kwargs)
            gc.collect()  # cyclic garbage made by the call frees its shards inside the trace
        finally:
            ex.recorder = None
            sess._next = turn
        self.stats["traces"] += 1
        if rec.abandoned:  # a read under fallback=True: this call ran eagerly
            self.eager = True
            return out
        prog = rec.finish(out, sess)
        entry.traces += 1
        if prog.graph:  # a replay's outputs would have none for a backward outside the call
            entry.graph = True
            entry.why = "its outputs carry an autograd graph: this signature runs eagerly"
            return out
        if prog.unclean is None and entry.last is not None:
            why = entry.last.differs(prog)
            if why is None:
                entry.program = prog
                return out
            entry.why = why
        else:
            entry.why = prog.unclean or "first trace"
        entry.last = prog if prog.unclean is None else None
        return out


class _Entry:
    __slots__ = ("traces", "last", "program", "why", "graph")

    def __init__(self):
        self.traces, self.last, self.program, self.why = 0, None, None, ""
        self.graph = False


# ------------------------------------------------------------------ signatures
def _tensor_sig(t: ShardedTensor):
    return (
        tuple(t.shape),
        t.dtype.name,
        t.layout,
        t.requires_grad,
        isinstance(t._keys, range),
        t._strides,
        t._offset,
        bool(t._readonly),
    )


def _signature(leaves, tree, sess):
    """The guard of a call: what a trace depends on besides captured state (None: arguments
    that cannot be hashed, so the call runs eagerly)."""
    storages: dict = {}
    parts = []
    for x in leaves:
        if isinstance(x, ShardedTensor):
            first = storages.setdefault(id(x._storage), len(storages))
            parts.append(("T", _tensor_sig(x), first))
        elif isinstance(x, (float, complex)):
            # by bits: -0.0 == 0.0 (x * -0.0 differs from x * 0.0) and nan != nan
            parts.append(("v", type(x).__name__, _bits(x)))
        else:
            parts.append(("v", type(x).__name__, x))
    sig = (tuple(parts), tree, is_grad_enabled(), D.get_default_dtype().name, id(sess))
    try:
        hash(sig)
    except TypeError:
        return None
    return sig


def _bits(x) -> tuple:
    """A float or complex argument as its exact bits (``-0.0`` and ``0.0`` differ, a NaN
    equals itself).

    Examples
    --------
    >>> _bits(-0.0) == _bits(0.0), _bits(float("nan")) == _bits(float("nan"))
    (False, True)
    """
    return (float.hex(x.real), float.hex(x.imag)) if isinstance(x, complex) else float.hex(x)
