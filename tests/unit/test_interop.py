import numpy as np
import pytest

import sharded as st
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def test_numpy_roundtrip_is_a_copy():
    a = np.arange(12.0).reshape(3, 4)
    x = st.from_numpy(a, shards=2)
    n = x.numpy()
    n[0, 0] = 99
    assert x.numpy()[0, 0] == 0.0
    a[1, 1] = -5  # the tensor copied the array at creation
    assert x.numpy()[1, 1] == 5.0
    assert np.asarray(x).dtype == np.float64
    assert np.asarray(x, dtype=np.float32).dtype == np.float32
    assert x.tolist() == np.arange(12.0).reshape(3, 4).tolist()


def test_item_and_python_conversions():
    assert st.tensor([7]).item() == 7 and isinstance(st.tensor([7]).item(), int)
    assert float(st.tensor(2.5)) == 2.5 and int(st.tensor([3.9])) == 3
    assert bool(st.tensor([1])) and not bool(st.tensor(0.0))
    assert [10, 20, 30][st.tensor(1)] == 20
    with pytest.raises(st.ArgumentError, match="6 elements"):
        st.ones(2, 3).item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(st.ones(2))


def test_info_methods():
    x = st.zeros(6, 4, shards=3, dtype=st.float64)
    assert x.shape == (6, 4) and x.size() == (6, 4) and x.size(1) == 4 and x.size(-2) == 6
    assert x.dim() == 2 and x.ndim == 2 and x.numel() == 24 and len(x) == 6
    assert x.device == "cpu" and x.dtype == st.float64 and x.element_size() == 8
    assert repr(x.shape) == "sharded.Size([6, 4])"
    p = x.placement()
    assert [q["offsets"] for q in p] == [(0, 0), (2, 0), (4, 0)]
    assert all(set(q) >= {"worker", "node", "device", "offsets", "shape"} for q in p)
    text = x.visualize()
    assert "3 shards" in text and "worker" in text
    with pytest.raises(TypeError):
        len(st.tensor(1.0))


def test_repr_like_torch():
    assert repr(st.tensor([1.0, 2.0])) == "tensor([1., 2.], shards=2)"
    assert repr(st.tensor([1, 2], shards=1)) == "tensor([1, 2], shards=1)"
    assert "dtype=sharded.float64" in repr(st.tensor([1.5], dtype=st.float64))
    r = repr(st.arange(4000, shards=3).float())
    assert "  ..." in r and "3.9990e+03" in r and r.count(",") < 12  # torch: ratio > 1000, sci
    r2 = repr(st.ones(40, 50, layout=st.Layout.block((2, 2))))
    assert r2.count("\n") == 6 and "..." in r2
    assert "tensor(3.5000" in repr(st.tensor(3.5)) or "tensor(3.5" in repr(st.tensor(3.5))
    assert "requires_grad=True" in repr(st.ones(2, requires_grad=True))


def test_repr_shows_only_fetched_corners():
    x = st.arange(10_000, shards=4)
    r = repr(x)
    assert "9999" in r and "5000" not in r


def test_stats_and_synchronize():
    st.synchronize()
    s = st.stats()
    n = st.runtime.current().executor.num_workers
    assert len(s["workers"]) == n and s["live_shards"] >= 0
    assert st.info()["executor"] in ("local", "ray")


def test_numpy_scalar_interplay():
    x = st.tensor([1.0, 2.0], dtype=st.float64)
    assert_matches_numpy(np.float64(3) + x, np.array([4.0, 5.0]))
    assert_matches_numpy(np.array([1.0, 1.0]) * x, np.array([1.0, 2.0]))
