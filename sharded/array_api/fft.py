"""The ``fft`` extension of the Array API namespace, over :mod:`sharded.fft` (the functions of
:mod:`sharded.ops.fft.derived.transforms`).

The standard's names take ``axis``/``axes`` and ``norm="backward"`` where sharded's take
torch's ``dim`` and ``norm=None``.
"""

from __future__ import annotations

from ..ops.fft.derived import transforms as _F


def _one(name):
    def fn(x, /, *, n=None, axis=-1, norm="backward"):
        return getattr(_F, name)(x, n, axis, norm)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""``{name}`` of ``x`` along ``axis`` (length ``n``), as ``numpy.fft.{name}``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.fft.{name}(xp.ones(4)).shape[0] > 0
    True
    """
    return fn


def _many(name):
    def fn(x, /, *, s=None, axes=None, norm="backward"):
        return getattr(_F, name)(x, s, axes, norm)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""``{name}`` of ``x`` over ``axes`` (lengths ``s``), as ``numpy.fft.{name}``.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.fft.{name}(xp.ones((2, 2))).ndim
    2
    """
    return fn


fft, ifft, rfft, irfft, hfft, ihfft = map(_one, ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = map(_many, ("fftn", "ifftn", "rfftn", "irfftn"))


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of an ``n``-point transform.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.fft.fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return _F.fftfreq(n, d, dtype=dtype, device=device or "cpu")


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of ``rfft``'s ``n // 2 + 1`` bins.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    return _F.rfftfreq(n, d, dtype=dtype, device=device or "cpu")


def fftshift(x, /, *, axes=None):
    """Zero frequency moved to the middle of ``axes`` (default: every axis).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.fft.fftshift(xp.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _F.fftshift(x, axes)


def ifftshift(x, /, *, axes=None):
    """Inverse of :func:`fftshift`.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> xp.fft.ifftshift(xp.fft.fftshift(xp.fft.fftfreq(4))).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return _F.ifftshift(x, axes)


__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip
