"""``st.fft``: torch's discrete Fourier transforms on sharded tensors, along any dim.

Along a dim that every shard holds whole the transforms are local; along a split dim the
data is transposed worker to worker (never gathered on the driver) to a layout where the dim
is whole, transformed, and transposed back: the result keeps the input's cuts, and a dim whose
length changes (``n=``, ``rfft``'s ``n // 2 + 1``) is cut evenly into the same number of
chunks. n-D transforms are 1-D transforms dim after dim. See :mod:`sharded.ops.fft.prims`.

Names, signatures and dtypes follow ``torch.fft``: ``norm`` is ``"backward"`` (default),
``"forward"`` or ``"ortho"``; float32 gives complex64, float64 complex128, integers the
default complex; ``irfft``/``hfft`` give real results; ``rfft``/``ihfft`` refuse complex input.
"""

from __future__ import annotations

import numbers

import numpy as np

from .... import dtypes as D
from ....core.dispatch import apply, as_tensor, is_tensor, placement
from ....errors import ArgumentError, DimError, DTypeError
from ....layout import normalize_dim
from ..prims import NORMS, transform

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# --------------------------------------------------------------------- argument checks
def _input(x, name, real=False, scalar_ok=False):
    x = x if is_tensor(x) else as_tensor(x)
    if x.dtype in (D.float16, D.bfloat16):
        raise DTypeError(f"{name}: unsupported dtype {x.dtype.name} (as torch on CPU)")
    if real and x.dtype.is_complex:
        raise DTypeError(f"{name} expects a real input tensor, but got {x.dtype.name}")
    if x.ndim == 0 and not scalar_ok:  # torch: "Dimension specified as -1 but tensor has no
        raise DimError(f"{name}: a 0-d tensor has no dimension to transform")  # dimensions"
    return x


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ArgumentError(f'Invalid normalization mode: "{norm}" (expected one of {NORMS})')
    return norm


def _points(n, default, name, keep=False):
    """A transform length: ``None`` (and, in ``s``, ``-1``: ``keep``) is ``default``; torch
    refuses ``n=-1`` of the 1-D functions and any length below 1."""
    n = default if n is None or (keep and n == -1) else n
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise DTypeError(f"{name}: argument 'n' must be int, not {type(n).__name__} ({n!r})")
    if n < 1:
        raise ArgumentError(f"{name}: Invalid number of data points ({n}) specified")
    return int(n)


def _one(name, x, n, dim, norm, kind, real=False):
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise DTypeError(f"{name}: argument 'dim' must be int, not {type(dim).__name__}")
    x = _input(x, name, real)
    d = normalize_dim(dim, x.ndim)
    return x, d, _norm(norm)


# ------------------------------------------------------------------------------ 1-D
def fft(input, n=None, dim=-1, norm=None):
    """Discrete Fourier transform along ``dim`` (``n``: pad with zeros or cut first).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.fft(st.tensor([1.0, 2.0, 3.0, 4.0], shards=2)).tolist()
    [(10+0j), (-2+2j), (-2+0j), (-2-2j)]
    """
    x, d, norm = _one("fft", input, n, dim, norm, "fft")
    return transform(x, "fft", _points(n, x.shape[d], "fft"), d, norm, False, False, False)


def ifft(input, n=None, dim=-1, norm=None):
    """Inverse discrete Fourier transform along ``dim`` (scaled by ``1/n`` by default).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.ifft(st.tensor([4.0, 0.0, 0.0, 0.0], shards=2)).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]
    """
    x, d, norm = _one("ifft", input, n, dim, norm, "ifft")
    return transform(x, "ifft", _points(n, x.shape[d], "ifft"), d, norm, False, False, False)


def rfft(input, n=None, dim=-1, norm=None):
    """Transform of a real signal: the ``n // 2 + 1`` non-negative frequencies.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.rfft(st.tensor([1.0, 2.0, 3.0, 4.0], shards=2)).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    """
    x, d, norm = _one("rfft", input, n, dim, norm, "rfft", real=True)
    if not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    return transform(x, "rfft", _points(n, x.shape[d], "rfft"), d, norm, False, False, False)


def irfft(input, n=None, dim=-1, norm=None):
    """Inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``) from
    its non-negative frequencies (the imaginary parts of bin 0 and, for even ``n``, of bin
    ``n / 2`` are ignored).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.irfft(st.tensor([10, -2 + 2j, -2], shards=2)).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    x, d, norm = _one("irfft", input, n, dim, norm, "irfft")
    n = _points(n, 2 * (x.shape[d] - 1), "irfft")
    return transform(x, "irfft", n, d, norm, False, False, False)


def hfft(input, n=None, dim=-1, norm=None):
    """Transform of a Hermitian-symmetric signal given by its first half: a real spectrum of
    length ``n`` (default ``2 * (m - 1)``); ``irfft`` of the conjugate, unscaled by default.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.hfft(st.tensor([2.5, -0.5 - 0.5j, -0.5], shards=2)).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    x, d, norm = _one("hfft", input, n, dim, norm, "hfft")
    n = _points(n, 2 * (x.shape[d] - 1), "hfft")
    return transform(x, "irfft", n, d, _SWAP[norm], True, False, False)


def ihfft(input, n=None, dim=-1, norm=None):
    """Inverse of :func:`hfft`: the first ``n // 2 + 1`` bins of the inverse transform of a
    real signal.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.ihfft(st.tensor([1.0, 2.0, 3.0, 4.0], shards=2)).tolist()
    [(2.5+0j), (-0.5-0.5j), (-0.5-0j)]
    """
    x, d, norm = _one("ihfft", input, n, dim, norm, "ihfft", real=True)
    if not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    n = _points(n, x.shape[d], "ihfft")
    return transform(x, "rfft", n, d, _SWAP[norm], False, True, False)


# ------------------------------------------------------------------------------ n-D
def _dims(name, x, s, dim):
    """torch's (s, dim) rules: both given have equal lengths; ``s`` alone means the last
    ``len(s)`` dims; neither means every dim. Returns ``(dims, sizes)`` (-1: keep)."""
    if dim is not None:
        dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        if dims and x.ndim == 0:  # torch: "Dimension specified as 0 but tensor has no dims"
            raise DimError(f"{name}: dim {dims[0]} given for a 0-d tensor")
        dims = [normalize_dim(d, x.ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise ArgumentError(f"{name}: FFT dims must be unique, got {tuple(dims)}")
        if s is not None and len(s) != len(dims):
            raise ArgumentError(
                f"{name}: When given, dim and shape arguments must have the same length "
                f"(s={tuple(s)}, dim={tuple(dims)})"
            )
    elif s is not None:
        if len(s) > x.ndim:
            raise ArgumentError(
                f"{name}: Got shape with {len(s)} values but input tensor only has "
                f"{x.ndim} dimensions."
            )
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim))
    sizes = list(s) if s is not None else [-1] * len(dims)
    return dims, [x.shape[d] if n == -1 else n for d, n in zip(dims, sizes)]


def _c2c(name, kind, input, s, dim, norm):
    x = _input(input, name, scalar_ok=True)
    norm = _norm(norm)
    dims, sizes = _dims(name, x, s, dim)
    if not dims:
        return x.to(D.to_complex(x.dtype))
    return _group(x, kind, dims, [_points(n, n, name) for n in sizes], norm)


def _group(x, kind, dims, sizes, norm):
    """Complex transforms over ``dims``: one ``fftn`` (local groups, transposes between) for
    a tensor of two or more dims; a 1-D tensor's one dim may need the four-step."""
    if not dims:
        return x
    if x.ndim == 1 or len(dims) == 1:
        return transform(x, kind, sizes[0], dims[0], norm)
    return apply("fftn", x, kind, tuple(sizes), tuple(dims), norm, False)


def fftn(input, s=None, dim=None, norm=None):
    """N-dimensional transform over ``dim`` (default: every dim, or the last ``len(s)``).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.fftn(st.ones(2, 2, shards=2)).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _c2c("fftn", "fft", input, s, dim, norm)


def ifftn(input, s=None, dim=None, norm=None):
    """N-dimensional inverse transform over ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.ifftn(st.tensor([[4.0, 0.0], [0.0, 0.0]], shards=2)).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (1+0j)]]
    """
    return _c2c("ifftn", "ifft", input, s, dim, norm)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """2-D transform over the last two dims (or ``dim``).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.fft2(st.ones(2, 2, shards=2)).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _c2c("fft2", "fft", input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """2-D inverse transform over the last two dims (or ``dim``).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.ifft2(st.tensor([[4.0, 0.0], [0.0, 0.0]], shards=2)).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (1+0j)]]
    """
    return _c2c("ifft2", "ifft", input, s, dim, norm)


def _real_dims(name, input, s, dim, norm):
    """Checks of the real-input n-D transforms (``rfftn``, ``ihfftn``): a real ``x`` (ints:
    the default float), its dims and their lengths."""
    x = _input(input, name, real=name == "rfftn", scalar_ok=True)
    norm = _norm(norm)
    dims, sizes = _dims(name, x, s, dim)
    if x.dtype.is_complex:  # torch checks ihfftn's dims first, rfftn's dtype first
        raise DTypeError(f"{name} expects a real input tensor, but got {x.dtype.name}")
    if not dims:
        raise ArgumentError(f"{name} must transform at least one axis")
    if not x.dtype.is_floating_point:
        x = x.to(D.get_default_dtype())
    return x, dims, [_points(n, 0, name) for n in sizes], norm


def _hermitian_dims(name, input, s, dim, norm):
    """Checks of the n-D transforms of a half spectrum (``irfftn``, ``hfftn``): the lengths of
    all but the last dim, and the last one's real length (default ``2 * (m - 1)``)."""
    x = _input(input, name, scalar_ok=True)
    norm = _norm(norm)
    dims, sizes = _dims(name, x, s, dim)
    if not dims:
        raise ArgumentError(f"{name} must transform at least one axis")
    n_last = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else s[-1]
    return x, dims, [_points(n, 0, name) for n in sizes[:-1]], _points(n_last, 0, name), norm


def rfftn(input, s=None, dim=None, norm=None):
    """N-dimensional transform of a real input: ``rfft`` over the last of ``dim``, ``fft``
    over the others.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.rfftn(st.ones(2, 4, shards=2)).shape
    sharded.Size([2, 3])
    """
    x, dims, sizes, norm = _real_dims("rfftn", input, s, dim, norm)
    x = transform(x, "rfft", sizes[-1], dims[-1], norm)
    return _group(x, "fft", dims[:-1], sizes[:-1], norm)


def irfftn(input, s=None, dim=None, norm=None):
    """Inverse of :func:`rfftn`: ``ifft`` over all but the last of ``dim``, then ``irfft``
    (length ``s[-1]``, default ``2 * (m - 1)``) over the last.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.irfftn(st.tensor([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]], shards=2)).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    x, dims, sizes, n_last, norm = _hermitian_dims("irfftn", input, s, dim, norm)
    x = _group(x, "ifft", dims[:-1], sizes, norm)
    return transform(x, "irfft", n_last, dims[-1], norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """2-D transform of a real input over the last two dims (or ``dim``).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.rfft2(st.ones(2, 4, shards=2)).tolist()[0]
    [(8+0j), 0j, 0j]
    """
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """Inverse of :func:`rfft2`.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.irfft2(st.tensor([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]], shards=2)).shape
    sharded.Size([2, 4])
    """
    return irfftn(input, s, dim, norm)


def hfftn(input, s=None, dim=None, norm=None):
    """N-dimensional :func:`hfft`: the real spectrum of a Hermitian-symmetric signal given by
    its half along the last of ``dim`` (length ``s[-1]``, default ``2 * (m - 1)``); ``fft``
    over the other dims, then ``hfft`` over the last (torch's order).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.hfftn(st.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], shards=2)).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    x, dims, sizes, n_last, norm = _hermitian_dims("hfftn", input, s, dim, norm)
    x = _group(x, "fft", dims[:-1], sizes, norm)
    return transform(x, "irfft", n_last, dims[-1], _SWAP[norm], True, False, False)


def ihfftn(input, s=None, dim=None, norm=None):
    """N-dimensional :func:`ihfft` of a real input: ``ihfft`` over the last of ``dim`` (the
    ``n // 2 + 1`` non-negative frequencies), then ``ifft`` over the others.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.ihfftn(st.tensor([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]], shards=2)).tolist()
    [[(3.5-0j), (-0.5-0.5j), (-0.5-0j)], [(-1+0j), 0j, 0j]]
    """
    x, dims, sizes, norm = _real_dims("ihfftn", input, s, dim, norm)
    x = transform(x, "rfft", sizes[-1], dims[-1], _SWAP[norm], False, True, False)
    return _group(x, "ifft", dims[:-1], sizes[:-1], norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """2-D :func:`hfftn` over the last two dims (or ``dim``).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.hfft2(st.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], shards=2)).shape
    sharded.Size([2, 4])
    """
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """2-D :func:`ihfftn` over the last two dims (or ``dim``).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.ihfft2(st.ones(2, 4, shards=2)).shape
    sharded.Size([2, 3])
    """
    return ihfftn(input, s, dim, norm)


# ----------------------------------------------------------------- frequencies, shifts
def _freq(name, n, d, count, dtype, shards, dim, layout, device, requires_grad):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise DTypeError(f"{name}: argument 'n' must be int, not {type(n).__name__} ({n!r})")
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise DTypeError(f"{name} requires a floating point or complex dtype, got {dt.name}")
    if n < 0:  # torch: "Trying to create tensor with negative dimension"
        raise ArgumentError(f"{name}: n must be a non-negative integer, got {n!r}")
    lay = placement((count,), shards, dim, layout, device)
    k = apply("arange", lay, 0, 1, D.int64)
    if name == "fftfreq":
        k = (k + n // 2) % max(n, 1) - n // 2  # 0, 1, ..., -(n // 2), ..., -1
    with np.errstate(divide="ignore"):  # n * d == 0: torch's inf (and 0 * inf = nan)
        scale = float(np.float64(1.0) / np.float64(n * d))
    out = k.to(dt) * scale
    return out.requires_grad_(requires_grad) if requires_grad else out


def fftfreq(
    n, d=1.0, *, dtype=None, shards=None, dim=None, layout=None, device="cpu", requires_grad=False
):
    """Sample frequencies of an ``n``-point transform with sample spacing ``d``.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return _freq("fftfreq", n, d, n, dtype, shards, dim, layout, device, requires_grad)


def rfftfreq(
    n, d=1.0, *, dtype=None, shards=None, dim=None, layout=None, device="cpu", requires_grad=False
):
    """Sample frequencies of :func:`rfft`'s ``n // 2 + 1`` bins.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    count = n // 2 + 1 if isinstance(n, numbers.Integral) and n >= 0 else 0
    return _freq("rfftfreq", n, d, count, dtype, shards, dim, layout, device, requires_grad)


def _shift(input, dim, sign):
    x = input if is_tensor(input) else as_tensor(input)
    if dim is None:
        dims = list(range(x.ndim))
    else:
        dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        if dims and x.ndim == 0:
            raise DimError(f"dim {dims[0]} given for a 0-d tensor")
        dims = [normalize_dim(d, x.ndim) for d in dims]
    if not dims:  # torch's roll: "`shifts` required" (a 0-d input, or dim=())
        raise ArgumentError(f"`shifts` required: no dim to shift (dim={dim!r}, {x.ndim}-d)")
    return x.roll([sign * (x.shape[d] // 2) for d in dims], dims)


def fftshift(input, dim=None):
    """Rotate the zero frequency to the middle of ``dim`` (default: every dim).

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.fftshift(st.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """Inverse of :func:`fftshift`.

    Examples
    --------
    >>> import sharded as st
    >>> st.fft.ifftshift(st.arange(5)).tolist()
    [2, 3, 4, 0, 1]
    """
    return _shift(input, dim, -1)
