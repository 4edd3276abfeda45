"""Convolution layers: ``Conv1d`` and ``Conv2d``.

Weights and biases are replicated on every worker (the data-parallel default of
``sharded.nn``), so a batch split along N convolves locally and backward sums the weight's
gradient across the workers.
"""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...errors import ArgumentError
from ...layout import Layout
from ...ops.random.prims.counter import rand
from .. import functional as F
from .module import Module, Parameter
from .utils import _ntuple

__all__ = ["Conv1d", "Conv2d"]


_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nd = 2

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ArgumentError("groups must be a positive integer")
        if in_channels % groups:
            raise ArgumentError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ArgumentError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ArgumentError(
                    f"Invalid padding string {padding!r}, should be one of ['valid', 'same']"
                )
            if padding == "same" and any(s != 1 for s in _ntuple(stride, nd)):
                raise ArgumentError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _MODES:
            raise ArgumentError(
                f"padding_mode must be one of {set(_MODES)}, but got padding_mode={padding_mode!r}"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.groups, self.padding_mode = groups, padding_mode
        self.transposed, self.output_padding = False, (0,) * nd
        # torch's default: kaiming_uniform_(a=sqrt(5)) is uniform in +-1/sqrt(fan_in), and
        # so is the bias
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        bound = 1 / math.sqrt(fan_in) if fan_in else 0.0
        rep, dev = Layout.replicated(), device or "cpu"
        with no_grad():
            shape = (out_channels, in_channels // groups) + self.kernel_size
            w = rand(*shape, dtype=dtype, layout=rep, device=dev) * (2 * bound) - bound
            self.weight = Parameter(w)
            if bias:
                b = rand(out_channels, dtype=dtype, layout=rep, device=dev) * (2 * bound) - bound
                self.bias = Parameter(b)
            else:
                self.bias = None

    def _pads(self):
        """F.pad's amounts (last dim first) for a non-zeros ``padding_mode``."""
        if self.padding == "valid":
            return None
        if self.padding == "same":
            tot = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            per = [(t // 2, t - t // 2) for t in tot]
        else:
            per = [(p, p) for p in self.padding]
        return [a for lr in reversed(per) for a in lr]

    def forward(self, input):
        conv = F.conv1d if self._nd == 1 else F.conv2d
        pad = self.padding
        if self.padding_mode != "zeros":
            amounts = self._pads()
            if amounts is not None and any(amounts):
                input = F.pad(input, amounts, mode=self.padding_mode)
            pad = 0
        return conv(input, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)

    def extra_repr(self):
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """2-D convolution layer: weight (out, in/groups, kH, kW) and bias (out,) initialised
    uniformly in ``+-1/sqrt(in/groups * kH * kW)`` (torch's default), replicated.

    Examples
    --------
    >>> import sharded as st
    >>> conv = st.nn.Conv2d(1, 6, 5)
    >>> conv
    Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    >>> conv(st.ones(2, 1, 32, 32)).shape
    sharded.Size([2, 6, 28, 28])
    """

    _nd = 2


class Conv1d(_ConvNd):
    """1-D convolution layer: weight (out, in/groups, k), bias (out,).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Conv1d(4, 6, 3, padding="same")(st.ones(2, 4, 10)).shape
    sharded.Size([2, 6, 10])
    """

    _nd = 1
