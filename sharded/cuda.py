"""``st.cuda``: what torch.cuda answers, for the current session's workers.

A GPU counts when a worker of the session serves it (``device="cuda:N"``); the driver's own
machine does not matter, since data never lives on the driver. Without a session there are
no workers and so no GPUs.
"""

from __future__ import annotations

from .runtime import session

__all__ = ["is_available", "device_count"]


def _gpus() -> set:
    if not session.is_initialized():
        return set()
    return {(w.node, w.device) for w in session.current().executor.workers if w.device != "cpu"}


def device_count() -> int:
    """The number of GPUs this session's workers use (distinct devices per node).

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.device_count()  # the doctest session has CPU workers only
    0
    """
    return len(_gpus())


def is_available() -> bool:
    """Whether any worker of this session holds its shards on a GPU.

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.is_available()
    False
    """
    return bool(_gpus())
