"""autojit.utils.data: datasets, samplers and the DataLoader, at torch.utils.data's module paths.

Data enters a training step here: a Dataset maps an index to a sample (dataset.py), a sampler
orders the indices (sampler.py, distributed.py), and the DataLoader (dataloader.py) reads and
collates them into batches (_utils/collate.py), in the calling process or in worker processes
(_utils/worker.py). The modules are split as torch's are, so that an import such as
`from autojit.utils.data.dataloader import DataLoader` works where torch code has
`torch.utils.data.dataloader`.
"""

from ._utils.collate import default_collate, default_convert
from ._utils.worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .datapipes.datapipe import DataChunk, IterDataPipe, MapDataPipe, functional_datapipe
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DistributedSampler", "default_collate", "default_convert", "DataLoader",
           "get_worker_info", "WorkerInfo", "IterDataPipe", "MapDataPipe", "DataChunk",
           "functional_datapipe"]
