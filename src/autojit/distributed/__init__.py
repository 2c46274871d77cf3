"""autojit.distributed: process groups and collectives over MPI, with torch.distributed's
names, for data-parallel training across processes and machines
(autojit.nn.parallel.DistributedDataParallel is built on it).

Start the processes with MPI's launcher (`mpiexec -n 2 python train.py`, or `python -m
autojit.distributed.run --nproc-per-node 2 train.py`), then call `init_process_group()`. MPI
comes from mpi4py, the extra `autojit[distributed]`, imported only when an MPI group is made:
`import autojit` never loads it, and a plain `python train.py` runs as a world of one process
without it. Collectives run eagerly on tensors' memory, or, inside autojit.compile, as nodes of
the compiled graph (ops/collective.py) that the executable overlaps with the steps after them.
See docs/distributed.md and docs/notes/distributed.md.
"""

from ..ops import collective as _collective_op
from . import nn  # noqa: F401 - autojit.distributed.nn.functional
from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from .p2p import irecv, isend, recv, send
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from .store import HashStore, PrefixStore, Store, TCPStore
from .transport import Transport as _Transport
from .work import DistBackendError, DistError, DistNetworkError, DistStoreError, Work

# The compiled collective's node reaches the process groups through this (docs/notes/layers.md).
_collective_op.TRANSPORT = _Transport()

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "GroupMember", "HashStore", "PrefixStore", "ProcessGroup", "ReduceOp", "Store", "TCPStore",
    "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "all_to_all_single", "barrier", "broadcast",
    "broadcast_object_list", "default_pg_timeout", "destroy_process_group", "gather",
    "gather_object", "get_backend", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
    "irecv", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "isend", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]
