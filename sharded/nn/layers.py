"""Layers beyond ``Linear``: dropout, normalization, embedding and activations.

Parameters and buffers are replicated on every worker (the data-parallel default, see
``sharded.nn``), so a row-sharded batch runs its forward locally where it can.
"""

from __future__ import annotations

from .. import dtypes as D
from ..autograd import no_grad
from ..errors import ArgumentError, ShapeError, UnsupportedArgument
from ..layout import Layout
from ..ops.creation.prims import ones, tensor, zeros
from ..ops.random.prims.counter import randn
from . import functional as F
from .modules import Module, Parameter

__all__ = [
    "Identity",
    "Flatten",
    "Dropout",
    "LayerNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "Embedding",
    "GELU",
    "SiLU",
    "Softmax",
    "LogSoftmax",
]


def _rep(fn, shape, dtype, device=None):
    return fn(*shape, dtype=dtype, layout=Layout.replicated(), device=device or "cpu")


class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as in torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Identity(54, unused="x")(st.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """``input.flatten(start_dim, end_dim)``, by default keeping the batch dim.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Flatten()(st.ones(2, 3, 4)).shape
    sharded.Size([2, 12])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


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
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise UnsupportedArgument(
                "Embedding: max_norm, scale_grad_by_freq and sparse are not supported "
                f"(got {max_norm}, {scale_grad_by_freq}, {sparse})"
            )
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ArgumentError(
                    f"Padding_idx {padding_idx} must be within num_embeddings {num_embeddings}"
                )
            padding_idx = padding_idx % num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        with no_grad():
            if _weight is None:
                w = _rep(randn, (num_embeddings, embedding_dim), dtype, device)
                if padding_idx is not None:
                    w[padding_idx] = 0.0
            else:
                if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                    raise ArgumentError(
                        f"Shape of weight {list(_weight.shape)} does not match num_embeddings "
                        f"and embedding_dim ({num_embeddings}, {embedding_dim})"
                    )
                w = _weight.detach()
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
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        pad = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class GELU(Module):
    """Gaussian error linear unit, exact (``approximate='none'``) or tanh-approximated.

    Examples
    --------
    >>> import sharded as st
    >>> round(st.nn.GELU("tanh")(st.tensor(1.0)).item(), 6)
    0.841192
    """

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ArgumentError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.SiLU()(st.tensor([0.0])).tolist()
    [0.0]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, self.inplace)


class Softmax(Module):
    """Softmax along ``dim``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Softmax(dim=1)(st.zeros(1, 4)).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, _implicit_dim(self.dim, input))

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log of the softmax along ``dim`` (stable).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.LogSoftmax(dim=0)(st.tensor([1000., 1000.])).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, _implicit_dim(self.dim, input))

    def extra_repr(self):
        return f"dim={self.dim}"


def _implicit_dim(dim, input):
    """torch's legacy choice when ``dim`` is None: 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1
