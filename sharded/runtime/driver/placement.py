"""Whether the cluster has room for a session's worker actors, and what holds its CPUs.

Every CPU worker is pinned to its node (a hard node affinity), so one whose node lacks the
CPUs would wait in Ray's queue until they come free: on a cluster whose CPUs are held by
another namespace's detached workers, for ever. Before it starts any worker the driver
compares what its new workers need on each node with the node's free CPUs, waits at most the
placement bound (``$SHARDED_PLACEMENT_TIMEOUT_S`` seconds, 5 by default) for the difference
to come free (longer while CPUs are held by no live actor: actors still ending, such as a
previous session's workers, free theirs by themselves), and else raises
:class:`~sharded.errors.PlacementFailed` having started nothing. Workers of a named namespace
that already exist need no room: joining them never waits. GPU workers are not pinned: they
are checked against the GPUs free anywhere (:func:`wait_for_gpus`). (What another driver
takes between the check and the start is not seen: the start then waits for it as long as
any start may take, and if that runs out, the workers that never came up are killed,
:func:`sharded.runtime.service.namespace.abandon`.) Sessions are planned on the nodes with a
free CPU first (:func:`by_room`), so a namespace fits beside another that holds a node.

The error names what holds the CPUs, per Ray namespace (sharded's workers are the actors
named ``sharded-worker-N`` / ``sharded-gpu-worker-N``): read from the GCS actor table, which
also knows each actor's namespace and resources (Ray's state API would need the dashboard).
"""

from __future__ import annotations

import collections
import os
import time

import ray

from ...errors import ArgumentError, PlacementFailed

ENV = "SHARDED_PLACEMENT_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 5.0
WORKER_PREFIXES = ("sharded-worker-", "sharded-gpu-worker-")
POLL_S = 0.25
ENDING_S = 120.0  # the most a wait for CPUs of actors still ending may take (an actor's start)


def timeout_s(env=None) -> float:
    """The placement bound: ``$SHARDED_PLACEMENT_TIMEOUT_S`` seconds (a number >= 0), else 5.

    Examples
    --------
    >>> timeout_s({}), timeout_s({"SHARDED_PLACEMENT_TIMEOUT_S": "0.5"})
    (5.0, 0.5)
    """
    v = (os.environ if env is None else env).get(ENV, "")
    if v == "":
        return DEFAULT_TIMEOUT_S
    try:
        s = float(v)
    except ValueError:
        s = float("nan")
    if not 0 <= s < float("inf"):
        raise ArgumentError(f"{ENV} must be a number of seconds >= 0, got {v!r}")
    return s


def shortfall(demand: dict, free: dict) -> dict:
    """Node -> ``(cpus_needed, cpus_free)`` of every node of ``demand`` whose free CPUs
    (``free``; a node missing there has none) are fewer than it needs.

    Examples
    --------
    >>> shortfall({"a": 2.0, "b": 1.0}, {"a": 0.5, "b": 1.0})
    {'a': (2.0, 0.5)}
    """
    out = {}
    for nid, need in demand.items():
        have = float(free.get(nid, 0.0))
        if need > 0 and have + 1e-9 < need:
            out[nid] = (float(need), have)
    return out


def summarize(actors) -> list:
    """What holds CPUs, per namespace, most first: ``actors`` are ``(namespace, name, cpus)``
    of the live actors; each namespace holding any CPU gives ``namespace``, ``workers``
    (sharded's), ``others`` (other actors holding CPUs) and ``cpus``.

    Examples
    --------
    >>> summarize([("lab", "sharded-worker-0", 1.0), ("lab", "sharded-worker-1", 1.0),
    ...            ("lab", "sharded-registry", 0.0), ("x", "", 0.5)])
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'namespace': 'lab', 'workers': 2, 'others': 0, 'cpus': 2.0},
     {'namespace': 'x', 'workers': 0, 'others': 1, 'cpus': 0.5}]
    """
    by = collections.defaultdict(lambda: {"workers": 0, "others": 0, "cpus": 0.0})
    for ns, name, cpus in actors:
        h, cpus = by[ns], float(cpus or 0.0)
        if name and name.startswith(WORKER_PREFIXES):
            h["workers"] += 1
        elif cpus > 0:
            h["others"] += 1
        h["cpus"] += cpus
    rows = [dict(namespace=ns, **h) for ns, h in by.items() if h["cpus"] > 0 or h["workers"]]
    return sorted(rows, key=lambda r: (-r["cpus"], r["namespace"]))


def message(what: str, short: dict, holders, total: float, free: float, waited: float) -> str:
    """The text of :class:`~sharded.errors.PlacementFailed`.

    Examples
    --------
    >>> print(message("2 workers of namespace 'other'", {"ab12cd34ef": (2.0, 0.0)},
    ...               [dict(namespace="lab", workers=2, others=0, cpus=2.0)], 2.0, 0.0, 5.0))
    ... # doctest: +NORMALIZE_WHITESPACE
    no room for 2 workers of namespace 'other' after 5 s: node ab12cd34 needs 2 CPUs, has 0
    free. Of the cluster's 2 CPUs (0 free), namespace 'lab' holds 2 with 2 sharded workers.
    See `sharded service status`; ask for fewer workers (st.init(num_workers=...)), join a
    namespace whose workers exist (st.init(namespace=...): its published tensors need no
    new workers), or stop one no longer needed (`sharded service stop --namespace NAME`
    frees its workers and published tensors).
    """
    nodes = ", ".join(
        f"node {nid[:8]} needs {need:g} CPUs, has {have:g} free"
        for nid, (need, have) in sorted(short.items())
    )
    held = []
    for h in (h for h in holders if h["cpus"] > 0):
        parts = [f"{h['workers']} sharded workers"] if h["workers"] else []
        parts += [f"{h['others']} other actors"] if h["others"] else []
        held.append(f"namespace {h['namespace']!r} holds {h['cpus']:g} with {' and '.join(parts)}")
    rest = total - free - sum(h["cpus"] for h in holders)
    if rest > 1e-9:
        held.append(f"tasks or actors still starting hold {rest:g}")
    return (
        f"no room for {what} after {waited:g} s: {nodes}. Of the cluster's {total:g} CPUs "
        f"({free:g} free), {'; '.join(held) or 'nothing is held'}. See `sharded service "
        "status`; ask for fewer workers (st.init(num_workers=...)), join a namespace whose "
        "workers exist (st.init(namespace=...): its published tensors need no new workers), "
        "or stop one no longer needed (`sharded service stop --namespace NAME` frees its "
        "workers and published tensors)."
    )


# --- reading the cluster (Ray) ---


def free_cpus() -> dict | None:
    """Node id -> free CPUs of every live node; None if Ray cannot tell (Ray Client, or a
    Ray whose internals moved): the check is then skipped."""
    return _free("CPU")


def _free(resource: str) -> dict | None:
    if ray.util.client.ray.is_connected():  # Ray Client: the GCS is not reachable from here
        return None
    try:
        from ray._private import state

        per = state.available_resources_per_node()
    except Exception:  # an older or newer Ray: the check is skipped, the start bounded
        return None
    return {nid: float(r.get(resource, 0.0)) for nid, r in per.items()}


def _actor_table() -> list | None:
    """``(record, state name)`` of every actor not dead, from the GCS's table; None if
    unreadable."""
    if ray.util.client.ray.is_connected():
        return None
    try:
        from ray._private import state
        from ray.core.generated import gcs_pb2

        rows = state.state._connect_and_get_accessor().get_actor_table(None, None)
        recs = [gcs_pb2.ActorTableData.FromString(r) for r in rows]
        name = gcs_pb2.ActorTableData.ActorState.Name
        return [(a, name(a.state)) for a in recs if name(a.state) != "DEAD"]
    except Exception:  # a Ray whose internals moved: holders are then named by name only
        return None


def live_actors() -> list:
    """``(namespace, name, cpus)`` of every live or pending actor that holds or asks for CPUs
    (pending ones hold none yet, so they count 0)."""
    table = _actor_table()
    if table is None:
        return [
            (a["namespace"], a["name"], None)
            for a in ray.util.list_named_actors(all_namespaces=True)
        ]
    return [
        (a.ray_namespace, a.name, a.required_resources.get("CPU", 0.0) if st == "ALIVE" else 0)
        for a, st in table
    ]


def workers() -> dict:
    """Namespace -> sharded worker actors there, each ``name``, ``node`` (hex id, None while
    not placed), ``cpus`` and ``gpus`` (its reservation) and ``state`` (``ALIVE``, or e.g.
    ``PENDING_CREATION`` while it waits for room), sorted by name; ``{}`` if Ray's actor
    table is unreadable."""
    out: dict = {}
    for a, st in _actor_table() or ():
        if not a.name.startswith(WORKER_PREFIXES):
            continue
        res = a.required_resources
        out.setdefault(a.ray_namespace, []).append(
            dict(
                name=a.name,
                node=a.node_id.hex() if st == "ALIVE" and a.node_id else None,
                cpus=float(res.get("CPU", 0.0)),
                gpus=float(res.get("GPU", 0.0)),
                state=st,
            )
        )
    return {ns: sorted(ws, key=_by_number) for ns, ws in sorted(out.items())}


def _by_number(w) -> tuple:
    """``sharded-worker-10`` after ``sharded-worker-9``; GPU workers after the CPU ones."""
    head, _, n = w["name"].rpartition("-")
    return (head != "sharded-worker", int(n) if n.isdigit() else 0, w["name"])


def holders() -> list:
    """What holds the cluster's CPUs, per namespace (:func:`summarize` of the live actors)."""
    return summarize(live_actors())


def _total_cpus() -> float:
    return float(ray.cluster_resources().get("CPU", 0.0))


def fail(what: str, demand: dict, waited: float) -> PlacementFailed:
    """The :class:`~sharded.errors.PlacementFailed` for ``demand`` (node -> CPUs) now."""
    free = free_cpus() or {}
    short, hs = shortfall(demand, free), holders()
    text = message(what, short, hs, _total_cpus(), sum(free.values()), waited)
    return PlacementFailed(text, short, hs)


def wait_for_room(demand: dict, what: str, bound: float | None = None) -> None:
    """Return once every node of ``demand`` (node -> CPUs) has them free; else, after
    ``bound`` seconds (default :func:`timeout_s`), raise
    :class:`~sharded.errors.PlacementFailed` naming ``what`` and what holds the CPUs."""
    bound = timeout_s() if bound is None else bound
    t0 = time.monotonic()
    while True:
        free = free_cpus()
        if free is None or not shortfall(demand, free):
            return
        waited = time.monotonic() - t0
        # CPUs held by no live actor belong to actors still ending (a session's workers
        # just killed release theirs when their processes exit, later on a busy machine)
        # or to tasks: they come free by themselves, so only the start's own bound applies
        if waited >= bound and (waited >= ENDING_S or not _ending(free)):
            raise fail(what, demand, round(waited, 1))
        time.sleep(POLL_S)


def _ending(free: dict) -> bool:
    """Whether CPUs are held by no live actor (see :func:`wait_for_room`)."""
    held = sum(h["cpus"] for h in holders())
    return _total_cpus() - sum(free.values()) - held > 1e-9


def by_room(nodes, free=None) -> list:
    """Ray's node records ``nodes``, those without a whole free CPU last (else in their
    order), so a session's workers are planned first where there is room: beside a namespace
    whose workers hold one node, on the others. ``free``: node id -> free CPUs (default
    :func:`free_cpus`; unknown keeps the order).

    Examples
    --------
    >>> [n["NodeID"] for n in by_room([{"NodeID": "a"}, {"NodeID": "b"}], {"a": 0.0, "b": 2.0})]
    ['b', 'a']
    """
    free = free_cpus() if free is None else free
    if not free:
        return list(nodes)
    return sorted(nodes, key=lambda n: free.get(n["NodeID"], 0.0) < 1.0)


def _exists(name: str, namespace: str) -> bool:
    try:
        ray.get_actor(name, namespace=namespace)
        return True
    except ValueError:
        return False


def _what(n: int, namespace: str, shared: bool, kind: str = "") -> str:
    if shared:
        return f"{n} {kind}workers of namespace {namespace!r}"
    return f"this session's {n} {kind}workers"


def room(names, nodes, need: float, namespace: str, shared: bool, gpu_fraction=None) -> None:
    """Wait (:func:`wait_for_room`) until the CPU workers ``names`` (pinned to ``nodes``,
    ``need`` CPUs each) fit, then (:func:`wait_for_gpus`) until the GPU workers, the names
    after them, fit at ``gpu_fraction`` GPUs each (None: they are not checked); in a shared
    namespace the workers that exist already count for nothing."""
    demand: dict = collections.defaultdict(float)
    n = 0
    for name, nid in zip(names, nodes):
        if not (shared and _exists(name, namespace)):
            demand[nid] += need
            n += 1
    if n:
        wait_for_room(dict(demand), _what(n, namespace, shared))
    gpu = [g for g in names[len(nodes) :] if not (shared and _exists(g, namespace))]
    if gpu and gpu_fraction:
        wait_for_gpus(len(gpu), float(gpu_fraction), _what(len(gpu), namespace, shared, "GPU "))


# --- GPU workers: not pinned, so any node's free GPUs will do ---


def gpu_fit(free: dict, fraction: float) -> int:
    """How many workers of ``fraction`` GPUs each the free GPUs ``free`` (node -> GPUs) hold.

    Examples
    --------
    >>> gpu_fit({"a": 1.0, "b": 0.5, "c": 0.25}, 0.5)
    3
    """
    return sum(int(f / fraction + 1e-9) for f in free.values())


def gpu_holders() -> list:
    """What holds the cluster's GPUs, per namespace, most first: ``namespace``, ``workers``
    (sharded's), ``others`` (other actors) and ``gpus``."""
    by = collections.defaultdict(lambda: {"workers": 0, "others": 0, "gpus": 0.0})
    for a, st in _actor_table() or ():
        gpus = float(a.required_resources.get("GPU", 0.0)) if st == "ALIVE" else 0.0
        if gpus > 0:
            h = by[a.ray_namespace]
            h["workers" if a.name.startswith(WORKER_PREFIXES) else "others"] += 1
            h["gpus"] += gpus
    rows = [dict(namespace=ns, **h) for ns, h in by.items()]
    return sorted(rows, key=lambda r: (-r["gpus"], r["namespace"]))


def gpu_message(what, fraction, fit, holders, total, free, waited) -> str:
    """The text of :class:`~sharded.errors.PlacementFailed` for GPU workers.

    Examples
    --------
    >>> print(gpu_message("1 GPU workers of namespace 'g'", 1.0, 0,
    ...                   [dict(namespace="tmp", workers=0, others=1, gpus=1.0)], 1.0, 0.0, 5))
    ... # doctest: +NORMALIZE_WHITESPACE
    no room for 1 GPU workers of namespace 'g' after 5 s: at 1 GPUs each, the free GPUs hold
    0. Of the cluster's 1 GPUs (0 free), namespace 'tmp' holds 1 with 1 other actors. See
    `sharded service status`; ask for fewer GPU workers (st.init(gpu_workers=...), or a smaller
    gpu_fraction), or stop a namespace no longer needed (`sharded service stop --namespace
    NAME`).
    """
    held = []
    for h in holders:
        parts = [f"{h['workers']} sharded workers"] if h["workers"] else []
        parts += [f"{h['others']} other actors"] if h["others"] else []
        held.append(f"namespace {h['namespace']!r} holds {h['gpus']:g} with {' and '.join(parts)}")
    return (
        f"no room for {what} after {waited:g} s: at {fraction:g} GPUs each, the free GPUs hold "
        f"{fit}. Of the cluster's {total:g} GPUs ({free:g} free), "
        f"{'; '.join(held) or 'nothing is held'}. See `sharded service status`; ask for fewer "
        "GPU workers (st.init(gpu_workers=...), or a smaller gpu_fraction), or stop a "
        "namespace no longer needed (`sharded service stop --namespace NAME`)."
    )


def wait_for_gpus(n: int, fraction: float, what: str, bound: float | None = None) -> None:
    """Return once the cluster's free GPUs hold ``n`` workers of ``fraction`` GPUs each; else,
    after ``bound`` seconds (default :func:`timeout_s`; longer while GPUs are held by no live
    actor, as in :func:`wait_for_room`), raise :class:`~sharded.errors.PlacementFailed`."""
    bound = timeout_s() if bound is None else bound
    t0 = time.monotonic()
    while True:
        free = _free("GPU")
        if free is None or gpu_fit(free, fraction) >= n:
            return
        waited = time.monotonic() - t0
        total = float(ray.cluster_resources().get("GPU", 0.0))
        hs = gpu_holders()
        ending = total - sum(free.values()) - sum(h["gpus"] for h in hs) > 1e-9
        if waited >= bound and (waited >= ENDING_S or not ending):
            fit, have = gpu_fit(free, fraction), sum(free.values())
            text = gpu_message(what, fraction, fit, hs, total, have, round(waited, 1))
            raise PlacementFailed(text, {}, hs)
        time.sleep(POLL_S)
