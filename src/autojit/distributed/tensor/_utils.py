"""compute_local_shape_and_global_offset: where a process's shard of a DTensor lies in the
whole tensor, torch.distributed.tensor._utils' name that libraries import."""

from __future__ import annotations

from .placement_types import Shard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements) -> tuple:
    """(the shape of this process's shard, its offset in the whole tensor) for a tensor of
    `global_shape` placed on `mesh` by `placements`; a process outside the mesh gets
    ((0,), ())."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,), ()
    shape, offset = list(global_shape), [0] * len(global_shape)
    for mesh_dim, placement in enumerate(placements):
        if isinstance(placement, Shard):
            dim = placement.dim % len(shape) if shape else placement.dim
            size, start = Shard.local_shard_size_and_offset(
                shape[dim], mesh.size(mesh_dim), coordinate[mesh_dim])
            shape[dim] = size
            offset[dim] = global_shape[dim] if size == 0 else offset[dim] + start
    return tuple(shape), tuple(offset)
