"""autojit.nn.parallel: data parallelism at torch.nn.parallel's path: DistributedDataParallel
across processes (distributed.py, with the gradient reducer behind it, reducer.py, on
autojit.distributed's process groups), and DataParallel within one process
(nn/data_parallel.py), and the splitting and joining it does (scatter_gather.py)."""

from ..data_parallel import DataParallel
from . import scatter_gather  # noqa: F401
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
