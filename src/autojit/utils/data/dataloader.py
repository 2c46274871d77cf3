"""autojit.utils.data: datasets, samplers and the DataLoader that feeds a training loop.

Data enters a training step here: a Dataset maps an index to a sample, a sampler orders the
indices (sequentially, or shuffled by a NumPy generator), and the DataLoader groups them into
batches and collates each batch into stacked tensors, which the step then consumes eagerly or
as the arguments of a compiled function. Nothing here records autograd history.

Shuffling draws from `generator` when one is given (a `numpy.random.Generator`, as autojit's
random functions take), else from autojit's global generator, so `autojit.manual_seed(seed)`
makes the order of every epoch reproducible.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ...ops.functional import stack
from ...tensor import dtypes
from ...tensor.creation import as_tensor, default_generator, tensor
from ...tensor.tensor import Tensor

# ---- datasets ---------------------------------------------------------------------------------

class Dataset:
    """A map-style dataset: subclasses define __getitem__(index) and __len__()."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} does not implement __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the index-th rows of each tensor, as a tuple.

    >>> import autojit
    >>> from autojit.utils.data import TensorDataset
    >>> dataset = TensorDataset(autojit.arange(3.0), autojit.tensor([10, 20, 30]))
    >>> len(dataset), dataset[1]
    (3, (tensor(1.), tensor(20)))
    """

    def __init__(self, *tensors: Tensor):
        if any(tensors[0].shape[0] != item.shape[0] for item in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(item[index] for item in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices: Sequence[int]):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(np.cumsum([len(dataset) for dataset in self.datasets]))

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = int(np.searchsorted(self.cumulative_sizes, index, side="right"))
        start = 0 if which == 0 else int(self.cumulative_sizes[which - 1])
        return self.datasets[which][index - start]


def random_split(dataset, lengths: Sequence, generator=None) -> list[Subset]:
    """Split into non-overlapping Subsets of the given lengths (or fractions summing to 1)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(len(dataset) * fraction)) for fraction in lengths]
        for index in range(len(dataset) - sum(counts)):  # the remainder, round-robin
            counts[index % len(counts)] += 1
        lengths = counts
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _generator(generator).permutation(sum(lengths)).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets


# ---- samplers ---------------------------------------------------------------------------------

def _generator(generator) -> np.random.Generator:
    if generator is None:
        return default_generator()
    if not isinstance(generator, np.random.Generator):
        raise TypeError("generator must be a numpy.random.Generator (for example "
                        f"numpy.random.default_rng(seed)), got {type(generator).__name__}")
    return generator


class Sampler:
    """Yields dataset indices; subclasses define __iter__ and usually __len__."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation of the indices on each pass, drawn from `generator`."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _generator(generator)  # reject a wrong generator now, not on the first pass
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got replacement="
                            f"{replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        rng = _generator(self.generator)
        size = len(self.data_source)
        if self.replacement:
            return iter(rng.integers(0, size, self.num_samples).tolist())
        rounds = -(-self.num_samples // size)
        order = np.concatenate([rng.permutation(size) for _ in range(rounds)])
        return iter(order[:self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last may be shorter)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return -(-len(self.sampler) // self.batch_size)


# ---- collation --------------------------------------------------------------------------------

def default_collate(batch: list):
    """Stack a list of samples into a batch: tensors and NumPy arrays are stacked along a new
    first dimension, numbers become a 1-d tensor (float64, int64 or bool), and tuples, lists
    and dicts are collated field by field (a tuple or list gives a list).

    >>> import autojit
    >>> from autojit.utils.data import default_collate
    >>> default_collate([(autojit.ones(2), 1), (autojit.zeros(2), 2)])
    [tensor([[1., 1.],
            [0., 0.]]), tensor([1, 2])]
    """
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if isinstance(first, np.ndarray):
        return stack([as_tensor(item) for item in batch])
    if isinstance(first, (bool, np.bool_)):
        return tensor([bool(item) for item in batch])
    if isinstance(first, numbers.Integral):
        return tensor([int(item) for item in batch])
    if isinstance(first, numbers.Real):
        return tensor([float(item) for item in batch], dtype=dtypes.float64)
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, Mapping):
        return {key: default_collate([item[key] for item in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple keeps its type
        return type(first)(*(default_collate(list(items)) for items in zip(*batch, strict=True)))
    if isinstance(first, Sequence):
        if any(len(item) != len(first) for item in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(items)) for items in zip(*batch, strict=True)]
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(first)}")


def default_convert(sample):
    """What a DataLoader with batch_size=None yields: NumPy arrays become tensors, tuples lists."""
    if isinstance(sample, np.ndarray):
        return as_tensor(sample)
    if isinstance(sample, Mapping):
        return {key: default_convert(value) for key, value in sample.items()}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(default_convert(item) for item in sample))
    if isinstance(sample, (list, tuple)):
        return [default_convert(item) for item in sample]
    return sample


# ---- the loader -------------------------------------------------------------------------------

class DataLoader:
    """Iterates over a dataset in batches.

    `DataLoader(dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
    collate_fn=None, drop_last=False, generator=None)`: each pass yields `len(loader)` batches
    collated by `collate_fn` (default_collate). `shuffle=True` reorders the samples on every
    pass, drawing from `generator` (a numpy.random.Generator) or autojit's global generator.
    Loading happens in the calling thread (there are no worker processes).

    >>> import autojit
    >>> from autojit.utils.data import DataLoader, TensorDataset
    >>> dataset = TensorDataset(autojit.arange(5.0), autojit.arange(5))
    >>> loader = DataLoader(dataset, batch_size=2)
    >>> len(loader), [labels.tolist() for _, labels in loader]
    (3, [[0, 1], [2, 3], [4]])
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, generator=None):
        if num_workers != 0:
            raise ValueError("DataLoader: num_workers must be 0; autojit loads batches in the "
                             "calling process")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self):
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        # A TensorDataset batch is one gather per tensor, the same result as stacking rows.
        whole_rows = isinstance(self.dataset, TensorDataset) and \
            self.collate_fn is default_collate
        for indices in self.batch_sampler:
            if whole_rows:
                rows = tensor(list(indices), dtype=dtypes.int64)
                yield [item[rows] for item in self.dataset.tensors]
            else:
                yield self.collate_fn([self.dataset[index] for index in indices])

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "BatchSampler", "default_collate",
           "default_convert", "DataLoader"]
