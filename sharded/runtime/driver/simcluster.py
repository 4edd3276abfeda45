"""A simulated multi-node Ray cluster on this machine (``ray.cluster_utils.Cluster``): the
scaling benchmark and the scale-out tests run the driver against N "nodes" that are raylets
of one host. Kept in the runtime because it imports Ray (the only package that may)."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def simulated_cluster(nodes: int = 4, cpus_per_node: int = 8, store_mb: int = 200):
    """Start ``nodes`` raylets of ``cpus_per_node`` CPUs each; yields the cluster address.

    Examples
    --------
    >>> from sharded.runtime.driver.simcluster import simulated_cluster
    >>> with simulated_cluster(2, 2) as address:  # doctest: +SKIP
    ...     st.init(address=address, num_workers=4)
    """
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": cpus_per_node,
            "object_store_memory": store_mb << 20,
            "include_dashboard": False,
            # no idle task workers started ahead (the actors are all we run): on a small
            # machine they would double the processes competing with the actors' start
            "_system_config": {
                "enable_worker_prestart": False,
                "prestart_worker_first_driver": False,
            },
        },
    )
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=cpus_per_node, object_store_memory=store_mb << 20)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()
