"""Worker kernels of checkpoints: probe a path, write a shard file, read byte ranges of shard
files into a block, verify a file, commit or remove a checkpoint directory.

They run inside the workers, one command each like every kernel, and touch the filesystem
there: each worker writes and reads its own shards' files, so tensor data never passes
through the driver. What a kernel tells the driver (sizes, checksums, what the worker sees)
is a small msgpack document carried as a uint8 array, the one thing a command can leave for a
read. Data moves in pieces of at most ``piece`` bytes (the executor's transfer size, 32 MiB),
so a kernel holds at most its block plus one piece.
"""

from __future__ import annotations

import math
import os
import shutil
import socket
import sys
import zlib

import msgpack
import numpy as np

from ..core.registry import kernel
from ..errors import CheckpointError
from .manifest import MANIFEST

# Holes up to a page between wanted bytes are read through: the disk reads whole pages
# anyway, and one read instead of thousands of tiny ones is what makes column splits fast.
GAP = 4096
_LITTLE = sys.byteorder == "little"


def reply(obj) -> np.ndarray:
    """``obj`` as a uint8 array (what a kernel leaves for the driver to read)."""
    return np.frombuffer(msgpack.packb(obj, use_bin_type=True), np.uint8)


def unreply(arr):
    """The object a kernel packed with :func:`reply`."""
    return msgpack.unpackb(np.asarray(arr, np.uint8).tobytes(), raw=False)


def _host(xp, a):
    return a if xp is np else xp.asnumpy(a)


# ------------------------------------------------------------------------- probing
@kernel
def ckpt_probe(xp, *, path, mode, tmp=None, send=False):
    """What this worker sees at ``path``: ``mode`` "save" (the parent is a writable
    directory and ``path`` is absent or a checkpoint; with ``tmp``, make that directory),
    "tmp" (``tmp`` is visible) or "load" (the manifest's size and CRC, its bytes if ``send``).
    Returns ``{"ok", "host", "error"...}``: a refusal is an answer, not a failure."""
    out = {"ok": True, "host": socket.gethostname()}
    try:
        if mode == "save":
            parent = os.path.dirname(path)
            if not os.path.isdir(parent):
                raise _Refused(f"directory {parent} does not exist")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise _Refused(f"directory {parent} is not writable")
            if os.path.lexists(path) and not (
                os.path.isdir(path)
                and (os.path.isfile(os.path.join(path, MANIFEST)) or not os.listdir(path))
            ):
                raise _Refused(
                    f"{path} exists and is not a checkpoint (no {MANIFEST}); refusing to replace it"
                )
            if tmp is not None:
                os.mkdir(tmp)
        elif mode == "tmp":
            if not os.path.isdir(tmp):
                raise _Refused(f"directory {tmp} (just made by worker 0) is not visible here")
        else:
            name = os.path.join(path, MANIFEST)
            if not os.path.isfile(name):
                raise _Refused(f"{name} does not exist")
            with open(name, "rb") as f:
                data = f.read()
            out.update(size=len(data), crc32=zlib.crc32(data))
            if send:
                out["data"] = data
    except (_Refused, OSError) as e:
        out.update(ok=False, error=str(e))
    return reply(out)


class _Refused(Exception):
    pass


# ------------------------------------------------------------------------- writing
def _pieces(a, limit):
    """``a`` in C order as blocks of at most ``limit`` bytes (views where possible)."""
    if a.flags.c_contiguous:
        flat = a.reshape(-1)
        step = max(1, limit // max(a.itemsize, 1))
        for i in range(0, flat.size, step):
            yield flat[i : i + step]
        return
    row = a.nbytes // a.shape[0] if a.shape[0] else 0
    if row <= limit:
        step = max(1, limit // max(row, 1))
        for i in range(0, a.shape[0], step):
            yield a[i : i + step]
    else:
        for i in range(a.shape[0]):
            yield from _pieces(a[i], limit)


def _le_bytes(h) -> np.ndarray:
    """A host block as little-endian bytes in C order (a view when it already is)."""
    h = np.ascontiguousarray(h)
    if h.dtype.byteorder == ">" or (h.dtype.byteorder == "=" and not _LITTLE):
        h = h.astype(h.dtype.newbyteorder("<"))
    return h.reshape(-1).view(np.uint8)


def _write_all(fd, b) -> None:
    mv = memoryview(b)
    while len(mv):
        mv = mv[os.write(fd, mv) :]


@kernel
def ckpt_write(xp, a, *, path, file, piece):
    """Write block ``a`` to ``path/file`` (raw little-endian, C order) and fsync it; returns
    ``[bytes, crc32]`` of what was written."""
    fd = os.open(os.path.join(path, file), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    crc = n = 0
    try:
        for p in _pieces(a, piece) if a.size else ():
            b = _le_bytes(_host(xp, p))
            crc = zlib.crc32(b, crc)
            _write_all(fd, b)
            n += b.nbytes
        os.fsync(fd)
    finally:
        os.close(fd)
    return reply([n, crc])


# ------------------------------------------------------------------------- reading
class _Reader:
    """Reads regions of one shard file into a block, through one reusable buffer.

    With ``crc`` set the whole file is being read in order, and its CRC-32 is checked at
    :meth:`close`."""

    def __init__(self, path, file, offset, nbytes, crc, xp, dtype, buf):
        self.name = os.path.join(path, file)
        self.base, self.nbytes, self.want_crc = offset, nbytes, crc
        self.crc, self.seen = 0, 0
        self.xp, self.le, self.buf = xp, np.dtype(dtype).newbyteorder("<"), buf
        self.item = self.le.itemsize
        self.direct = xp is np and _LITTLE
        try:
            self.fd = os.open(self.name, os.O_RDONLY)
        except FileNotFoundError:
            raise CheckpointError(
                f"{self.name} is missing (expected {offset + nbytes} bytes)"
            ) from None
        size = os.fstat(self.fd).st_size
        if size < offset + nbytes:
            os.close(self.fd)
            raise CheckpointError(
                f"{self.name} is truncated: expected {offset + nbytes} bytes, found {size}"
            )

    def _pread(self, off, mv) -> None:
        n = 0
        while n < len(mv):
            k = os.preadv(self.fd, [mv[n:]], self.base + off + n)
            if k == 0:
                raise CheckpointError(
                    f"{self.name} is truncated: expected {self.base + off + len(mv)} bytes, "
                    f"found {self.base + off + n}"
                )
            n += k
        if self.want_crc is not None:
            self.crc = zlib.crc32(mv, self.crc)
            self.seen += len(mv)

    def copy(self, off, shape, reg, out) -> None:
        """Copy region ``reg`` (``(lo, hi)`` per dim) of the C-order block of ``shape``
        stored at byte ``off`` into ``out`` (an array of the region's shape)."""
        if any(hi <= lo for lo, hi in reg):
            return
        if not shape:  # a 0-d block: one element
            shape, reg, out = (1,), ((0, 1),), out.reshape(1)
        row = math.prod(shape[1:]) * self.item
        (lo, hi), inner = reg[0], reg[1:]
        full = all(a == 0 and b == n for (a, b), n in zip(inner, shape[1:]))
        need = math.prod(b - a for a, b in inner) * self.item
        limit = len(self.buf)
        if row > limit or not (full or row - need <= GAP):
            for i in range(lo, hi):  # rows too big for the buffer, or with big holes
                self.copy(off + i * row, shape[1:], inner, out[i - lo, ...])
            return
        step = max(1, limit // row)
        sel = (slice(None),) + tuple(slice(a, b) for a, b in inner)
        for a in range(lo, hi, step):
            b = min(hi, a + step)
            dst = out[a - lo : b - lo]
            if full and self.direct and dst.flags.c_contiguous and dst.dtype == self.le:
                self._pread(off + a * row, memoryview(dst.reshape(-1).view(np.uint8)))
                continue
            chunk = self.buf[: (b - a) * row]
            self._pread(off + a * row, memoryview(chunk))
            blk = chunk.view(self.le).reshape((b - a,) + tuple(shape[1:]))[sel]
            dst[...] = blk if self.xp is np else self.xp.asarray(blk)

    def close(self) -> None:
        os.close(self.fd)
        if self.want_crc is not None and self.seen == self.nbytes and self.crc != self.want_crc:
            raise CheckpointError(
                f"checksum mismatch in {self.name}: expected crc32 {self.want_crc:#010x}, "
                f"found {self.crc:#010x}"
            )


def _buffer(piece, nbytes) -> np.ndarray:
    return np.empty(max(1, min(piece, nbytes)), np.uint8)


@kernel
def ckpt_read(xp, *, path, shape, dtype, sources, piece):
    """A block of ``shape`` read from shard files: each source ``(file, offset, nbytes,
    crc32 or None, file block shape, region in it, region in the block)`` contributes its
    region; with a crc the region is the whole file and is checked against it."""
    out = xp.empty(tuple(shape), dtype=np.dtype(dtype))
    if not sources:
        return out
    buf = _buffer(piece, max(s[2] for s in sources))
    for file, offset, nbytes, crc, fshape, reg, dst in sources:
        r = _Reader(path, file, offset, nbytes, crc, xp, dtype, buf)
        try:
            # `...` keeps a 0-d selection a view (`out[()]` would be a copied scalar)
            view = out[tuple(slice(a, b) for a, b in dst) + (Ellipsis,)]
            r.copy(0, tuple(fshape), tuple(map(tuple, reg)), view)
        finally:
            r.close()
    return out


@kernel
def ckpt_verify(xp, *, path, file, offset, nbytes, crc, piece):
    """Check that ``path/file`` holds ``nbytes`` bytes at ``offset`` whose CRC-32 is ``crc``
    (for shard files no block reads whole), streaming them through one buffer."""
    buf = _buffer(piece, nbytes)
    r = _Reader(path, file, offset, nbytes, crc, xp, "uint8", buf)
    try:
        for a in range(0, nbytes, len(buf)):
            r._pread(a, memoryview(buf[: min(len(buf), nbytes - a)]))
    finally:
        r.close()


# ------------------------------------------------------------------------- committing
def _fsync_dir(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@kernel
def ckpt_commit(xp, *, path, tmp, manifest):
    """Write the manifest into ``tmp``, fsync, and rename ``tmp`` to ``path`` (an old
    checkpoint there is renamed away first and deleted after)."""
    fd = os.open(os.path.join(tmp, MANIFEST), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        _write_all(fd, manifest)
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(tmp)
    parent = os.path.dirname(path)
    old = None
    if os.path.lexists(path):
        # POSIX renames a directory only over an empty one: move the old one aside first
        old = os.path.join(parent, os.path.basename(tmp).replace(".tmp-", ".old-", 1))
        os.rename(path, old)
    os.rename(tmp, path)
    _fsync_dir(parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return reply(True)


@kernel
def ckpt_remove(xp, *, path):
    """Delete a temporary checkpoint directory (a save that failed)."""
    shutil.rmtree(path, ignore_errors=True)
