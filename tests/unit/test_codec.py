"""What sharded's own sockets carry (sharded.runtime.net.codec): data round trips exactly
(records, tuples, arrays of every shape and dtype, NumPy scalars, slices), code and unknown
kinds never do, and a body that is not ours is a DecodeError."""

import numpy as np
import pytest

from sharded.runtime.commands import Const, Group, Key, Keys, MailTag, Mod, Run
from sharded.runtime.net import codec


def _pack(value):
    import msgpack

    return msgpack.packb(value, use_bin_type=True)


def _trip(obj):
    parts = codec.encode(obj)
    return codec.decode(parts[0], [bytearray(p) for p in parts[1:]])


@pytest.mark.parametrize(
    "value",
    [
        np.float64(2.5),
        np.array(3.0),  # 0-d stays 0-d
        np.arange(6, dtype=np.int32).reshape(2, 3),
        np.arange(12.0).reshape(3, 4)[:, ::2],  # not contiguous
        np.zeros((0, 4)),
        np.arange(5000, dtype=np.complex128),  # out of band
        np.array([True, False]),
        np.arange(4, dtype=np.float16).astype(">f2"),  # byte order kept
        np.frombuffer(bytes(range(64)), "V16"),  # raw bytes (the sorts' packed keys)
        np.array(["ab", "c"]),
        np.array([b"x", b"yz"]),
        np.array(["2026-11-28"], dtype="M8[D]"),
        np.void(b"\x01\x02"),
        np.array([(1, -2), (3, 4)], dtype=[("v", "<i8"), ("g", "<i8")]),  # the sorts' keys
        np.zeros(
            3,
            dtype={
                "names": ["a", "b"],
                "formats": ["<f4", "|u1"],
                "offsets": [0, 6],
                "itemsize": 8,
            },
        ),
    ],
)
def test_arrays_and_scalars_round_trip(value):
    got = _trip(value)
    assert type(got) is type(value) and got.dtype == value.dtype and got.shape == value.shape
    np.testing.assert_array_equal(got, value)


def test_arrays_that_come_back_are_writable():
    small, big = _trip([np.ones(3), np.ones(10_000)])
    small[0] = big[0] = 7.0


def test_records_tuples_and_python_values_round_trip():
    cmd = Group(
        "add",
        Mod(2, 4),
        (Keys(10), Const(np.float32(2)), Key(3, (slice(0, 2), Ellipsis, None))),
        20,
        {"dt": np.dtype("int16"), 3: range(1, 9, 2), "z": 1 + 2j, "s": frozenset({1})},
        ("add", 0),
        False,
    )
    batch = [Run(3, 5.0, [cmd]), MailTag("c", 1, 0, 0, 1), (1, [2, (3,)]), {"k": []}]
    got = _trip(batch)
    assert got == batch and repr(got) == repr(batch)
    assert type(got[2]) is tuple and type(got[2][1]) is list


@pytest.mark.parametrize("value", [lambda: 1, object(), np.array([object()]), {1: type}], ids=str)
def test_code_and_unknown_objects_do_not_travel(value):
    with pytest.raises(TypeError):
        codec.encode(value)


@pytest.mark.parametrize(
    "body",
    [
        b"\xc1",  # not msgpack
        b"\x92\x01",  # cut short
        _pack([codec.marker(12)]),  # an unknown marker
        _pack([codec.marker(1, b"x")]),  # a kind's marker with a name
        _pack([codec.marker(99)]),  # an unknown record code
        _pack([codec.marker(21, b"q"), None]),  # an unknown class
        _pack(codec.TUP),  # markers anywhere but at the head of a list
        _pack([1, codec.TUP]),
        _pack({"k": codec.ELL}),
        _pack({codec.ELL: 1}),
        _pack([[codec.TUP, codec.ELL]]),
        _pack([codec.SLC, 1, 2]),  # the wrong number of items
        _pack([codec._REC_MARK[Key], 1, 2, 3]),
    ],
)
def test_a_body_that_is_not_ours_is_a_decode_error(body):
    with pytest.raises(codec.DecodeError):
        codec.decode(body)


def test_a_list_that_starts_like_a_marker_is_still_a_list():
    value = [b"\x00\x01", 2, {b"\x00\x14k": [1]}]  # (what markers were before: plain data)
    assert _trip(value) == value


def _array_body(dtype, shape, data):
    return _pack([codec.ARR, dtype, shape, data])


@pytest.mark.parametrize(
    "dtype, shape, data",
    [
        ("O", [1], b"\x00" * 8),  # object pointers from the network
        ("<f8", [10**12], b"\x00" * 8),  # more elements than bytes
        ("<f8", [2], b"\x00" * 8),
        ("<f8", [-1], b""),
        ("no such dtype", [1], b"\x00"),
        ("<f8", [1], 5),  # a buffer that is not there
        ([("a", "<f8")], [1], b"\x00" * 8),
        ({"names": ["a"], "formats": ["O"], "offsets": [0], "itemsize": 8}, [1], b"\x00" * 8),
        (
            {
                "names": ["a"],
                "formats": [{"names": ["b"], "formats": ["<f8"], "offsets": [0], "itemsize": 8}],
                "offsets": [0],
                "itemsize": 8,
            },
            [1],
            b"\x00" * 8,
        ),  # (nested)
        ({"names": ["a"], "formats": ["<f8"], "offsets": [0], "itemsize": 2**40}, [1], b""),
        (
            {"names": ["a", "a"], "formats": ["<f8", "<f8"], "offsets": [0, 8], "itemsize": 16},
            [1],
            b"\x00" * 16,
        ),
    ],
)
def test_arrays_are_checked_before_they_are_made(dtype, shape, data):
    with pytest.raises(codec.DecodeError):
        codec.decode(_array_body(dtype, shape, data))


def test_a_record_of_the_wrong_arity_is_a_decode_error():
    body = _pack([codec._REC_MARK[Key], 1, 2, 3])
    with pytest.raises(codec.DecodeError):
        codec.decode(body)


def test_a_value_encoded_once_goes_into_many_frames_but_never_nests():
    shared = codec.encode_once([Group("neg", Mod(1, 1), (Keys(1),), 2, {}, "neg", False)])
    assert _trip([shared, shared]) == [_trip(shared)] * 2
    assert codec.encode_once(np.ones(10_000)) is None  # (its buffer would go with each frame)
    inner = _pack([codec.ONCE, b"\x90"])
    with pytest.raises(codec.DecodeError, match="inside another"):
        codec.decode(_pack([codec.ONCE, inner]))
