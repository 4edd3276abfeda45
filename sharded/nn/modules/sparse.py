"""``Embedding`` and ``EmbeddingBag``: lookup tables of vectors, replicated on every
worker."""

from __future__ import annotations

from ...autograd import no_grad
from ...errors import ArgumentError, ShapeError
from ...ops.random.prims.counter import randn
from .. import functional as F
from .module import Module, Parameter
from .utils import _rep

__all__ = ["Embedding", "EmbeddingBag"]


def _table(name, num_embeddings, embedding_dim, padding_idx, _weight, dtype, device):
    """``(padding_idx, weight)`` of a lookup table: ``padding_idx`` checked and made
    non-negative (``name``: how torch's message spells it for the layer), the weight
    ``_weight`` (checked) or drawn from N(0, 1), its padding row zero."""
    if padding_idx is not None:
        if not -num_embeddings <= padding_idx < num_embeddings:
            raise ArgumentError(
                f"{name} {padding_idx} must be within num_embeddings {num_embeddings}"
            )
        padding_idx = padding_idx % num_embeddings
    with no_grad():
        if _weight is None:
            w = _rep(randn, (num_embeddings, embedding_dim), dtype, device)
            if padding_idx is not None:
                w[padding_idx] = 0.0
            return padding_idx, w
    if tuple(_weight.shape) != (num_embeddings, embedding_dim):
        raise ArgumentError(
            f"Shape of weight {list(_weight.shape)} does not match num_embeddings "
            f"and embedding_dim ({num_embeddings}, {embedding_dim})"
        )
    return padding_idx, _weight.detach()


def _norm_repr(m) -> str:
    """torch's repr of the non-default ``max_norm``, ``norm_type``, ``scale_grad_by_freq``."""
    s = "" if m.max_norm is None else f", max_norm={m.max_norm}"
    s += "" if m.norm_type == 2 else f", norm_type={m.norm_type}"
    return s + (", scale_grad_by_freq=True" if m.scale_grad_by_freq else "")


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``, initialised
    from N(0, 1) (the ``padding_idx`` row zero, and it gets no gradient).

    Examples
    --------
    >>> import sharded as st
    >>> emb = st.nn.Embedding(10, 3, padding_idx=0)
    >>> emb(st.tensor([[0, 4], [4, 9]])).shape
    sharded.Size([2, 2, 3])
    >>> emb.weight[0].tolist()
    [0.0, 0.0, 0.0]
    """

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        _freeze=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        padding_idx, w = _table(
            "Padding_idx", num_embeddings, embedding_dim, padding_idx, _weight, dtype, device
        )
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight = Parameter(w, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):  # fmt: skip
        """An Embedding whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.ndim != 2:
            raise ShapeError(
                f"Embeddings parameter is expected to be 2-dimensional, got {embeddings.ndim}"
            )
        n, d = embeddings.shape
        return cls(n, d, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)  # fmt: skip

    def forward(self, input):
        return F.embedding(
            input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.sparse,
        )  # fmt: skip

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s + _norm_repr(self)


class EmbeddingBag(Module):
    """Sums, means or maxima (``mode``) of bags of rows of a ``num_embeddings`` by
    ``embedding_dim`` table initialised from N(0, 1) (the ``padding_idx`` row zero);
    ``forward(input, offsets=None, per_sample_weights=None)`` as ``F.embedding_bag``.

    Examples
    --------
    >>> import sharded as st
    >>> bag = st.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag
    EmbeddingBag(10, 3, mode='sum')
    >>> bag(st.tensor([1, 2, 4, 5, 4]), st.tensor([0, 2])).shape
    sharded.Size([2, 3])
    """

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        mode="mean",
        sparse=False,
        _weight=None,
        include_last_offset=False,
        padding_idx=None,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if scale_grad_by_freq and mode == "max":
            raise ArgumentError("max mode does not support scaling the gradient by the frequency")
        if mode not in ("sum", "mean", "max"):
            raise ArgumentError(f"mode has to be one of sum, mean or max, got {mode!r}")
        padding_idx, w = _table(
            "padding_idx", num_embeddings, embedding_dim, padding_idx, _weight, dtype, device
        )
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.mode, self.include_last_offset = mode, include_last_offset
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight = Parameter(w)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):  # fmt: skip
        """An EmbeddingBag whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.ndim != 2:
            raise ShapeError(
                f"Embeddings parameter is expected to be 2-dimensional, got {embeddings.ndim}"
            )
        n, d = embeddings.shape
        bag = cls(n, d, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)  # fmt: skip
        bag.weight.requires_grad_(not freeze)
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(
            input, self.weight, offsets, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.mode, self.sparse,
            per_sample_weights=per_sample_weights,
            include_last_offset=self.include_last_offset, padding_idx=self.padding_idx,
        )  # fmt: skip

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}{_norm_repr(self)}, mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
