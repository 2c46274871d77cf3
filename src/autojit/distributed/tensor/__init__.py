"""autojit.distributed.tensor: DTensor, a tensor placed on a DeviceMesh by Shard, Replicate
and Partial placements, with torch.distributed.tensor's names (dtensor.py has what it
computes)."""

from ..device_mesh import DeviceMesh, init_device_mesh
from . import placement_types
from .dtensor import DTensor, distribute_tensor
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "Partial", "Placement", "Replicate", "Shard",
           "distribute_tensor", "init_device_mesh", "placement_types"]
