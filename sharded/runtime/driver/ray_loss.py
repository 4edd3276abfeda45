"""What :class:`~sharded.runtime.driver.ray_executor.RayExecutor` adds to find and rebuild
lost worker actors: the loss hooks of its :class:`~.transport.Transport` (:mod:`.recovery`
calls them), as :mod:`.local_loss` does for in-process workers.

A dead or silent actor (a bounded ping, :func:`~.relay.silent`; a relay's workers count as
lost with their relay) is killed and started again under the same name, on its node if that
node is alive, else on the live node with the fewest workers; a snapshot is the actor's
``snapshot`` as two object refs (size, state).
"""

from __future__ import annotations

import collections
import time

import ray

from ..net.wire import TYPES as WIRE
from . import recovery
from .relay import Handle, silent

READY_TIMEOUT_S = 120  # the most an actor may take to start (and to answer its first call)
SETTLE_TIMEOUT_S = 60  # the most a recovery waits for the batches in flight at a loss


class RayLoss:
    """The loss hooks of :class:`~sharded.runtime.driver.ray_executor.RayExecutor` (a mixin
    that uses its actors, relays, wire and waits)."""

    def _hkey(self, h, track=False):
        if type(h) is Handle:  # a relay's export: its handle id, never reused
            return h.hid
        if type(h) in WIRE:  # a wire batch's answer or export: its own key, never reused
            return h.key
        return h.binary()  # the object's id: naming it keeps no data alive

    def _settle(self, handles):
        if self._wire is not None:
            again = self._abort_mail if self._mail_addrs else None  # (see its docstring)
            self._wire.settle([h for h in handles if type(h) in WIRE], SETTLE_TIMEOUT_S, again)
            self._wire_drain(None, SETTLE_TIMEOUT_S)  # (those no wait held: none may run later)
        refs = [h for h in handles if isinstance(h, ray.ObjectRef)]
        if self._relays:  # also what the relays started: a replay must follow all of it
            refs += list(self._fwd)
            self._fwd.clear()
            # sends not posted yet are in the log: the replay makes them, not the relays
            self._outbox = [[] for _ in self._relays]
            self._objs = [[] for _ in self._relays]
            self._settle_refs(refs)
            self._settle_refs([r.quiet.remote() for r in self._relays])
            return
        self._settle_refs(refs)

    def _settle_refs(self, refs):
        refs = list(dict.fromkeys(refs))  # (a relay's forward may be waited on and queued)
        if not refs:
            return
        ready, _ = ray.wait(
            refs, num_returns=len(refs), timeout=SETTLE_TIMEOUT_S, fetch_local=False
        )
        try:
            ray.get(ready, timeout=SETTLE_TIMEOUT_S)
        except Exception:  # read one by one, so every failed one counts as handled
            for r in ready:
                try:
                    ray.get(r, timeout=SETTLE_TIMEOUT_S)
                except Exception:  # part of the loss being handled
                    pass

    def _dead_workers(self):
        dead = silent(self._actors)
        if self._relays:
            dead = sorted(set(dead).union(self._dead_relays()))
        return dead

    def _replace(self, w):
        name, opts, args, nid = self._spawn[w]
        try:
            ray.kill(self._actors[w])  # frees the name (it may still be alive but silent)
        except Exception:  # already gone
            pass
        if nid is not None:
            alive = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
            if nid not in alive:  # its node is gone: the live node with the fewest workers
                on = collections.Counter(i.node for i in self.workers)
                nid = min(alive, key=lambda n: on.get(n, 0))
                # no CPU reserved there: the node's CPUs may all be taken by its own workers
                self._spawn[w] = (name, dict(opts, num_cpus=0), args, nid)
        for _ in range(100):  # Ray releases the name of a dead actor asynchronously
            try:
                actor = self._start(*self._spawn[w])
                break
            except ValueError:
                time.sleep(0.1)
        else:
            raise recovery.unrecoverable(
                self, f"could not start a replacement {name}: the name stays taken"
            )
        node = self._get([actor.node_id.remote()], READY_TIMEOUT_S)[0]
        self._actors[w], self._run1[w] = actor, actor.run
        self._mail = False  # until every worker knows where the replacement listens
        self._nray[w] = 0
        if self._relays:  # (before any later forward: the driver's calls run in order)
            self._orphans.discard(w)
            self._relays[self._relay_of[w]].rebind.remote(w, actor)
        self.workers[w] = self.workers[w]._replace(name=name, node=node)

    def _snapshot(self, w):
        return tuple(self._actors[w].snapshot.options(num_returns=2).remote())
