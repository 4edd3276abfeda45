"""How a worker runs a batch that came over a socket (the driver's wire, a wire relay):
shared by the Ray actor's worker (:mod:`.ray_actor`) and the simulated executor's
(:mod:`.simhost`).

Examples
--------
>>> from sharded.runtime.worker.simhost import SimWorker
>>> SimWorker(3)._failed("why")
[{'op': 'batch', 'shard': None, 'worker': 3, 'cause': 'why', 'cascade': False}]
"""

from __future__ import annotations

from ..packing import from_socket_ok
from .core import Worker


class SocketBatches:
    """A mixin of a :class:`~.core.Worker` subclass whose ``_exec`` lock runs one batch
    at a time: socket batches are data records only, and one that cannot run answers with
    one error record instead of raising into the mailbox's thread."""

    def _refused(self, cmds):
        """The answer to a socket batch that is not data (None: it is)."""
        if from_socket_ok(cmds):  # a socket carries data, never a pickle to load
            return None
        return self._failed("a wire batch must be records, not pickled bytes")

    def _run_socket(self, cmds) -> list:
        """Run a socket batch under the worker's lock (its errors as records)."""
        try:
            with self._exec:
                self._tmail = None  # a batch takes partials from its mailbox only if it says so
                return Worker.run(self, cmds)
        except Exception as e:  # (Worker.run records a command's errors itself)
            return self._failed(f"{type(e).__name__}: {e}")

    def _failed(self, cause) -> list:
        """A socket batch's answer when it could not run: one error record."""
        rec = {"op": "batch", "shard": None, "worker": self.index, "cause": cause}
        return [dict(rec, cascade=False)]
