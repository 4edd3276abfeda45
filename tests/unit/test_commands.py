"""The command records (sharded.runtime.commands): one class per tag, every record with plain
fields a plain msgpack array that decodes to the same record through the tag table, and a
worker that refuses anything but a record."""

import pickle

import msgpack
import numpy as np
import pytest

from sharded.runtime import commands as C
from sharded.runtime.worker.core import Worker

# one record of every class whose fields can all be plain values (the others hold a driver
# handle, a layout object, a range or another record: they travel as their fields' records)
SAMPLES = [
    C.Key(3, None),
    C.Const(2.5),
    C.Ref(1),
    C.Keys(10),
    C.Exported(0, 1, 2),
    C.Fresh(3),
    C.Input(0, 1),
    C.Mod(3, 7),
    C.OnWorkers((0, 2, 1)),
    C.ReduceGroup((1, 0), (0, 1, 2)),
    C.TreeSpec(
        "reduce_chunk",
        {"fn": "sum", "axis": (0,)},
        "reduce_combine",
        "sum",
        10,
        (20,),
        ((0, 2, 4),),
        False,
        None,
        (((1, 0), (0, 1)),),
        "sum",
        8,
    ),
    C.Kernel("full", (), (1,), {"shape": (2,), "value": 3.0}, ("full", 0), False),
    C.Free((1, 2)),
    C.Export(4, None),
    C.Post(4, None, (1,), (0, 1, -1, 0, 2)),
    C.Mail((0, 1, -1, 0, 2), 30.0),
    C.Trace(True),
    C.Threads(2),
    C.Pool(1 << 20),
    C.Fusion(False, None, None),
    C.Alias(1, 2),
    C.DropRange(0, 10, (3,)),
    C.ProgDef(5, ()),
    C.Prog(5, 100, ((7, 8),)),
    C.ProgDel(5),
    C.Reset(None),
    C.Hold(1, 0),
    C.LayoutCmds(None, ()),
    C.LayoutSync(3),
    C.TreeRefs(2),
    C.TreeMail(0, 4, 30.0),
    C.Group("add", (0, 1), (), 10, {"cast": None}, "add", False),
    C.GroupFree((3, 7), 10),
    C.MailTag(0, 1, 2, 3, 4),
    C.Deliver((0, 1, 2, 3, 4), (1.5,)),
    C.Abort(0, 5),
    C.Run(3, 5.0, ()),
    C.Obj(1),
    C.Held(7),
    C.Send(0, (), (), (1,)),
    C.Own((), (), ()),
    C.Ship((), (0, 1), {}, None, ()),
    C.Forward((), (), (), None, True, False),
    C.Fan((), (0, 1), {1: ()}, None, {0: 1}),
    C.JitSubmit(0, "add", (), (1,), {}, None, False),
    C.JitFree(0, (1, 2)),
    C.JitExport(0, {0: ((1, None),)}),
    C.JitWave(()),
]
NOT_PLAIN = {C.Transfer, C.Tree, C.JitGroup, C.JitGroupFree, C.JitTree}


def test_every_tag_has_exactly_one_record_class():
    assert len(C.BY_TAG) == len(C.RECORDS) == len(set(C.RECORDS))
    assert all(C.BY_TAG[cls.TAG] is cls for cls in C.RECORDS)
    # every record class of the module is in the table, and nothing else is
    defined = {
        v
        for v in vars(C).values()
        if isinstance(v, type) and issubclass(v, tuple) and hasattr(v, "_fields")
    }
    assert defined == set(C.RECORDS)
    assert all(isinstance(cls.TAG, str) and "TAG" not in cls._fields for cls in C.RECORDS)


def test_the_samples_cover_every_record_with_plain_fields():
    assert {type(r) for r in SAMPLES} | NOT_PLAIN == set(C.RECORDS)


@pytest.mark.parametrize("rec", SAMPLES, ids=[type(r).__name__ for r in SAMPLES])
def test_plain_records_round_trip_through_msgpack(rec):
    cls = type(rec)
    got = cls(*msgpack.unpackb(msgpack.packb(list(rec)), use_list=False, strict_map_key=False))
    assert type(got) is cls and got == rec
    # as the sockets will carry them: [tag, *fields], decoded through the tag table
    tag, *fields = msgpack.unpackb(
        msgpack.packb([rec.TAG, *rec]), use_list=False, strict_map_key=False
    )
    back = C.BY_TAG[tag](*fields)
    assert type(back) is cls and back == rec


def test_records_keep_arrays_as_fields_and_pickle_as_themselves():
    arr = np.arange(4.0)
    cmd = C.Kernel("add", (C.Key(1), C.Const(arr)), (2,), {}, ("add", 0), False)
    assert cmd.args[1].value is arr  # no copy, no conversion
    back = pickle.loads(pickle.dumps(cmd, protocol=5))
    assert type(back.args[0]) is C.Key and np.array_equal(back.args[1].value, arr)


def test_records_name_their_fields():
    assert C.Kernel._fields == ("kernel", "args", "outs", "params", "label", "inplace")
    assert C.TreeSpec._fields[4:6] == ("start", "outs")
    assert C.Key(5).slices is None


def test_shift_moves_keys_and_symbols_to_a_shard():
    assert C.shift(10, 3) == 13
    assert C.shift(C.Fresh(2), 3) == C.Fresh(5)
    assert C.shift(C.Input(1, 0), 3) == C.Input(1, 3)


def test_records_of_equal_fields_but_other_types_name_other_layouts():
    # a NamedTuple compares as a tuple: the worker's caches must still tell these apart
    w = Worker(1)
    assert w.mine(C.Mod(3, 7)) == [1, 4]
    assert w.mine(C.OnWorkers((3, 7))) == []
    assert w.mine(C.OnWorkers((1, 1))) == [0, 1]


def test_a_worker_refuses_anything_but_a_command_record():
    w = Worker(0)
    with pytest.raises(TypeError, match="not a worker command"):
        w.run([("free", (1,))])
    assert w.run([C.Free((1,))]) == []
