"""Flatten and Unflatten: reshape layers that merge a range of dims or split one dim; and
ChannelShuffle, which interleaves channel groups by a reshape, a transpose and a reshape.

Both call the layout ops (ops/layout.py flatten and unflatten), which are views in eager mode
and reshapes in the traced graph.
"""

from __future__ import annotations

from ..ops.layout import flatten, unflatten
from .module import Module

__all__ = ["Flatten", "Unflatten", "ChannelShuffle"]


class Flatten(Module):
    """Merge dims start_dim..end_dim into one (by default all but the batch dim).

        >>> import autojit
        >>> autojit.nn.Flatten()(autojit.zeros(2, 3, 4)).shape
        autojit.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):  # noqa: A002
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim into the shape unflattened_size (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError(f"invalid argument 'dim': expected an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(size, int) for size in unflattened_size):
            raise TypeError("unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):  # noqa: A002
        return unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# ---- ChannelShuffle ---------------------------------------------------------------------------

class ChannelShuffle(Module):
    """Split the channels (dim 1) into `groups` groups and interleave them (ShuffleNet):
    (N, g, C/g, *) transposed to (N, C/g, g, *)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):  # noqa: A002
        shape = tuple(input.shape)
        if len(shape) <= 2:
            raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                               f"sizes {list(shape)}")
        if self.groups <= 0:
            raise RuntimeError("Number of groups to divide channels in must be positive. Value "
                               f"of groups:{self.groups}")
        if shape[1] % self.groups != 0:
            raise RuntimeError(f"Number of channels must be divisible by groups. Got {shape[1]} "
                               f"channels and {self.groups} groups.")
        grouped = input.reshape(shape[0], self.groups, shape[1] // self.groups, *shape[2:])
        return grouped.transpose(1, 2).reshape(shape)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
