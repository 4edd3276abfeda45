from sharded.tensor import ShardedTensor

def fft(input, n=..., dim=..., norm=...) -> ShardedTensor:
    """Discrete Fourier transform along ``dim`` (``n``: pad with zeros or cut first)."""

def fft2(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """2-D transform over the last two dims (or ``dim``)."""

def fftfreq(
    n, d=..., *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Sample frequencies of an ``n``-point transform with sample spacing ``d``."""

def fftn(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """N-dimensional transform over ``dim`` (default: every dim, or the last ``len(s)``)."""

def fftshift(input, dim=...) -> ShardedTensor:
    """Rotate the zero frequency to the middle of ``dim`` (default: every dim)."""

def hfft(input, n=..., dim=..., norm=...) -> ShardedTensor:
    """Transform of a Hermitian-symmetric signal given by its first half: a real spectrum of
    length ``n`` (default ``2 * (m - 1)``); ``irfft`` of the conjugate, unscaled by default."""

def hfft2(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """2-D :func:`hfftn` over the last two dims (or ``dim``)."""

def hfftn(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """N-dimensional :func:`hfft`: the real spectrum of a Hermitian-symmetric signal given by
    its half along the last of ``dim`` (length ``s[-1]``, default ``2 * (m - 1)``); ``fft``
    over the other dims, then ``hfft`` over the last (torch's order)."""

def ifft(input, n=..., dim=..., norm=...) -> ShardedTensor:
    """Inverse discrete Fourier transform along ``dim`` (scaled by ``1/n`` by default)."""

def ifft2(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """2-D inverse transform over the last two dims (or ``dim``)."""

def ifftn(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """N-dimensional inverse transform over ``dim``."""

def ifftshift(input, dim=...) -> ShardedTensor:
    """Inverse of :func:`fftshift`."""

def ihfft(input, n=..., dim=..., norm=...) -> ShardedTensor:
    """Inverse of :func:`hfft`: the first ``n // 2 + 1`` bins of the inverse transform of a real
    signal."""

def ihfft2(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """2-D :func:`ihfftn` over the last two dims (or ``dim``)."""

def ihfftn(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """N-dimensional :func:`ihfft` of a real input: ``ihfft`` over the last of ``dim`` (the ``n
    // 2 + 1`` non-negative frequencies), then ``ifft`` over the others."""

def irfft(input, n=..., dim=..., norm=...) -> ShardedTensor:
    """Inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``) from its
    non-negative frequencies (the imaginary parts of bin 0 and, for even ``n``, of bin ``n /
    2`` are ignored)."""

def irfft2(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """Inverse of :func:`rfft2`."""

def irfftn(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """Inverse of :func:`rfftn`: ``ifft`` over all but the last of ``dim``, then ``irfft``
    (length ``s[-1]``, default ``2 * (m - 1)``) over the last."""

def rfft(input, n=..., dim=..., norm=...) -> ShardedTensor:
    """Transform of a real signal: the ``n // 2 + 1`` non-negative frequencies."""

def rfft2(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """2-D transform of a real input over the last two dims (or ``dim``)."""

def rfftfreq(
    n, d=..., *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """Sample frequencies of :func:`rfft`'s ``n // 2 + 1`` bins."""

def rfftn(input, s=..., dim=..., norm=...) -> ShardedTensor:
    """N-dimensional transform of a real input: ``rfft`` over the last of ``dim``, ``fft`` over
    the others."""
