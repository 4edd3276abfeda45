"""Normalization layers: ``LayerNorm``, ``BatchNorm1d/2d``, ``RMSNorm``, ``GroupNorm`` and
``InstanceNorm1d/2d/3d``.

Parameters and buffers are replicated on every worker (the data-parallel default, see
``sharded.nn``), so a row-sharded batch runs its forward locally where it can.
"""

from __future__ import annotations

from ... import dtypes as D
from ...autograd import no_grad
from ...errors import ArgumentError
from ...layout import Layout
from ...ops.creation.prims import ones, tensor, zeros
from .. import functional as F
from .module import Module, Parameter
from .utils import _rep

__all__ = [
    "LayerNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "RMSNorm",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LocalResponseNorm",
]


def _affine(on, shape, bias, dtype, device) -> tuple:
    """A norm layer's learnable ``(weight, bias)``: ones and zeros (no bias unless
    ``bias``) of ``shape``, or ``(None, None)`` when ``on`` is false."""
    if not on:
        return None, None
    weight = Parameter(_rep(ones, shape, dtype, device))
    return weight, Parameter(_rep(zeros, shape, dtype, device)) if bias else None


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims, then scale by ``weight``
    (ones) and shift by ``bias`` (zeros) when ``elementwise_affine``.

    Examples
    --------
    >>> import sharded as st
    >>> ln = st.nn.LayerNorm(3)
    >>> [round(v, 4) for v in ln(st.tensor([[1., 2., 3.]]))[0].tolist()]
    [-1.2247, 0.0, 1.2247]
    """

    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        shape = self.normalized_shape
        self.weight, self.bias = _affine(elementwise_affine, shape, bias, dtype, device)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
            f"{self.elementwise_affine}, bias={self.bias is not None}"
        )


class _NormBase(Module):
    """The parameters, running-statistic buffers and repr that the batch and instance
    norms share (torch's ``_NormBase``)."""

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight, self.bias = _affine(affine, (num_features,), bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", _rep(zeros, (num_features,), dtype, device))
            self.register_buffer("running_var", _rep(ones, (num_features,), dtype, device))
            self.register_buffer(
                "num_batches_tracked",
                tensor(0, dtype=D.int64, layout=Layout.replicated(), device=device or "cpu"),
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_NormBase):
    """Batch normalization of (N, C) or (N, C, L) inputs over each channel. Training uses the
    batch statistics and updates ``running_mean``/``running_var`` (exponential average
    with ``momentum``, or the cumulative average when ``momentum=None``) and
    ``num_batches_tracked``; ``eval()`` uses the running statistics.

    Examples
    --------
    >>> import sharded as st
    >>> bn = st.nn.BatchNorm1d(2)
    >>> _ = bn(st.tensor([[1., 10.], [3., 30.]]))
    >>> [round(v, 4) for v in bn.running_mean.tolist()], bn.num_batches_tracked.item()
    ([0.2, 2.0], 1)
    """

    _ndims, _what = (2, 3), "2D or 3D"

    def forward(self, input):
        if input.ndim not in self._ndims:  # torch's ValueError
            raise ArgumentError(f"expected {self._what} input (got {input.ndim}D input)")
        if input.shape[1] != self.num_features:
            raise ArgumentError(
                f"{type(self).__name__}({self.num_features}): expected {self.num_features} "
                f"channels (dim 1), got input of shape {list(input.shape)}"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average, as torch
                factor = 1.0 / self.num_batches_tracked.item()
        use_batch = self.training or not self.track_running_stats
        track = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )


class BatchNorm2d(BatchNorm1d):
    """Batch normalization of (N, C, H, W) inputs over each channel (statistics over N, H
    and W); otherwise as :class:`BatchNorm1d`.

    Examples
    --------
    >>> import sharded as st
    >>> bn = st.nn.BatchNorm2d(3)
    >>> bn
    BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> bn(st.ones(2, 3, 4, 4)).shape
    sharded.Size([2, 3, 4, 4])
    """

    _ndims, _what = (4,), "4D"


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims, scaled
    by ``weight`` (ones) when ``elementwise_affine``; ``eps`` None is the input dtype's
    machine epsilon.

    Examples
    --------
    >>> import sharded as st
    >>> norm = st.nn.RMSNorm(2)
    >>> norm
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> [round(v, 4) for v in norm(st.tensor([[3., 4.]]))[0].tolist()]
    [0.8485, 1.1314]
    """

    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_rep(ones, self.normalized_shape, dtype, device))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class GroupNorm(Module):
    """Normalize (N, C, *) inputs over groups of ``num_channels // num_groups`` channels,
    then scale and shift each channel by ``weight`` (ones) and ``bias`` (zeros) when
    ``affine``.

    Examples
    --------
    >>> import sharded as st
    >>> gn = st.nn.GroupNorm(2, 4)
    >>> gn
    GroupNorm(2, 4, eps=1e-05, affine=True)
    >>> gn(st.randn(3, 4, 5)).shape
    sharded.Size([3, 4, 5])
    """

    def __init__(
        self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True
    ):
        super().__init__()
        if num_channels % num_groups:
            raise ArgumentError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        self.weight, self.bias = _affine(affine, (num_channels,), bias, dtype, device)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class InstanceNorm1d(_NormBase):
    """Normalize each channel of each sample of (N, C, L) or unbatched (C, L) inputs over
    L; ``affine`` (default False) adds per-channel ``weight`` and ``bias``;
    ``track_running_stats`` (default False) keeps running statistics for ``eval()``, as
    torch's.

    Examples
    --------
    >>> import sharded as st
    >>> norm = st.nn.InstanceNorm1d(2)
    >>> norm
    InstanceNorm1d(2, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    >>> y = norm(st.tensor([[1., 3.], [10., 30.]]))  # unbatched (C, L)
    >>> [[round(v, 4) for v in row] for row in y.tolist()]
    [[-1.0, 1.0], [-1.0, 1.0]]
    """

    _batched, _what = 3, "2D or 3D"

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(
            num_features,
            eps,
            momentum,
            affine,
            track_running_stats,
            device,
            dtype,
            bias=bias,
        )

    def forward(self, input):
        if input.ndim not in (self._batched - 1, self._batched):
            raise ArgumentError(f"expected {self._what} input (got {input.ndim}D input)")
        unbatched = input.ndim == self._batched - 1
        c = input.shape[0 if unbatched else 1]
        if c != self.num_features and self.affine:
            raise ArgumentError(
                f"expected input's size at dim={0 if unbatched else 1} to match num_features "
                f"({self.num_features}), but got: {c}."
            )
        x = input.unsqueeze(0) if unbatched else input
        use_stats = self.training or not self.track_running_stats
        out = F.instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            use_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return out.squeeze(0) if unbatched else out


class InstanceNorm2d(InstanceNorm1d):
    """Instance normalization of (N, C, H, W) or unbatched (C, H, W) inputs over H and W;
    otherwise as :class:`InstanceNorm1d`.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.InstanceNorm2d(3, affine=True)(st.randn(2, 3, 4, 4)).shape
    sharded.Size([2, 3, 4, 4])
    """

    _batched, _what = 4, "3D or 4D"


class InstanceNorm3d(InstanceNorm1d):
    """Instance normalization of (N, C, D, H, W) or unbatched (C, D, H, W) inputs;
    otherwise as :class:`InstanceNorm1d`.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.InstanceNorm3d(2)(st.randn(1, 2, 3, 3, 3)).shape
    sharded.Size([1, 2, 3, 3, 3])
    """

    _batched, _what = 5, "4D or 5D"


class LocalResponseNorm(Module):
    """Each channel divided by ``(k + alpha / size * sum of x² over size neighbouring
    channels) ** beta`` (see :func:`sharded.nn.functional.local_response_norm`).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
