"""Size: a tensor's shape, the tuple torch prints as `torch.Size([2, 3])` (its slices, sums
and repetitions stay Sizes). tensor.py re-exports it with the Tensor it describes."""

from __future__ import annotations

from . import dtypes


class Size(tuple):
    """A shape: a tuple that prints as ``autojit.Size([2, 3])``; a slice of it, a sum with a
    tuple and a repetition are Sizes too, as torch's are."""

    def __repr__(self):
        return f"{dtypes.REPR_PREFIX[0]}.Size({list(self)})"

    def __getitem__(self, index):
        found = tuple.__getitem__(self, index)
        return Size(found) if index.__class__ is slice else found

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, count):
        return Size(tuple.__mul__(self, count))

    __rmul__ = __mul__

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        count = 1
        for extent in self:
            count *= extent
        return count
