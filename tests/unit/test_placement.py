"""Default placement of new tensors: split only into shards of at least ``min_shard_bytes``
(1 MiB unless ``st.init(min_shard_bytes=...)`` says otherwise); smaller tensors live whole on
one worker, round robin, and behave exactly as torch's (views included). The package's
session splits everything (``min_shard_bytes=0``, for the distributed paths); these tests set
the default on the live session and put 0 back afterwards. Expected values are torch's."""

import numpy as np
import pytest

import sharded as st
from sharded.core.dispatch import default_shards
from sharded.runtime.driver import session as S
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

MIB = 1 << 20


@pytest.fixture(autouse=True)
def default_rule():
    s = st.init(min_shard_bytes=MIB)
    yield s
    st.init(min_shard_bytes=0)


def _workers():
    return st.init().executor.num_workers


def test_default_threshold_is_one_mib():
    assert S.DEFAULT_MIN_SHARD_BYTES == MIB
    assert st.init().min_shard_bytes == MIB


@pytest.mark.parametrize(
    "make",
    [
        lambda: st.tensor([[1, 2, 3], [4, 5, 6]]),
        lambda: st.from_numpy(np.ones((4, 5))),
        lambda: st.zeros(7, 3),
        lambda: st.ones(4),
        lambda: st.empty(2, 2),
        lambda: st.full((3, 3), 2.5),
        lambda: st.arange(10),
        lambda: st.linspace(0, 1, 5),
        lambda: st.logspace(0, 2, 3),
        lambda: st.eye(4),
        lambda: st.rand(5, 5),
        lambda: st.randn(5),
        lambda: st.randint(0, 9, (6,)),
        lambda: st.randperm(8),
        lambda: st.zeros(3, 4, dim=1),
        lambda: st.tensor(3.5),
    ],
)
def test_small_tensors_are_whole_on_one_worker(make):
    x = make()
    assert x.layout.num_shards == 1 and not x.layout.is_replicated


def test_small_tensors_spread_round_robin():
    n = _workers()
    ws = [st.zeros(3).layout.workers[0] for _ in range(2 * n)]
    assert sorted(set(ws)) == list(range(n))
    assert all(a != b for a, b in zip(ws, ws[1:])) or n == 1


def test_explicit_shards_and_layout_are_honoured():
    assert st.tensor([1, 2, 3], shards=3).layout.num_shards == 3
    assert st.zeros(4, 2, layout=st.Layout(dim=1)).layout.grid == (1, 2)
    assert st.ones(3, layout=st.Layout.replicated()).layout.is_replicated


def test_split_only_into_shards_of_min_shard_bytes():
    n = _workers()
    st.init(min_shard_bytes=1024)
    assert st.zeros(300, dtype=st.float64).layout.num_shards == min(n, 2)  # 2400 bytes
    assert st.zeros(300, dtype=st.float32).layout.num_shards == 1  # 1200 bytes
    assert st.zeros(1000, dtype=st.float64).layout.num_shards == min(n, 7)
    # no shard is ever empty: two rows of 4 KiB give at most two shards
    assert st.zeros(2, 512, dtype=st.float64).layout.num_shards == min(n, 2)


def test_big_tensor_is_split_over_every_worker():
    n = _workers()
    x = st.zeros(n * MIB // 4, dtype=st.float32)  # exactly 1 MiB a shard
    assert x.layout.num_shards == n
    assert st.zeros(MIB // 4 * 2 - 1, dtype=st.float32).layout.num_shards == 1


def test_default_shards_rule():
    assert default_shards((2, 3), st.float32, 4, MIB) == 1
    assert default_shards((), st.float64, 4, MIB) == 1
    assert default_shards((3 << 17,), st.float64, 4, MIB) == 3
    assert default_shards((2, 3), None, 4, 0) == 2
    assert default_shards((5, 3), None, 4, 0, dim=1) == 3


def test_min_shard_bytes_on_live_session():
    s = st.init()
    assert st.init(min_shard_bytes=0) is s and s.min_shard_bytes == 0
    assert st.tensor([1, 2, 3]).layout.num_shards == min(3, _workers())
    with pytest.raises(st.ArgumentError, match="-1"):
        st.init(min_shard_bytes=-1)
    with pytest.raises(st.ArgumentError, match="1.5"):
        st.init(min_shard_bytes=1.5)
    assert s.min_shard_bytes == 0 and st.init() is s


# ------------------------------------------------------------ the tutorials, exactly as torch
def test_view_of_small_tensor_shares_storage():
    x = st.tensor([[1, 2, 3], [4, 5, 6]])
    v = x.view(3, 2)
    assert v.tolist() == [[1, 2], [3, 4], [5, 6]]
    v[0, 0] = 100
    assert x.tolist() == [[100, 2, 3], [4, 5, 6]]
    x.view(-1)[5] = 60
    assert v.tolist() == [[100, 2], [3, 4], [5, 60]]


def test_other_views_of_small_tensor_share_storage():
    x = st.tensor([[1, 2, 3], [4, 5, 6]])
    x.reshape(6)[1] = 7  # contiguous: reshape is a view
    x[:, 2][1] = -6  # slicing
    x.transpose(0, 1)[0, 1] = 40  # transpose
    x.t()[2, 0] = 30
    x.unsqueeze(0).squeeze(0)[0, 0] = 10
    assert x.tolist() == [[10, 7, 30], [40, 5, -6]]
    sq = st.arange(9).reshape(3, 3)
    d = sq.diagonal()
    d[1] = 44
    assert d.tolist() == [0, 44, 8]
    assert sq.tolist() == [[0, 1, 2], [3, 44, 5], [6, 7, 8]]
    sq.diagonal(1)[0] = -1
    assert sq[0, 1].item() == -1
    cube = st.arange(24).reshape(2, 3, 4)
    d = cube.diagonal(0, 0, 2)  # torch: a view with strides (4, 13)
    assert d.tolist() == [[0, 13], [4, 17], [8, 21]] and d.stride() == (4, 13)
    d[1, 1] = -17
    assert cube[1, 1, 1].item() == -17


def test_ops_on_small_tensors_on_different_workers():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0, 12.0).reshape(2, 3)
    x, y = st.tensor(a, dtype=st.float64), st.tensor(b, dtype=st.float64)
    if _workers() > 1:
        assert x.layout.workers != y.layout.workers
    z = x + y
    assert z.layout == x.layout  # results follow the first full-shape operand
    assert_matches_numpy(z, a + b)
    assert_matches_numpy(x @ y.t(), a @ b.T)
    assert_matches_numpy(x.sum(dim=0), a.sum(0))
    assert x.sum().item() == 15.0
    assert_matches_numpy(st.cat([x, y]), np.concatenate([a, b]))
    x += y
    assert_matches_numpy(x, a + b)


def test_small_and_split_operands_mix():
    st.init(min_shard_bytes=0)
    big = st.arange(12.0, dtype=st.float64).reshape(4, 3)
    st.init(min_shard_bytes=MIB)
    row = st.tensor([1.0, 2.0, 3.0], dtype=st.float64)
    assert big.layout.num_shards > 1 or _workers() == 1
    out = big * row
    assert out.layout == big.layout
    assert_matches_numpy(out, np.arange(12.0).reshape(4, 3) * [1.0, 2.0, 3.0])


def test_autograd_tutorial_on_small_tensors():
    x = st.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    assert out.item() == 27.0
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_linalg_on_small_tensors():
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([9.0, 8.0])
    x = st.linalg.solve(st.tensor(a, dtype=st.float64), st.tensor(b, dtype=st.float64))
    assert np.allclose(x.numpy(), [2.0, 3.0])
