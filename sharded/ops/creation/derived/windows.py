"""torch's window functions ``hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window`` and ``kaiser_window``, composed of ``arange`` and elementwise ops in the
window's dtype (as torch computes them), so each shard is made where it lives and the values
never depend on the layout.

A ``periodic`` window of length ``L`` is the symmetric window of length ``L + 1`` without
its last sample (for ``stft``); every function takes the creation keywords ``dtype=``
(floating only), ``shards=``, ``dim=``, ``layout=``, ``device=`` and ``requires_grad=``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .... import dtypes as D
from ....errors import ArgumentTypeError, DTypeError, ShapeError
from ..prims import arange, empty, ones

__all__ = [
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
]


def _length(name, n, what="window_length"):
    """``n`` checked as a window length: an int (not a bool) and not negative."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ArgumentTypeError(f"{name}(): argument '{what}' must be int, not {type(n).__name__}")
    if n < 0:
        raise ShapeError(f"{name} requires non-negative {what}, got {what}={n}")
    return int(n)


def _float_dtype(name, dtype):
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if not dt.is_floating_point:
        raise DTypeError(f"{name} expects floating point dtypes, got: {dt.name}")
    return dt


def trivial(n, dt, place, requires_grad):
    """The windows of 0 and 1 samples (empty, and ``[1.0]``), or ``None`` for longer ones."""
    if n > 1:
        return None
    make = empty if n == 0 else ones
    return make(n, dtype=dt, requires_grad=requires_grad, **place)


def finish(w, requires_grad):
    """The window as a leaf (``requires_grad=True``: one that records its uses)."""
    return w.requires_grad_(True) if requires_grad else w


def _window(name, n, periodic, dtype, place, requires_grad, values):
    """``values(i, N)``: the window of ``N`` samples at the indices ``i`` (``arange(n)`` in
    the dtype); a periodic window is the first ``n`` of ``n + 1`` samples."""
    n = _length(name, n)
    dt = _float_dtype(name, dtype)
    w = trivial(n, dt, place, requires_grad)
    if w is not None:
        return w
    i = arange(n, dtype=dt, **place)
    return finish(values(i, n + 1 if periodic else n), requires_grad)


def hann_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` of ``window_length`` samples
    (``periodic``: ``N = window_length + 1``), as ``torch.hann_window``.

    Examples
    --------
    >>> import sharded as st
    >>> st.hann_window(4).tolist()
    [0.0, 0.5, 1.0, 0.5]
    """
    place = dict(shards=shards, dim=dim, layout=layout, device=device)
    return _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        place,
        requires_grad,
        lambda i, n: _cosine_sum(i, n, 0.5, 0.5),
    )


def _cosine_sum(i, n, alpha, beta):
    """torch's order of operations: ``alpha - beta cos(i * 2 pi / (n - 1))``."""
    return (i * (math.pi * 2.0 / (n - 1))).cos() * -beta + alpha


def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` of ``window_length`` samples
    (``periodic``: ``N = window_length + 1``), as ``torch.hamming_window``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.hamming_window(4, dtype=st.float64).tolist()]
    [0.08, 0.54, 1.0, 0.54]
    """
    place = dict(shards=shards, dim=dim, layout=layout, device=device)
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        place,
        requires_grad,
        lambda i, n: _cosine_sum(i, n, alpha, beta),
    )


def blackman_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``, as
    ``torch.blackman_window``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.blackman_window(4, dtype=st.float64).tolist()]
    [0.0, 0.34, 1.0, 0.34]
    """

    def values(i, n):
        a = i * (math.pi / (n - 1))
        return (a * 4).cos() * 0.08 - (a * 2).cos() * 0.5 + 0.42

    place = dict(shards=shards, dim=dim, layout=layout, device=device)
    return _window("blackman_window", window_length, periodic, dtype, place, requires_grad, values)


def bartlett_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Bartlett (triangular) window ``1 - |2 n / (N - 1) - 1|``, as
    ``torch.bartlett_window``.

    Examples
    --------
    >>> import sharded as st
    >>> st.bartlett_window(4).tolist()
    [0.0, 0.5, 1.0, 0.5]
    """

    def values(i, n):
        up = i * (2.0 / (n - 1))
        return up.where(i < ((n - 1) >> 1) + 1, 2 - up)  # the second half: 2 - up

    place = dict(shards=shards, dim=dim, layout=layout, device=device)
    return _window("bartlett_window", window_length, periodic, dtype, place, requires_grad, values)


def kaiser_window(
    window_length,
    periodic=True,
    beta=12.0,
    *,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Kaiser window ``I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)`` with ``N`` the
    window length less one (``periodic``: the length), as ``torch.kaiser_window``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.kaiser_window(3, False, 2.0, dtype=st.float64).tolist()]
    [0.4387, 1.0, 0.4387]
    """

    def values(i, n):
        half = (n - 1) / 2.0
        r = (i - half) / half
        return ((1 - r * r).sqrt() * beta).i0() / float(np.i0(beta))

    place = dict(shards=shards, dim=dim, layout=layout, device=device)
    return _window("kaiser_window", window_length, periodic, dtype, place, requires_grad, values)
