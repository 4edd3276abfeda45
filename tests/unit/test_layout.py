import pytest

import sharded as st
from sharded.layout import Layout, resolve, split_sizes


def test_split_sizes_like_array_split():
    assert split_sizes(7, 3) == (3, 2, 2)
    assert split_sizes(2, 3) == (1, 1, 0)
    assert split_sizes(0, 2) == (0, 0)


def test_bind_default_round_robin():
    lay = resolve((7, 4), 2, shards=3)
    assert lay.grid == (3, 1)
    assert lay.workers == (0, 1, 0)
    assert [s[1:] for s in lay.shards()] == [((0, 0), (3, 4)), ((3, 0), (2, 4)), ((5, 0), (2, 4))]


def test_bind_dim_chunks_block_replicated():
    assert resolve((4, 6), 2, dim=1, shards=3).chunk_sizes(1) == (2, 2, 2)
    lay = Layout(chunks={0: (1, 3), 1: (2, 4)}).bind((4, 6), 4)
    assert lay.grid == (2, 2) and lay.shard_offsets(3) == (1, 2)
    blk = Layout.block((2, 3)).bind((4, 6), 4)
    assert blk.num_shards == 6 and blk.workers == (0, 1, 2, 3, 0, 1)
    rep = Layout.replicated().bind((3,), 3)
    assert rep.is_replicated and rep.workers == (0, 1, 2)
    assert [s[2] for s in rep.shards()] == [(3,)] * 3


def test_coords_roundtrip_and_overlaps():
    lay = Layout.block((2, 3)).bind((5, 7), 3)
    for i in range(lay.num_shards):
        assert lay.index(lay.coords(i)) == i
    hits = lay.overlaps(((2, 4), (1, 6)))
    covered = sum((d[0].stop - d[0].start) * (d[1].stop - d[1].start) for _, _, d in hits)
    assert covered == 2 * 5
    assert lay.overlaps(((2, 2), (0, 7))) == []


def test_layout_equality_and_repr():
    a = resolve((6,), 2, shards=2)
    b = resolve((6,), 2, shards=2)
    assert a == b and hash(a) == hash(b)
    assert a != resolve((6,), 2, shards=3)
    assert "grid" in repr(a) and "Layout(" in repr(Layout(dim=1))


@pytest.mark.parametrize(
    "kw, err",
    [
        (dict(shards=0), st.ShardingError),
        (dict(shards=-2), st.ShardingError),
        (dict(shards=2.5), st.ShardingError),
        (dict(dim=2), st.DimError),
        (dict(layout=Layout(chunks=(3, 3))), st.LayoutMismatch),
        (dict(layout=Layout.block((2, 2, 2))), st.LayoutMismatch),
        (
            dict(
                layout=Layout(workers=(0, 9)),
            ),
            st.ShardingError,
        ),
    ],
)
def test_bad_placements_raise_typed_errors(kw, err):
    with pytest.raises(err) as e:
        resolve((7, 4), 2, **kw)
    assert isinstance(e.value, (ValueError, IndexError))


def test_error_messages_name_values():
    with pytest.raises(st.ShardingError, match="-2"):
        resolve((4,), 2, shards=-2)
    with pytest.raises(st.DimError, match="dim 5"):
        resolve((4, 4), 2, dim=5)
    with pytest.raises(st.LayoutMismatch, match=r"\(3, 3\).*7"):
        Layout(chunks=(3, 3)).bind((7,), 2)


def test_boundaries_are_cut_points():
    a = Layout(boundaries=(3, 5)).bind((7, 2), 2)
    b = Layout(boundaries=(0, 3, 5, 7)).bind((7, 2), 2)
    assert a == b and a.chunk_sizes(0) == (3, 2, 2)
    c = Layout(dim=1, boundaries=[1]).bind((2, 4), 2)
    assert c.chunk_sizes(1) == (1, 3)
    with pytest.raises(st.LayoutMismatch, match="boundaries"):
        Layout(boundaries=(5, 3)).bind((7,), 2)


def test_boundaries_on_an_empty_dim():
    # issue 12: (0,) cuts a size-0 dim into one empty chunk (it was a LayoutMismatch)
    lay = Layout(boundaries=(0,), dim=0).bind((0, 3), 2)
    assert lay.bounds == ((0, 0), (0, 3))
    assert Layout(boundaries={1: (0,)}).bind((3, 0), 2).bounds == ((0, 3), (0, 0))
    assert Layout(boundaries=(0, 3, 5, 7)).bind((7,), 2).chunk_sizes(0) == (3, 2, 2)
    assert Layout(boundaries=(3, 5)).bind((7,), 2).chunk_sizes(0) == (3, 2, 2)
    assert st.zeros(0, 3, layout=Layout(boundaries=(0,), dim=0)).shape == (0, 3)
    with pytest.raises(st.LayoutMismatch, match="boundaries"):
        Layout(boundaries=(1,)).bind((0,), 2)


def test_shard_counts_are_capped_at_the_dims_length():
    assert resolve((10,), 2, shards=10**6).chunk_sizes(0) == (1,) * 10
    assert resolve((2, 5), 3, shards=3).chunk_sizes(0) == (1, 1)  # no empty shard
    assert resolve((0, 3), 2, shards=5).grid == (1, 1)  # a 0-length dim: one empty shard
    assert Layout.block((10**6, 10**6)).bind((2, 3), 4).grid == (2, 3)
    assert Layout(chunks=(2, 0)).bind((2,), 2).chunk_sizes(0) == (2, 0)  # chunks= as given
    with pytest.raises(st.ShardingError, match="shards must be a positive int, got 0"):
        resolve((0,), 2, shards=0)  # checked before the cap
