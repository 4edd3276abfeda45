"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``,
``ConvTranspose2d`` and ``ConvTranspose3d``.

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

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
]


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
        self._init_parameters(out_channels, in_channels // groups, bias, device, dtype)

    def _init_parameters(self, dim0, dim1, bias, device, dtype):
        """A (dim0, dim1, *kernel) weight and an (out_channels,) bias; torch's default:
        kaiming_uniform_(a=sqrt(5)) is uniform in +-1/sqrt(fan_in), fan_in = dim1 * kernel
        size, and so is the bias."""
        fan_in = dim1 * math.prod(self.kernel_size)
        bound = 1 / math.sqrt(fan_in) if fan_in else 0.0
        rep, dev = Layout.replicated(), device or "cpu"
        out_channels = self.out_channels
        with no_grad():
            shape = (dim0, dim1) + self.kernel_size
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
        conv = getattr(F, f"conv{self._nd}d")
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


class Conv3d(_ConvNd):
    """3-D convolution layer: weight (out, in/groups, kD, kH, kW) and bias (out,),
    initialised as torch's, replicated; ``padding_mode`` 'zeros', 'reflect', 'replicate' or
    'circular'.

    Examples
    --------
    >>> import sharded as st
    >>> conv = st.nn.Conv3d(2, 4, 3, padding=1, padding_mode="replicate")
    >>> conv
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), padding_mode=replicate)
    >>> conv(st.ones(2, 2, 4, 5, 6)).shape
    sharded.Size([2, 4, 4, 5, 6])
    """

    _nd = 3


class Conv1d(_ConvNd):
    """1-D convolution layer: weight (out, in/groups, k), bias (out,).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Conv1d(4, 6, 3, padding="same")(st.ones(2, 4, 10)).shape
    sharded.Size([2, 6, 10])
    """

    _nd = 1


class _ConvTransposeNd(_ConvNd):
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        if padding_mode != "zeros":
            raise ArgumentError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}, got '
                f"{padding_mode!r}"
            )
        if isinstance(padding, str):
            raise ArgumentError(
                f"{type(self).__name__}: padding must be an int or a tuple, got {padding!r}"
            )
        Module.__init__(self)
        nd = self._nd
        if groups <= 0:
            raise ArgumentError("groups must be a positive integer")
        if in_channels % groups:
            raise ArgumentError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ArgumentError("out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.groups, self.padding_mode = groups, padding_mode
        self.transposed, self.output_padding = True, _ntuple(output_padding, nd)
        # torch's weight is (in, out/groups, *kernel): its fan_in is out/groups * kernel
        self._init_parameters(in_channels, out_channels // groups, bias, device, dtype)

    def _output_padding(self, input, output_size):
        """The output padding that makes the output ``output_size`` (torch's rule: within
        a stride of the smallest output)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        size = list(output_size)[-nd:]
        if len(size) != nd:
            raise ArgumentError(
                f"output_size must have {nd} or {nd + 2} elements (got {len(output_size)})"
            )
        out = []
        for a in range(nd):
            n = input.shape[input.ndim - nd + a]
            lo = ((n - 1) * self.stride[a] - 2 * self.padding[a]
                  + self.dilation[a] * (self.kernel_size[a] - 1) + 1)  # fmt: skip
            hi = lo + self.stride[a] - 1
            if not lo <= size[a] <= hi:
                raise ArgumentError(
                    f"requested an output size of {size}, but valid sizes range from "
                    f"{[lo]} to {[hi]} (for an input of {list(input.shape[-nd:])})"
                )
            out.append(size[a] - lo)
        return tuple(out)

    def forward(self, input, output_size=None):
        fn = getattr(F, f"conv_transpose{self._nd}d")
        opad = self._output_padding(input, output_size)
        return fn(input, self.weight, self.bias, self.stride, self.padding, opad, self.groups,
                  self.dilation)  # fmt: skip

    def extra_repr(self):
        s = super().extra_repr()
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        return s


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution layer: weight (in, out/groups, kH, kW), bias (out,),
    initialised as torch's; ``forward(input, output_size=None)``.

    Examples
    --------
    >>> import sharded as st
    >>> up = st.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
    >>> up
    ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))
    >>> up(st.ones(1, 4, 5, 5)).shape
    sharded.Size([1, 2, 10, 10])
    """

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution layer: weight (in, out/groups, kD, kH, kW), bias (out,);
    ``forward(input, output_size=None)``.

    Examples
    --------
    >>> import sharded as st
    >>> up = st.nn.ConvTranspose3d(4, 2, 2, stride=2)
    >>> up(st.ones(1, 4, 2, 3, 3)).shape
    sharded.Size([1, 2, 4, 6, 6])
    """

    _nd = 3


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution layer: weight (in, out/groups, k), bias (out,).

    Examples
    --------
    >>> import sharded as st
    >>> up = st.nn.ConvTranspose1d(3, 2, 4, stride=2)
    >>> up(st.ones(2, 3, 5), output_size=[13]).shape
    sharded.Size([2, 2, 13])
    """

    _nd = 1
