"""Cluster and worker introspection: ``st.stats()``, ``st.info()``, ``st.synchronize()``,
``st.trace_memory()`` (the nodes themselves come from :mod:`sharded.runtime.driver.nodes`)."""

from __future__ import annotations

from .display_svg import stats_html
from .runtime.driver import session as _session
from .runtime.driver.nodes import nodes


def synchronize() -> None:
    """Wait until every queued op has run on every worker; raise the first op error.

    Examples
    --------
    >>> import sharded as st
    >>> st.synchronize()
    """
    _session.current().executor.sync()


class Stats(dict):
    """What :func:`stats` returns: a plain ``dict`` that a notebook shows as a table of totals
    beside a bar chart of the live bytes of every worker (``_repr_html_``).

    Examples
    --------
    >>> import sharded as st
    >>> s = st.stats()
    >>> isinstance(s, dict), s._repr_html_().count('class="bar"') == len(s["workers"])
    (True, True)
    """

    def _repr_html_(self) -> str:
        return stats_html(self)


def stats() -> dict:
    """Per-worker live shards and memory, bytes moved between workers, and recoveries
    from lost workers (``recoveries``: count, seconds, workers replaced, batches replayed,
    shards rebuilt; see the guide's "Fault tolerance"). The dict is a :class:`Stats`, which a
    notebook shows as a bar chart of the bytes on every worker.

    Examples
    --------
    >>> import sharded as st
    >>> sorted(st.stats())
    ['bytes_moved', 'commands', 'live_shards', 'net', 'recoveries', 'workers']

    ``net`` counts what sharded's own sockets refused, the workers' and the driver's
    together: connections that failed the handshake (``handshakes_refused``), frames that
    failed their sequence number, MAC or size (``frames_refused``), connections closed
    because too many were authenticating (``busy_refused``) and accept errors survived
    (``accept_errors``). See the guide's "Security".
    """
    ex = _session.current().executor
    ws = ex.stats()
    net = dict(ex.net_counts())
    for w, info in zip(ws, ex.workers):
        w["node"], w["name"] = info.node, info.name
        for k, v in w.get("net", {}).items():
            net[k] = net.get(k, 0) + v
    return Stats(
        workers=ws,
        live_shards=sum(w["live_shards"] for w in ws),
        bytes_moved=ex.bytes_moved,
        commands=ex.commands,
        recoveries=ex.recovery_stats(),
        net=net,
    )


def info() -> dict:
    """The session: executor kind, nodes (with their resources), ``memory_bytes`` (the
    memory the workers have in all: no tensor larger is made, see :class:`st.OutOfMemory
    <sharded.errors.OutOfMemory>`; None if unknown), ``namespace`` (the Ray namespace of the
    workers, which tags the session's Ray metrics: see the README's "Monitoring"; None
    in process) and workers with stats.

    Examples
    --------
    >>> import sharded as st
    >>> st.info()["executor"] in ("ray", "local")
    True
    """
    sess = _session.current()
    return {
        "executor": sess.executor.kind,
        "address": sess.address,
        "nodes": nodes(sess.executor),
        "memory_bytes": sess.executor.memory_bytes,
        "namespace": sess.executor.namespace,
        **stats(),
    }


def trace_memory(on: bool = True, *, received: bool = False) -> None:
    """Start (zeroing the peaks) or stop tracing each worker's new allocations; while on,
    ``st.stats()["workers"][i]["traced_peak_bytes"]`` is the most extra memory worker ``i``
    held since the start (its live shards before the start do not count). Starting a
    trace empties the workers' pools of freed blocks (their caps kept), so that a block a
    kernel would take from them counts as the allocation it is.

    Blocks a worker receives from another through Ray's object store come mapped, not
    allocated: they sit in the node's shared object store memory, where the sender put
    them, whether or not a worker maps them, and do not count by default. With
    ``received=True`` the worker adds their bytes to the traced peak of the batch that
    holds them (Ray keeps a call's arguments until it returns): the whole footprint of an
    op on its worker, e.g. ring attention's visiting key/value blocks. Blocks that come
    through the workers' mailboxes are copies and count either way.

    Examples
    --------
    >>> import sharded as st
    >>> st.trace_memory(); _ = st.ones(1000).sum().item()
    >>> st.stats()["workers"][0]["traced_peak_bytes"] > 0
    True
    >>> st.trace_memory(False)
    """
    _session.current().executor.trace_memory(on, received)
