"""``st.signal``: torch's ``torch.signal`` namespace; its one module is
:mod:`sharded.signal.windows` (the window functions of spectral analysis).

Examples
--------
>>> import sharded as st
>>> st.signal.windows.hann(3).tolist()
[0.0, 1.0, 0.0]
"""

from . import windows

__all__ = ["windows"]
