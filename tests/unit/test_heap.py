"""The worker's C heap setting (:mod:`sharded.runtime.heap`): set where glibc has
``mallopt``, a no-op elsewhere; either way arrays still allocate and free."""

import sys

import numpy as np

from sharded.runtime.heap import keep_freed_memory


def test_keep_freed_memory_is_set_on_linux_and_harmless():
    ok = keep_freed_memory(1 << 28)
    assert isinstance(ok, bool)
    if sys.platform.startswith("linux") and "gnu" in sys.implementation._multiarch:
        assert ok
    a = np.ones(5_000_000)  # 40 MB: from the heap now, not a fresh mapping
    del a
    assert np.ones(5_000_000).sum() == 5_000_000
