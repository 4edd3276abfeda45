"""Reductions whose combine trees cross relays on the multi-node Ray cluster (several relays:
partials pass from one relay's workers to another's); tests/unit/test_tree.py runs here too."""

import numpy as np
import pytest

import sharded as st
from sharded.runtime.driver import ray_executor, relay
from sharded.runtime.driver import session as _session


@pytest.mark.parametrize("wire_max", [32, 0])
def test_trees_across_several_relays(ray_cluster, monkeypatch, wire_max):
    """Reads over the driver's wire (up to SHARDED_WIRE_MAX workers) or through the relays."""
    monkeypatch.setattr(ray_executor, "RELAY_MIN", 2)
    monkeypatch.setattr(relay, "WIRE_MAX", wire_max)
    monkeypatch.setattr(ray_executor, "RELAY_FANOUT", 2)  # 4 workers: 2 relays
    st.shutdown()
    st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)
    try:
        assert len(_session.current().executor._relays) == 2
        a = np.random.default_rng(0).standard_normal((37, 11))
        for shards in (3, 4, 8):
            x = st.tensor(a, shards=shards)
            assert np.isclose(x.sum().item(), a.sum())
            np.testing.assert_allclose(x.sum(0).numpy(), a.sum(0))
            assert x.argmax().item() == a.argmax()
            s1, s2 = x.sum(), (x * 2).amax()
            assert np.isclose(s1.item() + s2.item(), a.sum() + 2 * a.max())
    finally:
        st.shutdown()
        monkeypatch.undo()  # the package's session again: 4 workers, no relay
        st.init(address=ray_cluster.address, num_workers=4, min_shard_bytes=0)
