"""Packed sequences (``st.nn.utils.rnn``), as torch's: a batch of sequences of different
lengths stored time-major without padding, which the recurrent layers accept.

Packing and unpacking are one gather each (``index_select`` on the flattened input, so
autograd flows through them and any sharding of the input works): the indices are computed
on the driver from the lengths, which are host values, as in torch (CPU ``lengths``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...errors import ArgumentError, ShapeError
from ...ops.creation.prims import full, tensor
from ...ops.index.prims.index_ops import index_select
from ...ops.shape.prims.joining import cat, stack
from ...tensor import ShardedTensor

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "pack_sequence",
]


class PackedSequence(NamedTuple):
    """Sequences packed time-major: ``data`` holds, for each time step, the elements of the
    sequences still running (longest first), ``batch_sizes`` how many run at each step;
    ``sorted_indices`` / ``unsorted_indices`` map between the caller's batch order and the
    sorted one (``None`` when the input was already sorted).

    Examples
    --------
    >>> import sharded as st
    >>> p = st.nn.utils.rnn.pack_padded_sequence(st.ones(3, 2, 1), [3, 1])
    >>> p.data.shape, p.batch_sizes.tolist()
    (sharded.Size([4, 1]), [2, 1, 1])
    """

    data: ShardedTensor
    batch_sizes: ShardedTensor
    sorted_indices: ShardedTensor | None = None
    unsorted_indices: ShardedTensor | None = None

    def to(self, *args, **kwargs):
        """The same sequences with ``data`` converted (``Tensor.to``'s arguments)."""
        return self._replace(data=self.data.to(*args, **kwargs))

    def double(self):
        """``data`` as float64."""
        return self.to(dtype="float64")

    def float(self):
        """``data`` as float32."""
        return self.to(dtype="float32")

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _host(values, what) -> np.ndarray:
    """``values`` (a list, array or tensor) as a 1-D int64 NumPy array."""
    a = values.numpy() if isinstance(values, ShardedTensor) else np.asarray(values)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise ArgumentError(f"{what} must be a 1-D sequence of integers, got {a.tolist()!r}")
    return a.astype(np.int64)


def _order(p: PackedSequence):
    """``(batch_sizes, sorted, unsorted)`` of ``p`` as NumPy arrays (identity orders when
    ``p`` was packed sorted)."""
    bs = _host(p.batch_sizes, "batch_sizes")
    n = int(bs[0]) if bs.size else 0
    if p.sorted_indices is None:
        ident = np.arange(n)
        return bs, ident, ident
    return bs, _host(p.sorted_indices, "sorted_indices"), _host(p.unsorted_indices, "unsorted")


def _packed_rows(bs: np.ndarray, order: np.ndarray, stride_t: int, stride_b: int) -> np.ndarray:
    """For each row of packed data (time ``t``, sorted position ``j``), the flat index
    ``t * stride_t + order[j] * stride_b`` of its element in a padded input."""
    return np.concatenate(
        [t * stride_t + order[: int(b)] * stride_b for t, b in enumerate(bs)] or [np.zeros(0, int)]
    )


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``input`` (``(T, B, *)``, or ``(B, T, *)`` when ``batch_first``)
    of sequences of ``lengths``; with ``enforce_sorted=False`` the lengths may come in any
    order (the batch is sorted longest first and the order kept to undo it).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])  # batch_first, lengths 3 and 2
    >>> p = st.nn.utils.rnn.pack_padded_sequence(x, [3, 2], batch_first=True)
    >>> p.data.tolist(), p.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
    """
    lens = _host(lengths, "lengths")
    if input.dim() < 2:
        raise ShapeError(
            f"pack_padded_sequence: input must have at least 2 dims, got {input.dim()}"
        )
    T, B = (input.shape[1], input.shape[0]) if batch_first else tuple(input.shape[:2])
    if lens.size != B:
        raise ShapeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
            f"(batch_size={B})"
        )
    if B and lens.min() <= 0:
        raise ArgumentError(
            "Length of all samples has to be greater than 0, but found an element in "
            f"'lengths' that is <= 0: {lens.tolist()}"
        )
    if B and lens.max() > T:
        raise ShapeError(f"lengths {lens.tolist()} exceed the input's {T} time steps")
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise ArgumentError(
                f"`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                f"True (got {lens.tolist()}). You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement."
            )
        order, sorted_t, unsorted_t = np.arange(B), None, None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_t, unsorted_t = tensor(order), tensor(np.argsort(order))
    bs = (lens[order][None, :] > np.arange(T)[:, None]).sum(1)
    bs = bs[bs > 0]
    rows = _packed_rows(bs, order, 1 if batch_first else B, T if batch_first else 1)
    flat = input.reshape(T * B, *input.shape[2:])
    data = index_select(flat, 0, tensor(rows))
    return PackedSequence(data, tensor(bs), sorted_t, unsorted_t)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)`` with the sequences in the
    caller's order, padded with ``padding_value`` to ``total_length`` steps (default: the
    longest).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    >>> p = st.nn.utils.rnn.pack_padded_sequence(x, [3, 2], batch_first=True)
    >>> y, lengths = st.nn.utils.rnn.pad_packed_sequence(p, batch_first=True, padding_value=-1)
    >>> y.tolist(), lengths.tolist()
    ([[1.0, 2.0, 3.0], [4.0, 5.0, -1.0]], [3, 2])
    """
    bs, _, unsorted = _order(sequence)
    T = len(bs)
    if total_length is not None:
        if total_length < T:
            raise ArgumentError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being {T}"
            )
        T = total_length
    padded = _padded(sequence.data, bs, unsorted, T, batch_first, padding_value)
    lens = (bs[None, :] > np.arange(bs[0] if bs.size else 0)[:, None]).sum(1)
    return padded, tensor(lens[unsorted])


def _padded(data, bs, order, T, batch_first=False, padding_value=0.0):
    """The packed ``data`` as a padded ``(T, B, *)`` (``(B, T, *)`` when ``batch_first``)
    tensor whose batch entry ``b`` is packed position ``order[b]``: one gather from ``data``
    with a padding row appended."""
    n = data.shape[0]
    starts = np.concatenate([[0], np.cumsum(bs)[:-1]]).astype(np.int64)
    t = np.arange(T)[:, None]
    run = np.concatenate([bs, np.zeros(T - len(bs), np.int64)])[:, None] > order[None, :]
    src = np.where(run, np.concatenate([starts, np.zeros(T - len(bs), np.int64)])[t] + order, n)
    src = src.T if batch_first else src
    pad = full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    rows = index_select(cat([data, pad]), 0, tensor(src.ravel()))
    return rows.reshape(*src.shape, *data.shape[1:])


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` when
    ``batch_first``), padding each to the longest with ``padding_value`` on
    ``padding_side``.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.utils.rnn.pad_sequence([st.ones(2), st.ones(1)], batch_first=True).tolist()
    [[1.0, 1.0], [1.0, 0.0]]
    """
    if padding_side not in ("left", "right"):
        raise ArgumentError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    if not sequences:
        raise ArgumentError("pad_sequence: received an empty list of sequences")
    T = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        gap = T - s.shape[0]
        if gap:
            pad = full((gap, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = cat([s, pad] if padding_side == "right" else [pad, s])
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shapes ``(L_i, *)`` (``pad_sequence`` then
    ``pack_padded_sequence``).

    Examples
    --------
    >>> import sharded as st
    >>> p = st.nn.utils.rnn.pack_sequence([st.ones(3), st.ones(2)])
    >>> p.batch_sizes.tolist()
    [2, 2, 1]
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)
