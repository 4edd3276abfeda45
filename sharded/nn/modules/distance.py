"""``CosineSimilarity`` and ``PairwiseDistance`` of two inputs."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.CosineSimilarity(dim=0)(st.tensor([1., 0.]), st.tensor([2., 0.])).item()
    1.0
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dim.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.PairwiseDistance(eps=0.0)(st.tensor([[0., 0.]]), st.tensor([[3., 4.]])).tolist()
    [5.0]
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
