"""One client's side of publishing: keys and records only (``sharded.service`` makes tensors).

The registry is reached through ``reg``, an object with the methods of
:class:`~sharded.runtime.service.catalog.Registry` minus the client bookkeeping: an
:class:`InProcessRegistry` for a private session (its frees go through this client's own
queues, so they run after this client's reads), or the proxy of the namespace's registry actor
(:mod:`sharded.runtime.service.namespace`, which sends frees to the workers itself).

A tensor obtained with ``get`` holds its version until it is dropped. Its finaliser only
queues the release (finalisers run at arbitrary points, even inside a flush); :meth:`drain`
sends the queued releases, after shipping and waiting for every command this client queued
before, so a release never overtakes a read of the keys it frees. It runs at the start of
every publish/get/list/unpublish call and, in a named namespace, from the heartbeat thread.
"""

from __future__ import annotations

import collections

from ..commands import Alias
from .catalog import Registry, check_name

# Registry methods that return actions ({worker: [command]}) rather than data.
ACTION_METHODS = frozenset({"commit", "release", "unpublish", "unregister"})


class InProcessRegistry:
    """A :class:`Registry` in this process whose frees are queued on ``ex``'s workers."""

    def __init__(self, ex):
        self.ex = ex
        self.reg = Registry(num_workers=ex.num_workers)

    def __getattr__(self, method):
        fn = getattr(self.reg, method)
        if method not in ACTION_METHODS:
            return fn

        def call(*args):
            self.ex.send(fn(*args))

        return call


class PublishClient:
    """Publish, acquire, release and list for the client ``ex.client`` of a namespace."""

    def __init__(self, ex, reg):
        self.ex, self.reg = ex, reg
        self.pending = collections.deque()  # versions dropped, release not yet sent

    def publish(self, name, workers, keys, meta) -> int:
        """Alias the shards ``keys`` (on ``workers``) under fresh keys, wait until that ran,
        then make them the current version of ``name``; returns the committed record."""
        check_name(name)
        self.drain()
        ex = self.ex
        ex._check_open()
        pub = tuple(ex.new_key() for _ in keys)
        by_w = collections.defaultdict(list)
        for w, src, dst in zip(workers, keys, pub):
            by_w[w].append(Alias(src, dst))
        ex.send(by_w)
        try:
            ex.sync()  # an op that failed making x fails here, before anything is published
        except BaseException:
            ex.free_pairs(zip(workers, pub))
            raise
        record = dict(meta, workers=tuple(workers), keys=pub)
        self.reg.commit(ex.client, name, record)
        return record

    def acquire(self, name) -> dict:
        """The current record of ``name``, held by this client until :meth:`release_later`."""
        self.drain()
        self.ex._check_open()
        return self.reg.acquire(self.ex.client, check_name(name))

    def release_later(self, version) -> None:
        """Called by finalisers: never blocks, never takes a lock."""
        self.pending.append(version)

    def drain(self) -> None:
        """Send the releases queued since the last call (see the module docstring)."""
        if not self.pending or self.ex.closed:
            return
        got = []
        while self.pending:
            try:
                got.append(self.pending.popleft())
            except IndexError:  # another thread drained meanwhile
                break
        self.ex.quiesce()
        for v in got:
            self.reg.release(self.ex.client, v)

    def unpublish(self, name) -> None:
        self.drain()
        self.reg.unpublish(check_name(name))

    def names(self) -> list:
        self.drain()
        return self.reg.names()

    def entries(self) -> list:
        self.drain()
        return self.reg.entries()
