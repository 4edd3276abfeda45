"""Typed errors of sharded.

Every error a user can trigger subclasses the builtin a PyTorch or NumPy user would catch for the
same mistake (``ValueError`` for bad values, ``TypeError`` for bad dtypes, ``IndexError`` for bad
dims, ``MemoryError`` for a tensor larger than the workers' memory), and also
:class:`ShardedError`, so ``except st.ShardedError`` catches all of ours.
:class:`ShardedError` is a ``RuntimeError``: torch raises ``RuntimeError`` for most of these
mistakes (shapes that do not broadcast, a ``k`` out of range, an index dtype it refuses), so
code written against torch catches ours with the class it already uses. Messages name the
offending values.
"""

from __future__ import annotations


class ShardedError(RuntimeError):
    """Base class of every error raised by sharded (a ``RuntimeError``, as torch's are).

    Examples
    --------
    >>> issubclass(ShapeError, ValueError) and issubclass(ShapeError, RuntimeError)
    True
    """


class ShardingError(ShardedError, ValueError):
    """An invalid ``shards=``, ``dim=`` or layout request, e.g. ``shards=0``."""


class LayoutMismatch(ShardedError, ValueError):
    """A layout that does not fit the tensor it is applied to (wrong rank, wrong boundaries)."""


class ShapeError(ShardedError, ValueError):
    """Shapes that do not broadcast or do not match, e.g. ``(2, 3) + (4,)``."""


class ArgumentError(ShardedError, ValueError):
    """An argument value an op cannot accept, e.g. ``item()`` on a tensor of 6 elements."""


class DimError(ShardedError, IndexError):
    """A dimension index out of range for the tensor's rank."""


class IndexOutOfRange(ShardedError, IndexError):
    """An index outside its dimension, e.g. ``x[7]`` on 7 rows; names index, dim and size."""


class ViewError(ShardedError, ValueError):
    """``view`` cannot share storage (torch's stride rule, or data would have to move between
    workers); ``reshape`` copies instead."""


class DTypeError(ShardedError, TypeError):
    """An unsupported dtype, or an op that is not defined for the operand's dtype."""


class EmptyReduction(ArgumentError, IndexError):
    """A max/min-like reduction over a dim of size 0, which has no identity (torch raises
    ``IndexError``: "Expected reduction dim 0 to have non-zero size")."""


class IndexDTypeError(DTypeError, IndexError):
    """An index tensor of a dtype the op refuses where torch raises ``IndexError`` for it
    (``index_fill``'s index must be int64)."""


class UnsupportedDType(DTypeError, NotImplementedError):
    """A dtype an op has no kernel for, where torch raises ``NotImplementedError``, e.g.
    ``"bincount_cpu" not implemented for 'Float'``; also a :class:`DTypeError` (``TypeError``)."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong Python type where torch's argument parser raises
    ``TypeError`` (``topk(x, 2.0)``, ``sort(x, descending=1)``): an :class:`ArgumentError`
    (``ValueError``) and a ``TypeError`` too."""


class UnsupportedArgument(ArgumentError, NotImplementedError):
    """An argument combination torch has no implementation for and says so with
    ``NotImplementedError``, e.g. ``F.pad(x2d, (1, 1, 1, 1), mode="reflect")``."""


class DivisionByZero(ShardedError, ZeroDivisionError):
    """Integer ``//`` or ``%`` by zero (torch raises ``RuntimeError: ZeroDivisionError``)."""


class ValueOverflow(ArgumentError, OverflowError):
    """A Python number that cannot be converted to a dtype, e.g. ``full((2,), 300,
    dtype=int8)`` (torch: "value cannot be converted to type int8_t without overflow")."""


class OutOfMemory(ShardedError, MemoryError):
    """A new tensor larger than the session's workers can hold in all, refused at the call
    (before anything is queued, so the session stays usable). The message names the bytes
    asked for and the workers' memory (``st.info()["memory_bytes"]``).

    A ``RuntimeError``, as torch's "DefaultCPUAllocator: can't allocate memory: you tried to
    allocate N bytes", and a ``MemoryError``, as NumPy's ``np.zeros(10**15)``.

    Attributes
    ----------
    nbytes : int
        Bytes the tensor needs.
    memory_bytes : int
        Bytes of memory the session's workers have in all.

    Examples
    --------
    >>> e = OutOfMemory(8 << 50, 16 << 30, "a float64 tensor of shape (1125899906842624,)")
    >>> isinstance(e, MemoryError), isinstance(e, RuntimeError), e.nbytes
    (True, True, 9007199254740992)
    """

    def __init__(self, nbytes: int, memory_bytes: int, what: str = "the tensor"):
        self.nbytes, self.memory_bytes, self.what = nbytes, memory_bytes, what
        super().__init__(
            f"{what} needs {nbytes} bytes ({_human(nbytes)}), more than the session's workers "
            f"can hold: {memory_bytes} bytes ({_human(memory_bytes)}) of memory in all"
        )

    def __reduce__(self):  # (the message is made from the arguments)
        return type(self), (self.nbytes, self.memory_bytes, self.what)


def _human(n: int) -> str:
    """``n`` bytes in binary units, e.g. ``'3.55 PiB'``."""
    units = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    if n < 1024:
        return f"{n} B"
    i = 0
    while n >= 1024 ** (i + 2) and i < len(units) - 1:
        i += 1
    return f"{n / 1024 ** (i + 1):.3g} {units[i]}"


class BackendUnavailable(ShardedError):
    """A device was asked for whose backend (e.g. CuPy on ``cuda``) is missing here."""


class SessionClosed(ShardedError, ValueError):
    """A tensor was used after ``st.shutdown()`` freed the workers that held its shards.

    Also a ``ValueError``: the tensor is no longer a valid argument.
    """


class WorkerLost(ShardedError):
    """A worker actor died and could not be rebuilt (recovery off, shared namespace, relays,
    or recovery itself failed): the message says which worker, why, and which tensors are
    lost (shape, dtype and shard count of up to a few, and how many in all).

    Attributes
    ----------
    workers : tuple of str
        Actor names of the lost workers (empty when unknown).
    tensors : tuple of str
        Short descriptions of every tensor lost, e.g. ``"float64[48, 24] (3 shards)"``.
    """

    def __init__(self, message: str, workers=(), tensors=()):
        self.workers, self.tensors = tuple(workers), tuple(tensors)
        super().__init__(message)


class PlacementFailed(WorkerLost):
    """The cluster has no room for this session's worker actors: their CPUs (or, for GPU
    workers, GPUs) stayed held (by other namespaces' sharded workers, or other actors and
    tasks) for the placement bound (``$SHARDED_PLACEMENT_TIMEOUT_S``, 5 s by default).
    Nothing is left pending. The message names what each node lacks and what holds the
    cluster's CPUs (GPUs). A :class:`WorkerLost`, as such a failure was before it had its own
    class.

    Attributes
    ----------
    short : dict
        Node id -> ``(cpus_needed, cpus_free)`` of every node that lacks room (empty when
        GPU workers found none).
    holders : tuple of dict
        What holds the CPUs: ``namespace``, ``workers`` (sharded workers), ``others`` (other
        actors holding any) and ``cpus`` of each namespace holding any (``gpus`` instead of
        ``cpus`` when GPU workers found no room).
    """

    def __init__(self, message: str, short=None, holders=()):
        self.short, self.holders = dict(short or {}), tuple(holders)
        super().__init__(message)


class WaitTimeout(ShardedError, TimeoutError):
    """A wait for the workers took longer than the session's bound (``st.init(timeout=...)``,
    ``SHARDED_TIMEOUT``; 30 minutes by default, as torch's ``init_process_group``). The
    message names what was waited for, the workers that had not answered and how long it
    waited. Nothing is lost: the work may still finish, and a later read waits for it again.

    Attributes
    ----------
    what : str
        What the driver was waiting for (e.g. ``"a read"``).
    workers : tuple of str
        Actor names of the workers that had not answered.
    seconds : float
        How long it waited.
    """

    def __init__(self, what: str, workers, seconds: float, timeout: float):
        self.what, self.workers, self.seconds = what, tuple(workers), seconds
        who = ", ".join(self.workers) or "the workers"
        super().__init__(
            f"waited {seconds:.3g} s for {what} from {who} (the session's timeout is "
            f"{timeout:g} s: st.init(timeout=...) or SHARDED_TIMEOUT); the work may still "
            "finish: a later read or st.synchronize() waits for it again"
        )


class OpFailed(ShardedError):
    """An op failed inside a worker. Raised at the next read, naming the op and the shard.

    Attributes
    ----------
    op : str
        Name of the op that failed (e.g. ``"add"``).
    shard : int or None
        Index of the shard whose kernel raised.
    worker : int
        Index of the worker actor that ran it.
    cause : str
        ``"ExceptionType: message"`` of the original exception.

    When the kernel raised a builtin error (``IndexError``, ``ValueError``, ``TypeError``,
    ``ZeroDivisionError``, ``OverflowError``), the ``OpFailed`` raised is also
    an instance of that class.

    Examples
    --------
    >>> e = OpFailed("gather", 0, 1, "IndexError: index 9 is out of bounds")
    >>> isinstance(e, IndexError), isinstance(e, OpFailed), isinstance(e, RuntimeError)
    (True, True, True)
    """

    def __new__(cls, op: str, shard=None, worker: int = -1, cause: str = ""):
        # the kernel's exception class, when it is a builtin one (``IndexError: ...``), is a
        # base too: torch raises it at the call, so ``except IndexError`` catches ours as well
        kind = _KERNEL_ERRORS.get(str(cause).partition(":")[0].strip())
        if cls is OpFailed and kind is not None:
            cls = _OP_FAILED.get(kind) or _OP_FAILED.setdefault(
                kind, type("OpFailed", (OpFailed, kind), {"__module__": __name__})
            )
        return super().__new__(cls, op, shard, worker, cause)

    def __init__(self, op: str, shard=None, worker: int = -1, cause: str = ""):
        self.op, self.shard, self.worker, self.cause = op, shard, worker, cause
        where = f"shard {shard} on worker {worker}" if shard is not None else f"worker {worker}"
        super().__init__(f"op '{op}' failed on {where}: {cause}")

    def __reduce__(self):  # the per-kind classes are made here, not importable by name
        return OpFailed, (self.op, self.shard, self.worker, self.cause)


_KERNEL_ERRORS = {  # builtin exceptions of kernels that OpFailed also subclasses
    c.__name__: c for c in (IndexError, ValueError, TypeError, ZeroDivisionError, OverflowError)
}
_OP_FAILED: dict = {}  # builtin class -> the OpFailed subclass that also is one


class AutogradError(ShardedError):
    """Backward cannot run: a freed graph, a modified saved tensor, a missing rule..."""


class TraceError(ShardedError):
    """``st.jit`` cannot trace a function: it reads a tensor's value while being traced
    (``if x.sum() > 0:``, ``item()``, an op whose plan depends on values), or keeps state a
    replay could not reproduce. The message names the function, the read and the line."""


class PublishedNotFound(ShardedError, KeyError):
    """No tensor is published under the name given to ``st.get`` or ``st.unpublish``."""

    def __str__(self):  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class PublishedReadOnly(ShardedError):
    """An in-place op on a published snapshot (``st.get``) or a view of one; publish a new
    version instead (``st.publish(name, x)`` replaces it atomically)."""


class CheckpointError(ShardedError, ValueError):
    """A checkpoint that cannot be used: a missing, truncated or corrupt file, a checksum
    mismatch, an unknown format version, an unsafe file name in the manifest, or a path some
    worker cannot see. The message names the file (or node and path) and what was expected
    and found; nothing is loaded or replaced."""


class StateDictError(ShardedError):
    """``load_state_dict`` got missing or unexpected keys (``strict=True``) or a tensor whose
    shape differs from the parameter's (torch raises ``RuntimeError`` for the same)."""
