"""Data, not code, on sharded's own sockets: values as msgpack plus raw buffers.

Everything the mailboxes and the driver's wire carry (the command records of
:mod:`sharded.runtime.commands`, tree partials, answers) is encoded here, and nothing here
can run code when it decodes: msgpack's own types (None, bool, int, float, str, bytes,
lists, dicts) go as they are, and a closed set of other kinds as a list headed by a
marker: an empty msgpack ext value whose code names the kind (each record has its own
code; a registered class's marker carries its name). A marker decodes to an inert object
that only the list it heads consumes; one anywhere else is a :class:`DecodeError`, so no
plain value can be read as a marked one. (Lists, not one-entry maps: msgpack hands every
map to the decode hook, a call per plain dict too; a batch of 400 records decodes in
about 0.5 ms this way, 0.78 ms as maps, 0.44 ms as a pickle.)

========================  =====================================================
kind                      encoded as
========================  =====================================================
a command record          ``[REC, field, ...]`` (its own code: 32 + its place in
                          ``RECORDS``; both ends run the same sharded)
tuple, frozenset          ``[TUP, item, ...]``, ``[SET, item, ...]``
NumPy array               ``[ARR, dtype, shape, bytes or buffer index]``
NumPy scalar, dtype       ``[SCA, dtype, bytes]``, ``[DT, dtype]``
complex, slice, range     ``[CPX, re, im]``, ``[SLC, a, b, c]``, ``[RNG, a, b, c]``
Ellipsis                  ``[ELL]``
a registered class        ``[OBJ "name", data]`` (:func:`register`)
a value encoded once      ``[ONCE, body]`` (:class:`Encoded`; decoded in place)
========================  =====================================================

An array of 4 KiB or more travels as a raw buffer after the msgpack body (no copy on the
way out). Decoding checks every marker, record tag and arity, dtype (no object dtypes,
nothing structured) and that a buffer holds exactly ``prod(shape) * itemsize`` bytes;
anything else raises :class:`DecodeError`. Sizes are bounded before this runs, by the frame
that carries the parts (:mod:`.channel`).

Examples
--------
>>> import numpy as np
>>> from sharded.runtime.commands import Key
>>> parts = encode([Key(3, (slice(0, 2), Ellipsis)), np.arange(3.0), (1, 2j)])
>>> decode(parts[0], parts[1:])
[Key(key=3, slices=(slice(0, 2, None), Ellipsis)), array([0., 1., 2.]), (1, 2j)]
"""

from __future__ import annotations

import math
import threading

import msgpack
import numpy as np

from ..commands import RECORDS

INLINE_MAX = 4096  # an array this large or larger goes as a raw buffer after the body


class DecodeError(ValueError):
    """A frame's body is not an encoding of ours (a marker, tag or dtype we do not know, or
    a buffer of the wrong size)."""


def marker(code: int, name: bytes = b"") -> msgpack.ExtType:
    """The marker that heads the list of a value of kind ``code`` (and ``name``: a record's
    tag, a registered class's name)."""
    return msgpack.ExtType(code, name)


TUP, SET, ARR, SCA, DT, CPX, SLC, RNG, ELL, ONCE = (marker(c) for c in range(1, 11))
_OBJ, _REC = 21, 32  # a registered class; the first record (then one code per record)
assert _REC + len(RECORDS) <= 128, "msgpack ext codes stop at 127"
_REC_MARK = {cls: marker(_REC + i) for i, cls in enumerate(RECORDS)}
_CLASSES: dict = {}  # registered class -> (marker, to_data)


class Encoded:
    """A value encoded once (its body, no buffers) to go into many frames: a flush's
    layout commands, the same for every worker of a read. Made by :func:`encode_once`."""

    __slots__ = ("body",)

    def __init__(self, body: bytes):
        self.body = body


def encode_once(obj) -> Encoded | None:
    """``obj`` encoded for use in many frames, or None when it is not data or holds a large
    array (whose buffer goes with each frame).

    Examples
    --------
    >>> once = encode_once([1, (2, 3)])
    >>> parts = encode({"a": once, "b": once})
    >>> decode(parts[0])
    {'a': [1, (2, 3)], 'b': [1, (2, 3)]}
    """
    try:
        body, *bufs = encode(obj)
    except TypeError:
        return None
    return None if bufs else Encoded(body)


def register(cls, name: str, to_data, from_data) -> None:
    """Let instances of ``cls`` travel as ``to_data(obj)`` (plain data), rebuilt on the other
    side by ``from_data(data)``.

    Examples
    --------
    >>> class Box:
    ...     def __init__(self, v): self.v = v
    >>> register(Box, "box", lambda b: b.v, Box)
    >>> parts = encode(Box(4))
    >>> decode(parts[0], parts[1:]).v
    4
    """
    _CLASSES[cls] = (marker(_OBJ, name.encode()), to_data)
    _OBJS[name.encode()] = _Mark(build=_exactly(1, from_data))


def _dtype_name(dt: np.dtype):
    # ``str`` keeps byte order for NumPy's own types, raw bytes included ('|V16'); an
    # extension type (bfloat16, kind 'V' too) is known by its name only: its ``str`` ('<V2')
    # would lose what it is. A record dtype (the sorts' (value, index) keys) goes as its
    # fields, each a plain dtype.
    if dt.names is not None:
        fields = [dt.fields[n] for n in dt.names]
        return {
            "names": list(dt.names),
            "formats": [_dtype_name(f[0]) for f in fields],
            "offsets": [f[1] for f in fields],
            "itemsize": dt.itemsize,
        }
    return dt.str if type(dt) is np.dtypes.VoidDType or dt.kind != "V" else dt.name


def _array(a: np.ndarray, bufs: list):
    if a.dtype.hasobject:
        raise TypeError("an object array cannot travel as data")
    if not a.flags.c_contiguous:  # (not np.ascontiguousarray: it makes a 0-d array 1-d)
        a = a.copy(order="C")
    if a.nbytes < INLINE_MAX:
        return [ARR, _dtype_name(a.dtype), list(a.shape), a.tobytes()]
    bufs.append(memoryview(a.reshape(-1)).cast("B"))
    return [ARR, _dtype_name(a.dtype), list(a.shape), len(bufs) - 1]


def _default(o):
    """How msgpack packs what it does not know (the module's table)."""
    t = type(o)
    mark = _REC_MARK.get(t)
    if mark is not None:
        return [mark, *o]
    if t is tuple:
        return [TUP, *o]
    if t is np.ndarray:
        return _array(o, _tls.bufs)
    if isinstance(o, np.generic):
        if o.dtype.hasobject:
            raise TypeError("an object scalar cannot travel as data")
        return [SCA, _dtype_name(o.dtype), o.tobytes()]
    if isinstance(o, np.dtype):
        return [DT, _dtype_name(o)]
    if t is complex:
        return [CPX, o.real, o.imag]
    if t is slice:
        return [SLC, o.start, o.stop, o.step]
    if t is range:
        return [RNG, o.start, o.stop, o.step]
    if o is Ellipsis:
        return [ELL]
    if t is frozenset or t is set:
        return [SET, *o]
    if t is Encoded:
        return [ONCE, o.body]
    got = _CLASSES.get(t)
    if got is not None:
        return [got[0], got[1](o)]
    raise TypeError(f"a {t.__module__}.{t.__qualname__} cannot travel as data")


_tls = threading.local()  # per thread: a packer (made once: cheaper) and its frame's buffers


def encode(obj) -> list:
    """``obj`` as ``[body, *buffers]``: the msgpack body, then the raw bytes of its large
    arrays. Raises TypeError for a value of a kind not listed in the module's table."""
    packer = getattr(_tls, "packer", None)
    if packer is None:
        packer = _tls.packer = msgpack.Packer(
            default=_default, strict_types=True, use_bin_type=True, autoreset=True
        )
    _tls.bufs = bufs = []
    try:
        body = packer.pack(obj)
    except BaseException:
        packer.reset()  # (a failed pack leaves its partial bytes in the packer)
        raise
    finally:
        _tls.bufs = None
    return [body, *bufs]


MAX_FIELDS = 64  # fields of a record dtype


def _dtype(name, nested=False) -> np.dtype:
    if type(name) is dict and not nested:
        return _record_dtype(name)
    if type(name) is not str:
        raise DecodeError(f"a dtype named by {type(name).__name__}")
    try:
        dt = np.dtype(name)
    except (TypeError, ValueError):
        raise DecodeError(f"unknown dtype {name[:40]!r}") from None
    if dt.hasobject or dt.fields is not None or dt.subdtype is not None:
        raise DecodeError(f"dtype {name[:40]!r} is not a plain numeric dtype")
    return dt


def _record_dtype(spec: dict) -> np.dtype:
    """A record dtype of plain fields (one level: no records in records)."""
    names, formats = spec.get("names"), spec.get("formats")
    offsets, itemsize = spec.get("offsets"), spec.get("itemsize")
    ok = (
        set(spec) == {"names", "formats", "offsets", "itemsize"}
        and all(type(v) is list for v in (names, formats, offsets))
        and 0 < len(names) == len(formats) == len(offsets) <= MAX_FIELDS
        and all(type(n) is str for n in names)
        and all(type(o) is int and o >= 0 for o in offsets)
        and type(itemsize) is int
        and 0 < itemsize <= 1 << 16
    )
    if not ok:
        raise DecodeError("a record dtype that is not names, formats, offsets and itemsize")
    fmts = [_dtype(f, nested=True) for f in formats]
    try:
        return np.dtype({"names": names, "formats": fmts, "offsets": offsets, "itemsize": itemsize})
    except (TypeError, ValueError) as e:
        raise DecodeError(f"a record dtype NumPy refuses: {e}"[:200]) from None


def _decode_array(v, bufs):
    name, shape, data = v
    dt = _dtype(name)
    if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
        raise DecodeError(f"bad array shape {shape!r:.80}")
    if type(data) is int:
        if not 0 <= data < len(bufs):
            raise DecodeError(f"buffer {data} of {len(bufs)}")
        data, copy = bufs[data], False
    elif type(data) is bytes:
        copy = True  # (msgpack's bytes are read-only; kernels may write into a result)
    else:
        raise DecodeError("array data is neither bytes nor a buffer index")
    if math.prod(shape) * dt.itemsize != len(data):
        raise DecodeError(f"{len(data)} bytes for a {dt} array of shape {tuple(shape)}")
    a = np.frombuffer(data, dt).reshape(shape)
    return a.copy() if copy else a


def _decode_scalar(v, bufs):
    name, data = v
    dt = _dtype(name)
    if type(data) is not bytes or len(data) != dt.itemsize:
        raise DecodeError(f"a {dt} scalar of {len(data)} bytes")
    return np.frombuffer(data, dt)[0]


def _triple(v):
    if len(v) != 3:
        raise DecodeError("a slice or range needs three values")
    return v


class _Mark:
    """What a marker decodes to: inert, consumed by the list it heads (a record class and
    its field count, or how the kind is rebuilt from the rest of the list)."""

    __slots__ = ("cls", "arity", "build")

    def __init__(self, cls=None, arity=-1, build=None):
        self.cls, self.arity, self.build = cls, arity, build


def _exactly(n, fn, with_bufs=False):
    def build(v, bufs):
        if len(v) != n:
            raise DecodeError(f"a marked value of {len(v)} items, not {n}")
        return fn(v, bufs) if with_bufs else fn(*v)

    return build


_KINDS = {  # marker code -> its kind
    TUP.code: _Mark(build=lambda v, bufs: tuple(v)),
    SET.code: _Mark(build=lambda v, bufs: frozenset(v)),
    ARR.code: _Mark(build=_exactly(3, _decode_array, True)),
    SCA.code: _Mark(build=_exactly(2, _decode_scalar, True)),
    DT.code: _Mark(build=_exactly(1, _dtype)),
    CPX.code: _Mark(build=_exactly(2, complex)),
    SLC.code: _Mark(build=lambda v, bufs: slice(*_triple(v))),
    RNG.code: _Mark(build=lambda v, bufs: range(*_triple(v))),
    ELL.code: _Mark(build=lambda v, bufs: Ellipsis),
    ONCE.code: _Mark(),  # (decoded by the list hook: it knows whether it is nested)
}
_ONCE = _KINDS[ONCE.code]
_KINDS.update({m.code: _Mark(cls, len(cls._fields)) for cls, m in _REC_MARK.items()})
# by code (a list: faster than a dict here; 256 long, so a negative code finds None too)
_BY_CODE = [_KINDS.get(code) for code in range(128)] + [None] * 128
_OBJS: dict = {}  # registered name (bytes) -> its _Mark
_new = tuple.__new__


def _named(code, data):
    m = _OBJS.get(data) if code == _OBJ else None
    if m is None:
        raise DecodeError(f"unknown marker: code {code}, {data[:20]!r}")
    return m


def _decode(body, bufs, nested: bool):
    loose = 0  # markers decoded and not (yet) heading their list: 0 at the end, or not ours
    by_code = _BY_CODE

    def ext(code, data):
        nonlocal loose
        loose += 1
        if data:
            return _named(code, data)
        m = by_code[code]
        if m is None:
            raise DecodeError(f"unknown marker: code {code}")
        return m

    def lists(v):
        nonlocal loose
        if v:
            m = v[0]
            if type(m) is _Mark:
                loose -= 1
                del v[0]
                if m.arity >= 0:  # (records first: a batch is mostly records)
                    if len(v) != m.arity:
                        raise DecodeError(f"a {m.cls.__name__} record needs {m.arity} fields")
                    return _new(m.cls, v)
                if m is _ONCE:
                    if nested or len(v) != 1 or type(v[0]) is not bytes:
                        raise DecodeError("an encoded value inside another, or not bytes")
                    return _decode(v[0], (), True)
                return m.build(v, bufs)
        return v

    got = msgpack.unpackb(
        body, list_hook=lists, ext_hook=ext, strict_map_key=False, raw=False, use_list=True
    )
    if loose:
        raise DecodeError(f"{loose} marker(s) not heading a list")
    return got


def decode(body, bufs=()):
    """The value :func:`encode` made ``[body, *bufs]`` of; :class:`DecodeError` for anything
    that is not such an encoding (the buffers become the arrays' memory: no copy)."""
    try:
        return _decode(body, bufs, False)
    except DecodeError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError, OverflowError) as e:
        # (msgpack's own errors are ValueErrors)
        raise DecodeError(f"{type(e).__name__}: {e}"[:200]) from None
