"""Resampling functions of ``st.nn.functional``: ``interpolate`` (and the deprecated
``upsample``/``upsample_nearest``/``upsample_bilinear``), ``pixel_shuffle`` and
``pixel_unshuffle``.

Every interpolation mode but ``area`` is separable: one pass per spatial dim, each an
``index_select`` of source rows (nearest) or a blend of two (linear) or four (bicubic), with
the indices and weights computed on the driver as torch computes them. ``area`` is adaptive
average pooling. Pixel (un)shuffle is a reshape, a permute and a reshape. All are
compositions of sharded ops, so they run on any layout (a split batch stays local) and their
gradients are those ops' gradients.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..core.dispatch import as_tensor, is_tensor
from ..errors import ArgumentError, DTypeError, ShapeError, UnsupportedArgument
from ..ops.index.prims.index_ops import index_select
from ..ops.nnops.derived import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = [
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "pixel_shuffle",
    "pixel_unshuffle",
]

_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "bicubic", "area")


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _nearest_index(n_in, n_out, scale, exact, ft):
    """torch's nearest source index per output index, in its arithmetic (``ft``: float64
    for float64 inputs, else float32; the floor is taken of a float32): ``floor(i * s)``,
    or ``floor(max(s (i + 0.5) - 0.5, 0) + 0.5)`` for ``nearest-exact``, with
    ``s = 1 / scale_factor`` or ``in / out``."""
    s = ft(1.0 / scale) if scale else ft(n_in) / ft(n_out)
    i = np.arange(n_out).astype(ft)
    if exact:
        # torch's compiled ``s * (i + 0.5) - 0.5`` is one fused multiply-add: one rounding
        real = (np.float64(s) * (i.astype(np.float64) + 0.5) - 0.5).astype(ft)
        pos = np.maximum(real, ft(0)) + ft(0.5)
    else:
        pos = s * i
    return np.minimum(np.floor(pos.astype(np.float32)).astype(np.int64), n_in - 1)


def _linear_weights(n_in, n_out, scale, align_corners):
    """Left source index, right source index and the right one's weight per output index
    (torch's ``area_pixel_compute_source_index`` and ``guard_index_and_lambda``)."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = s * dst
    else:
        s = 1.0 / scale if scale else n_in / n_out
        src = np.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam = np.clip(src - i0, 0.0, 1.0)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    return i0, i1, lam


def _cubic_weights(n_in, n_out, scale, align_corners):
    """The four source indices (clamped to the input) and their weights per output index
    (torch's cubic convolution with A = -0.75; no clamping of the source position)."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) * dst
    else:
        src = (1.0 / scale if scale else n_in / n_out) * (dst + 0.5) - 0.5
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - i0, 0.0, 1.0)
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    return [np.clip(i0 - 1 + j, 0, n_in - 1) for j in range(4)], weights


def _sizes(x, size, scale_factor, recompute_scale_factor):
    """The output size and the scale per spatial dim (``None`` where torch derives it from
    the sizes)."""
    nd = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ArgumentError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ArgumentError("recompute_scale_factor is not meaningful with an explicit size.")
        out = list(size) if isinstance(size, (list, tuple)) else [size] * nd
        if len(out) != nd:
            raise ShapeError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(x.shape[2:])} and output size of "
                f"{list(out)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and output size in (o1, o2, ...,oK) format."
            )
        out = [int(o) for o in out]
        return out, [None] * nd
    if scale_factor is None:
        raise ArgumentError("either size or scale_factor should be defined")
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * nd
    if len(scales) != nd:
        raise ShapeError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(x.shape[2:])} and scale_factor of shape "
            f"{list(scales)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format."
        )
    scales = [float(s) for s in scales]
    out = [math.floor(n * s) for n, s in zip(x.shape[2:], scales)]
    return out, [None] * nd if recompute_scale_factor else scales


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resize the spatial dims of an (N, C, d1[, d2[, d3]]) input to ``size`` or by
    ``scale_factor``, as ``torch.nn.functional.interpolate``.

    Modes: ``nearest`` (torch's index rule, its arithmetic included), ``nearest-exact``,
    ``linear`` (3-D), ``bilinear`` (4-D), ``trilinear`` (5-D), ``bicubic`` (4-D; cubic
    convolution with A = -0.75, as torch), with ``align_corners``, and ``area`` (3-D and
    4-D: adaptive average pooling). ``antialias`` is not supported.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[[1., 2.]]])
    >>> st.nn.functional.interpolate(x, scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> st.nn.functional.interpolate(x, size=4, mode="linear").tolist()
    [[[1.0, 1.25, 1.75, 2.0]]]
    >>> st.nn.functional.interpolate(x, size=3, mode="linear", align_corners=True).tolist()
    [[[1.0, 1.5, 2.0]]]
    """
    x = _t(input)
    if mode not in _MODES:
        raise ArgumentError(
            f"interpolate: unknown mode {mode!r}; expected one of {', '.join(_MODES)}"
        )
    if x.ndim not in (3, 4, 5):
        raise ShapeError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{x.ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | "
            f"area | nearest-exact (got {mode})"
        )
    linear = mode in _LINEAR
    if align_corners is not None and not linear and mode != "bicubic":
        raise ArgumentError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if linear and _LINEAR[mode] != x.ndim:
        raise ShapeError(f"Got {x.ndim}D input, but {mode} mode needs {_LINEAR[mode]}D input")
    if mode == "bicubic" and x.ndim != 4:
        raise ShapeError(f"Got {x.ndim}D input, but bicubic mode needs 4D input")
    if antialias:
        raise UnsupportedArgument("interpolate: antialias=True is not supported")
    out, scales = _sizes(x, size, scale_factor, recompute_scale_factor)
    if any(o <= 0 for o in out):
        raise ArgumentError(
            f"interpolate: input size {list(x.shape[2:])} gives an output size {out}; every "
            "output size must be greater than 0"
        )
    if any(n == 0 for n in x.shape[2:]):
        raise ShapeError(f"interpolate: input of size {list(x.shape)} has an empty spatial dim")
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[x.ndim - 3]
        return pool(x, out)
    if (linear or mode == "bicubic") and not x.dtype.is_floating_point:
        raise DTypeError(f'"upsample_{mode}" not implemented for {x.dtype.name!r}')
    ft = np.float64 if x.dtype.np == np.float64 else np.float32  # torch's opmath type
    for a, (n_out, s) in enumerate(zip(out, scales)):
        d, n_in = 2 + a, x.shape[2 + a]
        if linear and n_out == n_in:  # torch copies a dim of unchanged size, whatever the scale
            continue
        if mode == "bicubic":
            shape = [1] * x.ndim
            shape[d] = n_out
            taps = zip(*_cubic_weights(n_in, n_out, s, bool(align_corners)))
            parts = [
                index_select(x, d, as_tensor(i)) * as_tensor(w.astype(x.dtype.np)).reshape(shape)
                for i, w in taps
            ]
            x = parts[0] + parts[1] + parts[2] + parts[3]
            continue
        if not linear:
            idx = _nearest_index(n_in, n_out, s, mode == "nearest-exact", ft)
            x = index_select(x, d, as_tensor(idx))
            continue
        i0, i1, lam = _linear_weights(n_in, n_out, s, bool(align_corners))
        shape = [1] * x.ndim
        shape[d] = n_out
        w = as_tensor(lam.astype(x.dtype.np)).reshape(shape)
        left, right = index_select(x, d, as_tensor(i0)), index_select(x, d, as_tensor(i1))
        x = left * (1 - w) + right * w
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate` (torch's ``upsample``).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.upsample(st.tensor([[[1., 2.]]]), size=3).tolist()
    [[[1.0, 1.0, 2.0]]]
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.upsample_nearest(st.tensor([[[1., 2.]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[[[0., 1.]]]])
    >>> st.nn.functional.upsample_bilinear(x, size=(1, 3)).tolist()
    [[[[0.0, 0.5, 1.0]]]]
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _factor(name, what, r):
    if isinstance(r, bool) or not isinstance(r, numbers.Integral):
        raise ArgumentError(f"{name}: {what} must be an int, got {r!r}")
    if r <= 0:
        raise ArgumentError(f"{name} expects {what} to be greater than 0, but got: {r}")
    return int(r)


def pixel_shuffle(input, upscale_factor):
    """Rearrange (*, C r², H, W) into (*, C, H r, W r): each group of r² channels becomes
    an r-by-r block of pixels.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.pixel_shuffle(st.arange(4.).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    x = _t(input)
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if x.ndim < 3:
        raise ShapeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{x.ndim} dimension(s)"
        )
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise ShapeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    k = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """Rearrange (*, C, H r, W r) into (*, C r², H, W), the inverse of
    :func:`pixel_shuffle`.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.functional.pixel_unshuffle(st.arange(4.).reshape(1, 1, 2, 2), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    x = _t(input)
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if x.ndim < 3:
        raise ShapeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{x.ndim} dimension(s)"
        )
    *lead, c, h, w = x.shape
    for name, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise ShapeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({d})={n} is not divisible by {r}"
            )
    k = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = y.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)
