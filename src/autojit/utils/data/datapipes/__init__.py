"""autojit.utils.data.datapipes: torch's DataPipes, the iterable datasets that chain by name.

An IterDataPipe is an IterableDataset whose registered operations are methods of every pipe
(`dp.batch(4)`, `dp.map(f)`): `functional_datapipe(name)` registers a pipe class under a name
(datapipe.py), and iter/ holds torch's basic pipes (Batcher, Mapper, Filter, IterableWrapper,
ShardingFilter). torch deprecates DataPipes (torchdata took them over); libraries built their
own pipes on these classes (torch_geometric's DatasetAdapter and `batch_graphs`).
"""

from . import iter  # noqa: A004 - torch's module name; registers the basic pipes
from .datapipe import DataChunk, IterDataPipe, MapDataPipe, functional_datapipe

__all__ = ["DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe", "iter"]
