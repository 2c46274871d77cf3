"""Flatten and Unflatten: reshape layers that merge a range of dims or split one dim.

Both call the layout ops (ops/layout/__init__.py flatten and unflatten), which are views in eager
mode and reshapes in the traced graph.
"""

from __future__ import annotations

from ..ops.layout import flatten, unflatten
from .module import Module

__all__ = ["Flatten", "Unflatten"]


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
