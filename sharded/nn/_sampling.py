"""Spatial transformer functions of ``st.nn.functional``: ``affine_grid`` and ``grid_sample``.

``affine_grid`` is one batched product of torch's base grid (built on the driver) with the
transposed affine matrices. ``grid_sample`` reads, for every output point, the input at
the grid's taps (1, 2 or 4 per spatial dim for ``nearest``, ``bilinear`` and ``bicubic``):
the source coordinates, padding and weights are elementwise ops on the grid, the taps one
``gather`` along the flattened spatial dims of the input, and the result their weighted sum.
All are compositions of sharded ops, so they run on any layout (inputs and grids split
along the batch stay where they are) and their gradients with respect to the input (a
scatter-add at the taps) and the grid (through the weights and the padding) are those ops'.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..core.dispatch import as_tensor, is_tensor
from ..errors import ArgumentError, DTypeError, ShapeError, UnsupportedArgument, UnsupportedDType
from ..ops.creation.prims import zeros
from ..ops.elementwise.prims.selection import where
from ..ops.linalg.prims.matmul import matmul
from ..ops.shape.prims.joining import stack

__all__ = ["affine_grid", "grid_sample"]
# torch's top-level forms, with integer modes, are sharded's top-level names too:
# ``st.grid_sampler``, ``st.grid_sampler_2d/3d``, ``st.affine_grid_generator``
_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _align(align_corners):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


# --------------------------------------------------------------------------- affine_grid
def _base_line(n, align_corners):
    """torch's ``linspace_from_neg_one``: ``n`` points from -1 to 1 (0 for one point),
    pulled in to the pixel centres without ``align_corners``."""
    if n <= 1:
        return np.zeros(max(n, 0))
    line = np.linspace(-1.0, 1.0, n)
    return line if align_corners else line * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps, for ``grid_sample``: (N, H, W, 2) from
    ``theta`` (N, 2, 3) and ``size`` (N, C, H, W), or (N, D, H, W, 3) from (N, 3, 4) and
    (N, C, D, H, W), as ``torch.nn.functional.affine_grid`` (``align_corners=None`` is
    ``False``, with torch's warning).

    Examples
    --------
    >>> import sharded as st
    >>> theta = st.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> st.nn.functional.affine_grid(theta, (1, 1, 2, 2), align_corners=True).tolist()
    [[[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]]
    """
    align = _align(align_corners)
    theta = _t(theta)
    if not theta.dtype.is_floating_point:
        raise DTypeError(f"Expected theta to have floating point type, but got {theta.dtype.name}")
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise UnsupportedArgument(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    nd = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ShapeError(
            f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for size "
            f"{size}. Got {list(theta.shape)}."
        )
    spatial = size[2:]
    if align and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            UserWarning,
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ArgumentError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise ShapeError(
            f"affine_grid: theta holds {theta.shape[0]} matrices for a batch of {size[0]}"
        )
    # base[..., :] = (x, y[, z], 1) per output point, x along the last dim (W)
    lines = [_base_line(n, align) for n in reversed(spatial)]
    mesh = np.meshgrid(*reversed(lines), indexing="ij")[::-1]  # x, y[, z] over (D,) H, W
    q = math.prod(spatial)
    base = np.stack([m.reshape(q) for m in mesh] + [np.ones(q)], axis=-1)
    base = as_tensor(base).to(theta.dtype).unsqueeze(0)
    return matmul(base, theta.mT).reshape(size[0], *spatial, nd)


# --------------------------------------------------------------------------- grid_sample
def _unnormalize(c, n, align):
    """Grid coordinates in [-1, 1] as pixel coordinates of a dim of ``n`` pixels."""
    return (c + 1) / 2 * (n - 1) if align else ((c + 1) * n - 1) / 2


def _reflect(c, twice_lo, twice_hi):
    """torch's ``reflect_coordinates``: ``c`` folded into [lo, hi] by reflections."""
    if twice_lo == twice_hi:
        return c * 0
    lo, span = twice_lo / 2, (twice_hi - twice_lo) / 2
    c = (c - lo).abs()
    extra = c.fmod(span)
    even = (c / span).floor().fmod(2) == 0
    return where(even, extra + lo, span - extra + lo)


def _pad(c, n, padding_mode, align):
    """Pixel coordinates after ``padding_mode`` (torch's ``compute_coordinates``)."""
    if padding_mode == "border":
        return c.clamp(0, n - 1)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (n - 1)) if align else _reflect(c, -1, 2 * n - 1)
        return c.clamp(0, n - 1)
    return c


def _cubic(t):
    """torch's cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 from
    ``floor``, for the fraction ``t``."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(c, n, mode, padding_mode, align):
    """The (coordinate, weight) taps of one spatial dim; a weight of ``None`` is 1."""
    c = _unnormalize(c, n, align)
    if mode == "bicubic":  # padding applies to each tap (torch's get_value_bounded)
        c0 = c.floor()
        weights = _cubic(c - c0)
        return [(_pad(c0 + (j - 1), n, padding_mode, align), weights[j]) for j in range(4)]
    c = _pad(c, n, padding_mode, align)
    if mode == "nearest":  # torch's grid gradient is zero here, not absent
        return [(c.round(), c * 0 + 1 if c.requires_grad else None)]
    c0 = c.floor()
    return [(c0, c0 + 1 - c), (c0 + 1, c - c0)]


def _check_names(mode, padding_mode):
    if mode not in _MODES:
        raise ArgumentError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ArgumentError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )


def _check_sample(x, grid, mode, want=None):
    """aten's checks of ``grid_sampler`` (``want``: 4 or 5 for the 2-D and 3-D forms)."""
    sizes = f"input with sizes {list(x.shape)} and grid with sizes {list(grid.shape)}"
    if x.ndim and grid.ndim and x.shape[0] != grid.shape[0]:
        raise ShapeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}"
        )
    if grid.ndim == 0 or grid.shape[-1] != x.ndim - 2:
        raise ShapeError(
            f"grid_sampler(): expected grid to have size {x.ndim - 2} in last dimension, but "
            f"got grid with sizes {list(grid.shape)}"
        )
    for d in range(2, x.ndim):
        if x.shape[d] == 0:
            raise ShapeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {list(x.shape)} with dimension {d} being empty"
            )
    want = want or (4 if x.ndim == 4 else 5)
    if x.ndim != want or grid.ndim != want:
        raise ShapeError(
            f"grid_sampler(): expected {want}D input and grid with same number of "
            f"dimensions, but got {sizes}"
        )
    if mode == "bicubic" and want == 5:
        raise UnsupportedArgument("grid_sampler(): bicubic interpolation only supports 4D input")
    if not x.dtype.is_floating_point:
        raise UnsupportedDType(f'"grid_sampler" not implemented for {x.dtype.name!r}')
    if grid.dtype != x.dtype:
        raise DTypeError(
            f"grid_sampler(): expected input and grid to have same dtype, but input has "
            f"{x.dtype.name} and grid has {grid.dtype.name}"
        )


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the points of ``grid``
    (N, Ho, Wo, 2) or (N, Do, Ho, Wo, 3), given as (x, y[, z]) in [-1, 1], as
    ``torch.nn.functional.grid_sample``: ``mode`` 'bilinear', 'nearest' or 'bicubic' (4-D
    only), ``padding_mode`` 'zeros', 'border' or 'reflection' for points outside,
    ``align_corners`` (``None`` is ``False``, with torch's warning). A composition of
    elementwise ops on the grid and one ``gather`` of the input: a batch split stays local;
    gradients flow to the input and the grid as torch's.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = st.tensor([[[[0.0, 0.0], [-1.0, -1.0]]]])
    >>> st.nn.functional.grid_sample(x, grid, align_corners=True).tolist()
    [[[[1.5, 0.0]]]]
    """
    _check_names(mode, padding_mode)
    return _sample(_t(input), _t(grid), mode, padding_mode, _align(align_corners))


def _sample(x, grid, mode, padding_mode, align, want=None):
    _check_sample(x, grid, mode, want)
    n, c, nd = x.shape[0], x.shape[1], x.ndim - 2
    sp_in, sp_out = tuple(x.shape[2:]), tuple(grid.shape[1:-1])
    q = math.prod(sp_out)
    if n == 0 or c == 0 or q == 0:  # nothing to read
        return zeros(n, c, *sp_out, dtype=x.dtype)
    pts = grid.reshape(n, q, nd)
    # dims in input order (D,) H, W; the grid lists x (W) first
    per_dim = [_taps(pts[..., nd - 1 - a], sp_in[a], mode, padding_mode, align) for a in range(nd)]
    strides = [math.prod(sp_in[a + 1 :]) for a in range(nd)]
    index, weight, inside = [], [], []
    for corner in np.ndindex(*(len(t) for t in per_dim)):
        lin, w, ok = None, None, None
        for a, j in enumerate(corner):
            pos, wa = per_dim[a][j]
            inb = (pos >= 0) & (pos <= sp_in[a] - 1)
            term = pos.clamp(0, sp_in[a] - 1).long() * strides[a]
            lin = term if lin is None else lin + term
            w = wa if w is None else (w if wa is None else w * wa)
            ok = inb if ok is None else ok & inb
        index.append(lin)
        weight.append(w)
        inside.append(ok)
    k = len(index)
    idx = stack(index, 1).reshape(n, 1, k * q).expand(n, c, k * q)
    vals = x.reshape(n, c, -1).gather(2, idx).reshape(n, c, k, q)
    ok = stack(inside, 1).unsqueeze(1)
    if weight[0] is not None:
        vals = vals * stack(weight, 1).unsqueeze(1)
    return where(ok, vals, 0).sum(2).reshape(n, c, *sp_out)


# ------------------------------------------------------------ torch's top-level forms
def _enum(v, names, what):
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < len(names):
        raise ArgumentError(
            f"grid_sampler(): {what} must be an int in [0, {len(names) - 1}], got {v!r}"
        )
    return names[v]


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sample`` with torch's integer modes: ``interpolation_mode`` 0 bilinear,
    1 nearest, 2 bicubic; ``padding_mode`` 0 zeros, 1 border, 2 reflection.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(4.0).reshape(1, 1, 2, 2)
    >>> st.grid_sampler(x, st.zeros(1, 1, 1, 2), 0, 0, True).tolist()
    [[[[1.5]]]]
    """
    mode = _enum(interpolation_mode, _MODES, "interpolation_mode")
    pad = _enum(padding_mode, _PADDINGS, "padding_mode")
    return _sample(_t(input), _t(grid), mode, pad, bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler`` of a 4-D input (N, C, H, W) only.

    Examples
    --------
    >>> import sharded as st
    >>> st.grid_sampler_2d(st.ones(1, 1, 2, 2), st.zeros(1, 1, 1, 2), 1, 0, False).tolist()
    [[[[1.0]]]]
    """
    mode = _enum(interpolation_mode, _MODES, "interpolation_mode")
    pad = _enum(padding_mode, _PADDINGS, "padding_mode")
    return _sample(_t(input), _t(grid), mode, pad, bool(align_corners), want=4)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler`` of a 5-D input (N, C, D, H, W) only (no bicubic mode).

    Examples
    --------
    >>> import sharded as st
    >>> st.grid_sampler_3d(st.ones(1, 1, 2, 2, 2), st.zeros(1, 1, 1, 1, 3), 0, 1, True).tolist()
    [[[[[1.0]]]]]
    """
    mode = _enum(interpolation_mode, _MODES, "interpolation_mode")
    pad = _enum(padding_mode, _PADDINGS, "padding_mode")
    return _sample(_t(input), _t(grid), mode, pad, bool(align_corners), want=5)


def affine_grid_generator(theta, size, align_corners):
    """torch's ``affine_grid_generator``: ``affine_grid`` with ``align_corners`` given.

    Examples
    --------
    >>> import sharded as st
    >>> theta = st.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> st.affine_grid_generator(theta, (1, 1, 1, 1), False).tolist()
    [[[[0.0, 0.0]]]]
    """
    return affine_grid(theta, size, bool(align_corners))
