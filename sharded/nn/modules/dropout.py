"""Dropout layers: ``Dropout``, ``Dropout2d``, ``Dropout3d``, ``AlphaDropout`` and
``FeatureAlphaDropout``."""

from __future__ import annotations

from ...errors import ArgumentError
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """The arguments, checks and repr that the dropout modules share (torch's
    ``_DropoutNd``: ``Dropout2d`` is not a ``Dropout``)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ArgumentError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability ``p`` while training, scaling the rest by
    ``1 / (1 - p)``; the identity in ``eval()`` mode. Masks are counter-based: the same for
    any sharding after ``st.manual_seed``.

    Examples
    --------
    >>> import sharded as st
    >>> d = st.nn.Dropout(0.25).eval()
    >>> d(st.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


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


class Dropout3d(_DropoutNd):
    """Zero whole channels (the last three dims together) of (C, D, H, W) or
    (N, C, D, H, W) inputs with probability ``p`` while training, scaling the rest by
    ``1 / (1 - p)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Dropout3d().eval()(st.ones(1, 2, 2, 2, 2)).shape
    sharded.Size([1, 2, 2, 2, 2])
    """

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout for self-normalizing (selu) networks while training: dropped elements
    take selu's negative saturation and an affine map keeps the mean and variance.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AlphaDropout(0.2).eval()(st.ones(2)).tolist()
    [1.0, 1.0]
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """:class:`AlphaDropout` of whole channels (one draw per (N, C) entry).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.FeatureAlphaDropout(0.2).eval()(st.ones(1, 2, 3)).shape
    sharded.Size([1, 2, 3])
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
