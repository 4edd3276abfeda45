"""One real multi-node Ray cluster (separate raylets and object stores) per test session."""

import pytest

import sharded as st
from sharded.core import dispatch

dispatch.CHECK_SPECS = True  # planners agree with their primitives' out_spec on Ray too

NODES, CPUS_PER_NODE = 2, 2
NODE_MEMORY = 4 << 30  # Ray's `memory` resource of each node (a worker pools 1/8 of its share)


@pytest.fixture(scope="session")
def ray_cluster():
    from ray.cluster_utils import Cluster

    st.shutdown()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": CPUS_PER_NODE,
            "memory": NODE_MEMORY,
            "object_store_memory": 300 * 2**20,
            "include_dashboard": False,
        },
    )
    for _ in range(NODES - 1):
        cluster.add_node(
            num_cpus=CPUS_PER_NODE, memory=NODE_MEMORY, object_store_memory=300 * 2**20
        )
    cluster.wait_for_nodes()
    yield cluster
    st.shutdown()
    cluster.shutdown()


@pytest.fixture(scope="package", autouse=True)
def ray_session(ray_cluster):
    """A session of 4 workers on the 2-node cluster (interleaved: nodes A, B, A, B)."""
    st.shutdown()
    st.init(address=ray_cluster.address, num_workers=NODES * CPUS_PER_NODE, min_shard_bytes=0)
    yield
    st.shutdown()
