"""The simulated executor: many workers on one machine, speaking the real protocol over
real sockets, without Ray (``st.init(executor="simulated", num_workers=N)``).

What it is for: measuring what the driver pays per op and per read at worker counts no
machine here can run as Ray actors (``sharded bench --scaling --simulated 1024``). Each
worker is a real :class:`~sharded.runtime.worker.core.Worker` with its own
:class:`~sharded.runtime.net.mailbox.Mailbox`; batches travel over the driver's
:class:`~sharded.runtime.net.wire.Wire` (authenticated, MACed frames of
:mod:`~sharded.runtime.net.codec` records), reductions combine worker to worker through the
mailboxes (fan-in 8), exactly as in a Ray session's wire reads. The choices:

- **Hosts.** Workers live as threads in :data:`HOSTS` OS processes
  (``python -m sharded.runtime.worker.simhost``; env ``SHARDED_SIM_HOSTS``, default one per
  256 workers, at least 1 and at most 4), workers split into contiguous blocks. One mailbox
  per worker (a listening socket, an accepting thread, a thread per connection): 1,024
  workers make ~3,000 threads with small stacks, which Linux runs without trouble, and
  keep the worker side the code a Ray worker runs. The session key goes to the hosts
  through their stdin pipe, never over a socket; a host exits when that pipe closes.
- **Relays.** Up to :data:`WIRE_MAX` workers (env ``SHARDED_WIRE_MAX``, 32) the driver
  sends every worker its batch itself, as the Ray executor's wire reads do. Past that it
  talks to wire relays (:mod:`sharded.runtime.net.fanout`), one per 32 workers placed in
  the host of their workers: one frame per flush per relay, which composes its workers'
  batches and answers once. Past :data:`RELAY2_MIN` relays (env ``SHARDED_SIM_RELAY2``, 4)
  a second level of relays (fan-out 32) leaves the driver one frame per flush per 1,024
  workers. Behind relays the driver's flush is one :class:`~..commands.Fan` per top relay
  whatever the workers reached (:meth:`_fan_ship`); small exports come to the driver and
  go on inline (no posts), and every batch, reads included, takes the one path.
- **No flush timer**: queued work ships at a read, a sync, an export or every
  :data:`~.executor.MAX_BATCH` commands (the Ray executor also ships every 5 ms).
- **No recovery**: a worker is a thread of a host with no replacement; a lost host (its
  connections end, or its process exits: checked every second of a wait) raises
  :class:`~sharded.errors.WorkerLost`.

What it cannot show: network latency between machines (everything is loopback), Ray's
scheduling of real actors and its object store, and real kernel time (its blocks are tiny;
its workers share the machine's cores and each host's interpreter).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
import weakref

from ...errors import ArgumentError, ShardingError, WorkerLost
from ..commands import Const, Fan, Transfer, TreeMail
from ..net.fanout import FANOUT, RELAY_BASE
from ..net.mailbox import KEY_BYTES
from ..net.wire import TYPES, Wire
from . import recovery
from .executor import MAX_INFLIGHT, Executor, WorkerInfo
from .local import host_memory_bytes

WIRE_MAX = int(os.environ.get("SHARDED_WIRE_MAX", "32"))
RELAY2_MIN = int(os.environ.get("SHARDED_SIM_RELAY2", "4"))
PER_HOST = 256  # workers per host process by default
START_S = 60.0  # the most the hosts may take to start and report their mailboxes
NO_RECOVERY = "the simulated executor's workers are threads of host processes: none is rebuilt"


def _hosts(n: int) -> int:
    v = os.environ.get("SHARDED_SIM_HOSTS")
    if v is None:
        return max(1, min(4, math.ceil(n / PER_HOST)))
    if not v.isdigit() or int(v) < 1:
        raise ArgumentError(f"SHARDED_SIM_HOSTS must be a positive int, got {v!r}")
    return min(int(v), n)


class SimulatedExecutor(Executor):
    """Workers as threads of a few local host processes, reached over real sockets (see the
    module).

    Examples
    --------
    >>> ex = SimulatedExecutor(2)
    >>> ex.num_workers, ex.kind, ex.recovery_stats()["enabled"]
    (2, 'simulated', False)
    >>> ex.close()
    """

    kind = "simulated"
    # every batch goes by the wire: the protocol's "may this flush go by wire" is always yes
    _wired = property(lambda self: True, lambda self, v: None)

    def __init__(self, num_workers: int = 2):
        n = num_workers
        self._key = os.urandom(KEY_BYTES)
        self._procs: list = []
        self._stopper = weakref.finalize(self, _stop, self._procs)
        nrel = 0 if n <= WIRE_MAX else math.ceil(n / FANOUT)
        n2 = math.ceil(nrel / FANOUT) if nrel > RELAY2_MIN else 0
        h = _hosts(n)
        host_of = [w * h // n for w in range(n)]
        try:
            where = self._start_hosts(n, h, host_of, nrel, n2)
        except BaseException:
            self._stopper()
            raise
        names = [f"sharded-sim-worker-{w}" for w in range(n)]
        super().__init__([WorkerInfo(w, names[w], f"host-{host_of[w]}", "cpu") for w in range(n)])
        self.memory_bytes = host_memory_bytes()
        self._host_of = host_of
        self._wire = Wire(self._key, None, self._packer)
        self._fan = nrel > 0
        if n2:  # the driver's line: to the relays of relays ...
            self._top = [RELAY_BASE + nrel + w // (FANOUT * FANOUT) for w in range(n)]
        elif nrel:  # ... to the relays ...
            self._top = [RELAY_BASE + w // FANOUT for w in range(n)]
        else:  # ... or to every worker
            self._top = list(range(n))
        self._wire.set_addrs({t: where[t] for t in set(self._top)})
        self._serves = {}  # a top relay's number -> the workers behind it
        for w, t in enumerate(self._top):
            self._serves.setdefault(t, []).append(w)
        # trees' partials (and posts) worker to worker; behind relays no posts: small
        # exports come to the driver and go on inline (.posts would ride per worker)
        self._mail, self._mail_ray = not self._fan, True
        self._dirty: set = set()  # workers whose queue may hold commands (behind relays)
        self._reps: set = set()  # workers whose in-flight deque holds a relay's answer
        self._parts: dict = {}  # frozenset of workers -> [(top relay, its sorted workers)]

    def _start_hosts(self, n, h, host_of, nrel, n2) -> dict:
        """Start the host processes, tell them their workers and relays, wire the relays;
        returns ``{mailbox number: address}``."""
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        relays = [[] for _ in range(h)]  # per host: [index, first, span]
        for i in range(nrel):  # in the host of its first worker
            relays[host_of[i * FANOUT]].append([i, i * FANOUT, None])
        for j in range(n2):
            relays[j % h].append([nrel + j, j * FANOUT * FANOUT, FANOUT])
        for k in range(h):
            p = subprocess.Popen(
                [sys.executable, "-m", "sharded.runtime.worker.simhost"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                text=True,
            )
            self._procs.append(p)
            cfg = {"key": self._key.hex(), "workers": [w for w in range(n) if host_of[w] == k]}
            p.stdin.write(json.dumps(dict(cfg, relays=relays[k])) + "\n")
            p.stdin.flush()
        where = {}
        for p in self._procs:
            got = json.loads(self._line(p))
            where.update({int(w): tuple(a) for w, a in got["workers"].items()})
            where.update({RELAY_BASE + int(i): tuple(a) for i, a in got["relays"].items()})
        peers = {w: where[w] for w in range(n)}
        children = {}
        for i in range(nrel):
            children[i] = {w: peers[w] for w in range(i * FANOUT, min(n, (i + 1) * FANOUT))}
        for j in range(n2):
            kids = range(j * FANOUT, min(nrel, (j + 1) * FANOUT))
            children[nrel + j] = {RELAY_BASE + i: where[RELAY_BASE + i] for i in kids}
        for k, p in enumerate(self._procs):
            mine = {i: children[i] for i, _, _ in relays[k]}
            plan = {"peers": peers, "children": mine}
            p.stdin.write(json.dumps(plan) + "\n")
            p.stdin.flush()
        for p in self._procs:
            if json.loads(self._line(p)) != "ready":
                raise WorkerLost(f"simulated host {p.pid} did not start")
        return where

    def _line(self, p) -> str:
        """One line of host ``p``'s stdout, within :data:`START_S`."""
        got: list = []
        t = threading.Thread(target=lambda: got.append(p.stdout.readline()), daemon=True)
        t.start()
        t.join(START_S)
        if not got or not got[0]:
            raise WorkerLost(
                f"simulated host {p.pid} sent nothing within {START_S:g}s (exit code {p.poll()})"
            )
        return got[0]

    @classmethod
    def open(cls, num_workers=None, devices=None, namespace=None, tls=False, **_):
        """``st.init(executor="simulated")``'s workers: ``(executor, owns_ray, address)``
        (``num_workers`` defaults to 2; the Ray-only arguments are ignored).

        Examples
        --------
        >>> ex, owns_ray, address = SimulatedExecutor.open(num_workers=3)
        >>> ex.num_workers, owns_ray, address
        (3, False, None)
        >>> ex.close()
        """
        if namespace is not None or tls or devices is not None:
            what = "namespace" if namespace is not None else "tls" if tls else "devices"
            raise ArgumentError(
                f"{what} needs executor='ray' or 'local': the simulated executor runs "
                "private CPU workers over plain loopback sockets"
            )
        n = 2 if num_workers is None else num_workers
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ShardingError(f"num_workers must be a positive int, got {n!r}")
        return cls(n), False, None

    def set_recovery(self, on, reason="st.init(recovery=False)"):
        super().set_recovery(False, NO_RECOVERY)

    def net_counts(self) -> dict:
        return dict(self._wire.counts)

    # ------------------------------------------------------------------ shipping
    def _wire_ok(self, nbytes=0):
        return True

    def _wire_xfer_ok(self, nbytes):
        return True

    def _inline(self, args):
        """Every ``Transfer`` as a ``Const``: an export's value (it came by the wire) or
        data the driver put; no batch here takes refs."""
        if not any(type(a) is Transfer for a in args):
            return args
        wired = [a.handle for a in args if type(a) is Transfer and type(a.handle) in TYPES]
        got = iter(self._wait(wired, "an export") if wired else ())
        return tuple(
            Const.make((next(got) if type(a.handle) in TYPES else a.handle,))
            if type(a) is Transfer
            else a
            for a in args
        )

    def _dispatch(self, w, cmds, refs, nexp):
        if refs:  # (_inline leaves none; a guard against a path that keeps them)
            raise ShardingError(f"worker {w}'s batch takes refs: the simulated executor has none")
        if self._fan:  # one worker's batch, through its relays like every other
            fan = Fan([], (w,), {w: cmds}, None, {w: nexp})
            got = self._wire.send(self._top[w], 0, [fan], nexp, self.timeout)
        else:
            got = self._wire.send(w, 0, cmds, nexp, self.timeout)
        if got is None:
            raise ShardingError(f"worker {w}'s batch is not data: it cannot go over a socket")
        return got

    def _q(self, w):
        self._dirty.add(w)
        return super()._q(w)

    def flush_all(self) -> None:
        if not self._fan:
            return super().flush_all()
        with self._lock:
            self._depth += 1
            try:
                if self._bcast or any(self._queues):
                    self._ship()
            finally:
                self._end(True)

    def submit_tree(self, layout, spec, edges) -> None:
        """Behind relays every tree's partials go worker to worker by mailbox, each worker
        running its trees in the order queued: no batch waits for another's result, so the
        trees' edges (which order the batches of a shipment that links them as refs) are
        not kept: ~1 us per worker of driver CPU per reduction saved."""
        if self._fan and self.recorder is None:
            edges = ()
        super().submit_tree(layout, spec, edges)

    def _ship(self, w=None, nexp=0, reads=None):
        if not self._fan:
            return super()._ship(w, nexp, reads)
        return self._fan_ship(w, nexp, reads)

    def _fan_ship(self, w, nexp, reads):
        """:meth:`Executor._ship` behind relays: ONE :class:`Fan` per top relay (the
        layout commands encoded once, the workers reached, the queues of the workers that
        have commands of their own, the exports wanted); the driver's work grows with the
        workers that have commands of their own or exports to return, not with those the
        shipment reaches. Returns what ``_ship`` returns."""
        bc, bt, tree = self._bcast, self._btargets, self._btree
        self._bcast, self._btargets = [], {}
        self._tedges, self._kids, self._bwork, self._btree = {}, {}, False, False
        want = dict(reads or {})
        if w is not None:
            want[w] = nexp
        own, dirty, self._dirty = {}, self._dirty, set()
        for v in dirty:
            q = self._queues[v]
            if q:
                own[v], self._queues[v] = q, []
                self._work.discard(v)
        self._bmark = [0] * self.num_workers
        ts = list(bt.values())
        if len(ts) == 1 and all(v in ts[0] for v in want) and all(v in ts[0] for v in own):
            tset = ts[0]  # (the usual case: one layout's cached frozenset of workers)
        else:
            tset = frozenset(set(want).union(own, *ts))
        parts = self._parts.get(tset)
        if parts is None:
            parts = self._parts[tset] = self._cut(tset)
        mail = None
        if tree:  # the trees' partials go worker to worker (.mailbox)
            self._shipno += 1
            mail = TreeMail(self.client, self._shipno, self.timeout)
        shared = (self._packer.shared_data(bc) or bc) if bc else []
        out, one = {}, len(parts) == 1
        for top, order in parts:
            o = own if one else {v: c for v, c in own.items() if self._top[v] == top}
            wn = want if one else {v: k for v, k in want.items() if self._top[v] == top}
            fan = Fan(shared, order, o, mail, wn)
            got = self._wire.send(top, 0, [fan], sum(wn.values()), self.timeout)
            if got is None:
                raise ShardingError("a shipment is not data: it cannot go over a socket")
            reply, handles = got
            i = 0
            for v in sorted(wn):
                out[v] = handles[i : i + wn[v]]
                i += wn[v]
            rep = min(wn) if wn else order[0]
            infl = self._inflight[rep]
            infl.append(reply)
            self._reps.add(rep)
            if len(infl) > MAX_INFLIGHT:
                self._collect([infl.popleft()])
        return out if reads is not None else out.get(w, [])

    def _cut(self, tset) -> list:
        """``[(top relay, its workers of tset, sorted)]``; cached per set of workers."""
        if len(self._parts) > 256:
            self._parts.clear()
        by: dict = {}
        for v in sorted(tset):
            by.setdefault(self._top[v], []).append(v)
        return [(t, tuple(vs)) for t, vs in by.items()]

    def _finished(self) -> list:
        if not self._fan:
            return super()._finished()
        late = []
        if self._late:
            ok = self._ready(self._late)
            late = [h for h, f in zip(self._late, ok) if f]
            self._late = [h for h, f in zip(self._late, ok) if not f]
        done = []
        for v in list(self._reps):
            d = self._inflight[v]
            while d and self._wire.ready([d[0]])[0]:
                done.append(d.popleft())
            if not d:
                self._reps.discard(v)
        return self._wait(late + done)

    def _drain_inflight(self):
        if not self._fan:
            return super()._drain_inflight()
        out, self._late = self._late, []
        for v in self._reps:
            out.extend(self._inflight[v])
            self._inflight[v].clear()
        self._reps = set()
        return out

    # ------------------------------------------------------------------ waiting
    def _get(self, handles, timeout=None):
        limit = self.timeout if timeout is None else timeout
        try:
            self._wire.wait(handles, limit, self._check_hosts)
        except recovery.Late as e:  # (a relay's number names the workers behind it)
            ws = sorted({v for t in e.workers for v in self._serves.get(t, [t])})
            raise recovery.Late(ws, e.seconds) from None
        return [self._wire.value(h) for h in handles]

    def _ready(self, handles):
        return self._wire.ready(handles)

    def _check_hosts(self) -> None:
        """A wait's check every second without an answer: a host that exited is a loss."""
        for k, p in enumerate(self._procs):
            if p.poll() is not None:
                raise recovery.Lost(f"simulated host {k} (pid {p.pid}) exited with {p.returncode}")

    def _stats(self, w):
        raise ShardingError("st.stats() needs executor='ray' or 'local' (no stats call by wire)")

    # ------------------------------------------------------------------ losing a worker
    def _hkey(self, h, track=False):
        return id(h)

    def _settle(self, handles) -> None:
        self._wire.settle([h for h in handles if type(h) in TYPES], 2.0)

    def _dead_workers(self) -> list:
        t0 = time.monotonic()  # (a host's end is seen on its sockets before its exit code)
        while True:
            dead = {k for k, p in enumerate(self._procs) if p.poll() is not None}
            if dead or time.monotonic() - t0 > 1.0:
                return [w for w, k in enumerate(self._host_of) if k in dead]
            time.sleep(0.02)

    def _replace(self, w) -> None:
        raise WorkerLost(f"{self.workers[w].name} cannot be replaced: {NO_RECOVERY}")

    def _snapshot(self, w):
        raise WorkerLost(f"{self.workers[w].name} keeps no snapshot: {NO_RECOVERY}")

    def hosts(self) -> list:
        """The process ids of the host processes (tests kill one to lose its workers)."""
        return [p.pid for p in self._procs]

    def close(self) -> None:
        with self._lock:
            super().close()
            self._wire.close()
            self._stopper()


def _stop(procs) -> None:
    """End the host processes: their stdin closes (they exit at once), then a bounded wait,
    then a kill for any that did not."""
    for p in procs:
        try:
            p.stdin.close()
        except OSError:
            pass
    t0 = time.monotonic()
    for p in procs:
        try:
            p.wait(max(0.1, 5.0 - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stdout is not None:
            p.stdout.close()
