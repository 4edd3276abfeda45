"""A driver joining a cluster attaches to the node named by ``$SHARDED_RAY_NODE_IP`` (what the
client role of ``cluster.ray_cluster`` sets for its command), never to Ray's own pick, which is
the head wherever several nodes share one process table. The client role itself runs for
real in ``tests/cluster/test_compose_services_run.py``, whose demo solves a system whose
blocks are above Ray's inline size."""

from __future__ import annotations

from sharded.runtime.service.namespace import NODE_IP_ENV, attach_kw


def test_the_node_ip_names_the_node_a_joining_driver_attaches_to(monkeypatch):
    monkeypatch.setenv(NODE_IP_ENV, "10.231.0.4")
    assert attach_kw("10.231.0.1:6379") == {"_node_ip_address": "10.231.0.4"}
    assert attach_kw("auto") == {"_node_ip_address": "10.231.0.4"}
    # an embedded Ray starts its own node: nothing to attach to
    assert attach_kw(None) == {} and attach_kw("local") == {}


def test_without_the_variable_ray_picks_the_node(monkeypatch):
    monkeypatch.delenv(NODE_IP_ENV, raising=False)
    assert attach_kw("10.231.0.1:6379") == {}
