"""The Ray executor: one named worker actor per CPU slot, spread over the cluster's nodes.

Workers are created with a hard node affinity, interleaved across nodes (node A, node B,
node A, ...), so the default round-robin shard placement puts neighbouring shards on
different nodes. Batches go out as ``actor.run.remote(batch, *refs)``: Ray resolves the refs
(data exported by other workers, or put by the driver) before the batch starts, and moves
them node to node through the object store, never through the driver. A timer thread flushes
queues that sit idle, so work starts even when the program does not read for a while.

In a named namespace (``shared=True``) the workers are detached and shared by every client of
the namespace: the first client creates them, the others find them by name; each client takes
a key range and a lease from the namespace's registry (:mod:`sharded.runtime.service.namespace`),
renews the lease from a heartbeat thread, and on close frees only its own shards.

A lost worker (killed actor, crashed process, removed node) is rebuilt by :mod:`.recovery`:
the hooks of :class:`~.ray_loss.RayLoss` find the dead actors (a bounded ping), start a
replacement under the same name (on its node if alive, else on the live node with the fewest
workers), and take snapshots.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid

import ray
from ray.exceptions import (
    GetTimeoutError,
    RayTaskError,
)
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from ...errors import BackendUnavailable, OpFailed, ShardingError, WorkerLost
from .. import metrics
from ..commands import Const, Pool, Threads, Transfer
from ..net.mailbox import KEY_BYTES
from ..net.tls import Tls, session_cert
from ..net.wire import READ_MAX as WIRE_READ_MAX
from ..net.wire import TYPES as WIRE
from ..net.wire import XFER_MAX as WIRE_XFER_MAX
from ..net.wire import Part, Wire
from ..service import namespace as ray_service
from ..service.client import PublishClient
from ..worker import threads
from ..worker.ray_actor import Actor
from ..worker.store import pool_share
from . import recovery
from .executor import Executor, WorkerInfo
from .nodes import memory_of
from .placement import by_room, room
from .ray_loss import READY_TIMEOUT_S, SETTLE_TIMEOUT_S, RayLoss
from .relay import LOSS, Relayed
from .wire_relays import WireRelays

FLUSH_INTERVAL_S = 0.005
# A session that names neither a worker count nor workers per node gets one worker per node,
# owning its cores (its shards' kernels on threads): the driver then sends one batch and
# takes one answer per node, not per core (the guide's "Which default serves which
# workload" has the measurements). ``num_workers=N`` alone keeps one worker per CPU.
WORKERS_PER_NODE = 1
# Above this many workers the driver talks to relay actors (one call per relay per flush)
# instead of to every worker; each relay serves at most RELAY_FANOUT workers. See
# sharded.runtime.driver.relay and the guide's "Scale" section for the measurements behind them.
RELAY_MIN = int(os.environ.get("SHARDED_RELAY_MIN", "8"))
RELAY_FANOUT = 32
# Every worker opens a mailbox (.mailbox) and reads go over the driver's wire (.wire), unless
# SHARDED_MAILBOX=0. Trees' partials go worker to worker in every shipment by the wire: a
# child lost before it sends its partial ends its wire connection, which every wait notices
# (Wire.wait, and Wire.check between the slices of a wait on Ray's results), so the take its
# parent waits in is aborted and the log replayed. Behind relays (whose batches wait for their
# workers on their own) only the shipments of reads and syncs link by mailbox. A Ray
# shipment's trees link through Ray unless SHARDED_MAILBOX=1: a later read of the root's
# result (or a relay) waits for the parent alone, whose take would wait out its bound.
MAILBOX = os.environ.get("SHARDED_MAILBOX", "auto")
# A wait longer than this looks at what finished so far, so that a lost worker's failed batch
# is noticed while another worker still runs (ray.get of a list returns at the last result).
WAIT_SLICE_S = 1.0


def _is_loss(e) -> bool:
    """Whether ``e`` says a worker or its data is gone (also as a dependent task's cause)."""
    return isinstance(e, LOSS) or isinstance(getattr(e, "cause", None), LOSS)


class _Handled(logging.Filter):
    """Drops Ray's "Unhandled error" reports about sharded's worker actors: a lost worker's
    results that nobody read are part of the loss that recovery (or WorkerLost) handles."""

    def filter(self, record):
        msg = record.getMessage()
        return not ("Unhandled error" in msg and ("_RayWorker" in msg or "Relay." in msg))


logging.getLogger("ray._private.worker").addFilter(_Handled())


def _slots(nodes, num_workers, per_node=None):
    """Node id of every worker: interleaved across nodes, at most each node's CPUs per round
    (or ``per_node`` workers on each node, ``st.init(workers_per_node=...)``)."""
    caps = {n["NodeID"]: int(n["Resources"].get("CPU", 0)) for n in nodes}
    order = [nid for nid, c in caps.items() if c > 0] or list(caps)
    out, used = [], dict.fromkeys(order, 0)
    room = caps if per_node is None else dict.fromkeys(order, per_node)
    while len(out) < num_workers:
        fresh = [nid for nid in order if used[nid] < room[nid]]
        for nid in fresh or order:  # oversubscribe evenly once every CPU has a worker
            if len(out) < num_workers:
                out.append(nid)
                used[nid] += 1
    return out, caps, used


class RayExecutor(metrics.TimedReads, RayLoss, WireRelays, Relayed, Executor):
    """Executor whose workers are Ray actors named ``sharded-worker-N``.

    Parameters
    ----------
    num_workers : int, optional
        Defaults to the cluster's CPU count.
    namespace : str
        Ray namespace holding this session's actors (names are unique per namespace).
    shared : bool
        Detached workers shared with the other clients of ``namespace`` (see the module
        docstring); the first client's worker counts win.
    workers_per_node : int, optional
        Place this many workers on each node with CPUs, each reserving and running its
        kernels on its share of the node's cores (1: one worker per node, its shards on
        threads). ``num_workers`` then defaults to nodes x this. Default: 1 when
        ``num_workers`` is not given either (:data:`WORKERS_PER_NODE`); with
        ``num_workers`` alone, one worker per CPU, interleaved over the nodes.
    tls : bool
        Run the mailboxes' sockets (the driver's wire, worker to worker) inside TLS 1.3 with
        a certificate made for this session (:mod:`~sharded.runtime.net.tls`).

    Examples
    --------
    >>> ex = RayExecutor(2, namespace="sharded-doc")  # doctest: +SKIP
    """

    kind = "ray"
    _wire = None  # the driver's line to the workers' mailboxes (.wire), when they have them

    def __init__(
        self,
        num_workers=None,
        namespace="sharded",
        gpu_workers=None,
        gpu_fraction=1.0,
        shared=False,
        tls=False,
        workers_per_node=None,
    ):
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        total = sum(n["Resources"].get("CPU", 0) for n in nodes)
        gpus = sum(n["Resources"].get("GPU", 0) for n in nodes)
        if not 0 < gpu_fraction <= 1:
            raise ShardingError(f"gpu_fraction must be in (0, 1], got {gpu_fraction!r}")
        if gpu_workers is None:
            gpu_workers = int(gpus / gpu_fraction + 1e-9)
        elif gpu_workers * gpu_fraction > gpus + 1e-9:
            raise BackendUnavailable(
                f"{gpu_workers} GPU workers of {gpu_fraction} GPU each "
                f"need {gpu_workers * gpu_fraction:g} GPUs; the cluster "
                f"has {gpus:g}"
            )
        cpu_nodes = sum(1 for n in nodes if n["Resources"].get("CPU", 0) > 0) or 1
        if num_workers is None and workers_per_node is None:
            workers_per_node = WORKERS_PER_NODE
        if num_workers is None:
            num_workers = max(1, int(total) if workers_per_node is None else 0)
            num_workers = max(num_workers, (workers_per_node or 0) * cpu_nodes)
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
            raise ShardingError(f"num_workers must be a positive int, got {num_workers!r}")
        if workers_per_node is not None and num_workers > workers_per_node * cpu_nodes:
            raise ShardingError(
                f"num_workers={num_workers} does not fit workers_per_node="
                f"{workers_per_node} on the cluster's {cpu_nodes} nodes with CPUs"
            )
        # the session certificate (.tls), made before any worker starts: a missing backend
        # fails here; sessions without mailboxes open no sockets to protect
        self._tls_pem = session_cert() if tls and MAILBOX != "0" and not shared else None
        self._tls = Tls.from_pem(*self._tls_pem) if self._tls_pem else None
        # free nodes first
        placement, caps, used = _slots(by_room(nodes), num_workers, workers_per_node)
        # Fractional CPUs when oversubscribed, so every actor fits on its node; a worker that
        # owns its node's cores (workers_per_node) reserves them (the smallest node's share).
        # (One per CPU by default, even with fewer workers than CPUs: detached workers of a
        # namespace holding every core would leave other namespaces no room.)
        cap = 1.0 if workers_per_node is None else float("inf")
        need = min([cap] + [caps[n] / used[n] for n in used if used[n] and caps[n]])
        need = 1.0 if need == float("inf") else need
        names = [f"sharded-worker-{i}" for i in range(num_workers)] + [
            f"sharded-gpu-worker-{j}" for j in range(gpu_workers)
        ]
        opts = dict(namespace=namespace, max_concurrency=1, max_restarts=0)
        self.shared, self._reg = shared, None
        plan = dict(
            names=names,
            placement=placement,
            need=need,
            num_workers=num_workers,
            gpu_workers=gpu_workers,
            gpu_fraction=gpu_fraction,
            total_workers=len(names),
        )
        # room for the workers not yet running, before anything is made (.placement): the
        # plan of a namespace already configured is the one its first client made
        peek = ray_service.registry(namespace) if shared else None
        got = (peek.get_config() if peek is not None else None) or plan
        room(got["names"], got["placement"], got["need"], namespace, shared, got["gpu_fraction"])
        if shared:
            self._reg = ray_service.registry(namespace, create=True)
            cfg = self._reg.configure(plan)
            names, placement, need = cfg["names"], cfg["placement"], cfg["need"]
            num_workers, gpu_workers = cfg["num_workers"], cfg["gpu_workers"]
            gpu_fraction = cfg["gpu_fraction"]
            opts.update(lifetime="detached", get_if_exists=True)
        # how each actor is made: (name, options, arguments, node), also for a replacement;
        # the workers export Ray metrics tagged with the namespace, if the driver says so
        tag = namespace if metrics.enabled() else None
        self._spawn = [
            (
                names[i],
                dict(num_cpus=need, **opts),
                (i, "cpu", threads.share(caps[nid], used[nid]), tag),
                nid,
            )
            for i, nid in enumerate(placement)
        ]
        # GPU workers: Ray gives each its GPU (or a fraction of one) as CUDA device 0 of the
        # process; they are labelled cuda:0, cuda:1, ... across the cluster.
        self._spawn += [
            (
                names[num_workers + j],
                dict(num_cpus=0, num_gpus=gpu_fraction, **opts),
                (num_workers + j, "cuda:0", None, tag),
                None,
            )
            for j in range(gpu_workers)
        ]
        self._actors = [self._start(*spec) for spec in self._spawn]
        devices = ["cpu"] * num_workers + [f"cuda:{j}" for j in range(gpu_workers)]
        try:
            node_ids = ray.get([a.node_id.remote() for a in self._actors], timeout=READY_TIMEOUT_S)
        except GetTimeoutError:
            if not shared:
                self._kill()
            else:  # nothing half-made stays behind in the namespace
                ray_service.abandon(namespace)
            raise WorkerLost(
                f"{num_workers} worker actors did not start within "
                f"{READY_TIMEOUT_S}s (cluster CPUs: {total})"
            ) from None
        client = self._reg.register() if shared else 0
        super().__init__(
            [
                WorkerInfo(i, names[i], nid, devices[i], (self._spawn[i][2][2] or 1))
                for i, nid in enumerate(node_ids)
            ],
            client=client,
        )
        self.memory_bytes = memory_of(nodes, node_ids)
        self.namespace = namespace  # also the `session` tag of its Ray metrics (..metrics)
        self.metrics = metrics.DriverMetrics(namespace) if tag is not None else None
        if shared:
            self.set_recovery(
                False,
                "a shared namespace: this client's log cannot rebuild the other clients' shards",
            )
        self._stop, self._queued = threading.Event(), threading.Event()
        if shared:
            self.published = PublishClient(self, self._reg)
            self.lease_s = self._reg.lease()
            threading.Thread(target=self._beat, name="sharded-heartbeat", daemon=True).start()
        self._run1 = [a.run for a in self._actors]
        self._relays = []
        self._share_cores(nodes, node_ids, num_workers)  # direct calls: before any relay
        if not shared and len(self._actors) > RELAY_MIN:
            self._start_relays(RELAY_FANOUT)
        # the mailboxes' session key: sent to the workers through Ray (whose own channels
        # authenticate), never over the mailboxes' sockets (.channel)
        self._mail_addrs, self._mail_key = {}, os.urandom(KEY_BYTES)
        self._mail_host = self._local_host()
        self._mail_ray = MAILBOX == "1"
        self._nray = [0] * len(self._actors)  # Ray batches sent to each worker (.wire)
        if MAILBOX != "0" and not shared:
            self._wire = Wire(self._mail_key, self._tls, self._packer)
            self._open_mail(range(len(self._actors)))
            self._fan_start()  # past WIRE_MAX workers: the relays' wire relays
            # a relay's batch waits for its workers on its own: there, trees in shipments no
            # wait covers whole keep linking through Ray
            self._wait_sees_losses = not self._relays
        # sockets that carry the frames in the clear (st.init(tls=True) refuses such a session)
        self.plain_sockets = self._wire is not None and self._tls is None
        self._timer = threading.Thread(target=self._tick, name="sharded-flush", daemon=True)
        self._timer.start()

    @classmethod
    def open(
        cls,
        address=None,
        num_workers=None,
        gpu_workers=None,
        gpu_fraction=1.0,
        namespace=None,
        tls=False,
        workers_per_node=None,
        **_,
    ):
        """``st.init(executor="ray")``'s workers: ``(executor, owns_ray, address)``. With no
        ``address`` (nor ``RAY_ADDRESS``) and Ray not initialised, an embedded local Ray is
        started (and owned: stopped with the session); a named ``namespace`` shares detached
        workers with the namespace's other clients (``devices`` is the local executor's);
        ``tls`` runs the mailboxes' sockets inside TLS; ``workers_per_node`` places that
        many workers on each node, each owning its share of the node's cores."""
        owns = not ray.is_initialized()
        address = address or os.environ.get("RAY_ADDRESS") or None
        if owns:
            kw = dict(log_to_driver=False, configure_logging=False, namespace=namespace)
            if address:
                ray.init(address=address, **kw, **ray_service.attach_kw(address))
            else:  # "local": a new instance, never one that `ray start` left on this machine
                with threads.blas_env():  # (its workers' BLAS threads: threads.BLAS_ENV)
                    ray.init(address="local", include_dashboard=False, **kw)
        try:
            ex = cls(
                num_workers,
                namespace=namespace or f"sharded-{uuid.uuid4().hex[:8]}",
                gpu_workers=gpu_workers,
                gpu_fraction=gpu_fraction,
                shared=namespace is not None,
                tls=tls,
                workers_per_node=workers_per_node,
            )
        except BaseException:
            if owns:
                ray.shutdown()
            raise
        return ex, owns, address

    def set_recovery(self, on, reason="st.init(recovery=False)"):
        if on and self.shared:
            return  # recovery stays off there (the reason was given when it was turned off)
        super().set_recovery(on, reason)

    def net_counts(self) -> dict:
        return dict(self._wire.counts) if self._wire is not None else {}

    def _wire_ok(self, nbytes=0):
        return self._mail and self._wire.on and nbytes <= WIRE_READ_MAX

    def _wire_xfer_ok(self, nbytes):
        # (not with relays: their batches take refs the relays hold; large pieces go through
        # Ray's object store, which hands them over in shared memory)
        return nbytes <= WIRE_XFER_MAX and not self._relays and self._wire_ok(nbytes)

    def _inline(self, args):
        wired = [type(a) is Transfer and type(a.handle) is Part for a in args]
        if not any(wired):
            return args
        vals = self._wait([a.handle for a, w in zip(args, wired) if w], "an export")
        if self._rec is not None:  # the log keeps them (inline in the batch) until a cut
            self._rec.put_bytes += sum(getattr(v, "nbytes", 0) for v in vals)
        got = iter(vals)
        return tuple(Const.make((next(got),)) if w else a for a, w in zip(args, wired))

    @staticmethod
    def _start(name, opts, args, nid):
        if nid is not None:
            opts = dict(opts, scheduling_strategy=NodeAffinitySchedulingStrategy(nid, soft=False))
        return Actor.options(name=name, **opts).remote(*args)

    def _share_cores(self, nodes, node_ids, num_workers):
        """Once placed, each CPU worker's BLAS takes its share of its node's cores, and its
        pool of freed blocks a share of the node's memory (shared workers made by another
        client may sit elsewhere than this client planned)."""
        caps = {n["NodeID"]: n["Resources"].get("CPU", 0) for n in nodes}
        mem = {n["NodeID"]: n["Resources"].get("memory", 0) for n in nodes}
        per_node: dict = {}
        for nid in node_ids[:num_workers]:
            per_node[nid] = per_node.get(nid, 0) + 1
        cmds = {}
        for w, nid in enumerate(node_ids[:num_workers]):
            n = threads.share(caps.get(nid, 1), per_node[nid])
            cmds[w] = [Threads(n)]
            if mem.get(nid):
                cmds[w].append(Pool(pool_share(mem[nid], per_node[nid], n)))
        self.send(cmds)

    def _tick(self):
        t0 = time.monotonic()
        while not self._stop.is_set():
            self._queued.wait()  # asleep while nothing is queued (Executor._wake)
            # the next tick of a 5 ms grid, as a timer that never slept: work queued after
            # an idle spell ships 2.5 ms later on average, not a whole period later
            if self._stop.wait(FLUSH_INTERVAL_S - (time.monotonic() - t0) % FLUSH_INTERVAL_S):
                return
            self._queued.clear()
            if not (self._bcast or any(self._queues)):
                continue
            if not self._lock.acquire(blocking=False):
                self._queued.set()  # the driver is busy with the lock: next period
                continue
            try:
                if not self.closed:  # (by wire where it may: an actor call costs ~0.5 ms)
                    self.flush_wired()
            except Exception:  # surfaced by the next read instead
                pass
            finally:
                self._lock.release()

    def _beat(self):
        """Renew the lease; send the releases of dropped published tensors."""
        period = max(0.05, self.lease_s / 5)
        while not self._stop.wait(period):
            try:
                if not self._reg.heartbeat(self.client):
                    # The registry gave us up (we were silent too long) and our shards are
                    # gone: the session is over; tensors raise SessionClosed.
                    self.closed = True
                    return
                self.published.drain()
            except Exception:  # the registry is busy or gone: try again next period
                pass

    def quiesce(self):
        with self._lock:
            self.flush_all()
            refs = [r for d in self._inflight for r in d if type(r) not in WIRE]
            self._wire_drain(None, ray_service.CALL_TIMEOUT_S)
        if refs:
            ray.wait(refs, num_returns=len(refs), timeout=ray_service.CALL_TIMEOUT_S)

    def put(self, value):
        if self._rec is not None:  # the log keeps it alive until the next cut
            self._rec.put_bytes += getattr(value, "nbytes", 0)
        return ray.put(value)

    def _dispatch(self, w, cmds, refs, nexp):
        if self._wired and not refs:  # a read's batch: over the driver's wire (.wire)
            if self._fan_on:  # (through its relay's wire relay: one frame per relay)
                got = self._fan_add(w, cmds, nexp)
            else:
                got = self._wire.send(w, self._nray[w], cmds, nexp, self.timeout)
            if got is not None:
                return got
            if self._relays:  # (commands that do not pickle) the relays' batches run first
                self._post(True)
                self._drain_relayed("the batches before a read")
                return self._dispatch_direct(w, cmds, refs, nexp)
        if self._relays:
            self._wire_drain(w)
            return self._relay_dispatch(w, cmds, refs, nexp)
        return self._dispatch_direct(w, cmds, refs, nexp)

    def _dispatch_direct(self, w, cmds, refs, nexp):
        self._wire_drain(w)
        if type(cmds) is list:  # as bytes: Ray's serializer is 3x slower on records
            try:
                cmds = self._packer.pack(cmds)
            except Exception:  # (only cloudpickle can carry it: Ray's serializer does)
                pass
        if not nexp:
            out = self._run1[w].remote(cmds, *refs), []
        else:
            out = self._actors[w].run.options(num_returns=1 + nexp).remote(cmds, *refs)
            out = out[0], list(out[1:])
        self._nray[w] += 1
        return out

    def _stats(self, w):
        if self._relays:
            return self._relays[self._relay_of[w]].call.remote(w, "stats")
        return self._actors[w].stats.remote()

    def _ready(self, handles):
        if self._fan_pend:
            self._fan_send()
        if self._wire is not None and any(type(h) in WIRE for h in handles):
            refs = [h for h in handles if type(h) not in WIRE]
            flags = iter(self._ready(refs) if refs else ())
            wired = iter(self._wire.ready([h for h in handles if type(h) in WIRE]))
            return [next(wired) if type(h) in WIRE else next(flags) for h in handles]
        done, _ = ray.wait(handles, num_returns=len(handles), timeout=0, fetch_local=False)
        done = set(done)
        return [h in done for h in handles]

    def _get(self, handles, timeout=None):
        limit = self.timeout if timeout is None else timeout
        if self._fan_pend:  # (frames still filling: sent before anything waits)
            self._fan_send()
        if self._wire is not None and any(type(h) in WIRE for h in handles):
            t0 = time.monotonic()
            refs = [h for h in handles if type(h) not in WIRE]
            wired = [h for h in handles if type(h) in WIRE]
            try:
                self._wire.wait(wired, limit, lambda: self._probe(refs))
            except recovery.Late as e:  # (a wire relay's number names its workers)
                raise self._fan_late(e) if self._fan_on else e from None
            got = iter(self._get(refs, max(limit - time.monotonic() + t0, 0.1)) if refs else ())
            return [self._wire.value(h) if type(h) in WIRE else next(got) for h in handles]
        try:  # the usual case: everything answers within a slice
            return ray.get(handles, timeout=min(WAIT_SLICE_S, limit))
        except GetTimeoutError:
            pass
        except Exception as e:
            _raise_typed(e)
        return self._get_sliced(handles, limit)

    def _probe(self, refs):
        """Raise the loss, if any, among ``refs`` and the relays' forwards that finished."""
        refs = refs + list(getattr(self, "_fwd", ()))
        if refs:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0, fetch_local=False)
            try:
                ray.get(ready, timeout=SETTLE_TIMEOUT_S)
            except Exception as e:
                _raise_typed(e)

    def _get_sliced(self, handles, limit):
        """Wait slice by slice until every handle is ready (``ray.get`` of what finished in
        each, so a failure is raised at once) or ``limit`` s passed (:class:`recovery.Late`
        naming the workers whose results are missing)."""
        t0 = time.monotonic() - min(WAIT_SLICE_S, limit)  # the first slice, in _get
        rest = list(dict.fromkeys(h for h in handles if isinstance(h, ray.ObjectRef)))
        while rest:
            if self._wire is not None:  # (a lost child of a tree linked by mailbox)
                self._wire.check()
            left = limit - (time.monotonic() - t0)
            if left <= 0:
                raise recovery.Late(self._owners(rest), round(time.monotonic() - t0, 3))
            ready, rest = ray.wait(
                rest, num_returns=len(rest), timeout=min(WAIT_SLICE_S, left), fetch_local=False
            )
            try:
                ray.get(ready, timeout=SETTLE_TIMEOUT_S)
            except Exception as e:
                _raise_typed(e)
        try:
            return ray.get(handles, timeout=SETTLE_TIMEOUT_S)  # all ready: no wait
        except Exception as e:
            _raise_typed(e)

    def _owners(self, refs) -> list:
        """Indices of the workers whose calls made ``refs`` (a relay's: its workers)."""
        by_actor = {a._actor_id: w for w, a in enumerate(self._actors)}
        out = set()
        for r in refs:
            a = r.task_id().actor_id()
            if a in by_actor:
                out.add(by_actor[a])
            for i, actor in enumerate(self._relays):
                if actor._actor_id == a:
                    out.update(w for w, j in enumerate(self._relay_of) if j == i)
        return sorted(out)

    def close(self):
        self._stop.set()
        self._queued.set()
        if self.shared:
            # Our commands run first, then the registry drops our key range (but what we
            # published) and our holds; the shared workers stay.
            try:
                if not self.closed:
                    self.quiesce()
                self._reg.unregister(self.client)
            except Exception:  # the registry's lease expiry frees them instead
                pass
            with self._lock:
                super().close()
            return
        with self._lock:
            super().close()
            if self._wire is not None:
                self._wire.close()
            self._kill()

    def _kill(self):
        for a in self._actors + getattr(self, "_relays", []):
            try:
                ray.kill(a)
            except Exception:  # already gone
                pass


def _raise_typed(e):
    """Raise a ``ray.get`` failure as a loss (:class:`recovery.Lost`), an :class:`OpFailed`
    or as itself."""
    if isinstance(e, GetTimeoutError):  # (a wait on results already known to be ready)
        raise recovery.Late([], SETTLE_TIMEOUT_S) from None
    if _is_loss(e):  # (a dependent task's error: name the loss that caused it)
        cause = e.cause if isinstance(getattr(e, "cause", None), LOSS) else e
        raise recovery.Lost(f"{type(cause).__name__}: {_first_line(cause)}") from None
    if isinstance(e, RayTaskError):
        raise OpFailed("batch", None, -1, str(e)) from None
    raise e


def _first_line(e) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
