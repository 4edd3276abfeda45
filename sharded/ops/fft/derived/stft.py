"""``stft``/``istft``: torch's short-time Fourier transform and its inverse, composed of
framing (``unfold``), a window, 1-D transforms (:mod:`.transforms`) and an overlap-add, so
their gradients are those of the ops they are made of (no primitive of their own).

A signal is ``(L,)`` or a batch ``(B, L)``: every op here works along the last one or two
dims, so a batch split into shards stays split, each shard transformed where it lives.
Names, defaults, dtypes and errors follow torch 2.13 (``return_complex`` must be given for a
real input, ``onesided`` defaults to a real input and window, a window shorter than
``n_fft`` is centred in zeros; ``align_to_window`` starts the windows, not the frames, every
``hop_length`` samples).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .... import dtypes as D
from ....core.dispatch import as_tensor, is_tensor
from ....core.registry import bind
from ....errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, UnsupportedArgument
from ...elementwise.prims.complex_ import view_as_real
from .transforms import fft, ifft, irfft, rfft

__all__ = ["stft", "istft"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


# --------------------------------------------------------------------------- helpers
def _int(fn, name, v, optional=True):
    """``v`` as an int (``None`` passes when ``optional``); torch's parser refuses floats."""
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(f"{fn}(): argument '{name}' must be int, not {type(v).__name__}")
    return int(v)


def _pad_dim(x, d, left, right, mode="constant"):
    """``x`` padded along dim ``d`` by ``left`` and ``right`` elements: one gather of the
    source indices (reflect/replicate/circular as ``F.pad``), zeros outside for 'constant'."""
    n = x.shape[d]
    j = np.arange(-left, n + right)
    if mode == "reflect":  # mirror about the edge elements
        period = 2 * (n - 1)
        j = np.abs(j) % period if period else np.zeros_like(j)
        j = np.where(j >= n, period - j, j)
    elif mode == "circular":
        j = j % n
    out = x.index_select(d, as_tensor(np.clip(j, 0, n - 1), dtype="int64"))
    if mode != "constant":
        return out
    inside = as_tensor(((j >= 0) & (j < n)).reshape((-1,) + (1,) * (x.ndim - 1 - d % x.ndim)))
    return out.where(inside, 0)


def _centered(window, n_fft, win, left, dtype):
    """The window (ones when ``None``) of ``win`` samples at ``left`` in ``n_fft`` zeros."""
    if window is None:
        window = as_tensor(np.ones(win), dtype=dtype)
    if win == n_fft:
        return window
    return _pad_dim(window, 0, left, n_fft - win - left)


def _overlap_add(frames, hop):
    """Sum of the frames ``(..., T, n)`` laid ``hop`` apart: ``(..., n + hop (T - 1))``. Each
    frame is cut into ``r = ceil(n / hop)`` chunks of ``hop``; chunk ``k`` of frame ``t``
    lands at block ``t + k`` of the output, so the output is ``r`` shifted sums."""
    *_, t, n = frames.shape
    r = -(-n // hop)
    if r * hop > n:
        frames = _pad_dim(frames, -1, 0, r * hop - n)
    chunks = frames.unflatten(-1, (r, hop))  # (..., T, r, hop)
    total = None
    for k in range(r):
        part = _pad_dim(chunks.select(-2, k), -2, k, r - 1 - k)  # (..., T + r - 1, hop)
        total = part if total is None else total + part
    return total.flatten(-2).narrow(-1, 0, n + hop * (t - 1))


# ------------------------------------------------------------------------------ stft
@bind("stft")
def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    """Short-time Fourier transform of a signal ``(L,)`` or batch ``(B, L)``, as torch's
    ``stft``: ``(B?, N, T)`` with ``N = n_fft // 2 + 1`` (``onesided``) or ``n_fft``
    frequencies and ``T`` frames ``hop_length`` apart (``1 + L // hop_length`` with
    ``center``, which pads ``n_fft // 2`` on both sides with ``pad_mode``).

    ``return_complex`` must be given for a real input and window (``False``: a trailing dim
    of (real, imaginary) pairs); ``window`` (default: ones) has ``win_length`` samples,
    centred in ``n_fft`` (``align_to_window=True``, with ``center=False`` only: the windows,
    not the frames, start every ``hop_length`` samples, ``1 + (L - win_length) // hop_length``
    of them);
    ``normalized`` scales by ``1 / sqrt(n_fft)``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.0, 2.0, 3.0, 4.0], shards=2)
    >>> st.stft(x, 2, 2, center=False, return_complex=True).tolist()
    [[(3+0j), (7+0j)], [(-1+0j), (-1+0j)]]
    """
    x = input if is_tensor(input) else as_tensor(input)
    n_fft = _int("stft", "n_fft", n_fft, optional=False)
    hop = _int("stft", "hop_length", hop_length)
    win = _int("stft", "win_length", win_length)
    if center and align_to_window is not None:
        raise ArgumentError("stft: align_to_window should only be set when center = false")
    if x.ndim not in (1, 2):
        raise ShapeError(f"stft: expected a 1D or 2D tensor, got shape {tuple(x.shape)}")
    if center:
        x = _center(x, n_fft // 2, pad_mode)
    cplx = x.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None and not cplx:
        raise ArgumentError(
            "stft requires the return_complex parameter be given for real inputs, and will "
            "further require that return_complex=True in a future PyTorch release."
        )
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise DTypeError(
            f"stft: expected a tensor of floating point or complex values, got {x.dtype.name}"
        )
    hop = n_fft // 4 if hop is None else hop
    win = n_fft if win is None else win
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise ArgumentError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise ArgumentError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise ArgumentError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise ShapeError(
            f"stft: expected a 1D window tensor of size equal to win_length={win}, but got "
            f"window with size {list(window.shape)}"
        )
    onesided = not cplx if onesided is None else onesided
    if onesided and cplx:
        raise ArgumentError("Cannot have onesided output if window or input is complex")
    left = (n_fft - win) // 2
    if align_to_window and win < n_fft:  # frame t's window starts at t * hop of the signal
        x = _pad_dim(x, -1, left, n_fft - win - left)
    frames = x.unfold(-1, n_fft, hop)  # (B?, T, n_fft)
    if window is not None or win < n_fft:
        frames = frames * _centered(window, n_fft, win, left, D.to_real(x.dtype))
    norm = "ortho" if normalized else "backward"
    spec = (rfft if onesided else fft)(frames, dim=-1, norm=norm).transpose(-1, -2)
    keep_complex = cplx if return_complex is None else return_complex
    return spec if keep_complex else view_as_real(spec)


def _center(x, p, mode):
    """torch's centring pad of ``stft``: ``p`` samples each side of the last dim."""
    if mode not in _PAD_MODES:
        raise UnsupportedArgument(
            f"stft: unrecognised padding mode {mode!r} (expected one of {_PAD_MODES})"
        )
    n = x.shape[-1]
    if n == 0 or (x.ndim == 2 and x.shape[0] == 0):
        raise ShapeError(f"stft: cannot pad an empty signal of shape {tuple(x.shape)}")
    if mode == "reflect" and p >= n:
        raise ArgumentError(
            f"stft: padding size should be less than the corresponding input dimension, but "
            f"got: reflect padding ({p}, {p}) (n_fft // 2) of a signal of length {n}"
        )
    if mode == "circular" and p > n:
        raise ArgumentError(
            f"stft: padding value causes wrapping around more than once: circular padding "
            f"({p}, {p}) (n_fft // 2) of a signal of length {n}"
        )
    return _pad_dim(x, -1, p, p, mode)


# ----------------------------------------------------------------------------- istft
@bind("istft")
def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """Inverse of :func:`stft`: the least-squares signal ``(B?, L)`` of a complex spectrum
    ``(B?, N, T)``, as torch's ``istft`` (inverse transforms of the frames, windowed,
    overlap-added and divided by the overlap-added squared window). ``length`` trims or
    zero-pads the result; ``return_complex=True`` inverts a two-sided spectrum of a complex
    signal.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shards=2)
    >>> w = st.hann_window(4)
    >>> s = st.stft(x, 4, 1, window=w, return_complex=True)
    >>> [round(v, 6) for v in st.istft(s, 4, 1, window=w, length=6).tolist()]
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    """
    x = input if is_tensor(input) else as_tensor(input)
    n_fft = _int("istft", "n_fft", n_fft, optional=False)
    hop = _int("istft", "hop_length", hop_length)
    win = _int("istft", "win_length", win_length)
    length = _int("istft", "length", length)
    hop = n_fft // 4 if hop is None else hop
    win = n_fft if win is None else win
    if not x.dtype.is_complex:
        raise DTypeError(
            f"istft requires a complex-valued input tensor matching the output from stft with "
            f"return_complex=True, got {x.dtype.name}"
        )
    if x.numel() == 0:
        raise ShapeError(f"istft: input tensor cannot be empty, got shape {tuple(x.shape)}")
    if x.ndim not in (2, 3):
        raise ShapeError(f"istft: expected a complex (B?, N, T) tensor, got shape {tuple(x.shape)}")
    bins, t = x.shape[-2:]
    onesided = bins != n_fft if onesided is None else onesided
    want = n_fft // 2 + 1 if onesided else n_fft
    if bins != want:
        raise ShapeError(
            f"istft: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match {'n_fft / 2 + 1' if onesided else 'n_fft'} ({want}) when "
            f"onesided={onesided}, but got {bins}"
        )
    if not 0 < hop <= win:
        raise ArgumentError(
            f"istft expected 0 < hop_length <= win_length, got hop_length={hop}, win_length={win}"
        )
    if not 0 < win <= n_fft:
        raise ArgumentError(
            f"istft expected 0 < win_length <= n_fft, got win_length={win}, n_fft={n_fft}"
        )
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise ShapeError(
            f"istft: Invalid window shape. window has to be 1D and length of `win_length` "
            f"({win}), got shape {list(window.shape)}"
        )
    if return_complex and onesided:
        raise ArgumentError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window.dtype.is_complex:
        raise DTypeError("Complex windows are incompatible with return_complex=False")
    w = _centered(window, n_fft, win, (n_fft - win) // 2, D.to_real(x.dtype))
    frames = x.transpose(-1, -2)  # (B?, T, N)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = ifft(frames, dim=-1, norm=norm)
    else:
        frames = irfft(frames.narrow(-1, 0, n_fft // 2 + 1), n=n_fft, dim=-1, norm=norm)
    y = _overlap_add(frames * w, hop)
    envelope = _overlap_add((w * w).expand(t, n_fft), hop)
    full = n_fft + hop * (t - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else full - start
    keep = max(0, min(end, full) - start)
    y, envelope = y.narrow(-1, start, keep), envelope.narrow(-1, start, keep)
    low = envelope.abs().min().item() if keep else 1.0
    if low < 1e-11:
        raise ArgumentError(
            f"istft: window overlap add min: {low:.3g} (< 1e-11): the squared window, "
            f"overlap-added every hop_length={hop}, vanishes where the signal is kept, so it "
            f"cannot be recovered (the NOLA condition)"
        )
    y = y / envelope
    if end > full:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
            stacklevel=2,
        )
        y = _pad_dim(y, -1, 0, end - full)
    return y
