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

import errno
import math
import os
import shutil
import socket
import stat
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
# Files are opened without following a symbolic link (a checkpoint's file never leads out of
# its directory) and without blocking (a FIFO or device opens at once, then fails the
# regular-file test instead of stalling the worker); new files are never existing ones.
_OPEN_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def reply(obj) -> np.ndarray:
    """``obj`` as a uint8 array (what a kernel leaves for the driver to read)."""
    return np.frombuffer(msgpack.packb(obj, use_bin_type=True), np.uint8)


def unreply(arr):
    """The object a kernel packed with :func:`reply`."""
    return msgpack.unpackb(np.asarray(arr, np.uint8).tobytes(), raw=False)


def _host(xp, a):
    return a if xp is np else xp.asnumpy(a)


def _open_regular(name, missing="is missing"):
    """``(fd, size)`` of ``name`` opened for reading, if it is a regular file itself: a
    symbolic link, FIFO, directory or device raises :class:`CheckpointError` naming ``name``
    (and nothing read through it); so does a missing file (``name`` + ``missing``)."""
    try:
        fd = os.open(name, _OPEN_READ)
    except FileNotFoundError:
        raise CheckpointError(f"{name} {missing}") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise CheckpointError(
                f"{name} is a symbolic link: a checkpoint's files must be regular files in its "
                "directory (links are not followed)"
            ) from None
        raise CheckpointError(f"{name} cannot be opened: {e.strerror}") from None
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise CheckpointError(f"{name} cannot be read: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "an unknown kind of file")
        raise CheckpointError(f"{name} is {kind}, expected a regular file")
    return fd, st.st_size


def _regular(name) -> bool:
    try:
        return stat.S_ISREG(os.lstat(name).st_mode)
    except OSError:
        return False


# ------------------------------------------------------------------------- probing
@kernel
def ckpt_probe(xp, *, path, mode, tmp=None, send=False, dir_mode=0o700):
    """What this worker sees at ``path``: ``mode`` "save" (the parent is a writable
    directory and ``path`` is absent or a checkpoint; with ``tmp``, make that directory with
    ``dir_mode``, plus what its owner needs to write into it until the save commits), "tmp"
    (``tmp`` is visible) or "load" (the manifest's size and CRC, its bytes if ``send``; a
    regular file, not a link).
    Returns ``{"ok", "host", "error"...}``: a refusal is an answer, not a failure."""
    out = {"ok": True, "host": socket.gethostname()}
    try:
        if mode == "save":
            parent = os.path.dirname(path)
            if not os.path.isdir(parent):
                raise _Refused(f"directory {parent} does not exist")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise _Refused(f"directory {parent} is not writable")
            if os.path.islink(path):
                raise _Refused(
                    f"{path} is a symbolic link; refusing to replace it (save to the directory "
                    "it points to)"
                )
            if os.path.lexists(path) and not (
                os.path.isdir(path)
                and (_regular(os.path.join(path, MANIFEST)) or not os.listdir(path))
            ):
                raise _Refused(
                    f"{path} exists and is not a checkpoint (no {MANIFEST}); refusing to replace it"
                )
            if tmp is not None:
                os.mkdir(tmp, dir_mode | 0o700)  # the umask applies; ckpt_commit may clear bits
        elif mode == "tmp":
            if not os.path.isdir(tmp):
                raise _Refused(f"directory {tmp} (just made by worker 0) is not visible here")
        else:
            name = os.path.join(path, MANIFEST)
            fd, size = _open_regular(name, "does not exist")
            try:
                with os.fdopen(fd, "rb") as f:
                    data = f.read()
            except MemoryError:
                raise _Refused(f"{name} ({size} bytes) does not fit in memory") from None
            out.update(size=len(data), crc32=zlib.crc32(data))
            if send:
                out["data"] = data
    except (_Refused, CheckpointError, OSError) as e:
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
def ckpt_write(xp, a, *, path, file, piece, file_mode=0o600):
    """Write block ``a`` to the new file ``path/file`` (raw little-endian, C order; created
    with ``file_mode``, less the umask) and fsync it; returns ``[bytes, crc32]`` of what was
    written."""
    fd = os.open(os.path.join(path, file), _OPEN_NEW, file_mode)
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
        self.fd = _open_shard(self.name, offset, nbytes)

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
            # what the file holds is not echoed back: the name and the expectation suffice
            raise CheckpointError(
                f"checksum mismatch in {self.name}: expected crc32 {self.want_crc:#010x}, the "
                "file's bytes differ"
            )


def _open_shard(name, offset, nbytes) -> int:
    """An open regular file ``name`` holding at least ``offset + nbytes`` bytes."""
    fd, size = _open_regular(name, f"is missing (expected {offset + nbytes} bytes)")
    if size < offset + nbytes:
        os.close(fd)
        raise CheckpointError(
            f"{name} is truncated: expected {offset + nbytes} bytes, found {size}"
        )
    return fd


def _buffer(piece, nbytes) -> np.ndarray:
    return np.empty(max(1, min(piece, nbytes)), np.uint8)


@kernel
def ckpt_read(xp, *, path, shape, dtype, sources, piece):
    """A block of ``shape`` read from shard files: each source ``(file, offset, nbytes,
    crc32 or None, file block shape, region in it, region in the block)`` contributes its
    region; with a crc the region is the whole file and is checked against it.

    Every source file is checked first (a regular file holding its declared bytes), so a
    manifest's sizes are backed by real files before the block is allocated."""
    for file, offset, nbytes, *_ in sources:
        os.close(_open_shard(os.path.join(path, file), offset, nbytes))
    try:
        out = xp.empty(tuple(shape), dtype=np.dtype(dtype))
    except (MemoryError, ValueError):  # a sparse file can back sizes no memory holds
        n = math.prod(shape) * np.dtype(dtype).itemsize
        raise CheckpointError(
            f"{path}: a {np.dtype(dtype).name} block of shape {tuple(shape)} ({n} bytes) does "
            "not fit in this worker's memory"
        ) from None
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
    buf = _buffer(piece, nbytes)  # at most a piece, whatever the manifest says
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


def _remove_tree(path):
    """Delete ``path`` (a replaced or failed checkpoint directory, or a link in its place);
    returns what stopped it, or None."""
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)  # never rmtree through a link: only the link goes
            return None
        try:
            shutil.rmtree(path)
        except PermissionError:
            # a read-only checkpoint (saved with such a mode, or chmod-ed since) refuses the
            # unlinks in it: give its owner the directory back and try once more
            os.chmod(path, 0o700)
            shutil.rmtree(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{e.filename}: {e.strerror}"
    return None


@kernel
def ckpt_commit(xp, *, path, tmp, manifest, file_mode=0o600, dir_mode=0o700):
    """Write the manifest into ``tmp``, give ``tmp`` its mode, fsync, and rename ``tmp`` to
    ``path`` (an old checkpoint there is renamed away first and deleted after; put back if
    the rename fails). Returns ``{"left": ...}``: the replaced checkpoint's directory and why
    it could not be deleted, or None."""
    fd = os.open(os.path.join(tmp, MANIFEST), _OPEN_NEW, file_mode)
    try:
        _write_all(fd, manifest)
        os.fsync(fd)
    finally:
        os.close(fd)
    if dir_mode & 0o700 != 0o700:
        # made with the owner's bits so the workers could write into it; the AND keeps what
        # the umask cleared cleared
        os.chmod(tmp, stat.S_IMODE(os.stat(tmp).st_mode) & dir_mode)
    _fsync_dir(tmp)
    parent = os.path.dirname(path)
    old = None
    if os.path.lexists(path):
        # POSIX renames a directory only over an empty one: move the old one aside first
        old = os.path.join(parent, os.path.basename(tmp).replace(".tmp-", ".old-", 1))
        os.rename(path, old)
    try:
        os.rename(tmp, path)
    except BaseException:
        if old is not None:
            os.rename(old, path)  # a failed save leaves the old checkpoint where it was
        raise
    _fsync_dir(parent)
    why = _remove_tree(old) if old is not None else None
    return reply({"left": None if why is None else [old, why]})


@kernel
def ckpt_remove(xp, *, path):
    """Delete a temporary checkpoint directory (a save that failed; best effort)."""
    _remove_tree(path)
