"""Convolution and pooling layers: ``Conv1d``/``Conv2d``, ``MaxPool1d/2d``, ``AvgPool1d/2d``,
``AdaptiveAvgPool1d/2d``, ``AdaptiveMaxPool1d/2d`` and ``Dropout2d``.

Weights and biases are replicated on every worker (the data-parallel default of
``sharded.nn``), so a batch split along N convolves locally and backward sums the weight's
gradient across the workers.
"""

from __future__ import annotations

import math

from ..autograd import no_grad
from ..errors import ArgumentError
from ..layout import Layout
from ..ops.random.prims.counter import rand
from . import functional as F
from .layers import _DropoutNd
from .modules import Module, Parameter

__all__ = [
    "Conv1d",
    "Conv2d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "Dropout2d",
]

_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


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


class _MaxPoolNd(Module):
    _fn = "max_pool2d"

    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (``stride`` defaults to ``kernel_size``).

    Examples
    --------
    >>> import sharded as st
    >>> pool = st.nn.MaxPool2d(2, 2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(st.ones(2, 3, 8, 8)).shape
    sharded.Size([2, 3, 4, 4])
    """

    _fn = "max_pool2d"


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.MaxPool1d(3)(st.ones(2, 3, 9)).shape
    sharded.Size([2, 3, 3])
    """

    _fn = "max_pool1d"


class AvgPool2d(Module):
    """2-D average pooling.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AvgPool2d(2)(st.ones(1, 4, 4)).tolist()
    [[[1.0, 1.0], [1.0, 1.0]]]
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(Module):
    """1-D average pooling.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad,
        )  # fmt: skip

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _Adaptive(Module):
    _fn = "adaptive_avg_pool2d"

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if self._fn.startswith("adaptive_max"):
            self.return_indices = return_indices

    def forward(self, input):
        if self._fn.startswith("adaptive_max"):
            return getattr(F, self._fn)(input, self.output_size, self.return_indices)
        return getattr(F, self._fn)(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_Adaptive):
    """Average pooling to a fixed (H, W) (``None`` keeps a size).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveAvgPool2d((5, 7))(st.ones(2, 3, 10, 9)).shape
    sharded.Size([2, 3, 5, 7])
    """

    _fn = "adaptive_avg_pool2d"

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool1d(_Adaptive):
    """Average pooling to a fixed length.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveAvgPool1d(5)
    AdaptiveAvgPool1d(output_size=5)
    """

    _fn = "adaptive_avg_pool1d"

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveMaxPool2d(_Adaptive):
    """Max pooling to a fixed (H, W).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveMaxPool2d(1)(st.arange(4.).reshape(1, 2, 2)).tolist()
    [[[3.0]]]
    """

    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool1d(_Adaptive):
    """Max pooling to a fixed length.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveMaxPool1d(3)
    AdaptiveMaxPool1d(output_size=3)
    """

    _fn = "adaptive_max_pool1d"


class Dropout2d(_DropoutNd):
    """Zero whole channels (the last two dims together) with probability ``p`` while
    training, scaling the rest by ``1 / (1 - p)`` (the arguments and checks
    of :class:`~sharded.nn.Dropout`).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Dropout2d(0.2)
    Dropout2d(p=0.2, inplace=False)
    >>> st.nn.Dropout2d().eval()(st.ones(1, 2, 2, 2)).shape
    sharded.Size([1, 2, 2, 2])
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
