from typing import Any, NamedTuple

from sharded.tensor import ShardedTensor

class PackedSequence(NamedTuple):
    data: ShardedTensor
    batch_sizes: ShardedTensor
    sorted_indices: ShardedTensor
    unsorted_indices: ShardedTensor

def pack_padded_sequence(input, lengths, batch_first=..., enforce_sorted=...) -> PackedSequence:
    """Pack a padded batch ``input`` (``(T, B, *)``, or ``(B, T, *)`` when ``batch_first``) of
    sequences of ``lengths``; with ``enforce_sorted=False`` the lengths may come in any order
    (the batch is sorted longest first and the order kept to undo it)."""

def pack_sequence(sequences, enforce_sorted=...) -> Any:
    """Pack a list of tensors of shapes ``(L_i, *)`` (``pad_sequence`` then
    ``pack_padded_sequence``)."""

def pad_packed_sequence(sequence, batch_first=..., padding_value=..., total_length=...) -> Any:
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)`` with the sequences in the
    caller's order, padded with ``padding_value`` to ``total_length`` steps (default: the
    longest)."""

def pad_sequence(sequences, batch_first=..., padding_value=..., padding_side=...) -> Any:
    """Stack tensors of shapes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` when
    ``batch_first``), padding each to the longest with ``padding_value`` on ``padding_side``."""
