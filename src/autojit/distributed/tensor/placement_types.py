"""The placements of a DTensor along each mesh dimension, torch.distributed.tensor's names:
Shard(dim) splits a tensor dimension into chunks, one per process (the first ones one element
longer where it does not divide, as torch.chunk gives them); Replicate keeps a whole copy on
each process; Partial holds, on each, a part that the reduction of all of them makes whole.
"""

from __future__ import annotations

__all__ = ["Partial", "Placement", "Replicate", "Shard"]


class Placement:
    """The base of the placements."""

    def is_shard(self, dim: int | None = None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return False


class Shard(Placement):
    """Tensor dimension `dim` split in chunks across the mesh dimension's processes."""

    def __init__(self, dim: int):
        self.dim = dim

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size: int, num_chunks: int,
                                    rank: int) -> tuple[int, int]:
        """(the size, the start) of process `rank`'s chunk of a dimension of
        `curr_local_size` split in `num_chunks` (torch.chunk's sizes: the full chunk is the
        size divided by the chunks, rounded up; the last ones may be shorter or empty)."""
        full = -(-curr_local_size // num_chunks)
        start = full * rank
        if start > curr_local_size:
            return 0, curr_local_size
        return min(curr_local_size, start + full) - start, start

    _local_shard_size_and_offset = local_shard_size_and_offset

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash((type(self), self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"


class _StridedShard(Shard):
    """A Shard whose chunks are each split again `split_factor` ways, interleaved (torch's
    placement for a dimension sharded on two mesh dimensions, right one first)."""

    def __init__(self, dim: int, split_factor: int):
        super().__init__(dim)
        self.split_factor = split_factor

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and (other.dim, other.split_factor) == (
            self.dim, self.split_factor)

    def __hash__(self) -> int:
        return hash((type(self), self.dim, self.split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"


class Replicate(Placement):
    """A whole copy on each process of the mesh dimension."""

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


class Partial(Placement):
    """On each process a part; the whole is their reduction by `reduce_op` ("sum", "avg",
    "max" or "min")."""

    def __init__(self, reduce_op: str = "sum"):
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.reduce_op == self.reduce_op

    def __hash__(self) -> int:
        return hash((type(self), self.reduce_op))

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"
