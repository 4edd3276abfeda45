"""The checkpoint format (pure: no files, no workers): the manifest, the saved structure.

A checkpoint is a directory::

    manifest.msgpack   format name and version, every tensor's shape, dtype, layout, device
                       and shards (file, byte range, CRC-32 of those bytes), and the saved
                       structure (nested dicts, lists and tuples of tensors and plain values)
    t{i}.s{j}.bin      shard j of tensor i: raw little-endian bytes in C order

No pickle anywhere: the structure is encoded as msgpack values, containers tagged so that a
tuple comes back a tuple and an int dict key an int (``["dict", [[key, value], ...]]``,
``["list", [...]]``, ``["tuple", [...]]``, ``["tensor", i]``; scalars are themselves).
:func:`parse` validates everything a worker would rely on (names, sizes, bounds) before a
single shard is read, and raises :class:`~sharded.errors.CheckpointError` naming the manifest
and what it expected and found.
"""

from __future__ import annotations

import math

import msgpack
import numpy as np

from .. import dtypes as D
from ..errors import ArgumentError, CheckpointError
from ..tensor import ShardedTensor

FORMAT = "sharded.checkpoint"
VERSION = 1
MANIFEST = "manifest.msgpack"
_PLAIN = (type(None), bool, int, float, str, bytes)


class ShardEntry:
    """One shard of a saved tensor: where its block sits and which bytes of which file."""

    __slots__ = ("offsets", "shape", "file", "offset", "nbytes", "crc32")

    def __init__(self, offsets, shape, file, offset, nbytes, crc32):
        self.offsets, self.shape = tuple(offsets), tuple(shape)
        self.file, self.offset, self.nbytes, self.crc32 = file, offset, nbytes, crc32

    def as_dict(self) -> dict:
        return {
            "offsets": list(self.offsets),
            "shape": list(self.shape),
            "file": self.file,
            "offset": self.offset,
            "nbytes": self.nbytes,
            "crc32": self.crc32,
        }


class TensorEntry:
    """A saved tensor: shape, dtype, layout (per-dim chunk bounds or replicated) and shards."""

    __slots__ = ("shape", "dtype", "bounds", "replicated", "device", "requires_grad", "shards")

    def __init__(self, shape, dtype, bounds, replicated, device, requires_grad, shards):
        self.shape, self.dtype = tuple(shape), dtype
        self.bounds, self.replicated = tuple(tuple(b) for b in bounds), replicated
        self.device, self.requires_grad, self.shards = device, requires_grad, list(shards)

    def as_dict(self) -> dict:
        return {
            "shape": list(self.shape),
            "dtype": self.dtype.name,
            "layout": {"replicated": self.replicated, "bounds": [list(b) for b in self.bounds]},
            "device": self.device,
            "requires_grad": self.requires_grad,
            "shards": [s.as_dict() for s in self.shards],
        }


def shard_file(i: int, j: int) -> str:
    """The file name of shard ``j`` of tensor ``i``."""
    return f"t{i}.s{j}.bin"


# ------------------------------------------------------------------ the saved structure
def encode(obj, tensor_index, where="obj", _active=None):
    """``obj`` as msgpack values; each tensor becomes ``["tensor", tensor_index(t)]``.

    Raises :class:`ArgumentError` naming the position of a value that cannot be saved.

    Examples
    --------
    >>> encode({"a": (1, None)}, None)
    ['dict', [['a', ['tuple', [1, None]]]]]
    """
    if isinstance(obj, ShardedTensor):
        return ["tensor", tensor_index(obj)]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, _PLAIN):
        if isinstance(obj, int) and not -(2**63) <= obj < 2**64:
            raise ArgumentError(f"cannot save the int at {where}: {obj} does not fit in 64 bits")
        return obj
    if not isinstance(obj, (dict, list, tuple)):
        raise ArgumentError(
            f"cannot save {type(obj).__name__} at {where}: a checkpoint holds tensors and "
            "nested dicts, lists and tuples of them and of None, bool, int, float, str, bytes"
        )
    active = set() if _active is None else _active
    if id(obj) in active:
        raise ArgumentError(f"cannot save a structure that contains itself (at {where})")
    active.add(id(obj))
    try:
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if isinstance(k, ShardedTensor):
                    raise ArgumentError(f"cannot save a tensor as a dict key (in {where})")
                items.append(
                    [
                        encode(k, None, f"{where} key {k!r}", active),
                        encode(v, tensor_index, f"{where}[{k!r}]", active),
                    ]
                )
            return ["dict", items]
        tag = "tuple" if isinstance(obj, tuple) else "list"
        return [tag, [encode(v, tensor_index, f"{where}[{i}]", active) for i, v in enumerate(obj)]]
    finally:
        active.discard(id(obj))


def decode(node, tensors, where):
    """The structure :func:`encode` made, with ``["tensor", i]`` replaced by ``tensors[i]``.

    Examples
    --------
    >>> decode(['dict', [['a', ['tuple', [1, None]]]]], [], "m")
    {'a': (1, None)}
    """
    if not isinstance(node, list):
        return node
    if len(node) != 2 or node[0] not in ("dict", "list", "tuple", "tensor"):
        raise CheckpointError(f"{where}: unknown structure node {str(node)[:80]}")
    tag, body = node
    if tag == "tensor":
        if not isinstance(body, int) or not 0 <= body < len(tensors):
            raise CheckpointError(
                f"{where}: the structure names tensor {body!r}, expected one of "
                f"0..{len(tensors) - 1}"
            )
        return tensors[body]
    if not isinstance(body, list):
        raise CheckpointError(f"{where}: a {tag} node holds {type(body).__name__}, expected a list")
    if tag == "dict":
        out = {}
        for pair in body:
            if not isinstance(pair, list) or len(pair) != 2:
                raise CheckpointError(f"{where}: a dict item is {str(pair)[:80]}, expected [k, v]")
            out[_key(decode(pair[0], (), where), where)] = decode(pair[1], tensors, where)
        return out
    items = [decode(v, tensors, where) for v in body]
    return tuple(items) if tag == "tuple" else items


def _key(k, where):
    try:
        hash(k)
    except TypeError:
        raise CheckpointError(f"{where}: a dict key is a {type(k).__name__}") from None
    return k


# ------------------------------------------------------------------ the manifest
def pack(tensors, root) -> bytes:
    """The manifest's bytes for ``tensors`` (:class:`TensorEntry`) and the encoded ``root``."""
    return msgpack.packb(
        {
            "format": FORMAT,
            "version": VERSION,
            "byteorder": "little",
            "tensors": [t.as_dict() for t in tensors],
            "root": root,
        },
        use_bin_type=True,
    )


def parse(data: bytes, where: str):
    """Validate manifest bytes read from ``where``; returns ``(tensors, root)`` where ``root``
    is still encoded (:func:`decode` makes the structure once the tensors exist).

    Examples
    --------
    >>> parse(pack([], ["list", [1]]), "m")
    ([], ['list', [1]])
    >>> parse(b"garbage", "m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sharded.errors.CheckpointError: m is not a valid manifest ...
    """
    try:
        doc = msgpack.unpackb(data, raw=False)
    except Exception as e:  # truncated or corrupt bytes: msgpack raises several types
        raise CheckpointError(
            f"{where} is not a valid manifest (expected msgpack, {len(data)} bytes could not "
            f"be decoded: {type(e).__name__}: {e})"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise CheckpointError(
            f"{where} is not a manifest: expected format {FORMAT!r}, found {found!r}"
        )
    if doc.get("version") != VERSION:
        raise CheckpointError(
            f"{where}: unknown format version {doc.get('version')!r} (this sharded reads "
            f"version {VERSION})"
        )
    if doc.get("byteorder") != "little":
        raise CheckpointError(f"{where}: byte order {doc.get('byteorder')!r}, expected 'little'")
    tensors = doc.get("tensors")
    if not isinstance(tensors, list) or "root" not in doc:
        raise CheckpointError(f"{where}: expected 'tensors' (a list) and 'root' in the manifest")
    return [_tensor(t, f"{where}: tensor {i}") for i, t in enumerate(tensors)], doc["root"]


def _ints(v, what, where, n=None):
    if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in v):
        raise CheckpointError(f"{where}: {what} is {str(v)[:80]}, expected a list of ints")
    if n is not None and len(v) != n:
        raise CheckpointError(f"{where}: {what} has {len(v)} entries, expected {n}")
    return tuple(v)


def _tensor(t, where) -> TensorEntry:
    if not isinstance(t, dict):
        raise CheckpointError(f"{where}: expected a map, found {type(t).__name__}")
    shape = _ints(t.get("shape"), "shape", where)
    if any(s < 0 for s in shape):
        raise CheckpointError(f"{where}: negative size in shape {shape}")
    dtype = {d.name: d for d in D.ALL}.get(t.get("dtype"))
    if dtype is None:
        raise CheckpointError(
            f"{where}: unknown dtype {t.get('dtype')!r}, expected one of "
            f"{', '.join(d.name for d in D.ALL)}"
        )
    lay = t.get("layout")
    if not isinstance(lay, dict) or not isinstance(lay.get("bounds"), list):
        raise CheckpointError(f"{where}: expected a layout map with 'bounds'")
    replicated = bool(lay.get("replicated"))
    bounds = [_ints(b, f"bounds of dim {d}", where) for d, b in enumerate(lay["bounds"])]
    if len(bounds) != len(shape):
        raise CheckpointError(f"{where}: {len(bounds)} dims of bounds for shape {shape}")
    for d, (b, n) in enumerate(zip(bounds, shape)):
        if len(b) < 2 or b[0] != 0 or b[-1] != n or any(y < x for x, y in zip(b, b[1:])):
            raise CheckpointError(
                f"{where}: bounds {b} of dim {d} are not increasing cuts of 0..{n}"
            )
    grid = [len(b) - 1 for b in bounds]
    if replicated and any(g != 1 for g in grid):
        raise CheckpointError(f"{where}: a replicated layout with bounds {bounds}")
    shards = t.get("shards")
    want = math.prod(grid)
    if not isinstance(shards, list) or len(shards) != want:
        found = len(shards) if isinstance(shards, list) else type(shards).__name__
        raise CheckpointError(f"{where}: expected {want} shards for bounds {bounds}, found {found}")
    out = []
    for j, coords in enumerate(np.ndindex(*grid)):
        s, wj = shards[j], f"{where} shard {j}"
        if not isinstance(s, dict):
            raise CheckpointError(f"{wj}: expected a map, found {type(s).__name__}")
        offs = _ints(s.get("offsets"), "offsets", wj, len(shape))
        shp = _ints(s.get("shape"), "shape", wj, len(shape))
        exp_offs = tuple(bounds[d][c] for d, c in enumerate(coords))
        exp_shp = tuple(bounds[d][c + 1] - bounds[d][c] for d, c in enumerate(coords))
        if offs != exp_offs or shp != exp_shp:
            raise CheckpointError(
                f"{wj}: block at {offs} of shape {shp}, expected {exp_offs} of shape {exp_shp}"
            )
        name = check_name(s.get("file"), wj)
        off, nb, crc = (s.get(k) for k in ("offset", "nbytes", "crc32"))
        for k, v in (("offset", off), ("nbytes", nb), ("crc32", crc)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise CheckpointError(f"{wj}: {k} is {v!r}, expected a non-negative int")
        if nb != math.prod(shp) * dtype.itemsize:
            raise CheckpointError(
                f"{wj}: {nb} bytes for a {dtype.name} block of shape {shp}, expected "
                f"{math.prod(shp) * dtype.itemsize}"
            )
        if crc >= 2**32:
            raise CheckpointError(f"{wj}: crc32 {crc} does not fit in 32 bits")
        out.append(ShardEntry(offs, shp, name, off, nb, crc))
    device = t.get("device") if isinstance(t.get("device"), str) else "cpu"
    return TensorEntry(shape, dtype, bounds, replicated, device, bool(t.get("requires_grad")), out)


def check_name(name, where) -> str:
    """``name`` if it is a plain file name in the checkpoint directory (no directory part: no
    absolute path, no ``..``, no subdirectory a link could lead elsewhere), else
    :class:`CheckpointError`.

    Examples
    --------
    >>> check_name("t0.s1.bin", "m")
    't0.s1.bin'
    >>> check_name("../etc/passwd", "m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sharded.errors.CheckpointError: m: file name '../etc/passwd' leaves the checkpoint ...
    """
    if not isinstance(name, str) or not name or "\x00" in name:
        raise CheckpointError(f"{where}: file name {name!r}, expected a relative file name")
    if "/" in name or "\\" in name or name in (".", "..") or ":" in name:
        raise CheckpointError(
            f"{where}: file name {name!r} leaves the checkpoint directory (expected a plain "
            "file name in it, like 't0.s0.bin')"
        )
    return name
