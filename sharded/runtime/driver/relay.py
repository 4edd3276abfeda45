"""Relay actors: the driver's fan-out beyond one process.

One Ray actor call costs the driver about 0.2 ms of CPU on a busy 2-core machine (Ray's
submission path: argument serialization, the task spec, gRPC; measured in the guide's
"Scale" section), so a flush that calls every worker costs the driver ``workers x 0.2 ms``
and a read that starts kernels on 16 workers cannot take less than ~3 ms. With relays the
driver makes **one call per relay per flush**: the relay (a light actor, no CPU reserved)
makes the per-worker calls on its own core, keeps the handles of the batches it started, and
answers reads and syncs with one object.

Ordering: every call to a worker comes from its relay, in the order the driver sent them
(Ray runs the calls of one caller to one actor in order), so a worker sees exactly the order
it would see from the driver. Data exported by a worker for another one stays in the relay's
table (a driver-made handle id -> ObjectRef) and is passed by reference, worker to worker;
only a transfer between workers of two different relays shows the ref to the driver.

Errors of finished batches are collected by the relay and returned at the next ``fetch`` or
``sync``; back-pressure (at most ``max_inflight`` batches a worker) is applied in the relay,
which makes the driver's next call wait in turn.
"""

from __future__ import annotations

import collections
import os
import weakref

import ray
from ray.exceptions import NodeDiedError, ObjectLostError, RayActorError, WorkerCrashedError

from ...errors import OpFailed
from ..commands import (
    Export,
    Forward,
    Held,
    LayoutCmds,
    Obj,
    Own,
    Send,
    Ship,
    Tree,
    TreeMail,
    TreeRefs,
)
from ..net.fanout import Listener
from ..net.tls import Tls
from ..packing import dump_batch, load_batch
from ..worker.store import is_failed
from . import recovery
from .executor import MAX_INFLIGHT
from .links import _wire

BATCH = 256  # sends held back for the next whole flush, at most
# Reads behind relays go over the driver's wire (.wire) while the session has at most WIRE_MAX
# workers (env SHARDED_WIRE_MAX): by wire the driver sends and takes one batch per worker, ~35
# us of its CPU each (16 workers: 0.63-0.76 ms per x.sum().item(), 2.3 ms of wall), through the
# relays one call per relay, ~1 ms and a wall of 14 ms at 16 workers. Past WIRE_MAX workers
# reads go by wire through the relays' wire relays (.wire_relays): one frame per relay
# (SHARDED_WIRE_RELAYS=0: through the relays' actor calls instead).
WIRE_MAX = int(os.environ.get("SHARDED_WIRE_MAX", "32"))
WIRE_RELAYS = os.environ.get("SHARDED_WIRE_RELAYS", "1") != "0"
# what says a worker or its data is gone (also a dependent task's error's cause)
LOSS = (RayActorError, ObjectLostError, NodeDiedError, WorkerCrashedError)


class Relay:
    """Forwards batches from the driver to a group of workers (their actor handles).

    Examples
    --------
    >>> relay = RelayActor.remote({0: worker_actor})  # doctest: +SKIP
    >>> msg = Forward((Send(0, [], [], []),), [], [], None, True, False)
    >>> ray.get(relay.forward.remote(msg))  # doctest: +SKIP
    """

    def __init__(self, workers: dict, max_inflight: int = 8, put_min: int = 32):
        self.workers = workers  # global worker index -> actor handle
        self.exports: dict = {}  # handle id -> ObjectRef of an exported block
        self.pending = collections.defaultdict(collections.deque)  # w -> error-list refs
        self.errors: list = []
        self.max_inflight, self.put_min = max_inflight, put_min
        self.broken = None  # the loss that stopped this relay's stream (until ``quiet``)
        self.fan = None  # its wire relay (..net.fanout.Listener), once fan_open made it

    def forward(self, msg):
        """:meth:`_forward`, unless a loss stopped an earlier call half-way: the driver's
        calls queued behind it would name exports that call never made, so they raise that
        loss too, until the driver has recovered it (:meth:`quiet`)."""
        if self.broken is not None:
            raise self.broken
        try:
            return self._forward(msg)
        except LOSS as e:
            self.broken = e
            raise

    def _forward(self, msg):
        """``msg``: a :class:`~sharded.runtime.commands.Forward`, one argument, as each
        argument of an actor call costs the driver ~10-20 us to serialize.

        Start its ``sends`` in order: a ``Send`` is one worker's batch, whose ``args`` are
        ``Obj(i)`` (``objs[i]``, a ref the driver holds) or ``Held(hid)`` (an export made
        earlier through this relay), its exports kept under ``hids``; a ``Ship`` is a whole
        shipment, whose batches this relay composes (:meth:`_ship`).

        Returns ``{hid: ref}`` of the new exports (with ``ret``: the driver passes them to
        another relay's workers; else None), or with ``fetch`` = ``{w: items}``
        ``(errors, {w: values})`` (``fetch`` a list of export handle ids: ``(errors,
        [values])``, the exports forgotten) once those values are read (``barrier``: after every
        batch of this relay finished, so errors of earlier ops surface with the read)."""
        shared = {}
        out = {}
        for send in msg.sends:
            if type(send) is Ship:  # a whole shipment: this relay composes its workers' batches
                self._ship(send, msg.objs, out)
                continue
            refs = self._refs(send.args, msg.objs)
            cmds = send.cmds
            head = cmds[0] if cmds else None
            if type(head) is LayoutCmds and head.ref is None and len(head.cmds) >= self.put_min:
                # layout commands shared by every worker: serialized once, passed by ref
                # (appended last, so the batch's own Ref indices stay valid)
                if id(head.cmds) not in shared:
                    shared[id(head.cmds)] = ray.put(head.cmds)
                cmds = [LayoutCmds(len(refs), None)] + list(cmds[1:])
                refs.append(shared[id(head.cmds)])
            exps = self._start(send.w, cmds, refs, len(send.hids))
            for h, r in zip(send.hids, exps):
                self.exports[h] = out[h] = r
        for h in msg.forget:  # after the sends: this call's own batches may still read them
            self.exports.pop(h, None)
        fetch = msg.fetch
        if fetch is None:
            return out if msg.ret else None
        if isinstance(fetch, dict):
            vals = {w: self.workers[w].fetch.remote(items) for w, items in fetch.items()}
        else:  # exports of the batches just sent (the read rode in them): one hop less
            vals = [self.exports.pop(h) for h in fetch]
        if msg.barrier:
            self._drain()
        if isinstance(fetch, dict):
            got = dict(zip(vals, ray.get(list(vals.values()))))
        else:
            got = ray.get(vals)
        errors, self.errors = self.errors, []
        return errors, got

    def _refs(self, args, objs) -> list:
        """A batch's refs from their relay args (:class:`Obj`, :class:`Held`)."""
        return [objs[a.index] if type(a) is Obj else self.exports[a.hid] for a in args]

    def _start(self, w, cmds, refs, nret):
        """Start one batch on worker ``w`` (``nret`` values besides its error list, returned
        as refs); back-pressure: at most ``max_inflight`` unfinished batches a worker."""
        res = self.workers[w].run.options(num_returns=1 + nret).remote(cmds, *refs)
        errs, exps = (res[0], res[1:]) if nret else (res, [])
        q = self.pending[w]
        q.append(errs)
        if len(q) > self.max_inflight:
            self._record(ray.get(q.popleft()))
        return exps

    def _ship(self, ship, objs, out):
        """Compose and start the batches of one shipment (see :func:`ship`): a
        :class:`~sharded.runtime.commands.Ship`, the layout commands ``bc`` every worker of
        its ``order`` runs and, for the workers that have them, ``own[w]`` (an ``Own``).
        Reductions among ``bc`` link the batches here: a child's partials go to its parent's
        batch as refs, or with ``mail`` (the shipment's ``TreeMail``) straight to its
        mailbox."""
        bc, order, mail = ship.bc, ship.order, ship.mail
        packed = bc  # (as bytes: the driver packed them once; Ray carries bytes as they are)
        if type(bc) is bytes:
            bc = load_batch(bc)  # (read here for its trees; the workers get the bytes)
        kids, nout = {}, {}
        if any(type(c) is Tree for c in bc):
            order, kids, nout = _wire(bc, order)
        ref = ray.put(packed) if len(bc) >= self.put_min else None  # serialized once for all
        got = {}
        nothing = Own((), (), ())
        for w in order:
            own = ship.own.get(w, nothing)
            refs = self._refs(own.args, objs)
            batch = []
            if mail is not None:  # the partials go worker to worker (.mailbox)
                batch.append(mail)
            elif w in kids:  # the partials of its children, taken by its Tree commands
                batch.append(TreeRefs(len(refs)))
                refs += [got[c][i] for c, i in kids[w]]
            if bc:
                batch.insert(
                    0, LayoutCmds(None, packed) if ref is None else LayoutCmds(len(refs), None)
                )
                if ref is not None:
                    refs.append(ref)
            batch += own.cmds
            exps = self._start(w, batch, refs, len(own.hids) + nout.get(w, 0))
            for h, r in zip(own.hids, exps):
                self.exports[h] = out[h] = r
            if w in nout:
                got[w] = exps[len(own.hids) :]

    def sync(self):
        """Wait for every batch started so far; return (and forget) the errors seen."""
        self._drain()
        errors, self.errors = self.errors, []
        return errors

    def adopt(self, exports):
        """Exports replayed after a loss take the place of those they stand for."""
        self.exports.update(exports)

    def quiet(self):
        """Wait for every batch started so far, their errors dropped: they are part of a
        loss being recovered, whose replay goes to the workers directly after this."""
        for q in self.pending.values():
            for errs in q:
                try:
                    ray.get(errs)
                except Exception:  # a lost worker's batch, or one that read its data
                    pass
            q.clear()
        self.errors = []
        self.broken = None

    def ping(self):
        return True

    def fan_open(self, ident, host=None):
        """Start this relay's wire relay (mailbox number ``ident``) on ``host``, else on
        ``SHARDED_NET_HOST`` if the node sets it, else on the node's address: ``(address,
        node id)``, or None when it cannot listen."""
        try:
            if self.fan is None:
                host = host or os.environ.get("SHARDED_NET_HOST") or ray.util.get_node_ip_address()
                self.fan = Listener(ident, host)
            return self.fan.address, ray.get_runtime_context().get_node_id()
        except OSError:
            return None

    def fan_peers(self, children, key, tls=None):
        """The mailboxes of its workers and the session key (sent through Ray, never over
        a socket); ``tls``: the session certificate and key (PEM) of a TLS session."""
        self.fan.set(children, key, None if tls is None else Tls.from_pem(*tls))

    def rebind(self, w, actor):
        """Worker ``w`` is now ``actor`` (a replacement under the same name)."""
        self.workers[w] = actor

    def held(self) -> dict:
        """``{handle id: ref}`` of every export held (kept by the driver at a recovery cut:
        a replay may need those made before the cut)."""
        return dict(self.exports)

    def call(self, w, method, *args):
        """Call ``method`` of worker ``w`` after its queued batches and return the value."""
        return ray.get(getattr(self.workers[w], method).remote(*args))

    def _drain(self):
        refs = [r for q in self.pending.values() for r in q]
        for q in self.pending.values():
            q.clear()
        for errs in ray.get(refs):
            self._record(errs)

    def _record(self, errs):
        self.errors.extend(e for e in errs if not e["cascade"])


RelayActor = ray.remote(num_cpus=0)(Relay)


def silent(actors) -> list:
    """Indices of the ``actors`` (workers or relays, each with a ``ping`` method) that are
    dead or do not answer a ping within :data:`~sharded.runtime.driver.recovery.PING_S`."""
    pings = [a.ping.remote() for a in actors]
    ready, _ = ray.wait(pings, num_returns=len(pings), timeout=recovery.PING_S)
    ready, out = set(ready), []
    for i, p in enumerate(pings):
        try:
            if p not in ready:
                raise TimeoutError(f"no answer within {recovery.PING_S}s")
            ray.get(p)
        except Exception:  # dead, or silent for PING_S
            out.append(i)
    return out


class Relayed:
    """The driver's half of relays: a mixin of
    :class:`~sharded.runtime.driver.ray_executor.RayExecutor` (whose state and waits it uses) that
    sends a flush's batches through relay actors once ``_start_relays`` made them, and reads
    through them; without relays every method here defers to the executor's own path.

    Examples
    --------
    >>> ex = RayExecutor(16)  # doctest: +SKIP
    >>> len(ex._relays)  # doctest: +SKIP
    1
    """

    _relays: list = []
    _fan_on = False  # reads go through the relays' wire relays (.wire_relays)

    def _start_relays(self, fanout):
        """Relay actors of at most ``fanout`` workers each (worker ``w`` to relay ``w % r``)."""
        n = len(self._actors)
        r = -(-n // fanout)
        # worker w goes to relay w % r: neighbouring shards (on different nodes) spread out
        self._relay_of = [w % r for w in range(n)]
        self._relays = [self._new_relay(i) for i in range(r)]
        self._outbox = [[] for _ in range(r)]  # per relay: sends of the current flush
        self._objs = [[] for _ in range(r)]  # per relay: driver-held refs of those sends
        self._forget = [[] for _ in range(r)]
        self._hid = 0
        self._hwhere: dict = {}  # export handle id -> (relay, forward ref)
        self._hfixed: dict = {}  # export handle id -> its data's ref, known to the driver
        self._fwd = collections.deque()
        self._orphans: set = set()  # workers of a relay that died, to be replaced

    def _new_relay(self, i):
        group = {w: a for w, a in enumerate(self._actors) if self._relay_of[w] == i}
        return RelayActor.options(max_concurrency=1).remote(group, MAX_INFLIGHT)

    def _dead_relays(self) -> list:
        """Workers of the relays that died (each replaced by a fresh relay): the exports
        their relay held went with it, so they are rebuilt as if they were lost too."""
        out = self._orphans  # (a loss's first look found them: until they are replaced)
        for i in silent(self._relays):  # a fresh relay takes over
            try:
                ray.kill(self._relays[i])
            except Exception:  # already gone
                pass
            self._relays[i] = self._new_relay(i)
            out.update(w for w, j in enumerate(self._relay_of) if j == i)
        return sorted(out)

    def _relay_dispatch(self, w, cmds, refs, nexp):
        r = self._relay_of[w]
        if unsent_elsewhere(self, r, refs):
            self._post(True)
        args, hids = relay_args(self, r, refs), new_handles(self, r, nexp)
        self._outbox[r].append(Send(w, cmds, args, [h.hid for h in hids]))
        self._nray[w] += 1
        return None, hids

    def _ship(self, w=None, nexp=0, reads=None):
        # through relays, each relay composes its workers' batches (relay.ship); trees whose
        # partials cross relays take the per-worker path, which links them here
        # (a read over the driver's wire: every worker's batch goes its own way, .wire)
        if self._relays and not self._wired and (len(self._relays) == 1 or not self._tedges):
            return ship(self, w, nexp, reads)
        return super()._ship(w, nexp, reads)

    def _drop_handle(self, hid):
        """A handle died (every command that reads it is queued): its relay forgets it."""
        src = self._hwhere.pop(hid, (None,))[0]
        self._hfixed.pop(hid, None)
        if src is not None:
            self._forget[src].append(hid)

    def _post(self, whole=True, fetch=None):
        """Send each relay the batches of this flush (one call per relay); with ``fetch``
        (``{relay: {w: items}}``) also read, and return ``{relay: forward ref}``. A partial
        flush (one worker's queue, an export) waits for the next whole one (the timer's,
        a read's) unless the sends pile up: a read then makes one call per relay."""
        if not self._relays:
            return {}
        if not whole and sum(map(len, self._outbox)) < BATCH:
            return {}
        ret = len(self._relays) > 1
        out = {}
        for r, sends in enumerate(self._outbox):
            if not sends and not (fetch and r in fetch):
                continue
            self._outbox[r], objs, self._objs[r] = [], self._objs[r], []
            forget, self._forget[r] = self._forget[r], []
            f = fetch.get(r) if fetch else None
            ref = self._relays[r].forward.remote(Forward(tuple(sends), objs, forget, f, True, ret))
            for send in sends:
                for h in send.hids:
                    if h in self._hwhere:  # else its handle died already (forgotten)
                        self._hwhere[h] = (r, ref)
            if f is not None:
                out[r] = ref
            else:
                self._fwd.append(ref)
        while len(self._fwd) > MAX_INFLIGHT:  # back-pressure, applied by the relays
            try:
                self._wait([self._fwd.popleft()])
            except recovery.Stale:  # workers were rebuilt meanwhile: what it stood for
                pass  # was replayed, and the recovery settled every forward in flight
        return out

    def _relay_fetch(self, items):
        with self._lock:
            by_w = collections.defaultdict(list)
            for i, (w, key, sl) in enumerate(items):
                by_w[w].append((i, key, sl))
            self._depth += 1  # flush without posting: the read rides in the same call
            try:
                # the values are exports of the workers' batches (no fetch call after them);
                # the relay reads them by handle once its batches finished
                for w, its in by_w.items():
                    self._q(w).extend(Export(k, sl) for _, k, sl in its)
                handles = self._ship(reads={w: len(its) for w, its in by_w.items()})
                self.flush_all()
            finally:
                self._depth -= 1
            want = collections.defaultdict(list)  # relay -> [(item index, handle)]
            for w, its in by_w.items():
                want[self._relay_of[w]] += [(i, h) for (i, _, _), h in zip(its, handles[w])]
            refs = self._post(True, {r: [h.hid for _, h in ih] for r, ih in want.items()})
            res = self._wait(list(refs.values()), "a read")
            for errs, _ in res:
                self._errors.extend(errs)
            if self._rec is not None and len(refs) == len(self._relays):
                self._rec.reported = len(self._rec.log)  # every relay's errors are in
            self._raise_errors()
            if self._rec is not None and self._rec.due():
                self._rec.cut()
        out = [None] * len(items)
        for (errs, got), r in zip(res, refs):
            for (i, _), arr in zip(want[r], got):
                if is_failed(arr):
                    rec = arr.record
                    raise OpFailed(rec["op"], rec["shard"], rec["worker"], rec["cause"])
                out[i] = arr
        return out

    def fetch(self, items, nbytes=0):
        if self.recorder is not None:
            self.recorder.read(items)  # a traced function may not read values (st.jit)
        with self._lock:  # a read with no refs queued goes over the driver's wire (.wire)
            few = self.num_workers <= WIRE_MAX or self._fan_on
            wire = few and self._wire_ok(nbytes) and not any(self._refs)
            if not self._relays or wire:
                return super().fetch(items, nbytes)
        self._check_open()
        return recovery.retried(self, lambda: self._relay_fetch(items), "a read")

    def sync(self):
        if not self._relays:
            return super().sync()
        self._check_open()
        with self._lock:
            # (if workers were rebuilt meanwhile, every batch has run again: wait anew)
            recovery.retried(self, self._sync_relayed, "st.synchronize()")
            self._raise_errors()
            if self._rec is not None and self._rec.due():
                self._rec.cut()

    def _sync_relayed(self):
        self.flush_all()
        self._collect(self._drain_inflight(), "st.synchronize()")  # (wire reads' batches)
        self._drain_relayed("st.synchronize()")

    def _drain_relayed(self, what):
        if not self._relays:
            return
        for errs in self._wait([r.sync.remote() for r in self._relays], what):
            self._errors.extend(errs)
        self._fwd.clear()
        if self._rec is not None:
            self._rec.reported = len(self._rec.log)
        if self._rec is not None:  # a replay may need exports made before the cut
            held = self._wait([r.held.remote() for r in self._relays], what)
            self._hfixed.update((h, ref) for d in held for h, ref in d.items() if h in self._hwhere)

    def _resolve(self, ref):
        if type(ref) is Handle:  # made through a relay before the cut (held then)
            got = self._hfixed.get(ref.hid)
            if got is None:
                raise recovery.unrecoverable(self, f"export {ref.hid} of a relay is not known")
            return got
        return ref

    def _adopted(self, replayed):
        """The replayed stand-ins of the relay exports whose handles live take their place,
        in the driver's table (a relay's forward may have failed; a handle may be used again
        later) and in their relays' (sends composed before the loss name them by handle id).
        Each entry goes when its handle dies (``_drop_handle``)."""
        per = collections.defaultdict(dict)
        for k, ref in replayed.items():
            if type(k) is int and k in self._hwhere:
                self._hfixed[k] = per[self._hwhere[k][0]][k] = ref
        for r, exports in per.items():
            self._relays[r].adopt.remote(exports)


def ship(ex, w=None, nexp: int = 0, reads=None):
    """The driver's half of a shipment through relays (``Executor._ship`` of a
    :class:`~sharded.runtime.driver.ray_executor.RayExecutor` with relays): each relay gets one
    :class:`~sharded.runtime.commands.Ship` and composes its workers' batches itself, so the
    driver's work no longer grows with the workers a shipment reaches, only with those that
    have commands of their own (``own``) or exports to return (worker ``w``'s ``nexp``, each
    worker of ``reads``). Trees must not link workers of two relays (the caller checks).
    Returns what ``Executor._ship`` returns: export handles of ``w``, or ``{v: handles}``."""
    bc, bt, ex._bcast, ex._btargets = ex._bcast, ex._btargets, [], {}
    ex._tedges, ex._kids, ex._bwork, ex._btree = {}, {}, False, False
    want = dict(reads or {})
    if w is not None:
        want[w] = nexp
    own = {v: (q, ex._refs[v]) for v, q in enumerate(ex._queues) if q}
    for v in own:  # taken at once: a free queued meanwhile goes to the next shipment
        ex._queues[v], ex._refs[v] = [], []
        ex._work.discard(v)
    ex._bmark = [0] * ex.num_workers
    targets = set(want).union(own, *bt.values())
    if any(unsent_elsewhere(ex, ex._relay_of[v], refs) for v, (_, refs) in own.items()):
        ex._post(True)  # data exported through another relay: sent first
    per = collections.defaultdict(dict)  # relay -> {worker: Own}
    logged = collections.defaultdict(dict)  # relay -> {worker: (cmds, refs, handles)}
    handles = {}
    for v in set(own).union(want):
        r = ex._relay_of[v]
        cmds, refs = own.get(v, ((), ()))
        hs = handles[v] = new_handles(ex, r, want.get(v, 0))
        per[r][v] = Own(cmds, relay_args(ex, r, refs), [h.hid for h in hs])
        logged[r][v] = (cmds, refs, hs)
    if len(ex._relays) == 1:
        groups = {0: sorted(targets)}
    else:
        groups = collections.defaultdict(list)
        for v in sorted(targets):
            groups[ex._relay_of[v]].append(v)
    if ex._wire is not None:
        ex._wire_drain(None)  # the workers run the wire batches sent before first
    try:  # packed once for every relay (Ray's serializer would call back for each record)
        packed = dump_batch(bc) if bc else bc
    except Exception:  # (only cloudpickle can carry them: Ray's serializer does)
        packed = bc
    mail = None
    if ex._mail and ex._mail_ray and any(type(c) is Tree for c in bc):
        ex._shipno += 1
        mail = TreeMail(ex.client, ex._shipno, ex.timeout)
    for r, order in groups.items():
        for v in order:  # (the Ray batches each worker runs before a later wire batch)
            ex._nray[v] += 1
        mine = per.get(r, {})
        hids = [h for e in mine.values() for h in e.hids]
        ex._outbox[r].append(Ship(packed, tuple(order), mine, mail, hids))
        if ex._rec is not None:  # (the same order of workers, so the same export order)
            ex._rec.record_ship(packed, order, {v: logged[r][v] for v in mine}, len(bc))
    if reads is not None:
        return {v: handles.get(v, []) for v in want}
    return handles.get(w, [])


class Handle:
    """Data a worker exported through a relay (the relay holds the ref under ``hid``)."""

    __slots__ = ("hid", "__weakref__")

    def __init__(self, hid):
        self.hid = hid


def unsent_elsewhere(ex, r, refs) -> bool:
    """Whether ``refs`` hold data exported through a relay other than ``r`` whose batch is
    not sent yet (it must be: a post starts new outboxes and object lists, so before the
    batch reading it takes its refs)."""
    return any(
        isinstance(h, Handle) and ex._hwhere[h.hid][0] != r and ex._hwhere[h.hid][1] is None
        for h in refs
    )


def relay_args(ex, r, refs) -> list:
    """A batch's ``refs`` as relay ``r`` finds them (``Obj(i)``: ``ex._objs[r][i]``).
    A loss found while asking another relay for an export is recovered, and the refs are
    looked at again (the export's replayed stand-in is known then)."""
    return recovery.retried(ex, lambda: _relay_args(ex, r, refs), "a transfer between relays")


def _relay_args(ex, r, refs) -> list:
    objs, args = ex._objs[r], []
    for ref in refs:
        if isinstance(ref, Handle) and ref.hid in ex._hfixed:  # replayed after a loss
            ref = ex._hfixed[ref.hid]
        if isinstance(ref, Handle):  # data another worker exported
            src, fwd = ex._hwhere[ref.hid]
            if src == r:
                args.append(Held(ref.hid))
                continue
            # exported through another relay: fetch the ref it returned, pass it on
            ref = ex._wait([fwd], "an export passed between relays")[0][ref.hid]
        args.append(Obj(len(objs)))
        objs.append(ref)
    return args


def new_handles(ex, r, n) -> list:
    """``n`` handles of data a batch through relay ``r`` exports (each forgotten by the
    relay once it dies: ``ex._drop_handle``)."""
    hids = []
    for _ in range(n):
        h = Handle(ex._hid)
        weakref.finalize(h, ex._drop_handle, ex._hid)
        ex._hwhere[ex._hid] = (r, None)
        ex._hid += 1
        hids.append(h)
    return hids
