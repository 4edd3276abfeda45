"""Data, not code, on sharded's own sockets: values as msgpack plus raw buffers.

Everything the mailboxes and the driver's wire carry (the command records of
:mod:`sharded.runtime.commands`, tree partials, answers) is encoded here, and nothing here
can run code when it decodes: msgpack's own types (None, bool, int, float, str, bytes,
lists, dicts) go as they are, and a closed set of other kinds as a one-entry map keyed by a
marker: bytes that start with NUL, then a kind code (and a name). (Markers are bytes, not
msgpack ext values: msgpack builds an ext value in Python, which made decoding a batch of
records 1.8x slower; a dict whose only key is such bytes does not travel as itself.)

========================  =====================================================
kind                      encoded as
========================  =====================================================
a command record          ``{REC "tag": [field, ...]}`` (``tag``: its ``TAG``)
tuple, frozenset          ``{TUP: [...]}``, ``{SET: [...]}``
NumPy array               ``{ARR: [dtype, shape, bytes or buffer index]}``
NumPy scalar, dtype       ``{SCA: [dtype, bytes]}``, ``{DT: dtype}``
complex, slice, range     ``{CPX: [re, im]}``, ``{SLC: [a, b, c]}``, ``{RNG: [a, b, c]}``
Ellipsis                  ``{ELL: None}``
a registered class        ``{OBJ "name": data}`` (:func:`register`)
a value encoded once      ``{ONCE: body}`` (:class:`Encoded`; decoded in place)
========================  =====================================================

An array of 4 KiB or more travels as a raw buffer after the msgpack body (no copy on the
way out). Decoding checks every marker, record tag, dtype (no object dtypes, nothing
structured) and that a buffer holds exactly ``prod(shape) * itemsize`` bytes; anything else
raises :class:`DecodeError`. Sizes are bounded before this runs, by the frame that carries
the parts (:mod:`.channel`).

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


def marker(code: int, name: bytes = b"") -> bytes:
    """The map key that marks a value of kind ``code`` (and ``name``: a record's tag, a
    registered class's name)."""
    return b"\x00" + bytes([code]) + name


TUP, SET, ARR, SCA, DT, CPX, SLC, RNG, ELL, ONCE = (marker(c) for c in range(1, 11))
_REC, _OBJ = 20, 21
_REC_MARK = {cls: marker(_REC, cls.TAG.encode()) for cls in RECORDS}
_OBJ_MARK = marker(_OBJ)
_CLASSES: dict = {}  # registered class -> (marker, to_data)
_FROM_DATA: dict = {}  # registered name -> from_data


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
    _FROM_DATA[name] = from_data


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
        return {ARR: [_dtype_name(a.dtype), list(a.shape), a.tobytes()]}
    bufs.append(memoryview(a.reshape(-1)).cast("B"))
    return {ARR: [_dtype_name(a.dtype), list(a.shape), len(bufs) - 1]}


def _default(o):
    """How msgpack packs what it does not know (the module's table)."""
    t = type(o)
    mark = _REC_MARK.get(t)
    if mark is not None:
        return {mark: list(o)}
    if t is tuple:
        return {TUP: list(o)}
    if t is np.ndarray:
        return _array(o, _tls.bufs)
    if isinstance(o, np.generic):
        if o.dtype.hasobject:
            raise TypeError("an object scalar cannot travel as data")
        return {SCA: [_dtype_name(o.dtype), o.tobytes()]}
    if isinstance(o, np.dtype):
        return {DT: _dtype_name(o)}
    if t is complex:
        return {CPX: [o.real, o.imag]}
    if t is slice:
        return {SLC: [o.start, o.stop, o.step]}
    if t is range:
        return {RNG: [o.start, o.stop, o.step]}
    if o is Ellipsis:
        return {ELL: None}
    if t is frozenset or t is set:
        return {SET: list(o)}
    if t is Encoded:
        return {ONCE: o.body}
    got = _CLASSES.get(t)
    if got is not None:
        return {got[0]: got[1](o)}
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
    if type(v) is not list or len(v) != 3:
        raise DecodeError("a slice or range needs three values")
    return v


_DECODE = {
    TUP: lambda v, bufs: tuple(v),
    SET: lambda v, bufs: frozenset(v),
    ARR: _decode_array,
    SCA: _decode_scalar,
    DT: lambda v, bufs: _dtype(v),
    CPX: lambda v, bufs: complex(*v),
    SLC: lambda v, bufs: slice(*_triple(v)),
    RNG: lambda v, bufs: range(*_triple(v)),
    ELL: lambda v, bufs: Ellipsis,
}


def _nested(v):
    if _tls.nested or type(v) is not bytes:  # (one level: an encoded value holds no other)
        raise DecodeError("an encoded value inside another")
    _tls.nested = True
    try:
        return msgpack.unpackb(v, **_UNPACK)
    finally:
        _tls.nested = False


def _with_bufs(fn):
    return lambda v: fn(v, _tls.dbufs)


# marker -> how its value is rebuilt (records: their field count and class, rebuilt in
# the hook itself: a batch is mostly records, and a call less each is measurable)
_RECS = {_REC_MARK[cls]: (len(cls._fields), cls) for cls in RECORDS}
_HOOKS = {m: _with_bufs(fn) for m, fn in _DECODE.items()}
_HOOKS[ONCE] = _nested
_new = tuple.__new__


def _hook(d):
    if len(d) == 1:
        for k, v in d.items():
            if type(k) is bytes:
                rec = _RECS.get(k)
                if rec is not None:
                    if type(v) is list and len(v) == rec[0]:
                        return _new(rec[1], v)
                    raise DecodeError(f"a {rec[1].__name__} record needs {rec[0]} fields")
                fn = _HOOKS.get(k)
                if fn is not None:
                    return fn(v)
                if k[:2] == _OBJ_MARK:
                    fn = _FROM_DATA.get(k[2:].decode("ascii", "replace"))
                    if fn is not None:
                        return fn(v)
                if k[:1] == b"\x00":
                    raise DecodeError(f"unknown marker {k[:20]!r}")
    return d


def _ext(code, data):
    raise DecodeError(f"a msgpack ext value (code {code}): none of ours")


_UNPACK = dict(object_hook=_hook, ext_hook=_ext, strict_map_key=False, raw=False, use_list=True)


def decode(body, bufs=()):
    """The value :func:`encode` made ``[body, *bufs]`` of; :class:`DecodeError` for anything
    that is not such an encoding (the buffers become the arrays' memory: no copy)."""
    _tls.dbufs, _tls.nested = bufs, False
    try:
        return msgpack.unpackb(body, **_UNPACK)
    except DecodeError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError, OverflowError) as e:
        # (msgpack's own errors are ValueErrors)
        raise DecodeError(f"{type(e).__name__}: {e}"[:200]) from None
    finally:
        _tls.dbufs = None
