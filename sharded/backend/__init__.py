"""Array backends by device: NumPy for ``cpu``, CuPy for ``cuda:N`` (imported lazily).

Kernels receive the backend's array module as ``xp``; a worker converts incoming host arrays
with :meth:`Backend.to_device` and outgoing ones with :meth:`Backend.to_host`.
"""

from __future__ import annotations

from ..errors import BackendUnavailable


def parse_device(device) -> str:
    """Canonical device string: ``"cpu"`` or ``"cuda:N"``.

    Examples
    --------
    >>> parse_device("cuda"), parse_device("cpu")
    ('cuda:0', 'cpu')
    """
    d = str(device) if device is not None else "cpu"
    if d == "cpu":
        return d
    if d == "cuda":
        return "cuda:0"
    if d.startswith("cuda:") and d[5:].isdigit():
        return d
    raise BackendUnavailable(f"unknown device {device!r}; expected 'cpu', 'cuda' or 'cuda:N'")


def special(xp):
    """The special-function module for arrays of ``xp``: :mod:`scipy.special` for NumPy,
    :mod:`cupyx.scipy.special` for CuPy.

    Examples
    --------
    >>> import numpy as np
    >>> float(special(np).erf(np.float64(0.0)))
    0.0
    """
    import numpy as np

    if xp is np:
        import scipy.special

        return scipy.special
    from . import cupy_

    return cupy_.special()


def get_backend(device):
    """The backend object for ``device`` (raises :class:`BackendUnavailable` if missing)."""
    d = parse_device(device)
    if d == "cpu":
        from . import numpy_

        return numpy_.BACKEND
    from . import cupy_

    return cupy_.backend(int(d[5:]))
