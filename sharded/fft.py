"""``st.fft``: torch's discrete Fourier transforms on sharded tensors, along any dim.

The namespace of the FFT family (:mod:`sharded.ops.fft`; the functions are defined in
:mod:`sharded.ops.fft.derived.transforms`, the distributed transforms in
:mod:`sharded.ops.fft.prims`). ``st.stft``/``st.istft`` are top-level, as torch's.
"""

from .ops.fft.derived import transforms as _derived
from .ops.fft.derived.transforms import *  # noqa: F403

__all__ = list(_derived.__all__)
