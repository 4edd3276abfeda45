"""x.storage()/untyped_storage() describe the sharded storage; st.cuda answers for workers."""

import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def test_storage_describes_shards():
    x = st.arange(12.0, shards=3)
    s = x.storage()
    assert len(s) == s.size() == 12 and s.nbytes() == 48 and s.element_size() == 4
    assert [(sh.offset, sh.elements, sh.nbytes) for sh in s.shards] == [
        (0, 4, 16),
        (4, 4, 16),
        (8, 4, 16),
    ]
    assert [sh.worker for sh in s.shards] == list(x.layout.workers)
    assert s.tolist() == [float(i) for i in range(12)]
    u = x.untyped_storage()
    assert u.size() == 48 and u.element_size() == 1 and len(u.tolist()) == 48
    assert "3 shards" in repr(s) and "UntypedStorage" in repr(u)


def test_storage_of_views_and_columns():
    x = st.arange(6, shards=2)
    v = x[3:]
    assert v.storage().tolist() == [0, 1, 2, 3, 4, 5]  # a view shares its base's storage
    c = st.zeros(4, 6, shards=2, dim=1).storage()
    assert [(sh.offset, sh.shape, sh.start) for sh in c.shards] == [
        (0, (4, 3), (0, 0)),
        (3, (4, 3), (0, 3)),
    ]
    assert st.tensor([1, 2, 3]).untyped_storage().tolist()[:8] == [1, 0, 0, 0, 0, 0, 0, 0]


def test_storage_tolist_refuses_big(monkeypatch):
    monkeypatch.setattr(st.storage, "TOLIST_LIMIT", 4)
    with pytest.raises(st.ArgumentError, match="5 elements"):
        st.zeros(5).storage().tolist()


def test_cuda_counts_session_gpus():
    assert st.cuda.is_available() is False
    assert st.cuda.device_count() == 0
