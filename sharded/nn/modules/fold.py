"""``Fold`` and ``Unfold``: sliding blocks (col2im and im2col)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Combine sliding blocks (N, C kH kW, L) into (N, C, *output_size), summing overlaps.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Fold(output_size=(4, 5), kernel_size=(2, 2))(st.ones(1, 12, 12)).shape
    sharded.Size([1, 3, 4, 5])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)  # fmt: skip

    def extra_repr(self):
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Extract sliding blocks: (N, C, H, W) to (N, C kH kW, L).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Unfold(kernel_size=(2, 3))(st.ones(2, 5, 3, 4)).shape
    sharded.Size([2, 30, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
