"""DistributedSampler, at torch.utils.data.distributed's path: each of `num_replicas`
processes reads its own share of a dataset.

`num_replicas` and `rank` default to the world size and this process's rank in the default
process group (autojit.distributed), as torch's read them from torch.distributed; without an
initialized group, leaving them out is torch's error. The order is one permutation per epoch
drawn from a NumPy generator seeded with `seed + epoch`, the same in every replica; it is
padded by repeating its start (or cut, with `drop_last`) to a multiple of `num_replicas`, and
replica `rank` takes every `num_replicas`-th index from position `rank`, as torch's does.
"""

from __future__ import annotations

import math

from ...tensor.generator import Generator
from ._utils import permutation
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of replica `rank` out of `num_replicas`; call `set_epoch(epoch)` before each
    epoch so that a shuffled order changes from one epoch to the next.

    >>> from autojit.utils.data import DistributedSampler
    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=rank, shuffle=False))
    ...  for rank in range(2)]
    [[0, 2, 4], [1, 3, 0]]
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        size = len(self.dataset)
        if self.shuffle:
            # torch's: randperm from a generator seeded with seed + epoch.
            indices = permutation(Generator().manual_seed(self.seed + self.epoch), size)
        else:
            indices = list(range(size))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which seeds the shuffled order together with `seed`."""
        self.epoch = epoch
