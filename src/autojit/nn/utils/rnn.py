"""Variable-length sequences for the recurrent layers: PackedSequence and the functions that
pack, pad and unpack, with torch.nn.utils.rnn's names, arguments and layouts.

A PackedSequence holds the time steps of a batch of sequences one after the other, each step
keeping only the sequences still running: `data` is (sum of lengths, *), `batch_sizes[t]` the
number of sequences at step t, and the sequences are sorted by decreasing length
(`sorted_indices`, with `unsorted_indices` to undo it). The recurrent layers (nn/rnn.py) take
one and return one. Lengths are host data (a list, or a CPU tensor), as in torch; the rows are
gathered with index_select, so packing and padding are differentiable.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...ops.indexing import index_select
from ...ops.layout import cat, stack
from ...tensor.creation import arange, as_tensor, empty_like, full
from ...tensor.tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


class PackedSequence(NamedTuple):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as torch's."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args, **kwargs) -> PackedSequence:
        """The same packing with `data` converted (dtype or device)."""
        return self._replace(data=self.data.to(*args, **kwargs))

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _lengths(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.is_cuda:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got 1D "
                               "cuda Long tensor")
        lengths = lengths._concrete("pack_padded_sequence(lengths)")
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _indices(order: np.ndarray, device) -> Tensor:
    return as_tensor(np.ascontiguousarray(order, dtype=np.int64), device=device)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of
    `lengths`; with enforce_sorted, the lengths must be decreasing."""
    lengths = _lengths(lengths)
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = unsorted_indices = None
        order = np.arange(len(lengths))
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = _indices(order, input.device)
        unsorted_indices = _indices(np.argsort(order, kind="stable"), input.device)
    if np.any(lengths <= 0):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)  # noqa: A001
    if lengths.max() > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to "
                           f"{int(lengths.max())}, but got {input.shape[0]}")
    if sorted_indices is not None:
        input = index_select(input, 1, sorted_indices)  # noqa: A001
    sorted_lengths = lengths[order]
    steps, batch_sizes = [], []
    for step in range(int(sorted_lengths[0])):
        size = int(np.sum(sorted_lengths > step))
        steps.append(input[step, :size])
        batch_sizes.append(size)
    # batch_sizes stays on the host, as torch's does whatever the data's device.
    return PackedSequence(cat(steps, 0), as_tensor(np.array(batch_sizes, dtype=np.int64)),
                          sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """(padded, lengths): the inverse of pack_padded_sequence; `total_length` pads the time
    dimension to that length."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = batch_sizes[0]
    rows, offset = [], 0
    for step in range(steps):
        size = batch_sizes[step] if step < len(batch_sizes) else 0
        part = data[offset:offset + size]
        offset += size
        if size < batch:
            filler = full((batch - size, *data.shape[1:]), padding_value, dtype=data.dtype,
                          device=data.device)
            part = cat([part, filler], 0)
        rows.append(part)
    padded = stack(rows, 0)
    lengths = np.array([sum(1 for size in batch_sizes if size > index) for index in range(batch)],
                       dtype=np.int64)
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.tolist()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, as_tensor(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padded."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    sequences = list(sequences)
    longest = max(int(sequence.shape[0]) for sequence in sequences)
    padded = []
    for sequence in sequences:
        missing = longest - int(sequence.shape[0])
        if missing:
            filler = full((missing, *sequence.shape[1:]), padding_value, dtype=sequence.dtype,
                          device=sequence.device)
            parts = [sequence, filler] if padding_side == "right" else [filler, sequence]
            sequence = cat(parts, 0)
        padded.append(sequence)
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shape (L_i, *)."""
    lengths = [int(sequence.shape[0]) for sequence in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[index, :length]
            for index, length in enumerate(_lengths(lengths).tolist())]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The sequences of a PackedSequence, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-D permutation of indices (a PackedSequence's sorted_indices to its
    unsorted_indices), or None for None, as torch's."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    return output.scatter_(0, permutation, arange(0, permutation.numel(),
                                                  device=permutation.device))
