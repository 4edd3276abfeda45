"""The functions of ``st.signal.windows`` (:mod:`sharded.signal.windows`), as
``torch.signal.windows``: ``linspace`` and elementwise ops in the window's dtype (float32 or
float64), so each shard is made where it lives.

Every window of ``M`` samples is symmetric by default (``sym=True``); ``sym=False`` gives
the periodic window (the first ``M`` of ``M + 1`` samples, for spectral analysis). The
creation keywords are those of :func:`sharded.linspace`. Unlike torch's (a result of the
ops that made it), a window with ``requires_grad=True`` is a leaf, whose ``.grad`` fills.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .... import dtypes as D
from ....errors import ArgumentError, ArgumentTypeError, ShapeError
from ..prims import linspace
from .windows import finish, trivial

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _start(name, M, dtype):
    """torch's checks of every window: ``M`` a non-negative int, a float32/64 dtype."""
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)):
        raise ArgumentTypeError(f"{name}: M must be an int, got {type(M).__name__} ({M!r})")
    if M < 0:
        raise ShapeError(f"{name} requires non-negative window length, got M={M}")
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if dt not in (D.float32, D.float64):  # torch: ValueError, as ArgumentError is
        raise ArgumentError(f"{name} expects float32 or float64 dtypes, got: {dt.name}")
    return int(M), dt


def _points(M, first, step, dt, place):
    """``first, first + step, ...``: ``M`` points, as torch's ``linspace`` of the window."""
    return linspace(first, first + (M - 1) * step, M, dtype=dt, **place)


def _place(shards, dim, layout, device):
    return dict(shards=shards, dim=dim, layout=layout, device=device)


def _span(M, sym):
    """The ``N`` of a symmetric window's formulas (``M - 1``), periodic: ``M``."""
    return M if not sym and M > 1 else M - 1


def exponential(
    M,
    *,
    center=None,
    tau=1.0,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Exponential (Poisson) window ``exp(-|n - center| / tau)``; ``center`` (periodic
    windows only) defaults to the middle.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.exponential(3).tolist()]
    [0.3679, 1.0, 0.3679]
    """
    M, dt = _start("exponential", M, dtype)
    if tau <= 0:
        raise ArgumentError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ArgumentError(f"Center must be None for symmetric windows, got center={center}")
    place = _place(shards, dim, layout, device)
    if M == 0:
        return trivial(0, dt, place, requires_grad)
    c = _span(M, sym) / 2.0 if center is None else center
    k = _points(M, -c / tau, 1 / tau, dt, place)
    return finish(k.abs().neg().exp(), requires_grad)


def cosine(
    M,
    *,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Cosine (sine) window ``sin(pi (n + 0.5) / M)`` (periodic: ``M + 1``).

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.cosine(3).tolist()]
    [0.5, 1.0, 0.5]
    """
    M, dt = _start("cosine", M, dtype)
    place = _place(shards, dim, layout, device)
    if M == 0:
        return trivial(0, dt, place, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return finish(_points(M, 0.5 * step, step, dt, place).sin(), requires_grad)


def gaussian(
    M,
    *,
    std=1.0,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Gaussian window ``exp(-(n - c)^2 / (2 std^2))`` centred in the window.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.gaussian(3).tolist()]
    [0.6065, 1.0, 0.6065]
    """
    M, dt = _start("gaussian", M, dtype)
    if std <= 0:
        raise ArgumentError(f"Standard deviation must be positive, got: {std} instead.")
    place = _place(shards, dim, layout, device)
    if M == 0:
        return trivial(0, dt, place, requires_grad)
    scale = 1 / (std * math.sqrt(2))
    k = _points(M, -_span(M, sym) / 2.0 * scale, scale, dt, place)
    return finish((-(k * k)).exp(), requires_grad)


def kaiser(
    M,
    *,
    beta=12.0,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Kaiser window ``I0(sqrt(beta^2 - k^2)) / I0(beta)``, ``k`` from ``-beta`` to ``beta``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.kaiser(3, beta=2.0).tolist()]
    [0.4387, 1.0, 0.4387]
    """
    M, dt = _start("kaiser", M, dtype)
    if beta < 0:
        raise ArgumentError(f"beta must be non-negative, got: {beta} instead.")
    place = _place(shards, dim, layout, device)
    w = trivial(M, dt, place, requires_grad)
    if w is not None:
        return w
    beta = float(np.dtype(dt.np).type(beta))  # torch rounds beta to the dtype first
    step = 2.0 * beta / (M if not sym else M - 1)
    k = linspace(-beta, min(beta, -beta + (M - 1) * step), M, dtype=dt, **place)
    return finish((beta * beta - k * k).sqrt().i0() / float(np.i0(beta)), requires_grad)


def general_cosine(
    M,
    *,
    a,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Generalised cosine window ``sum_i (-1)^i a[i] cos(2 pi i n / N)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.signal.windows.general_cosine(3, a=[0.5, 0.5]).tolist()
    [0.0, 1.0, 0.0]
    """
    M, dt = _start("general_cosine", M, dtype)
    place = _place(shards, dim, layout, device)
    w = trivial(M, dt, place, requires_grad)
    if w is not None:
        return w
    if not isinstance(a, Iterable):
        raise ArgumentTypeError(f"Coefficients must be a list/tuple, got {type(a).__name__}")
    a = list(a)
    if not a:
        raise ArgumentError("Coefficients cannot be empty")
    k = _points(M, 0.0, 2 * math.pi / (M if not sym else M - 1), dt, place)
    out = None
    for i, c in enumerate(a):
        term = (k * float(i)).cos() * ((-1) ** i * c)
        out = term if out is None else out + term
    return finish(out, requires_grad)


def general_hamming(
    M,
    *,
    alpha=0.54,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Generalised Hamming window ``alpha - (1 - alpha) cos(2 pi n / N)``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.general_hamming(3, alpha=0.6).tolist()]
    [0.2, 1.0, 0.2]
    """
    return general_cosine(
        M,
        a=[alpha, 1.0 - alpha],
        sym=sym,
        dtype=dtype,
        shards=shards,
        dim=dim,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def hamming(
    M,
    *,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Hamming window ``0.54 - 0.46 cos(2 pi n / N)``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.hamming(3).tolist()]
    [0.08, 1.0, 0.08]
    """
    return general_hamming(
        M,
        sym=sym,
        dtype=dtype,
        shards=shards,
        dim=dim,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def hann(
    M,
    *,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Hann window ``0.5 - 0.5 cos(2 pi n / N)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.signal.windows.hann(5).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    return general_hamming(
        M,
        alpha=0.5,
        sym=sym,
        dtype=dtype,
        shards=shards,
        dim=dim,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def blackman(
    M,
    *,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Blackman window: :func:`general_cosine` with ``a = [0.42, 0.5, 0.08]``.

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.blackman(5).tolist()]
    [-0.0, 0.34, 1.0, 0.34, -0.0]
    """
    _start("blackman", M, dtype)  # torch checks under this name first
    return general_cosine(
        M,
        a=[0.42, 0.5, 0.08],
        sym=sym,
        dtype=dtype,
        shards=shards,
        dim=dim,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def bartlett(
    M,
    *,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Bartlett (triangular) window ``1 - |2 n / N - 1|``.

    Examples
    --------
    >>> import sharded as st
    >>> st.signal.windows.bartlett(5).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    M, dt = _start("bartlett", M, dtype)
    place = _place(shards, dim, layout, device)
    w = trivial(M, dt, place, requires_grad)
    if w is not None:
        return w
    k = _points(M, -1.0, 2 / (M if not sym else M - 1), dt, place)
    return finish(1 - k.abs(), requires_grad)


def nuttall(
    M,
    *,
    sym=True,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Nuttall's minimum 4-term Blackman-Harris window (:func:`general_cosine`).

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 4) for v in st.signal.windows.nuttall(3).tolist()]
    [0.0004, 1.0, 0.0004]
    """
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        shards=shards,
        dim=dim,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
