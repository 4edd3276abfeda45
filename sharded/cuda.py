"""``st.cuda``: what torch.cuda answers, for the current session's workers.

A GPU counts when a worker of the session serves it (``device="cuda:N"``); the driver's own
machine does not matter, since data never lives on the driver. Without a session there are
no workers and so no GPUs.
"""

from __future__ import annotations

from .runtime.driver import session

__all__ = [
    "is_available",
    "device_count",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "empty_cache",
]


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


def is_initialized() -> bool:
    """Whether a GPU is in use by this session (torch: whether CUDA was initialised).

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.is_initialized()
    False
    """
    return bool(_gpus())


def manual_seed(seed: int) -> None:
    """Accepted for torch scripts and does nothing, as torch's without a GPU: GPU workers draw
    from the one counter-based generator that :func:`sharded.manual_seed` seeds.

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.manual_seed(0)
    """
    int(seed)  # torch converts it too: a non-number is a TypeError


def manual_seed_all(seed: int) -> None:
    """Like :func:`manual_seed` (nothing to do: see there).

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.manual_seed_all(0)
    """
    int(seed)


def seed() -> None:
    """Nothing to do, as :func:`manual_seed` (torch's lazy CUDA seeding).

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.seed()
    """


def seed_all() -> None:
    """Nothing to do, as :func:`manual_seed`.

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.seed_all()
    """


def empty_cache() -> None:
    """Nothing to do: GPU workers free a shard's memory when the tensor is dropped.

    Examples
    --------
    >>> import sharded as st
    >>> st.cuda.empty_cache()
    """
