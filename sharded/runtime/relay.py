"""Relay actors: the driver's fan-out beyond one process.

One Ray actor call costs the driver about 0.2 ms of CPU on a busy 2-core machine (Ray's
submission path: argument serialization, the task spec, gRPC; measured in the README's
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
import weakref

import ray

from .wiring import _wire


class Relay:
    """Forwards batches from the driver to a group of workers (their actor handles).

    Examples
    --------
    >>> relay = RelayActor.remote({0: worker_actor})  # doctest: +SKIP
    >>> msg = ([(0, [], [], [])], [], [], None, True, False)
    >>> ray.get(relay.forward.remote(msg))  # doctest: +SKIP
    """

    def __init__(self, workers: dict, max_inflight: int = 8, put_min: int = 32):
        self.workers = workers  # global worker index -> actor handle
        self.exports: dict = {}  # handle id -> ObjectRef of an exported block
        self.pending = collections.defaultdict(collections.deque)  # w -> error-list refs
        self.errors: list = []
        self.max_inflight, self.put_min = max_inflight, put_min

    def forward(self, msg):
        """``msg`` = ``(sends, objs, forget, fetch, barrier, ret)``: one argument, as each
        argument of an actor call costs the driver ~10-20 us to serialize.

        Start ``sends`` = ``[(w, cmds, args, hids)]`` in order: ``args`` items are
        ``("o", i)`` (``objs[i]``, a ref the driver holds) or ``("h", hid)`` (an export
        made earlier through this relay); the batch's exports are kept under ``hids``.

        Returns ``{hid: ref}`` of the new exports (with ``ret``: the driver passes them to
        another relay's workers; else None), or with ``fetch`` = ``{w: items}``
        ``(errors, {w: values})`` (``fetch`` a list of export handle ids: ``(errors,
        [values])``, the exports forgotten) once those values are read (``barrier``: after every
        batch of this relay finished, so errors of earlier ops surface with the read)."""
        sends, objs, forget, fetch, barrier, ret = msg
        shared = {}
        out = {}
        for w, cmds, args, hids in sends:
            if w is None:  # a whole shipment: this relay composes its workers' batches
                self._ship(cmds, objs, out)
                continue
            refs = [objs[a[1]] if a[0] == "o" else self.exports[a[1]] for a in args]
            head = cmds[0] if cmds else ("",)
            if head[0] == "B" and head[1] is None and len(head[2]) >= self.put_min:
                # layout commands shared by every worker: serialized once, passed by ref
                # (appended last, so the batch's own ("r", i) indices stay valid)
                if id(head[2]) not in shared:
                    shared[id(head[2])] = ray.put(head[2])
                cmds = [("B", len(refs), None)] + list(cmds[1:])
                refs.append(shared[id(head[2])])
            exps = self._start(w, cmds, refs, len(hids))
            for h, r in zip(hids, exps):
                self.exports[h] = out[h] = r
        for h in forget:  # after the sends: this call's own batches may still read them
            self.exports.pop(h, None)
        if fetch is None:
            return out if ret else None
        if isinstance(fetch, dict):
            vals = {w: self.workers[w].fetch.remote(items) for w, items in fetch.items()}
        else:  # exports of the batches just sent (the read rode in them): one hop less
            vals = [self.exports.pop(h) for h in fetch]
        if barrier:
            self._drain()
        if isinstance(fetch, dict):
            got = dict(zip(vals, ray.get(list(vals.values()))))
        else:
            got = ray.get(vals)
        errors, self.errors = self.errors, []
        return errors, got

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

    def _ship(self, payload, objs, out):
        """Compose and start the batches of one shipment (see :func:`ship`): ``payload`` =
        ``(bc, order, own)``, the layout commands every worker of ``order`` runs and, for the
        workers that have them, ``own[w] = (cmds, args, hids)``. Reductions among ``bc`` link
        the batches here: a child's partials go to its parent's batch as refs."""
        bc, order, own = payload
        kids, nout = {}, {}
        if any(c[0] == "tree" for c in bc):
            order, kids, nout = _wire(bc, order)
        ref = ray.put(bc) if len(bc) >= self.put_min else None  # serialized once for all
        got = {}
        for w in order:
            cmds, args, hids = own.get(w, ((), (), ()))
            refs = [objs[a[1]] if a[0] == "o" else self.exports[a[1]] for a in args]
            batch = []
            if w in kids:  # the partials of its children, taken by its "tree" commands
                batch.append(("tref", len(refs)))
                refs += [got[c][i] for c, i in kids[w]]
            if bc:
                batch.insert(0, ("B", None, bc) if ref is None else ("B", len(refs), None))
                if ref is not None:
                    refs.append(ref)
            batch += cmds
            exps = self._start(w, batch, refs, len(hids) + nout.get(w, 0))
            for h, r in zip(hids, exps):
                self.exports[h] = out[h] = r
            if w in nout:
                got[w] = exps[len(hids) :]

    def sync(self):
        """Wait for every batch started so far; return (and forget) the errors seen."""
        self._drain()
        errors, self.errors = self.errors, []
        return errors

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


def ship(ex, w=None, nexp: int = 0, reads=None):
    """The driver's half of a shipment through relays (``Executor._ship`` of a
    :class:`~sharded.runtime.ray_executor.RayExecutor` with relays): each relay gets one entry
    ``(None, (bc, order, own), (), hids)`` and composes its workers' batches itself, so the
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
    if any(unsent_elsewhere(ex, ex._relay_of[v], refs) for _, refs in own.values()):
        ex._post(True)  # data exported through another relay: sent first
    per = collections.defaultdict(dict)  # relay -> {worker: (cmds, args, hids)}
    handles = {}
    for v in set(own).union(want):
        r = ex._relay_of[v]
        cmds, refs = own.get(v, ((), ()))
        hs = handles[v] = new_handles(ex, r, want.get(v, 0))
        per[r][v] = (cmds, relay_args(ex, r, refs), [h.hid for h in hs])
    if len(ex._relays) == 1:
        groups = {0: sorted(targets)}
    else:
        groups = collections.defaultdict(list)
        for v in sorted(targets):
            groups[ex._relay_of[v]].append(v)
    for r, order in groups.items():
        mine = per.get(r, {})
        hids = [h for e in mine.values() for h in e[2]]
        ex._outbox[r].append((None, (bc, tuple(order), mine), (), hids))
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
    """A batch's ``refs`` as relay ``r`` finds them (``("o", i)``: ``ex._objs[r][i]``)."""
    objs, args = ex._objs[r], []
    for ref in refs:
        if isinstance(ref, Handle):  # data another worker exported
            src, fwd = ex._hwhere[ref.hid]
            if src == r:
                args.append(("h", ref.hid))
                continue
            # exported through another relay: fetch the ref it returned, pass it on
            ref = ray.get(fwd)[ref.hid]
        args.append(("o", len(objs)))
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
