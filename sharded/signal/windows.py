"""``st.signal.windows``: torch's ``torch.signal.windows`` (``bartlett``, ``blackman``,
``cosine``, ``exponential``, ``gaussian``, ``general_cosine``, ``general_hamming``,
``hamming``, ``hann``, ``kaiser``, ``nuttall``), with the creation keywords of sharded
(``shards=``, ``dim=``, ``layout=``, ``device=``).

The functions are defined in :mod:`sharded.ops.creation.derived.signal_windows`; torch's
top-level ``hann_window``... are ``st.hann_window``...
"""

from ..ops.creation.derived import signal_windows as _windows
from ..ops.creation.derived.signal_windows import *  # noqa: F403

__all__ = list(_windows.__all__)
