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

from .catalog import DEFAULT_LEASE_S, Registry
from .client import ACTION_METHODS

REGISTRY_NAME = "sharded-registry"
CALL_TIMEOUT_S = 60


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
            return ray.get(self.actor.call.remote(method, *args), timeout=CALL_TIMEOUT_S)

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
        ray.init(
            address=address or os.environ.get("RAY_ADDRESS") or "auto",
            namespace=namespace,
            log_to_driver=False,
            configure_logging=False,
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


def cluster(address) -> dict:
    """The cluster's CPUs (``cpus``, ``free``) and what holds them per Ray namespace
    (``holders``: :func:`sharded.runtime.driver.placement.holders`)."""
    from ..driver import placement

    _connect(address, None)
    free = placement.free_cpus()
    return {
        "cpus": float(ray.cluster_resources().get("CPU", 0.0)),
        "free": None if free is None else sum(free.values()),
        "holders": placement.holders(),
    }


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
