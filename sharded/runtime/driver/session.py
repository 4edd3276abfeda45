"""Sessions: connecting to (or starting) a Ray cluster and owning the worker actors.

``st.init()`` with no address and no ``RAY_ADDRESS`` starts an embedded local Ray; an address
(``"auto"``, ``"host:port"``, ``"ray://host:port"``) connects to an existing cluster. Ray is
left running if it was already initialised by the program, and shut down on ``st.shutdown()``
only if ``st.init`` started or connected it. ``executor="local"`` runs everything in-process.
"""

from __future__ import annotations

import atexit
import importlib
import os
import threading
import uuid

from ...errors import ArgumentError, ShardingError
from ..worker.fusion import configure as configure_fusion
from .recovery import as_seconds

_lock = threading.RLock()
_current = None

# A tensor made without shards=/layout= is split only when every shard would hold at least
# this many bytes: smaller ones live whole on one worker, where views, printing and small ops
# behave exactly as torch's and cost one command, not one per worker.
DEFAULT_MIN_SHARD_BYTES = 1 << 20

# ``st.init(executor=name)`` -> (module of this package, class). Each class opens its workers
# with ``open(address=, num_workers=, devices=, gpu_workers=, gpu_fraction=, namespace=,
# tls=)``,
# which returns ``(executor, owns_ray, address)``. A module is imported when its executor is
# chosen: a local session never loads Ray.
EXECUTORS = {
    "ray": (".ray_executor", "RayExecutor"),
    "local": (".local", "LocalExecutor"),
    "simulated": (".simulated", "SimulatedExecutor"),
}


def executor_class(name):
    """The executor class ``st.init(executor=name)`` starts (see :data:`EXECUTORS`).

    Examples
    --------
    >>> executor_class("local").__name__
    'LocalExecutor'
    """
    if not isinstance(name, str) or name not in EXECUTORS:
        *most, last = [repr(n) for n in EXECUTORS]
        names = f"{', '.join(most)} or {last}" if most else last
        raise ShardingError(f"executor must be {names}, got {name!r}")
    module, cls = EXECUTORS[name]
    return getattr(importlib.import_module(module, __package__), cls)


class Session:
    """One connection: an executor (its workers) plus how Ray was obtained."""

    def __init__(self, executor, owns_ray: bool, address):
        self.executor, self.owns_ray, self.address = executor, owns_ray, address
        self.id = uuid.uuid4().hex[:8]
        self.min_shard_bytes = DEFAULT_MIN_SHARD_BYTES
        self._next = 0  # round robin over the workers for tensors kept whole

    def next_worker(self, n: int) -> int:
        """The next of ``n`` candidate workers for a tensor kept whole (round robin), so many
        small tensors spread their memory over the workers."""
        i, self._next = self._next % n, self._next + 1
        return i

    @property
    def closed(self) -> bool:
        return self.executor.closed

    def __repr__(self):
        ex = self.executor
        return (
            f"Session(executor={ex.kind!r}, workers={ex.num_workers}, "
            f"nodes={len({w.node for w in ex.workers})}, address={self.address!r})"
        )


def init(
    address=None,
    num_workers=None,
    executor="ray",
    devices=None,
    gpu_workers=None,
    gpu_fraction=1.0,
    namespace=None,
    min_shard_bytes=None,
    fusion=True,
    recovery=None,
    timeout=None,
    tls=None,
    workers_per_node=None,
) -> Session:
    """Start or connect the workers; idempotent (a second call returns the live session).

    Placement of new tensors: a tensor made without ``shards=``/``layout=`` is split into at
    most one shard per worker thread (a worker owning a node's cores has a thread per core;
    one per worker with ``num_workers`` alone), and only into as many shards as hold
    ``min_shard_bytes`` each; a smaller tensor lives whole on one worker (successive ones
    go to successive workers).
    Explicit ``shards=``/``layout=`` are always honoured (``shards=`` up to the split dim's
    length). Results of ops follow the layouts of their operands.

    Parameters
    ----------
    address : str, optional
        Ray cluster to join (``"auto"``, ``"host:port"``, ``"ray://host:port"``). Default:
        ``$RAY_ADDRESS`` if set, else an embedded local Ray.
    num_workers : int, optional
        Worker actors to start (default: ``workers_per_node`` on each node with CPUs, one
        by default on Ray).
    executor : {"ray", "local", "simulated"}
        ``"local"`` runs the workers in this process (no Ray needed); ``"simulated"`` runs
        them as threads of a few local processes, reached over real sockets without Ray
        (for measuring the driver at many workers: see the performance guide's "Scale").
    devices : list of str, optional
        Local executor only: the device of each worker (``"cpu"``, ``"cuda:0"``...).
    gpu_workers : int, optional
        Ray only: GPU worker actors to start besides the CPU ones (default: as many as the
        cluster's GPUs allow at ``gpu_fraction`` each; 0 on a cluster without GPUs).
    gpu_fraction : float
        GPUs reserved by each GPU worker (0.5 puts two workers on every GPU).
    namespace : str, optional
        Ray only: join this named namespace, whose worker actors are detached and shared by
        every client of the same cluster and namespace (the first client creates them, with
        its ``num_workers``/``gpu_workers``), so tensors can be published for the others
        (``st.publish``). Default: a private namespace whose workers end with this session.
        Joining a namespace whose workers exist starts none; workers that must be started
        and find no room on their nodes for ``$SHARDED_PLACEMENT_TIMEOUT_S`` seconds (5 by
        default) raise :class:`~sharded.errors.PlacementFailed`, naming what holds the CPUs.
    min_shard_bytes : int, optional
        The smallest shard a default placement makes (default ``1 << 20``, 1 MiB; 0 splits
        every tensor over all workers). Given to a call that finds a live session, it
        changes that session's threshold for tensors created afterwards (the other
        arguments are then ignored, as always).
    fusion : bool
        Let the workers evaluate runs of elementwise ops block by block (one pass over
        memory, bit-identical results; :mod:`sharded.runtime.worker.fusion`). ``False`` runs every
        op on its own (for measuring); so does ``SHARDED_FUSION=0`` in the workers' env.
    recovery : bool, optional
        Rebuild a lost worker by replaying the log of batches sent since the last cut (the
        guide's "Fault tolerance"; :mod:`sharded.runtime.driver.recovery`). Default: on, unless
        ``SHARDED_RECOVERY=0``. ``False`` keeps no log; a loss then raises
        :class:`~sharded.errors.WorkerLost`. Always off in a shared ``namespace``.
    timeout : float or datetime.timedelta, optional
        The bound of every wait for the workers (a read, ``st.synchronize()``,
        back-pressure), as torch's ``init_process_group(timeout=...)``: a longer wait raises
        :class:`~sharded.errors.WaitTimeout` naming the workers that did not answer, and
        leaves the session usable (the work may still finish; a later read waits again).
        Default: ``$SHARDED_TIMEOUT`` seconds, else 30 minutes. Given to a call that finds
        a live session, it changes that session's bound.
    tls : bool, optional
        Ray only: run sharded's own sockets (the driver's line to each worker, worker to
        worker) inside TLS 1.3, for networks that need confidentiality. The driver makes a
        certificate for the session (EC P-256, with the ``cryptography`` package if
        installed, else the ``openssl`` command; neither raises
        :class:`~sharded.errors.BackendUnavailable`) and every connection must present it,
        both ways. Authentication and integrity (a keyed handshake, a MAC on every frame)
        are on either way; TLS adds encryption. Ray's own traffic (batches through Ray, the
        object store) needs Ray's TLS (``RAY_USE_TLS``). Default: off, unless
        ``SHARDED_NET_TLS=1``. Given to a call that finds a live session whose sockets run
        without TLS, ``True`` raises :class:`~sharded.errors.ArgumentError`.
    workers_per_node : int, optional
        Workers on each node. Each reserves its share of its node's cores and runs the
        kernels of the shards it holds on that many threads; a default placement then makes
        one shard per thread (``workers_per_node=1``: one worker per node owning all its
        cores, tensors still split into as many shards as the cluster has cores).
        Default, when ``num_workers`` is not given either: ``$SHARDED_WORKERS_PER_NODE``,
        else **1 on Ray** (one worker per node, as Dask and Legate run one process per node
        with threads inside); ``num_workers=N`` alone places one worker per CPU, the layout
        that suits chains of tiny ops best (the guide's "Which default serves which
        workload"). The local executor counts this process as the one node, and starts 2
        workers when neither is given.

    Examples
    --------
    >>> import sharded as st
    >>> s = st.init(executor="local", num_workers=2)
    >>> s
    Session(executor='local', workers=2, nodes=1, address=None)
    >>> st.tensor([[1, 2, 3], [4, 5, 6]]).layout.num_shards  # 48 bytes: kept whole
    1
    >>> st.init(min_shard_bytes=0).min_shard_bytes  # the live session, now splitting all
    0
    >>> st.tensor([[1, 2, 3], [4, 5, 6]]).layout.num_shards
    2
    >>> import datetime
    >>> st.init(timeout=datetime.timedelta(minutes=5)).executor.timeout
    300.0
    >>> st.shutdown()
    """
    global _current
    if min_shard_bytes is not None and (
        isinstance(min_shard_bytes, bool)
        or not isinstance(min_shard_bytes, int)
        or min_shard_bytes < 0
    ):
        raise ArgumentError(f"min_shard_bytes must be an int >= 0, got {min_shard_bytes!r}")
    secs = None if timeout is None else as_seconds(timeout)
    if tls is not None and not isinstance(tls, bool):
        raise ArgumentError(f"tls must be a bool, got {tls!r}")
    with _lock:
        if _current is not None and not _current.closed:
            if tls and getattr(_current.executor, "plain_sockets", False):
                raise ArgumentError(
                    "tls=True, but the live session's sockets run without TLS: "
                    "st.shutdown() it first"
                )
            if min_shard_bytes is not None:
                _current.min_shard_bytes = min_shard_bytes
            if secs is not None:
                _current.executor.timeout = secs
            return _current
        if namespace is not None and (not isinstance(namespace, str) or not namespace):
            raise ArgumentError(f"namespace must be a non-empty str, got {namespace!r}")
        if workers_per_node is None and num_workers is None:
            workers_per_node = _env_per_node()
        if workers_per_node is not None and (
            isinstance(workers_per_node, bool)
            or not isinstance(workers_per_node, int)
            or workers_per_node < 1
        ):
            raise ArgumentError(
                f"workers_per_node must be a positive int, got {workers_per_node!r}"
            )
        ex, owns, address = executor_class(executor).open(
            address=address,
            num_workers=num_workers,
            devices=devices,
            gpu_workers=gpu_workers,
            gpu_fraction=gpu_fraction,
            namespace=namespace,
            tls=_tls_default() if tls is None else tls,
            workers_per_node=workers_per_node,
        )
        if namespace is not None:
            # Leave the namespace cleanly at exit (frees our unpublished shards at once rather
            # than when the lease runs out).
            atexit.register(_exit_shutdown, ex)
        _current = Session(ex, owns, address)
        if min_shard_bytes is not None:
            _current.min_shard_bytes = min_shard_bytes
        if secs is not None:
            _current.executor.timeout = secs
        if not fusion:
            configure_fusion(_current.executor, False)
        if recovery is not None and not (recovery and namespace is not None):
            _current.executor.set_recovery(bool(recovery), "st.init(recovery=False)")
        return _current


def _env_per_node():
    """``st.init(workers_per_node=None)``: ``$SHARDED_WORKERS_PER_NODE`` (unset or empty:
    one worker per CPU)."""
    v = os.environ.get("SHARDED_WORKERS_PER_NODE", "")
    if v == "":
        return None
    if not v.isdigit() or int(v) < 1:
        raise ArgumentError(f"SHARDED_WORKERS_PER_NODE must be a positive int, got {v!r}")
    return int(v)


def _tls_default() -> bool:
    """``st.init(tls=None)``: ``SHARDED_NET_TLS`` (``1`` on; unset, empty or ``0`` off)."""
    v = os.environ.get("SHARDED_NET_TLS", "")
    if v not in ("", "0", "1"):
        raise ArgumentError(f"SHARDED_NET_TLS must be 0 or 1, got {v!r}")
    return v == "1"


def _exit_shutdown(ex) -> None:
    if _current is not None and _current.executor is ex:
        shutdown()


def shutdown() -> None:
    """Free every worker (and their shards); stop Ray if :func:`init` started it.

    Tensors created before keep existing as Python objects but raise
    :class:`~sharded.errors.SessionClosed` when used.

    Examples
    --------
    >>> import sharded as st
    >>> st.shutdown()
    """
    global _current
    with _lock:
        s, _current = _current, None
        if s is None:
            return
        s.executor.close()
        if s.owns_ray:
            import ray

            ray.shutdown()


def current() -> Session:
    """The live session, starting the embedded default one if there is none."""
    s = _current
    if s is None or s.closed:
        s = init()
    return s


def is_initialized() -> bool:
    """Whether a live session exists."""
    return _current is not None and not _current.closed


def service_status(address, namespace: str):
    """Workers and published tensors of a named namespace (None if no service runs there);
    connects without joining as a client. See :func:`sharded.runtime.service.namespace.status`."""
    from ..service import namespace as ray_service

    return ray_service.status(address, namespace)


def service_cluster(address) -> dict:
    """The cluster's CPUs and what holds them, per namespace; connects without joining.
    See :func:`sharded.runtime.service.namespace.cluster`."""
    from ..service import namespace as ray_service

    return ray_service.cluster(address)


def service_stop(address, namespace: str) -> list:
    """Kill a named namespace's workers and registry; returns the actor names killed."""
    from ..service import namespace as ray_service

    return ray_service.stop(address, namespace)
