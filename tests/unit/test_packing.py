"""Batches as bytes for Ray (sharded.runtime.packing): a flush's shared layout commands are
pickled once for all its batches, the recovery log reuses what was sent, and a worker runs
a packed batch as it runs the records."""

import numpy as np

from sharded.runtime.commands import (
    Const,
    Export,
    Free,
    Group,
    Keys,
    LayoutCmds,
    LayoutSync,
    Mod,
)
from sharded.runtime.packing import BatchPacker, dump_batch, load_batch
from sharded.runtime.worker.core import Worker


def test_a_flush_packs_its_shared_layout_commands_once():
    pk = BatchPacker()
    shared = [Group("add", Mod(2, 2), (Keys(1), Const(1.0)), 3, {}, ("add", 0), False)]
    a, b = [LayoutCmds(None, shared), Free((9,))], [LayoutCmds(None, shared)]
    da, db = pk.pack(a), pk.pack(b)
    head_a, head_b = load_batch(da)[0], load_batch(db)[0]
    assert head_a.cmds is not None and head_a.cmds == head_b.cmds  # the same bytes, once
    assert load_batch(head_a.cmds) == shared
    assert pk.packed(b) is db  # (the recovery log takes what was just sent)
    again = pk.packed(a)  # (not the last one: packed anew, to the same bytes)
    assert again == da and again is not da


def test_a_worker_runs_a_packed_batch_like_its_records():
    cmds = [
        LayoutCmds(None, [Group("add", Mod(1, 1), (Keys(1), Const(2.0)), 2, {}, "add", False)]),
        LayoutSync(1),  # (the layout commands queued before the export run first)
        Export(2, None),
    ]
    w1, w2 = Worker(0), Worker(0)
    for w in (w1, w2):
        w.store[1] = np.arange(4.0)
    plain = w1.run(list(cmds))
    packed = w2.run(BatchPacker().pack(list(cmds)))
    np.testing.assert_array_equal(plain[1], np.arange(4.0) + 2)
    np.testing.assert_array_equal(packed[1], plain[1])
    assert load_batch(dump_batch(cmds[1:])) == cmds[1:]


def test_once_the_wire_encoded_a_flushs_layout_commands_ray_batches_take_that_encoding():
    from sharded.runtime.net import codec
    from sharded.runtime.packing import shared_layout

    pk = BatchPacker()
    shared = [Group("add", Mod(1, 1), (Keys(1), Const(2.0)), 2, {}, "add", False)]
    data = pk.shared_data(shared)
    assert type(data) is codec.Encoded and pk.shared_data(shared) is data  # (once a flush)
    batch = [LayoutCmds(None, shared), LayoutSync(1), Export(2, None)]
    head = load_batch(pk.pack(batch))[0]
    assert head.cmds.body == data.body and shared_layout(head.cmds) == shared  # not pickled
    w = Worker(0)
    w.store[1] = np.arange(4.0)
    np.testing.assert_array_equal(w.run(pk.packed(batch))[1], np.arange(4.0) + 2)
    assert pk.shared_data([np.zeros(10_000)]) is None  # (its buffer would go with each frame)
    assert load_batch(pk.pack([LayoutCmds(None, [Free((3,))])]))[0].cmds == dump_batch(
        [Free((3,))]
    )  # (a flush the wire did not encode: pickled)
