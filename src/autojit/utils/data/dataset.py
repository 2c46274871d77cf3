"""Datasets, at torch.utils.data.dataset's path: what a DataLoader reads its samples from.

A map-style Dataset maps an index to a sample (`__getitem__`, `__len__`); an IterableDataset
yields its samples (`__iter__`), and in worker processes each worker iterates its own copy, so
the dataset shards itself through `get_worker_info()`. The wrappers combine datasets: side by
side (TensorDataset, StackDataset), one after another (ConcatDataset, ChainDataset), or a
selection (Subset, random_split). Nothing here records autograd history.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from ...tensor.tensor import Tensor
from ._utils import permutation

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

# The type of a dataset's samples, as torch's classes are generic in it (`Dataset[int]`).
T_co = TypeVar("T_co", covariant=True)
T_stack = TypeVar("T_stack", tuple, dict)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define `__getitem__(index)` and usually `__len__()`.

    A subclass may also define `__getitems__(indices)`, which the DataLoader then calls once per
    batch instead of `__getitem__` once per sample.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset of samples yielded by `__iter__`, for streams that have no random access.

    With `num_workers > 0` every worker process iterates its own copy of the dataset, so a
    dataset that does not shard itself yields each sample once per worker; `get_worker_info()`
    tells `__iter__` which worker it runs in:

    >>> import math
    >>> from autojit.utils.data import DataLoader, IterableDataset, get_worker_info
    >>> class Range(IterableDataset):
    ...     def __init__(self, start, end):
    ...         self.start, self.end = start, end
    ...     def __iter__(self):
    ...         info = get_worker_info()
    ...         if info is None:  # in the main process: everything
    ...             return iter(range(self.start, self.end))
    ...         per_worker = math.ceil((self.end - self.start) / info.num_workers)
    ...         start = self.start + info.id * per_worker
    ...         return iter(range(start, min(start + per_worker, self.end)))
    >>> [batch.tolist() for batch in DataLoader(Range(3, 7), batch_size=2)]
    [[3, 4], [5, 6]]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


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


class StackDataset(Dataset[T_stack]):
    """Datasets of one length side by side: a sample is the tuple (given positionally) or the
    dict (given by keyword) of their samples at the index.

    >>> from autojit.utils.data import StackDataset
    >>> StackDataset(image=[10, 20], label=[1, 2])[1]
    {'image': 20, 'label': 2}
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        members = args or list(kwargs.values())
        self._length = len(members[0])
        if any(len(dataset) != self._length for dataset in members):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        columns = self.datasets.values() if isinstance(self.datasets, dict) else self.datasets
        fetched = []
        for dataset in columns:  # each member's own batched read where it has one
            if callable(getattr(dataset, "__getitems__", None)):
                items = dataset.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(items)}")
            else:
                items = [dataset[index] for index in indices]
            fetched.append(items)
        rows = zip(*fetched, strict=True)
        if isinstance(self.datasets, dict):
            return [dict(zip(self.datasets, row, strict=True)) for row in rows]
        return [tuple(row) for row in rows]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after another; `cumulative_sizes` holds where each one ends.

    >>> from autojit.utils.data import ConcatDataset
    >>> both = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(both), both[2], both.cumulative_sizes
    (5, 3, [2, 5])
    """

    @staticmethod
    def cumsum(sequence) -> list[int]:
        return list(itertools.accumulate(len(dataset) for dataset in sequence))

    def __init__(self, datasets: Iterable):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(dataset, IterableDataset) for dataset in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = 0 if which == 0 else self.cumulative_sizes[which - 1]
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained on the fly.

    >>> from autojit.utils.data import ChainDataset, IterableDataset
    >>> class Letters(IterableDataset):
    ...     def __init__(self, text):
    ...         self.text = text
    ...     def __iter__(self):
    ...         return iter(self.text)
    >>> list(ChainDataset([Letters("ab"), Letters("c")]))
    ['a', 'b', 'c']
    """

    def __init__(self, datasets: Iterable):
        self.datasets = datasets

    def __iter__(self):
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from dataset

    def __len__(self) -> int:
        total = 0
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(dataset)
        return total


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices: Sequence[int]):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list) -> list:
        chosen = [self.indices[index] for index in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(chosen)
        return [self.dataset[index] for index in chosen]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths: Sequence, generator=None) -> list[Subset]:
    """Split into non-overlapping Subsets of the given lengths, or of fractions summing to 1.

    Fractions give `floor(fraction * len(dataset))` samples each, and the remainder is dealt
    one at a time round-robin from the first split. The order is one permutation drawn from
    `generator` (a numpy.random.Generator; autojit's global generator when None).

    >>> import numpy as np
    >>> from autojit.utils.data import random_split
    >>> [len(part) for part in random_split(range(10), [0.5, 0.3, 0.2])]
    [5, 3, 2]
    >>> first, second = random_split(range(4), [3, 1], generator=np.random.default_rng(0))
    >>> sorted(first.indices + second.indices)
    [0, 1, 2, 3]
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for index, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {index} is not between 0 and 1")
            counts.append(math.floor(len(dataset) * fraction))
        for index in range(len(dataset) - sum(counts)):  # the remainder, round-robin
            counts[index % len(counts)] += 1
        lengths = counts
        for index, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {index} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = permutation(generator, sum(lengths))
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - length:end])
            for end, length in zip(ends, lengths, strict=True)]
