"""Node introspection: the machines a session's workers run on, as plain dicts.

Kept in the runtime because it asks Ray (the only package that may); :func:`sharded.info`
builds the user-facing summary from these dicts.
"""

from __future__ import annotations


def nodes(executor) -> list:
    """One dict per live node of ``executor``'s cluster.

    A Ray node gives ``node`` (its id), ``address``, ``cpus``, ``gpus``, ``memory_bytes`` and
    ``object_store_bytes``; the in-process executor has one node, ``{"node": "local",
    "address": "in-process"}``.

    Examples
    --------
    >>> from sharded.runtime.driver.local import LocalExecutor
    >>> from sharded.runtime.driver.nodes import nodes
    >>> ex = LocalExecutor(1); nodes(ex); ex.close()
    [{'node': 'local', 'address': 'in-process'}]
    """
    if executor.kind != "ray":
        return [{"node": "local", "address": "in-process"}]
    import ray  # only a Ray session gets here: the local executor must not need Ray

    out = []
    for n in ray.nodes():
        if n.get("Alive"):
            r = n["Resources"]
            out.append(
                {
                    "node": n["NodeID"],
                    "address": n["NodeManagerAddress"],
                    "cpus": r.get("CPU", 0),
                    "gpus": r.get("GPU", 0),
                    "memory_bytes": int(r.get("memory", 0)),
                    "object_store_bytes": int(r.get("object_store_memory", 0)),
                }
            )
    return out


def memory_of(nodes, node_ids):
    """Bytes of memory of the nodes that run the workers ``node_ids``, each counted once:
    the ``memory`` and ``object_store_memory`` resources Ray gives each node (together, its
    free memory when Ray started there, container limits included, unless set by hand);
    None if Ray reports none.

    Examples
    --------
    >>> node = {"NodeID": "a", "Resources": {"memory": 4, "object_store_memory": 2}}
    >>> memory_of([node], ["a", "a"]), memory_of([node], ["b"])
    (6, None)
    """
    mem = {
        n["NodeID"]: n["Resources"].get("memory", 0) + n["Resources"].get("object_store_memory", 0)
        for n in nodes
    }
    total = int(sum(mem.get(nid, 0) for nid in set(node_ids)))
    return total or None
