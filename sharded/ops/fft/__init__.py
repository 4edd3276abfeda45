"""Discrete Fourier transforms (``st.fft`` is :mod:`sharded.fft`).

- ``prims``: the ``fft1`` primitive (one dim, the split one included) and its planners;
- ``kernels``: the worker kernels of Bluestein's chirp-z transform (prime lengths);
- ``derived``: ``transforms`` (torch's ``fft``, ``rfft``, ``fft2``, ``fftn``..., ``fftfreq``,
  ``fftshift``) and ``stft`` (``stft``/``istft``: framing, windows and 1-D transforms).

The transforms live in the ``st.fft`` namespace only; ``__all__`` names the top-level
short-time transforms ``stft`` and ``istft`` (also tensor methods, as torch's).
"""

from . import prims  # noqa: F401  (registers its primitives)
from .derived import stft as _stft
from .derived import transforms  # noqa: F401  (registers its primitives)
from .derived.stft import *  # noqa: F403

__all__ = [*_stft.__all__]
