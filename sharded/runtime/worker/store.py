"""A worker's store: shards by key, their failure records, published snapshots and the pool
of freed blocks (the state half of :class:`~sharded.runtime.worker.core.Worker`; the
commands that act on it are :mod:`.core`'s).

A failing command poisons its outputs: the key maps to its error record instead of an array,
so the commands reading it fail as a cascade of that error (:class:`Poisoned`), and data
that could not be produced travels as a :class:`Failed` standing in for it.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import sys
import threading

import numpy as np

from ...backend import get_backend
from ..commands import Const, Key, Mail
from ..net import codec

POOL_MIN_BYTES = 1 << 20
POOL_MAX_BYTES = 1 << 30
POOL_MEMORY_SHARE = 8  # a worker pools at most 1/8 of its share of its node's memory


def pool_share(node_memory, workers_on_node: int, threads: int = 1) -> int:
    """The bytes of freed blocks one worker may keep: an eighth of its share of its node's
    memory (Ray's ``memory`` resource), at most :data:`POOL_MAX_BYTES` per thread of its
    CPU share (``threads``), so that many workers on one node do not hold its memory idle,
    and a worker that runs several cores' shards keeps what as many one-core workers would.
    (1 worker x 2 threads with 1 GiB: a sort's values and indices took 0.26-0.56 s, blocks
    evicted; with 2 GiB 0.25-0.28 s, as 2 workers' 0.29-0.34 s.)

    Examples
    --------
    >>> pool_share(64 << 30, 2) == POOL_MAX_BYTES, pool_share(64 << 30, 64) >> 20
    (True, 128)
    >>> pool_share(64 << 30, 1, threads=2) == 2 * POOL_MAX_BYTES
    True
    """
    per_worker = int(node_memory) // max(1, int(workers_on_node))
    return min(POOL_MAX_BYTES * max(1, int(threads)), per_worker // POOL_MEMORY_SHARE)


class Store:
    """Shards by key (``store``), the error records of poisoned keys (``poisoned``),
    published snapshots (copy on write) and the buffer pool of one worker."""

    def __init__(self, index: int, device: str = "cpu", copy_exports: bool = False):
        self.index, self.device = index, device
        self.backend = get_backend(device)
        self.xp = self.backend.xp
        self.store: dict = {}
        self.poisoned: dict = {}
        self.copy_exports = copy_exports
        self.pool: dict = {}  # id -> a free block, the one pooled longest ago first
        self._returned: list = []  # blocks whose leases ended, not yet back in the pool
        self.pool_bytes = 0
        self.pool_max = None  # this worker's cap (None: POOL_MAX_BYTES), set after placement
        self.pool_threads = 1  # its CPU share: the cap's ceiling is POOL_MAX_BYTES per thread
        self.cow: set = set()  # published keys that may still share memory with a writable shard
        self.published_seen = False  # no copy-on-write checks until something is published
        # bytes of the arrays this worker exported (reads, transfers, tree partials) and of
        # those its commands took from elsewhere (other workers' exports, the driver's puts)
        self.sent_bytes = self.received_bytes = 0
        # a worker may run its shards' commands on threads (.parallel): the pool and the
        # byte counters change under locks (the store and the poisoned keys see reads and
        # writes of distinct keys only, which dicts do atomically)
        self._pool_lock, self._count_lock = threading.Lock(), threading.Lock()

    def missing(self, op: str, key) -> dict:
        """The error record of reading ``key`` for ``op``: its poison, or a missing key."""
        return self.poisoned.get(key) or {
            "op": op,
            "shard": None,
            "worker": self.index,
            "cause": f"KeyError: shard {key} is not on worker {self.index}",
        }

    # ------------------------------------------------------------------ keys
    def _free(self, keys):
        store, poisoned = self.store, self.poisoned
        for k in keys:
            self._recycle(store.pop(k, None))
            poisoned.pop(k, None)
        if self.cow:
            self.cow.difference_update(keys)

    def _arg(self, a, refs):
        """The value of operand ``a`` (:class:`Key`, :class:`Const`, :class:`Ref` or
        :class:`Mail`)."""
        kind = type(a)
        if kind is Key:
            arr = self.store.get(a.key)
            if arr is None:
                raise Poisoned(self.missing("read", a.key))
            return arr if a.slices is None else arr[a.slices]
        if kind is Const:
            v = a.value
            if isinstance(v, np.ndarray):
                return self.backend.to_device(v)
            if type(v) is Failed:  # (an export the driver inlined: its error)
                raise Poisoned(v.record)
            return v
        v = self._mailed(a.tag, a.timeout) if kind is Mail else refs[a.index]
        if isinstance(v, Failed):
            raise Poisoned(v.record)
        with self._count_lock:
            self.received_bytes += getattr(v, "nbytes", 0)
        return self.backend.to_device(v)

    def _mailed(self, tag, timeout):
        """A :class:`Mail` operand's value (the mailbox belongs to the worker proper)."""
        raise Poisoned({"op": "transfer", "shard": None, "worker": None, "cause": "no mailbox"})

    def _export(self, key, sl):
        arr = self.store.get(key)
        if arr is None:
            return Failed(self.missing("export", key))
        part = arr if sl is None else arr[sl]
        part = self.backend.to_host(part)
        self.sent_bytes += part.nbytes
        return np.array(part, copy=True) if self.copy_exports else np.asarray(part, order="C")

    def fetch(self, items):
        """Host copies of ``(key, slices)`` items; a failed shard comes back as its error."""
        out = []
        for key, sl in items:
            arr = self.store.get(key)
            if arr is None:
                out.append(Failed(self.missing("read", key)))
                continue
            part = self.backend.to_host(arr if sl is None else arr[sl])
            self.sent_bytes += part.nbytes
            out.append(np.array(part, copy=True) if self.copy_exports else part)
        return out

    def _drop_range(self, lo, hi, keep):
        keep = set(keep)
        for k in [k for k in self.store if lo <= k < hi and k not in keep]:
            self._recycle(self.store.pop(k, None))
        for k in [k for k in self.poisoned if lo <= k < hi and k not in keep]:
            del self.poisoned[k]
        self.cow = {k for k in self.cow if k in self.store}

    # ------------------------------------------------------------------ publishing
    def _alias(self, src, dst, errors):
        arr = self.store.get(src)
        if arr is None:
            rec = self.missing("publish", src)
            self.poisoned[dst] = rec
            errors.append(dict(rec, cascade=False))
            return
        self.store[dst] = readonly_view(arr)
        self.cow.add(dst)
        self.published_seen = True

    def _detach(self, outs):
        """Copy on write: before writing into ``outs``, give every published snapshot that
        shares their memory a copy of its own (the writer keeps its views intact); a target
        that is itself read-only (a reader's reshape that kept the snapshot's memory) gets
        its own writable copy."""
        store = self.store
        for k in outs:
            tgt = store.get(k)
            if tgt is None:
                continue
            if isinstance(tgt, np.ndarray) and not tgt.flags.writeable:
                store[k] = tgt = tgt.copy()
            for p in [p for p in self.cow if p in store]:
                if self.xp.may_share_memory(store[p], tgt):
                    store[p] = readonly_view(store[p].copy())
                    self.cow.discard(p)

    # ------------------------------------------------------------------ buffer pool
    def _recycle(self, arr):
        """Keep a freed block for reuse: a fresh allocation of a big block costs page faults
        (the kernel zeroes every page; on a VM the host maps it too), a reused one is
        mapped already. Past the cap (this worker's share, :data:`POOL_MAX_BYTES` at most)
        the blocks pooled longest ago go first: one-off shapes must not fill the pool for
        good. ``arr=None`` only trims the pool to the cap."""
        if not self.pool and not self._returned and (arr is None or arr.nbytes < POOL_MIN_BYTES):
            return  # (the usual free of a small block, without the lock: nothing to do)
        with self._pool_lock:  # (inline: a wrapper's frame would hold arr)
            if self._returned:
                self._drain()
            if not self.pool and (arr is None or arr.nbytes < POOL_MIN_BYTES):
                return  # (the usual free of a small block: nothing to keep, nothing to trim)
            keep = (
                arr is not None
                and POOL_MIN_BYTES <= arr.nbytes
                and arr.flags.owndata
                and arr.flags.c_contiguous
                and sys.getrefcount(arr) <= 2  # else a view elsewhere still uses its memory
            )
            self._keep(arr if keep else None)

    def empty_pool(self) -> None:
        """Drop every pooled block, the cap kept (a traced run then sees each block it
        holds allocated, none lent from what earlier work freed)."""
        cap, self.pool_max = self.pool_max, 0
        self._recycle(None)
        self.pool_max = cap

    def _keep(self, block) -> None:
        """Pool ``block`` (None: none) after trimming the oldest blocks to make room."""
        cap = self._pool_cap()
        size = 0 if block is None or block.nbytes > cap else block.nbytes
        pool = self.pool
        while pool and self.pool_bytes + size > cap:
            # dicts keep insertion order: the block pooled longest ago first
            old = pool.pop(next(iter(pool)))
            self.pool_bytes -= old.nbytes
            if not old.flags.owndata and type(old) is np.ndarray:
                release(old)  # a part: its block lives on while another part is lent
        if size:
            pool[id(block)] = block
            self.pool_bytes += size

    def _drain(self) -> None:
        """Pool the blocks whose leases ended (their last view died) since the last call."""
        returned = self._returned
        while returned:
            self._keep(returned.pop())

    def _pool_cap(self) -> int:
        """This worker's pool cap: its share (the ``Pool`` command), at most
        :data:`POOL_MAX_BYTES` per thread of its CPU share (read at each call: tests lower
        it)."""
        ceiling = POOL_MAX_BYTES * self.pool_threads
        return ceiling if self.pool_max is None else min(self.pool_max, ceiling)

    def _take(self, shape, dtype):
        """A block of ``shape``/``dtype`` from the pool (contents undefined), or None.

        The best fit: the smallest pooled block of at least the bytes asked for (and at
        most :data:`LEND_WASTE` times them). A block of exactly that shape and dtype is
        handed out itself; a larger one lends its leading bytes (:class:`Lease`), the rest
        (1 MiB or more) pooled on its own for the next request, and the loan comes back to
        the pool when the last view of it dies. Either way what is in use is out of the
        pool: never lent twice."""
        if not self.pool and not self._returned:
            return None  # (the usual answer, without the lock: nothing pooled)
        with self._pool_lock:  # (kernels on threads take blocks at once)
            if self._returned:
                self._drain()
            if not self.pool:
                return None
            dtype = np.dtype(dtype)
            shape = tuple(shape)
            need = math.prod(shape) * dtype.itemsize
            if need * LEND_WASTE < POOL_MIN_BYTES or dtype.hasobject:
                return None  # (no pooled block is that small: a small result's quick answer)
            best = None
            for block in self.pool.values():
                n = block.nbytes
                if need <= n <= need * LEND_WASTE and (best is None or n < best.nbytes):
                    if type(block) is np.ndarray or (block.shape == shape and block.dtype == dtype):
                        best = block  # (a device array is handed out only whole)
                        if n == need:
                            break
            if best is None:
                return None
            del self.pool[id(best)]
            self.pool_bytes -= best.nbytes
            if best.shape == shape and best.dtype == dtype and best.flags.owndata:
                return best
            flat = best.reshape(-1).view(np.uint8)
            cut = -(-need // 64) * 64  # the rest starts on a cache line (and any dtype's alignment)
            if best.nbytes - cut >= POOL_MIN_BYTES:
                self._keep(flat[cut:])
                flat = flat[:cut]
            return np.asarray(Lease(flat, need, self._returned)).view(dtype).reshape(shape)


LEND_WASTE = 4  # a block lends to requests of a quarter of its bytes or more


def _madvise():
    try:
        f = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):  # (no C library to ask, or no madvise in it)
        return None
    f.argtypes, f.restype = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int), ctypes.c_int
    return f


_MADVISE, _MADV_DONTNEED, _PAGE = _madvise(), 4, mmap.PAGESIZE


def release(part) -> None:
    """Hand the whole pages of ``part`` (free bytes of a block whose other parts are in
    use) back to the system: the block stays allocated while those parts live, but its
    free part need not hold memory meanwhile. The pages read as zeros when next touched.

    Examples
    --------
    >>> block = np.full(4 * _PAGE, 7, np.uint8)
    >>> release(block[_PAGE // 2 :])  # only whole pages inside the part: bytes before it stay
    >>> int(block[_PAGE // 2 - 1]), int(block[2 * _PAGE]) in (0, 7)
    (7, True)
    """
    if _MADVISE is None:
        return
    start = part.ctypes.data
    lo, hi = -(-start // _PAGE) * _PAGE, (start + part.nbytes) // _PAGE * _PAGE
    if hi > lo:
        _MADVISE(lo, hi - lo, _MADV_DONTNEED)


class Lease:
    """The leading ``nbytes`` of a pooled ``block`` on loan (NumPy arrays: the views made of
    it keep this object alive, whatever their chain). ``block`` may be a part of a larger
    one, which stays allocated while any of its parts is lent or pooled. When the last view
    dies the block goes on ``home``, a list the pool drains into itself at its next call:
    appending is all a collection at an arbitrary moment may safely do to the pool.

    Examples
    --------
    >>> home, block = [], np.zeros(64, np.uint8)
    >>> v = np.asarray(Lease(block, 16, home)).view(np.float64)
    >>> v.shape, home
    ((2,), [])
    >>> w = v[1:]
    >>> del v
    >>> home == []
    True
    >>> del w
    >>> home[0] is block
    True
    """

    __slots__ = ("__array_interface__", "block", "home")

    def __init__(self, block, nbytes: int, home: list):
        self.block, self.home = block, home
        self.__array_interface__ = {
            "data": (block.ctypes.data, False),
            "shape": (int(nbytes),),
            "typestr": "|u1",
            "version": 3,
        }

    def __del__(self):
        self.home.append(self.block)


class Failed:
    """Stands in for data that could not be produced (its error record travels instead)."""

    def __init__(self, record):
        self.record = record


# a failed export crosses the driver's wire and the mailboxes as its error record
codec.register(Failed, "failed", lambda f: f.record, Failed)


class Poisoned(Exception):
    """An operand's shard failed: the command reading it fails as a cascade of that error."""

    def __init__(self, record):
        super().__init__(record["cause"])
        self.record = record


def is_failed(v) -> bool:
    """Whether ``v`` (an export, a read value) stands in for data that failed.

    Examples
    --------
    >>> is_failed(Failed({"cause": "boom"})), is_failed(np.zeros(1))
    (True, False)
    """
    return isinstance(v, Failed)


def readonly_view(arr):
    """A view that refuses writes (NumPy; CuPy has no such flag), so a kernel that writes
    into a published snapshot by mistake fails instead of changing it."""
    v = arr.view()
    if isinstance(v, np.ndarray):
        v.flags.writeable = False
    return v
