"""The name registry of published tensors, and the key spaces of the clients of a namespace.

A plain class with no Ray import: a private session (in-process or Ray) keeps one in the
driver; a named namespace wraps it in the detached actor ``sharded-registry``
(:mod:`sharded.runtime.service.namespace`), shared by every client of the namespace.

Key spaces
----------
Shard keys are integers handed out by each client's own counter (``Executor.new_key``: one
``next()``, no round trip). Client ``c`` owns the range ``[c << KEY_BITS, (c + 1) << KEY_BITS)``;
a private session is client 0 (keys ``1, 2, ...``, as before namespaces existed), clients of a
named namespace get ``1, 2, ...`` from the registry when they join. So several clients never
collide on a shared worker, and a worker can drop everything a client left behind with one
range command, whatever the client managed to free before it died.

Published tensors
-----------------
``publish`` aliases each shard of the tensor under a fresh key of the publisher's range (no
copy; the worker copies the snapshot on write if the publisher later writes into that memory),
then ``commit`` makes it the current version of the name. The registry records every live
version: its metadata, keys, and holders (clients that got it and did not drop it yet). A
version is freed when it is neither current nor held. A client that leaves (``unregister``) or
whose lease runs out (``expire``: no heartbeat for ``lease_s``) loses its holds, and every worker
drops the client's key range except the keys of live versions, which outlive their publisher.

Methods that free memory return *actions*: ``{worker: [command, ...]}`` for the wrapper to send
(``Free`` and ``DropRange`` records of :mod:`sharded.runtime.commands`).

Examples
--------
>>> reg = Registry(num_workers=1)
>>> c = reg.register()
>>> rec = dict(shape=(2,), dtype="float32", bounds=((0, 2),), workers=(0,), keys=(c << 40 | 5,))
>>> reg.commit(c, "w", rec)
{}
>>> reg.acquire(c + 1, "w")["version"], reg.names()
(1, ['w'])
"""

from __future__ import annotations

import collections
import math
import threading
import time

from ...errors import ArgumentError, PublishedNotFound
from ..commands import DropRange, Free

KEY_BITS = 40
DEFAULT_LEASE_S = 15.0


def key_range(client: int) -> tuple:
    """The ``[lo, hi)`` range of shard keys that ``client`` owns.

    Examples
    --------
    >>> key_range(0), key_range(2)[0] == 2 << 40
    ((0, 1099511627776), True)
    """
    return client << KEY_BITS, (client + 1) << KEY_BITS


def owner_of(key: int) -> int:
    """The client whose counter made ``key``.

    Examples
    --------
    >>> owner_of(7), owner_of((3 << 40) + 7)
    (0, 3)
    """
    return key >> KEY_BITS


def check_name(name) -> str:
    """A published name: a non-empty ``str``."""
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"a published name must be a non-empty str, got {name!r}")
    return name


class Registry:
    """Names -> versions of published tensors, their holders, and the clients' leases.

    Thread-safe (one lock): the Ray actor's reaper thread calls :meth:`expire` meanwhile.
    """

    def __init__(self, num_workers: int = 0, lease_s: float = DEFAULT_LEASE_S, clock=None):
        self.num_workers = num_workers
        self.lease_s = float(lease_s)
        self.clock = clock or time.monotonic
        self.config = None
        self._lock = threading.RLock()
        self._clients: dict = {}  # client -> last heartbeat
        self._next_client = 1
        self._next_version = 1
        self._current: dict = {}  # name -> version id
        self._versions: dict = {}  # version id -> record (plus "name", "current", "holders")

    # ------------------------------------------------------------------ clients
    def configure(self, proposal: dict) -> dict:
        """The workers' configuration: the first client's proposal wins; later ones get it."""
        with self._lock:
            if self.config is None:
                self.config = dict(proposal)
                self.num_workers = int(proposal.get("total_workers", self.num_workers))
            return self.config

    def lease(self) -> float:
        return self.lease_s

    def get_config(self):
        """The workers' configuration, or None before the first client."""
        with self._lock:
            return self.config

    def register(self) -> int:
        """A new client number (its key range) and lease."""
        with self._lock:
            c = self._next_client
            self._next_client += 1
            self._clients[c] = self.clock()
            return c

    def heartbeat(self, client: int) -> bool:
        """Renew ``client``'s lease; False if it had already expired (its shards are gone)."""
        with self._lock:
            if client not in self._clients:
                return False
            self._clients[client] = self.clock()
            return True

    def clients(self) -> list:
        with self._lock:
            return sorted(self._clients)

    def unregister(self, client: int) -> dict:
        """``client`` leaves: drop its holds and its unpublished shards."""
        with self._lock:
            self._clients.pop(client, None)
            acts = collections.defaultdict(list)
            for vid in list(self._versions):
                rec = self._versions[vid]
                if rec["holders"].pop(client, None) is not None:
                    self._maybe_free(vid, acts)
            keep = collections.defaultdict(list)
            for rec in self._versions.values():
                for w, k in zip(rec["workers"], rec["keys"]):
                    if owner_of(k) == client:
                        keep[w].append(k)
            lo, hi = key_range(client)
            for w in range(self.num_workers):
                acts[w].append(DropRange(lo, hi, tuple(keep.get(w, ()))))
            return dict(acts)

    def expire(self, now=None) -> tuple:
        """Unregister every client whose lease ran out: ``(clients, actions)``."""
        with self._lock:
            now = self.clock() if now is None else now
            dead = [c for c, t in self._clients.items() if now - t > self.lease_s]
            acts = collections.defaultdict(list)
            for c in dead:
                for w, cmds in self.unregister(c).items():
                    acts[w] += cmds
            return dead, dict(acts)

    # ------------------------------------------------------------------ names
    def commit(self, client: int, name: str, record: dict) -> dict:
        """Make ``record`` (shape, dtype, bounds, workers, keys...) the current version of
        ``name``; the version it replaces is freed once no client holds it."""
        check_name(name)
        with self._lock:
            vid = self._next_version
            self._next_version += 1
            rec = dict(record, name=name, version=vid, publisher=client)
            rec["current"], rec["holders"] = True, collections.Counter()
            rec["nbytes"] = int(record.get("nbytes", 0))
            self._versions[vid] = rec
            old = self._current.get(name)
            self._current[name] = vid
            acts = collections.defaultdict(list)
            if old is not None:
                self._versions[old]["current"] = False
                self._maybe_free(old, acts)
            return dict(acts)

    def acquire(self, client: int, name: str) -> dict:
        """The current version of ``name``, now held by ``client`` until :meth:`release`."""
        with self._lock:
            vid = self._current.get(check_name(name))
            if vid is None:
                raise PublishedNotFound(
                    f"no tensor is published under {name!r} (published: {self.names()})"
                )
            rec = self._versions[vid]
            rec["holders"][client] += 1
            return _public(rec)

    def release(self, client: int, version: int) -> dict:
        """``client`` dropped one tensor of ``version``."""
        with self._lock:
            acts = collections.defaultdict(list)
            rec = self._versions.get(version)
            if rec is not None and rec["holders"].get(client):
                rec["holders"][client] -= 1
                if not rec["holders"][client]:
                    del rec["holders"][client]
                self._maybe_free(version, acts)
            return dict(acts)

    def unpublish(self, name: str) -> dict:
        """Remove ``name``; its data is freed once no client holds it."""
        with self._lock:
            vid = self._current.pop(check_name(name), None)
            if vid is None:
                raise PublishedNotFound(
                    f"no tensor is published under {name!r} (published: {self.names()})"
                )
            acts = collections.defaultdict(list)
            self._versions[vid]["current"] = False
            self._maybe_free(vid, acts)
            return dict(acts)

    def names(self) -> list:
        with self._lock:
            return sorted(self._current)

    def entries(self) -> list:
        """Every live version (current or still held), for ``sharded service status``."""
        with self._lock:
            out = []
            for rec in self._versions.values():
                pub = _public(rec)
                pub["holders"] = sorted(rec["holders"])
                out.append(pub)
            return sorted(out, key=lambda r: (r["name"], r["version"]))

    def _maybe_free(self, vid, acts) -> None:
        rec = self._versions[vid]
        if rec["current"] or rec["holders"]:
            return
        del self._versions[vid]
        for w, k in zip(rec["workers"], rec["keys"]):
            acts[w].append(Free((k,)))


def _public(rec) -> dict:
    out = {k: v for k, v in rec.items() if k not in ("holders", "current")}
    out.setdefault("nbytes", 0)
    return out


def record_nbytes(shape, itemsize) -> int:
    return int(math.prod(shape)) * int(itemsize)
