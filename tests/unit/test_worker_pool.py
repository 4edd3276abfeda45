"""The worker's pool of freed blocks: best fit, lending a larger block's leading bytes, and
never lending a block twice while a view of it lives."""

import numpy as np

import sharded  # noqa: F401  (fills the kernel table the workers run from)
from sharded.runtime.commands import Free, Kernel, Key, Pool, Ref, Threads, Trace
from sharded.runtime.worker import core as W
from sharded.runtime.worker import store

MB = 1 << 20


def _block(nbytes):
    return np.empty(nbytes, np.uint8)


def _sizes(w):
    return [b.nbytes for b in w.pool.values()]


def _addrs(w):
    return {b.nbytes: b.ctypes.data for b in w.pool.values()}


def test_the_pool_evicts_the_blocks_pooled_longest_ago(monkeypatch):
    monkeypatch.setattr(store, "POOL_MAX_BYTES", 4 * MB)
    w = W.Worker(0)
    for n in (MB, 2 * MB, MB):  # (the pool keeps a block only if nothing else holds it)
        w._recycle(_block(n))
    assert _sizes(w) == [MB, 2 * MB, MB] and w.pool_bytes == 4 * MB
    w._recycle(_block(MB + 8))  # past the cap: the two pooled longest ago leave
    assert _sizes(w) == [MB, MB + 8] and w.pool_bytes == 2 * MB + 8
    w._recycle(np.empty(2 * MB)[:MB])  # a view: not its own memory, never pooled
    w._recycle(_block(MB - 1))  # too small to be worth keeping
    kept = _block(MB)
    w._recycle(kept)  # referenced elsewhere: not pooled
    assert _sizes(w) == [MB, MB + 8]


def test_a_threaded_workers_pool_keeps_what_as_many_one_core_workers_would(monkeypatch):
    """A worker running 2 cores' shards pools up to 2 x POOL_MAX_BYTES (2 one-core workers
    would): with one core's cap, a threaded worker's sorts evicted the blocks they reuse."""
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(store, "POOL_MAX_BYTES", 4 * MB)
    with threadpool_limits(limits=None):  # (Threads sets this process's BLAS)
        w = W.Worker(0)
        assert w.run([Threads(2)]) == []
        for _ in range(3):
            w._recycle(_block(2 * MB))
        assert w.pool_bytes == 6 * MB  # past one core's 4 MB
        w.run([Pool(5 * MB)])  # the node's share, when smaller, still bounds it
        assert w.pool_bytes == 4 * MB
    assert store.pool_share(64 << 30, 1, threads=2) == 8 * MB
    assert store.pool_share(16 << 30, 1, threads=2) == 8 * MB


def test_pool_command_trims_the_pool_to_the_workers_share():
    w = W.Worker(0)
    for n in (1, 2, 3):
        w._recycle(np.empty(n * MB // 8))
    assert w.pool_bytes == 6 * MB
    w.run([Pool(3 * MB)])  # a share smaller than what it holds: the oldest leave
    assert w.pool_bytes == 3 * MB and [b.nbytes for b in w.pool.values()] == [3 * MB]
    w._recycle(np.empty(4 * MB // 8))  # over the share: not kept
    assert w.pool_bytes == 3 * MB
    assert store.pool_share(16 << 30, 2) == 1 << 30
    assert store.pool_share(16 << 30, 16) == 128 << 20


def test_starting_a_trace_empties_the_pool_and_keeps_the_share():
    """(a kernel taking a block pooled before the trace would allocate nothing it sees)"""
    w = W.Worker(0)
    w.run([Pool(3 * MB)])
    w._recycle(np.empty(2 * MB // 8))
    assert w.pool_bytes == 2 * MB
    try:
        w.run([Trace(True)])
    finally:
        w.run([Trace(False)])
    assert w.pool_bytes == 0 and not w.pool and w.pool_max == 3 * MB
    w._recycle(np.empty(2 * MB // 8))  # pooled again, under the share
    assert w.pool_bytes == 2 * MB


def test_take_lends_the_best_fit_pools_the_rest_and_gets_the_loan_back_when_its_views_die():
    w = W.Worker(0)
    for n in (5 * MB, MB, 4 * MB):
        w._recycle(_block(n))
    mid, big = _addrs(w)[4 * MB], _addrs(w)[5 * MB]
    a = w._take((MB // 4,), np.float64)  # 2 MiB: the 4 MiB block is the best fit
    assert a.shape == (MB // 4,) and a.dtype == np.float64 and a.flags.c_contiguous
    assert a.ctypes.data == mid  # its leading bytes; its other 2 MiB are pooled on their own
    assert _sizes(w) == [5 * MB, MB, 2 * MB] and w.pool_bytes == 8 * MB
    b = w._take((MB // 4,), np.float64)  # that rest, exactly
    assert b.ctypes.data == mid + 2 * MB and _sizes(w) == [5 * MB, MB]
    part = a[10:].reshape(-1, 2)  # a view of the loan outlives it
    del a
    # while a view lives its bytes stay out of the pool (never lent twice): the same
    # request takes the next fit, the 5 MiB block's first 2 MiB (its last 3 pooled)
    c = w._take((2 * MB,), np.uint8)
    assert c.ctypes.data == big and _sizes(w) == [MB, 3 * MB]
    assert w._take((MB // 4 - 8,), np.uint8) is None  # every block is over 4 times that
    del part  # the last view of the first loan: it comes back at the pool's next call
    d = w._take((MB // 8, 2), np.float64)
    assert d.ctypes.data == mid and _sizes(w) == [MB, 3 * MB]
    del b, c, d
    w._recycle(None)
    assert sorted(_sizes(w)) == [MB, 2 * MB, 2 * MB, 2 * MB, 3 * MB] and w.pool_bytes == 10 * MB


def test_a_loan_is_the_blocks_leading_bytes_and_an_exact_block_is_handed_out_itself():
    w = W.Worker(0)
    w._recycle(np.empty((MB // 8, 4)))
    exact = _addrs(w)[4 * MB]
    got = w._take((MB // 8, 4), np.float64)
    assert got.ctypes.data == exact and got.flags.owndata and not w.pool
    got[:] = 7.0
    w.store[9] = got
    del got
    w.run([Free([9])])  # its own memory, freed: pooled again
    loan = w._take((MB, 3), np.dtype("|b1"))  # 3 MiB of the 4
    assert loan.ctypes.data == exact and not loan.flags.owndata
    loan[:] = False  # writes land in the block: its first 3 MiB zeroed, the rest kept
    del loan
    w._recycle(None)
    parts = {b.ctypes.data - exact: b for b in w.pool.values()}  # the loan, and the rest
    assert sorted(parts) == [0, 3 * MB] and w.pool_bytes == 4 * MB
    assert not parts[0].any() and (parts[3 * MB].view(np.float64) == 7.0).all()


def test_a_kernels_output_in_a_lent_block_is_exact_and_the_block_returns_on_free():
    w = W.Worker(0)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(MB // 4), rng.standard_normal(MB // 4)  # 2 MiB each
    w.store[1], w.store[2] = x, y
    w._recycle(_block(3 * MB))
    blk = _addrs(w)[3 * MB]
    add = Kernel("add", (Key(1, None), Key(2, None)), (3,), {"out": "<f8"}, None, False)
    w.run([add])
    assert w.store[3].ctypes.data == blk and _sizes(w) == [MB]  # into the loan; the rest pooled
    assert w.store[3].tobytes() == np.add(x, y).tobytes()
    w.run([add._replace(outs=(4,))])  # the block is lent: a fresh one
    assert w.store[4].ctypes.data != blk
    view = w.store[3][5:]
    w.run([Free([3, 4])])
    assert _sizes(w) == [MB, 2 * MB]  # `4`'s own block; the loan lives on in `view`
    del view
    w._recycle(None)
    assert _sizes(w) == [MB, 2 * MB, 2 * MB]
    assert list(w.pool.values())[-1].ctypes.data == blk  # back


def _loans(seed=0):
    """An ``alloc`` lending the leading bytes of larger blocks full of noise, and the list of
    what it lent."""
    rng, lent = np.random.default_rng(seed), []

    def alloc(shape, dtype):
        need = int(np.prod(shape)) * np.dtype(dtype).itemsize
        block = rng.integers(0, 256, need + 64, dtype=np.uint8)
        lent.append(np.asarray(store.Lease(block, need, [])).view(dtype).reshape(shape))
        return lent[-1]

    return alloc, lent


def test_large_outputs_of_reductions_powers_and_casts_go_into_loans_bit_identical():
    from sharded.core.registry import KERNELS

    rng = np.random.default_rng(1)
    x = rng.standard_normal((2000, 40, 3)) * 50
    cases = [
        ("reduce_chunk", (x, "sum", -1), {"squeeze": (2,)}),
        ("reduce_chunk", (x.astype(np.float32), "sum", (2,)), {"dtype": "<f8"}),
        ("reduce_chunk", (x.astype(np.int8), "sum", 2), {}),  # int64, as NumPy's
        ("reduce_chunk", (x.transpose(2, 1, 0), "max", 0), {}),
        ("reduce_chunk", (x > 0, "any", 2), {}),
        ("arg_chunk", (x.reshape(-1, 3), "min", 1, (0, 3), (160000, 6)), {"squeeze": (1,)}),
        ("pow", (x, 2), {"cast": "<f8", "out": "<f8"}),
        (
            "pow",
            (abs(x).astype(np.float32), np.float32([0.5, 1.5, 3])),
            {"cast": "<f4", "out": "<f4"},
        ),
        ("astype", (x.transpose(1, 0, 2),), {"out": "<f4"}),
        ("astype", (x,), {"out": "|b1"}),
        ("where", (x > 0, x, -0.0), {"out": "<f8"}),  # (a scalar; -0.0 stays -0.0)
        ("where", (x[..., :1] > 0, x.astype(np.float32), np.float32(2.5)), {"out": "<f4"}),
        ("contiguous", (x.transpose(2, 0, 1),), {}),
    ]
    for name, args, params in cases:
        want = KERNELS[name](np, *args, **params)
        alloc, lent = _loans()
        got = KERNELS[name](np, *args, alloc=alloc, **params)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        assert lent and got[-1].ctypes.data == lent[-1].ctypes.data, name  # into the loan
        for a, b in zip(want, got):
            assert (a.dtype, a.shape) == (b.dtype, b.shape), name
            assert np.ascontiguousarray(a).tobytes() == b.tobytes(), name


def test_a_convolutions_output_goes_into_a_loan_bit_identical():
    """(Richardson-Lucy frees its convolutions' outputs each iteration: made in fresh
    memory, they filled the pool with blocks no kernel asked for, 117 MB a call)"""
    from sharded.ops.nnops.kernels import conv_forward

    rng = np.random.default_rng(2)
    xpad, w = rng.standard_normal((1, 1, 300, 260)), rng.standard_normal((2, 1, 5, 5))
    want = conv_forward(np, xpad, w, (1, 1), (1, 1), 1, (296, 256))
    alloc, lent = _loans()
    got = conv_forward(np, xpad, w, (1, 1), (1, 1), 1, (296, 256), alloc)
    assert got.ctypes.data == lent[-1].ctypes.data and got.tobytes() == want.tobytes()


def test_an_evicted_part_of_a_lent_block_gives_its_pages_back(monkeypatch):
    monkeypatch.setattr(store, "POOL_MAX_BYTES", 8 * MB)
    w = W.Worker(0)
    w._recycle(np.full(8 * MB, 7, np.uint8))
    a = w._take((2 * MB,), np.uint8)  # the rest, 6 MiB, pooled on its own
    lease = a
    while isinstance(lease, np.ndarray):
        lease = lease.base
    owner = lease.block.base  # (the loan's part of the block, then the block)
    assert owner.nbytes == 8 * MB and _sizes(w) == [6 * MB]
    w._recycle(_block(4 * MB))  # past the cap: the rest leaves the pool, and its memory
    assert _sizes(w) == [4 * MB]
    assert (a == 7).all()  # the loan is untouched
    assert not owner[2 * MB + 4096 : -4096].any()  # its whole pages read as zeros (Linux)


def test_a_traced_batch_counts_the_blocks_it_received_mapped():
    """Ray hands a large received array over mapped from its object store (a read-only view
    of memory NumPy did not allocate), which the trace does not see: the worker adds it to
    the peak of the batch that holds it (``run_mapped``), and a batch after keeps it."""
    w = W.Worker(0)
    got = np.frombuffer(bytes(4 * MB), np.float64)  # (made before the trace starts)
    try:
        w.run([Trace(True, True)])
        w.run_mapped([Kernel("neg", (Ref(0),), (1,), {}, None, False)], (got,))
        w.run([Free((1,))])
        w.run_mapped([Kernel("neg", (Key(1),), (2,), {}, None, False)], ())  # (poisoned)
        peak = w.stats()["traced_peak_bytes"]
        # the received block and the output; the slack is the process's other allocations
        # while tracing (the trace sees every thread's, not only this worker's)
        assert 8 * MB <= peak < 9 * MB
        w.run([Trace(True, True)])  # a new trace starts from zero
        assert w.stats()["traced_peak_bytes"] < MB
    finally:
        w.run([Trace(False)])
