"""A named namespace on Ray: the detached registry actor, its proxy, status and stop.

The registry (:class:`~sharded.runtime.service.catalog.Registry`) runs in the detached actor
``sharded-registry`` of the namespace. The first client creates it and the workers
(``get_if_exists``, so clients starting together agree on one of each); the first client's
worker configuration wins (:meth:`Registry.configure`).

Dead clients: every client renews a lease with a heartbeat thread (every ``lease_s / 5``); a
reaper thread in the registry actor unregisters clients silent for ``lease_s`` (default 15 s,
``$SHARDED_LEASE_S`` of the client that creates the registry): their holds are dropped and
every worker drops their key range but the keys of live published versions. A client that
exits normally (``st.shutdown()``, or at interpreter exit) unregisters at once.
"""

from __future__ import annotations

import os
import threading
import time

import ray
from ray.exceptions import RayTaskError

from ...errors import ArgumentError, ShardedError
from .catalog import DEFAULT_LEASE_S, Registry
from .client import ACTION_METHODS

REGISTRY_NAME = "sharded-registry"
CALL_TIMEOUT_S = 60
NODE_IP_ENV = "SHARDED_RAY_NODE_IP"


def attach_kw(address) -> dict:
    """``ray.init`` keywords that attach a driver joining ``address`` to this host's own node.

    Ray finds "the local node" of a driver by listing the raylet processes it can see and
    prefers the head among them. Where several nodes share one process table (network
    namespaces on one machine, a client node next to the head) the driver would then
    advertise another node's IP, and no other node could reach it to fetch the objects it owns
    (a task's argument above Ray's inline size waits forever). ``$SHARDED_RAY_NODE_IP``, the
    IP this host's node was started with (``cluster.ray_cluster`` sets it for the client
    role's command), names the node to attach to.

    Examples
    --------
    >>> attach_kw(None)
    {}
    """
    ip = os.environ.get(NODE_IP_ENV)
    return {"_node_ip_address": ip} if address and address != "local" and ip else {}


class _RegistryActor:
    def __init__(self, namespace: str, lease_s: float):
        self.ns = namespace
        self.reg = Registry(lease_s=lease_s)
        self._handles: dict = {}
        threading.Thread(target=self._reap, name="sharded-reaper", daemon=True).start()

    def call(self, method, *args):
        out = getattr(self.reg, method)(*args)
        if method in ACTION_METHODS:
            self._send(out)
            return None
        return out

    def _reap(self):
        period = max(0.1, self.reg.lease_s / 4)
        while True:
            time.sleep(period)
            try:
                _, acts = self.reg.expire()
                self._send(acts)
            except Exception:  # a worker gone: the next round tries again
                pass

    def _send(self, acts):
        names = (self.reg.config or {}).get("names", ())
        for w, cmds in acts.items():
            h = self._handles.get(w)
            if h is None:
                try:
                    h = self._handles[w] = ray.get_actor(names[w], namespace=self.ns)
                except (ValueError, IndexError):  # the worker was stopped
                    continue
            h.run.remote(cmds)


_Registry = ray.remote(_RegistryActor)


class RegistryProxy:
    """Calls the registry actor as if it were a local :class:`Registry` (blocking)."""

    def __init__(self, actor):
        self.actor = actor

    def __getattr__(self, method):
        def call(*args):
            try:
                return ray.get(self.actor.call.remote(method, *args), timeout=CALL_TIMEOUT_S)
            except RayTaskError as e:  # the registry's own error, without Ray's traceback
                if isinstance(e.cause, ShardedError):
                    raise e.cause from None
                raise

        return call


def registry(namespace: str, create: bool = False):
    """The namespace's registry proxy (created if asked and missing), or None."""
    if create:
        lease = float(os.environ.get("SHARDED_LEASE_S", DEFAULT_LEASE_S))
        actor = _Registry.options(
            name=REGISTRY_NAME,
            namespace=namespace,
            lifetime="detached",
            get_if_exists=True,
            num_cpus=0,
            max_restarts=0,
        ).remote(namespace, lease)
        return RegistryProxy(actor)
    try:
        return RegistryProxy(ray.get_actor(REGISTRY_NAME, namespace=namespace))
    except ValueError:
        return None


def _connect(address, namespace):
    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS") or "auto"
        ray.init(
            address=address,
            namespace=namespace,
            log_to_driver=False,
            configure_logging=False,
            **attach_kw(address),
        )


def status(address, namespace: str) -> dict | None:
    """Workers (name, node, device, memory, shards) and published tensors of ``namespace``;
    None if no sharded service runs there."""
    _connect(address, namespace)
    reg = registry(namespace)
    if reg is None:
        return None
    cfg = reg.get_config() or {}
    workers = []
    for i, name in enumerate(cfg.get("names", ())):
        # CPUs reserved: the plan's share for a CPU worker, none for a GPU one
        cpus = cfg["need"] if i < cfg["num_workers"] else 0.0
        try:
            a = ray.get_actor(name, namespace=namespace)
            st, node = ray.get([a.stats.remote(), a.node_id.remote()], timeout=CALL_TIMEOUT_S)
            workers.append(dict(st, name=name, node=node, cpus=cpus))
        except Exception as e:  # a dead worker is reported, not fatal
            workers.append({"name": name, "cpus": cpus, "error": f"{type(e).__name__}: {e}"})
    return {
        "namespace": namespace,
        "workers": workers,
        "published": reg.entries(),
        "clients": reg.clients(),
    }


def services() -> list:
    """The namespaces where a sharded service runs (a registry actor), sorted."""
    named = ray.util.list_named_actors(all_namespaces=True)
    return sorted({a["namespace"] for a in named if a["name"] == REGISTRY_NAME})


def read(namespace: str, method: str, address=None):
    """``method`` (``names`` or ``entries``) of ``namespace``'s registry, read as an outsider:
    no client number, no workers, whatever room the cluster has. Connects to ``address``
    (default ``$RAY_ADDRESS``, else ``auto``) if Ray is not connected yet."""
    _connect(address, None)
    reg = registry(namespace)
    if reg is None:
        raise ArgumentError(
            f"no sharded service runs in namespace {namespace!r} (namespaces with one: "
            f"{services()})"
        )
    return getattr(reg, method)()


def published_in(name: str) -> list:
    """The namespaces whose registry publishes ``name`` (for a PublishedNotFound's hint);
    registries that do not answer are skipped."""
    out = []
    for ns in services():
        reg = registry(ns)
        try:
            if reg is not None and name in reg.names():
                out.append(ns)
        except Exception:  # a registry ending or busy: it is no hint
            pass
    return out


def cluster(address) -> dict:
    """The cluster's CPUs (``cpus``, ``free``), what holds them per Ray namespace
    (``holders``: :func:`sharded.runtime.driver.placement.holders`), and every namespace
    with sharded workers or a registry (``namespaces``: name -> ``workers``, each with its
    reservation, see :func:`~sharded.runtime.driver.placement.workers`, and ``published``
    names, None if its registry did not answer)."""
    from ..driver import placement

    _connect(address, None)
    free = placement.free_cpus()
    by_ns, served = placement.workers(), services()
    spaces = {}
    for ns in sorted(set(by_ns) | set(served)):
        reg = registry(ns) if ns in served else None
        try:
            published = None if reg is None else reg.names()
        except Exception:  # (a registry ending): the workers are still listed
            published = None
        spaces[ns] = dict(workers=by_ns.get(ns, []), published=published)
    return {
        "cpus": float(ray.cluster_resources().get("CPU", 0.0)),
        "free": None if free is None else sum(free.values()),
        "holders": placement.holders(),
        "namespaces": spaces,
    }


def abandon(namespace: str) -> list:
    """After a client's start of ``namespace``'s workers failed (they did not answer in time):
    kill the workers that never came up (they would start later, holding their CPUs, with no
    client), and, if the namespace serves no client and publishes nothing, its other workers
    and registry too, so a later ``st.init`` starts it afresh with its own plan. Returns the
    names of the actors killed; never raises (the start's own error is the one to see)."""
    from ..driver import placement

    killed = []
    try:
        ws = placement.workers().get(namespace, [])
        down = [w["name"] for w in ws if w["state"] != "ALIVE"]
        reg = registry(namespace)
        idle = reg is None or not (reg.clients() or reg.entries())
        names = [w["name"] for w in ws] + [REGISTRY_NAME] if idle else down
        for name in names:
            try:
                ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
                killed.append(name)
            except ValueError:  # (gone meanwhile)
                pass
    except Exception:  # Ray unreachable: the start's error says enough
        pass
    return killed


def stop(address, namespace: str) -> list:
    """Kill the namespace's workers and registry (their shards and published tensors are
    gone); returns the names of the actors killed."""
    _connect(address, namespace)
    reg = registry(namespace)
    names = list(((reg.get_config() if reg is not None else None) or {}).get("names", ()))
    if not names:  # no registry (or it never configured): look for workers by their names
        while True:
            try:
                ray.get_actor(f"sharded-worker-{len(names)}", namespace=namespace)
            except ValueError:
                break
            names.append(f"sharded-worker-{len(names)}")
    killed = []
    for name in names + [REGISTRY_NAME]:
        try:
            ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
            killed.append(name)
        except ValueError:  # not there
            pass
    return killed
