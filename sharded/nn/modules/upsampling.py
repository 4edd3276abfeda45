"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize to ``size`` or by ``scale_factor`` with ``F.interpolate``'s modes.

    Examples
    --------
    >>> import sharded as st
    >>> up = st.nn.Upsample(scale_factor=2, mode="bilinear")
    >>> up(st.ones(1, 1, 2, 3)).shape
    sharded.Size([1, 1, 4, 6])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):  # fmt: skip
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, int) else scale_factor
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(
            input, self.size, self.scale_factor, self.mode, self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )  # fmt: skip

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample`` in mode ``nearest`` (deprecated in torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.UpsamplingNearest2d(scale_factor=2)(st.ones(1, 1, 2, 2)).shape
    sharded.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample`` in mode ``bilinear`` with ``align_corners=True`` (deprecated in torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.UpsamplingBilinear2d(size=(3, 3))(st.ones(1, 1, 2, 2)).shape
    sharded.Size([1, 1, 3, 3])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
