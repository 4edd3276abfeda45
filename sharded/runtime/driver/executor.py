"""Executors: queue per-shard commands per worker and ship them in batches.

An op never waits: it appends one command per shard to its worker's queue and returns. A queue
is flushed (one call carrying the whole batch) when data is read, when it reaches
:data:`MAX_BATCH` commands, when another worker needs data from it, by the Ray executor's timer,
and before a command taking refs joins work that would wait for them (:meth:`Executor._split`).
Batches from one driver run in order on each worker, so a command always sees the results of
the commands queued before it. At most :data:`MAX_INFLIGHT` batches per worker are outstanding
(back-pressure): past that, the driver waits for the oldest.

Commands are the records of :mod:`sharded.runtime.commands`. Errors travel back as records
and are raised, typed, at the next read (:class:`OpFailed` names the op and the shard). Every
batch sent is also logged (:mod:`.recovery`), so that a lost worker is rebuilt by replaying
the log: waits go through :meth:`.reading.Reading._wait`, which recovers and finishes the
interrupted call. How a batch reaches a worker, how a wait gets its results and how a loss is
found are an executor's :class:`~.transport.Transport` hooks: :class:`~.local.LocalExecutor`
runs the protocol in-process with :class:`~sharded.runtime.worker.core.Worker` objects, for
tests and for machines without Ray; :class:`~.ray_executor.RayExecutor` on Ray actors.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import threading

from ...errors import SessionClosed
from ..commands import (
    Free,
    Group,
    GroupFree,
    Kernel,
    LayoutCmds,
    LayoutSync,
    Mod,
    OnWorkers,
    Ref,
    Trace,
    Transfer,
    Tree,
    TreeMail,
    TreeRefs,
)
from ..packing import BatchPacker
from ..service.catalog import key_range
from . import posts, recovery
from .exporting import Exporting
from .links import cycle, wired
from .reading import Reading
from .transport import Transport

MAX_BATCH = 512
MAX_INFLIGHT = 8
TRANSFER_BYTES = 32 << 20  # the largest piece of data one export call carries


class WorkerInfo(
    collections.namedtuple("WorkerInfo", "index name node device threads", defaults=(1,))
):
    """Static facts about one worker: index, actor name, node id, device, and the threads
    its shards' kernels run on (its share of its node's cores: a default placement makes
    that many shards for it, :func:`sharded.core.dispatch.default_shards`)."""


class Executor(Reading, Exporting, Transport):
    """The protocol shared by every executor; subclasses say how a batch reaches a worker
    (the :class:`~.transport.Transport` hooks)."""

    kind = "base"
    # Bytes of memory the session's workers have in all, found once when the executor opens
    # (each executor says how); None when unknown. A new tensor larger than this is refused
    # at the call (core.dispatch.placement) rather than failing in a worker at a later read.
    memory_bytes: int | None = None
    # The session's Ray metrics (..metrics.DriverMetrics: reads, recoveries) and the Ray
    # namespace of its workers (the metrics' `session` tag); None where there are none
    metrics = None
    namespace: str | None = None

    def __init__(self, workers_info, client: int = 0):
        self.workers = list(workers_info)
        n = len(self.workers)
        self._queues = [[] for _ in range(n)]
        self._packer = BatchPacker()  # batches as bytes for Ray and the recovery log
        self._refs = [[] for _ in range(n)]
        self._inflight = [collections.deque() for _ in range(n)]
        self._late: list = []  # batches a wait gave up on (WaitTimeout): collected later
        self.timeout = recovery.timeout_from_env()  # the bound of every wait, in seconds
        self.live: dict = {}  # id of a live tensor's storage -> (layout, dtype) (tensor.py)
        self._errors: list = []
        self._lock = threading.RLock()
        # Keys come from this client's own range (registry.key_range): clients sharing the
        # workers of a namespace never collide, and making a key stays one next().
        self.client = client
        self._keys = itertools.count(key_range(client)[0] + 1)
        # Commands that name a whole layout (one per op, each worker expands it for the shards
        # it holds): shipped once per flush to every worker involved (see _ship).
        self._bcast: list = []
        self._btargets: dict = {}  # id(frozenset of workers) -> that set, for this batch
        self._bmark = [0] * n  # len(_bcast) when worker w's queue last synced with it
        self._tedges: dict = {}  # child worker -> parents, of the trees in _bcast (_ship)
        self._kids: dict = {}  # the last shipment's tree links: worker -> [(child, i)]
        # set by the submit paths, for _split in O(1): the workers whose queue holds more than
        # frees; whether the layout commands do; the export call of queue w's refs; calls so far
        self._work, self._bwork, self._btree = set(), False, False
        self._rgen, self._xgen = [0] * n, 0
        self._depth = 0  # nesting of flush calls: _post runs when the outermost one ends
        self.published = None  # the PublishClient, made on first use (sharded.service)
        self.closed = False
        self.bytes_moved = 0
        self.commands = 0
        self.transfer_bytes = TRANSFER_BYTES
        # st.jit's tracer while a call is traced (None otherwise: one attribute test per call):
        # it is told every submit/free/export and refuses reads (sharded.jit.api).
        self.recorder = None
        self._rec = None  # the batch log (recovery.Recovery), None when recovery is off
        # Trees' partials straight from worker to worker (.mailbox; the Ray executor turns it
        # on): the tag of the next shipment with trees, counted per client.
        self._mail = False
        self._mail_ray = False  # also in the shipments that go through Ray (SHARDED_MAILBOX=1)
        self._shipno = 0
        # small exports posted worker to worker (.posts): the workers whose next batch posts
        # or takes one, and per taker the export handles of the posts it takes
        self._mailq: set = set()
        self._mailrefs: dict = {}
        self._posts_sent: set = set()  # tags of posts that went (by the wire)
        self._pend: dict = {}  # worker -> posts waiting in its queue (posts.Pending)
        self._held: list = []  # batches whose log entries wait for this shipment's posts
        self._posts_out = False  # a post was taken since every batch was last waited for
        self._aborted_ship = 0  # mailbox takes of shipments up to this one were aborted
        self.posts_taken = 0
        self._reading = False  # fetch is exporting what it reads
        self._wired = False  # ... and its batches go over the driver's wire (.wire)
        self._unwaited = False  # ... in a flush no wait covers whole (_over_wire)
        # Every wait (a Ray one too) notices a worker whose wire connection ended, so a tree
        # may link by mailbox in a shipment no wait covers whole (RayExecutor without relays)
        self._wait_sees_losses = False
        self._rec_off = "SHARDED_RECOVERY=0"
        # An Event the flush timer sleeps on while nothing is queued (RayExecutor; a timer
        # that woke every 5 ms anyway cost the driver ~10 us of CPU per ms of a read's wait)
        self._queued = None
        self.set_recovery(recovery.enabled_by_env(), self._rec_off)

    def set_recovery(self, on: bool, reason: str = "st.init(recovery=False)") -> None:
        """Keep the batch log that rebuilds lost workers (from the next batch on), or not;
        ``reason`` is what a loss then says."""
        with self._lock:
            if on and self._rec is None:
                self._rec, self._rec_off = recovery.Recovery(self), None
                if self.commands:  # batches ran unlogged: the log starts from a cut
                    self._rec.cut()
            elif not on:
                self._rec, self._rec_off = None, reason

    def recovery_stats(self) -> dict:
        """Recoveries so far: count, seconds, workers replaced, batches replayed, shards
        rebuilt, and the size of the log since the last cut."""
        if self._rec is None:
            return {"enabled": False, "reason": self._rec_off}
        return self._rec.stats()

    def net_counts(self) -> dict:
        """What the driver's own sockets refused (``st.stats()["net"]``): nothing here; the
        Ray executor's wire counts its refusals."""
        return {}

    @property
    def num_workers(self) -> int:
        return len(self.workers)

    @property
    def num_slots(self) -> int:
        """The workers' kernel threads in all (``WorkerInfo.threads`` summed): how many shards
        an op's result gets where it makes "one per worker", so that a worker owning a node's
        cores still holds one shard per core. Equal to :attr:`num_workers` on workers of one
        thread each."""
        n = getattr(self, "_num_slots", None)
        if n is None:  # (threads never change, not even when a worker is replaced)
            n = self._num_slots = sum(w.threads for w in self.workers)
        return n

    # ----------------------------------------------------------------- queueing
    def new_key(self) -> int:
        return next(self._keys)

    def new_keys(self, n: int) -> range:
        """``n`` consecutive fresh keys as a ``range``: shard ``s`` of a tensor gets
        ``start + s``, so a command can name every shard by the first key alone."""
        with self._lock:
            start = next(self._keys)
            if n > 1:  # advance the counter past the block
                self._keys = itertools.count(start + n)
        return range(start, start + n)

    def _q(self, w: int) -> list:
        """Worker ``w``'s queue, marked so that it runs after the layout commands queued so
        far (a per-worker command may read what one of them makes)."""
        self._wake()
        q = self._queues[w]
        n = len(self._bcast)
        if n and self._bmark[w] != n:
            q.append(LayoutSync.make((n,)))
            self._bmark[w] = n
        return q

    def _wake(self) -> None:
        """Something is being queued: wake the flush timer (if there is one, asleep)."""
        if self._queued is not None and not self._queued.is_set():
            self._queued.set()

    def submit_group(self, layout, kernel: str, args, out, params=None, label=None, inplace=False):
        """Queue ``kernel`` once for every shard of ``layout``: one command, which each worker
        expands for the shards it holds. ``args`` items are ``Keys(start)`` (shard ``s``
        reads key ``start + s``) or ``Const(value)``; shard ``s`` writes key ``out + s``."""
        if self.closed:
            self._check_open()
        if self.recorder is not None:
            self.recorder.group(layout, kernel, args, out, params, label, inplace)
        wd, targets = layout_workers(layout)
        with self._lock:  # (the per-op path of every op: the records built by make)
            self._bcast.append(Group.make((kernel, wd, args, out, params, label, inplace)))
            if self._queued is not None and not self._queued.is_set():
                self._queued.set()  # (_wake, inline)
            self._btargets[id(targets)] = targets
            self._bwork = True
            self.commands += 1
            if len(self._bcast) >= MAX_BATCH:
                self.flush_all()

    def submit_tree(self, layout, spec, edges) -> None:
        """Queue a whole reduction over ``layout`` as one layout command (a ``Tree`` of
        ``spec``, a ``TreeSpec``; see :meth:`Worker._tree`). ``edges`` are its ``(child,
        parent)`` worker pairs: when this flush is shipped, each child's batch returns its
        partial and the parent's batch takes it (children are dispatched first). A tree whose
        edges would close a cycle with the trees already queued ships those first, and so does
        one whose parents' batches hold work (:meth:`_split`): the work before a reduction
        starts at once. (Holding it back to ship a product and its reduction as one batch per
        worker saved sends per read but made loops without reads wait for the flush timer:
        logistic regression's 10 iterations took 0.39-0.40 s against 0.26-0.27 s.)"""
        self._check_open()
        if self.recorder is not None:
            self.recorder.tree(layout, spec, edges)
        wd, targets = layout_workers(layout)
        with self._lock:
            busy = self._bwork or (self._work and not self._work.isdisjoint(p for _, p in edges))
            cyc = edges and self._tedges and cycle(self._tedges, edges)
            if edges and (cyc or busy):
                # a parent's batch takes its children's partials as refs (see _split)
                self.flush_wired()
            for c, p in edges:
                self._tedges.setdefault(c, set()).add(p)
            self._bcast.append(Tree(wd, spec))
            self._wake()
            self._btargets[id(targets)] = targets
            # trees queued together ship together (a later tree's parents wait on partials
            # only), so a tree does not count as work for the next tree; it does for _split
            self._btree = True
            self.commands += 1
            if len(self._bcast) >= MAX_BATCH:
                self.flush_all()

    def free_group(self, layout, keys) -> None:
        """Drop a tensor's shards (``keys`` a range: one command for all; never blocks)."""
        if self.closed:
            return
        if not isinstance(keys, range):
            self.free_pairs(zip(layout.workers, keys))
            return
        if self.recorder is not None:
            self.recorder.gfree(layout, keys)
        wd, targets = layout_workers(layout)
        with self._lock:
            self._bcast.append(GroupFree.make((wd, keys.start)))
            if self._queued is not None and not self._queued.is_set():
                self._queued.set()  # (_wake, inline)
            self._btargets[id(targets)] = targets

    def submit(self, w: int, kernel: str, args, outs, params=None, label=None, inplace=False):
        """Queue ``kernel`` on worker ``w``. ``args`` items are ``Key(key, slices)``,
        ``Const(value)`` or ``Transfer(handle)`` for data exported or put earlier."""
        self._check_open()
        if self.recorder is not None:
            self.recorder.submit(w, kernel, args, outs, params, label, inplace)
        with self._lock:
            if any(type(a) is Transfer for a in args):
                args = self._inline(posts.by_mail(self, w, args))
            if any(type(a) is Transfer for a in args):
                if self._split(w):
                    self._flush(w)
                self._rgen[w] = self._xgen
                refs = self._refs[w]
                args = tuple(
                    Ref(_append(refs, a.handle)) if type(a) is Transfer else a for a in args
                )
            q = self._q(w)
            q.append(Kernel.make((kernel, args, outs, params, label, inplace)))
            self._work.add(w)
            self.commands += 1
            if len(q) >= MAX_BATCH:
                self._flush(w)

    def _split(self, w: int) -> bool:
        """Whether the work queued for ``w`` ships before a command taking refs joins it: a
        batch starts only once all its refs exist, so the work queued before would wait for
        the batches making them (workers ran one after the other). Not when only frees are
        queued (a read stays one shipment) or the queue takes refs of the same export call
        (the pieces of one reshard stay one batch); queued layout commands ride in every
        batch, so they count (they ship in the same one shipment)."""
        if self._bwork or self._btree:
            return True
        return w in self._work and (not self._refs[w] or self._rgen[w] != self._xgen)

    def free(self, w: int, keys) -> None:
        """Drop shards (called from tensor finalizers; never blocks)."""
        if self.closed:
            return
        if self.recorder is not None:
            self.recorder.free(w, keys)
        with self._lock:
            self._q(w).append(Free.make((tuple(keys),)))

    def free_pairs(self, pairs) -> None:
        """Drop shards given as ``(worker, key)`` pairs: one free command per worker."""
        by_w = collections.defaultdict(list)
        for w, k in pairs:
            by_w[w].append(k)
        for w, ks in by_w.items():
            self.free(w, ks)

    def send(self, actions) -> None:
        """Queue raw worker commands ``{w: [command, ...]}`` (e.g. frees the registry asks
        for); they run after everything this client queued before on ``w``."""
        if self.closed:
            return
        if self.recorder is not None:
            self.recorder.send(actions)
        with self._lock:
            for w, cmds in actions.items():
                self._q(w).extend(cmds)
                if any(type(c) is not Free for c in cmds):  # (st.jit's programs are work)
                    self._work.add(w)

    def quiesce(self) -> None:
        """Ship every queued command and wait until it ran, without raising op errors (they
        stay pending for the next read): after this, another client's commands cannot
        overtake ours."""
        with self._lock:
            self.flush_all()

    def trace_memory(self, on: bool, received: bool = False) -> None:
        """Start (and zero) or stop tracing every worker's allocations; while on,
        :meth:`stats` reports each worker's peak of new allocations (``traced_peak_bytes``),
        with ``received`` the blocks its batches received mapped too."""
        with self._lock:
            for w in range(self.num_workers):
                self._q(w).append(Trace(bool(on), bool(received)))
            self.sync()

    def flush_all(self) -> None:
        with self._lock:
            self._depth += 1
            try:
                if self._bcast:
                    self._ship()
                for w in range(self.num_workers):
                    if self._queues[w]:
                        self._flush(w)
            finally:
                self._end(True)

    def flush_wired(self) -> None:
        """:meth:`flush_all`, by the driver's wire where it may carry the batches (none takes
        a Ray reference; a shipment with trees goes through Ray: see :meth:`_ship`). Their
        answers are waited for like those of Ray batches: at a read, a sync or when too
        many are in flight."""
        with self._lock, self._over_wire(waited=False):
            self.flush_all()

    @contextlib.contextmanager
    def _over_wire(self, waited: bool):
        """The batches flushed inside go over the driver's wire where they may (the
        executor's :meth:`_wire_ok`); ``waited``: a wait for every one of them follows (a
        sync), so their trees may link by mailbox too (see :meth:`_ship`)."""
        self._wired, self._unwaited = self._wire_ok(0), not waited
        try:
            yield
        finally:
            self._wired = self._unwaited = False

    def _end(self, whole: bool = False) -> None:
        self._depth -= 1
        if not self._depth:
            self._post(whole)

    def _post(self, whole: bool) -> None:
        """Called when the outermost flush ends (``whole``: a flush of every queue):
        executors that gather the batches of a flush into fewer messages (relays) may send
        them here."""

    def _ship(self, w=None, nexp: int = 0, reads=None):
        """Send the layout commands, serialized once, to every worker they involve, each with
        its own queue (worker ``w`` with its ``nexp`` exports, or each worker of ``reads``
        with ``reads[v]``); returns ``w``'s exports (with ``reads``: ``{v: exports}``)."""
        bc, bt, self._bcast, self._btargets = self._bcast, self._btargets, [], {}
        tedges, self._tedges, self._bwork, self._btree = self._tedges, {}, False, False
        want = dict(reads or {})
        if w is not None:
            want[w] = nexp
        targets = set(want)
        for t in bt.values():
            targets |= t
        targets.update(v for v, q in enumerate(self._queues) if q)
        # take every target's queue at once: a free queued meanwhile (a finalizer) must go to
        # the next shipment, whose LayoutSync marks refer to the next list of layout commands
        taken = {v: (self._queues[v], self._refs[v]) for v in targets}
        for v in targets:
            self._queues[v], self._refs[v] = [], []
            self._work.discard(v)
        self._bmark = [0] * self.num_workers
        shared = bc or None  # the layout commands every worker's batch receives
        order, kids, nout = sorted(targets), {}, {}
        if tedges:  # reductions: children first, their partials become the parents' refs
            order, kids, nout = wired(bc, order)
        self._kids = kids
        unwaited_trees = tedges and self._unwaited and not self._wait_sees_losses
        if self._wired and (any(taken[v][1] for v in order) or unwaited_trees):
            # by wire whole or not at all (a batch with refs goes by Ray); trees by the wire
            # in shipments no read or sync waits for whole only where every wait notices a
            # lost child (its connection's end), which its parent's take would wait out
            self._wired = False
        per = {}  # worker -> its own layout commands (its waiting posts went first)
        if self._pend and not self._wired:  # through Ray: the export batches go first
            per = posts.first_through_ray(self, order, taken, shared)
        mail = None
        if kids and self._mail and (self._wired or self._mail_ray):
            # see .mailbox; the log keeps the refs' form, for a replay
            self._shipno += 1
            mail = TreeMail(self.client, self._shipno, self.timeout)
        out, got = {}, {}
        for v in order:
            nx = want.get(v, 0)
            logged = None
            if v in kids:
                cmds, refs = taken[v]
                if mail is not None:
                    logged = [TreeRefs(len(refs)), *cmds], [*refs, *(got[c][i] for c, i in kids[v])]
                else:
                    cmds.insert(0, TreeRefs.make((len(refs),)))
                    refs.extend(got[c][i] for c, i in kids[v])
            if mail is not None:
                logged = logged or (list(taken[v][0]), taken[v][1])
                taken[v][0].insert(0, mail)
            e = self._flush(v, nx + nout.get(v, 0), per.get(v, shared), taken[v], logged)
            if v in nout:
                e, got[v] = e[:nx], e[nx:]
            out[v] = e
        if self._held:
            posts.release(self)
        self._backpressure()
        return out if reads is not None else out.get(w, [])

    def _flush(self, w: int, nexp: int = 0, shared=None, taken=None, logged=None):
        self._depth += 1
        try:
            return self._flush1(w, nexp, shared, taken, logged)
        finally:
            self._end()

    def _flush1(self, w: int, nexp: int = 0, shared=None, taken=None, logged=None):
        """Dispatch worker ``w``'s batch (``taken``: its commands and refs, else its queue);
        ``logged``: the form the log keeps instead, when the batch takes tree partials from
        its mailbox (a replay takes them as refs)."""
        own = taken is None
        if own and (self._bcast or self._pend):
            # (posts waiting in a queue ride in the next shipment, which takes every queue)
            return self._ship(w, nexp)
        if taken is None:
            taken = self._queues[w], self._refs[w]
            self._queues[w], self._refs[w] = [], []
            self._work.discard(w)
        cmds, refs = taken
        pend = self._pend.pop(w, None)  # posts riding in this batch (.posts.defer)
        if pend is not None:
            first = posts.split(pend, cmds, shared)[0]
            nexp += len(pend.posted)  # (the batch's first exports)
        mailed = w in self._mailq  # (posts or takes posted values: the log keeps Ray's form)
        if shared is not None:
            cmds.insert(0, LayoutCmds.make((None, shared)))  # where its layout commands are
            if logged is not None:
                logged[0].insert(0, cmds[0])
        rec = self._rec
        if rec is not None and rec.remap and refs:  # exports made before a recovery
            refs = rec.translate(refs)
        by_wire = self._wired and not refs  # (the route _dispatch takes)
        if mailed:
            cmds, refs, form = posts.settle(self, w, cmds, refs, logged, by_wire)
            logged = form if rec is not None else logged
        errs, exports = self._dispatch(w, cmds, refs, nexp)
        if pend is not None:
            exports, nexp = posts.fill(self, pend, exports, by_wire), nexp - len(pend.posted)
        if rec is not None:
            if logged is not None:
                cmds, refs = logged
            if pend is not None:  # logged as its export batch, then the rest (.posts)
                cmds = posts.record_first(rec, w, pend, first, cmds[shared is not None :], shared)
            posts.record(self, rec, w, cmds, refs, nexp, errs, exports)
        if errs is None:  # the relay tracks this batch (RayExecutor with relays)
            return exports
        infl = self._inflight[w]
        infl.append(errs)
        if len(infl) > MAX_INFLIGHT and own:
            # Before waiting on this worker, ship what the others have queued: the wait holds
            # the lock, so the timer could not start their work meanwhile.
            for v, q in enumerate(self._queues):
                if q and v != w:
                    self._flush(v)
            if infl:  # (a recovery meanwhile finished every batch)
                self._collect([infl.popleft()])
        return exports

    def _backpressure(self) -> None:
        """After a shipment to many workers: wait for the oldest batch of each worker that
        has too many outstanding (all of them were started first)."""
        old = [d.popleft() for d in self._inflight if len(d) > MAX_INFLIGHT]
        if old:
            self._collect(old)

    def _check_open(self):
        if self.closed:
            raise SessionClosed(
                "this tensor belongs to a session that was shut down "
                "(st.shutdown() freed its shards); create it again after st.init()"
            )

    def close(self) -> None:
        self.closed = True


_WORKERS: dict = {}
_BY_ID: dict = {}  # id of a workers tuple -> (the tuple, its entry): no hash of the tuple


def layout_workers(layout):
    """``(desc, targets)`` of a layout: ``desc`` tells a worker which shards it holds
    (``Mod(m, n)``: shard ``s`` on worker ``s % m``; otherwise ``OnWorkers``, the tuple of
    workers) and ``targets`` is the frozenset of workers involved. Cached by the workers
    tuple's identity first (the layouts of a chain of ops share the tuple; hashing one of
    1,024 workers costs ~3 us, twice per op), then by its value, so an op on a known
    layout pays one dict lookup."""
    ws = layout.workers
    got = _BY_ID.get(id(ws))
    if got is not None and got[0] is ws:
        return got[1]
    hit = _WORKERS.get(ws)
    if hit is None:
        n = len(ws)
        m = max(ws) + 1 if ws else 1
        desc = Mod(m, n) if ws == tuple(i % m for i in range(n)) else OnWorkers(tuple(ws))
        if len(_WORKERS) > 4096:
            _WORKERS.clear()
        hit = _WORKERS[ws] = (desc, frozenset(ws))
    if len(_BY_ID) > 4096:
        _BY_ID.clear()
    _BY_ID[id(ws)] = (ws, hit)  # (the entry keeps the tuple alive: its id stays its own)
    return hit


def _append(lst, v) -> int:
    lst.append(v)
    return len(lst) - 1
