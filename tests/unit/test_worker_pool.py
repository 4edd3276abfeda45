"""The worker's pool of freed blocks: best fit, lending a larger block's leading bytes, and
never lending a block twice while a view of it lives."""

import numpy as np

import sharded  # noqa: F401  (fills the kernel table the workers run from)
from sharded.runtime.commands import Free, Kernel, Key, Pool
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


def test_take_lends_the_best_fitting_larger_block_and_gets_it_back_when_its_views_die():
    w = W.Worker(0)
    for n in (5 * MB, MB, 3 * MB):
        w._recycle(_block(n))
    mid, big = _addrs(w)[3 * MB], _addrs(w)[5 * MB]
    a = w._take((MB // 4,), np.float64)  # 2 MiB: the 3 MiB block is the best fit
    assert a.shape == (MB // 4,) and a.dtype == np.float64 and a.flags.c_contiguous
    assert a.ctypes.data == mid  # its leading bytes
    assert _sizes(w) == [5 * MB, MB] and w.pool_bytes == 6 * MB
    part = a[10:].reshape(-1, 2)  # a view of the loan outlives it
    del a
    # while a view lives the block stays out: the same request finds no other fit (5 MiB
    # is more than twice the bytes asked for)
    assert w._take((MB // 4,), np.float64) is None
    b = w._take((3 * MB,), np.uint8)  # the 3 MiB block is lent (never twice): the 5 MiB
    assert b.ctypes.data == big and _sizes(w) == [MB]
    del part  # the last view of the loan: the block comes back at the pool's next call
    assert w._take((MB + 1,), np.uint8) is None  # (3 MiB is more than twice 1 MiB + 1)
    assert _sizes(w) == [MB, 3 * MB]
    got = w._take((3 * MB // 2,), np.uint16)
    assert got.ctypes.data == mid and _sizes(w) == [MB]
    del b, got
    w._recycle(None)
    assert sorted(_sizes(w)) == [MB, 3 * MB, 5 * MB] and w.pool_bytes == 9 * MB


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
    (blk,) = w.pool.values()
    assert not blk.reshape(-1).view(np.uint8)[: 3 * MB].any()
    assert (blk.reshape(-1)[3 * MB // 8 :] == 7.0).all()


def test_a_kernels_output_in_a_lent_block_is_exact_and_the_block_returns_on_free():
    w = W.Worker(0)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(MB // 4), rng.standard_normal(MB // 4)  # 2 MiB each
    w.store[1], w.store[2] = x, y
    w._recycle(_block(3 * MB))
    blk = _addrs(w)[3 * MB]
    add = Kernel("add", (Key(1, None), Key(2, None)), (3,), {"out": "<f8"}, None, False)
    w.run([add])
    assert w.store[3].ctypes.data == blk and not w.pool  # written into the loan
    assert w.store[3].tobytes() == np.add(x, y).tobytes()
    w.run([add._replace(outs=(4,))])  # the block is lent: a fresh one
    assert w.store[4].ctypes.data != blk
    view = w.store[3][5:]
    w.run([Free([3, 4])])
    assert _sizes(w) == [2 * MB]  # `4`'s own block; the loan lives on in `view`
    del view
    w._recycle(None)
    assert _sizes(w) == [2 * MB, 3 * MB] and _addrs(w)[3 * MB] == blk
