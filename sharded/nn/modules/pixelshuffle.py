"""``PixelShuffle``, ``PixelUnshuffle`` and ``ChannelShuffle``."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """(*, C r², H, W) to (*, C, H r, W r) with ``r = upscale_factor``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.PixelShuffle(3)(st.ones(1, 9, 4, 4)).shape
    sharded.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) to (*, C r², H, W) with ``r = downscale_factor``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.PixelUnshuffle(3)(st.ones(1, 1, 12, 12)).shape
    sharded.Size([1, 9, 4, 4])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """(N, C, *) with its channels seen as (groups, C / groups) and transposed.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.ChannelShuffle(2)(st.arange(4.).reshape(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
