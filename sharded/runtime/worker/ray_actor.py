"""The worker actor of :class:`~.ray_executor.RayExecutor`: a
:class:`~sharded.runtime.worker.core.Worker` that Ray runs in its own process, with a mailbox
(:mod:`.mailbox`) for tree partials and for the driver's wire (:mod:`.wire`)."""

from __future__ import annotations

import os
import threading

import ray

from ...backend import host_blas
from .. import metrics
from ..net.mailbox import Mailbox
from ..net.tls import Tls
from .core import Worker
from .socket_batch import SocketBatches


class _RayWorker(SocketBatches, Worker):
    """A :class:`~.worker.Worker` as a Ray actor: its BLAS threads, its mailbox and the
    batches that come over the driver's wire (:mod:`.wire`)."""

    def __init__(self, index, device="cpu", blas_threads=None, session=None):
        super().__init__(index, device)
        if blas_threads:  # Ray pinned OMP_NUM_THREADS to 1: take the node's share at start
            self.set_threads(blas_threads)  # (BLAS and the kernel pool: a replacement too)
        # (SciPy's BLAS takes NumPy's thread count when it loads: after set_threads; off the
        # actor's thread, so that the worker answers at once)
        threading.Thread(target=host_blas.load, name="sharded-blas-load", daemon=True).start()
        # Batches also come over the driver's wire (.wire), on the mailbox's thread: one at
        # a time, and each after the Ray batches the driver had sent before it (counted)
        self._ran, self._ran_cv, self._exec = 0, threading.Condition(), threading.Lock()
        self._aborts = 0  # the driver's aborts so far: a wire batch waiting then gives up
        self._tls = None  # the session's .tls.Tls, when its sockets run TLS
        # this worker's Ray metrics (..metrics), set by a thread of their own once a second,
        # tagged with ``session`` (the driver's SHARDED_METRICS decides: a worker's
        # environment is its node's); None: no metrics
        self.metrics = None if session is None else metrics.WorkerMetrics(self, session)

    def node_id(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def run(self, cmds, *refs):
        try:
            with self._exec:
                self._tmail = None  # a batch takes partials from its mailbox only if it says so
                # (its refs come from the object store, mapped: a traced peak counts them)
                return self.run_mapped(cmds, refs)
        finally:
            with self._ran_cv:
                self._ran += 1
                self._ran_cv.notify_all()

    def ran(self) -> int:
        """How many Ray batches this worker ran."""
        return self._ran

    def _wire_run(self, after, timeout, cmds):
        """A batch from the driver's wire: run once the ``after`` Ray batches sent before it
        ran (a later one never runs first: the driver waits for this answer before sending
        it)."""
        refused = self._refused(cmds)
        if refused:
            return refused
        with self._ran_cv:
            gen = self._aborts
            ok = self._ran_cv.wait_for(lambda: self._ran >= after or self._aborts != gen, timeout)
            ran = self._ran
        if gen != self._aborts:  # a worker was lost: the Ray batch it waits for may never come
            return self._failed("aborted: a worker was lost (the batch is replayed)")
        if not ok or ran != after:
            return self._failed(f"ran {ran} Ray batches, the driver sent {after} before this")
        return self._run_socket(cmds)

    def _aborted(self) -> None:
        with self._ran_cv:
            self._aborts += 1
            self._ran_cv.notify_all()

    def mail_open(self, host=None):
        """Start this worker's mailbox (:mod:`.mailbox`) on ``host`` (the driver says
        127.0.0.1 when every worker is on its node), else on ``SHARDED_NET_HOST`` if this
        node sets it, else on the address Ray uses for the node; returns the address, or
        None when it cannot listen (the trees' partials then go through Ray)."""
        try:
            if self.mailbox is None:
                host = host or os.environ.get("SHARDED_NET_HOST") or ray.util.get_node_ip_address()
                self.mailbox = Mailbox(host, self.index)
                self.mailbox.runner, self.mailbox.on_abort = self._wire_run, self._aborted
            return self.mailbox.address
        except OSError:
            return None

    def mail_peers(self, peers, key, tls=None) -> None:
        """Every mailbox's address and the session key; ``tls``: the session certificate
        and its private key (PEM) when the session's sockets run TLS (:mod:`.tls`)."""
        if tls is not None and (self._tls is None or self._tls.cert != tls[0]):
            self._tls = Tls.from_pem(*tls)
        self.mailbox.set_peers(peers, key, self._tls if tls is not None else None)


class _Actor:
    """The Ray actor around a :class:`_RayWorker`: only the methods called remotely, each a
    call into the worker, which is a plain object.

    Why not ``ray.remote(_RayWorker)``: Ray wraps every method of an actor's class, its
    private helpers included, in a tracing shim that repacks ``*args`` on each call, traced
    or not. A worker calls its own methods many times per command, and the shim's argument
    tuples keep a freed block referenced while :meth:`Worker._recycle` counts its
    references, so no block ever reached the buffer pool (every big result faulted fresh
    pages)."""

    def __init__(self, index, device="cpu", blas_threads=None, session=None):
        self._w = _RayWorker(index, device, blas_threads, session)

    def run(self, cmds, *refs):
        return self._w.run(cmds, *refs)

    def fetch(self, items):
        return self._w.fetch(items)

    def stats(self) -> dict:
        return self._w.stats()

    def snapshot(self):
        return self._w.snapshot()

    def ping(self):
        return self._w.ping()

    def node_id(self) -> str:
        return self._w.node_id()

    def ran(self) -> int:
        return self._w.ran()

    def mail_open(self, host=None):
        return self._w.mail_open(host)

    def mail_peers(self, peers, key, tls=None) -> None:
        self._w.mail_peers(peers, key, tls)


Actor = ray.remote(_Actor)
