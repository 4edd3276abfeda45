"""Room for worker actors (pure parts): the bound, what each node lacks, who holds the CPUs."""

import pytest

import sharded as st
from sharded.runtime.driver import placement as P


def test_the_bound_comes_from_the_environment_and_bad_values_are_named():
    assert P.timeout_s({}) == 5.0
    assert P.timeout_s({"SHARDED_PLACEMENT_TIMEOUT_S": "0"}) == 0.0
    assert P.timeout_s({"SHARDED_PLACEMENT_TIMEOUT_S": "2.5"}) == 2.5
    for bad in ("-1", "soon", "inf", "nan"):
        with pytest.raises(st.ArgumentError, match=f"SHARDED_PLACEMENT_TIMEOUT_S .* {bad!r}"):
            P.timeout_s({"SHARDED_PLACEMENT_TIMEOUT_S": bad})


def test_shortfall_names_only_the_nodes_that_lack_cpus():
    demand = {"a": 2.0, "b": 1.0, "c": 0.5}
    assert P.shortfall(demand, {"a": 2.0, "b": 1.0, "c": 4.0}) == {}
    assert P.shortfall(demand, {"a": 1.5, "b": 1.0}) == {"a": (2.0, 1.5), "c": (0.5, 0.0)}
    # fractional shares of oversubscribed workers add up exactly
    assert P.shortfall({"a": 0.25 * 8}, {"a": 2.0}) == {}


def test_summarize_groups_sharded_workers_and_other_holders_per_namespace():
    rows = P.summarize(
        [
            ("x", "trainer", 0.5),
            ("lab", "sharded-worker-0", 1.0),
            ("lab", "sharded-worker-1", 1.0),
            ("lab", "sharded-gpu-worker-0", 0.0),
            ("lab", "sharded-registry", 0.0),
            ("idle", "sharded-registry", 0.0),  # holds nothing: left out
            ("sharded-1a2b3c4d", "sharded-worker-0", 0.5),
        ]
    )
    assert rows == [
        {"namespace": "lab", "workers": 3, "others": 0, "cpus": 2.0},
        {"namespace": "sharded-1a2b3c4d", "workers": 1, "others": 0, "cpus": 0.5},
        {"namespace": "x", "workers": 0, "others": 1, "cpus": 0.5},
    ]


def test_the_message_names_the_shortage_the_holders_and_the_ways_out():
    holders = [
        dict(namespace="lab", workers=2, others=0, cpus=2.0),
        dict(namespace="x", workers=0, others=1, cpus=1.0),
        dict(namespace="gpu", workers=1, others=0, cpus=0.0),  # holds no CPU: not named
    ]
    msg = P.message("this session's 3 workers", {"n1234567890": (3.0, 0.0)}, holders, 4.0, 0.0, 5)
    assert msg.startswith(
        "no room for this session's 3 workers after 5 s: node n1234567 needs 3 CPUs, has 0 free."
    )
    assert (
        "Of the cluster's 4 CPUs (0 free), namespace 'lab' holds 2 with 2 sharded workers; "
        "namespace 'x' holds 1 with 1 other actors; tasks or actors still starting hold 1." in msg
    )
    assert "'gpu'" not in msg
    for way in ("sharded service status", "st.init(num_workers=...)", "sharded service stop"):
        assert way in msg


def test_placement_failed_is_a_worker_lost_with_its_details():
    e = st.PlacementFailed("no room", {"n": (2.0, 0.0)}, [{"namespace": "lab"}])
    assert isinstance(e, st.WorkerLost) and isinstance(e, st.ShardedError)
    assert e.short == {"n": (2.0, 0.0)} and e.holders == ({"namespace": "lab"},)
    assert e.workers == () and str(e) == "no room"


def test_nodes_without_a_free_cpu_are_planned_last_in_their_order():
    nodes = [{"NodeID": n} for n in "abcd"]
    free = {"a": 0.0, "b": 2.0, "c": 0.5, "d": 1.0}  # c: less than one whole CPU
    assert [n["NodeID"] for n in P.by_room(nodes, free)] == ["b", "d", "a", "c"]
    everywhere = {n: 4.0 for n in "abcd"}  # a fresh cluster: the order stays
    assert [n["NodeID"] for n in P.by_room(nodes, everywhere)] == list("abcd")


def test_gpu_workers_fit_by_whole_fractions_and_the_message_names_the_holders():
    assert P.gpu_fit({"a": 1.0, "b": 0.75}, 0.5) == 3  # b's spare quarter holds no worker
    assert P.gpu_fit({"a": 1.0}, 1.0) == 1 and P.gpu_fit({}, 0.25) == 0
    holders = [dict(namespace="lab", workers=2, others=0, gpus=1.0)]
    msg = P.gpu_message("this session's 2 GPU workers", 0.5, 0, holders, 1.0, 0.0, 5)
    assert msg.startswith(
        "no room for this session's 2 GPU workers after 5 s: at 0.5 GPUs each, the free GPUs "
        "hold 0. Of the cluster's 1 GPUs (0 free), namespace 'lab' holds 1 with 2 sharded workers."
    )
    assert "st.init(gpu_workers=...)" in msg and "sharded service stop" in msg
