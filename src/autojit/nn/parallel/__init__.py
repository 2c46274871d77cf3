"""autojit.nn.parallel: data parallelism across processes, at torch.nn.parallel's path:
DistributedDataParallel (distributed.py) and the gradient reducer behind it (reducer.py), on
autojit.distributed's process groups."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
