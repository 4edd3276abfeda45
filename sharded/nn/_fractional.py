"""``fractional_max_pool2d`` and ``fractional_max_pool3d`` (Graham 2014, "Fractional
Max-Pooling"), as torch: each (n, c) image pools windows of ``kernel_size`` whose starts are
a pseudo-random increasing sequence drawn from ``_random_samples`` (one ``u`` in [0, 1) per
image, channel and spatial dim).

The starts ``int((i + u) * alpha) - int(u * alpha)`` (``alpha = (in - k) / (out - 1)``, the
last start ``in - k``) are computed in the input's dtype, as torch's kernel does, so given
the same ``_random_samples`` the windows, values and indices are torch's. The pooling is a
composition: one ``gather`` of every window's elements from the flattened image, an
``argmax`` per window, and a ``gather`` of the winners. Windows never leave their (n, c)
image, so a batch or channel split stays where it is, and the gradient is the gathers'
(each output's gradient goes to its winner, torch's rule). A window of several NaNs picks
the first NaN's index (torch's CPU kernel the last; the value is NaN either way).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.dispatch import as_tensor, is_tensor
from ..errors import ArgumentError, DimError, DTypeError, ShapeError
from ..layout import Layout
from ..ops.creation.prims import arange
from ..ops.random.prims.counter import rand
from ..ops.shape.prims.joining import cat

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d"]

_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _sizes(v, nd, name, op):
    """``v`` (an int or a tuple of ``nd`` ints) as ``nd`` ints; torch's message otherwise."""
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            v = tuple(v) * nd
        if len(v) != nd:
            what = "tuple of Ints" if nd == 2 else "tuple of three Ints"
            raise ArgumentError(f"{op}: {name} must either be a single Int or {what}")
        return tuple(int(i) for i in v)
    return (int(v),) * nd


def _starts(u, size, out, k):
    """Window starts (int64, ``u``'s shape + (out,)) from samples ``u`` in the input dtype:
    ``int((i + u) * alpha) - int(u * alpha)``, the last ``size - k`` (torch's
    ``generate_intervals``, in its arithmetic: ``alpha`` rounded to the dtype first)."""
    last = u.unsqueeze(-1) * 0 + (size - k)
    if out <= 1:
        return last[..., :out].long()
    dt = np.dtype(u.dtype.np_str)
    alpha = float(dt.type(size - k) / dt.type(out - 1))
    i = arange(out - 1, dtype=u.dtype)
    first = ((i + u.unsqueeze(-1)) * alpha).trunc() - (u * alpha).trunc().unsqueeze(-1)
    return cat([first, last.to(first.dtype)], dim=-1).long()


def _like_images(u, x):
    """The samples ``u`` (n, c, nd) cut along N and C as the images of ``x`` are (when
    ``x`` is split along nothing else): the windows' positions are then computed, and the
    images gathered, where the images lie."""
    lay = x.layout
    if lay.is_replicated or all(g == 1 for g in lay.grid[:2]) or any(g > 1 for g in lay.grid[2:]):
        return u
    want = Layout.from_bounds(u.shape, [lay.bounds[0], lay.bounds[1], (0, u.shape[2])], lay.workers)
    return u if u.layout == want else u.reshard(layout=want)


def _fractional(op, nd, input, kernel_size, output_size, output_ratio, return_indices, samples):
    x = input if is_tensor(input) else as_tensor(input)
    k = _sizes(kernel_size, nd, "kernel_size", op)
    if x.ndim < nd + 1:
        raise DimError(
            f"{op}: Dimension out of range (an input of {x.ndim} dims has no dim -{nd + 1})"
        )
    sp = tuple(x.shape[x.ndim - nd :])
    if output_size is None and output_ratio is None:
        raise ArgumentError(f"{op} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if isinstance(output_ratio, (list, tuple)) and len(output_ratio) > nd:
            raise ArgumentError(
                f"{op} requires output_ratio to either be a single Int or tuple of Ints."
            )
        r = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,)
        r = r * nd if len(r) == 1 else r
        out = tuple(int(s * f) for s, f in zip(sp, r))
    else:
        out = _sizes(output_size, nd, "output_size", op)
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(
            f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(x.shape)}"
        )
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise ShapeError(
                f"{op}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"got{list(x.shape)} with dimension {d} being empty."
            )
    if not x.dtype.is_floating_point:
        raise DTypeError(f'"{op}" not implemented for {x.dtype.name!r}')
    if any(i <= 0 for i in k):
        raise ArgumentError(f"{op}: kernel_size must be positive, got {list(k)}")
    for name, s, o, kk in zip(_DIMS[nd], sp, out, k):
        if o + kk - 1 > s:
            raise ArgumentError(f"{op}(): pool {name} {kk} too large relative to input {name} {s}")
    batched = x.ndim == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    n, c = x.shape[:2]
    if samples is None:
        samples = rand(n, c, nd, dtype=x.dtype)
    u = samples if is_tensor(samples) else as_tensor(samples)
    if u.ndim != 3:
        raise ShapeError(f"Expect _random_samples to have 3 dimensions, got {u.ndim}")
    if u.dtype != x.dtype:
        raise DTypeError(
            f"Expect _random_samples to have the same dtype as input ({x.dtype.name}), got "
            f"{u.dtype.name}"
        )
    if u.shape[0] < n:
        raise ShapeError(
            f"Expect _random_samples.size(0) no less then input batch size ({u.shape[0]} < {n})."
        )
    if u.shape[1] != c:
        raise ShapeError(
            f"Expect _random_samples.size(1) equals to input channel size ({u.shape[1]} != {c})."
        )
    if u.shape[2] != nd:
        raise ShapeError(f"Expect _random_samples.size(2) equals to {nd}; got {u.shape[2]}.")
    if u.shape[0] > n:
        u = u[:n]
    u = _like_images(u, x)
    # torch's 2-D kernel reads the samples as (width, height), the 3-D one as (time, height, width)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    pos = 0
    for d in range(nd):
        st_d = _starts(u[:, :, order[d]], sp[d], out[d], k[d])  # (n, c, out_d)
        win = st_d.unsqueeze(-1) + arange(k[d])  # (n, c, out_d, k_d)
        shape = [n, c] + [out[j] if j == d else 1 for j in range(nd)]
        shape += [k[j] if j == d else 1 for j in range(nd)]
        pos = pos + win.reshape(shape) * math.prod(sp[d + 1 :])
    m, kk = math.prod(out), math.prod(k)
    flat = x.reshape(n, c, math.prod(sp))  # (-1 is ambiguous for an empty batch)
    pos = pos.reshape(n, c, m * kk)
    vals = flat.detach().gather(2, pos).reshape(n, c, m, kk)
    idx = pos.reshape(n, c, m, kk).gather(3, vals.argmax(dim=3, keepdim=True)).reshape(n, c, m)
    y = flat.gather(2, idx).reshape(n, c, *out)
    idx = idx.reshape(n, c, *out)
    if not batched:
        y, idx = y.squeeze(0), idx.squeeze(0)
    return (y, idx) if return_indices else y


def fractional_max_pool2d(
    input,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices=False,
    _random_samples=None,
):
    """2-D fractional max pooling of an (N, C, H, W) or (C, H, W) input to ``output_size``
    (or ``output_ratio`` times the input's H and W): windows of ``kernel_size`` at
    pseudo-random increasing starts drawn from ``_random_samples`` (N, C, 2), uniform in
    [0, 1), drawn from sharded's generator when not given. Given the samples, the result
    and the flat H*W ``indices`` (``return_indices=True``) are torch's. A batch or channel
    split stays local; differentiable (the gradient goes to each window's winner).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(16.0).reshape(1, 1, 4, 4)
    >>> u = st.full((1, 1, 2), 0.5)
    >>> st.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=u).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _fractional(
        "fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
        return_indices, _random_samples,
    )  # fmt: skip


def fractional_max_pool3d(
    input,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices=False,
    _random_samples=None,
):
    """3-D fractional max pooling of an (N, C, T, H, W) or (C, T, H, W) input, as
    :func:`fractional_max_pool2d` with ``_random_samples`` (N, C, 3) and flat T*H*W
    ``indices``.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> st.nn.functional.fractional_max_pool3d(x, 1, output_size=1, return_indices=True)[1].tolist()
    [[[[[7]]]]]
    """
    return _fractional(
        "fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
        return_indices, _random_samples,
    )  # fmt: skip
