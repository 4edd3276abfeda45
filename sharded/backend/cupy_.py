"""The GPU backend: CuPy arrays on one CUDA device. The only module that imports CuPy."""

from __future__ import annotations

import functools

from ..errors import BackendUnavailable


class CupyBackend:
    """Arrays on ``cuda:N``; host arrays are copied over on arrival and back on read."""

    def __init__(self, cp, index: int):
        self.xp, self.index, self.name = cp, index, f"cuda:{index}"
        cp.cuda.Device(index).use()

    def to_device(self, a):
        with self.xp.cuda.Device(self.index):
            return self.xp.asarray(a)

    def to_host(self, a):
        return self.xp.asnumpy(a) if isinstance(a, self.xp.ndarray) else a

    def synchronize(self):
        self.xp.cuda.Device(self.index).synchronize()


def special():
    """:mod:`cupyx.scipy.special`, the special functions of CuPy arrays (the kernels of
    :mod:`sharded.ops.elementwise.kernels` on a GPU)."""
    import cupyx.scipy.special

    return cupyx.scipy.special


@functools.cache
def backend(index: int) -> CupyBackend:
    """The backend of GPU ``index``; :class:`BackendUnavailable` says why it cannot exist."""
    try:
        import cupy as cp
    except ImportError as e:
        raise BackendUnavailable(
            f"device 'cuda:{index}' needs CuPy, which is not installed "
            f"here ({e}); install sharded[gpu]"
        ) from None
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA driver missing or broken
        raise BackendUnavailable(f"device 'cuda:{index}': no usable CUDA driver ({e})") from None
    if index >= n:
        raise BackendUnavailable(f"device 'cuda:{index}' does not exist: {n} GPU(s) visible")
    return CupyBackend(cp, index)
