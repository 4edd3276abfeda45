"""A worker's shards on threads: the per-shard work of one op runs on a pool of kernel threads.

A worker's CPU share (the ``n`` of its last ``Threads(n)`` command, :mod:`.threads`) is also
the size of its *kernel pool* (:class:`Pool`): the batch's thread plus ``n - 1`` helpers.
With ``n == 1`` (the default: one worker per core) nothing here runs, the worker's path is
the sequential one. With one worker owning all of a node's cores (and more shards than
workers), three kinds of work go to the pool:

* **chains**: the layout commands of a run (``Group``/``GroupFree``, up to the next sync
  point or reduction) expand to one *chain* of commands per shard (:func:`expand`); chains
  that are independent (:func:`independent`: no chain reads or writes a key another chain
  writes, nor memory another chain writes in place) run in parallel, each through
  :meth:`Worker.run` (so fusion windows apply per chain). Otherwise, or when the shards are
  small (under ``Worker.par_min`` elements), the commands run in the sequential order. Error
  records are merged in shard order (chain 0's, then chain 1's...): with one failing shard
  they are those of the sequential run;
* **fused blocks**: a fused elementwise group (:mod:`.fusion`) over fewer shards than threads
  evaluates its blocks on the pool, each lane with its own scratch buffers;
* **local reductions**: the chunk step of a ``Tree`` (one kernel per shard this worker holds)
  runs on the pool; the combine step takes the partials in shard order, on the batch's thread
  (trees and their partials never leave it).

Each block and each shard goes through the same kernel with the same operands as
sequentially, so results are bit-identical (a shard's reduction is never cut into chunks:
that would change its rounding).

No oversubscription: while ``k`` lanes run, a section holding a kernel that may call BLAS
lowers the process's BLAS/OpenMP pools to ``max(1, n // k)`` threads and restores ``n``
after (once per section: a cached :class:`threadpoolctl.ThreadpoolController` does it in a
few microseconds, where ``threadpool_limits`` rescans the loaded libraries, ~200 us), and
:func:`.threads.cpu_share` (``scipy.fft``'s workers) says ``n // k`` meanwhile.

Shared state while lanes run: the store and the poisoned keys see reads and writes of
distinct keys only (independent chains; tree chunks write keys of their own), which dicts do
atomically; the pool of freed blocks lends and takes back under a lock (lock-free when it is
empty, as it is for small data); ``commands_run`` is set after a section to its exact count
(each kernel command counts once), the fusion and byte counters change under a lock; tree
partials (``_texp``, the mailbox) and tracing stay on the batch's thread, and lanes start no
sections of their own (``Worker._busy``).

``SHARDED_SHARD_THREADS=0`` in a worker's environment keeps every worker sequential whatever
its share (an A/B switch for measurements). In-process workers (the local executor) never
start kernel threads: they share the driver's process, whose finalizers (a tensor's free,
under the executor's lock) the garbage collector may run on a kernel thread while the
driver's thread holds that lock waiting for it.

Examples
--------
>>> pool = Pool(2)
>>> pool.map(lambda x: x * x, [1, 2, 3])
[1, 4, 9]
>>> pool.close()
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import ThreadpoolController

from ..commands import Const, Free, Group, Kernel, Key, Keys, Ref
from . import threads

# shards of fewer elements run sequentially: their kernels take about the time of the Python
# around them (which holds the GIL), and a section's dispatch costs tens of microseconds
PAR_MIN_ELEMS = 1 << 15
# kernels that are neither fusable nor BLAS callers: no switch of the BLAS pools for them
_NO_BLAS = frozenset({"reduce_chunk", "reduce_combine", "arg_chunk", "arg_combine", "full"})


def pool_size(share: int) -> int:
    """The kernel threads of a worker whose CPU share is ``share``: the share, or 1 when
    ``SHARDED_SHARD_THREADS=0``.

    Examples
    --------
    >>> pool_size(4) in (1, 4), pool_size(0)
    (True, 1)
    """
    if os.environ.get("SHARDED_SHARD_THREADS", "1") == "0":
        return 1
    return max(1, int(share))


class Pool:
    """``n`` lanes: the calling thread and ``n - 1`` helper threads (started at first use).

    Examples
    --------
    >>> pool = Pool(3)
    >>> pool.map(str.upper, ["a", "b", "c"])
    ['A', 'B', 'C']
    >>> pool.close()
    """

    def __init__(self, n: int):
        self.n = max(1, int(n))
        self._helpers = None
        self.sections = 0  # maps that ran on more than one lane (a worker's stats)

    def map(self, fn, items) -> list:
        """``[fn(x) for x in items]``, the items spread over ``min(n, len(items))`` lanes
        (each takes the next item when done). Every item runs even when one raises; the
        first exception in item order is raised after all are done."""
        items = list(items)
        out = [None] * len(items)
        fails: list = [None] * len(items)
        lanes = min(self.n, len(items))
        if lanes <= 1:
            return [fn(x) for x in items]
        self.sections += 1
        if self._helpers is None:
            self._helpers = ThreadPoolExecutor(self.n - 1, thread_name_prefix="sharded-kernel")
        nxt, lock = iter(range(len(items))), threading.Lock()

        def lane():
            with np.errstate(all="ignore"):  # (per thread: the batch's own state stays)
                while True:
                    with lock:
                        i = next(nxt, None)
                    if i is None:
                        return
                    try:
                        out[i] = fn(items[i])
                    except BaseException as e:  # raised on the calling thread, in order
                        fails[i] = e

        futs = [self._helpers.submit(lane) for _ in range(lanes - 1)]
        lane()
        for f in futs:
            f.result()
        for e in fails:
            if e is not None:
                raise e
        return out

    def close(self) -> None:
        if self._helpers is not None:
            self._helpers.shutdown(wait=False)
            self._helpers = None


def resize(w, size: int) -> None:
    """Give worker ``w`` a kernel pool of ``size`` threads (its helpers start at first use)."""
    if size != w.kernel_threads and w._kpool is not None:
        w._kpool.close()
        w._kpool = None
    w.kernel_threads = size


def pool_of(w) -> Pool:
    """Worker ``w``'s kernel pool, started at first use."""
    if w._kpool is None:
        w._kpool = Pool(w.kernel_threads)
    return w._kpool


# ------------------------------------------------------------------ BLAS threads
# the loaded BLAS/OpenMP libraries, scanned at each Threads(n), and whether SciPy's linear
# algebra (its own OpenBLAS) was loaded then
_CONTROLLER: list = [None, False]


def rescan() -> None:
    """Look up the loaded BLAS/OpenMP libraries again (a ``Threads`` command does)."""
    _CONTROLLER[1] = "scipy.linalg" in sys.modules
    _CONTROLLER[0] = ThreadpoolController()


def _controller() -> ThreadpoolController:
    """The libraries to limit, scanned again once SciPy's linear algebra has loaded since the
    last scan: it brings its own OpenBLAS (loaded at first use, after the worker's
    ``Threads``), which a lane's limit would otherwise miss, leaving its calls at the whole
    share beside the other lanes."""
    if _CONTROLLER[0] is None or (not _CONTROLLER[1] and "scipy.linalg" in sys.modules):
        rescan()
    return _CONTROLLER[0]


class _Share:
    """While ``k`` lanes run: BLAS/OpenMP pools at ``n // k`` threads when ``blas``, and
    :func:`.threads.cpu_share` at ``n // k``; both back to ``n`` after."""

    def __init__(self, k: int, blas: bool):
        self.n = threads.cpu_share()
        self.lane = max(1, self.n // max(1, k))
        self.blas = blas and self.lane != self.n

    def __enter__(self):
        threads._SHARE[0] = self.lane
        if self.blas:
            threads.limit(_controller(), self.lane)

    def __exit__(self, *exc):
        threads._SHARE[0] = self.n
        if self.blas:
            threads.limit(_CONTROLLER[0], self.n)


_BLAS_FREE: dict = {}  # kernel name -> True when it surely calls no BLAS


def calls_blas(kernels, lists) -> bool:
    """Whether a kernel of the command ``lists`` may call BLAS (one not known to call none):
    lanes that run them share the BLAS threads.

    Examples
    --------
    >>> calls_blas({}, [[Kernel("matmul", (), (1,), {}, None, False)]])
    True
    """
    for cmds in lists:
        for c in cmds:
            if type(c) is Kernel:
                free = _BLAS_FREE.get(c.kernel)
                if free is None:
                    fn = kernels.get(c.kernel)
                    free = c.kernel in _NO_BLAS or bool(getattr(fn, "fusable", False))
                    _BLAS_FREE[c.kernel] = free
                if not free:
                    return True
    return False


# ------------------------------------------------------------------ chains
def wanted(w, layout_cmds) -> bool:
    """Whether layout commands may gain from running per shard on the pool: some op's first
    stored operand is a shard of ``w.par_min`` elements or more, of a layout of which this
    worker holds 2 shards or more (a quick look: one store lookup per op)."""
    store = w.store
    for c in layout_cmds:
        if type(c) is not Group:
            continue
        for x in c.args:
            if type(x) is Keys:
                shards = w.mine(c.desc)
                if len(shards) >= 2:
                    arr = store.get(x.start + shards[0])
                    if arr is not None and arr.size >= w.par_min:
                        return True
                break
    return False


def run_chains(w, chains: dict, refs):
    """Run the per-shard ``chains`` (shard -> commands) on ``w``'s pool and return their
    error records in shard order; None (nothing ran) when they are not independent or too
    small to gain: the caller then runs them in the sequential order."""
    if len(chains) < 2:
        return None
    lists = [chains[s] for s in sorted(chains)]
    if _size(w, lists[0]) < w.par_min or not independent(w, lists):
        return None
    nk = sum(type(c) is Kernel for cmds in lists for c in cmds)
    blas = calls_blas(w.kernels, lists)
    got = run_lanes(w, lambda cmds: w.run_commands(cmds, *refs), lists, nk, blas)
    return [e for errs in got for e in errs]


def run_lanes(w, fn, items, kernels: int, blas: bool) -> list:
    """``[fn(x) for x in items]`` on ``w``'s pool: the worker busy meanwhile (no section
    nests another), its BLAS pools shared among the lanes when ``blas``, and
    ``w.commands_run`` advanced by exactly ``kernels`` (each kernel command counts once,
    fused or not, whatever the interleaving of the lanes' increments)."""
    pool = pool_of(w)
    before = w.commands_run
    w._busy = True
    try:
        with _Share(min(pool.n, len(items)), blas):
            return pool.map(fn, items)
    finally:
        w._busy = False
        w.commands_run = before + kernels


def window_chains(cmds):
    """A fusion window's commands (:func:`.fusion.windows`) as independent chains, or None:
    each kernel joins the chain that made one of its operands in the window (a new chain
    when none did); a free goes with the chain that made the key, or, for a key made before
    the window (an input several chains may read), after them all. None when a kernel
    reads the outputs of two chains (one fused chain) or there is only one chain.

    The driver's per-shard commands of an op (a broadcast over shards of a layout that
    differs from its operand's) come as one kernel per shard, back to back: fused as one
    window they would run one after another on the batch's thread.

    Examples
    --------
    >>> a = Kernel("neg", (Key(1),), (10,), {}, None, False)
    >>> b = Kernel("neg", (Key(2),), (11,), {}, None, False)
    >>> c = Kernel("exp", (Key(10),), (12,), {}, None, False)
    >>> chains, after = window_chains([a, b, c, Free((10, 1))])
    >>> [[x.outs if type(x) is Kernel else x.keys for x in ch] for ch in chains], after
    ([[(10,), (12,), [10]], [(11,)]], [1])
    """
    owner: dict = {}  # key made in the window -> its chain
    chains: list = []
    after: list = []
    for c in cmds:
        if type(c) is Free:
            mine: dict = {}
            for k in c.keys:
                i = owner.get(k)
                if i is None:
                    after.append(k)
                else:
                    mine.setdefault(i, []).append(k)
            for i, keys in mine.items():
                chains[i].append(Free(keys))
            continue
        ids = {owner[a.key] for a in c.args if type(a) is Key and a.key in owner}
        if len(ids) > 1:
            return None
        i = ids.pop() if ids else len(chains)
        if i == len(chains):
            chains.append([])
        chains[i].append(c)
        for k in c.outs:
            owner[k] = i
    return (chains, after) if len(chains) > 1 else None


def run_window(w, cmds, refs, errors) -> bool:
    """Run a fusion window's independent chains (:func:`window_chains`) on the pool, each
    fused on its own (:func:`run_chains`), then the frees of the keys they shared; their
    error records go to ``errors`` in chain order. False (nothing ran) where the window is
    one chain, or its chains are too small to gain or not independent."""
    got = window_chains(cmds)
    if got is None:
        return False
    chains, after = got
    errs = run_chains(w, dict(enumerate(chains)), refs)
    if errs is None:
        return False
    errors += errs
    if after:
        w._free(after)
    return True


def reduce_chunks(w, cmds, refs) -> list:
    """Run a tree's chunk commands (one per shard, distinct inputs and outputs) on the pool;
    their error records in shard order."""
    return run_kernels(w, cmds, refs, blas=False)


def run_kernels(w, cmds, refs, blas=None) -> list:
    """Run independent kernel commands on the pool, one each; their error records in the
    commands' order (``blas``: whether one may call BLAS; None: look)."""

    def one(cmd):
        errs: list = []
        w._kernel(cmd, refs, errs)
        return errs

    if blas is None:
        blas = calls_blas(w.kernels, [cmds])
    got = run_lanes(w, one, cmds, len(cmds), blas)
    return [e for errs in got for e in errs]


RUN_MAX = 64  # the most kernel commands one look ahead takes (the independence check is
# quadratic in them at worst)


def kernel_run(w, cmds, start, windows, refs=()):
    """The end of the run of kernel commands from ``start`` that may go to the pool, one
    per lane: plain ``Kernel`` records (no fused window starts among them), at least 2, each
    independent of the others (:func:`independent`), the first one's data (stored or among
    the batch's ``refs``: :func:`_size`) of ``w.par_min`` elements or more; None when there
    is no such run.

    ``Free`` records between them belong to the kernel before (a sort's scratch blocks,
    freed after each destination's kernel): the run goes on past them, and they run after
    its kernels (:func:`split_run`), when no other kernel of the run touches what they free.
    Their blocks then go back to the pool after the run, not between its kernels, which run
    at once anyway."""
    first = cmds[start]
    if _size(w, [first], refs) < w.par_min:
        return None
    run, end, n = [[first]], start + 1, min(len(cmds), start + RUN_MAX)
    last = end  # past the run's last kernel (trailing frees stay out of it)
    while end < n and (not windows or end not in windows):
        c = cmds[end]
        kind = type(c)
        if kind is Free:
            chain = run[-1] + [c]
            if not independent(w, run[:-1] + [chain]):
                break
            run[-1] = chain
        elif kind is Kernel:
            if not independent(w, run + [[c]]):
                break
            run.append([c])
            last = end + 1
        else:
            break
        end += 1
    return last if len(run) >= 2 else None


def split_run(cmds) -> tuple:
    """``(kernels, frees)`` of a run :func:`kernel_run` found: the kernels go to the lanes,
    the frees run after them."""
    kernels = [c for c in cmds if type(c) is Kernel]
    return kernels, [c for c in cmds if type(c) is not Kernel]


def worth(w, cmds) -> bool:
    """Whether per-shard commands ``cmds`` may go to the pool: a pool of 2 or more, not
    already on it, and enough data."""
    if w.kernel_threads < 2 or w._busy or len(cmds) < 2:
        return False
    return _size(w, cmds[:1]) >= w.par_min


def _size(w, cmds, refs=()) -> int:
    """A chain's shard size, roughly: the largest over its kernels of the elements of their
    stored or received operands (a ``Ref`` into the batch's ``refs``: a sort's pieces from
    other shards) and of a ``shape`` parameter (a tensor made here, a block assembled from
    pieces); 0 when none tells (a chain of small ops with one large one is worth the pool).
    Every operand counts, not the first: a convolution's first is its small weight."""
    store, most = w.store, 0
    for c in cmds:
        if type(c) is not Kernel:
            continue
        for a in c.args:
            kind = type(a)
            arr = (
                store.get(a.key)
                if kind is Key
                else refs[a.index]
                if kind is Ref and a.index < len(refs)
                else None
            )
            if arr is not None:
                most = max(most, getattr(arr, "size", 0))
        if c.params and "shape" in c.params:
            try:
                most = max(most, int(np.prod(c.params["shape"])))
            except (TypeError, ValueError):
                pass
    return most


def independent(w, lists) -> bool:
    """Whether the chains ``lists`` may run in any interleaving: no key written by one
    chain (an output, a free, an in-place target) is read or written by another, no kernel
    runs for its effect alone (no outputs: it may write its operands), no
    operand is taken from a mailbox, and no in-place write touches memory another chain
    reads (stored views share it) or a published snapshot (copy on write is not
    thread-safe).

    Examples
    --------
    >>> from sharded.runtime.worker.core import Worker
    >>> w = Worker(0)
    >>> a = Kernel("neg", (Key(1),), (10,), {}, None, False)
    >>> b = Kernel("neg", (Key(2),), (11,), {}, None, False)
    >>> independent(w, [[a], [b]]), independent(w, [[a], [b._replace(args=(Key(10),))]])
    (True, False)
    """
    owner: dict = {}
    inplace = False
    for i, cmds in enumerate(lists):
        for c in cmds:
            keys = c.keys if type(c) is Free else c.outs
            if not keys:
                return False  # (a kernel run for its effect: what it writes is not said)
            for k in keys:
                if owner.setdefault(k, i) != i:
                    return False
            if type(c) is Kernel and c.inplace:
                inplace = True
    for i, cmds in enumerate(lists):
        for c in cmds:
            if type(c) is not Kernel:
                continue
            for a in c.args:
                kind = type(a)
                if kind is Key:
                    if owner.get(a.key, i) != i:
                        return False
                elif kind is not Const and kind is not Ref:
                    return False  # (a Mail: its take is not shared safely)
    if inplace:
        if w.published_seen:
            return False
        return _disjoint(w, lists)
    return True


def _bounds(arr) -> tuple:
    """The first and past-the-last byte addresses ``arr`` spans."""
    lo = arr.__array_interface__["data"][0]
    if arr.flags.c_contiguous:
        return lo, lo + arr.nbytes
    hi = lo + arr.itemsize
    for n, st in zip(arr.shape, arr.strides):
        if st < 0:
            lo += st * (n - 1)
        else:
            hi += st * (n - 1)
    return lo, hi


def _disjoint(w, lists) -> bool:
    """Whether memory written in place by a chain is touched by no other chain (checked on
    the stored arrays: a chain writing in place into an array it made itself, which may be
    a view of what it read, counts everything it read as written)."""
    store, spans = w.store, []  # (lo, hi, chain, written)
    for i, cmds in enumerate(lists):
        made, reads, writes, blind = set(), set(), set(), False
        for c in cmds:
            if type(c) is not Kernel:
                continue
            reads.update(a.key for a in c.args if type(a) is Key)
            if c.inplace:
                for k in c.outs:
                    if k in made:
                        blind = True
                    writes.add(k)
            made.update(c.outs)
        if blind:
            writes |= reads
        for k in reads | writes:
            arr = store.get(k)
            if isinstance(arr, np.ndarray) and arr.nbytes:
                lo, hi = _bounds(arr)
                spans.append((lo, hi, i, k in writes))
    spans.sort()
    active: list = []  # spans still open at the current start
    for lo, hi, i, wr in spans:
        active = [s for s in active if s[1] > lo]
        for _, _, j, wj in active:
            if j != i and (wr or wj):
                return False
        active.append((lo, hi, i, wr))
    return True
