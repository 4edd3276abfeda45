"""The FFT routines the kernels call (:func:`fft_of`), and the kernels of Bluestein's chirp-z
transform, the split 1-D FFT of a length with no useful factors (a prime): see
``_bluestein`` in :mod:`.prims`, which plans it.

With ``nk = (n^2 + k^2 - (k - n)^2) / 2``, a length-``N`` DFT is
``X[k] = c[k] * sum_n (x[n] c[n]) * conj(c[k - n])``, ``c[j] = exp(-i pi j^2 / N)``: a
convolution, done as FFTs of a length ``M >= 2N - 1`` that factors well (``2^a 3^b 5^c``),
each block computing its own chirp values from its global offset.
"""

from __future__ import annotations

import numpy as np

from ...core.registry import kernel
from ...runtime.worker import threads


def fft_of(xp):
    """``(module, keywords)``: the FFT functions for arrays of ``xp`` and the keywords every
    call takes. On the host :mod:`scipy.fft` with ``workers`` the worker's share of the
    cores (its transforms of many lines run in parallel; NumPy's FFT runs on one thread),
    on a GPU ``xp.fft``.

    Measured (the median of 5; NumPy 2.4's ``numpy.fft`` against ``scipy.fft`` 1.17 with 1
    and 2 workers, on 2 cores that other processes kept busy, load 5: so the second worker
    shows little here; the results agree to the bit, complex64 for float32 input in both):

    ======================================  ========  ==========  ==========
    transform                               NumPy     SciPy, 1    SciPy, 2
    ======================================  ========  ==========  ==========
    fft of 64 lines of 65536, axis 1        26 ms     25 ms       26 ms
    fft down 4096 x 2048 columns, axis 0    178 ms    154 ms      161 ms
    rfft of 1024 x 8192 float32             65 ms     25 ms       25 ms
    fft of one line of 2^22                 329 ms    247 ms      199 ms
    ======================================  ========  ==========  ==========

    Examples
    --------
    >>> mod, kw = fft_of(np)
    >>> mod.fft(np.ones(4), **kw).real.tolist()
    [4.0, 0.0, 0.0, 0.0]
    """
    if xp is np:
        import scipy.fft

        return scipy.fft, {"workers": threads.cpu_share()}
    return xp.fft, {}


def _chirp(xp, j, n, sign, dtype):
    """``exp(sign * i pi j^2 / n)`` for int64 ``j``: ``j^2`` is reduced mod ``2n`` first (the
    chirp's period), so the angle stays exact however long the line (``j < 3e9``)."""
    q = (j * j) % (2 * n)
    return xp.asarray(np.exp((sign * np.pi / n) * 1j * q).astype(dtype))


def _span(first, count):
    return np.arange(first, first + count, dtype=np.int64)


@kernel
def chirp_in(xp, a, *, first, size, n, cast, conj):
    """``x * c`` of a block starting at ``first``, zero padded to ``size`` elements."""
    a = a.astype(cast, copy=False)
    if conj:
        a = xp.conj(a)
    out = xp.zeros(size, dtype=cast)
    out[: a.size] = a * _chirp(xp, _span(first, a.size), n, -1, cast)
    return out


@kernel
def chirp_filter(xp, *, first, count, n, m, dtype):
    """Elements ``[first, first + count)`` of the length-``m`` filter ``conj(c[j])`` for
    ``j < n``, ``conj(c[m - j])`` for ``j > m - n`` (the negative lags, wrapped), else 0."""
    j = _span(first, count)
    d = np.where(j < n, j, m - j)
    out = _chirp(xp, d, n, 1, dtype)
    out[xp.asarray((j >= n) & (j <= m - n))] = 0
    return out


@kernel
def chirp_mul(xp, a, b):
    """The pointwise product of two spectra (``a`` is a temporary: overwritten)."""
    return xp.multiply(a, b, out=a) if a.flags.writeable else a * b


@kernel
def chirp_head(xp, a, *, keep):
    return xp.ascontiguousarray(a[:keep])


@kernel
def chirp_out(xp, a, *, first, n, scale, conj_out, real_out, dtype):
    """``c[k] * conv[k]`` of a block starting at ``first``, scaled, conjugated or real."""
    r = a * _chirp(xp, _span(first, a.size), n, -1, a.dtype)
    if scale != 1.0:
        r *= scale
    if conj_out:
        r = xp.conj(r, out=r)
    if real_out:
        r = r.real
    return xp.ascontiguousarray(r.astype(dtype, copy=False))
