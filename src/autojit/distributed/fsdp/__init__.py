"""autojit.distributed.fsdp: torch.distributed.fsdp's names, so that libraries which import
them load. The policies are torch's data classes; sharding itself (fully_shard,
FullyShardedDataParallel) is not built, and using it raises NotImplementedError naming what
to use instead: DistributedDataParallel, or DTensor's distribute_tensor (docs/drop-in.md).
"""

from __future__ import annotations

import dataclasses
import enum

__all__ = ["BackwardPrefetch", "CPUOffload", "CPUOffloadPolicy", "FSDPModule",
           "FullStateDictConfig", "FullyShardedDataParallel", "MixedPrecision",
           "MixedPrecisionPolicy", "OffloadPolicy", "ShardingStrategy", "StateDictType",
           "fully_shard"]

_NOT_BUILT = ("autojit has no fully sharded data parallelism: use "
              "autojit.nn.parallel.DistributedDataParallel, or shard tensors with "
              "autojit.distributed.tensor.distribute_tensor (docs/drop-in.md)")


class ShardingStrategy(enum.Enum):
    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class BackwardPrefetch(enum.Enum):
    BACKWARD_PRE = enum.auto()
    BACKWARD_POST = enum.auto()


class StateDictType(enum.Enum):
    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


@dataclasses.dataclass
class FullStateDictConfig:
    offload_to_cpu: bool = False
    rank0_only: bool = False


@dataclasses.dataclass
class MixedPrecision:
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True


@dataclasses.dataclass
class CPUOffload:
    offload_params: bool = False


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclasses.dataclass
class OffloadPolicy:
    pass


@dataclasses.dataclass
class CPUOffloadPolicy(OffloadPolicy):
    pin_memory: bool = True


class FSDPModule:
    """The class fully_shard would mix into a module's (no module is one here)."""


class FullyShardedDataParallel:
    """Not built: making one raises NotImplementedError (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_NOT_BUILT)


def fully_shard(module, *args, **kwargs):
    """Not built: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(_NOT_BUILT)
