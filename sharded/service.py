"""Published tensors: immutable named snapshots shared by the clients of a namespace.

``st.init(address=..., namespace="lab")`` joins a named namespace whose worker actors are
detached and shared; in it, ``st.publish("w", x)`` makes a snapshot of ``x`` that any client
of the namespace reads with ``st.get("w")``, also after the publisher exited. In a private
session (no ``namespace``, or ``executor="local"``) the same calls work within the one client.
The protocol (key spaces, registry, leases) is described in :mod:`sharded.runtime.service.catalog`.
"""

from __future__ import annotations

import weakref

from . import dtypes as D
from .errors import ArgumentError, PublishedNotFound, SessionClosed
from .layout import Layout
from .runtime.driver import session as _session
from .runtime.service.catalog import record_nbytes
from .runtime.service.client import InProcessRegistry, PublishClient
from .tensor import ShardedTensor

# ``ShardedTensor._readonly`` of a published snapshot is ``(PUBLISHED, name, version)``; views
# inherit it, and in-place ops raise PublishedReadOnly instead of the expanded-view error.
PUBLISHED = "published"


def _client() -> PublishClient:
    ex = _session.current().executor
    ex._check_open()
    if ex.published is None:  # a private session: the registry lives in this process
        ex.published = PublishClient(ex, InProcessRegistry(ex))
    return ex.published


class _PublishedStorage:
    """Shards owned by the registry: dropping the last tensor releases the hold."""

    __slots__ = ("session", "keys", "__weakref__")

    def __init__(self, session, client, version, keys, live=None):
        self.session, self.keys = session, keys
        ex = session.executor
        if live is not None:  # named by a WorkerLost, like the client's own tensors
            ex.live[id(self)] = live
        weakref.finalize(self, _release, ex, client, version, id(self))


def _release(ex, client, version, sid) -> None:
    ex.live.pop(sid, None)
    client.release_later(version)


def publish(name: str, x: ShardedTensor) -> None:
    """Publish an immutable snapshot of ``x`` under ``name``, replacing any earlier version.

    Nothing is copied: the workers keep ``x``'s shards under the name, and copy a shard only
    if ``x`` (or a view of it) is later written in place. Readers that hold the version it
    replaces keep it until they drop it.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(4.0, shards=2)
    >>> st.publish("weights", x)
    >>> _ = x.add_(1)  # the snapshot does not change
    >>> st.get("weights").tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> st.unpublish("weights")
    """
    if not isinstance(x, ShardedTensor):
        raise TypeError(f"publish expects a ShardedTensor, got {type(x).__name__}")
    c = _client()
    if x._storage.session.executor is not c.ex:
        raise SessionClosed("publish: the tensor belongs to another session")
    lay = x.layout
    meta = dict(
        shape=tuple(lay.shape),
        bounds=lay.bounds,
        replicated=lay.is_replicated,
        dtype=x.dtype.name,
        nbytes=record_nbytes(lay.shape, x.dtype.itemsize),
    )
    c.publish(name, lay.workers, x._keys, meta)


def get(name: str) -> ShardedTensor:
    """The current version of ``name``: a read-only tensor (in-place ops raise
    :class:`~sharded.errors.PublishedReadOnly`) that keeps its version while it lives.

    Nothing is copied: the tensor's shards are the published ones, on the workers of this
    session's namespace, and its ops run there. Reading needs no room in the cluster: a
    client that joins a namespace whose workers exist starts none (``st.init`` raises
    :class:`~sharded.errors.PlacementFailed` within seconds only when workers must be
    started and cannot be placed). Names published in another namespace are not visible
    here: their shards live on that namespace's workers, which this session does not drive,
    so a usable tensor of them needs a session in their namespace (``st.init(namespace=...)``,
    which joins its workers); :class:`~sharded.errors.PublishedNotFound` then names the
    namespaces that publish the name. Their names are listed from anywhere with
    ``st.list_published(namespace=...)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.publish("b", st.ones(3))
    >>> y = st.get("b")
    >>> (y * 2).tolist()
    [2.0, 2.0, 2.0]
    >>> y.add_(1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sharded.errors.PublishedReadOnly: 'b' is a published snapshot (version 1); ...
    >>> st.unpublish("b")
    """
    c = _client()
    try:
        rec = c.acquire(name)
    except PublishedNotFound as e:
        raise PublishedNotFound(f"{e.args[0] if e.args else e}{_elsewhere(name, c.ex)}") from None
    sess = _session.current()
    lay = Layout.from_bounds(rec["shape"], rec["bounds"], rec["workers"], rec["replicated"])
    keys = tuple(rec["keys"])
    dtype = D.as_dtype(rec["dtype"])
    label = f"published {rec['name']!r} v{rec['version']}"
    storage = _PublishedStorage(sess, c, rec["version"], keys, (lay, dtype, label))
    t = ShardedTensor(sess, lay, dtype, keys, storage=storage)
    t._readonly = (PUBLISHED, rec["name"], rec["version"])
    return t


def _elsewhere(name, ex) -> str:
    """The hint of a name not published here but in other namespaces of the cluster."""
    if ex.kind != "ray":  # (no cluster to look in; and a local session never loads Ray)
        return ""
    from .runtime.service import namespace as ray_namespace

    try:
        there = [ns for ns in ray_namespace.published_in(name) if ns != ex.namespace]
    except Exception:  # (Ray cannot list the namespaces now): the error stands without it
        return ""
    if not there:
        return ""
    return (
        f"; it is published in namespace {there[0]!r}"
        + (f" (and {there[1:]})" if there[1:] else "")
        + ": read it from a session of that namespace (st.shutdown(), then "
        f"st.init(namespace={there[0]!r}), which starts no workers when its workers exist)"
    )


def list_published(namespace: str | None = None, *, address: str | None = None) -> list:
    """Names published in this session's namespace, or in ``namespace``, sorted.

    Reading names starts no workers. With ``namespace`` the names are read from that
    namespace's registry through Ray, as an outsider: it works with no session at all, from
    a session of another namespace, or after ``st.init`` raised
    :class:`~sharded.errors.PlacementFailed` because the cluster had no room for this
    client's workers. It uses the live session's Ray connection, or Ray as the program
    connected it, else connects to ``address`` (default ``$RAY_ADDRESS``, else ``"auto"``),
    and leaves Ray connected.

    Parameters
    ----------
    namespace : str, optional
        The namespace given to ``st.init(namespace=...)`` by its clients. A namespace where
        no sharded service runs raises :class:`~sharded.errors.ArgumentError` naming those
        where one does.
    address : str, optional
        The Ray cluster to read from when Ray is not connected (with ``namespace`` only).

    Examples
    --------
    >>> import sharded as st
    >>> st.publish("a", st.zeros(2)); st.list_published()
    ['a']
    >>> st.unpublish("a"); st.list_published()
    []
    >>> st.list_published(namespace="lab", address="10.0.0.5:6379")  # doctest: +SKIP
    ['weights']
    """
    return _read("names", namespace, address)


def unpublish(name: str) -> None:
    """Remove ``name``; its shards are freed once no client holds a tensor of it.

    Examples
    --------
    >>> import sharded as st
    >>> st.publish("tmp", st.zeros(2)); st.unpublish("tmp"); "tmp" in st.list_published()
    False
    """
    _client().unpublish(name)


def published_entries(namespace: str | None = None, *, address: str | None = None) -> list:
    """Every live version (current or still held): name, version, shape, dtype, nbytes,
    holders (client numbers), publisher. ``namespace`` and ``address`` read another
    namespace's registry, as in :func:`list_published` (no workers are started).

    Examples
    --------
    >>> import sharded as st
    >>> st.publish("e", st.zeros(2, 3)); [(e["name"], e["shape"]) for e in st.published_entries()]
    [('e', (2, 3))]
    >>> st.unpublish("e")
    """
    return _read("entries", namespace, address)


def _read(method: str, namespace, address):
    """A registry read: this session's (starting the default session if none is live), or
    ``namespace``'s through Ray, which needs no session and starts no workers."""
    if namespace is None:
        if address is not None:
            raise ArgumentError(f"address={address!r} needs namespace= (the registry to read)")
        return getattr(_client(), method)()
    if not isinstance(namespace, str) or not namespace:
        raise ArgumentError(f"namespace must be a non-empty str, got {namespace!r}")
    if _session.is_initialized():
        ex = _session.current().executor
        if getattr(ex, "namespace", None) == namespace:  # our own: releases go out first
            return getattr(_client(), method)()
    from .runtime.service import namespace as ray_namespace  # (Ray only when asked for)

    return ray_namespace.read(namespace, method, address)
