"""Ray's own floor for the driver's CPU: one plain actor call of a given wall time.

A read at 16 workers is one actor call (to a relay) and one ``ray.get``, yet the driver's
CPU for it (``time.process_time``: every thread of the process) is ~1 ms, because Ray's
core-worker threads spend CPU while the driver waits for a reply, and more the longer the
wait. ``call_floor`` measures that cost with no sharded code in the way: an actor that only
sleeps, called from the driver, so ``sharded bench --scaling`` can print next to each read
what a single Ray call of the same duration costs. Kept in the runtime because it imports
Ray (the only package that may).
"""

from __future__ import annotations

import math
import time

import ray


class Sleeper:
    """An actor that answers after ``s`` seconds with a small value.

    Examples
    --------
    >>> actor = SleeperActor.remote()  # doctest: +SKIP
    >>> ray.get(actor.sleep.remote(0.001))  # doctest: +SKIP
    0
    """

    def sleep(self, s: float) -> int:
        """Sleep ``s`` seconds, then return 0 (a small reply: no object-store transfer)."""
        time.sleep(s)
        return 0


# no CPU reserved: the session's workers hold every CPU, and the probe must not wait for one
SleeperActor = ray.remote(num_cpus=0)(Sleeper)


def call_floor(wall_s: float, repeat: int = 10) -> float:
    """Driver CPU seconds (``time.process_time``, Ray's threads included) of one actor call
    whose reply comes after ``wall_s`` seconds: the minimum over ``repeat`` calls.

    Uses the live Ray connection (an ``st.init(executor="ray")`` session): one actor is
    started for the call of this function and killed at its end.

    Parameters
    ----------
    wall_s : float
        How long the actor sleeps before it replies (e.g. the median wall of a read).
    repeat : int
        Timed calls; the smallest CPU time is returned, as other jobs on the machine only
        ever add to it.

    Returns
    -------
    float
        Seconds of the driver's CPU for one call plus ``ray.get`` of its reply.

    Examples
    --------
    >>> import sharded as st
    >>> _ = st.init(executor="ray", num_workers=2)  # doctest: +SKIP
    >>> 0 < call_floor(0.005, repeat=5) < 0.05  # doctest: +SKIP
    True
    >>> st.shutdown()  # doctest: +SKIP
    """
    actor = SleeperActor.remote()
    try:
        # untimed: the first waits for the actor's process to start and opens the connection
        # to it; the first timed calls after that cost the driver ~0.1 ms more
        for _ in range(3):
            ray.get(actor.sleep.remote(0.0))
        best = math.inf
        for _ in range(max(1, int(repeat))):
            c = time.process_time()
            ray.get(actor.sleep.remote(wall_s))
            best = min(best, time.process_time() - c)
    finally:
        ray.kill(actor)
    return best
