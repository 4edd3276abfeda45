"""Discrete Fourier transforms (``st.fft`` is :mod:`sharded.fft`).

- ``prims``: the ``fft1`` primitive (one dim, the split one included) and its planners;
- ``kernels``: the worker kernels of Bluestein's chirp-z transform (prime lengths);
- ``derived``: torch's ``fft``, ``rfft``, ``fft2``, ``fftn``..., ``fftfreq``, ``fftshift``.

The transforms live in the ``st.fft`` namespace only: ``__all__`` is empty.
"""

from . import (
    derived,  # noqa: F401  (registers its primitives)
    prims,  # noqa: F401  (registers its primitives)
)

__all__ = []
