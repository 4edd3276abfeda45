"""A worker's store: shards by key, their failure records, published snapshots and the pool
of freed blocks (the state half of :class:`~sharded.runtime.worker.core.Worker`; the
commands that act on it are :mod:`.core`'s).

A failing command poisons its outputs: the key maps to its error record instead of an array,
so the commands reading it fail as a cascade of that error (:class:`Poisoned`), and data
that could not be produced travels as a :class:`Failed` standing in for it.
"""

from __future__ import annotations

import sys

import numpy as np

from ...backend import get_backend
from ..commands import Const, Key, Mail
from ..net import codec

POOL_MIN_BYTES = 1 << 20
POOL_MAX_BYTES = 1 << 30
POOL_MEMORY_SHARE = 8  # a worker pools at most 1/8 of its share of its node's memory


def pool_share(node_memory, workers_on_node: int) -> int:
    """The bytes of freed blocks one worker may keep: an eighth of its share of its node's
    memory (Ray's ``memory`` resource), at most :data:`POOL_MAX_BYTES`, so that many workers
    on one node do not hold its memory idle.

    Examples
    --------
    >>> pool_share(64 << 30, 2) == POOL_MAX_BYTES, pool_share(64 << 30, 64) >> 20
    (True, 128)
    """
    per_worker = int(node_memory) // max(1, int(workers_on_node))
    return min(POOL_MAX_BYTES, per_worker // POOL_MEMORY_SHARE)


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
        self.pool: dict = {}
        self.pool_bytes = 0
        self.pool_max = None  # this worker's cap (None: POOL_MAX_BYTES), set after placement
        self.cow: set = set()  # published keys that may still share memory with a writable shard
        self.published_seen = False  # no copy-on-write checks until something is published
        # bytes of the arrays this worker exported (reads, transfers, tree partials) and of
        # those its commands took from elsewhere (other workers' exports, the driver's puts)
        self.sent_bytes = self.received_bytes = 0

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
        (the kernel zeroes every page), a reused one is already mapped. Past the cap (this
        worker's share, :data:`POOL_MAX_BYTES` at most) the blocks pooled longest ago go
        first: one-off shapes must not fill the pool for good. ``arr=None`` only trims the
        pool to the cap."""
        if not self.pool and (arr is None or arr.nbytes < POOL_MIN_BYTES):
            return  # (the usual free of a small block: nothing to keep, nothing to trim)
        cap = self._pool_cap()
        keep = (
            arr is not None
            and POOL_MIN_BYTES <= arr.nbytes <= cap
            and arr.flags.owndata
            and arr.flags.c_contiguous
            and sys.getrefcount(arr) <= 2  # else a view elsewhere still uses its memory
        )
        pool = self.pool
        while pool and self.pool_bytes + (arr.nbytes if keep else 0) > cap:
            old = next(iter(pool))  # dicts keep insertion order: the oldest shape first
            self.pool_bytes -= pool[old].pop(0).nbytes
            if not pool[old]:
                del pool[old]
        if not keep:
            return
        key = (arr.shape, arr.dtype.str)
        blocks = pool.pop(key, [])  # re-inserted last: the most recently pooled shape
        blocks.append(arr)
        pool[key] = blocks
        self.pool_bytes += arr.nbytes

    def _pool_cap(self) -> int:
        """This worker's pool cap: its share (the ``Pool`` command), at most
        :data:`POOL_MAX_BYTES` (read at each call: tests lower it)."""
        return POOL_MAX_BYTES if self.pool_max is None else min(self.pool_max, POOL_MAX_BYTES)

    def _take(self, shape, dtype):
        """A pooled block of ``shape``/``dtype`` (contents undefined), or None."""
        key = (tuple(shape), np.dtype(dtype).str)
        free = self.pool.get(key)
        if not free:
            return None
        arr = free.pop()
        if not free:
            del self.pool[key]
        self.pool_bytes -= arr.nbytes
        return arr


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
