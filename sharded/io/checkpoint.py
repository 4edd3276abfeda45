"""``st.save`` and ``st.load``: checkpoints written and read by the workers holding the shards.

Saving:

1. Every worker checks that it can use ``path`` (its parent is a writable directory; ``path``
   is absent or a checkpoint); worker 0 makes the temporary directory ``.NAME.tmp-XXXX`` next
   to it, and every worker then checks that it sees that directory (a node-local ``/tmp``
   would not). All of this happens before a byte of data is written.
2. Each shard's worker writes its file into the temporary directory, fsyncs it and reports
   its size and CRC-32 (a replicated tensor is written once, by its first worker).
3. Worker 0 writes the manifest, gives the directory its mode, fsyncs, and renames it to
   ``path`` (an old checkpoint there is renamed aside first, then deleted).

A failure anywhere removes the temporary directory: ``path`` keeps what it held. Files are
created ``0o600`` and directories ``0o700`` unless ``mode=`` says otherwise.

Loading:

1. Every worker reads the manifest's size and CRC (they must agree: one shared filesystem);
   worker 0 sends its bytes, which the driver validates (:func:`~sharded.io.manifest.parse`).
2. Each block of the target layout is read by its own worker from the byte ranges of the
   shard files it overlaps (another shard count, split dim, layout or device: N -> M). A file
   a block reads whole is checked against its CRC on the way; every other file once, by one
   streaming pass.
3. Only when every command succeeded are the blocks wrapped into tensors; otherwise they are
   freed and a :class:`~sharded.errors.CheckpointError` raised.

Nothing in a checkpoint is trusted: every file is opened without following a link or
blocking and must be a regular file; a worker checks the declared size of every file a block
reads before it allocates the block; a block no memory holds, a device this session lacks, a
failed read all raise :class:`~sharded.errors.CheckpointError` naming the file or manifest.

CRC-32 (``zlib.crc32``) is the checksum: standard (zip, gzip, PNG), in the standard library,
streamable piece by piece, and about 4 GB/s here, faster than any ``hashlib`` digest (SHA-1
1.9, MD5 0.8 GB/s), so checking costs less than reading. It catches corruption, not tampering.
"""

from __future__ import annotations

import math
import os
import sys
import uuid

from tqdm import tqdm

from .. import dtypes as D
from ..core.dataflow import Operand
from ..core.dispatch import placement, session_of, wrap
from ..devices import workers_for
from ..errors import ArgumentError, CheckpointError, OpFailed, OutOfMemory, ShardedError
from ..layout import Layout
from ..runtime.commands import Key
from ..runtime.driver import session as _session
from . import manifest as M
from .kernels import unreply

BAR_MIN_BYTES = 256 << 20  # a progress bar by default only above this (and on a terminal)
_WAVES = 50  # with a bar, commands go out in this many waves (the bar moves after each)


# ------------------------------------------------------------------------------ helpers
def _abspath(path) -> str:
    # workers resolve relative paths against their own working directory: fix it here
    return os.path.abspath(os.path.expanduser(os.fspath(path)))


def _ask(ex, kern, calls, label):
    """Run ``kern`` once per ``(worker, params)`` and read what each left (one round trip)."""
    keys = []
    for w, params in calls:
        k = ex.new_key()
        ex.submit(w, kern, (), (k,), params, label=(label, None))
        keys.append((w, k))
    try:
        vals = ex.fetch([(w, k, None) for w, k in keys])
    finally:
        ex.free_pairs(keys)
    return [unreply(v) for v in vals]


def _where(ex, w, host) -> str:
    return f"worker {w} on node {host} ({ex.workers[w].node})"


def _check_all(ex, replies, what, path) -> None:
    for w, r in enumerate(replies):
        if not r["ok"]:
            raise CheckpointError(
                f"{what}: {_where(ex, w, r['host'])} cannot use {path}: {r['error']}"
            )


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _bar(progress, total, desc):
    """A tqdm bar (bytes, rate) when ``progress`` is true, or when it is None, stderr is a
    terminal and more than :data:`BAR_MIN_BYTES` move."""
    show = progress if progress is not None else total > BAR_MIN_BYTES and sys.stderr.isatty()
    if not show:
        return _NoBar()
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc)


def _waves(jobs, nbytes, bar):
    """``jobs`` in one wave, or (with a bar to move) in waves of about 1/50 of the bytes."""
    if isinstance(bar, _NoBar) or not jobs:
        return [jobs]
    size = max(1, sum(nbytes(j) for j in jobs) // _WAVES)
    out, cur, acc = [], [], 0
    for j in jobs:
        cur.append(j)
        acc += nbytes(j)
        if acc >= size:
            out.append(cur)
            cur, acc = [], 0
    return out + ([cur] if cur else [])


# ------------------------------------------------------------------------------ save
def save(obj, path, *, progress=None, mode=0o600) -> None:
    """Save a tensor, or nested dicts/lists/tuples of tensors and plain values, to the
    directory ``path`` (a msgpack manifest plus one raw file per shard; see
    :mod:`sharded.io.checkpoint`).

    Each worker writes its own shards; the save is atomic (an existing checkpoint at ``path``
    is replaced whole, a failed save leaves it untouched; neither leaves a temporary
    directory behind). ``path`` must be on a filesystem every worker sees.

    Parameters
    ----------
    obj : ShardedTensor, dict, list, tuple or plain value
        What to save: tensors, and None, bool, int, float, str, bytes, nested in dicts (any
        plain hashable keys), lists and tuples.
    path : str or os.PathLike
        The checkpoint directory to create or replace.
    progress : bool, optional
        Show a tqdm bar; by default one shows above 256 MiB when stderr is a terminal.
    mode : int, optional
        Permission bits of the files (default ``0o600``: only their owner reads them); the
        directory gets the same bits plus execute wherever read is set (``0o600`` -> ``0o700``,
        ``0o640`` -> ``0o750``). As with ``open(2)``, each worker's umask still clears bits
        (the usual ``0o022`` leaves the default alone, and turns ``0o666`` into ``0o644``).
        It must let the owner read (``0o400``) and hold nothing but permission bits.

    Examples
    --------
    >>> import os, stat, tempfile, sharded as st
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> st.save({"w": st.arange(6, shards=2), "step": 3}, path)
    >>> sorted(os.listdir(path))
    ['manifest.msgpack', 't0.s0.bin', 't0.s1.bin']
    >>> def perms(p):
    ...     return oct(stat.S_IMODE(os.stat(p).st_mode))
    >>> perms(path), perms(os.path.join(path, "t0.s0.bin"))
    ('0o700', '0o600')
    >>> st.save({"w": st.arange(6, shards=2)}, path, mode=0o640)  # shared with the group
    >>> perms(path), perms(os.path.join(path, "t0.s0.bin"))
    ('0o750', '0o640')
    """
    tensors, index = [], {}

    def tensor_index(t):
        if id(t) not in index:  # a tensor that appears twice is saved once, loaded once
            index[id(t)] = len(tensors)
            tensors.append(t)
        return index[id(t)]

    if isinstance(mode, bool) or not isinstance(mode, int) or mode & ~0o777 or not mode & 0o400:
        raise ArgumentError(
            f"st.save: mode={mode!r}, expected permission bits (an int within 0o777) that let "
            "the owner read, like 0o600 or 0o640"
        )
    root = M.encode(obj, tensor_index)
    path = _abspath(path)
    parent, base = os.path.split(path)
    if not base:
        raise ArgumentError(f"st.save: {path!r} cannot be a checkpoint directory")
    dir_mode = mode | (mode & 0o444) >> 2  # x wherever r is set
    ex = session_of(tensors).executor
    tmp = os.path.join(parent, f".{base}.tmp-{uuid.uuid4().hex[:12]}")
    every = range(ex.num_workers)
    try:
        probe = {"path": path, "mode": "save", "dir_mode": dir_mode}
        rs = _ask(
            ex, "ckpt_probe", [(w, dict(probe, tmp=tmp if w == 0 else None)) for w in every], "save"
        )
        _check_all(ex, rs, "st.save", path)
        rs = _ask(
            ex,
            "ckpt_probe",
            [(w, {"path": path, "mode": "tmp", "tmp": tmp}) for w in every],
            "save",
        )
        _check_all(ex, rs, "st.save", path)
        entries = _write(ex, tensors, tmp, progress, path, mode)
        params = {
            "path": path,
            "tmp": tmp,
            "manifest": M.pack(entries, root),
            "file_mode": mode,
            "dir_mode": dir_mode,
        }
        (done,) = _ask(ex, "ckpt_commit", [(0, params)], "save")
    except BaseException:
        _discard(ex, tmp)
        raise
    if done["left"] is not None:
        old, why = done["left"]
        raise CheckpointError(
            f"st.save: {path} holds the new checkpoint, but the one it replaced could not be "
            f"deleted from {old} ({why})"
        )


def _write(ex, tensors, tmp, progress, path, mode):
    """Each shard's worker writes its file; returns the manifest's tensor entries."""
    jobs = []
    for i, t in enumerate(tensors):
        lay = t._layout
        shards = lay.shards()[:1] if lay.is_replicated else lay.shards()
        for j, ((w, _, shp), k) in enumerate(zip(shards, t._keys)):
            jobs.append((i, j, w, k, math.prod(shp) * t._dtype.itemsize))
    done = {}
    bar = _bar(progress, sum(j[4] for j in jobs), f"save {os.path.basename(path)}")
    try:
        for wave in _waves(jobs, lambda j: j[4], bar):
            keys = []
            for i, j, w, k, _ in wave:
                r = ex.new_key()
                params = {
                    "path": tmp,
                    "file": M.shard_file(i, j),
                    "piece": ex.transfer_bytes,
                    "file_mode": mode,
                }
                ex.submit(w, "ckpt_write", (Key(k, None),), (r,), params, label=("save", j))
                keys.append((w, r))
            try:
                vals = ex.fetch([(w, r, None) for w, r in keys])
            finally:
                ex.free_pairs(keys)
            for (i, j, _, _, nb), v in zip(wave, vals):
                n, crc = unreply(v)
                if n != nb:  # a worker's block disagrees with the driver's layout
                    raise CheckpointError(
                        f"st.save: wrote {n} bytes of {M.shard_file(i, j)}, expected {nb}"
                    )
                done[i, j] = crc
            bar.update(sum(j[4] for j in wave))
    finally:
        bar.close()
    entries = []
    for i, t in enumerate(tensors):
        lay = t._layout
        shards = lay.shards()[:1] if lay.is_replicated else lay.shards()
        item = t._dtype.itemsize
        entries.append(
            M.TensorEntry(
                lay.shape,
                t._dtype,
                lay.bounds,
                lay.is_replicated,
                t.device,
                bool(t.requires_grad),
                [
                    M.ShardEntry(
                        offs, shp, M.shard_file(i, j), 0, math.prod(shp) * item, done[i, j]
                    )
                    for j, (_, offs, shp) in enumerate(shards)
                ],
            )
        )
    return entries


def _discard(ex, tmp) -> None:
    """Remove a failed save's temporary directory (best effort: the session may be gone)."""
    try:
        ex.submit(0, "ckpt_remove", (), (), {"path": tmp}, label=("save", None))
        ex.sync()
    except ShardedError:
        pass


# ------------------------------------------------------------------------------ load
def load(path, *, shards=None, dim=None, layout=None, device=None, progress=None):
    """Load what :func:`save` wrote to ``path``: the same structure, with new tensors.

    Tensors keep their saved layout and device unless ``shards=``/``dim=``/``layout=`` or
    ``device=`` say otherwise (for every tensor; a 0-d tensor is always one shard; a tensor
    saved across several devices loads onto the GPUs if it was on GPUs only, else the CPU).
    Each worker reads only the byte ranges its blocks need, in bounded pieces, and every
    shard file's CRC is checked. A bad checkpoint raises :class:`~sharded.errors.CheckpointError`
    and loads nothing.

    Parameters
    ----------
    path : str or os.PathLike
        A checkpoint directory.
    shards, dim, layout, device : optional
        Placement of the loaded tensors, as for ``st.zeros``.
    progress : bool, optional
        Show a tqdm bar; by default one shows above 256 MiB when stderr is a terminal.

    Examples
    --------
    >>> import os, tempfile, sharded as st
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> st.save({"w": st.arange(6, shards=2), "step": 3}, path)
    >>> ck = st.load(path, shards=3)
    >>> ck["w"].tolist(), ck["w"].layout.grid, ck["step"]
    ([0, 1, 2, 3, 4, 5], (3,), 3)
    """
    path = _abspath(path)
    sess = _session.current()
    ex = sess.executor
    name = os.path.join(path, M.MANIFEST)
    calls = [(w, {"path": path, "mode": "load", "send": w == 0}) for w in range(ex.num_workers)]
    rs = _ask(ex, "ckpt_probe", calls, "load")
    if not any(r["ok"] for r in rs):
        raise CheckpointError(f"st.load: no checkpoint at {path}: {rs[0]['error']}")
    _check_all(ex, rs, "st.load", path)
    for w, r in enumerate(rs):
        if (r["size"], r["crc32"]) != (rs[0]["size"], rs[0]["crc32"]):
            raise CheckpointError(
                f"st.load: {_where(ex, w, r['host'])} sees a different {name} ({r['size']} "
                f"bytes, crc32 {r['crc32']:#010x}) than worker 0 ({rs[0]['size']} bytes, "
                f"crc32 {rs[0]['crc32']:#010x}): {path} must be on a filesystem every worker "
                "shares"
            )
    entries, root = M.parse(rs[0]["data"], name)
    ops, jobs = _plan_reads(ex, entries, name, shards, dim, layout, device)
    made = [(w, k) for op in ops for w, k in zip(op.layout.workers, op.keys)]
    bar = _bar(progress, sum(j[3] for j in jobs), f"load {os.path.basename(path)}")
    try:
        for wave in _waves(jobs, lambda j: j[3], bar):
            for w, kern, params, _, out, label in wave:
                ex.submit(w, kern, (), (out,) if out is not None else (), params, label=label)
            ex.sync()
            bar.update(sum(j[3] for j in wave))
    except OpFailed as e:
        ex.free_pairs(made)  # nothing half-loaded: every block made so far goes
        if e.cause.startswith("CheckpointError: "):
            raise CheckpointError(f"st.load: {e.cause[len('CheckpointError: ') :]}") from None
        if e.op == "load":  # a read that failed otherwise (an I/O error): still the checkpoint's
            raise CheckpointError(
                f"st.load: reading {path} failed on worker {e.worker}: {e.cause}"
            ) from None
        raise
    except BaseException:
        ex.free_pairs(made)
        raise
    finally:
        bar.close()
    tensors = []
    for op, e in zip(ops, entries):
        t = wrap(op, sess)
        t.requires_grad = e.requires_grad and D.category(e.dtype) >= 2
        tensors.append(t)
    return M.decode(root, tensors, name)


def _target(e, where, shards, dim, layout, device) -> Layout:
    """The layout a saved tensor loads into: the requested one, else its saved chunks. What
    the manifest asks for (a device, a layout) and this session cannot give is a
    :class:`CheckpointError` naming ``where``; what the caller asks for keeps its own error."""
    dev = device if device is not None else e.device
    if dev.startswith("mixed"):  # several devices: GPUs if it was on GPUs only, else the CPU
        parts = dev[len("mixed(") : -1].split(", ")
        dev = "cuda" if all(p.startswith("cuda") for p in parts) else "cpu"
    if device is None:
        try:
            workers_for(_session.current().executor, dev)
        except ShardedError as err:
            raise CheckpointError(
                f"st.load: {where} was saved on device {e.device!r}, which this session cannot "
                f"place it on ({err}); pass device= to load it elsewhere"
            ) from None
    saved = shards is None and dim is None and layout is None
    if saved:
        if e.replicated:
            layout = Layout.replicated()
        else:
            cuts = {d: tuple(b - a for a, b in zip(bd, bd[1:])) for d, bd in enumerate(e.bounds)}
            layout = Layout(chunks={d: c for d, c in cuts.items() if len(c) > 1})
    elif not e.shape:
        shards = dim = None  # a 0-d tensor is one shard whatever was asked
    try:
        return placement(e.shape, shards, dim, layout, dev, e.dtype)
    except ShardedError as err:
        if isinstance(err, OutOfMemory):  # (the manifest's shape, whatever layout was asked)
            raise CheckpointError(f"st.load: {where}: {err}") from None
        if not saved:
            raise
        raise CheckpointError(
            f"st.load: {where}: its saved layout ({len(e.shards)} shards of shape {e.shape}) "
            f"cannot be placed: {err}"
        ) from None


def _plan_reads(ex, entries, name, shards, dim, layout, device):
    """One read command per target block, one verify command per file no block reads
    whole: ``jobs`` of ``(worker, kernel, params, bytes, output key, label)``."""
    ops, jobs, piece = [], [], ex.transfer_bytes
    path = os.path.dirname(name)
    for i, e in enumerate(entries):
        lay = _target(e, f"{name}: tensor {i}", shards, dim, layout, device)
        src = Layout.from_bounds(e.shape, e.bounds, [0] * len(e.shards), e.replicated)
        checked, keys = set(), []
        for s, (w, offs, shp) in enumerate(lay.shards()):
            region = tuple((o, o + n) for o, n in zip(offs, shp))
            sources = []
            for j, sl, dl in src.overlaps(region):
                f = e.shards[j]
                reg = [(x.start, x.stop) for x in sl]
                crc = None
                if j not in checked and all(a == 0 and b == n for (a, b), n in zip(reg, f.shape)):
                    crc = f.crc32  # this block reads the whole file: check it on the way
                    checked.add(j)
                dst = [(x.start, x.stop) for x in dl]
                sources.append((f.file, f.offset, f.nbytes, crc, list(f.shape), reg, dst))
            k = ex.new_key()
            keys.append(k)
            params = {
                "path": path,
                "shape": shp,
                "dtype": e.dtype.np_str,
                "sources": sources,
                "piece": piece,
            }
            jobs.append((w, "ckpt_read", params, math.prod(shp) * e.dtype.itemsize, k, ("load", s)))
        for j, f in enumerate(e.shards):
            if j not in checked:
                w = lay.workers[j % len(lay.workers)]
                params = {
                    "path": path,
                    "file": f.file,
                    "offset": f.offset,
                    "nbytes": f.nbytes,
                    "crc": f.crc32,
                    "piece": piece,
                }
                jobs.append((w, "ckpt_verify", params, f.nbytes, None, ("load", None)))
        ops.append(Operand(lay, e.dtype, keys))
    return ops, jobs
