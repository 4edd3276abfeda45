"""Normalization layers: ``LayerNorm``, ``BatchNorm1d`` and ``BatchNorm2d``.

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

__all__ = ["LayerNorm", "BatchNorm1d", "BatchNorm2d"]


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
        if elementwise_affine:
            self.weight = Parameter(_rep(ones, self.normalized_shape, dtype, device))
            b = Parameter(_rep(zeros, self.normalized_shape, dtype, device)) if bias else None
            self.bias = b
        else:
            self.weight = self.bias = None

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
            f"{self.elementwise_affine}, bias={self.bias is not None}"
        )


class BatchNorm1d(Module):
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
        if affine:
            self.weight = Parameter(_rep(ones, (num_features,), dtype, device))
            self.bias = Parameter(_rep(zeros, (num_features,), dtype, device)) if bias else None
        else:
            self.weight = self.bias = None
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

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
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
