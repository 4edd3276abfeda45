"""The CPU backend: NumPy arrays in worker memory."""

from __future__ import annotations

import numpy as np


class NumpyBackend:
    """Host arrays; conversions are identity (a copy only where the caller must own the data)."""

    name = "cpu"
    xp = np

    @staticmethod
    def to_device(a):
        return np.asarray(a)

    @staticmethod
    def to_host(a):
        return a

    @staticmethod
    def synchronize():
        pass


BACKEND = NumpyBackend()
