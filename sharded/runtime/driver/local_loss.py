"""What :class:`~sharded.runtime.driver.local.LocalExecutor` adds to lose and rebuild its
in-process workers (:mod:`.recovery`'s hooks), so that recovery is tested without Ray."""

from __future__ import annotations

import time
import weakref

from ..worker.core import Worker
from .recovery import Late, Lost


class LocalLoss:
    """What :class:`~sharded.runtime.driver.local.LocalExecutor` adds to recover: a way to lose a
    worker (tests), and the recovery hooks for in-process workers."""

    def lose(self, w: int, after: int = 0) -> None:
        """Make worker ``w`` die like a killed actor, now or after ``after`` more batches:
        its batches, and those that read its exports, fail with a loss (for tests).

        Examples
        --------
        >>> from sharded.runtime.driver.local import LocalExecutor
        >>> ex = LocalExecutor(2)
        >>> ex.lose(1)
        >>> ex.stats()[1]["worker"]  # rebuilt on first use
        1
        """
        if after:
            self._doom[w] = after
        else:
            self._workers[w] = None

    def stall(self, w: int, seconds: float) -> None:
        """Make each later batch of worker ``w`` take ``seconds`` to finish, as seen by a
        wait (0: no more), like a slow kernel on an actor (for tests of bounded waits).

        Examples
        --------
        >>> from sharded.runtime.driver.local import LocalExecutor
        >>> ex = LocalExecutor(2)
        >>> ex.stall(1, 0.5)
        >>> ex.timeout = 0.1
        >>> ex.submit(1, "full", (), (1,), {"shape": (2,), "value": 1.0, "dtype": "float64"})
        >>> ex.fetch([(1, 1, None)])
        Traceback (most recent call last):
        ...
        sharded.errors.WaitTimeout: waited 0.1 s for a read from sharded-worker-1 (the ...
        """
        if seconds:
            self._slow[w] = seconds
        else:
            self._slow.pop(w, None)

    def _get(self, handles, timeout=None):
        for h in handles:
            if type(h) is LostMark:
                raise Lost(f"worker {h.w} was lost")
        slow = [h for h in handles if type(h) is Slow]
        if slow:
            now = time.monotonic()
            wait = max(h.until for h in slow) - now
            if timeout is not None and wait > timeout:
                time.sleep(timeout)
                raise Late([h.w for h in slow if h.until > now + timeout], timeout)
            time.sleep(max(wait, 0.0))
        return [h.value if type(h) is Slow else h for h in handles]

    def _ready(self, handles):
        now = time.monotonic()
        return [type(h) is not Slow or h.until <= now for h in handles]

    def _settle(self, handles):
        """In process, every batch has finished already."""

    def _hkey(self, h, track=False):
        if track:  # the object's id names it only while it lives
            weakref.finalize(h, self._forget, id(h))
        return id(h)

    def _forget(self, k):
        # an id is reused once its object dies: forget it everywhere it names an export
        if self._rec is not None:
            self._rec.exp_at.pop(k, None)
            self._rec.remap.pop(k, None)

    def _dead_workers(self):
        return [w for w, x in enumerate(self._workers) if x is None]

    def _replace(self, w):
        self._workers[w] = Worker(w, self.workers[w].device, copy_exports=True)

    def _snapshot(self, w):
        worker = self._workers[w]
        return (LostMark(w), LostMark(w)) if worker is None else worker.snapshot()


class Slow:
    """A stalled in-process worker's batch result: ready ``seconds`` after dispatch."""

    __slots__ = ("w", "value", "until", "__weakref__")

    def __init__(self, w, value, seconds):
        self.w, self.value, self.until = w, value, time.monotonic() + seconds


class LostMark:
    """What a lost in-process worker returns instead of a result (like a dead actor's ref)."""

    __slots__ = ("w", "__weakref__")

    def __init__(self, w):
        self.w = w
